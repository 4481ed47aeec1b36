"""Learn to explore: CMA-ES trains a small reactive policy on the batched env (docs/learning.md).

Usage::

    python examples/learn_explore.py                      # ~2 minutes on one core
    python examples/learn_explore.py --generations 40 --out results/learning

The policy maps each robot's scan (the nearest range in 12 sectors, scaled to 0..1) to its
velocity command through one linear layer and ``tanh`` (26 parameters, shared by the robots).
CMA-ES (the ``cma`` package from PyPI) searches them: every candidate drives a few training
maps for ``--ticks`` ticks in one :class:`~maes_bringup.envs.MaesVectorEnv` (all candidates and
maps step together), and its fitness is the explored area. Then the best policy and a random
walk run on held-out maps: the project's random walk algorithm
(``maes_controller.algorithms.random_walk``: straight to a wall, then a random turn; in direct
mode) and uniform random velocity commands every tick. The script writes
``learning_result.json`` and ``learning_curve.png`` (exploration against ticks) to ``--out``.
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

CONFIG = {"number_of_robots": 2, "map": {"width_in_tiles": 30, "height_in_tiles": 30}}
SECTORS = 12


def features(scan: np.ndarray, max_range: float) -> np.ndarray:
    """(E, N, SECTORS + 1): the nearest range per sector, 0..1, and a constant 1."""
    e, n, r = scan.shape
    near = scan.reshape(e, n, SECTORS, r // SECTORS).min(axis=3) / max_range
    return np.concatenate([near, np.ones((e, n, 1))], axis=2)


def act(params: np.ndarray, scan: np.ndarray, max_range: float) -> np.ndarray:
    """Actions (E, N, 2) of per-env parameter rows ``params`` (E, 2 * (SECTORS + 1))."""
    w = params.reshape(params.shape[0], 2, SECTORS + 1)
    return np.tanh(np.einsum("enf,eaf->ena", features(scan, max_range), w))


def rollout(policy, seeds: list[int], ticks: int) -> np.ndarray:
    """Exploration percent (ticks + 1, E) of ``policy(obs) -> actions`` on maps ``seeds``."""
    from maes_bringup.envs import vector_env

    venv = vector_env(CONFIG, num_envs=len(seeds), max_ticks=ticks + 1)
    obs, _ = venv.reset(options={"seeds": seeds})
    curve = [venv.batch.exploration_percent()]
    for _ in range(ticks):
        obs, *_ = venv.step(policy(obs))
        curve.append(venv.batch.exploration_percent())
    return np.array(curve)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=25)
    parser.add_argument("--popsize", type=int, default=12)
    parser.add_argument("--train-maps", type=int, default=4)
    parser.add_argument("--test-maps", type=int, default=16)
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("results/learning"))
    args = parser.parse_args(argv)

    import cma

    from maes_sim.core import config_from_dict

    max_range = config_from_dict(CONFIG).robot_constraints.slam_raytrace_range
    dim = 2 * (SECTORS + 1)
    es = cma.CMAEvolutionStrategy(
        np.zeros(dim), 0.5, {"popsize": args.popsize, "seed": args.seed + 1, "verbose": -9}
    )
    train = list(range(100, 100 + args.train_maps))
    history = []
    for gen in range(args.generations):
        candidates = np.array(es.ask())
        rows = np.repeat(candidates, len(train), axis=0)  # candidate k drives every train map

        def policy(obs, rows=rows):
            return act(rows, obs["scan"], max_range)

        curve = rollout(policy, train * len(candidates), args.ticks)
        fitness = curve[-1].reshape(len(candidates), len(train)).mean(axis=1)
        es.tell(list(candidates), list(-fitness))
        history.append(float(fitness.max()))
        print(f"generation {gen + 1:3d}: best {fitness.max():5.1f} %, mean {fitness.mean():5.1f} %")

    best = np.asarray(es.result.xbest)
    test = list(range(1000, 1000 + args.test_maps))
    learned = rollout(
        lambda obs: act(np.tile(best, (len(test), 1)), obs["scan"], max_range), test, args.ticks
    )
    rng = np.random.default_rng(args.seed)
    random_walk = rollout(
        lambda obs: rng.uniform(-1, 1, (len(test), CONFIG["number_of_robots"], 2)),
        test,
        args.ticks,
    )
    ballistic = shipped_random_walk(test, args.ticks)
    curves = {"learned": learned, "random_walk": ballistic, "random_commands": random_walk}
    area = {name: float(np.mean(c[-1] - c[0]) / args.ticks) for name, c in curves.items()}
    result = {
        "config": CONFIG,
        "learner": f"CMA-ES (cma {cma.__version__}), popsize {args.popsize}",
        "generations": args.generations,
        "ticks": args.ticks,
        "train_maps": train,
        "test_maps": test,
        "best_fitness_per_generation": history,
        "final_exploration_percent": {
            name: {"mean": float(c[-1].mean()), "per_map": c[-1].tolist()}
            for name, c in curves.items()
        },
        "explored_percent_per_tick": area,
        "maps_where_learned_beats_random_walk": int((learned[-1] > ballistic[-1]).sum()),
        "policy_parameters": best.tolist(),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "learning_result.json").write_text(json.dumps(result, indent=2) + "\n")
    plot(curves, args.out / "learning_curve.png", args)
    print(
        f"held-out maps after {args.ticks} ticks: learned {learned[-1].mean():.1f} %, random "
        f"walk {ballistic[-1].mean():.1f} %, random commands {random_walk[-1].mean():.1f} %; "
        f"learned beats the random walk on {result['maps_where_learned_beats_random_walk']}/"
        f"{len(test)} maps; results in {args.out}"
    )
    return 0


def shipped_random_walk(seeds: list[int], ticks: int) -> np.ndarray:
    """Exploration percent (ticks + 1, E) of the random walk algorithm in direct mode."""
    from maes_bringup.runners.direct import run
    from maes_sim.core import config_from_dict

    cfg = config_from_dict(CONFIG)
    walk = "maes_controller.algorithms.random_walk:logic"
    return np.stack([run(cfg, walk, seed=s, max_ticks=ticks).exploration for s in seeds], axis=1)


def plot(curves: dict[str, np.ndarray], path: Path, args) -> None:
    """Exploration against ticks: mean and range over the held-out maps."""
    from maes_sim.core import agg_pyplot

    plt = agg_pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    t = np.arange(curves["learned"].shape[0])
    for name, c, colour in (
        ("learned (CMA-ES, linear policy)", curves["learned"], "tab:blue"),
        ("random walk (random_walk algorithm)", curves["random_walk"], "tab:orange"),
        ("random velocity commands", curves["random_commands"], "tab:grey"),
    ):
        ax.plot(t, c.mean(axis=1), color=colour, label=name)
        ax.fill_between(t, c.min(axis=1), c.max(axis=1), color=colour, alpha=0.2)
    ax.set_xlabel("tick")
    ax.set_ylabel("explored (% of reachable area)")
    ax.set_title(
        f"{args.test_maps} held-out 30 x 30 building maps, {CONFIG['number_of_robots']} robots "
        "(mean, min-max)",
        fontsize="medium",
    )
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
