"""Benchmark of the whole simulator core: logic ticks per second and real-time factor.

Everything on: lidar (180 rays), exploration and coverage marking, SLAM every tick with
distributed SLAM merging every 10 ticks, nearby-robot sensing with line of sight, broadcasts
(every robot sends one message every 10 ticks) blocked by walls, random velocity commands.

Usage::

    python bench/bench_core.py                 # the full table (a few minutes)
    python bench/bench_core.py --quick         # 120 robots on 75x75 and 1000 on 150x150 only
    python bench/bench_core.py --robots 30 120 --sizes 75 --seconds 3

Prints one row per case: wall ms per tick, ticks/s and the real-time factor (sim seconds per
wall second at 100 ms logic ticks) on one core (numba's threads are limited to 1 unless
--threads), and the same from the process's CPU time, which other load on a shared machine
disturbs much less than wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "maes_sim"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 5, 30, 120, 500, 1000])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 75, 150])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per case")
    parser.add_argument("--threads", type=int, default=1, help="numba threads")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--slam-interval", type=int, default=1,
                        help="slam_update_interval_in_ticks (1 = every tick, the heavy default "
                             "of this bench; MAES 2.0's default is 10)")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", str(args.threads))

    import numpy as np

    from maes_sim.core import MapError, SimConfig, Simulation
    from maes_sim.core.config_schema import CaveConfig, MapConfig, RobotConstraints

    cases = [(r, s) for s in args.sizes for r in args.robots]
    if args.quick:
        cases = [(120, 75), (1000, 150)]
    print(f"{'robots':>6} {'map':>7} {'ms/tick':>8} {'ticks/s':>8} {'RTF':>7} "
          f"{'CPU ms':>7} {'CPU RTF':>8}  explored", flush=True)
    for n, size in cases:
        cfg = SimConfig(
            number_of_robots=n,
            map=MapConfig(width_in_tiles=size, height_in_tiles=size, cave_config=CaveConfig()),
            robot_constraints=RobotConstraints(
                distribute_slam=True, slam_update_interval_in_ticks=args.slam_interval,
                slam_sync_interval_in_ticks=10, broadcast_blocked_by_walls=True,
            ),
        )
        try:
            sim = Simulation(cfg)
        except MapError as exc:
            print(f"{n:>6} {size:>3}x{size:<3} skipped: {exc}", flush=True)
            continue
        rng = np.random.default_rng(0)

        def tick(k: int) -> None:
            if k % 10 == 0:
                sim.set_velocities(rng.uniform(-3, 3, n), rng.uniform(-1, 1, n))
            if k % 10 == 1:
                for i in range(n):
                    sim.broadcast(i, f"r{i} at {k}")
            sim.step()

        for k in range(3):  # warm-up: JIT compilation and caches
            tick(k)
        start, cpu0, k = time.perf_counter(), time.process_time(), 3
        while time.perf_counter() - start < args.seconds:
            tick(k)
            k += 1
        per_tick = (time.perf_counter() - start) / (k - 3)
        cpu_tick = (time.process_time() - cpu0) / (k - 3)
        rtf = sim.tick_duration / per_tick
        print(f"{n:>6} {size:>3}x{size:<3} {per_tick * 1e3:8.2f} {1 / per_tick:8.1f} "
              f"{rtf:6.1f}x {cpu_tick * 1e3:7.2f} {sim.tick_duration / cpu_tick:7.1f}x  "
              f"{sim.exploration_percent:5.1f} %", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
