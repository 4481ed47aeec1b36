"""Rotate-xor-move path following, checked in a small kinematic simulation (no ROS)."""

from __future__ import annotations

import doctest
import math
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_controller.navigation import following
from maes_controller.navigation.costmap import GridMap
from maes_controller.navigation.following import (
    FollowParams,
    FollowState,
    FollowStatus,
    follow_path,
    wrap_angle,
)
from maes_controller.navigation.planning import astar, prune_path

PARAMS = FollowParams(max_linear_speed=1.0, max_angular_speed=1.5)


def simulate(pose, waypoints, params=PARAMS, dt=0.1, max_time=120.0, moves=True):
    """Integrate the unicycle under follow_path's commands until it reports it is finished.

    Returns (final command, (T, 3) trajectory of poses, finish time). Every command is checked
    against the rotate-xor-move model and the speed limits.
    """
    x, y, yaw = pose
    state = None
    t = 0.0
    trajectory = [(x, y, yaw)]
    while t < max_time:
        cmd = follow_path((x, y, yaw), waypoints, params, state, time=t)
        assert cmd.linear == 0.0 or cmd.angular == 0.0, "rotated and moved at once"
        assert 0.0 <= cmd.linear <= params.max_linear_speed
        assert abs(cmd.angular) <= params.max_angular_speed
        if cmd.status.finished:
            assert cmd.linear == cmd.angular == 0.0
            return cmd, np.array(trajectory), t
        assert (cmd.status is FollowStatus.DRIVING) == (cmd.linear > 0.0)
        if moves:
            x += cmd.linear * math.cos(yaw) * dt
            y += cmd.linear * math.sin(yaw) * dt
        yaw = wrap_angle(yaw + cmd.angular * dt)
        t += dt
        state = cmd.state
        trajectory.append((x, y, yaw))
    raise AssertionError(f"not finished after {max_time} s, at {(x, y, yaw)}")


def distance_to_polyline(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Distance of each point (K, 2) to a polyline (M, 2)."""
    best = np.full(len(points), np.inf)
    for a, b in pairwise(polyline):
        d = b - a
        s = np.clip(((points - a) @ d) / max(d @ d, 1e-12), 0.0, 1.0)
        best = np.minimum(best, np.hypot(*(points - (a + s[:, None] * d)).T))
    return best


def test_drives_straight_to_a_goal_ahead():
    cmd, traj, t = simulate((0.0, 0.0, 0.0), [(5.0, 0.0)])
    assert cmd.status is FollowStatus.SUCCEEDED
    assert math.hypot(traj[-1, 0] - 5.0, traj[-1, 1]) <= PARAMS.goal_tolerance
    assert np.allclose(traj[:, 1], 0.0) and np.allclose(traj[:, 2], 0.0)  # never turned
    assert 5.0 <= t <= 8.0  # 5 m at 1 m/s, plus the slow final approach


def test_rotates_in_place_before_driving_to_a_goal_behind():
    first = follow_path((0.0, 0.0, 0.0), [(-3.0, 0.1)], PARAMS)
    assert first.status is FollowStatus.ROTATING and first.linear == 0.0
    assert first.angular == PARAMS.max_angular_speed  # capped, turning the short way (left)
    cmd, traj, _ = simulate((0.0, 0.0, 0.0), [(-3.0, 0.1)])
    assert cmd.status is FollowStatus.SUCCEEDED
    moved = np.hypot(*np.diff(traj[:, :2], axis=0).T) > 0
    first_move = int(np.argmax(moved))
    assert np.allclose(traj[: first_move + 1, :2], 0.0)  # no motion while turning
    heading_error = abs(wrap_angle(traj[first_move, 2] - math.atan2(0.1, -3.0)))
    assert heading_error <= PARAMS.heading_tolerance


def test_follows_an_l_shaped_path_closely():
    path = np.array([(4.0, 0.0), (4.0, 3.0), (1.0, 3.0)])
    cmd, traj, _ = simulate((0.0, 0.0, 0.3), path)
    assert cmd.status is FollowStatus.SUCCEEDED
    polyline = np.vstack([[0.0, 0.0], path])
    # off the polyline by at most the corner cut (waypoint tolerance) plus the sideways slack
    bound = PARAMS.waypoint_tolerance + 1.5 * PARAMS.lateral_tolerance
    assert distance_to_polyline(traj[:, :2], polyline).max() <= bound
    assert np.hypot(*(traj[-1, :2] - path[-1])) <= PARAMS.goal_tolerance


def test_small_heading_errors_are_corrected_before_a_long_drive():
    # 0.05 rad off over 20 m would miss by 1 m: the robot turns first, then stays on the line.
    first = follow_path((0.0, 0.0, 0.05), [(20.0, 0.0)], PARAMS)
    assert first.status is FollowStatus.ROTATING and first.angular < 0
    near = follow_path((19.0, 0.0, 0.05), [(20.0, 0.0)], PARAMS)
    assert near.status is FollowStatus.DRIVING  # 1 m away the same error misses by 5 cm
    cmd, traj, _ = simulate((0.0, 0.0, 0.05), [(20.0, 0.0)])
    assert cmd.status is FollowStatus.SUCCEEDED
    assert np.abs(traj[:, 1]).max() <= 1.5 * PARAMS.lateral_tolerance


def test_slows_down_near_the_final_goal():
    speeds = []
    state = None
    for x in (0.0, 2.0, 4.5, 4.7):
        cmd = follow_path((x, 0.0, 0.0), [(5.0, 0.0)], PARAMS, state)
        speeds.append(cmd.linear)
        state = cmd.state
    assert speeds[0] == speeds[1] == PARAMS.max_linear_speed
    assert speeds[1] > speeds[2] > speeds[3] >= PARAMS.min_speed_fraction


def test_does_not_slow_at_intermediate_waypoints():
    cmd = follow_path((3.9, 0.0, 0.0), [(4.0, 0.0), (4.0, 3.0)], PARAMS, FollowState(target=0))
    assert cmd.state.target == 1  # within waypoint tolerance: already heading for the next one
    cmd = follow_path((3.5, 0.0, 0.0), [(4.0, 0.0), (4.0, 3.0)], PARAMS)
    assert cmd.status is FollowStatus.DRIVING and cmd.linear == PARAMS.max_linear_speed
    assert cmd.remaining == pytest.approx(3.5)


def test_coarse_control_steps_still_converge():
    # 0.8 m per step is more than twice the waypoint tolerance: from x = 2.4 the robot jumps to
    # 3.2, 0.4 m past the first waypoint; it must carry on rather than turn back (and repeat).
    path = [(2.8, 0.0), (2.8, 4.4), (-2.0, 4.4)]
    params = FollowParams(max_linear_speed=1.6, max_angular_speed=2.0, angular_gain=1.5)
    cmd, traj, _ = simulate((0.0, 0.0, 0.0), path, params, dt=0.5)
    assert cmd.status is FollowStatus.SUCCEEDED
    polyline = np.vstack([[0.0, 0.0], path])
    assert distance_to_polyline(traj[:, :2], polyline).max() < 0.5


def test_reports_blocked_when_no_progress():
    params = FollowParams(max_linear_speed=1.0, max_angular_speed=1.5, blocked_timeout=3.0)
    cmd, traj, t = simulate((0.0, 0.0, 0.0), [(5.0, 0.0)], params, moves=False)
    assert cmd.status is FollowStatus.BLOCKED
    assert 3.0 < t <= 3.0 + 0.1 + 1e-9  # right after the timeout, not before
    # a robot that must turn first is not blocked while the turn makes progress
    cmd, traj, t = simulate((0.0, 0.0, 0.0), [(-5.0, 0.0)], params, moves=False)
    assert cmd.status is FollowStatus.BLOCKED
    assert t > 3.0 + math.pi / params.max_angular_speed - 0.5


def test_finished_state_stays_finished():
    cmd = follow_path((1.0, 1.0, 0.0), [(1.05, 1.0)], PARAMS)
    assert cmd.status is FollowStatus.SUCCEEDED and cmd.remaining == pytest.approx(0.05)
    again = follow_path((1.0, 1.0, 0.0), [(1.05, 1.0)], PARAMS, cmd.state, time=10.0)
    assert again.status is FollowStatus.SUCCEEDED


@settings(max_examples=40, deadline=None)
@given(
    start=st.tuples(st.floats(-5, 5), st.floats(-5, 5), st.floats(-math.pi, math.pi)),
    points=st.lists(st.tuples(st.floats(-8, 8), st.floats(-8, 8)), min_size=1, max_size=5),
    dt=st.sampled_from([0.05, 0.1, 0.25]),
)
def test_always_reaches_the_goal(start, points, dt):
    cmd, traj, _ = simulate(start, points, PARAMS, dt=dt, max_time=200.0)
    assert cmd.status is FollowStatus.SUCCEEDED
    assert np.hypot(*(traj[-1, :2] - np.array(points[-1]))) <= PARAMS.goal_tolerance


def test_follows_a_planned_path_without_entering_walls():
    # The navigator's pipeline: plan on cells, prune, convert to world, follow.
    rows = [
        "##########",
        "#........#",
        "#.######.#",
        "#.#....#.#",
        "#.#.##.#.#",
        "#...#..#.#",
        "##########",
    ]
    walls = np.array([[ch == "#" for ch in row] for row in reversed(rows)])
    grid = GridMap.from_array(np.where(walls, 100, 0).astype(np.int8), 1.0, -5.0, -3.5)
    free = grid.free_mask()
    start, goal = (1, 1), (6, 1)
    cells = prune_path(astar(free, start, goal), free, clearance=0.3)
    waypoints = [grid.cell_to_pos(*c) for c in cells[1:]]
    cmd, traj, _ = simulate((*grid.cell_to_pos(*start), 0.0), waypoints)
    assert cmd.status is FollowStatus.SUCCEEDED
    # robot disc of radius 0.3 never overlaps a wall cell
    for x, y, _ in traj:
        ix, iy = grid.pos_to_cell(x, y)
        for cx in range(ix - 1, ix + 2):
            for cy in range(iy - 1, iy + 2):
                if walls[cy, cx]:
                    lo_x, lo_y = grid.cell_to_pos(cx, cy)
                    gap_x = max(lo_x - 0.5 - x, x - (lo_x + 0.5), 0.0)
                    gap_y = max(lo_y - 0.5 - y, y - (lo_y + 0.5), 0.0)
                    assert math.hypot(gap_x, gap_y) >= 0.3, (x, y, cx, cy)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_linear_speed", 0.0),
        ("max_angular_speed", -1.0),
        ("goal_tolerance", math.inf),
        ("heading_tolerance", 2.0),
        ("min_speed_fraction", 0.0),
        ("lateral_tolerance", 0.1),
        ("blocked_timeout", math.nan),
    ],
)
def test_bad_params_name_the_field(field, value):
    kwargs = {"max_linear_speed": 1.0, "max_angular_speed": 1.0, field: value}
    with pytest.raises(ValueError, match=f"FollowParams.{field} must"):
        FollowParams(**kwargs)


def test_bad_inputs():
    with pytest.raises(ValueError, match="waypoints must be a non-empty"):
        follow_path((0.0, 0.0, 0.0), [], PARAMS)
    with pytest.raises(ValueError, match=r"pose must be \(x, y, yaw\)"):
        follow_path((0.0, 0.0), [(1.0, 1.0)], PARAMS)
    with pytest.raises(ValueError, match="pose must be finite"):
        follow_path((math.nan, 0.0, 0.0), [(1.0, 1.0)], PARAMS)
    with pytest.raises(ValueError, match="state.target 3 does not index the 1 waypoints"):
        follow_path((0.0, 0.0, 0.0), [(1.0, 1.0)], PARAMS, FollowState(target=3))


def test_wrap_angle():
    assert wrap_angle(math.pi) == -math.pi
    assert wrap_angle(-math.pi) == -math.pi
    assert wrap_angle(2 * math.pi + 0.5) == pytest.approx(0.5)
    assert wrap_angle(-0.25) == -0.25


@pytest.mark.parametrize("module", [following])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(-1e4, 1e4, allow_nan=False), st.floats(-1e4, 1e4, allow_nan=False)),
        min_size=0,
        max_size=300,
    )
)
def test_path_tails_are_each_tails_own_sum_to_the_bit(points):
    # path_tails sums each tail's segments from one array of segment lengths; the follower
    # without tails sums the tail's own (np.diff) segments: the same numbers, bit for bit
    wps = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    assert following.path_tails(wps) == [following._tail_length(wps, t) for t in range(len(wps))]
