"""Run the benchmarks in bench/ one after another, with progress: `make bench` / `make bench-full`.

Usage::

    python bench/run_all.py            # quick: about two minutes on a 2-core machine
    python bench/run_all.py --full     # every case of every benchmark (tens of minutes)
    python bench/run_all.py --smoke    # every script once on a tiny case: does each still run?
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
    # Every script in bench/ once, on a case small enough to take seconds: the figures mean
    # nothing, the exit status does (a benchmark that patches or calls code that has moved
    # fails here, not months later in someone's `make bench-full`). tests/test_bench_plan.py
    # runs each entry (marker slow); the scripts left out are in SMOKE_LEFT_OUT.
    "smoke": [
        (
            "batch",
            "bench_batch.py",
            [str(BENCH / "experiments" / "quick_batch.yaml"), "--workers", "1"],
        ),
        (
            "collisions",
            "bench_collisions.py",
            ["--robots", "2", "--seeds", "0", "--max-ticks", "30"],
        ),
        ("core", "bench_core.py", ["--robots", "1", "--sizes", "50", "--seconds", "0.5"]),
        ("direct", "bench_direct.py", ["--robots", "1", "3", "--ticks", "10", "--warmup", "2"]),
        (
            "direct, paired",
            "bench_direct_pair.py",
            [
                "--other",
                str(BENCH.parent),
                "--robots",
                "1",
                "--ticks",
                "10",
                "--pairs",
                "1",
                "--warmup",
                "2",
            ],
        ),
        (
            "dispersal",
            "bench_dispersal.py",
            ["--robots", "5", "--seeds", "0", "--seconds", "2", "--why"],
        ),
        ("embedded", "bench_embedded.py", ["--robots", "1", "--ticks", "10"]),
        ("learning envs", "bench_envs.py", ["--seconds", "0.5"]),
        (
            "exploration definitions",
            "bench_exploration_defs.py",
            ["--seeds", "0", "--max-ticks", "30"],
        ),
        (
            "explore bench, paired",
            "bench_explore_bench.py",
            ["--base", str(BENCH.parent), "--robots", "2", "--ticks", "10", "--reps", "1"],
        ),
        (
            "kernels",
            "bench_kernels.py",
            ["--robots", "1", "--ranges", "7", "--reps", "1", "--no-parallel"],
        ),
        ("maps", "bench_maps.py", ["--sizes", "50"]),
        ("motion", "bench_motion.py", ["--ticks", "5", "--robots", "1"]),
        ("nav2 task API", "bench_nav2_api.py", ["--robots", "2", "--ticks", "10", "--pairs", "1"]),
        ("obstacles", "bench_obstacles.py", ["--robots", "2", "--side", "50", "--rounds", "1"]),
        (
            "occupancy maps",
            "bench_occupancy.py",
            ["--robots", "2", "--ticks", "10", "--rounds", "1"],
        ),
        ("pair searches", "bench_pairs.py", []),
        ("radio", "bench_radio.py", ["--robots", "3", "--ticks", "10", "--rounds", "1"]),
        ("recording", "bench_recording.py", ["--robots", "2", "--ticks", "10", "--rounds", "1"]),
        ("sim node", "bench_sim_node.py", ["--robots", "2", "--seconds", "1"]),
        (
            "stacks",
            "bench_stacks.py",
            ["--robots", "1", "--stacks", "core", "direct", "embedded", "--ticks", "10"],
        ),
        ("maes_state bytes", "bench_state_wire.py", ["--robots", "2", "--ticks", "5"]),
        ("tags", "bench_tags.py", ["--tags", "0", "10", "--seconds", "0.5"]),
        ("issue 35's targets", "bench_targets.py", ["--smoke"]),
        ("wander", "bench_wander.py", ["--robots", "1", "--ticks", "10", "--repeat", "1"]),
        (
            "watching in a web browser",
            "bench_watch.py",
            ["--robots", "2", "--ticks", "30", "--rounds", "1", "--client", "http"],
        ),
        (
            "messages as bytes",
            "bench_wire.py",
            ["--robots", "2", "--size", "50", "--repeat", "1", "--rounds", "1"],
        ),
        ("input fuzzing", "fuzz_inputs.py", ["--configs", "5", "--maps", "5", "--commands", "5"]),
    ],
}

#: Scripts in bench/ the smoke plan leaves out, and why.
SMOKE_LEFT_OUT = {
    "bench_irsim.py": "needs IR-SIM's own venv (make bench-irsim builds it)",
    "bench_stage.py": "needs Stage built from source (make bench-stage builds it)",
    "irsim_driver.py": "runs inside IR-SIM's venv, started by bench_irsim.py",
    "listen_all.py": "a helper process of bench_recording.py, started by it",
    "run_all.py": "this plan's runner",
}


def main(argv: list[str] | None = None) -> int:
    """Run (or list) one profile's benchmarks; the exit status is the first failure's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--full", action="store_true", help="every case (tens of minutes)")
    which.add_argument(
        "--smoke",
        action="store_true",
        help="every script once on a tiny case (figures meaningless)",
    )
    parser.add_argument("--list", action="store_true", help="print the plan and exit")
    args = parser.parse_args(argv)
    plan = PLANS["full" if args.full else "smoke" if args.smoke else "quick"]
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
