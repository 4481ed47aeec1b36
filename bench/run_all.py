"""Run the benchmarks in bench/ one after another, with progress: `make bench` / `make bench-full`.

Usage::

    python bench/run_all.py            # quick: about two minutes on a 2-core machine
    python bench/run_all.py --full     # every case of every benchmark (tens of minutes)
    python bench/run_all.py --list     # print the plan, run nothing

Before each benchmark a line ``[k/n] name: command`` says what runs; after it, how long it took.
The figures are the benchmarks' own output (machine-dependent, never asserted anywhere).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent

#: (name, script, arguments) per profile. Quick: the headline cases with fewer ticks; full: the
#: benchmarks' own default sweeps (bench_core's whole table, median of 3, over 300 ticks).
PLANS: dict[str, list[tuple[str, str, list[str]]]] = {
    "quick": [
        ("core", "bench_core.py", ["--quick", "--ticks", "300", "--repeat", "3"]),
        (
            "sim node",
            "bench_sim_node.py",
            ["--robots", "30", "120", "--seconds", "4", "--layouts", "spread"],
        ),
        ("wander (one robot)", "bench_wander.py", ["--robots", "1", "--repeat", "3"]),
        ("direct", "bench_direct.py", ["--robots", "10", "120", "--ticks", "300"]),
        ("embedded", "bench_embedded.py", ["--robots", "5", "20", "--ticks", "200"]),
        (
            "batch",
            "bench_batch.py",
            [str(BENCH / "experiments" / "quick_batch.yaml"), "--workers", "2"],
        ),
        ("learning envs", "bench_envs.py", ["--seconds", "2"]),
    ],
    "full": [
        ("core", "bench_core.py", ["--ticks", "300", "--repeat", "3"]),
        ("pair searches", "bench_pairs.py", []),
        ("sim node", "bench_sim_node.py", []),
        ("maes_state bytes", "bench_state_wire.py", []),
        ("a tick's messages as bytes", "bench_wire.py", []),
        ("occupancy maps", "bench_occupancy.py", ["--robots", "120", "--all-models"]),
        ("wander", "bench_wander.py", []),
        ("direct", "bench_direct.py", []),
        ("embedded", "bench_embedded.py", []),
        ("batch", "bench_batch.py", []),
        (
            "batch (lhs_sensing)",
            "bench_batch.py",
            [str(BENCH.parent / "experiments" / "lhs_sensing.yaml"), "--workers", "2"],
        ),
        ("learning envs", "bench_envs.py", []),
        (
            "watching in a web browser",
            "bench_watch.py",
            ["--robots", "120", "--ticks", "150", "--rounds", "3"],
        ),
    ],
}


def main(argv: list[str] | None = None) -> int:
    """Run (or list) one profile's benchmarks; the exit status is the first failure's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every case (tens of minutes)")
    parser.add_argument("--list", action="store_true", help="print the plan and exit")
    args = parser.parse_args(argv)
    plan = PLANS["full" if args.full else "quick"]
    start = time.monotonic()
    for k, (name, script, extra) in enumerate(plan, 1):
        cmd = [sys.executable, str(BENCH / script), *extra]
        shown = " ".join(["python", f"bench/{script}", *extra])
        print(f"[{k}/{len(plan)}] {name}: {shown}", flush=True)
        if args.list:
            continue
        t0 = time.monotonic()
        code = subprocess.call(cmd)
        took = time.monotonic() - t0
        if code != 0:
            print(
                f"[{k}/{len(plan)}] {name} failed (exit {code}) after {took:.0f} s",
                file=sys.stderr,
                flush=True,
            )
            return code
        print(
            f"[{k}/{len(plan)}] {name} done in {took:.0f} s "
            f"({time.monotonic() - start:.0f} s so far)\n",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
