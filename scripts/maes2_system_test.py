"""MAES 2.0's ROS system test in MAES-ROS: ticks to its thresholds, in direct mode.

Usage::

    scripts/with_env python scripts/maes2_system_test.py                  # the config's seed 0
    scripts/with_env python scripts/maes2_system_test.py --seeds 0 1 2 3 4
    scripts/with_env python scripts/maes2_system_test.py --relative-move-speed 0.1667 \
        --max-ticks 6000 --seeds 0 1 2 3 4                               # at 0.5 tiles/s

Runs ``configs/maes2_ros_system_test.yaml`` (MAES 2.0's own system-test config: 1 robot, 30x30
building, end at 99.5 % coverage or at 3000 ticks, or at ``--max-ticks``) with the built-in
explorer in direct mode, and prints per seed the first tick at which exploration reached 99.5 %
and 99.9 %, at which coverage reached 99.5 % (MAES's end criterion), and both percentages at tick
1480 (where MAES's README reports "about 99.9 %") and at the end. Direct mode gives the same run as
``maes_run`` to the bit (test_lockstep_runs), so these are ``maes_run``'s numbers too. See
docs/maes2_fidelity.md, "System test".
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_common", "maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))

#: The tick at which MAES 2.0's README reports its result.
MAES_TICKS = 1480


def first_tick(series: list[tuple[int, float]], threshold: float) -> int | None:
    """First tick whose value reached ``threshold``, or None.

    Examples
    --------
    >>> first_tick([(1, 50.0), (2, 99.6), (3, 100.0)], 99.5)
    2
    >>> first_tick([(1, 50.0)], 99.5) is None
    True
    """
    return next((t for t, v in series if v >= threshold), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "maes2_ros_system_test.yaml"))
    parser.add_argument("--seeds", type=int, nargs="+", default=None)
    parser.add_argument(
        "--max-ticks", type=int, default=None, help="replaces the config's end_criteria.tick"
    )
    parser.add_argument("--logic", default="maes_controller.algorithms.frontier_explorer:logic")
    parser.add_argument(
        "--relative-move-speed",
        type=float,
        default=None,
        help="override robot_constraints.relative_move_speed (top speed = 3 tiles/s x this)",
    )
    args = parser.parse_args(argv)

    from maes_bringup.runners.direct import run
    from maes_sim.core import load_config

    config = load_config(args.config)
    if args.relative_move_speed is not None:
        constraints = replace(
            config.robot_constraints, relative_move_speed=args.relative_move_speed
        )
        config = replace(config, robot_constraints=constraints)
    if args.max_ticks is not None:
        config = replace(config, end_criteria=replace(config.end_criteria, tick=args.max_ticks))
    seeds = args.seeds if args.seeds is not None else [config.random_seeds[0]]
    print(
        "seed  ticks  end_reason                expl>=99.5  expl>=99.9  cov>=99.5  "
        f"expl@{MAES_TICKS}  cov@{MAES_TICKS}  expl_end  cov_end"
    )
    for seed in seeds:
        expl: list[tuple[int, float]] = []
        cov: list[tuple[int, float]] = []

        def record(sim, expl=expl, cov=cov):
            expl.append((sim.tick, sim.exploration_percent))
            cov.append((sim.tick, sim.coverage_percent))

        result = run(config, args.logic, seed=seed, progress=record)
        at = dict(expl).get(MAES_TICKS, float("nan")), dict(cov).get(MAES_TICKS, float("nan"))
        print(
            f"{seed:4d}  {result.ticks:5d}  {str(result.end_reason):24s}  "
            f"{first_tick(expl, 99.5)!s:>10}  {first_tick(expl, 99.9)!s:>10}  "
            f"{first_tick(cov, 99.5)!s:>9}  {at[0]:9.2f}  {at[1]:8.2f}  "
            f"{expl[-1][1]:8.2f}  {cov[-1][1]:7.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
