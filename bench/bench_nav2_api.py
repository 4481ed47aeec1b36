"""What Nav2's task interface on the built-in navigator costs: start-up and CPU per tick.

Runs the embedded stack (`maes_run --controllers none --start-timeout 1`, unpaced: no script
drives the robots here, so the difference is the servers alone; the run starts 1 s after its
nodes are up) on the default config with ``--nav2-api off`` and ``--nav2-api on`` in turn
(paired, ``--pairs`` times, alternating), for a fixed number of ticks, and prints per case
the start-up (process start to the first tick), the CPU seconds per tick after the start and
the ratio on/off. Run it in the pip environment::

    scripts/with_env python bench/bench_nav2_api.py                   # 50 robots, 100 ticks
    scripts/with_env python bench/bench_nav2_api.py --robots 10 --ticks 50 --pairs 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_case(config: Path, out: Path, ticks: int, nav2: str) -> dict[str, float]:
    """One run; start-up wall seconds, CPU seconds per tick after the start, ticks."""
    cpu0, wall0 = _cpu_children(), time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "maes_bringup.runners.embedded",
            "--config",
            str(config),
            "--real-time-factor",
            "0",
            "--max-ticks",
            str(ticks),
            "--results",
            str(out),
            "--controllers",
            "none",  # the task API serves scripts that drive the robots; maes_run refuses it else
            "--start-timeout",
            "1",  # no script comes: start 1 s after the nodes are up
            "--nav2-api",
            nav2,
        ],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    wall = time.perf_counter() - wall0
    cpu = _cpu_children() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"maes_run failed ({nav2}):\n{proc.stderr[-2000:]}")
    (run,) = out.iterdir()
    summary = json.loads((run / "summary.json").read_text())
    running = float(summary["wall_time_s"])  # from the first tick to the end
    startup = wall - running
    # CPU of the start-up is not separable from the child's total: charge it all to ticks,
    # after removing the start-up share at the run's average CPU load
    per_tick = cpu * (running / wall) / max(summary["ticks"], 1)
    return {"startup": startup, "cpu_per_tick": per_tick, "ticks": summary["ticks"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=50)
    parser.add_argument("--ticks", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--config", default=str(REPO / "maes_config.yaml"))
    args = parser.parse_args(argv)
    cfg = yaml.safe_load(Path(args.config).read_text())
    cfg["number_of_robots"] = args.robots
    cfg["end_criteria"] = {"exploration_percent": None, "coverage_percent": None, "tick": None}
    results: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text(yaml.safe_dump(cfg))
        for k in range(args.pairs):
            for nav2 in ("off", "on") if k % 2 == 0 else ("on", "off"):
                r = run_case(path, Path(tmp) / f"out_{k}_{nav2}", args.ticks, nav2)
                results[nav2].append(r)
                print(
                    f"pair {k + 1} nav2-api {nav2:>3}: start-up {r['startup']:6.2f} s, "
                    f"{1000 * r['cpu_per_tick']:7.1f} ms CPU/tick",
                    flush=True,
                )
    med = {
        key: {m: statistics.median(r[m] for r in rs) for m in ("startup", "cpu_per_tick")}
        for key, rs in results.items()
    }
    print(
        f"{args.robots} robots, {args.ticks} ticks, median of {args.pairs}: start-up "
        f"{med['off']['startup']:.2f} s -> {med['on']['startup']:.2f} s "
        f"(x{med['on']['startup'] / med['off']['startup']:.2f}), CPU/tick "
        f"{1000 * med['off']['cpu_per_tick']:.1f} -> {1000 * med['on']['cpu_per_tick']:.1f} ms "
        f"(x{med['on']['cpu_per_tick'] / med['off']['cpu_per_tick']:.2f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
