"""Direct mode: the robot API gives what the ROS stack gives, runs are bit-identical, no ROS."""

from __future__ import annotations

import doctest
import hashlib
import json
import logging
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from maes_bringup.runners import direct
from maes_bringup.runners.direct import LogicError, RunResult, run, state_to_metres
from maes_controller.algorithms._common import nearby_positions
from maes_controller.navigation import GridMap, NavParams, costmap_values
from maes_controller.robot_api import NavStatus, Robot
from maes_sim.core import RobotState, Vector2D, config_from_dict
from maes_sim.core.comms import Broadcast
from maes_sim.core.slam import to_occupancy
from maes_sim.core.state import NearbyRobot, TagView

EXPLORER = "maes_controller.algorithms.frontier_explorer:logic"


def small_config(**sections):
    data = {
        "number_of_robots": 2,
        "end_criteria": {"tick": 30},
        "robot_constraints": {"slam_position_inaccuracy": 0.0},
        "map": {"width_in_tiles": 24, "height_in_tiles": 24, "cave_config": {}},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return config_from_dict(data)


def trajectory_hash(config, controller, seed=None, max_ticks=None):
    digest = hashlib.sha256()

    def record(sim):
        digest.update(sim.poses.tobytes())
        digest.update(sim.odometry_poses.tobytes())
        digest.update(sim.slam_maps.tobytes())

    result = run(config, controller, seed=seed, max_ticks=max_ticks, progress=record)
    digest.update(json.dumps([result.stats, result.snapshots], sort_keys=True).encode())
    digest.update(result.exploration.tobytes() + result.distance.tobytes())
    return digest.hexdigest(), result


# ------------------------------------------------------------------------------ determinism
def test_same_config_and_seed_give_bit_identical_runs():
    cfg = small_config(
        number_of_robots=3,
        end_criteria={"tick": 250},
        robot_constraints={"slam_position_inaccuracy": 0.5, "distribute_slam": True},
        motion={"odometry_noise": 0.02, "heading_noise": 0.01},
        map={"width_in_tiles": 30, "height_in_tiles": 30, "cave_config": {}},
    )
    first, r1 = trajectory_hash(cfg, EXPLORER)
    second, r2 = trajectory_hash(cfg, EXPLORER)
    assert first == second
    assert r1.distance.sum() > 5.0 and r1.exploration[-1] > r1.exploration[0]  # it did explore
    other, _ = trajectory_hash(cfg, EXPLORER, seed=1)
    assert other != first


@pytest.mark.parametrize("robots", [3, 30])
def test_the_navigator_reads_the_robots_sensed_from_arrays_as_from_the_states(robots, monkeypatch):
    """The runner hands each navigator, and the frontier explorer's logic
    (``nearby_positions``), the robots it senses as the observation's arrays; a run equals, to
    the bit, one where both read them from the states' objects (30 packed robots sense a crowd:
    the yielding checks' array path; 3: their loops)."""
    config = small_config(
        number_of_robots=robots,
        end_criteria={"tick": 80},
        robot_spawn_config={"spawn_together": {}},
        robot_constraints={"slam_position_inaccuracy": 0.5},
    )
    fast, _ = trajectory_hash(config, EXPLORER, seed=4)
    observe = direct.DirectRobot.observe
    seen = []

    def from_states(self, state, pose_m, nearby=None):
        seen.append(nearby is not None)
        observe(self, state, pose_m)

    monkeypatch.setattr(direct.DirectRobot, "observe", from_states)
    slow, _ = trajectory_hash(config, EXPLORER, seed=4)
    assert seen and all(seen)  # the runner gave arrays; this run ignored them
    assert fast == slow


def test_nearby_positions_are_the_states_robots_as_an_array():
    seen = []

    def look(robot):
        assert robot.nearby_positions is not None  # the runner gave the arrays
        fast = nearby_positions(robot)
        objects = [[r.pos.x, r.pos.y] for r in robot.state.nearby_robots]
        assert fast.dtype == np.float64 and fast.shape == (len(objects), 2)
        assert fast.tolist() == objects
        seen.append(len(objects))

    config = small_config(
        number_of_robots=6, end_criteria={"tick": 3}, robot_spawn_config={"spawn_together": {}}
    )
    run(config, look)
    assert max(seen) >= 3  # packed: each senses the others


def test_each_robot_has_its_own_seeded_rng():
    def draw(robot):
        robot.memory.setdefault("draws", []).append(float(robot.rng.random()))
        robot.memory["log"] = draws_by_robot
        draws_by_robot[robot.robot_id] = robot.memory["draws"]

    draws_by_robot: dict[int, list[float]] = {}
    run(small_config(end_criteria={"tick": 5}), draw)
    first = dict(draws_by_robot)
    draws_by_robot = {}
    run(small_config(end_criteria={"tick": 5}), draw)
    assert draws_by_robot == first and len(first[0]) == 5
    assert first[0] != first[1]
    draws_by_robot = {}
    run(small_config(end_criteria={"tick": 5}), draw, seed=4)
    assert draws_by_robot[0] != first[0]


# ------------------------------------------------------------------------------ the robot API
def test_robot_sees_the_tick_state_and_pose_in_metres():
    seen = []

    def look(robot):
        assert isinstance(robot, Robot)
        seen.append(
            (
                robot.robot_id,
                robot.tick,
                robot.state,
                robot.robot_position,
                robot.robot_heading,
                robot.namespace,
            )
        )

    est, true = {}, {}

    def record(sim):
        est[sim.tick], true[sim.tick] = sim.estimated_poses, sim.poses

    cfg = small_config(
        world={"tile_size": 0.5},
        robot_constraints={
            "slam_position_inaccuracy": 0.4,
            "sense_nearby_agents_range": 50.0,
            "sense_nearby_agents_blocked_by_walls": False,
        },
    )
    result = run(cfg, look, progress=record)
    assert [(rid, tick) for rid, tick, *_ in seen] == [(i, t) for t in range(30) for i in (0, 1)]
    for rid, tick, state, position, heading, ns in seen[2:]:
        believed = est[tick][rid]
        assert state.tick == tick and ns == f"robot{rid}"
        # tf map -> base_footprint: the SLAM-believed pose, in metres
        assert position == pytest.approx((believed[0] * 0.5, believed[1] * 0.5), abs=1e-12)
        assert (state.position.x, state.position.y) == pytest.approx(position, abs=1e-12)
        assert heading == pytest.approx(believed[2])
        # the other robot is sensed at its true position, in metres
        other = true[tick][1 - rid]
        assert [r.id for r in state.nearby_robots] == [str(1 - rid)]
        assert (state.nearby_robots[0].pos.x, state.nearby_robots[0].pos.y) == pytest.approx(
            (other[0] * 0.5, other[1] * 0.5), abs=1e-12
        )
    assert any(not np.allclose(est[t], true[t]) for t in est)  # the SLAM error is in play
    assert result.ticks == 30 and result.end_reason == "tick limit 30 reached"


def test_state_to_metres_scales_every_position():
    s = RobotState(
        tick=1,
        status="Idle",
        colliding=False,
        incoming_broadcast_msgs=[Broadcast("hi", "robot1")],
        tags_nearby=[TagView("t", Vector2D(2.0, 4.0), "robot1", 0)],
        nearby_robots=[NearbyRobot("1", Vector2D(-2.0, 6.0))],
        position=Vector2D(1.0, 1.0),
        heading=0.3,
    )
    m = state_to_metres(s, 0.25)
    assert m.tags_nearby[0].pos == Vector2D(0.5, 1.0) and m.tags_nearby[0].sender == "robot1"
    assert m.nearby_robots[0].pos == Vector2D(-0.5, 1.5)
    assert m.position == Vector2D(0.25, 0.25) and m.heading == 0.3
    assert m.incoming_broadcast_msgs == s.incoming_broadcast_msgs
    assert state_to_metres(s, 1.0) is s


@pytest.mark.parametrize("slam", ["simulated", "occupancy"])
def test_costmap_is_the_navigators_costmap_of_the_map_published_on_slam_update_ticks(slam):
    cfg = small_config(
        world={"tile_size": 0.5},
        end_criteria={"tick": 23},
        robot_constraints={"slam_update_interval_in_ticks": 5, "slam_raytrace_range": 15.0},
        stack={"slam": slam},  # occupancy: the grids of the robots' own scans, the same way
    )
    arrays = {}

    def look(robot):
        cm = robot.global_costmap
        if robot.robot_id == 0:
            arrays[robot.tick] = (cm.costmap, np.array(cm.array))

    result = run(cfg, look)
    msg = arrays[0][0]
    h, w = result.sim.shape
    assert msg.info.resolution == 0.5 and (msg.info.width, msg.info.height) == (w, h)
    assert (msg.info.origin.position.x, msg.info.origin.position.y) == (-w / 4, -h / 4)
    # a new costmap exactly on the SLAM update ticks, the same object in between
    changed = [t for t in range(1, 23) if arrays[t][0] is not arrays[t - 1][0]]
    assert changed == [5, 10, 15, 20]
    # the last published one: the navigator's costmap of robot 0's SLAM map at tick 20 (the
    # map has not changed since: the next update would be at tick 25)
    grid = GridMap.from_array(to_occupancy(result.sim.slam_maps[0]), 0.5, -w / 4, -h / 4)
    expected = costmap_values(grid, NavParams.from_config(cfg))
    np.testing.assert_array_equal(arrays[22][1], expected)
    assert (expected == 100).any() and (expected == 0).any() and (expected == -1).any()


def goal_in_sight(robot, min_distance):
    """A free costmap cell at least ``min_distance`` metres from the robot, nearest first."""
    cm = robot.global_costmap
    free = np.argwhere(cm.array == 0)  # (iy, ix)
    pos = cm.cells_to_pos(free[:, ::-1])
    d = np.hypot(pos[:, 0] - robot.robot_position[0], pos[:, 1] - robot.robot_position[1])
    ok = np.flatnonzero(d >= min_distance)
    return tuple(pos[ok[np.argmin(d[ok])]])


def test_nav_to_pos_reaches_a_goal_with_feedback_in_metres():
    cfg = small_config(number_of_robots=1, world={"tile_size": 0.5}, end_criteria={"tick": 300})
    log = []

    def go(robot):
        if robot.tick == 0:
            assert robot.nav_status is NavStatus.IDLE and robot.is_nav_complete()
            assert robot.nav_feedback is None
            robot.nav_to_pos(*goal_in_sight(robot, 2.5))  # far enough for the top speed
            assert robot.nav_status is NavStatus.ACTIVE and not robot.is_nav_complete()
        log.append((robot.tick, robot.nav_status, robot.nav_feedback, robot.robot_position))

    speeds = []  # m/s
    run(cfg, go, max_ticks=200, progress=lambda sim: speeds.append(sim.velocities[0, 0] * 0.5))
    # cmd_vel is m/s, the simulation takes tiles/s: the top speed in metres must match
    top = NavParams.from_config(cfg).max_linear_speed
    assert 0.9 * top <= max(speeds) <= top * (1 + 1e-9)
    statuses = [entry[1] for entry in log]
    assert NavStatus.SUCCEEDED in statuses, f"never succeeded: last status {statuses[-1]}"
    active = [k for k, entry in enumerate(log) if entry[1] is NavStatus.ACTIVE]
    assert len(active) > 3
    for k in active[2:]:
        fb = log[k][2]
        # the feedback read at tick t came from the navigator step of tick t - 1, which used
        # the pose the robot had then (metres, map frame)
        assert (fb.current_pose.pose.position.x, fb.current_pose.pose.position.y) == pytest.approx(
            log[k - 1][3], abs=1e-12
        )
        assert math.isfinite(fb.distance_remaining) and fb.distance_remaining > 0
        assert fb.navigation_time.sec * 10**9 + fb.navigation_time.nanosec > 0
    # the distance left shrinks as it drives
    remaining = [log[k][2].distance_remaining for k in active[2:]]
    assert remaining[-1] < remaining[0]


def test_navigation_uses_the_navigator_nodes_smoothed_pose():
    # the SLAM pose error jumps at every SLAM update; the navigator (as its ROS node) averages
    # map -> odom, so the pose it drives with is closer to the truth than the believed one
    cfg = small_config(
        number_of_robots=1,
        end_criteria={"tick": 300},
        robot_constraints={"slam_position_inaccuracy": 0.5, "slam_update_interval_in_ticks": 2},
    )
    believed, navigated, true = {}, {}, {}

    def go(robot):
        if robot.is_nav_complete():
            robot.nav_to_pos(*goal_in_sight(robot, 3.0))
        believed[robot.tick] = robot.robot_position
        if robot.nav_feedback is not None:
            p = robot.nav_feedback.current_pose.pose.position
            navigated[robot.tick - 1] = (p.x, p.y)

    run(cfg, go, max_ticks=150, progress=lambda sim: true.setdefault(sim.tick, sim.poses[0, :2]))
    ticks = [t for t in navigated if t >= 40 and t in true]
    assert len(ticks) > 50
    err_believed = np.mean([math.dist(believed[t], true[t]) for t in ticks])
    err_navigated = np.mean([math.dist(navigated[t], true[t]) for t in ticks])
    assert err_believed > 0.2  # uniform in a 0.5-tile square: about 0.38 on average
    assert err_navigated < 0.5 * err_believed


def test_nav_goal_reached_within_tolerance():
    cfg = small_config(number_of_robots=1, world={"tile_size": 0.5}, end_criteria={"tick": 300})
    out = {}

    def go(robot):
        if robot.tick == 0:
            out["goal"] = goal_in_sight(robot, 1.5)
            robot.nav_to_pos(*out["goal"])
        elif robot.nav_status is NavStatus.SUCCEEDED and "at" not in out:
            out["at"] = robot.robot_position

    run(cfg, go, max_ticks=200)
    tolerance = NavParams.from_config(cfg).goal_tolerance
    assert math.dist(out["at"], out["goal"]) <= tolerance + 0.5 * 0.3  # + one tick of driving


def test_cancel_stops_the_robot_and_unreachable_goals_abort():
    speeds = {}
    out = {}

    def go(robot):
        if robot.tick == 0:
            robot.nav_to_pos(*goal_in_sight(robot, 4.0))
        if robot.tick == 8:
            assert robot.nav_status is NavStatus.ACTIVE
            robot.cancel_nav()
            out["after_cancel"] = robot.nav_status
        if robot.tick == 20:
            robot.nav_to_pos(500.0, 500.0)  # outside the map
        if robot.tick == 22:
            out["far"] = (robot.nav_status, robot.nav_error, robot.is_nav_complete())

    cfg = small_config(number_of_robots=1)
    run(cfg, go, max_ticks=25, progress=lambda sim: speeds.setdefault(sim.tick, sim.velocities[0]))
    assert out["after_cancel"] is NavStatus.CANCELED
    assert np.abs(speeds[8]).max() > 0  # it was driving (or turning) before
    assert np.abs(speeds[12]).max() == 0 and np.abs(speeds[19]).max() == 0  # then stopped
    status, error, complete = out["far"]
    assert status is NavStatus.ABORTED and complete
    assert error.startswith("error 204: ") and "outside" in error  # Nav2's GOAL_OUTSIDE_MAP


def test_a_goal_that_is_not_two_finite_numbers_is_refused_and_stops_the_robot(caplog):
    speeds = {}
    out = {}
    bad = [(math.nan, 0.0), (0.0, math.inf), ("1.0", 0.0), (None, 1.0), (True, 0.0), (10**400, 0)]

    def go(robot):
        if robot.tick == 0:
            robot.nav_to_pos(*goal_in_sight(robot, 4.0))
        if robot.tick == 6:
            out["before"] = robot.nav_status
            robot.nav_to_pos(*bad[0])  # ends the current goal, as a new goal would
            out["refused"] = (robot.nav_status, robot.nav_error, robot.is_nav_complete())
        if 7 <= robot.tick < 7 + len(bad) - 1:
            robot.nav_to_pos(*bad[robot.tick - 6])
            out.setdefault("errors", []).append(robot.nav_error)

    with caplog.at_level(logging.WARNING, logger="maes.direct"):
        run(
            small_config(number_of_robots=1),
            go,
            max_ticks=20,
            progress=lambda sim: speeds.setdefault(sim.tick, sim.velocities[0]),
        )
    assert out["before"] is NavStatus.ACTIVE
    status, error, complete = out["refused"]
    assert status is NavStatus.ABORTED and complete
    assert error == "error 204: goal (nan, 0.0) is not a finite position"
    assert all(e.startswith("error 204: goal (") for e in out["errors"]), out["errors"]
    assert np.abs(speeds[11]).max() == 0 and np.abs(speeds[19]).max() == 0  # stopped
    assert "goal refused (error 204" in caplog.text


def test_broadcasts_and_tags_go_through_the_simulation(caplog):
    seen = {}

    def talk(robot):
        if robot.tick == 0 and robot.robot_id == 0:
            robot.broadcast_msg("hello")
            robot.broadcast_msg("")  # refused: logged, not raised
            robot.logger.info("said hello", throttle_duration_sec=1.0)  # rclpy's options work
            robot.deposit_tag("here")
            seen["pos0"] = robot.state.position
        if robot.tick == 1:
            seen[robot.robot_id] = robot.state

    cfg = small_config(
        world={"tile_size": 0.5},
        end_criteria={"tick": 3},
        robot_constraints={"environment_tag_read_range": 100.0},
    )
    with caplog.at_level(logging.INFO, logger="maes.direct"):
        result = run(cfg, talk)
    assert [(b.msg, b.sender) for b in seen[1].incoming_broadcast_msgs] == [("hello", "robot0")]
    assert seen[0].incoming_broadcast_msgs == []  # a robot does not hear itself
    tags = seen[0].tags_nearby
    assert [(t.msg, t.sender, t.tick) for t in tags] == [("here", "robot0", 0)]
    # the tag lies where robot0 was (no SLAM error here), read in metres
    assert (tags[0].pos.x, tags[0].pos.y) == pytest.approx((seen["pos0"].x, seen["pos0"].y))
    assert "[tick 0]" in caplog.text and "refused" in caplog.text and "empty" in caplog.text
    assert "[tick 0] said hello" in caplog.text
    assert result.broadcasts_sent == 1 and result.tags_deposited == 1


def test_a_raising_logic_names_the_robot_and_tick():
    def bad(robot):
        if robot.tick == 3 and robot.robot_id == 1:
            raise ZeroDivisionError("oops")

    with pytest.raises(LogicError, match=r"robot1 raised at tick 3: ZeroDivisionError: oops"):
        run(small_config(), bad)


def test_bad_arguments_are_refused():
    endless = config_from_dict({"map": {"width_in_tiles": 20, "height_in_tiles": 20}})
    with pytest.raises(ValueError, match="no end criteria: pass max_ticks"):
        run(endless, lambda robot: None)
    assert run(endless, lambda robot: None, max_ticks=2).ticks == 2
    with pytest.raises(ValueError, match="cannot import logic module 'nope'"):
        run(small_config(), "nope:logic")
    with pytest.raises(ValueError, match="got 3 controllers for 2 robots"):
        run(small_config(), [EXPLORER] * 3)
    with pytest.raises(ValueError, match="max_ticks must be an integer"):
        run(small_config(), EXPLORER, max_ticks=2.5)


def test_one_controller_per_robot():
    calls = []
    run(
        small_config(end_criteria={"tick": 2}),
        [lambda r: calls.append(("a", r.robot_id)), lambda r: calls.append(("b", r.robot_id))],
    )
    assert calls == [("a", 0), ("b", 1)] * 2


# ------------------------------------------------------------------------------ whole runs
def test_example_explorer_finishes_a_small_map(tmp_path):
    cfg = small_config(
        number_of_robots=3,
        end_criteria={"exploration_percent": 99.0, "tick": 3000},
        map={"width_in_tiles": 30, "height_in_tiles": 30, "cave_config": {}},
    )
    result = run(cfg, EXPLORER)
    assert isinstance(result, RunResult)
    assert result.finished and result.end_reason.startswith("exploration reached")
    t99 = result.time_to_exploration(99.0)
    assert t99 == pytest.approx(result.sim_time)
    assert result.time_to_exploration(50.0) < t99 and result.time_to_coverage(100.0) is None
    assert result.broadcasts_sent > 0 and result.tags_deposited > 0
    assert result.exploration.shape == (result.ticks + 1,)
    assert result.real_time_factor > 0
    folder = result.write(tmp_path)
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["mode"] == "direct" and summary["finished"] and summary["ticks"] == result.ticks


SMALL_MAP_RUN = """\
number_of_robots: 3
end_criteria: {exploration_percent: 99.0, tick: 3000}
robot_constraints: {slam_position_inaccuracy: 0.0}
map: {width_in_tiles: 30, height_in_tiles: 30, cave_config: {}}
"""


@pytest.mark.slow
def test_example_explorer_finishes_the_same_small_map_in_direct_and_ros_mode(tmp_path):
    pytest.importorskip("rclpy", reason="ROS mode needs the project environment")
    config = tmp_path / "small.yaml"
    config.write_text(SMALL_MAP_RUN)
    direct = run(config, EXPLORER)
    assert direct.end_reason.startswith("exploration reached")
    # the embedded ROS stack (simulator, navigator and controller nodes over DDS) on the same
    # file; the per-run ROS domain comes from the root conftest through the environment
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "maes_bringup.runners.embedded",
            "--config",
            str(config),
            "--real-time-factor",
            "0",
            "--results",
            str(tmp_path / "ros"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (folder,) = (tmp_path / "ros").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["finished"] and summary["end_reason"].startswith("exploration reached")
    assert summary["seed"] == direct.seed
    mine = direct.write(tmp_path / "direct")  # the very same map in both modes
    assert (mine / "ground_truth.pgm").read_bytes() == (folder / "ground_truth.pgm").read_bytes()


def test_direct_mode_imports_no_ros():
    code = (
        "import sys\n"
        "from maes_bringup.runners import direct, direct_robot\n"
        "from maes_bringup.experiments import batch, experiment, aggregate, run_metrics\n"
        "from maes_sim.core import config_from_dict\n"
        "cfg = config_from_dict({'end_criteria': {'tick': 3},"
        " 'map': {'width_in_tiles': 20, 'height_in_tiles': 20}})\n"
        "direct.run(cfg, 'maes_controller.algorithms.frontier_explorer:logic')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rosidl_runtime_py',"
        " 'maes_interfaces', 'nav_msgs', 'geometry_msgs', 'launch', 'launch_ros'))\n"
        "print(bad)\n"
    )
    env = dict(os.environ)
    root = Path(__file__).resolve().parents[3]
    paths = [str(root / "src" / p) for p in ("maes_sim", "maes_controller", "maes_bringup")]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("module", [direct])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
