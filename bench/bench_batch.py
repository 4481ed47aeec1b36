"""Benchmark of maes-batch: runs per minute of an experiment on local worker processes.

Usage::

    python bench/bench_batch.py                                   # robots_vs_time, 1 and 2 workers
    python bench/bench_batch.py experiments/lhs_sensing.yaml --workers 2

Each case runs the whole experiment into a fresh temporary folder (nothing is kept) and prints
the wall time, runs per minute (worker start-up included: spawning, imports, loading numba's
cached kernels), the mean wall time of one run inside a worker, and the summed simulated time
per wall second. The numba cache must be warm (run any test or the benchmark once before).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_common", "maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "experiment", nargs="?", default=str(ROOT / "experiments" / "robots_vs_time.yaml")
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)

    import os

    # workers are spawned processes: they find the packages through PYTHONPATH
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src" / p) for p in ("maes_sim", "maes_controller", "maes_bringup")]
        + [os.environ.get("PYTHONPATH", "")]
    )

    from maes_bringup.experiments.batch import read_rows, run_experiment
    from maes_bringup.experiments.experiment import load_experiment

    exp = load_experiment(args.experiment)
    print(f"{exp.name}: {len(exp.cases)} runs")
    print(
        f"{'workers':>7} {'wall s':>7} {'runs/min':>9} {'s/run':>6} {'sim s/wall s':>13} "
        f"{'failed':>6}",
        flush=True,
    )
    for workers in args.workers:
        with tempfile.TemporaryDirectory() as tmp:
            summary = run_experiment(exp, Path(tmp) / "out", workers=workers, show_progress=False)
            timing = read_rows(Path(tmp) / "out" / "timing.csv")
            rows = read_rows(Path(tmp) / "out" / "results.csv")
        per_run = sum(float(t["wall_time_s"]) for t in timing) / max(len(timing), 1)
        sim_s = sum(float(r["sim_time"] or 0) for r in rows)
        print(
            f"{workers:>7} {summary.wall_time:>7.1f} "
            f"{60 * summary.completed / summary.wall_time:>9.1f} {per_run:>6.2f} "
            f"{sim_s / summary.wall_time:>13.1f} {summary.failed:>6}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
