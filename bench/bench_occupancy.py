"""Benchmark of ``stack.slam: occupancy``: the core's tick with occupancy maps, paired with the
simulated SLAM's.

N robots on a 75x75 cave (``configs/cave_75.yaml``: SLAM maps merged between robots in range
every 10 ticks, updated every 10 ticks) drive in circles. The same run is timed with
``stack.slam: simulated`` and with ``occupancy``, alternating, several rounds; prints the
median ms per tick (CPU time) of each and their ratio: the ratio less 1 is what the occupancy
mapping costs on top of the core's tick. In the occupancy runs the time spent in the mapping
itself (reading the scans it maps, adding them to the grids, and the merges) is measured too
and shown as its share of the tick.

``--all-models`` turns the imperfect world on in both runs (every robot: lidar range noise and
dropouts, odometry and heading drift, a SLAM pose error; five random walkers). ``--read-scans``
reads every robot's scan after each step (``Simulation.lidar_of``), as the simulator node, direct
mode's controllers and the learning environments do: the scans the mapping reads are then read
anyway.

Usage::

    python bench/bench_occupancy.py                      # 10 and 120 robots, 300 ticks, 3 rounds
    python bench/bench_occupancy.py --robots 120 --ticks 400 --rounds 5 --all-models
    python bench/bench_occupancy.py --robots 120 --read-scans
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_common", "maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))

#: What --all-models adds to the default robot type (the noisy row of
#: experiments/imperfect_world.yaml).
NOISE = {
    "lidar": {"range_noise_std": 0.05, "dropout_probability": 0.05},
    "motion": {"odometry_noise": 0.05, "heading_noise": 0.05},
    "slam_position_inaccuracy": 0.5,
}
WALKERS = [{"random_walkers": 5, "radius": 0.5, "speed": 0.5}]


def _config(robots: int, slam: str, all_models: bool):
    from maes_sim.core import config_from_dict, config_to_dict, load_config

    data = config_to_dict(load_config(ROOT / "configs" / "cave_75.yaml"))
    data["number_of_robots"] = robots
    data["end_criteria"] = {"tick": None, "exploration_percent": None, "coverage_percent": None}
    data["stack"]["slam"] = slam
    if all_models:
        data["robot_types"] = {"default": NOISE}
        data["obstacles"] = WALKERS
    return config_from_dict(data)


class _Clock:
    """CPU seconds spent inside the wrapped methods."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, fn):
        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - start

        return timed


def _ms_per_tick(
    robots: int, ticks: int, slam: str, all_models: bool, read_scans: bool
) -> tuple[float, float]:
    """(ms per tick, ms per tick in the occupancy mapping) of one run."""
    import numpy as np

    from maes_sim.core import Simulation

    sim = Simulation(_config(robots, slam, all_models), seed=0)
    clock = _Clock()
    if sim.slam.grids is not None:  # the mapping: its scans, the grid updates, the merges
        sim._map_scans = clock.wrap(sim._map_scans)
        sim.slam.grids.merge_groups = clock.wrap(sim.slam.grids.merge_groups)
    turn = np.linspace(-0.5, 0.5, robots)
    sim.set_velocities(np.full(robots, 1.0), turn)
    start = time.process_time()
    for _ in range(ticks):
        sim.step()
        if read_scans:
            for i in range(robots):
                sim.lidar_of(i)
    seconds = time.process_time() - start
    return seconds * 1000.0 / ticks, clock.seconds * 1000.0 / ticks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[10, 120])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--all-models", action="store_true", help="noise and walkers in both")
    parser.add_argument("--read-scans", action="store_true", help="read every scan each tick")
    args = parser.parse_args(argv)
    for slam in ("simulated", "occupancy"):  # compile, warm up
        _ms_per_tick(4, 12, slam, args.all_models, args.read_scans)
    world = "every imperfect-world model on" if args.all_models else "exact sensing"
    scans = ", every scan read" if args.read_scans else ""
    print(f"the core's step, {world}{scans}; {args.ticks} ticks, median of {args.rounds} rounds")
    print(
        "robots | simulated ms/tick | occupancy ms/tick | ratio | mapping ms/tick | "
        "mapping share of the occupancy tick"
    )
    for robots in args.robots:
        sim_ms, occ_ms, map_ms = [], [], []
        for k in range(args.rounds):  # alternate, so a load change hits both alike
            print(f"  [{robots} robots, round {k + 1}/{args.rounds}]", file=sys.stderr, flush=True)
            sim_ms.append(_ms_per_tick(robots, args.ticks, "simulated", *_flags(args))[0])
            tick, mapping = _ms_per_tick(robots, args.ticks, "occupancy", *_flags(args))
            occ_ms.append(tick)
            map_ms.append(mapping)
        a, b, m = statistics.median(sim_ms), statistics.median(occ_ms), statistics.median(map_ms)
        ratios = sorted(o / s for o, s in zip(occ_ms, sim_ms, strict=True))
        shown = ", ".join(f"{r:.3f}" for r in ratios)
        print(
            f"{robots} | {a:.2f} | {b:.2f} | {b / a:.3f} (rounds: {shown}) | {m:.2f} | {m / b:.1%}"
        )
    return 0


def _flags(args) -> tuple[bool, bool]:
    return args.all_models, args.read_scans


if __name__ == "__main__":
    sys.exit(main())
