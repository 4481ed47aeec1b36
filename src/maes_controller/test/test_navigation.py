"""The navigation session, driven in a small kinematic simulation on hand-made maps (no ROS)."""

from __future__ import annotations

import doctest
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from maes_controller.navigation import NavErrorCode, Navigator, NavParams, costmap_values, navigator
from maes_controller.navigation.costmap import GridMap
from maes_controller.robot_api import NavStatus
from maes_sim.core import config_from_dict

PARAMS = NavParams(
    robot_radius=0.3, max_linear_speed=1.0, max_angular_speed=2.0, inflation_radius=1.3
)
DT = 0.1


def room(width: int = 12, height: int = 8) -> np.ndarray:
    """Occupancy (H, W) of a walled room: 100 on the border, 0 inside."""
    occ = np.zeros((height, width), dtype=np.int8)
    occ[0, :] = occ[-1, :] = occ[:, 0] = occ[:, -1] = 100
    return occ


def grid_of(occ: np.ndarray) -> GridMap:
    h, w = occ.shape
    return GridMap.from_array(occ, 1.0, -w / 2.0, -h / 2.0)


def disc_hits_wall(occ: np.ndarray, x: float, y: float, r: float) -> bool:
    """Whether a disc at world (x, y) overlaps an occupied cell of a map centred at 0."""
    h, w = occ.shape
    gx, gy = x + w / 2.0, y + h / 2.0
    for iy in range(max(int(gy - r) - 1, 0), min(int(gy + r) + 2, h)):
        for ix in range(max(int(gx - r) - 1, 0), min(int(gx + r) + 2, w)):
            if occ[iy, ix] >= 65:
                nx, ny = min(max(gx, ix), ix + 1), min(max(gy, iy), iy + 1)
                if math.hypot(gx - nx, gy - ny) < r - 1e-9:
                    return True
    return False


def drive(nav, pose, grids, max_time=120.0, moves=True, on_step=None, robots=(), blocked=None):
    """Integrate a unicycle under the navigator's commands until it finishes.

    ``grids(t)`` gives the map at time t; ``robots`` other robots' positions passed to the
    navigator; ``blocked(x, y)`` refuses moves into positions (an obstacle not in the map).
    Returns (last step, (T, 3) poses, steps).
    """
    x, y, yaw = pose
    t = 0.0
    poses, steps = [(x, y, yaw)], []
    while t < max_time:
        t += DT
        step = nav.update((x, y, yaw), grids(t), t, robots)
        steps.append(step)
        if on_step is not None:
            on_step(t, step)
        if step.status is not NavStatus.ACTIVE:
            return step, np.array(poses), steps
        assert step.linear == 0.0 or step.angular == 0.0, "rotate xor move"
        if moves:
            nx = x + step.linear * math.cos(yaw) * DT
            ny = y + step.linear * math.sin(yaw) * DT
            if blocked is None or not blocked(nx, ny):
                x, y = nx, ny
            yaw += step.angular * DT
        poses.append((x, y, yaw))
    raise AssertionError(f"navigation did not finish within {max_time} s")


def test_reaches_goal_around_a_wall_without_touching_it():
    occ = room(12, 8)
    occ[1:6, 6] = 100  # a wall from the bottom, a gap at the top
    grid = grid_of(occ)
    nav = Navigator(PARAMS)
    nav.start((4.5, -2.5), now=0.0)
    step, poses, steps = drive(nav, (-4.5, -2.5, 0.0), lambda t: grid)
    assert step.status is NavStatus.SUCCEEDED and step.error_code == 0
    assert math.hypot(poses[-1, 0] - 4.5, poses[-1, 1] + 2.5) <= PARAMS.goal_tolerance
    assert not any(disc_hits_wall(occ, px, py, PARAMS.robot_radius) for px, py, _ in poses)
    # It went over the wall's end: the top of the gap.
    assert poses[:, 1].max() > 1.0
    # Feedback: the remaining distance shrinks to the goal, navigation time is sim time.
    remaining = [s.distance_remaining for s in steps]
    assert remaining[0] > 9.0 and remaining[-1] <= PARAMS.goal_tolerance
    assert steps[-1].navigation_time == pytest.approx(len(steps) * DT)
    assert steps[5].estimated_time_remaining == pytest.approx(
        steps[5].distance_remaining / PARAMS.max_linear_speed
    )
    # The published path is dense, from the robot to the goal, and avoids walls.
    path = steps[0].path
    assert steps[0].replanned and path[0] == (-4.5, -2.5) and path[-1] == (4.5, -2.5)
    assert all(math.dist(a, b) < 1.5 for a, b in zip(path, path[1:], strict=False))
    assert not any(occ[grid.pos_to_cell(px, py)[::-1]] for px, py in path)
    assert step.linear == 0.0 and step.angular == 0.0


def test_replans_when_a_new_map_blocks_the_route():
    occ = room(12, 8)
    occ[1:6, 6] = 100
    first = grid_of(occ)
    blocked = occ.copy()
    blocked[5:7, 6] = 100  # the gap at the top closes ...
    blocked[1:3, 6] = 0  # ... and one opens at the bottom
    second = grid_of(blocked)
    nav = Navigator(PARAMS)
    nav.start((4.5, -2.5), now=0.0)
    replans = []

    def record(t, step):
        if step.replanned:
            replans.append((t, step.path))

    step, poses, _ = drive(
        nav, (-4.5, -2.5, 0.0), lambda t: first if t < 1.0 else second, on_step=record
    )
    assert step.status is NavStatus.SUCCEEDED
    assert len(replans) == 2 and replans[1][0] == pytest.approx(1.0 + DT)
    assert max(p[1] for p in replans[1][1]) < 0.0  # the new plan takes the bottom gap
    assert not any(disc_hits_wall(blocked, px, py, PARAMS.robot_radius) for px, py, _ in poses[11:])


def test_a_new_map_that_keeps_the_route_clear_does_not_replan():
    occ = room(12, 8)
    nav = Navigator(PARAMS)
    nav.start((4.5, 0.5), now=0.0)
    maps = [grid_of(occ) for _ in range(3)]  # equal content, new objects
    step, _, steps = drive(nav, (-4.5, 0.5, 0.0), lambda t: maps[min(int(t), 2)])
    assert step.status is NavStatus.SUCCEEDED
    assert sum(s.replanned for s in steps) == 1


@pytest.mark.parametrize(
    "goal, code",
    [
        ((20.0, 0.0), NavErrorCode.GOAL_OUTSIDE_MAP),
        ((3.5, 1.5), NavErrorCode.NO_VALID_PATH),  # inside a walled-off box
    ],
)
def test_unreachable_goal_aborts_with_code_and_message(goal, code):
    occ = room(12, 8)
    occ[0:8, 7] = 100  # no way right of x = 1
    nav = Navigator(PARAMS)
    nav.start(goal, now=0.0)
    step = nav.update((-4.5, 0.5, 0.0), grid_of(occ), 0.1)
    assert step.status is NavStatus.ABORTED and nav.status is NavStatus.ABORTED
    assert step.error_code == code and str(goal[0]) in step.error_msg
    assert (step.linear, step.angular) == (0.0, 0.0)
    assert nav.update((-4.5, 0.5, 0.0), grid_of(occ), 0.2).status is NavStatus.ABORTED


def test_a_robot_in_the_way_is_planned_around_after_a_blockage():
    params = NavParams.from_config(
        config_from_dict(
            {
                "map": {"width_in_tiles": 12, "height_in_tiles": 10},
                "robot_constraints": {"agent_relative_size": 0.6, "relative_move_speed": 0.5},
            }
        ),
        goal_timeout=10 * (12 + 8) / 1.5,  # the 12 x 8 room's (a config's map is >= 10 tiles)
        plan_around_robots=False,  # the first plan ignores the robots: see the next test
    )
    other = (0.0, 0.5)  # standing in the middle of the straight line, invisible in the map

    def touches(x, y):
        return math.dist((x, y), other) < 2 * params.robot_radius

    nav = Navigator(params)
    nav.start((4.5, 0.5), now=0.0)
    step, poses, steps = drive(
        nav, (-4.5, 0.5, 0.0), lambda t: grid_of(room()), robots=[other], blocked=touches
    )
    assert step.status is NavStatus.SUCCEEDED
    assert step.number_of_recoveries >= 1
    assert steps[0].path[1][1] == pytest.approx(0.5)  # the first plan went straight through
    assert max(abs(py - 0.5) for _, py, _ in poses) > 0.5  # the detour
    # Without the other robot's position, the blockage is never resolved.
    nav = Navigator(params)
    nav.start((4.5, 0.5), now=0.0)
    step, _, _ = drive(nav, (-4.5, 0.5, 0.0), lambda t: grid_of(room()), blocked=touches)
    assert step.error_code == NavErrorCode.FAILED_TO_MAKE_PROGRESS


def test_the_first_plan_goes_around_a_robot_in_the_way_when_the_detour_is_short():
    params = NavParams.from_config(
        config_from_dict(
            {
                "map": {"width_in_tiles": 12, "height_in_tiles": 10},
                "robot_constraints": {"agent_relative_size": 0.6, "relative_move_speed": 0.5},
            }
        ),
        goal_timeout=10 * (12 + 8) / 1.5,
    )
    assert params.plan_around_robots  # the default
    other = (0.0, 0.5)
    nav = Navigator(params)
    nav.start((4.5, 0.5), now=0.0)
    step, poses, steps = drive(nav, (-4.5, 0.5, 0.0), lambda t: grid_of(room()), robots=[other])
    assert step.status is NavStatus.SUCCEEDED and step.number_of_recoveries == 0
    first = steps[0].path
    assert all(math.dist(p, other) >= 0.5 for p in first)  # not through the robot's cell
    # With no way around (the robot stands in the only gap of a wall), the plan goes through
    # the gap: the drive then waits for the robot there.
    occ = room()
    occ[1:4, 6] = 100
    occ[5:7, 6] = 100
    nav = Navigator(params)
    nav.start((4.5, 0.5), now=0.0)
    step = nav.update((-4.5, 0.5, 0.0), grid_of(occ), 0.1, [other])
    assert (6, 4) in [grid_of(occ).pos_to_cell(x, y) for x, y in step.path]


def test_a_robot_in_the_way_is_never_touched_when_yielding():
    params = NavParams.from_config(
        config_from_dict(
            {
                "map": {"width_in_tiles": 12, "height_in_tiles": 10},
                "robot_constraints": {
                    "agent_relative_size": 0.6,
                    "relative_move_speed": 0.5,
                    "slam_position_inaccuracy": 0.0,
                },
            }
        ),
        goal_timeout=10 * (12 + 8) / 1.5,  # the 12 x 8 room's (a config's map is >= 10 tiles)
        plan_around_robots=False,  # the plan goes through: the drive must wait
    )
    other = (0.0, 0.5)

    nav = Navigator(params)
    nav.start((4.5, 0.5), now=0.0)
    step, poses, steps = drive(nav, (-4.5, 0.5, 0.0), lambda t: grid_of(room()), robots=[other])
    gaps = [math.dist((px, py), other) for px, py, _ in poses]
    assert step.status is NavStatus.SUCCEEDED
    assert min(gaps) >= 2 * params.robot_radius  # never in contact
    held = [s for s in steps if s.linear == 0.0 and s.angular == 0.0 and s.status.name == "ACTIVE"]
    assert len(held) >= 1  # it waited before going around
    # Without yielding it drives into the other robot (the old behaviour: contact, then
    # recovery).
    nav = Navigator(NavParams(**{**params.__dict__, "yield_to_robots": False}))
    nav.start((4.5, 0.5), now=0.0)
    _, poses, _ = drive(nav, (-4.5, 0.5, 0.0), lambda t: grid_of(room()), robots=[other])
    assert min(math.dist((px, py), other) for px, py, _ in poses) < 2 * params.robot_radius


def test_a_robot_behind_or_beside_the_path_does_not_hold_the_move():
    nav = Navigator(PARAMS)
    nav.start((4.5, 0.5), now=0.0)
    grid = grid_of(room())
    for t in range(1, 40):  # turn towards the goal first
        step = nav.update((-4.5, 0.5, 0.0), grid, t * DT, [(-5.4, 0.5), (-3.0, 2.5)])
        if step.linear > 0:
            break
    assert step.linear > 0.0


def test_goal_snaps_out_of_a_thin_wall_but_not_out_of_a_thick_one():
    occ = room(12, 8)
    occ[2:6, 5:9] = 100  # a 4 x 4 block
    nav = Navigator(PARAMS)
    nav.start((-0.6, 0.5), now=0.0)  # in the block's outer column: the cell beside it will do
    step, _, _ = drive(nav, (-4.5, 0.5, 0.0), lambda t: grid_of(occ))
    assert step.status is NavStatus.SUCCEEDED
    nav.start((1.0, 0.0), now=0.0)  # the block's middle: nothing free within the snap radius
    assert nav.update((-4.5, 0.5, 0.0), grid_of(occ), 0.1).error_code == NavErrorCode.NO_VALID_PATH


def test_cancel_stops_and_stays_stopped():
    nav = Navigator(PARAMS)
    grid = grid_of(room())
    nav.start((4.5, 0.5), now=0.0)
    assert nav.update((-4.5, 0.5, 0.0), grid, 0.1).linear > 0.0
    step = nav.cancel(now=0.2)
    assert step.status is NavStatus.CANCELED and (step.linear, step.angular) == (0.0, 0.0)
    assert step.navigation_time == pytest.approx(0.2) and step.error_code == 0
    later = nav.update((-4.4, 0.5, 0.0), grid, 0.3)
    assert later.status is NavStatus.CANCELED and later.linear == 0.0
    assert nav.cancel(now=0.4).status is NavStatus.CANCELED  # idempotent


def test_idle_navigator_commands_nothing():
    nav = Navigator(PARAMS)
    step = nav.update((0.0, 0.0, 0.0), grid_of(room()), 1.0)
    assert step.status is NavStatus.IDLE and (step.linear, step.angular) == (0.0, 0.0)
    assert nav.cancel(2.0).status is NavStatus.IDLE


def test_new_goal_replaces_the_current_one():
    grid = grid_of(room())
    nav = Navigator(PARAMS)
    nav.start((4.5, 0.5), now=0.0)
    nav.update((-4.5, 0.5, 0.0), grid, 0.1)
    nav.start((-4.5, 2.5), now=0.2)
    step = nav.update((-4.5, 0.5, 0.0), grid, 0.3)
    assert nav.goal == (-4.5, 2.5) and step.replanned
    assert step.path[-1] == (-4.5, 2.5) and step.navigation_time == pytest.approx(0.1)
    step, _, _ = drive(nav, (-4.5, 0.5, 0.0), lambda t: grid)
    assert step.status is NavStatus.SUCCEEDED


def test_missing_pose_or_map_waits_then_aborts():
    grid = grid_of(room())
    nav = Navigator(PARAMS)
    nav.start((4.5, 0.5), now=10.0)
    step = nav.update(None, grid, 12.0)
    assert step.status is NavStatus.ACTIVE and (step.linear, step.angular) == (0.0, 0.0)
    step = nav.update(None, grid, 10.0 + PARAMS.input_timeout + 0.1)
    assert step.status is NavStatus.ABORTED and step.error_code == NavErrorCode.TF_ERROR
    nav.start((4.5, 0.5), now=20.0)
    step = nav.update((-4.5, 0.5, 0.0), None, 20.0 + PARAMS.input_timeout + 0.1)
    assert step.error_code == NavErrorCode.NO_VALID_PATH and "no map" in step.error_msg


def test_goal_timeout_aborts():
    params = NavParams(
        robot_radius=0.3,
        max_linear_speed=1.0,
        max_angular_speed=2.0,
        goal_timeout=4.0,
        blocked_timeout=100.0,
    )
    nav = Navigator(params)
    nav.start((4.5, 0.5), now=0.0)
    step, poses, _ = drive(nav, (-4.5, 0.5, 0.0), lambda t: grid_of(room()), moves=False)
    assert step.error_code == NavErrorCode.CONTROLLER_TIMED_OUT and "4 s" in step.error_msg
    assert 4.0 < step.navigation_time <= 4.0 + DT + 1e-9


def test_a_stuck_robot_recovers_then_aborts_for_lack_of_progress():
    params = NavParams(
        robot_radius=0.3,
        max_linear_speed=1.0,
        max_angular_speed=2.0,
        blocked_timeout=1.0,
        max_recoveries=3,
    )
    nav = Navigator(params)
    nav.start((4.5, 0.5), now=0.0)
    step, _, steps = drive(nav, (-4.5, 0.5, 0.0), lambda t: grid_of(room()), moves=False)
    assert step.status is NavStatus.ABORTED
    assert step.error_code == NavErrorCode.FAILED_TO_MAKE_PROGRESS
    assert step.number_of_recoveries == 3
    assert any(s.linear < 0.0 for s in steps), "the second recovery backs up"
    assert [s.number_of_recoveries for s in steps] == sorted(s.number_of_recoveries for s in steps)


def test_costmap_values_inflate_walls_and_keep_unknown():
    occ = np.full((5, 5), -1, dtype=np.int8)
    occ[1:4, 1:4] = 0
    occ[2, 3] = 100
    costs = costmap_values(grid_of(occ), PARAMS)
    assert costs.dtype == np.int8 and costs.shape == (5, 5)
    assert costs[2, 3] == 100 and 0 < costs[2, 2] < 99 and costs[0, 0] == -1
    assert costs[1, 1] < costs[2, 2]
    nav = Navigator(PARAMS)
    g = grid_of(occ)
    assert nav.costmap_values(g) is nav.costmap_values(g)  # cached per map
    np.testing.assert_array_equal(nav.costmap_values(g), costs)


def test_params_validation_names_the_field():
    with pytest.raises(ValueError, match="NavParams.robot_radius must be a finite number > 0"):
        NavParams(robot_radius=0.0, max_linear_speed=1.0, max_angular_speed=1.0)
    with pytest.raises(ValueError, match="NavParams.max_recoveries must be an int >= 0"):
        NavParams(robot_radius=0.3, max_linear_speed=1.0, max_angular_speed=1.0, max_recoveries=-1)
    with pytest.raises(ValueError, match="lateral_tolerance"):
        NavParams(
            robot_radius=0.3, max_linear_speed=1.0, max_angular_speed=1.0, lateral_tolerance=1.0
        )
    with pytest.raises(TypeError, match="params must be NavParams"):
        Navigator({"robot_radius": 0.3})
    nav = Navigator(PARAMS)
    with pytest.raises(ValueError, match="goal_xy must be finite"):
        nav.start((math.nan, 0.0), now=0.0)
    nav.start((1.0, 0.0), now=0.0)
    with pytest.raises(ValueError, match="pose must be"):
        nav.update((0.0, 0.0), None, 0.1)


def test_from_config_uses_the_motion_model_speeds_in_metres():
    cfg = config_from_dict(
        {
            "world": {"tile_size": 2.0},
            "map": {"width_in_tiles": 30, "height_in_tiles": 30},
            "robot_constraints": {"agent_relative_size": 0.6, "relative_move_speed": 0.5},
        }
    )
    p = NavParams.from_config(cfg, max_recoveries=2)
    assert p.robot_radius == pytest.approx(0.6)
    assert p.max_linear_speed == pytest.approx(3.0) and p.max_angular_speed == pytest.approx(
        math.pi / 2
    )
    assert p.goal_tolerance == pytest.approx(0.5) and p.max_recoveries == 2
    assert p.goal_timeout == pytest.approx(10 * 60 * 2.0 / 3.0)


def test_pure_modules_import_no_ros():
    code = (
        "import importlib, sys\n"
        "for name in ['navigation', 'tf_pose', 'logic']:\n"
        "    importlib.import_module('maes_controller.' + name)\n"
        "roots = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(r for r in roots if r == 'rclpy' or r.endswith(('_msgs', '_interfaces'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert out.stdout.strip() == "[]"


def test_docstring_examples():
    result = doctest.testmod(navigator, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_robots_as_obstacles_marks_exactly_the_cells_within_reach():
    """The windowed marking equals the whole-map test of every cell, robots off the map too."""
    from maes_controller.navigation.costmap import GridMap as _Grid
    from maes_controller.navigation.navigator import robots_as_obstacles

    rng = np.random.default_rng(7)
    for _ in range(40):
        h, w = rng.integers(3, 30, size=2)
        res = float(rng.choice([0.05, 0.25, 0.5, 1.0]))
        grid = _Grid.from_array(
            rng.integers(0, 50, size=(h, w)).astype(np.int8), res, -w * res / 2, -h * res / 2
        )
        pts = rng.uniform(-w * res, w * res, size=(int(rng.integers(0, 6)), 2))
        radius = float(rng.uniform(0.0, 3.0))
        xs = grid.origin_x + (np.arange(w) + 0.5) * res
        ys = grid.origin_y + (np.arange(h) + 0.5) * res
        want = grid.array.copy()
        for px, py in pts:
            gx = np.maximum(np.abs(xs - px) - res / 2, 0.0)
            gy = np.maximum(np.abs(ys - py) - res / 2, 0.0)
            want[gx[None, :] ** 2 + gy[:, None] ** 2 <= radius * radius] = 100
        got = robots_as_obstacles(grid.array, grid, [tuple(p) for p in pts], radius)
        assert np.array_equal(got, want)
