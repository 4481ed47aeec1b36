"""SPACE's behaviour tree (maes_controller.algorithms.space_bt): the parts MAES-ROS adds."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from maes_controller.algorithms.space_bt import STUCK_M, STUCK_TICKS, TRIED_TICKS, _stuck


def robot_at(x: float, y: float, tick: int) -> SimpleNamespace:
    return SimpleNamespace(robot_position=(x, y), tick=tick)


def test_a_robot_that_stays_near_one_place_while_driving_to_a_task_is_stuck():
    bb: dict = {}
    assert not _stuck(bb, robot_at(0.0, 0.0, 100), task=7)
    # jostled about within STUCK_M (a jammed robot, its goal cell flipping) is no progress
    for k in range(1, STUCK_TICKS):
        wobble = 0.9 * STUCK_M * (k % 2)
        assert not _stuck(bb, robot_at(wobble, 0.0, 100 + k), task=7)
    assert _stuck(bb, robot_at(0.0, 0.0, 100 + STUCK_TICKS), task=7)


def test_getting_away_or_another_task_starts_the_count_again():
    bb: dict = {}
    _stuck(bb, robot_at(0.0, 0.0, 0), task=7)
    assert not _stuck(bb, robot_at(STUCK_M + 0.1, 0.0, STUCK_TICKS - 1), task=7)  # moved on
    assert not _stuck(bb, robot_at(STUCK_M + 0.1, 0.0, 2 * STUCK_TICKS - 2), task=7)
    assert _stuck(bb, robot_at(STUCK_M + 0.1, 0.0, 2 * STUCK_TICKS - 1), task=7)
    assert not _stuck(bb, robot_at(STUCK_M + 0.1, 0.0, 2 * STUCK_TICKS), task=8)  # a new task
    assert not _stuck(bb, robot_at(0.0, 0.0, 10 * STUCK_TICKS), task=8)  # moved: 2.1 m


def test_no_position_yet_is_not_stuck():
    bb: dict = {}
    assert not _stuck(bb, SimpleNamespace(robot_position=None, tick=5), task=1)
    assert bb == {}


def test_a_robot_with_nothing_left_heads_into_the_nearest_open_area_it_heard_of():
    """The robot's map knows the west only (free), the rest is unknown: it is sent into the
    nearest heard-of area, to its cell nearest the centre that the costmap does not block."""
    from maes_controller.algorithms._common import MapView, area_labels
    from maes_controller.algorithms.space_bt import _towards
    from maes_controller.navigation import GridMap

    costs = np.full((20, 30), -1, dtype=np.int8)  # 1 m cells, origin (0, 0): unknown
    costs[:, :8] = 0  # the part it explored
    view = MapView(GridMap.from_array(costs, 1.0), (2.5, 2.5))
    labels = area_labels(view, 5.0)
    near, far = int(labels[2, 12]), int(labels[17, 27])  # centres (12.5, 2.5), (27.5, 17.5)
    tried: dict = {}
    assert _towards(view, [far, near], tried, now=0) == (near, (12, 2))
    costs[:, 12] = 100  # a wall through its centre: the nearest open cell beside it
    view = MapView(GridMap.from_array(costs, 1.0), (2.5, 2.5))
    assert _towards(view, [far, near], tried, now=0) == (near, (11, 2))
    costs[:, 10:15] = 100  # all of it blocked: the next area, and this one is left alone
    view = MapView(GridMap.from_array(costs, 1.0), (2.5, 2.5))
    assert _towards(view, [far, near], tried, now=5) == (far, (27, 17))
    assert tried == {near: 5}
    assert _towards(view, [near], tried, now=5 + TRIED_TICKS - 1) is None
    costs[:, 10:15] = 0
    view = MapView(GridMap.from_array(costs, 1.0), (2.5, 2.5))
    assert _towards(view, [near], tried, now=5 + TRIED_TICKS) == (near, (12, 2))


def test_cbba_sends_a_robot_with_nothing_left_to_the_areas_it_heard_of():
    """Open areas other robots bid on, not in this robot's map, come before areas another
    robot finished; an area heard finished is no longer open."""
    from maes_controller.algorithms.allocation import CbbaState
    from maes_controller.algorithms.space_bt import Task
    from maes_controller.algorithms.space_cbba import CbbaPlugin, encode

    mine = Task((1, 0), 10, 1.0, (1.0, 0.0))
    robot = CbbaPlugin(0)
    robot.receive(1, encode(CbbaState(y={5: 3.0, 9: 2.0}, z={5: 1, 9: 1}, done={2})), now=1)
    assert robot.decide({2: mine}, now=1) is None  # its one area is finished
    assert robot.elsewhere == [5, 9]
    assert robot.decide({5: mine}, now=2) == 5 and robot.elsewhere == []  # in its map now
    robot.receive(1, encode(CbbaState(done={2, 5, 9})), now=3)
    assert robot.decide({2: mine}, now=3) == 2  # nothing open heard of: the finished one
    assert robot.elsewhere == []
