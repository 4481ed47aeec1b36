"""Direct mode, this tree against another checkout, paired and interleaved in one run.

Each case (robot count) runs the example explorer on ``configs/cave_75.yaml`` (the scenario of
``bench_direct.py``) in a fresh process per tree, the two trees taking turns (A B A B ...), so
a comparison holds while a shared machine's speed drifts. A child process imports the packages
of its tree only, warms up (imports, numba's cache) on an untimed run of ``--warmup`` ticks (60)
with the case's robots or 120, whichever is more, then times one run. Some kernels run only in
crowds or only once robots have spread out (the claims' checks, a tag lookup, a signature of
A*): a 2-robot 20-tick warm-up left their compiling or cache loading in the first timed pair,
while 120 robots for 60 ticks reach every kernel that 1, 10 or 120 robots reach in 1000
ticks. ``--building N`` runs instead the default config (``maes_config.yaml``) on an N x N
building, the team spawned together, with no end but the ticks: the crowds of docs/scaling.md
(with ``--logic``, e.g. SPACE CBBA's).

Usage::

    python bench/bench_direct_pair.py --other /path/to/main          # 1, 10, 120 robots
    python bench/bench_direct_pair.py --other ../main --robots 120 --ticks 200 --pairs 3
    python bench/bench_direct_pair.py --other ../main --robots 50 --building 60 --ticks 1200 \
        --logic maes_controller.algorithms.space_cbba:logic

Prints per case and pair: each tree's CPU ms per tick (``time.process_time``, the figure to
quote on a loaded machine), wall ms per tick, the real-time factor from CPU time (100 ms
ticks), the ratio other / this (above 1: this tree is faster) and the load average at the
start of the pair; then the median CPU ratio per case. It asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, time
from dataclasses import replace
from pathlib import Path
root = Path(sys.argv[1])
for pkg in ("maes_common", "maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(root / "src" / pkg))
from maes_bringup.runners import direct
from maes_controller.robot_api import load_logic
from maes_sim.core import load_config
n, ticks, seed, warmup, building = (int(a) for a in sys.argv[2:7])
logic = load_logic(sys.argv[7])
if building:  # the default config on a building that size, spawned together, no end but ticks
    base = load_config(root / "maes_config.yaml")
    ends = replace(base.end_criteria, exploration_percent=None, coverage_percent=None, tick=None)
    world = replace(base.map, width_in_tiles=building, height_in_tiles=building)
    base = replace(base, map=world, end_criteria=ends)
else:
    base = load_config(root / "configs" / "cave_75.yaml")
direct.run(replace(base, number_of_robots=max(n, 120)), logic, max_ticks=warmup, seed=seed)
cpu0 = time.process_time()
result = direct.run(replace(base, number_of_robots=n), logic, max_ticks=ticks, seed=seed)
cpu = time.process_time() - cpu0
print(json.dumps({"ticks": result.ticks, "cpu": cpu, "wall": result.wall_time,
                  "sim_time": result.sim_time, "explored": result.exploration[-1]}))
"""


def _run(
    root: Path, n: int, ticks: int, seed: int, warmup: int, logic: str, building: int = 0
) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH="")
    args = (str(root), str(n), str(ticks), str(seed), str(warmup), str(building), logic)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", required=True, help="the other checkout (e.g. main)")
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 10, 120])
    parser.add_argument("--ticks", type=int, default=300, help="logic ticks per run")
    parser.add_argument("--pairs", type=int, default=3, help="runs of each tree per case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup", type=int, default=60, help="untimed ticks first (at least 120 robots)"
    )
    parser.add_argument("--logic", default="maes_controller.algorithms.frontier_explorer:logic")
    parser.add_argument(
        "--building",
        type=int,
        default=0,
        metavar="N",
        help="the default config on an N x N building, spawned together, no end but the ticks "
        "(instead of configs/cave_75.yaml)",
    )
    args = parser.parse_args(argv)
    trees = {"this": ROOT, "other": Path(args.other).resolve()}
    print(f"this: {trees['this']}  other: {trees['other']}", flush=True)
    print(
        f"{'robots':>6} {'pair':>4} {'tree':>5} {'CPU ms/tick':>11} {'wall ms/tick':>12} "
        f"{'CPU RTF':>8} {'explored':>8} {'other/this CPU':>14} {'load1':>6}",
        flush=True,
    )
    for n in args.robots:
        ratios = []
        for k in range(args.pairs):
            load = os.getloadavg()[0]
            got = {}
            for name in ("other", "this") if k % 2 == 0 else ("this", "other"):
                got[name] = _run(
                    trees[name], n, args.ticks, args.seed, args.warmup, args.logic, args.building
                )
            ratio = got["other"]["cpu"] / got["this"]["cpu"]
            ratios.append(ratio)
            shown = {"other": "", "this": f"{ratio:.3f}"}
            for name in ("other", "this"):
                r = got[name]
                ticks = max(r["ticks"], 1)
                print(
                    f"{n:>6} {k:>4} {name:>5} {r['cpu'] / ticks * 1e3:>11.2f} "
                    f"{r['wall'] / ticks * 1e3:>12.2f} {r['sim_time'] / r['cpu']:>8.1f} "
                    f"{r['explored']:>7.1f}% {shown[name]:>14} {load:>6.2f}",
                    flush=True,
                )
        print(f"{n:>6} median other/this CPU ratio: {statistics.median(ratios):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
