"""Benchmark of the learning environments: agent-steps per second on one core.

Usage::

    python bench/bench_envs.py                 # MAES-ROS only
    python bench/bench_envs.py --vmas .venv-vmas/bin/python   # and VMAS side by side

Cases (4 robots each, 30 x 30 tile building maps, scans of 180 rays in the observations,
random actions):

- ``parallel 1x4``: the PettingZoo ParallelEnv (direct mode's machinery: states, navigators,
  Dict observations with scan, pose, SLAM map crop, nearby robots);
- ``vector 1x4`` / ``vector 64x4``: the batched VectorEnv (one BatchedSimulation, scan and pose
  observations);
- ``loop 64x4``: for comparison, 64 ``Simulation`` objects stepped in a Python loop (the core
  alone, scans read, no env around it);
- with ``--vmas PYTHON``: VMAS's ``navigation`` scenario (the scenario it ships whose agents
  carry a LIDAR; its rays see the other agents, there are no walls) on CPU torch, 1 x 4 and
  64 x 4, with 180 rays (as our scan) and with its default 12, run by ``PYTHON`` (a separate
  venv: ``python -m venv .venv-vmas && .venv-vmas/bin/pip install vmas``), and the ratios.

The process is pinned to one core; numba and torch use one thread. Figures vary with the
machine's load: compare the rates printed in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))

CONFIG = {"number_of_robots": 4, "map": {"width_in_tiles": 30, "height_in_tiles": 30}}

VMAS_DRIVER = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
import vmas
num_envs, steps, rays = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
env = vmas.make_env("navigation", num_envs=num_envs, device="cpu", continuous_actions=True,
                    n_agents=4, seed=0, n_lidar_rays=rays)
obs = env.reset()
def act():
    return [env.get_random_action(a) for a in env.agents]
for _ in range(5):
    env.step(act())
t = time.perf_counter()
for _ in range(steps):
    env.step(act())
dt = time.perf_counter() - t
lidar = [s.__class__.__name__ for a in env.agents for s in (a.sensors or [])]
print(json.dumps({"rate": steps * num_envs * 4 / dt, "obs": int(obs[0].shape[-1]),
                  "sensors": sorted(set(lidar)), "version": vmas.__version__}))
"""


def rate(step, agents_per_step: int, seconds: float) -> float:
    """Agent-steps per second of ``step()`` over about ``seconds`` (after 5 warm-up calls)."""
    for _ in range(5):
        step()
    n, t0 = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - t0) < seconds or n < 10:
        step()
        n += 1
    return n * agents_per_step / elapsed


def bench_parallel(seconds: float) -> float:
    import numpy as np

    from maes_bringup.envs import parallel_env

    env = parallel_env(CONFIG, max_ticks=10**9)
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def step():
        env.step({a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents})

    return rate(step, 4, seconds)


def bench_vector(num_envs: int, seconds: float) -> float:
    import numpy as np

    from maes_bringup.envs import vector_env

    venv = vector_env(CONFIG, num_envs=num_envs, max_ticks=10**9)
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    shape = venv.action_space.shape

    def step():
        venv.step(rng.uniform(-1, 1, shape))

    return rate(step, num_envs * 4, seconds)


def bench_loop(num_envs: int, seconds: float) -> float:
    import numpy as np

    from maes_sim.core import Simulation, config_from_dict

    cfg = config_from_dict(CONFIG)
    sims = [Simulation(cfg, seed=s) for s in range(num_envs)]
    rng = np.random.default_rng(0)

    def step():
        for sim in sims:
            sim.set_velocities(rng.uniform(-3, 3, 4), rng.uniform(-3, 3, 4))
            sim.step()
            sim.lidar_ranges  # noqa: B018 - the scan of the observation

    return rate(step, num_envs * 4, seconds)


def bench_vmas(python: str, num_envs: int, steps: int, rays: int) -> dict | None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run(
        ["taskset", "-c", str(sorted(os.sched_getaffinity(0))[0]), python, "-c", VMAS_DRIVER]
        + [str(num_envs), str(steps), str(rays)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        print(f"VMAS failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per case")
    parser.add_argument("--vmas", metavar="PYTHON", help="a venv's python that has vmas")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    from maes_sim.core import Simulation, config_from_dict

    Simulation(config_from_dict(CONFIG)).step()  # load the compiled kernels first
    rows = [
        ("MAES-ROS parallel env 1x4", bench_parallel(args.seconds)),
        ("MAES-ROS vector env 1x4", bench_vector(1, args.seconds)),
        ("MAES-ROS vector env 64x4", bench_vector(64, args.seconds)),
        ("MAES-ROS loop of 64 Simulations x4", bench_loop(64, args.seconds)),
    ]
    vmas = {}
    if args.vmas:
        for rays in (180, 12):  # our scan's ray count, and the scenario's default
            for e, steps in ((1, 200), (64, 50)):
                out = bench_vmas(args.vmas, e, steps, rays)
                if out is not None:
                    vmas[e, rays] = out
                    name = f"VMAS {out['version']} navigation {e}x4, {rays} rays"
                    rows.append((name, out["rate"]))
    print(f"{'case':48s} {'agent-steps/s':>14s}")
    for name, r in rows:
        print(f"{name:48s} {r:14,.0f}")
    for e, row in ((1, 1), (64, 2)):
        if (e, 180) in vmas:
            ratio = rows[row][1] / vmas[e, 180]["rate"]
            print(f"ratio vector env {e}x4 / VMAS {e}x4 (180 rays): {ratio:.1f}")
    if vmas:
        out = next(iter(vmas.values()))
        print(f"VMAS sensors: {out['sensors']}, observation size {out['obs']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
