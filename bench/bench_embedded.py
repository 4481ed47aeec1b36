"""Benchmark of the embedded stack (`make run`): achieved real-time factor by robot count.

Each case runs the embedded runner in its own process, unpaced (as fast as possible), with the
example explorer on the default map (maes_config.yaml's building), for a fixed number of ticks,
and reads the achieved real-time factor from the run's summary.json. Run it in the pip
environment::

    scripts/with_env python bench/bench_embedded.py                  # 1, 5, 20, 50, 120 robots
    scripts/with_env python bench/bench_embedded.py --robots 5 --ticks 200
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 5, 20, 50, 120])
    parser.add_argument("--ticks", type=int, default=300, help="logic ticks per case")
    parser.add_argument("--config", default=str(REPO / "maes_config.yaml"))
    args = parser.parse_args(argv)
    base = yaml.safe_load(Path(args.config).read_text())
    print(f"{'robots':>6} {'ticks':>6} {'wall s':>7} {'RTF':>7}  explored", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.robots:
            cfg = dict(base, number_of_robots=n)
            cfg["end_criteria"] = {
                "exploration_percent": None,
                "coverage_percent": None,
                "tick": None,
            }
            path = Path(tmp) / f"bench_{n}.yaml"
            path.write_text(yaml.safe_dump(cfg))
            out = Path(tmp) / f"results_{n}"
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "maes_bringup.runners.embedded",
                    "--config",
                    str(path),
                    "--real-time-factor",
                    "0",
                    "--max-ticks",
                    str(args.ticks),
                    "--results",
                    str(out),
                ],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                print(f"{n:>6} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            (run,) = out.iterdir()
            s = json.loads((run / "summary.json").read_text())
            print(
                f"{n:>6} {s['ticks']:>6} {s['wall_time_s']:7.1f} "
                f"{s['real_time_factor_achieved']:6.2f}x  "
                f"{s['final']['exploration_percent']:5.1f} %",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
