"""Benchmark of direct mode: real-time factor of the example explorer on a 75x75 cave.

The config is ``configs/cave_75.yaml`` (75x75 cave, biggest-room spawn, distributed SLAM,
broadcasts blocked by walls) with ``number_of_robots`` replaced.

Everything a direct-mode run does each logic tick: every robot's state, the explorer's logic
(frontier choice on its costmap when it needs a new goal, claims broadcast, tags), the built-in
navigator's planning and following for every robot with a goal, and the simulation step
(lidar, SLAM every 10 ticks, sensing, broadcasts, metrics).

Usage::

    python bench/bench_direct.py                    # 1, 10, 50 and 120 robots, 300 ticks each
    python bench/bench_direct.py --robots 120 --ticks 600

Prints per case: wall ms per tick, the real-time factor (sim seconds per wall second; 100 ms
ticks), the same from the process's CPU time (steadier on a shared machine), the share of the
time spent in ``Simulation.step`` (the rest: states, logic and navigation), and the exploration
reached.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 10, 50, 120])
    parser.add_argument("--config", default=str(ROOT / "configs" / "cave_75.yaml"),
                        help="base config (default: configs/cave_75.yaml, a 75x75 cave)")
    parser.add_argument("--ticks", type=int, default=300, help="logic ticks per case")
    parser.add_argument("--logic", default="maes_controller.logic:logic")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

    from maes_bringup.direct import run
    from maes_sim.core import Simulation, load_config

    step_time = [0.0]
    original_step = Simulation.step

    def timed_step(self):  # the share of the simulation itself
        t0 = time.perf_counter()
        original_step(self)
        step_time[0] += time.perf_counter() - t0

    Simulation.step = timed_step

    base = load_config(args.config)

    def config(n: int):
        return replace(base, number_of_robots=n)

    run(config(2), args.logic, max_ticks=20, seed=args.seed)  # warm-up: JIT and caches
    print(f"{'robots':>6} {'ticks':>6} {'ms/tick':>8} {'RTF':>7} {'CPU RTF':>8} {'sim %':>6}"
          f"  explored", flush=True)
    for n in args.robots:
        step_time[0] = 0.0
        cpu0 = time.process_time()
        result = run(config(n), args.logic, max_ticks=args.ticks, seed=args.seed)
        cpu = time.process_time() - cpu0
        per_tick = result.wall_time / max(result.ticks, 1)
        print(f"{n:>6} {result.ticks:>6} {per_tick * 1e3:>8.2f} {result.real_time_factor:>7.1f} "
              f"{result.sim_time / cpu:>8.1f} {100 * step_time[0] / result.wall_time:>6.0f}"
              f"  {result.exploration[-1]:.1f} %", flush=True)
    Simulation.step = original_step
    return 0


if __name__ == "__main__":
    sys.exit(main())
