"""Benchmark of direct mode: real-time factor of the example explorer on a 75x75 cave.

The config is ``configs/cave_75.yaml`` (75x75 cave, biggest-room spawn, distributed SLAM,
broadcasts blocked by walls) with ``number_of_robots`` replaced.

Everything a direct-mode run does each logic tick: every robot's state, the explorer's logic
(frontier choice on its costmap when it needs a new goal, claims broadcast, tags), the built-in
navigator's planning and following for every robot with a goal, and the simulation step
(lidar, SLAM every 10 ticks, sensing, broadcasts, metrics).

Usage::

    python bench/bench_direct.py                    # 1, 10, 50 and 120 robots, 300 ticks each
    python bench/bench_direct.py --robots 120 --ticks 600

Prints per case: wall ms per tick, the real-time factor (sim seconds per wall second; 100 ms
ticks), the same from the process's CPU time (steadier on a shared machine), the shares of the
wall time spent stepping the simulation, building the robots' states (``Simulation.observation``
and its states),
in the logic callbacks and in navigation (the rest: costmaps, pose conversion, bookkeeping), and
the exploration reached.

Before the cases, an untimed warm-up (imports, numba's cache) runs ``--warmup`` ticks (60) with
the most robots asked for or 120, whichever is more: some kernels run only in crowds or only
once robots have spread out (the claims' checks, a tag lookup, a signature of A*), and a
2-robot 20-tick warm-up left their compiling or cache loading in the timed cases; 120 robots
for 60 ticks reach every kernel that 1, 10 or 120 robots reach in 1000 ticks.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_common", "maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 10, 50, 120])
    parser.add_argument(
        "--config",
        default=str(ROOT / "configs" / "cave_75.yaml"),
        help="base config (default: configs/cave_75.yaml, a 75x75 cave)",
    )
    parser.add_argument("--ticks", type=int, default=300, help="logic ticks per case")
    parser.add_argument("--logic", default="maes_controller.algorithms.frontier_explorer:logic")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup", type=int, default=60, help="untimed ticks first (at least 120 robots)"
    )
    parser.add_argument(
        "--json", default=None, metavar="FILE", help="also write each case's figures to FILE"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

    from maes_bringup.runners import direct, team
    from maes_controller.robot_api import load_logic
    from maes_sim.core import Simulation, load_config
    from maes_sim.core.observation import Observation

    spent = {"state": 0.0, "logic": 0.0, "nav": 0.0, "sim": 0.0}

    def timed(name, fn):  # wall time of one phase of the tick loop, for the breakdown
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += time.perf_counter() - t0

        return wrapper

    # The observation pass and the states made from it (robot_state(s) delegate to these).
    Simulation.observation = timed("state", Simulation.observation)
    Observation.states = timed("state", Observation.states)
    Observation.state = timed("state", Observation.state)
    Simulation.step = timed("sim", Simulation.step)
    team.step_navigation = timed("nav", team.step_navigation)
    logic = timed("logic", load_logic(args.logic))

    base = load_config(args.config)

    def config(n: int):
        return replace(base, number_of_robots=n)

    # warm-up: imports and numba's cache, crowd-only kernels included
    direct.run(config(max(*args.robots, 120)), logic, max_ticks=args.warmup, seed=args.seed)
    print(
        f"{'robots':>6} {'ticks':>6} {'ms/tick':>8} {'RTF':>7} {'CPU RTF':>8} "
        f"{'sim %':>6} {'state %':>7} {'logic %':>7} {'nav %':>6}  explored",
        flush=True,
    )
    cases = []
    for n in args.robots:
        spent.update(dict.fromkeys(spent, 0.0))
        cpu0 = time.process_time()
        result = direct.run(config(n), logic, max_ticks=args.ticks, seed=args.seed)
        cpu = time.process_time() - cpu0
        per_tick = result.wall_time / max(result.ticks, 1)
        share = {k: 100 * v / result.wall_time for k, v in spent.items()}
        print(
            f"{n:>6} {result.ticks:>6} {per_tick * 1e3:>8.2f} {result.real_time_factor:>7.1f} "
            f"{result.sim_time / cpu:>8.1f} {share['sim']:>6.0f} {share['state']:>7.0f} "
            f"{share['logic']:>7.0f} {share['nav']:>6.0f}  {result.exploration[-1]:.1f} %",
            flush=True,
        )
        cases.append(
            {
                "robots": n,
                "ticks": result.ticks,
                "real_time_factor": result.real_time_factor,
                "cpu_real_time_factor": result.sim_time / cpu,
                "explored": result.exploration[-1],
            }
        )
    if args.json:
        Path(args.json).write_text(json.dumps(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
