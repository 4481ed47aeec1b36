"""SPACE's behaviour tree (maes_controller.algorithms.space_bt): the parts MAES-ROS adds."""

from __future__ import annotations

from types import SimpleNamespace

from maes_controller.algorithms.space_bt import STUCK_M, STUCK_TICKS, _stuck


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
