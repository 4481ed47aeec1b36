"""Side-by-side benchmark against IR-SIM (PyPI ``ir-sim``) on the wander scenario.

The scenario of ``bench/bench_wander.py`` (50x50 m cave, robots spawned in its biggest open
region, 180-beam 360-degree 10 m lidar every 0.1 s, the same reactive wander controller reading
each robot's scan) runs in the MAES-ROS core (this process, numba on one thread) and in IR-SIM
(``bench/irsim_driver.py`` in IR-SIM's own venv), with the same walls and the same spawn poses.
The two alternate, case by case and round by round, so drift in the machine's speed hits both;
each runs on one core (numba, OpenMP and BLAS threads limited to 1) and never both at once.

Usage::

    make bench-irsim                                      # makes .venv-irsim, then runs this
    make bench-irsim IRSIM_ARGS="--robots 1 10 --repeat 5"
    python bench/bench_irsim.py --irsim-python .venv-irsim/bin/python

Prints per robot count the median wall ms per tick and real-time factor of each simulator, the
same from CPU time, and the ratio MAES-ROS / IR-SIM (how many times faster the core is).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_wander import TICK_S, run_once, scenario_config  # noqa: E402

ONE_THREAD = {
    "NUMBA_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}


def write_scenario(n: int, seed: int, path: Path) -> None:
    """The scenario's walls, spawn poses (grid metres, origin at the map's corner, as IR-SIM
    places them) and robot radius, from the core's own map generator and spawn rule."""
    from maes_sim.core import Simulation

    sim = Simulation(scenario_config(n, seed))
    poses = np.empty((n, 3))
    poses[:, :2] = sim.grid_positions * sim.config.world.tile_size
    poses[:, 2] = sim.poses[:, 2]
    np.savez(path, walls=sim.walls, poses=poses, radius=sim.radius * sim.config.world.tile_size)


def run_irsim(python: str, scenario: Path, ticks: int) -> dict[str, float]:
    """One IR-SIM run in its venv; its JSON line."""
    out = subprocess.run(
        [python, str(HERE / "irsim_driver.py"), str(scenario), "--ticks", str(ticks)],
        env={**os.environ, **ONE_THREAD},
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"IR-SIM run failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--repeat", type=int, default=3, help="rounds (medians shown)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--irsim-python",
        default=os.environ.get("IRSIM_PYTHON", str(HERE.parent / ".venv-irsim" / "bin" / "python")),
        help="the Python of IR-SIM's venv (default .venv-irsim/bin/python, made by make "
        "bench-irsim)",
    )
    args = parser.parse_args(argv)
    os.environ.update({k: v for k, v in ONE_THREAD.items() if k != "MPLBACKEND"})
    if not Path(args.irsim_python).exists():
        parser.error(f"no IR-SIM Python at {args.irsim_python}: run `make bench-irsim`")

    def ticks_for(n: int) -> tuple[int, int]:  # (core, IR-SIM): IR-SIM is far slower
        return max(200, min(5000, 20000 // n)), max(20, min(1000, 2000 // n))

    maes: dict[int, list] = {n: [] for n in args.robots}
    irsim: dict[int, list] = {n: [] for n in args.robots}
    with tempfile.TemporaryDirectory() as tmp:
        scenarios = {n: Path(tmp) / f"wander_{n}.npz" for n in args.robots}
        for n, path in scenarios.items():
            write_scenario(n, args.seed, path)
        for rnd in range(args.repeat):
            for n in args.robots:
                core_ticks, irsim_ticks = ticks_for(n)
                order = ("maes", "irsim") if rnd % 2 == 0 else ("irsim", "maes")
                for who in order:
                    if who == "maes":
                        maes[n].append(run_once(n, core_ticks, args.seed))
                    else:
                        irsim[n].append(run_irsim(args.irsim_python, scenarios[n], irsim_ticks))
                print(f"[round {rnd + 1}/{args.repeat}] {n} robots done", file=sys.stderr)

    def median(runs: list, key: str) -> float:
        return float(np.median([r[key] for r in runs]))

    version = irsim[args.robots[0]][0]["irsim"]
    print(f"MAES-ROS core vs IR-SIM {version}: median of {args.repeat} interleaved runs, one core")
    print(
        f"{'robots':>6} {'MAES ms':>8} {'MAES RTF':>9} {'IR-SIM ms':>10} {'IR-SIM RTF':>11} "
        f"{'ratio':>7} {'CPU ratio':>10}"
    )
    for n in args.robots:
        mw, iw = median(maes[n], "wall"), median(irsim[n], "wall")
        mc, ic = median(maes[n], "cpu"), median(irsim[n], "cpu")
        print(
            f"{n:>6} {mw * 1e3:>8.3f} {TICK_S / mw:>8.1f}x {iw * 1e3:>10.2f} "
            f"{TICK_S / iw:>10.2f}x {iw / mw:>6.0f}x {ic / mc:>9.0f}x",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
