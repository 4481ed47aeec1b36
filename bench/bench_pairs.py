"""Benchmark of the core's fixed-radius pair searches, all built on the one cell list
(``maes_sim.core.kernels.cells``): microseconds per call (process CPU time, median of 7).

Usage::

    python bench/bench_pairs.py                 # 30, 120 and 1000 robots on a 150x150 grid

Cases: ``visible_pairs`` (robots within 5 tiles with a line of sight, 30 % random walls: nearby
-robot sensing), ``pairs_within(pos, None, 15)`` (one set against itself: broadcast range) and
``pairs_within(pos, tags, 4)`` (robots against 200 tags: tag reading).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

for _pkg in ("maes_common", "maes_sim"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / _pkg))


def main(argv: list[str] | None = None) -> int:
    """Print one row per robot count."""
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    import numpy as np

    from maes_sim.core.kernels import visible_pairs, wall_sums
    from maes_sim.core.neighbors import pairs_within

    rng = np.random.default_rng(0)
    walls = rng.random((150, 150)) < 0.3
    sums = wall_sums(walls)

    def per_call_us(func, reps: int) -> float:
        func()  # compile / warm up
        runs = []
        for _ in range(7):
            t0 = time.process_time()
            for _ in range(reps):
                func()
            runs.append((time.process_time() - t0) / reps * 1e6)
        return statistics.median(runs)

    print(f"{'robots':>6} {'visible_pairs':>14} {'self r15':>10} {'vs tags r4':>11}  (us/call)")
    for n in (30, 120, 1000):
        pos = rng.uniform(1, 149, (n, 2))
        tags = rng.uniform(1, 149, (200, 2))
        reps = max(20, 20000 // n)
        vis = per_call_us(lambda pos=pos: visible_pairs(walls, pos, 5.0, sums=sums), reps)
        own = per_call_us(lambda pos=pos: pairs_within(pos, None, 15.0), reps)
        cross = per_call_us(lambda pos=pos, tags=tags: pairs_within(pos, tags, 4.0), reps)
        print(f"{n:>6} {vis:14.1f} {own:10.1f} {cross:11.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
