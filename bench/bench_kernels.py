"""Benchmark of the compiled kernels: lidar (``cast_rays``) and line of sight / wall distance.

Maps: 50x50, 75x75 and 150x150 with ~30% random wall tiles, plus a 75x75 cave-like map (random
blobs smoothed by a cellular automaton). Robots stand at random points of open tiles with random
headings; 180 rays each; ``max_range`` 7 (MAES's ``slam_raytrace_range``) and 20; without and
with marking (explored-tick map plus one SLAM map per robot). Timings are medians of repeated
calls after a warm-up call (so no JIT time) on the serial kernel: the calling thread's CPU time
(steady on a shared machine) and the wall clock; the parallel kernel by wall clock. The
real-time factor is for the lidar alone at 10 logic ticks per second (100 ms / CPU ms per
tick). The machine is shared: the load average is printed with the results.

Also measured, each in a fresh process: the first call's cost with an empty numba cache (JIT
compile) and with the on-disk cache filled (cache load).

Run:  PYTHONPATH=src/maes_sim:src/maes_common python bench/bench_kernels.py
      [--robots 1 5 30 120 500 1000]
      [--maps random50 random75 random150 cave75] [--reps 15] [--no-parallel] [--no-jit]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from maes_sim.core.kernels import cast_rays, line_of_sight, wall_distance
from maes_sim.core.kernels.raycast import ray_directions
from maes_sim.core.kernels.reference import line_of_sight_reference, trace_rays_reference

TICK_MS = 100.0  # MAES logic tick


def random_map(size: int, fill: float, rng: np.random.Generator) -> np.ndarray:
    """(size, size) bool: independent random wall tiles."""
    return rng.random((size, size)) < fill


def cave_map(size: int, rng: np.random.Generator, fill: float = 0.47, runs: int = 5):
    """(size, size) bool: random fill smoothed by the 4-5 cellular-automaton rule (blobs)."""
    walls = rng.random((size, size)) < fill
    for _ in range(runs):
        padded = np.pad(walls, 1, constant_values=True)
        neighbours = sum(
            padded[1 + dy : size + 1 + dy, 1 + dx : size + 1 + dx]
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
            if dy or dx
        )
        walls = (neighbours > 4) | (walls & (neighbours == 4))
    return walls


MAPS = {
    "random50": lambda rng: random_map(50, 0.3, rng),
    "random75": lambda rng: random_map(75, 0.3, rng),
    "random150": lambda rng: random_map(150, 0.3, rng),
    "cave75": lambda rng: cave_map(75, rng),
}


def robots_on_open_tiles(walls: np.ndarray, n: int, rng: np.random.Generator):
    """(n, 2) positions at random points of random open tiles, (n,) random headings."""
    iy, ix = np.nonzero(~walls)
    pick = rng.integers(0, ix.size, n)
    pos = np.stack([ix[pick], iy[pick]], axis=1) + rng.uniform(0.2, 0.8, (n, 2))
    return pos, rng.uniform(-np.pi, np.pi, n)


def median_ms(func, reps: int) -> tuple[float, float]:
    """Median (wall clock, CPU time of this thread) per call in ms, after a warm-up call.

    On a shared machine the wall clock includes time spent waiting for a core; the thread's CPU
    time does not, so it is the steadier figure for the serial kernels (for parallel calls it
    misses the worker threads: use the wall clock there).
    """
    func()  # warm-up (compiles on the very first call of the process)
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.thread_time()
        func()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    return 1e3 * float(np.median(wall)), 1e3 * float(np.median(cpu))


def bench_lidar(args) -> list[dict]:
    rows = []
    for map_name in args.maps:
        walls = MAPS[map_name](np.random.default_rng(args.seed))
        print(f"# {map_name}: {walls.shape}, {walls.mean():.0%} walls", flush=True)
        for n in args.robots:
            pos, heads = robots_on_open_tiles(walls, n, np.random.default_rng(args.seed + n))
            for max_range in args.ranges:
                for marking in (False, True):
                    explored = np.zeros(walls.shape, np.int32)
                    slam = np.zeros((n, *walls.shape), np.uint8)
                    index = np.arange(n)
                    kw = {}
                    if marking:
                        kw = {
                            "explored_tick": explored,
                            "tick": 1,
                            "slam": slam,
                            "slam_index": index,
                        }

                    def call(
                        parallel, kw=kw, pos=pos, heads=heads, max_range=max_range, walls=walls
                    ):
                        return cast_rays(walls, pos, heads, max_range, parallel=parallel, **kw)

                    wall_ms, ms = median_ms(lambda: call(False), args.reps)
                    ms_par = (
                        median_ms(lambda: call(True), args.reps)[0]
                        if args.parallel
                        else float("nan")
                    )
                    ranges, _ = call(False)
                    row = {
                        "map": map_name, "robots": n, "range": max_range, "marking": marking,
                        "ms": ms, "wall_ms": wall_ms, "ms_par": ms_par,
                        "mrays": n * 180 / ms / 1e3, "rtf": TICK_MS / ms,
                        "mean_range": float(ranges.mean()),
                    }  # fmt: skip
                    rows.append(row)
                    print(
                        f"  {n:5d} robots  range {max_range:4.0f}  marking {marking!s:5}  "
                        f"{ms:8.3f} ms/tick cpu ({wall_ms:8.3f} wall)  "
                        f"{row['mrays']:5.1f} Mrays/s  RTF {row['rtf']:7.1f}  "
                        f"parallel {ms_par:8.3f} ms wall  (mean range {row['mean_range']:.2f})",
                        flush=True,
                    )
    return rows


def print_summary(rows: list[dict], robots: list[int]) -> None:
    """ms per tick (serial) with the real-time factor, one line per map/range/marking."""
    print("# summary: CPU ms per tick (real-time factor at 10 ticks/s), serial kernel")
    print(f"  {'map':10s} {'range':>5s} {'marking':>7s} " + "".join(f"{n:>17d}" for n in robots))
    keys = dict.fromkeys((r["map"], r["range"], r["marking"]) for r in rows)
    for key in keys:
        cells = {r["robots"]: r for r in rows if (r["map"], r["range"], r["marking"]) == key}
        line = "".join(
            f"{cells[n]['ms']:8.3f} ({cells[n]['rtf']:6.0f})" if n in cells else " " * 17
            for n in robots
        )
        print(f"  {key[0]:10s} {key[1]:5.0f} {key[2]!s:>7s} {line}")


def bench_reference(args) -> None:
    """The pure-numpy reference on the headline case, for comparison."""
    walls = MAPS["random75"](np.random.default_rng(args.seed))
    pos, heads = robots_on_open_tiles(walls, 120, np.random.default_rng(args.seed + 120))
    dirs = ray_directions(heads, 180)
    for max_range in args.ranges:
        ref = median_ms(lambda r=max_range: trace_rays_reference(walls, pos, dirs, r), 3)[1]
        fast = median_ms(lambda r=max_range: cast_rays(walls, pos, heads, r), args.reps)[1]
        print(
            f"# numpy reference, 120 robots, random75, range {max_range:.0f}: {ref:.1f} ms/tick "
            f"cpu (numba {fast:.3f} ms, {ref / fast:.0f}x)",
            flush=True,
        )


def bench_los(args) -> None:
    """Line of sight and wall distance for all pairs within 20 tiles, N robots on random75."""
    walls = MAPS["random75"](np.random.default_rng(args.seed))
    for n in (120, 500, 1000):
        pos, _ = robots_on_open_tiles(walls, n, np.random.default_rng(args.seed + n))
        i, j = np.triu_indices(n, 1)
        near = np.hypot(*(pos[i] - pos[j]).T) <= 20.0
        a, b = pos[i[near]], pos[j[near]]
        for name, func in (("line_of_sight", line_of_sight), ("wall_distance", wall_distance)):
            wall_ms, ms = median_ms(lambda func=func, a=a, b=b: func(walls, a, b), args.reps)
            ms_par = (
                median_ms(lambda func=func, a=a, b=b: func(walls, a, b, parallel=True), args.reps)[
                    0
                ]
                if args.parallel
                else float("nan")
            )
            print(
                f"  {name:14s} {n:5d} robots, {a.shape[0]:7d} pairs within 20 tiles: "
                f"{ms:8.3f} ms cpu ({wall_ms:8.3f} wall, {a.shape[0] / ms / 1e3:5.1f} M pairs/s)"
                f"  parallel {ms_par:8.3f} ms wall",
                flush=True,
            )
        if n == 120:
            ref = median_ms(lambda a=a, b=b: line_of_sight_reference(walls, a, b), 3)[1]
            print(f"  (numpy reference line_of_sight, {a.shape[0]} pairs: {ref:.1f} ms cpu)")


_FIRST_CALL = """
import time, numpy as np
t0 = time.perf_counter()
from maes_sim.core import kernels as k
t1 = time.perf_counter()
w = np.zeros((8, 8), bool); p = np.array([[1.5, 1.5]]); h = np.zeros(1)
k.cast_rays(w, p, h, 5.0)
t2 = time.perf_counter()
k.cast_rays(w, p, h, 5.0, explored_tick=np.zeros((8, 8), np.int32), tick=1,
            slam=np.zeros((1, 8, 8), np.uint8), slam_index=np.zeros(1, np.int64))
t3 = time.perf_counter()
k.line_of_sight(w, p, p); k.wall_distance(w, p, p)
t4 = time.perf_counter()
k.cast_rays(w, p, h, 5.0, parallel=True); k.line_of_sight(w, p, p, parallel=True)
k.wall_distance(w, p, p, parallel=True)
t5 = time.perf_counter()
print(f"import {t1 - t0:.2f} s, cast_rays {t2 - t1:.2f} s, cast_rays marking {t3 - t2:.2f} s, "
      f"los+wall_distance {t4 - t3:.2f} s, parallel variants {t5 - t4:.2f} s")
"""


def bench_first_call() -> None:
    """First-call cost in fresh processes: empty numba cache, then filled cache."""
    root = Path(__file__).resolve().parents[1] / "src"
    src = os.pathsep.join(str(root / pkg) for pkg in ("maes_sim", "maes_common"))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=src)
        for label in ("cold cache (JIT compile)", "warm cache (load)"):
            out = subprocess.run(
                [sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True, text=True
            )
            print(f"  {label:26s}: {(out.stdout or out.stderr).strip()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 5, 30, 120, 500, 1000])
    parser.add_argument("--maps", nargs="+", choices=sorted(MAPS), default=list(MAPS))
    parser.add_argument("--ranges", type=float, nargs="+", default=[7.0, 20.0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-parallel", dest="parallel", action="store_false")
    parser.add_argument("--no-jit", dest="jit", action="store_false", help="skip first-call runs")
    args = parser.parse_args()
    print(f"# load average before: {os.getloadavg()[0]:.2f} (2 cores shared)", flush=True)
    if args.jit:
        print("# first call in a fresh process", flush=True)
        bench_first_call()
    print("# lidar, 180 rays per robot", flush=True)
    rows = bench_lidar(args)
    print_summary(rows, args.robots)
    bench_reference(args)
    print("# line of sight / wall distance", flush=True)
    bench_los(args)
    print(f"# load average after: {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
