"""Stalls counted with other pauses: the table of docs/scaling.md's "Stalls" section.

A robot's stall clock (``maes_sim/core/stalls.py``) restarts when the robot stands
``STOP_SECONDS`` (10 s) without a command. This script runs direct mode once per seed and
counts the same run's stalls with other pauses too: one tick (the count before code
``648bede``), 5 s, 10 s (the simulator's own count) and never (no pause restarts the clock). It
stands clocks of :class:`~maes_sim.core.stalls.StallWatch` with those pauses in for the
simulation's one, each fed the same commands and poses; the 10 s clock is the simulation's
own, so its column equals ``summary.json``'s ``stalls``.

Usage::

    python experiments/stall_pauses.py --logic frontier_explorer --robots 120 --size 75
    python experiments/stall_pauses.py --logic trs --robots 50 --map cave --seeds 0 1 2 3 4
    python experiments/stall_pauses.py ... --out stalls.csv     # also written as CSV

Each row: the algorithm, robots, map, seed, explored share after the run (%), the stalls begun
with each pause, and the robots still stalled at the end (10 s). The default config's keys, a
``spawn_together`` start, 1200 ticks (2 simulated minutes), as ``experiments/scaling.yaml``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Pauses (simulated seconds) that restart a clock, by column name; None: one tick.
PAUSES = {"one_tick": None, "5s": 5.0, "10s": 10.0, "never": float("inf")}


class _Clocks:
    """Several stall clocks fed as the simulation feeds its one (``driven``, ``update``); the
    10 s one answers for the simulation (its ``count``, ``stalled``, ...)."""

    def __init__(self, positions, radius, ticks, pause, *, tick_s: float):
        from maes_sim.core.stalls import StallWatch

        def in_ticks(seconds):
            if seconds is None:
                return 1
            return 10**9 if seconds == float("inf") else round(seconds / tick_s)

        self.clocks = {
            name: StallWatch(positions, radius, ticks, pause=in_ticks(s))
            for name, s in PAUSES.items()
        }
        self.own = self.clocks["10s"]
        if self.own.pause != pause:  # the simulation's STOP_SECONDS is no longer 10 s
            raise RuntimeError(
                f"the simulation's pause is {pause} ticks, this script's 10 s is "
                f"{self.own.pause}: update PAUSES"
            )

    def __getattr__(self, name):
        return getattr(self.own, name)

    def driven(self, robots) -> None:
        for clock in self.clocks.values():
            clock.driven(robots)

    def update(self, tick, positions, asked, exploring) -> int:
        begun = {n: c.update(tick, positions, asked, exploring) for n, c in self.clocks.items()}
        return begun["10s"]


def config(robots: int, size: int, cave: bool, ticks: int = 1200):
    """The default config: ``robots`` spawned together on a ``size`` x ``size`` building (or
    cave), ``ticks`` long."""
    from maes_sim.core import load_config
    from maes_sim.core.config_schema import CaveConfig

    base = load_config(ROOT / "maes_config.yaml")
    world = replace(base.map, width_in_tiles=size, height_in_tiles=size)
    if cave:
        world = replace(world, building_config=None, cave_config=CaveConfig())
    ends = replace(base.end_criteria, exploration_percent=None, coverage_percent=None, tick=ticks)
    return replace(base, number_of_robots=robots, map=world, end_criteria=ends)


def count(logic: str, robots: int, size: int, cave: bool, seed: int, ticks: int = 1200) -> dict:
    """One run's row (see the module docstring)."""
    import maes_sim.core.simulation as simulation
    from maes_bringup.runners import direct

    cfg = config(robots, size, cave, ticks)
    made: list[_Clocks] = []
    own = simulation.StallWatch

    def clocks(positions, radius, ticks, pause):
        made.append(
            _Clocks(
                positions,
                radius,
                ticks,
                pause,
                tick_s=cfg.global_settings.logic_ticks_delta_millis / 1000.0,
            )
        )
        return made[-1]

    simulation.StallWatch = clocks  # the simulation builds its clock through this name
    try:
        result = direct.run(cfg, f"maes_controller.algorithms.{logic}:logic", seed=seed)
    finally:
        simulation.StallWatch = own
    (run,) = made
    row = {
        "algorithm": logic,
        "robots": robots,
        "map": f"{size}x{size} {'cave' if cave else 'building'}",
        "seed": seed,
        "explored_pct": round(float(result.exploration[-1]), 2),
    }
    row.update({f"stalls_{name}": int(clock.count) for name, clock in run.clocks.items()})
    row["stalled_at_end_10s"] = int(run.own.stalled.sum())
    if row["stalls_10s"] != int(result.stats["stalls"]):
        raise RuntimeError(
            f"the 10 s clock counted {row['stalls_10s']} stalls, the run's "
            f"statistics {result.stats['stalls']}"
        )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logic", required=True, help="a module of maes_controller.algorithms")
    parser.add_argument("--robots", type=int, required=True)
    parser.add_argument("--size", type=int, default=60, help="map width and height (tiles)")
    parser.add_argument("--map", choices=("building", "cave"), default="building")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--ticks", type=int, default=1200)
    parser.add_argument("--out", type=Path, help="also write the rows to this CSV file")
    args = parser.parse_args(argv)
    rows = []
    for seed in args.seeds:
        row = count(args.logic, args.robots, args.size, args.map == "cave", seed, args.ticks)
        rows.append(row)
        print(", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    if args.out is not None:
        from maes_bringup.experiments.batch_files import write_rows

        write_rows(args.out, list(rows[0]), rows)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
