"""The rules of ``robot.set_velocity`` (``maes_controller.velocity``), pure: one sender a tick.

The ROS and direct-mode robots both apply them; that they then agree is tested end to end in
``src/maes_bringup/test/test_reactive_api.py``.
"""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from maes_controller import velocity
from maes_controller.velocity import VelocityCommand, velocity_problem


@pytest.mark.parametrize(
    "bad",
    [
        (math.nan, 0.0),
        (0.0, math.inf),
        ("1", 0.0),
        (None, 0.0),
        (True, 0.0),
        (1j, 0.0),
        (10**400, 0.0),
        (1000.5, 0.0),
        (0.0, -1001),
    ],
)
def test_bad_commands_are_named(bad):
    problem = velocity_problem(*bad)
    assert problem is not None and problem.startswith("velocity (")


@pytest.mark.parametrize(
    "good", [(0, 0), (0.5, -1.0), (np.float32(1.0), np.int64(2)), (-1000, 1000)]
)
def test_good_commands_pass(good):
    assert velocity_problem(*good) is None


def test_a_command_is_sent_every_tick_until_a_goal_ends_it():
    v = VelocityCommand()
    assert v.to_send(0) is None and not v.active
    v.set(0.4, 0.0, tick=3, goal_in_progress=False)
    assert [v.to_send(t) for t in (3, 4, 5)] == [(0.4, 0.0, 0.0)] * 3
    v.set(0.1, 0.2, tick=6, goal_in_progress=False)  # changed: from this tick
    assert v.to_send(6) == (0.1, 0.2, 0.0)
    v.goal_sent(refused=False)  # the navigator drives from this tick: nothing from us
    assert v.to_send(7) is None and v.to_send(8) is None and not v.active


def test_cancelling_a_goal_delays_the_command_one_tick():
    v = VelocityCommand()
    v.set(0.3, 0.0, tick=10, goal_in_progress=True)
    assert v.to_send(10) is None  # the navigator's stop is this tick's only command
    assert v.to_send(11) == (0.3, 0.0, 0.0)
    # set again in the same tick: still from the next tick
    w = VelocityCommand()
    w.set(0.3, 0.0, tick=10, goal_in_progress=True)
    w.set(0.5, 0.0, tick=10, goal_in_progress=False)
    assert w.to_send(10) is None and w.to_send(11) == (0.5, 0.0, 0.0)


def test_a_refused_goal_stops_a_driving_robot_once():
    v = VelocityCommand()
    v.set(0.3, 0.0, tick=1, goal_in_progress=False)
    v.goal_sent(refused=True)
    assert v.to_send(2) == (0.0, 0.0, 0.0) and v.to_send(3) is None
    idle = VelocityCommand()
    idle.goal_sent(refused=True)  # not driving: nothing to stop
    assert idle.to_send(2) is None


def test_doctests():
    assert doctest.testmod(velocity).failed == 0


def test_a_sideways_part_is_kept_checked_and_noted_for_models_that_drop_it():
    v = VelocityCommand()
    v.set(0.2, 0.1, tick=0, goal_in_progress=False, lateral=-0.3)
    assert v.to_send(0) == (0.2, 0.1, -0.3)
    for bad in (math.nan, math.inf, "1", True, 1000.5, 10**400):
        problem = velocity_problem(0.0, 0.0, bad)
        assert problem is not None and problem.startswith("lateral velocity"), bad
    assert velocity_problem(0.0, 0.0, np.float32(0.5)) is None
    assert velocity.MotionNote("omnidirectional").check(0.2, 0.0, 0.3) is None
    note = velocity.MotionNote("differential_drive").check(0.2, 0.0, 0.3)
    assert note is not None and "sideways part 0.3 m/s is dropped" in note


def test_a_models_notes_follow_its_capabilities_in_the_registry():
    """What a note says a model drops comes from maes_common.motion_models' data (simultaneous,
    lateral), not from its name: a model that cannot drive and turn at once gets the
    rotate-xor-move note, one that can does not; an unknown name is refused, naming the models."""
    from maes_common.motion_models import MODELS

    for model in MODELS.values():
        note = velocity.motion_model_note(0.4, -0.6, model.name, 3.0, math.pi)
        assert (note is None) == model.simultaneous, model.name
        if note is not None:
            assert note.startswith(f"{model.name} motion model: rotate or move, never both")
        sideways = velocity.MotionNote(model.name).check(0.0, 0.0, 0.3)
        assert (sideways is None) == model.lateral, model.name
    with pytest.raises(ValueError, match="unknown motion model 'diff'; known: maes, differential"):
        velocity.MotionNote("diff")
