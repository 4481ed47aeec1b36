"""Per-tick cost of moving obstacles: 120 robots with 0 and with 5 obstacles, paired.

Two simulations of the same config and seed (``--robots`` robots on a ``--side`` x ``--side``
cave, the robots driving and turning at fixed speeds), one without obstacles and one with
``--obstacles`` random walkers (discs: the obstacles' physics, ray and walker costs are per
obstacle, so walkers stand for any obstacle; path obstacles skip the walker's wall checks). Each
tick is a core ``Simulation.step`` followed by reading every robot's scan (what the simulator
node does every tick, and direct mode whenever logic reads scans), which is where the obstacles
cost: the physics pass, the ray cut and the walkers' steps.

The two are timed in alternating blocks of ``--block`` ticks (order swapped every round), so a
slower moment of a shared machine hits both; the printed figure is the ratio of the medians of
the per-block times, and the per-tick milliseconds. Usage::

    python bench/bench_obstacles.py                 # 120 robots, 5 obstacles, 20 rounds
    python bench/bench_obstacles.py --robots 50 --rounds 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _use_tree(tree: Path) -> None:
    for pkg in ("maes_common", "maes_sim"):
        sys.path.insert(0, str(tree / "src" / pkg))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=120)
    parser.add_argument("--obstacles", type=int, default=5)
    parser.add_argument("--side", type=int, default=100, help="map side, tiles")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--block", type=int, default=10, help="ticks per timed block")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tree", default=str(ROOT), help="checkout whose src/ to run")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    _use_tree(Path(args.tree).resolve())

    import numpy as np

    from maes_sim.core import Simulation, config_from_dict

    def make(obstacles: int) -> Simulation:
        data = {
            "number_of_robots": args.robots,
            "random_seeds": [args.seed],
            "map": {"width_in_tiles": args.side, "height_in_tiles": args.side},
            "robot_spawn_config": {"spawn_together": {}},
        }
        if obstacles:
            data["obstacles"] = [{"random_walkers": obstacles, "radius": 0.5, "speed": 1.0}]
        sim = Simulation(config_from_dict(data))
        k = np.arange(args.robots)
        sim.set_velocities(np.full(args.robots, 1.0), 0.3 * np.sin(k))
        return sim

    def block(sim: Simulation) -> float:
        t0 = time.perf_counter()
        for _ in range(args.block):
            sim.step()
            sim.lidar_ranges  # noqa: B018 - the scans, as the node reads them each tick
        return time.perf_counter() - t0

    sims = {"without": make(0), f"with {args.obstacles}": make(args.obstacles)}
    for sim in sims.values():  # compile and warm up
        block(sim)
    times: dict[str, list[float]] = {name: [] for name in sims}
    for r in range(args.rounds):
        order = list(sims) if r % 2 == 0 else list(reversed(list(sims)))
        for name in order:
            times[name].append(block(sims[name]))
    med = {name: statistics.median(t) / args.block * 1e3 for name, t in times.items()}
    base, other = list(med)
    print(
        f"{args.robots} robots, {args.side}x{args.side} cave, {args.rounds} x {args.block} "
        f"ticks each, alternating"
    )
    for name, ms in med.items():
        print(f"  {name:>12} obstacles: {ms:8.3f} ms per tick (median of blocks)")
    print(f"  ratio with / without: {med[other] / med[base]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
