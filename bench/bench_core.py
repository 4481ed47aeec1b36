"""Benchmark of the whole simulator core: logic ticks per second and real-time factor.

Everything on: lidar (180 rays), exploration and coverage marking, SLAM every tick with
distributed SLAM merging every 10 ticks, nearby-robot sensing with line of sight, broadcasts
(every robot sends one message every 10 ticks) blocked by walls, random velocity commands.

Usage::

    python bench/bench_core.py                 # the full table (a few minutes)
    python bench/bench_core.py --quick         # 120 robots on 75x75 and 1000 on 150x150 only
    python bench/bench_core.py --robots 30 120 --sizes 75 --seconds 3
    python bench/bench_core.py --robots 120 --sizes 75 --ticks 600 --repeat 5   # median of 5

Prints one row per case: wall ms per tick, ticks/s and the real-time factor (sim seconds per
wall second at 100 ms logic ticks) on one core (numba's threads are limited to 1 unless
--threads, which also sets ``performance.threads``), the same from the process's CPU time, which
other load on a shared machine disturbs much less than wall time (with 2 threads CPU time counts
both cores), and the share of the wall time spent in the compiled lidar calls (``lidar %``; for a
team with one lidar, the tick's one compiled call, motion and coverage included).
With ``--repeat K`` every case runs K times (a fresh
simulation each time, alternating with the other cases) and the row shows the median run, with
the range of the real-time factor over the K runs: on a shared machine whose speed drifts from
minute to minute, the median of runs spread over time is the figure to quote.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _pkg in ("maes_common", "maes_sim"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / _pkg))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_wander import time_lidar_calls  # noqa: E402  (the compiled lidar calls to time)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 5, 30, 120, 500, 1000])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 75, 150])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per case")
    parser.add_argument(
        "--ticks",
        type=int,
        default=None,
        help="time exactly this many ticks per case instead (the same work on "
        "any machine: robots spread out as a run goes on and ticks get "
        "cheaper, so a fixed wall time favours faster runs)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="performance.threads: threads of the lidar kernel (and numba's pool)",
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per case; the median is shown, with the RTF range",
    )
    parser.add_argument(
        "--slam-interval",
        type=int,
        default=1,
        help="slam_update_interval_in_ticks (1 = every tick, the heavy default "
        "of this bench; MAES 2.0's default is 10)",
    )
    parser.add_argument(
        "--read-scans",
        action="store_true",
        help="read every tick's lidar ranges (Simulation.lidar_ranges), as the simulator node "
        "does to publish scans: the robots' bodies are applied to the rays only then",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", str(args.threads))

    import numpy as np

    from maes_sim.core import MapError, SimConfig, Simulation
    from maes_sim.core import simulation as simulation_module
    from maes_sim.core.config_schema import (
        CaveConfig,
        MapConfig,
        PerformanceConfig,
        RobotConstraints,
    )

    lidar = [0.0]  # wall seconds in the compiled lidar calls (bench_wander.time_lidar_calls)

    def add(seconds: float) -> None:
        lidar[0] += seconds

    time_lidar_calls(simulation_module, add)

    cases = [(r, s) for s in args.sizes for r in args.robots]
    if args.quick:
        cases = [(120, 75), (1000, 150)]
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    header = (
        f"{'robots':>6} {'map':>7} {'ms/tick':>8} {'ticks/s':>8} {'RTF':>7} "
        f"{'CPU ms':>7} {'CPU RTF':>8} {'lidar %':>7}  explored"
    )
    print(header + ("  RTF range" if args.repeat > 1 else ""), flush=True)

    def make_config(n: int, size: int) -> SimConfig:
        return SimConfig(
            number_of_robots=n,
            map=MapConfig(width_in_tiles=size, height_in_tiles=size, cave_config=CaveConfig()),
            robot_constraints=RobotConstraints(
                distribute_slam=True,
                slam_update_interval_in_ticks=args.slam_interval,
                slam_sync_interval_in_ticks=10,
                broadcast_blocked_by_walls=True,
            ),
            performance=PerformanceConfig(threads=args.threads),
        )

    def run_once(n: int, size: int) -> tuple[float, float, float] | str:
        """(wall s/tick, CPU s/tick, explored %) of one timed run, or why it was skipped."""
        try:
            sim = Simulation(make_config(n, size))
        except MapError as exc:
            return f"skipped: {exc}"
        rng = np.random.default_rng(0)

        def tick(k: int) -> None:
            if k % 10 == 0:
                sim.set_velocities(rng.uniform(-3, 3, n), rng.uniform(-1, 1, n))
            if k % 10 == 1:
                for i in range(n):
                    sim.broadcast(i, f"r{i} at {k}")
            sim.step()
            if args.read_scans:
                sim.lidar_ranges  # noqa: B018 (a property: computes the scans)

        warm = 12  # warm-up past a broadcast, a delivery and a SLAM merge: JIT and caches
        for k in range(warm):
            tick(k)
        lidar[0] = 0.0
        start, cpu0, k = time.perf_counter(), time.process_time(), warm
        while k - warm < args.ticks if args.ticks else time.perf_counter() - start < args.seconds:
            tick(k)
            k += 1
        wall = time.perf_counter() - start
        per_tick = wall / (k - warm)
        cpu_tick = (time.process_time() - cpu0) / (k - warm)
        return per_tick, cpu_tick, sim.exploration_percent, 100 * lidar[0] / wall

    runs: dict[tuple[int, int], list] = {case: [] for case in cases}
    for rep in range(args.repeat):
        for n, size in cases:
            result = run_once(n, size)
            runs[(n, size)].append(result)
            if rep < args.repeat - 1:
                continue
            done = [r for r in runs[(n, size)] if not isinstance(r, str)]
            if not done:
                print(f"{n:>6} {size:>3}x{size:<3} {result}", flush=True)
                continue
            done.sort(key=lambda r: r[0])
            per_tick, cpu_tick, explored, lidar_share = done[len(done) // 2]
            tick_s = make_config(n, size).global_settings.logic_ticks_delta_millis / 1000.0
            line = (
                f"{n:>6} {size:>3}x{size:<3} {per_tick * 1e3:8.2f} {1 / per_tick:8.1f} "
                f"{tick_s / per_tick:6.1f}x {cpu_tick * 1e3:7.2f} {tick_s / cpu_tick:7.1f}x "
                f"{lidar_share:7.0f}  "
                f"{explored:5.1f} %"
            )
            if args.repeat > 1:
                line += f"  {tick_s / done[-1][0]:.1f}-{tick_s / done[0][0]:.1f}x"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
