"""Command struct: setting commands, rejecting bad ones atomically, status names."""

from __future__ import annotations

import math

import numpy as np
import pytest

from maes_sim.core import commands as C
from maes_sim.core.motion import MotionParams, MotionState, advance_tick, robot_status


def snapshot(cmds):
    return {
        f: getattr(cmds, f).copy()
        for f in ("kind", "target", "progress", "linear", "angular", "stopping")
    }


def assert_same(cmds, snap):
    for f, arr in snap.items():
        assert np.array_equal(getattr(cmds, f), arr), f


def test_commands_set_kind_and_target_vectorised():
    cmds = C.Commands.idle(6)
    C.move(cmds, [0, 1], [2.0, -1.0])
    C.rotate(cmds, 2, math.pi)
    C.move_continuous(cmds, 3, reverse=True)
    C.rotate_continuous(cmds, 4)
    C.set_velocity(cmds, np.array([5]), 1.0, -0.5)
    assert [C.KIND_NAMES[k] for k in cmds.kind] == [
        "move",
        "move",
        "rotate",
        "move_continuous",
        "rotate_continuous",
        "velocity",
    ]
    assert cmds.target.tolist()[:5] == [2.0, -1.0, math.pi, -1.0, 1.0]
    assert (cmds.linear[5], cmds.angular[5]) == (1.0, -0.5)
    C.stop(cmds, np.arange(6))
    assert (cmds.kind == C.NONE).all() and (cmds.target == 0.0).all()


def test_new_command_preempts_and_resets_progress():
    cmds = C.Commands.idle(1)
    C.move(cmds, 0, 5.0)
    cmds.progress[0] = 2.0
    cmds.stopping[0] = True
    C.rotate(cmds, 0, 1.0)
    assert cmds.kind[0] == C.ROTATE and cmds.progress[0] == 0.0 and not cmds.stopping[0]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 1e7, -2e6])
@pytest.mark.parametrize(
    "command", ["move", "rotate", "set_velocity_linear", "set_velocity_angular"]
)
def test_bad_values_are_rejected_and_nothing_changes(command, bad):
    cmds = C.Commands.idle(3)
    C.move(cmds, [0, 1, 2], [1.0, 2.0, 3.0])
    before = snapshot(cmds)
    # A vector where only robot 2 is bad: the whole call is rejected.
    values = np.array([0.5, 0.5, bad])
    with pytest.raises(C.CommandError, match="robot 2") as err:
        if command == "move":
            C.move(cmds, [0, 1, 2], values)
        elif command == "rotate":
            C.rotate(cmds, [0, 1, 2], values)
        elif command == "set_velocity_linear":
            C.set_velocity(cmds, [0, 1, 2], values, 0.0)
        else:
            C.set_velocity(cmds, [0, 1, 2], 0.0, values)
    assert err.value.robot == 2
    assert err.value.value == bad or (math.isnan(bad) and math.isnan(err.value.value))
    assert str(bad).lower().replace("+", "") in str(err.value).lower().replace("+", "")
    assert_same(cmds, before)


def test_rejected_command_leaves_the_motion_valid():
    params = MotionParams.from_values()
    walls = np.zeros((10, 10), dtype=bool)
    state = MotionState.at_rest(np.array([[5.0, 5.0]]))
    cmds = C.Commands.idle(1)
    C.move_continuous(cmds, 0)
    res = advance_tick(state, cmds, walls, params)
    with pytest.raises(C.CommandError):
        C.set_velocity(res.commands, 0, float("nan"), 0.0)
    res2 = advance_tick(res.state, res.commands, walls, params)
    assert np.isfinite(res2.state.positions).all() and res2.state.linear[0] > res.state.linear[0]
    assert res2.commands.kind[0] == C.MOVE_CONT  # still the last good command


@pytest.mark.parametrize("robots", [5, -1, [0, 7], 1.5, [True]])
def test_bad_robot_index_is_rejected(robots):
    cmds = C.Commands.idle(3)
    before = snapshot(cmds)
    with pytest.raises(C.CommandError, match="robot"):
        C.move(cmds, robots, 1.0)
    assert_same(cmds, before)


def test_status_names_and_initial_status():
    assert [str(s) for s in C.Status] == ["idle", "moving", "rotating", "stopping"]
    params = MotionParams.from_values()
    state = MotionState.at_rest(np.zeros((5, 2)))
    cmds = C.Commands.idle(5)
    C.move(cmds, 1, 1.0)
    C.rotate_continuous(cmds, 2)
    C.set_velocity(cmds, 3, 0.1, 1.0)  # MAES model: turning has the larger share
    C.set_velocity(cmds, 4, 0.0, 0.0)
    names = [str(C.Status(k)) for k in robot_status(state, cmds, params)]
    assert names == ["idle", "moving", "rotating", "rotating", "idle"]


def test_commands_shape_is_checked():
    with pytest.raises(ValueError, match="Commands.target"):
        C.Commands(
            np.zeros(2, np.int8),
            np.zeros(3),
            np.zeros(2),
            np.zeros(2),
            np.zeros(2),
            np.zeros(2, bool),
        )


def test_a_copy_holds_equal_arrays_of_its_own():
    cmds = C.Commands.idle(3)
    C.set_velocity(cmds, [0, 2], [0.5, -0.25], [0.1, 0.2], 0.0)
    copy = cmds.copy()
    assert type(copy) is C.Commands
    for f in C._FIELDS:
        a, b = getattr(cmds, f), getattr(copy, f)
        assert a is not b and a.dtype == b.dtype and np.array_equal(a, b)
    C.stop(copy, 0)
    assert cmds.kind[0] == C.VELOCITY and copy.kind[0] != C.VELOCITY


def test_a_plain_number_is_checked_like_an_array():
    cmds = C.Commands.idle(2)
    C.set_velocity(cmds, np.arange(2), np.zeros(2), np.zeros(2), 0.25)
    assert cmds.lateral.tolist() == [0.25, 0.25]
    for bad in (math.nan, math.inf, -2e6):
        with pytest.raises(C.CommandError, match="lateral"):
            C.set_velocity(cmds, np.arange(2), np.zeros(2), np.zeros(2), bad)
    assert cmds.lateral.tolist() == [0.25, 0.25]  # nothing changed
