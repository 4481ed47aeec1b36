"""Collisions of the built-in explorer: 5 robots on the 30x30 building, direct mode, 10 seeds.

The config is ``configs/maes2_example.yaml`` (30x30 building, biggest-room spawn) with
``number_of_robots`` replaced and 3000 ticks per run (``--max-ticks``; its coverage end
criterion is dropped so every run has the same length); the controller is the shipped
explorer (``maes_controller.algorithms.frontier_explorer:logic``) with the built-in navigator,
in direct mode (which
equals the lockstep ROS stack bit for bit).

A collision is what the simulator counts (``Simulation.metrics.collisions``): a tick at which a
robot starts touching something. Each one is classed robot-robot when another robot's centre is
within two radii (plus 0.05 tiles) of the robot's centre at that tick, else wall.

Usage::

    python bench/bench_collisions.py                     # 5 robots, seeds 0..9
    python bench/bench_collisions.py --robots 3 --seeds 0 1 2
    python bench/bench_collisions.py --tree /tmp/base    # another checkout's code (before/after)

Prints one line per seed (collisions, robot-robot share, exploration %, ticks, tick at 90 %
explored) and then the median and mean collisions per run, the robot-robot share of all
collisions, and the median exploration and ticks, so fewer collisions bought with worse
exploration shows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _use_tree(tree: Path) -> None:
    for pkg in ("maes_common", "maes_sim", "maes_controller", "maes_bringup"):
        sys.path.insert(0, str(tree / "src" / pkg))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=5)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--config", default=str(ROOT / "configs" / "maes2_example.yaml"))
    parser.add_argument("--logic", default="maes_controller.algorithms.frontier_explorer:logic")
    parser.add_argument("--max-ticks", type=int, default=3000)
    parser.add_argument("--tree", default=str(ROOT), help="checkout whose src/ to run")
    parser.add_argument(
        "--no-yield", action="store_true", help="navigator without yielding (yield_to_robots)"
    )
    parser.add_argument(
        "--no-robots-in-scan", action="store_true", help="lidar.robots_block_rays: false"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    _use_tree(Path(args.tree).resolve())

    import numpy as np

    from maes_bringup.runners import direct
    from maes_sim.core import load_config

    base = load_config(args.config)
    # A fixed length: the coverage criterion would end runs at different ticks depending on the
    # coverage definition (before issue 13 it never ended these runs: all took 3000 ticks).
    cfg = replace(
        base,
        number_of_robots=args.robots,
        end_criteria=replace(
            base.end_criteria, coverage_percent=None, exploration_percent=None, tick=args.max_ticks
        ),
    )
    if args.no_robots_in_scan:
        cfg = replace(cfg, lidar=replace(cfg.lidar, robots_block_rays=False))
    if args.no_yield:
        from maes_controller.navigation import NavParams

        plain = NavParams.from_config.__func__

        def no_yield(cls, config, **overrides):
            return plain(cls, config, **{"yield_to_robots": False, **overrides})

        NavParams.from_config = classmethod(no_yield)
    print(
        f"code: {Path(args.tree).resolve()}  config: {args.config}  robots: {args.robots}"
        f"  yield: {not args.no_yield}  robots in scan: {not args.no_robots_in_scan}"
    )
    print(f"{'seed':>5} {'coll':>5} {'robot%':>7} {'explored%':>9} {'ticks':>6} {'t90':>6}")
    totals, robot_shares, explored, ticks = [], [], [], []
    all_robot = all_total = 0
    for seed in args.seeds:
        kinds = {"robot": 0, "wall": 0}

        def classify(sim, kinds=kinds):
            new = np.flatnonzero(sim.collided)
            if new.size == 0:
                return
            pos = sim.grid_positions
            d = np.hypot(*(pos[new, None, :] - pos[None, :, :]).transpose(2, 0, 1))
            d[np.arange(new.size), new] = np.inf
            near = (d <= 2.0 * sim.radius + 0.05).any(axis=1)
            kinds["robot"] += int(near.sum())
            kinds["wall"] += int((~near).sum())

        result = direct.run(cfg, args.logic, seed=seed, max_ticks=args.max_ticks, progress=classify)
        total = int(result.collisions.sum())
        assert total == kinds["robot"] + kinds["wall"], (total, kinds)
        t90 = result.time_to_exploration(90.0)
        totals.append(total)
        robot_shares.append(100.0 * kinds["robot"] / total if total else 0.0)
        explored.append(float(result.exploration[-1]))
        ticks.append(result.ticks)
        all_robot += kinds["robot"]
        all_total += total
        t90s = "-" if t90 is None else f"{t90 / result.sim.tick_duration:.0f}"
        print(
            f"{seed:>5} {total:>5} {robot_shares[-1]:>6.0f}% {explored[-1]:>9.2f} "
            f"{result.ticks:>6} {t90s:>6}",
            flush=True,
        )
    print(
        f"median collisions per run: {statistics.median(totals):g}  mean: "
        f"{statistics.mean(totals):.1f}  robot-robot share: "
        f"{100.0 * all_robot / max(all_total, 1):.0f} %  median explored: "
        f"{statistics.median(explored):.2f} %  median ticks: {statistics.median(ticks):g}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
