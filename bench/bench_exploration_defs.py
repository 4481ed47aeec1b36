"""Exploration by MAES-ROS's definition (tiles) against MAES 2.0's (triangles), on the same run.

MAES-ROS counts a tile explored when any lidar ray reaches it (the hit tile included). MAES 2.0
(its ``ExplorationTracker``) splits every tile into 8 triangles (each half-tile mini-tile cut by
a diagonal; ``SimulationMapTile.CoordinateDecimalsToTriangleIndex``) and counts the triangles a
ray passes through, up to the first solid one, over all open triangles. A ray that only clips a
tile's corner explores the tile but only one or two of its triangles, so the triangle share
trails the tile share, most at the edge of what the lidar sees.

This script runs the shipped explorer in direct mode and, after every tick, walks every ray of
every robot from its origin to its range in steps of ``--step`` tiles (default 0.01) and marks
the triangle of each sample (a ray crossing a triangle's corner by less than the step can be
missed: the triangle share is, if anything, slightly low). The rays are the simulator's own
(``Simulation.lidar_ranges``), so both definitions see exactly the same scans. Percentages are of
the reachable open area (8 triangles per reachable tile).

Usage::

    python bench/bench_exploration_defs.py                  # 1 robot, MAES's system-test-like
    python bench/bench_exploration_defs.py --robots 5 --seeds 0 1 2

Prints, per seed, the ticks at which each definition reached 50, 90 and 99 % and the largest
gap (tile % minus triangle %) during the run, the two percentages at a few ticks, and the
final coverage by MAES's definition and by the centre tile (the same run).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_common", "maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))

import numpy as np  # noqa: E402

from maes_common.jit import njit  # noqa: E402


@njit(cache=True)
def _mark_triangles(tri, origins, headings, ranges, step):
    # tri: bool (H, W, 8); origins (N, 2) grid; headings (N,); ranges (N, R)
    h, w = tri.shape[0], tri.shape[1]
    r = ranges.shape[1]
    for i in range(origins.shape[0]):
        ox, oy = origins[i, 0], origins[i, 1]
        for k in range(r):
            a = headings[i] + math.pi * ((2.0 * k - r) / r)
            dx, dy = math.cos(a), math.sin(a)
            n = int(ranges[i, k] / step)
            for q in range(n + 1):
                s = min(q * step, ranges[i, k] - 1e-9)
                x = ox + dx * s
                y = oy + dy * s
                ix, iy = int(math.floor(x)), int(math.floor(y))
                if ix < 0 or iy < 0 or ix >= w or iy >= h:
                    continue
                fx, fy = x - ix, y - iy
                # MAES's CoordinateDecimalsToTriangleIndex
                if fy < 0.5:
                    if fx + fy < 0.5:
                        t = 0
                    elif fx < 0.5:
                        t = 1
                    elif fx - fy < 0.5:
                        t = 2
                    else:
                        t = 3
                else:
                    if fy - fx > 0.5 and fx < 0.5:
                        t = 4
                    elif fx < 0.5:
                        t = 5
                    elif fx + fy < 1.5:
                        t = 6
                    else:
                        t = 7
                tri[iy, ix, t] = True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=1)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--config", default=str(ROOT / "configs" / "maes2_example.yaml"))
    parser.add_argument("--logic", default="maes_controller.algorithms.frontier_explorer:logic")
    parser.add_argument("--max-ticks", type=int, default=1500)
    parser.add_argument("--step", type=float, default=0.01, help="sample step along rays, tiles")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

    from maes_bringup.runners import direct
    from maes_sim.core import load_config

    cfg = load_config(args.config)
    cfg = replace(
        cfg,
        number_of_robots=args.robots,
        end_criteria=replace(cfg.end_criteria, coverage_percent=None, exploration_percent=99.9),
    )
    print(f"config: {args.config}  robots: {args.robots}  ray step: {args.step} tiles")
    print(
        f"{'seed':>5} {'def':>9} {'t50':>6} {'t90':>6} {'t99':>6} {'final%':>7}"
        "  largest gap (tile % - triangle %)"
    )
    for seed in args.seeds:
        tiles_pct, tri_pct = [], []
        state = {}

        def measure(sim, state=state, tiles_pct=tiles_pct, tri_pct=tri_pct):
            if not state:
                state["tri"] = np.zeros((*sim.shape, 8), dtype=np.bool_)
                state["reach"] = sim.metrics.reachable
                state["total"] = 8 * int(sim.metrics.reachable.sum())
            _mark_triangles(
                state["tri"],
                sim.grid_positions,
                sim.poses[:, 2].copy(),
                sim.lidar_ranges,
                args.step,
            )
            seen = int(state["tri"][state["reach"]].sum())
            tiles_pct.append(sim.exploration_percent)
            tri_pct.append(100.0 * seen / state["total"])

        result = direct.run(cfg, args.logic, seed=seed, max_ticks=args.max_ticks, progress=measure)
        a, b = np.asarray(tiles_pct), np.asarray(tri_pct)

        def first(series, p):
            hit = np.flatnonzero(series >= p)
            return "-" if hit.size == 0 else str(int(hit[0]) + 1)

        gap = a - b
        k = int(np.argmax(gap))
        for name, series in (("tiles", a), ("triangles", b)):
            print(
                f"{seed:>5} {name:>9} {first(series, 50):>6} {first(series, 90):>6} "
                f"{first(series, 99):>6} {series[-1]:>7.2f}"
                + (f"  {gap[k]:.2f} points at tick {k + 1}" if name == "tiles" else "")
            )
        marks = [t for t in (10, 50, 100, 200, 400) if t <= len(a)]
        print(
            "       at ticks "
            + ", ".join(f"{t}: {a[t - 1]:.1f} vs {b[t - 1]:.1f}" for t in marks)
            + f"  (ticks run: {result.ticks})",
            flush=True,
        )
        final = result.stats
        print(
            f"       coverage at the end: MAES {final['coverage_percent']:.2f} %, centre tiles "
            f"{final['centre_coverage_percent']:.2f} % (ratio "
            f"{final['coverage_percent'] / max(final['centre_coverage_percent'], 1e-9):.2f})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
