"""What the navigator's yielding costs a packed start: docs/scaling.md's "A 120-robot start".

Runs direct mode once per seed and variant of the navigator's yielding
(:class:`~maes_controller.navigation.NavParams`, every robot alike) and prints, per run: the
share of the team 3 m or more from its start after 30 s and 60 s, the explored share after 1
minute and at the end of the run, the stalls (``summary.json``'s count) and the collisions (the
simulation's count: ticks on which a robot began a contact with a robot or a wall, summed over
the robots). The default config's keys, a ``spawn_together`` start, 1200 ticks (2 simulated
minutes), the frontier explorer, as ``experiments/scaling.yaml``; 120 robots on a 75x75
building unless told otherwise.

``--goals oracle`` replaces the explorer by goals it could not know: at tick 0 each robot is
sent to its own cell of the true map: open, with open cells all round, at least
:data:`ORACLE_OUT_M` of path from the robot's start and :data:`ORACLE_NEAR_M` from every
robot's start, the goals :data:`ORACLE_SPACING` apart. The cells are handed out nearest
first (the pair of robot and cell with the shortest path, then the next), and a goal the
navigator gives up is sent again. What the navigator's crowd flow allows with goals that all
lead out of the start, known from the first tick (not a bound: other goals may do better).

A variant is ``NAME`` or ``NAME:FIELD=VALUE,FIELD=VALUE``: NavParams fields replaced for every
robot (metres, seconds; ``true``/``false`` for switches), e.g. ``margin-0.1:yield_margin=0.1``
or ``off:yield_to_robots=false``. ``default`` keeps the fields as ``NavParams.from_config``
makes them.

Usage::

    python experiments/crowd_yielding.py                                  # the docs' table
    python experiments/crowd_yielding.py --robots 50 --size 60 --seeds 2 \\
        --variant default --variant off:yield_to_robots=false --out crowd.csv
    python experiments/crowd_yielding.py --robots 50 --size 60 --ticks 300 --goals oracle
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The variants of the docs' table.
VARIANTS = (
    "default",
    "margin-0.2:yield_margin=0.2",
    "margin-0.1:yield_margin=0.1",
    "off:yield_to_robots=false",
)
#: Robots this far (metres) from their start have left it.
LEFT_M = 3.0
#: ``--goals oracle``: every goal at least ORACLE_OUT_M (metres of path) from its robot's start
#: and ORACLE_NEAR_M from every robot's start, the goals at least ORACLE_SPACING apart (metres).
ORACLE_OUT_M, ORACLE_NEAR_M, ORACLE_SPACING = 6.0, 2.0, 1.0


def parse_variant(text: str) -> tuple[str, dict]:
    """``(name, fields)`` of a ``NAME[:FIELD=VALUE,...]`` variant (see the module docstring).

    Examples
    --------
    >>> parse_variant("off:yield_to_robots=false,yield_margin=0.1")
    ('off', {'yield_to_robots': False, 'yield_margin': 0.1})
    >>> parse_variant("default")
    ('default', {})
    """
    from maes_controller.navigation import NavParams

    name, _, rest = text.partition(":")
    if not name:
        raise ValueError(f"variant {text!r} has no name (NAME or NAME:FIELD=VALUE,...)")
    known = {f.name: f for f in fields(NavParams)}
    values: dict = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key not in known:
            raise ValueError(
                f"variant {text!r}: {item!r} is not FIELD=VALUE with a NavParams field "
                f"(fields: {', '.join(sorted(known))})"
            )
        kind = known[key].type
        kind = kind if isinstance(kind, str) else kind.__name__
        try:
            if kind == "bool":
                if value.lower() not in ("true", "false"):
                    raise ValueError("not true or false")
                values[key] = value.lower() == "true"
            else:
                values[key] = int(value) if kind == "int" else float(value)
        except ValueError:
            raise ValueError(f"variant {text!r}: {key} takes a {kind}, got {value!r}") from None
    return name, values


def config(robots: int, size: int, ticks: int = 1200):
    """The default config: ``robots`` spawned together on a ``size`` x ``size`` building."""
    from maes_sim.core import load_config

    base = load_config(ROOT / "maes_config.yaml")
    world = replace(base.map, width_in_tiles=size, height_in_tiles=size)
    ends = replace(base.end_criteria, exploration_percent=None, coverage_percent=None, tick=ticks)
    return replace(base, number_of_robots=robots, map=world, end_criteria=ends)


def oracle_goals(sim):
    """(N, 2) goals, metres in the map frame, one per robot of ``sim`` (just made, robots at
    their start): the ``--goals oracle`` cells (see the module docstring)."""
    import numpy as np

    from maes_sim.core.world.connectivity import path_steps

    walls = sim.walls
    h, w = walls.shape
    tile = float(sim.config.world.tile_size)
    half = np.array([w / 2.0, h / 2.0])  # positions are in tiles from the map's centre
    starts = np.floor(sim.poses[:, :2] + half).astype(np.int64)
    padded = np.pad(walls, 1, constant_values=True)
    roomy = ~walls
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            roomy &= ~padded[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    steps = np.stack([path_steps(~walls, tile_xy) for tile_xy in starts])  # (N, H, W)
    reached = (steps >= 0).all(axis=0)
    nearest = np.where(steps >= 0, steps, 0).min(axis=0)
    ys, xs = np.nonzero(roomy & reached & (nearest * tile >= ORACLE_NEAR_M))
    cells: list = []
    for k in np.argsort(nearest[ys, xs], kind="stable"):  # nearest first, spaced
        c = np.array([xs[k] + 0.5, ys[k] + 0.5]) - half
        if all(np.hypot(*(c - o)) * tile >= ORACLE_SPACING for o in cells):
            cells.append(c)
        if len(cells) >= 4 * len(starts):
            break
    at = np.floor(np.array(cells) + half).astype(np.int64)
    cost = steps[:, at[:, 1], at[:, 0]].astype(float)
    cost[cost * tile < ORACLE_OUT_M] = np.inf  # out of each robot's own start
    if (np.isinf(cost).all(axis=1)).any() or len(cells) < len(starts):
        raise ValueError(f"too few goal cells ({len(cells)}) for {len(starts)} robots")
    goals = np.empty((len(starts), 2))
    for _ in range(len(starts)):  # the shortest pair of robot and cell first
        robot, cell = np.unravel_index(np.argmin(cost), cost.shape)
        goals[robot] = cells[cell] * tile
        cost[robot, :] = np.inf
        cost[:, cell] = np.inf
    return goals


def run(
    variant: str, robots: int, size: int, seed: int, ticks: int = 1200, goals: str = "explorer"
) -> dict:
    """One run's row (see the module docstring)."""
    import numpy as np

    from maes_bringup.runners import direct
    from maes_controller.navigation import NavParams
    from maes_sim.core import Simulation

    name, values = parse_variant(variant)
    cfg = config(robots, size, ticks)
    tile = float(cfg.world.tile_size)
    per_tick = cfg.global_settings.logic_ticks_delta_millis / 1000.0
    marks = {round(30.0 / per_tick): "left_30s_pct", round(60.0 / per_tick): "left_60s_pct"}
    minute = round(60.0 / per_tick)
    row: dict = {"variant": name, "robots": robots, "map": f"{size}x{size} building"}
    row["seed"] = seed
    first = Simulation(cfg, seed=seed)
    start = first.poses[:, :2].copy()  # as bench/bench_dispersal.py
    logic = "maes_controller.algorithms.frontier_explorer:logic"
    if goals == "oracle":
        row["goals"] = "oracle"
        targets, sent = oracle_goals(first), set()

        def logic(robot):
            # one goal from the first tick, sent again whenever the navigator gave it up
            if robot.robot_id not in sent or robot.nav_status.name == "ABORTED":
                sent.add(robot.robot_id)
                robot.nav_to_pos(*map(float, targets[robot.robot_id]))

    def look(sim):
        column = marks.get(sim.tick)
        if column is not None:
            moved = np.hypot(*(sim.poses[:, :2] - start).T) * tile
            row[column] = round(float((moved >= LEFT_M).mean() * 100.0), 1)
        if sim.tick == minute:
            row["explored_60s_pct"] = round(float(sim.exploration_percent), 2)

    plain = NavParams.from_config

    def from_config(cfg, robot=0, **overrides):
        return plain(cfg, robot, **{**values, **overrides})

    NavParams.from_config = from_config  # every robot's navigator is made through this name
    try:
        result = direct.run(cfg, logic, seed=seed, progress=look)
    finally:
        NavParams.from_config = plain
    row["explored_end_pct"] = round(float(result.exploration[-1]), 2)
    row["stalls"] = int(result.stats["stalls"])
    row["collisions"] = int(result.collisions.sum())
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=120)
    parser.add_argument("--size", type=int, default=75, help="map width and height (tiles)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--ticks", type=int, default=1200)
    parser.add_argument(
        "--variant", action="append", help="NAME[:FIELD=VALUE,...] (repeat; default: the docs')"
    )
    parser.add_argument(
        "--goals",
        choices=("explorer", "oracle"),
        default="explorer",
        help="the frontier explorer's goals, or each robot one goal out of the start room "
        "on the true map (see above)",
    )
    parser.add_argument("--out", type=Path, help="also write the rows to this CSV file")
    args = parser.parse_args(argv)
    variants = args.variant or list(VARIANTS)
    try:
        for variant in variants:
            parse_variant(variant)
    except ValueError as err:
        parser.error(str(err))
    rows = []
    total = len(variants) * len(args.seeds)
    for variant in variants:
        for seed in args.seeds:
            row = run(variant, args.robots, args.size, seed, args.ticks, args.goals)
            rows.append(row)
            print(f"[{len(rows)}/{total}] " + ", ".join(f"{k} {v}" for k, v in row.items()))
            sys.stdout.flush()
    if args.out is not None:
        from maes_bringup.experiments.batch_files import write_rows

        write_rows(args.out, list(rows[0]), rows)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
