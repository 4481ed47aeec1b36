"""TRS robots share their maps over the radio (issue 36, docs/scaling.md "TRS shares its map").

Each robot maps alone (``distribute_slam: false``, the default); a TRS robot broadcasts the
tiles of its own map that changed and chooses on its map with the cells only others mapped
filled in (``maes_controller.algorithms._common``: ``share_map``, ``hear_map``,
``merged_view``). These tests run real robots in direct mode, with the simulator's own radio.
"""

from __future__ import annotations

import os
import re

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


def test_a_trs_robot_takes_frontier_it_mapped_itself_first():
    """A frontier cell only the tiles heard show (the edge of a teammate's map) is a goal only
    when no frontier the robot mapped itself is left: every new goal of a 3-robot team on a
    cave, while the robot's own map still has frontier, is a cell of its own map."""
    goals = {"own": 0, "heard": 0}

    def logic(robot):
        before = robot.memory.get("goal_cell")
        trs.logic(robot)
        goal = robot.memory.get("goal_cell")
        if goal is None or goal == before or robot.memory.get("mode") is None:
            return
        own = robot.global_costmap.grid.array
        if not _common.MapView.of(robot).reachable_frontier.any():
            return  # nothing of its own left: any frontier may do
        goals["own" if own[goal[1], goal[0]] >= 0 else "heard"] += 1

    run(_cave(3, 600, size=60, broadcast_range=1000.0), logic, seed=1)
    assert goals["own"] > 20, goals
    assert goals["heard"] == 0, goals


def test_a_robot_out_of_radio_range_maps_alone():
    robots = _team(_cave(3, 60, broadcast_range=0.1))
    for robot in robots.values():
        assert not robot.memory.get("map_heard")
        own = robot.global_costmap.grid.array
        assert (_common.merged_view(robot).array == own).all()


def test_tiles_heard_before_a_robot_has_a_map_are_bounded():
    """A robot that hears tiles but has no costmap yet (a controller waiting for its first
    ``map``) keeps at most the newest MAP_HEARD_LIMIT messages, not all of them."""

    class Costmap:
        costmap = None

    class Robot:
        global_costmap = Costmap()
        memory: dict = {}

    robot = Robot()
    tile = np.ones((1, _common.MAP_TILE, _common.MAP_TILE), dtype=bool)
    texts = [_common.encode_tiles([k], [0], tile, tile) for k in range(3 * _common.MAP_HEARD_LIMIT)]
    for text in texts:
        assert _common.hear_map(robot, text)
    heard = robot.memory["map_heard"]
    assert len(heard) < _common.MAP_HEARD_LIMIT
    assert int(heard[-1][0][0]) == len(texts) - 1  # the newest kept


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


@pytest.mark.skipif(
    not os.environ.get("AMENT_PREFIX_PATH"),
    reason="ROS tests run in the pip environment (make test)",
)
def test_tiles_reach_teammates_over_the_ros_stack(tmp_path, maes_run_small):
    """The real ``maes_run`` (sim, navigator and controller nodes over DDS): the tiles go out
    through the broadcast service and come back in each robot's ``maes_state``, where TRS
    merges them. The logic is TRS itself, from a user's logic file that also says when a robot
    first merged a cell it had not mapped."""
    logic = tmp_path / "trs_logging.py"
    logic.write_text(
        "from maes_controller.algorithms import trs\n"
        "from maes_controller.algorithms._common import merged_view\n"
        "def logic(robot):\n"
        "    trs.logic(robot)\n"
        "    store = robot.memory.get('map_tiles')\n"
        "    if robot.memory.get('said') or not store or not store['heard_any']:\n"
        "        return\n"
        "    own = robot.global_costmap.grid.array\n"
        "    merged = merged_view(robot).grid.array\n"
        "    gained = int(((own < 0) & (merged >= 0)).sum())\n"
        "    if gained:\n"
        "        robot.memory['said'] = True\n"
        "        robot.logger.info(f'{robot.namespace} merged {gained} cells heard')\n"
    )
    proc = maes_run_small(tmp_path, f"{logic}:logic", ticks=300, spawn="spawn_together", size=30)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out[-3000:]
    merged = {m.group(1) for m in re.finditer(r"(robot\d+) merged (\d+) cells heard", out)}
    assert merged == {"robot0", "robot1", "robot2"}, out[-3000:]
