"""Cost of the Explore-Bench metrics (issue 15): the simulation step before and after.

The metrics add a second lidar pass per tick (each robot's rays marked into its own seen map) and
count the seen maps at every statistics snapshot. This runs the same stepping loop (random
velocity commands, ``configs/cave_75.yaml`` with N robots) on two source trees, interleaved and
paired, and prints the median process CPU time per tick of each and their ratio.

Usage::

    git worktree add --detach /tmp/base-h15-api main
    python bench/bench_explore_bench.py --base /tmp/base-h15-api --robots 10 50 --reps 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time, json
root = sys.argv[1]
for pkg in ("maes_common", "maes_sim"):
    sys.path.insert(0, root + "/src/" + pkg)
import numpy as np
from dataclasses import replace
from maes_sim.core import Simulation, load_config
cfg = load_config(root + "/configs/cave_75.yaml")
cfg = replace(cfg, number_of_robots=int(sys.argv[2]))
sim = Simulation(cfg, seed=0)
rng = np.random.default_rng(1)
n = sim.n_robots
for _ in range(20):  # warm-up (compiled kernels are cached)
    sim.set_velocities(rng.uniform(0, 2, n), rng.uniform(-1, 1, n)); sim.step()
ticks = int(sys.argv[3])
t0 = time.process_time()
for t in range(ticks):
    if t % 5 == 0:
        sim.set_velocities(rng.uniform(0, 2, n), rng.uniform(-1, 1, n))
    sim.step()
print(json.dumps({"cpu_ms_per_tick": 1000 * (time.process_time() - t0) / ticks}))
"""


def _one(root: Path, robots: int, ticks: int) -> float:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(robots), str(ticks)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])["cpu_ms_per_tick"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="source tree before the change")
    parser.add_argument("--robots", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    for robots in args.robots:
        base, new = [], []
        for _ in range(args.reps):  # interleaved: base, new, base, new, ...
            base.append(_one(args.base, robots, args.ticks))
            new.append(_one(ROOT, robots, args.ticks))
        mb, mn = statistics.median(base), statistics.median(new)
        print(
            f"{robots:4d} robots: CPU ms/tick median base {mb:.3f}, with metrics {mn:.3f}, "
            f"ratio {mn / mb:.2f} ({args.reps} paired runs, {args.ticks} ticks)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
