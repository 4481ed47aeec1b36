"""Motion model: speed response, finite commands, rotate-xor-move, velocity mapping, odometry."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from maes_sim.core import collision, commands, motion, odometry
from maes_sim.core import commands as C
from maes_sim.core.motion import (
    MotionParams,
    MotionState,
    advance_tick,
    map_velocity,
    robot_status,
)

OPEN = np.zeros((20, 80), dtype=bool)  # open field; the map edge is the only wall


def run(state, cmds, params, ticks, walls=OPEN):
    """Advance ``ticks`` logic ticks; return the final state, commands and every TickResult."""
    results = []
    for _ in range(ticks):
        res = advance_tick(state, cmds, walls, params)
        state, cmds = res.state, res.commands
        results.append(res)
    return state, cmds, results


def one_robot(x=5.5, y=10.5, heading=0.0):
    return MotionState.at_rest(np.array([[x, y]]), np.array([heading])), C.Commands.idle(1)


@pytest.mark.parametrize("rms", [0.5, 1.0, 2.0])
def test_top_speed_after_a_long_move(rms):
    params = MotionParams.from_values(relative_move_speed=rms)
    state, cmds = one_robot(x=3.0)
    C.move_continuous(cmds, 0)
    state, _, res = run(state, cmds, params, 40)
    top = 3.0 * rms
    assert abs(state.linear[0] - top) <= 0.01 * top
    # The position agrees: the last tick covered top speed x 0.1 s (within 1 %).
    assert abs(res[-1].distance[0] - 0.1 * top) <= 0.01 * 0.1 * top
    assert not res[-1].colliding[0]


@pytest.mark.parametrize("rms", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("physics_ticks", [5, 10, 20])
def test_half_top_speed_after_four_ticks(rms, physics_ticks):
    params = MotionParams.from_values(
        relative_move_speed=rms, physics_ticks_per_logic_update=physics_ticks
    )
    state, cmds = one_robot(x=3.0)
    C.move_continuous(cmds, 0)
    state3, _, _ = run(state, cmds, params, 3)
    state4, _, _ = run(state, cmds, params, 4)
    half = 1.5 * rms
    assert abs(state4.linear[0] - half) <= 0.02 * half
    assert state3.linear[0] < 0.9 * half  # still rising: the 4-tick figure is not a plateau


def test_rotation_reaches_top_angular_speed_and_half_after_four_ticks():
    params = MotionParams.from_values()
    state, cmds = one_robot()
    C.rotate_continuous(cmds, 0, counter_clockwise=False)
    s4, _, _ = run(state, cmds, params, 4)
    s40, _, _ = run(state, cmds, params, 40)
    assert s4.angular[0] == pytest.approx(-math.pi / 2, rel=0.02)
    assert s40.angular[0] == pytest.approx(-math.pi, rel=0.01)


@pytest.mark.parametrize("distance", [0.05, 0.5, 1.0, 2.5, 7.3, -1.0, -4.0])
def test_move_distance_stops_at_target(distance):
    params = MotionParams.from_values()
    state, cmds = one_robot(x=20.0, heading=0.3)
    C.move(cmds, 0, distance)
    state, cmds, res = run(state, cmds, params, 60)
    moved = state.positions[0] - np.array([20.0, 10.5])
    assert np.hypot(*(moved - distance * np.array([math.cos(0.3), math.sin(0.3)]))) < 1e-3
    assert state.linear[0] == 0.0 and state.headings[0] == pytest.approx(0.3)
    assert sum(r.completed[0] for r in res) == 1
    statuses = [str(C.Status(r.status[0])) for r in res]
    done = statuses.index("idle")
    assert set(statuses[done:]) == {"idle"} and cmds.kind[0] == C.NONE
    if abs(distance) >= 0.5:  # long enough to be seen driving, then braking, then idle
        assert statuses[0] == "moving" and "stopping" in statuses[:done]


@pytest.mark.parametrize("distance", [1.0, 4.0])
def test_move_never_overshoots(distance):
    params = MotionParams.from_values()
    state, cmds = one_robot(x=20.0)
    C.move(cmds, 0, distance)
    _, _, res = run(state, cmds, params, 40)
    xs = np.cumsum([r.odom_delta[0, 0] for r in res])
    assert xs.max() <= distance + 1e-9


@pytest.mark.parametrize("angle", [0.02, 0.5, math.pi / 2, -math.pi, 2.5, -7.0])
def test_rotate_angle_stops_at_target(angle):
    params = MotionParams.from_values()
    state, cmds = one_robot(heading=1.0)
    C.rotate(cmds, 0, angle)
    state, _, res = run(state, cmds, params, 60)
    turned = sum(r.odom_delta[0, 2] for r in res)
    assert turned == pytest.approx(angle, abs=1e-3)
    err = (state.headings[0] - (1.0 + angle) + math.pi) % (2 * math.pi) - math.pi
    assert abs(err) < 1e-3
    assert state.angular[0] == 0.0
    assert sum(r.completed[0] for r in res) == 1


def test_maes_rotate_xor_move():
    # One physics step per "tick" so that every single step can be checked.
    params = MotionParams.from_values(
        model="maes", logic_ticks_delta_millis=10, physics_ticks_per_logic_update=1
    )
    state, cmds = one_robot(x=10.0)
    C.move_continuous(cmds, 0)
    state, cmds, res_move = run(state, cmds, params, 80)
    C.rotate_continuous(cmds, 0)  # while still driving at speed
    state, cmds, res_rot = run(state, cmds, params, 100)
    C.set_velocity(cmds, 0, 2.0, 0.5)  # both asked: linear has the larger share, it wins
    state, cmds, res_vel = run(state, cmds, params, 300)
    seen = {"move": 0, "turn": 0}
    for r in res_move + res_rot + res_vel:
        moved = r.distance[0] > 0.0
        turned = r.odom_delta[0, 2] != 0.0
        assert not (moved and turned), "a MAES robot moved and turned in the same tick"
        seen["move"] += moved
        seen["turn"] += turned
    assert seen["move"] > 80 and seen["turn"] > 30
    # While moving the heading is fixed; while rotating the position is fixed.
    assert all(r.odom_delta[0, 2] == 0.0 for r in res_move)
    assert res_rot[-1].distance[0] == 0.0 and res_rot[-1].state.angular[0] > 0.0
    assert res_vel[-1].state.angular[0] == 0.0
    assert res_vel[-1].state.linear[0] == pytest.approx(2.0, rel=0.05)


def test_rotate_waits_for_linear_speed_to_brake_first():
    params = MotionParams.from_values()
    state, cmds = one_robot(x=10.0)
    C.move_continuous(cmds, 0)
    state, cmds, _ = run(state, cmds, params, 10)
    C.rotate(cmds, 0, 1.0)
    assert str(C.Status(robot_status(state, cmds, params)[0])) == "rotating"
    state, cmds, res = run(state, cmds, params, 30)
    assert res[0].state.angular[0] == 0.0 and res[0].distance[0] > 0.0  # braking, not turning
    assert sum(r.odom_delta[0, 2] for r in res) == pytest.approx(1.0, abs=1e-3)


def test_velocity_mapping_rules():
    maes = MotionParams.from_values(relative_move_speed=1.0)
    lin, ang = map_velocity([1.5, 0.3, 10.0, -1.5, 0.0], [0.5, 2.0, 0.0, -math.pi / 2, 0.0], maes)
    assert lin.tolist() == [1.5, 0.0, 3.0, 0.0, 0.0]  # tie (-1.5/3 vs pi/2/pi) turns
    assert ang.tolist() == [0.0, 2.0, 0.0, -math.pi / 2, 0.0]
    dd = MotionParams.from_values(model="differential_drive")
    lin, ang = map_velocity([1.5, -9.0], [0.5, 9.0], dd)
    assert lin.tolist() == [1.5, -3.0] and ang.tolist() == [0.5, math.pi]


def test_velocity_command_reaches_clamped_speed():
    params = MotionParams.from_values()
    state, cmds = one_robot(x=10.0)
    C.set_velocity(cmds, 0, 50.0, 0.0)
    state, cmds, _ = run(state, cmds, params, 40)
    assert state.linear[0] == pytest.approx(3.0, rel=0.01)
    C.set_velocity(cmds, 0, 1.0, 0.0)  # slowing down brakes quickly onto the lower speed
    state, cmds, _ = run(state, cmds, params, 5)
    assert state.linear[0] == pytest.approx(1.0, abs=1e-9)
    C.set_velocity(cmds, 0, 0.0, 0.0)
    state, cmds, res = run(state, cmds, params, 5)
    assert state.linear[0] == 0.0 and str(C.Status(res[-1].status[0])) == "idle"


def test_reverse_moves_backwards():
    params = MotionParams.from_values()
    state, cmds = one_robot(x=30.0, heading=math.pi / 2)
    C.move_continuous(cmds, 0, reverse=True)
    s2, _, _ = run(state, cmds, params, 10)
    assert s2.linear[0] < 0.0 and s2.headings[0] == pytest.approx(math.pi / 2)
    assert s2.positions[0, 1] < 10.5 and s2.positions[0, 0] == pytest.approx(30.0)
    C.move_continuous(cmds, 0, reverse=False)  # reversing direction brakes through zero
    s3, _, _ = run(s2, cmds, params, 30)
    assert s3.linear[0] > 2.5


def test_stop_brakes_to_idle_quickly():
    params = MotionParams.from_values()
    state, cmds = one_robot(x=10.0)
    C.move_continuous(cmds, 0)
    state, cmds, _ = run(state, cmds, params, 40)
    x0 = state.positions[0, 0]
    C.stop(cmds, 0)
    assert str(C.Status(robot_status(state, cmds, params)[0])) == "stopping"
    state, cmds, res = run(state, cmds, params, 5)
    assert state.linear[0] == 0.0 and str(C.Status(res[-1].status[0])) == "idle"
    # Coasting distance v * tau (0.165 tiles at 3 tiles/s), discretised.
    assert 0.1 < state.positions[0, 0] - x0 < 0.2


def test_differential_drive_follows_arcs():
    params = MotionParams.from_values(model="differential_drive")
    state, cmds = one_robot(x=40.0, y=10.0)
    C.set_velocity(cmds, 0, 1.0, 0.5)  # radius v / w = 2 tiles
    state, cmds, _ = run(state, cmds, params, 60)  # reach steady state
    centres = []
    for _ in range(20):
        state, cmds, _ = run(state, cmds, params, 1)
        (x, y), th = state.positions[0], state.headings[0]
        centres.append((x - 2.0 * math.sin(th), y + 2.0 * math.cos(th)))
    centres = np.array(centres)
    assert np.ptp(centres, axis=0).max() < 0.02  # a circle of radius 2 (midpoint integration)
    assert state.linear[0] == pytest.approx(1.0) and state.angular[0] == pytest.approx(0.5)


def test_differential_drive_move_and_rotate_commands_still_land():
    params = MotionParams.from_values(model="differential_drive")
    state, cmds = one_robot(x=20.0)
    C.move(cmds, 0, 3.0)
    state, cmds, _ = run(state, cmds, params, 30)
    assert state.positions[0, 0] == pytest.approx(23.0, abs=1e-3)
    C.rotate(cmds, 0, -1.0)
    state, cmds, _ = run(state, cmds, params, 30)
    assert state.headings[0] == pytest.approx(-1.0, abs=1e-3)


def random_scenario(seed):
    rng = np.random.default_rng(seed)
    walls = rng.random((30, 30)) < 0.15
    iy, ix = np.nonzero(~walls)
    pick = rng.choice(len(ix), 40, replace=False)
    state = MotionState.at_rest(
        np.stack([ix[pick] + 0.5, iy[pick] + 0.5], 1), rng.uniform(-3, 3, 40)
    )
    cmds = C.Commands.idle(40)
    C.move_continuous(cmds, np.arange(0, 40, 4))
    C.move(cmds, np.arange(1, 40, 4), rng.uniform(-3, 3, 10))
    C.rotate(cmds, np.arange(2, 40, 4), rng.uniform(-3, 3, 10))
    C.set_velocity(cmds, np.arange(3, 40, 4), rng.uniform(-3, 3, 10), rng.uniform(-3, 3, 10))
    return walls, state, cmds


@pytest.mark.parametrize("model", ["maes", "differential_drive"])
def test_same_inputs_give_bit_identical_results(model):
    params = MotionParams.from_values(model=model)
    outs = []
    for _ in range(2):
        walls, state, cmds = random_scenario(3)
        state, cmds, res = run(state, cmds, params, 30, walls)
        outs.append((state, cmds, res))
    (s1, c1, r1), (s2, c2, r2) = outs
    for name in ("positions", "headings", "linear", "angular"):
        assert np.array_equal(getattr(s1, name), getattr(s2, name))
    for a, b in zip(r1, r2, strict=True):
        for name in ("distance", "odom_delta", "colliding", "collided", "completed", "status"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
    assert any(r.collided.any() for r in r1)  # the scenario does exercise collisions


def test_advance_tick_does_not_modify_its_inputs():
    params = MotionParams.from_values()
    walls, state, cmds = random_scenario(4)
    before = (state.positions.copy(), state.linear.copy(), cmds.copy())
    advance_tick(state, cmds, walls, params)
    assert np.array_equal(state.positions, before[0]) and np.array_equal(state.linear, before[1])
    for f in ("kind", "target", "progress", "stopping"):
        assert np.array_equal(getattr(cmds, f), getattr(before[2], f))


def test_substeps_scale_with_speed_and_bad_params_raise():
    fast = MotionParams.from_values(
        relative_move_speed=20.0,
        agent_relative_size=0.2,
        logic_ticks_delta_millis=1000,
        physics_ticks_per_logic_update=1,
    )
    # 60 tiles/s x 1 s per step, at most 0.025 tiles per sub-step.
    assert fast.substeps == 2400
    assert MotionParams.from_values().substeps == 1
    assert MotionParams.from_values(substeps=4).substeps == 4
    with pytest.raises(ValueError, match="model"):
        MotionParams.from_values(model="holonomic")
    with pytest.raises(ValueError, match="relative_move_speed"):
        MotionParams.from_values(relative_move_speed=float("nan"))
    with pytest.raises(ValueError, match="physics_ticks_per_logic_update"):
        MotionParams.from_values(physics_ticks_per_logic_update=0)
    with pytest.raises(ValueError, match="positions"):
        MotionState.at_rest(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="non-finite"):
        MotionState.at_rest(np.array([[1.0, np.inf]]))


@pytest.mark.parametrize("module", [motion, collision, commands, odometry])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_zero_robots_is_a_valid_fleet():
    res = advance_tick(
        MotionState.at_rest(np.zeros((0, 2))), C.Commands.idle(0), OPEN, MotionParams.from_values()
    )
    assert res.state.positions.shape == (0, 2) and res.odom_delta.shape == (0, 3)
    assert res.status.shape == res.colliding.shape == (0,)
