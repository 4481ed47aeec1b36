"""TRS robots share their maps over the radio (issue 36, docs/scaling.md "TRS shares its map").

Each robot maps alone (``distribute_slam: false``, the default); a TRS robot broadcasts the
tiles of its own map that changed and chooses on its map with the cells only others mapped
filled in (``maes_controller.algorithms._common``: ``share_map``, ``hear_map``,
``merged_view``). These tests run real robots in direct mode, with the simulator's own radio.
"""

from __future__ import annotations

import numpy as np
import pytest

from maes_bringup.runners.direct import run
from maes_common.contract import MAX_MESSAGE_BYTES
from maes_controller.algorithms import _common, trs
from maes_sim.core import config_from_dict


def _cave(robots: int, ticks: int, size: int = 40, **constraints) -> object:
    return config_from_dict(
        {
            "number_of_robots": robots,
            "end_criteria": {"tick": ticks},
            "robot_constraints": {"slam_position_inaccuracy": 0.0, **constraints},
            "robot_spawn_config": {"spawn_together": {}},
            "map": {"width_in_tiles": size, "height_in_tiles": size, "cave_config": {}},
        }
    )


def _team(cfg, seed: int = 0) -> dict:
    """Run TRS on ``cfg``; the robots by namespace, as they were at the end."""
    robots: dict = {}

    def logic(robot):
        robots[robot.namespace] = robot
        trs.logic(robot)

    run(cfg, logic, seed=seed)
    return robots


def test_map_tiles_travel_as_text_and_back():
    rng = np.random.default_rng(3)
    known = rng.random((3, _common.MAP_TILE, _common.MAP_TILE)) < 0.6
    blocked = known & (rng.random(known.shape) < 0.3)
    text = _common.encode_tiles([-4, 0, 7], [2, -1, -9], known, blocked)
    tx, ty, k, b = _common.decode_tiles(text)
    assert (tx.tolist(), ty.tolist()) == ([-4, 0, 7], [2, -1, -9])
    assert (k == known).all() and (b == blocked).all()
    # malformed or other messages carry no tiles
    good = text.split()[1]
    for bad in (
        "maptiles",
        "maptiles 1,2",
        "maptiles 1:" + good.split(":")[1],
        "maptiles 1,2:@@@@",
        "maptiles 1,2:" + good.split(":")[1][:-4],
        "frontier-trail 1.0 2.0",
    ):
        assert _common.decode_tiles(bad)[0].size == 0, bad


def test_a_trs_robot_chooses_on_the_cells_its_team_mapped():
    robots = _team(_cave(3, 150, broadcast_range=1000.0))
    me, others = robots["robot0"], [robots["robot1"], robots["robot2"]]
    own = me.global_costmap.grid.array
    merged = _common.merged_view(me).array
    assert ((own >= 0) <= (merged == own)).all()  # what its own map knows is kept as it is
    filled = (own < 0) & (merged >= 0)
    theirs = np.zeros_like(filled)
    for other in others:
        theirs |= other.global_costmap.grid.array >= 0
    assert filled.sum() > 100, filled.sum()  # the team mapped cells its lidar has not seen
    assert not (filled & ~theirs).any()  # each of them known in another robot's own map
    # a blocked cell heard is lethal in the merged map, a free one free
    assert set(np.unique(merged[filled]).tolist()) <= {0, 100}


def test_a_robot_out_of_radio_range_maps_alone():
    robots = _team(_cave(3, 60, broadcast_range=0.1))
    for robot in robots.values():
        assert not robot.memory.get("map_heard")
        own = robot.global_costmap.grid.array
        assert (_common.merged_view(robot).array == own).all()


def test_the_widest_tile_messages_fit_the_radio():
    full = np.ones((_common._TILES_PER_MESSAGE, _common.MAP_TILE, _common.MAP_TILE), dtype=bool)
    wide = [-100] * len(full)
    assert len(_common.encode_tiles(wide, wide, full, full).encode()) <= MAX_MESSAGE_BYTES
    assert _common._TILES_PER_MESSAGE >= 20


@pytest.mark.parametrize("size", [40, 150])
def test_a_teammate_in_range_has_every_cell_a_robot_mapped_a_period_before(size):
    """Every broadcast fits the radio's limit, and what robot0's own map knew two periods
    before the end is in robot1's merged map at the end."""
    sizes: list[int] = []
    end = 12 * _common.MAP_PERIOD
    seen: dict = {}

    def logic(robot):
        if robot.robot_id == 0 and "wrapped" not in seen:
            real = robot.broadcast_msg

            def recording(text):
                if text.startswith(_common.MAP_PREFIX):
                    sizes.append(len(text.encode()))
                real(text)

            robot.broadcast_msg = recording
            seen["wrapped"] = True
        if robot.robot_id == 0 and robot.tick == end - 2 * _common.MAP_PERIOD:
            seen["known"] = robot.global_costmap.grid.array >= 0
        seen[robot.robot_id] = robot
        trs.logic(robot)

    run(_cave(2, end, size=size, broadcast_range=1000.0), logic, seed=1)
    assert sizes and max(sizes) <= MAX_MESSAGE_BYTES, max(sizes, default=0)
    merged = _common.merged_view(seen[1]).array
    assert seen["known"].sum() > 100
    assert not (seen["known"] & (merged < 0)).any()
