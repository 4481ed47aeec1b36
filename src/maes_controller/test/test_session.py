"""The navigation session as events (pure): accept, preempt, refuse, cancel, step; and the
tasks of Nav2's other actions on it, driven by the simulator's own motion model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from maes_controller.navigation import (
    PREEMPTED,
    GridMap,
    Navigator,
    NavParams,
    NavSession,
    error_text,
)
from maes_controller.navigation.tasks import (
    WAYPOINT_FAILED,
    Drive,
    PoseSequence,
    Spin,
    compute_path,
)
from maes_controller.robot_api import NavStatus
from maes_sim.core import Simulation
from maes_sim.core.config import config_from_dict

PARAMS = NavParams(robot_radius=0.3, max_linear_speed=3.0, max_angular_speed=math.pi)


def open_grid(w: int = 20, h: int = 10) -> GridMap:
    walls = np.zeros((h, w), dtype=np.int8)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = 100
    return GridMap.from_array(walls, 1.0, origin_x=-w / 2, origin_y=-h / 2)


def session() -> NavSession:
    return NavSession(Navigator(PARAMS))


def test_a_new_goal_preempts_the_running_one_with_one_zero_command():
    s = session()
    assert s.submit("a", (5.0, 0.0), now=0.0).ended == ()
    s.step((0.0, 0.0, 0.0), open_grid(), now=0.1)
    ev = s.submit("b", (-5.0, 0.0), now=0.2)
    assert [(e.token, e.step.status, e.step.error_code, e.step.error_msg) for e in ev.ended] == [
        ("a", NavStatus.ABORTED, 0, PREEMPTED)
    ]
    assert ev.command == (0.0, 0.0, 0.0) and s.token == "b" and s.status is NavStatus.ACTIVE


def held_robot_with_a_new_goal_every_second(cancel_first: bool) -> list:
    """A robot that never moves (held in a crowd) whose logic sends a new goal every second
    for 30 s, first canceling the running one or not: the goals that ended otherwise than
    preempted or canceled, with when."""
    s, grid, ends = session(), open_grid(), []
    for k in range(300):
        now = round(0.1 * k, 1)
        if k % 10 == 0:
            if cancel_first:
                s.cancel(now)
            s.submit(k, (5.0, 1.0 if k % 20 else -1.0), now=now)
        ev = s.step((0.0, 0.0, 0.0), grid, now)
        ends += [(e.step, now) for e in ev.ended if e.step.status is not NavStatus.CANCELED]
    return [(step, now) for step, now in ends if step.error_msg != PREEMPTED]


def test_a_preempting_goal_keeps_the_progress_check_as_nav2s_controller_server_does():
    # Nav2's controller server resets its progress checker for a new FollowPath goal, not for
    # a preempting one: a robot held in place gives up 15 s (progress_timeout) after it last
    # moved, however often its goal changes (before: never, each goal waited afresh)
    ((step, now),) = held_robot_with_a_new_goal_every_second(cancel_first=False)[:1]
    assert step.status is NavStatus.ABORTED and step.error_code == 105
    assert "no progress" in step.error_msg and PARAMS.progress_timeout < now <= 16.0
    # a goal sent after the last one ended (here canceled) starts its own check
    assert held_robot_with_a_new_goal_every_second(cancel_first=True) == []


def test_a_refused_goal_ends_at_once_and_stops_only_a_moving_robot():
    s = session()
    ev = s.submit("bad", (math.inf, 0.0), now=0.0)
    assert ev.command is None  # idle robot: no command
    (end,) = ev.ended
    assert end.token == "bad" and end.step.error_code == 204
    assert s.status is NavStatus.ABORTED and s.error().startswith("error 204: goal (inf")
    ev = s.submit("x", (1.0, 0.0), now=0.0, frame="odom")
    assert ev.ended[0].step.error_code == 202 and "'odom'" in ev.ended[0].step.error_msg
    assert s.submit("ok", (1.0, 0.0), now=0.0, frame="/map").ended == ()


def test_cancel_ends_canceled_with_a_zero_command_and_idle_sessions_do_nothing():
    s = session()
    assert s.cancel(0.0) == s.step((0.0, 0.0, 0.0), open_grid(), 0.0)  # both empty
    s.submit("a", (5.0, 0.0), now=None)  # lockstep: starts at the next call with its time
    ev = s.cancel(1.0)
    assert ev.command == (0.0, 0.0, 0.0) and ev.ended[0].step.status is NavStatus.CANCELED
    assert s.token is None and s.status is NavStatus.CANCELED and s.error() == ""


def test_feedback_only_once_a_route_exists_and_the_end_sends_one_zero():
    s = session()
    s.submit("a", (2.0, 0.0), now=0.0)
    ev = s.step((0.0, 0.0, 0.0), None, now=0.1)  # no map yet: no route
    assert ev.feedback is None and ev.command == (0.0, 0.0, 0.0) and s.feedback is None
    grid, x, t, ends = open_grid(), 0.0, 0.1, []
    while s.token is not None and t < 10:
        t += 0.1
        ev = s.step((x, 0.0, 0.0), grid, now=t)
        if ev.feedback is not None:
            assert math.isfinite(ev.feedback.distance_remaining)
        ends += ev.ended
        x += ev.command[0] * 0.1
    (end,) = ends
    assert end.step.status is NavStatus.SUCCEEDED and ev.command == (0.0, 0.0, 0.0)


def test_error_text_is_the_one_wording():
    s = session()
    s.submit("a", (float("nan"), 1.0), now=0.0)
    assert s.error() == error_text(s.last_step) == f"error 204: {s.last_step.error_msg}"


# ------------------------------------------------------------------ tasks on the motion model
@pytest.fixture
def sim():
    walls_cfg = {
        "number_of_robots": 1,
        "random_seeds": [1],
        "map": {"width_in_tiles": 20, "height_in_tiles": 20, "building_config": {}},
        "end_criteria": {"exploration_percent": None, "coverage_percent": None, "tick": None},
        "robot_constraints": {"slam_position_inaccuracy": 0.0},
    }
    return Simulation(config_from_dict(walls_cfg))


def run_task(sim, task, ticks=200):
    """Step ``task`` on the simulator's robot 0 (odometry = its pose here) until it ends."""
    s = NavSession(Navigator(PARAMS))
    s.submit("t", task, now=sim.sim_time)
    tile = sim.config.world.tile_size
    while s.token is not None and ticks > 0:
        x, y, yaw = (float(v) for v in sim.poses[0])
        odom = (x * tile, y * tile, yaw)
        ev = s.step(odom, None, sim.sim_time, odom_pose=odom)
        sim.set_velocity(np.array([0]), np.array([ev.command[0] / tile]), np.array([ev.command[1]]))
        sim.step()
        ticks -= 1
    return s.last_step


def test_spin_turns_by_the_target_on_the_maes_motion_model(sim):
    yaw0 = float(sim.poses[0][2])
    step = run_task(sim, Spin(-1.0, max_speed=math.pi, time_allowance=10.0))
    assert step.status is NavStatus.SUCCEEDED
    for _ in range(5):  # it has stopped: nothing left to coast
        sim.step()
    assert math.remainder(float(sim.poses[0][2]) - yaw0, math.tau) == pytest.approx(-1.0, abs=5e-3)


def test_spin_times_out_with_nav2s_code(sim):
    step = run_task(sim, Spin(6.0, max_speed=0.5, time_allowance=1.0))
    assert step.status is NavStatus.ABORTED and step.error_code == 701


def test_drive_stops_on_the_distance(sim):
    tile = sim.config.world.tile_size
    x0, y0, _ = (float(v) for v in sim.poses[0])
    step = run_task(sim, Drive(-0.4, -0.5, 3.0, 10.0, 710))
    assert step.status is NavStatus.SUCCEEDED
    for _ in range(5):
        sim.step()
    x1, y1, _ = (float(v) for v in sim.poses[0])
    assert math.hypot(x1 - x0, y1 - y0) * tile == pytest.approx(0.4, abs=5e-3)


def test_drive_into_a_wall_is_a_collision_ahead():
    grid = open_grid()
    nav = Navigator(PARAMS)
    task = Drive(5.0, 1.0, 3.0, 10.0, 720, costs=nav.costmap_values)
    s = NavSession(nav)
    s.submit("t", task, now=0.0)
    ev = s.step((8.0, 0.0, 0.0), grid, 0.1, odom_pose=(8.0, 0.0, 0.0))  # wall at x = 9.5
    assert ev.ended[0].step.error_code == 723 and ev.command == (0.0, 0.0, 0.0)


def test_waypoints_miss_an_unreachable_one_and_stop():
    grid = open_grid()
    nav = Navigator(PARAMS)
    task = PoseSequence(nav, [(1.0, 0.0), (50.0, 0.0)], through=False)
    s = NavSession(nav)
    s.submit("t", task, now=0.0)
    x, t = 0.0, 0.0
    while s.token is not None and t < 20:
        t += 0.1
        ev = s.step((x, 0.0, 0.0), grid, now=t)
        x += ev.command[0] * 0.1
    step = s.last_step
    assert step.status is NavStatus.ABORTED and step.error_code == WAYPOINT_FAILED
    assert step.missed == ((1, WAYPOINT_FAILED),)


def test_compute_path_codes_and_ends():
    grid, nav = open_grid(), Navigator(PARAMS)
    points, code, _ = compute_path(nav, grid, (-5.0, 0.0), [(5.0, 2.0)], 200)
    assert code == 0 and points[0] == (-5.0, 0.0) and points[-1] == (5.0, 2.0)
    assert compute_path(nav, grid, (-5.0, 0.0), [(50.0, 0.0)], 200)[1] == 204
    assert compute_path(nav, grid, None, [(5.0, 0.0)], 200)[1] == 202
    assert compute_path(nav, grid, (-5.0, 0.0), [], 300)[1] == 309
    assert compute_path(nav, grid, (50.0, 0.0), [(5.0, 0.0)], 300)[1] == 303
