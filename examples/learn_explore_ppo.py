"""Learn to explore with PPO (stable-baselines3) on the Gymnasium env (docs/learning.md).

Optional: needs PyTorch and stable-baselines3, which the project's venv does not install (CPU
PyTorch from PyPI pulls several GB). In a separate venv::

    python3.11 -m venv .venv-sb3 && .venv-sb3/bin/pip install stable-baselines3 numba pyyaml \
        pettingzoo matplotlib
    PYTHONPATH=src/maes_sim:src/maes_controller:src/maes_bringup \
        .venv-sb3/bin/python examples/learn_explore_ppo.py --steps 150000

One robot on 30 x 30 building maps (a new map every episode), observing its scan and pose as
one flat ``Box``, acting with velocity commands, rewarded by the newly explored area. After
training, the policy (deterministic) and the project's random walk algorithm run on held-out
maps; ``ppo_result.json`` and ``ppo_curve.png`` go to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))

CONFIG = {"number_of_robots": 1, "map": {"width_in_tiles": 30, "height_in_tiles": 30}}
OPTIONS = {"observations": ["scan", "pose"], "observation_form": "box", "collision_penalty": 0.5}


def make_env(ticks: int):
    from maes_bringup.envs import gym_env

    return gym_env(CONFIG, max_ticks=ticks, **OPTIONS)


def evaluate(model, seeds: list[int], ticks: int) -> np.ndarray:
    """Exploration percent (ticks + 1, maps) of the trained policy."""
    env = make_env(ticks)
    curves = []
    for s in seeds:
        obs, _ = env.reset(seed=s)
        curve = [env.sim.exploration_percent]
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, _ = env.step(action)
            curve.append(env.sim.exploration_percent)
            done = terminated or truncated
        curves.append(curve + [curve[-1]] * (ticks + 1 - len(curve)))
    return np.array(curves).T


def random_walk(seeds: list[int], ticks: int) -> np.ndarray:
    """Exploration percent (ticks + 1, maps) of the random walk algorithm in direct mode."""
    from maes_bringup.runners.direct import run
    from maes_sim.core import config_from_dict

    cfg = config_from_dict(CONFIG)
    walk = "maes_controller.algorithms.random_walk:logic"
    return np.stack([run(cfg, walk, seed=s, max_ticks=ticks).exploration for s in seeds], axis=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150_000, help="training timesteps")
    parser.add_argument("--ticks", type=int, default=200, help="episode length")
    parser.add_argument("--test-maps", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("results/learning_ppo"))
    args = parser.parse_args(argv)

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)
    venv = make_vec_env(lambda: make_env(args.ticks), n_envs=4, seed=args.seed)
    model = PPO("MlpPolicy", venv, n_steps=512, batch_size=256, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.steps)

    test = list(range(1000, 1000 + args.test_maps))
    learned, walk = evaluate(model, test, args.ticks), random_walk(test, args.ticks)
    import stable_baselines3

    result = {
        "config": CONFIG,
        "options": OPTIONS,
        "learner": f"PPO (stable-baselines3 {stable_baselines3.__version__}, torch "
        f"{torch.__version__}), MlpPolicy",
        "timesteps": args.steps,
        "ticks": args.ticks,
        "test_maps": test,
        "final_exploration_percent": {
            name: {"mean": float(c[-1].mean()), "per_map": c[-1].tolist()}
            for name, c in (("ppo", learned), ("random_walk", walk))
        },
        "maps_where_ppo_beats_random_walk": int((learned[-1] > walk[-1]).sum()),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ppo_result.json").write_text(json.dumps(result, indent=2) + "\n")
    plot(learned, walk, args.out / "ppo_curve.png", args)
    print(
        f"held-out maps after {args.ticks} ticks: PPO {learned[-1].mean():.1f} %, random walk "
        f"{walk[-1].mean():.1f} %; PPO better on {result['maps_where_ppo_beats_random_walk']}/"
        f"{len(test)} maps; results in {args.out}"
    )
    return 0


def plot(learned: np.ndarray, walk: np.ndarray, path: Path, args) -> None:
    """Exploration against ticks: mean and range over the held-out maps."""
    from maes_sim.core import agg_pyplot

    plt = agg_pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    t = np.arange(learned.shape[0])
    for name, c, colour in (
        (f"PPO ({args.steps} steps)", learned, "tab:blue"),
        ("random walk (random_walk algorithm)", walk, "tab:orange"),
    ):
        ax.plot(t, c.mean(axis=1), color=colour, label=name)
        ax.fill_between(t, c.min(axis=1), c.max(axis=1), color=colour, alpha=0.2)
    ax.set_xlabel("tick")
    ax.set_ylabel("explored (% of reachable area)")
    ax.set_title(f"{args.test_maps} held-out 30 x 30 building maps, 1 robot (mean, min-max)")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
