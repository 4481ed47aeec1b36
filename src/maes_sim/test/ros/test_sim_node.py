"""The maes_sim node over real DDS: topics, commands, services, pacing, bad requests."""

from __future__ import annotations

import math
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from geometry_msgs.msg import Twist, Vector3  # noqa: E402
from nav_msgs.msg import OccupancyGrid, Odometry  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import LaserScan  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from maes_interfaces.msg import State, Stats  # noqa: E402
from maes_interfaces.srv import BroadcastToAll, DepositTag  # noqa: E402
from maes_sim.core import SimConfig, Simulation, WorldMap  # noqa: E402
from maes_sim.core.comms import MAX_BROADCASTS_PER_TICK, MAX_MESSAGE_BYTES  # noqa: E402
from maes_sim.core.config_schema import (  # noqa: E402
    EndCriteria,
    GlobalSettings,
    LidarConfig,
    RobotConstraints,
    WorldConfig,
)
from maes_sim.ros import conversions as cv  # noqa: E402
from maes_sim.ros.sim_node import (  # noqa: E402
    DEFAULT_QOS,
    LATCHED_QOS,
    STATE_QOS,
    TF_QOS,
)

REPO = Path(__file__).resolve().parents[4]
# Readers deeper than the publishers' own depth, so a test sees every message sent even when it
# steps faster than it reads (the node's contract is about what it sends).
DEEP = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
DEEP_BEST_EFFORT = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)


def room(h=14, w=30, column=None):
    walls = np.zeros((h, w), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    if column is not None:
        walls[:, column] = True
    return WorldMap(walls=walls, name="room")


def place(sim, grid_xy, headings=None):
    xy = np.asarray(grid_xy, dtype=float) - np.array([sim.shape[1], sim.shape[0]]) / 2
    yaw = np.zeros(len(xy)) if headings is None else np.asarray(headings, dtype=float)
    sim.place_robots(np.column_stack([xy, yaw]))


def test_every_topic_arrives_with_types_frames_and_consistent_content(harness):
    cfg = SimConfig(number_of_robots=2, world=WorldConfig(tile_size=0.5))
    sim = Simulation(cfg, world=room())
    h = harness(sim, start_paused=True)
    scans = h.collect(LaserScan, "/robot0/scan", DEEP_BEST_EFFORT)
    odoms = h.collect(Odometry, "/robot0/odom", DEEP)
    tfs = h.collect(TFMessage, "/robot0/tf", TF_QOS)
    statics = h.collect(TFMessage, "/robot0/tf_static", LATCHED_QOS)
    states = h.collect(State, "/robot0/maes_state", DEEP)
    maps = h.collect(OccupancyGrid, "/robot0/map", LATCHED_QOS)
    clocks = h.collect(Clock, "/clock", DEFAULT_QOS)
    global_tf = h.collect(TFMessage, "/tf", TF_QOS)
    truth = h.collect(OccupancyGrid, "/maes/ground_truth", LATCHED_QOS)
    explo = h.collect(OccupancyGrid, "/maes/exploration", LATCHED_QOS)
    cover = h.collect(OccupancyGrid, "/maes/coverage", LATCHED_QOS)
    markers = h.collect(MarkerArray, "/maes/markers", DEFAULT_QOS)
    stats = h.collect(Stats, "/maes/stats", DEFAULT_QOS)
    assert h.spin_until(lambda: statics and truth and maps, 10.0), "latched topics missing"
    sim.set_velocity(0, 1.0, 0.0)
    ranges_at, truth_at = {}, {}
    for _ in range(12):
        h.step()
        ranges_at[sim.tick] = (sim.lidar_ranges[0].copy(), sim.lidar_hits[0].copy())
        truth_at[sim.tick] = sim.poses[0].copy()
    assert h.spin_until(lambda: len(states) >= 10 and len(scans) >= 10 and stats, 10.0)

    # maes_state: consecutive ticks, one per logic tick
    ticks = [s.tick for s in states]
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks)))
    # scan: geometry, frame, 0.1 s sim time apart, same ranges as the core (in metres)
    s = scans[-1]
    assert s.header.frame_id == "base_scan" and len(s.ranges) == 180
    assert s.angle_min == pytest.approx(-math.pi) and s.angle_increment == pytest.approx(
        2 * math.pi / 180
    )
    assert s.range_max == pytest.approx(7.0 * 0.5)
    stamps = [cv.time_from_msg(m.header.stamp) for m in scans]
    assert np.allclose(np.diff(stamps), 0.1)
    tick = round(stamps[-1] / 0.1)
    core_ranges, core_hit = ranges_at[tick]
    got = np.asarray(s.ranges)
    assert (~core_hit).any() and core_hit.any()  # the room has walls in and out of range
    assert np.isinf(got[~core_hit]).all()  # REP-117: no return within range_max is +inf
    np.testing.assert_allclose(got[core_hit], core_ranges[core_hit] * 0.5, rtol=1e-6)
    # odom and tf agree at the same stamp; the robot moved forward (+x) in odom
    by_stamp = {cv.time_from_msg(m.header.stamp): m for m in odoms}
    for m in tfs[-5:]:
        odom_tf = next(t for t in m.transforms if t.child_frame_id == "base_footprint")
        assert odom_tf.header.frame_id == "odom"
        o = by_stamp[cv.time_from_msg(odom_tf.header.stamp)]
        assert o.pose.pose.position.x == pytest.approx(odom_tf.transform.translation.x)
        assert o.pose.pose.position.y == pytest.approx(odom_tf.transform.translation.y)
    assert odoms[-1].pose.pose.position.x - odoms[0].pose.pose.position.x > 0.05
    assert odoms[-1].twist.twist.linear.x > 0
    # odom starts at the world origin: without odometry noise odom -> base is the true pose
    last = odoms[-1]
    true_pose = truth_at[round(cv.time_from_msg(last.header.stamp) / 0.1)]
    assert last.pose.pose.position.x == pytest.approx(true_pose[0] * 0.5, abs=1e-9)
    assert last.pose.pose.position.y == pytest.approx(true_pose[1] * 0.5, abs=1e-9)
    assert odoms[-1].header.frame_id == "odom" and odoms[-1].child_frame_id == "base_footprint"
    # map -> odom present (simulated SLAM owns map); static chain base_footprint->base_link->scan
    assert any(
        t.header.frame_id == "map" and t.child_frame_id == "odom" for m in tfs for t in m.transforms
    )
    chain = {(t.header.frame_id, t.child_frame_id) for t in statics[-1].transforms}
    assert chain == {("base_footprint", "base_link"), ("base_link", "base_scan")}
    # global tf: world -> robot<i>/odom -> robot<i>/base_footprint, consistent with the truth
    pairs = {(t.header.frame_id, t.child_frame_id) for t in global_tf[-1].transforms}
    assert ("world", "robot1/odom") in pairs and ("robot1/odom", "robot1/base_footprint") in pairs
    # clock follows the ticks
    assert h.spin_until(
        lambda: clocks and abs(cv.time_from_msg(clocks[-1].clock) - sim.sim_time) < 1e-9, 5.0
    )
    # maps: geometry in metres, origin at the map centre
    g = truth[-1]
    assert (g.info.width, g.info.height, g.info.resolution) == (30, 14, 0.5)
    assert (g.info.origin.position.x, g.info.origin.position.y) == (-7.5, -3.5)
    assert g.header.frame_id == "world"
    np.testing.assert_array_equal(cv.occupancy_from_msg(g) == 100, sim.walls)
    assert maps[-1].header.frame_id == "map" and -1 in cv.occupancy_from_msg(maps[-1])
    assert explo and cover and markers
    assert stats[-1].number_of_robots == 2 and 0 < stats[-1].exploration_percent < 100


@pytest.mark.parametrize("robots_block", [True, False])
def test_a_robot_in_front_of_the_lidar_shows_in_scan_unless_switched_off(harness, robots_block):
    # robot0 at grid (5.5, 7.0) facing +x, robot1 3 tiles ahead facing it (radius 0.3): each
    # one's forward ray (k = 90) stops at 2.7 tiles = 1.35 m; with robots_block_rays off they
    # reach no wall within the 7-tile range (no return: +inf).
    cfg = SimConfig(
        number_of_robots=2,
        world=WorldConfig(tile_size=0.5),
        lidar=LidarConfig(robots_block_rays=robots_block),
    )
    sim = Simulation(cfg, world=room())
    place(sim, [(5.5, 7.0), (8.5, 7.0)], [0.0, math.pi])
    h = harness(sim, start_paused=True)
    scans0 = h.collect(LaserScan, "/robot0/scan", DEEP_BEST_EFFORT)
    scans1 = h.collect(LaserScan, "/robot1/scan", DEEP_BEST_EFFORT)
    for _ in range(50):  # until discovery lets scans through (the robots stand still)
        h.step(settle=0.05)
        if scans0 and scans1:
            break
    assert scans0 and scans1, "no scan arrived"
    ahead0 = scans0[-1].ranges[90]
    ahead1 = scans1[-1].ranges[90]  # robot1 faces robot0
    if robots_block:
        assert ahead0 == pytest.approx(1.35, abs=1e-6) and ahead1 == pytest.approx(1.35, abs=1e-6)
        # rays 20 degrees off miss the disc and reach farther
        assert scans0[-1].ranges[80] > 1.5 and scans0[-1].ranges[100] > 1.5
    else:
        assert math.isinf(ahead0) and math.isinf(ahead1)


def test_cmd_vel_drives_with_the_maes_profile_rotates_in_place_and_times_out(harness):
    cfg = SimConfig(number_of_robots=1)
    sim = Simulation(cfg, world=room())
    place(sim, [[5.5, 7.0]])
    h = harness(sim, start_paused=True)
    pub = h.client.create_publisher(Twist, "/robot0/cmd_vel", DEFAULT_QOS)
    assert h.spin_until(lambda: pub.get_subscription_count() > 0, 10.0)

    def drive(linear, angular, ticks):
        """Publish the command every 2 ticks, as a controller at 5 Hz would."""
        for k in range(ticks):
            if k % 2 == 0:
                h.node._driven[0] = False
                pub.publish(Twist(linear=Vector3(x=linear), angular=Vector3(z=angular)))
                assert h.spin_until(lambda: h.node._driven[0], 5.0)
            h.step(1)

    drive(3.0, 0.0, 4)
    assert sim.velocities[0, 0] == pytest.approx(1.5, rel=0.05)  # half top speed at 4 ticks
    assert sim.poses[0, 2] == 0.0  # no turning while driving
    x_before = sim.poses[0, 0]
    drive(0.0, 1.0, 12)
    assert sim.poses[0, 2] > 0.3  # turned counter-clockwise...
    assert sim.poses[0, 0] - x_before < 0.25  # ...in place, after braking from 1.5 tiles/s
    assert sim.velocities[0, 0] == 0.0
    # no fresh command for longer than cmd_vel_timeout (0.5 s = 5 ticks): the robot stops
    h.step(15)
    assert sim.statuses[0] == "Idle" and np.allclose(sim.velocities[0], 0.0)


def test_broadcast_reaches_robots_in_range_next_tick_and_tags_are_read(harness):
    rc = RobotConstraints(
        broadcast_range=5.0, broadcast_blocked_by_walls=True, environment_tag_read_range=2.0
    )
    sim = Simulation(SimConfig(number_of_robots=4, robot_constraints=rc), world=room(column=20))
    # robot1 in range, robot2 too far, robot3 close but behind the wall at column 20
    place(sim, [[15.5, 7.0], [18.5, 7.0], [4.5, 3.0], [22.5, 7.0]])
    h = harness(sim, start_paused=True)
    states = {i: h.collect(State, f"/robot{i}/maes_state", STATE_QOS) for i in range(4)}
    res = h.call(BroadcastToAll, "/robot0/maes_broadcast", BroadcastToAll.Request(msg="hi"))
    assert res.result is True
    res = h.call(DepositTag, "/robot0/maes_deposit_tag", DepositTag.Request(msg="was here"))
    assert res.result is True
    h.step(1)
    assert h.spin_until(lambda: all(s and s[-1].tick == sim.tick for s in states.values()))
    got = {i: [(b.msg, b.sender) for b in s[-1].incoming_broadcast_msgs] for i, s in states.items()}
    assert got == {0: [], 1: [("hi", "robot0")], 2: [], 3: []}
    tags0 = states[0][-1].tags_nearby
    assert [(t.msg, t.sender) for t in tags0] == [("was here", "robot0")]
    assert tags0[0].pos.x == pytest.approx(15.5 - 15.0)
    assert states[1][-1].tags_nearby == []  # 3 tiles away, read range 2


def test_pause_freezes_time_and_robots_and_resume_continues(harness):
    sim = Simulation(SimConfig(number_of_robots=1), world=room())
    h = harness(sim, real_time_factor=4.0)
    clocks = h.collect(Clock, "/clock", DEFAULT_QOS)
    sim.move_continuous(0)
    assert h.spin_until(lambda: sim.tick >= 5, 10.0)
    assert h.call(Trigger, "/maes/pause", Trigger.Request()).success
    tick, pose = sim.tick, sim.poses.copy()
    h.spin_for(0.6)
    assert sim.tick == tick and np.array_equal(sim.poses, pose)
    n_clocks = len(clocks)
    h.spin_for(0.3)
    assert len(clocks) == n_clocks  # no clock while paused
    assert not h.call(Trigger, "/maes/pause", Trigger.Request()).success  # already paused
    assert h.call(Trigger, "/maes/resume", Trigger.Request()).success
    assert h.spin_until(lambda: sim.tick >= tick + 4, 10.0)
    assert sim.poses[0, 0] > pose[0, 0]


def test_unpaced_node_still_serves_cmd_vel_and_services(harness):
    sim = Simulation(SimConfig(number_of_robots=1), world=room())
    h = harness(sim, real_time_factor=0.0)  # the stepping timer is always ready
    pub = h.client.create_publisher(Twist, "/robot0/cmd_vel", DEFAULT_QOS)
    assert h.spin_until(lambda: pub.get_subscription_count() > 0, 10.0)
    pub.publish(Twist(linear=Vector3(x=1.0)))
    assert h.spin_until(lambda: h.node._driven[0], 10.0), "cmd_vel starved by the timer"
    res = h.call(BroadcastToAll, "/robot0/maes_broadcast", BroadcastToAll.Request(msg="x"))
    assert res.result is True


def test_bad_requests_are_refused_and_the_node_keeps_publishing(harness):
    sim = Simulation(SimConfig(number_of_robots=2), world=room())
    h = harness(sim, real_time_factor=2.0)
    states = h.collect(State, "/robot1/maes_state", STATE_QOS)
    call = h.call
    empty = call(BroadcastToAll, "/robot0/maes_broadcast", BroadcastToAll.Request(msg=""))
    assert empty.result is False
    big = "x" * (MAX_MESSAGE_BYTES + 1)
    assert (
        call(BroadcastToAll, "/robot0/maes_broadcast", BroadcastToAll.Request(msg=big)).result
        is False
    )
    assert call(DepositTag, "/robot0/maes_deposit_tag", DepositTag.Request(msg=big)).result is False
    # a burst of 1000 requests: every one is answered; at most the per-tick budget is accepted
    cli = h.client.create_client(BroadcastToAll, "/robot0/maes_broadcast", qos_profile=DEEP)
    assert cli.wait_for_service(timeout_sec=5)
    tick0, t0, n_states0 = sim.tick, time.monotonic(), len(states)
    futures = [cli.call_async(BroadcastToAll.Request(msg=f"m{k}")) for k in range(1000)]
    assert h.spin_until(lambda: all(f.done() for f in futures), 60.0)
    accepted = sum(f.result().result for f in futures)
    ticks_during = sim.tick - tick0 + 1
    assert 0 < accepted <= MAX_BROADCASTS_PER_TICK * ticks_during
    h.spin_for(1.0)
    elapsed = time.monotonic() - t0
    # the node kept stepping and publishing through the burst (loose bound: 2x real time asked)
    assert sim.tick - tick0 >= 0.5 * elapsed * 2.0 / 0.1 * 0.5
    assert len(states) > n_states0
    assert np.isfinite(sim.poses).all()


def test_end_criteria_finish_the_node_and_write_results(harness, tmp_path):
    cfg = SimConfig(
        number_of_robots=1,
        end_criteria=EndCriteria(tick=5),
        global_settings=GlobalSettings(should_write_csv_results=True),
    )
    sim = Simulation(cfg, world=room())
    h = harness(sim, real_time_factor=0.0, results_dir=str(tmp_path))
    stats = h.collect(Stats, "/maes/stats", DEFAULT_QOS)
    assert h.spin_until(lambda: h.node.done, 20.0)
    assert sim.tick == 5
    assert h.spin_until(lambda: any(s.finished for s in stats), 5.0)
    assert (h.node.results_path / "statistics.csv").read_text().splitlines()[-1].startswith("5,")


def test_console_script_runs_and_reports_a_bad_config_clearly(tmp_path):
    exe = REPO / "install" / "maes_sim" / "lib" / "maes_sim" / "maes_sim_node"
    assert exe.exists(), f"workspace not built: {exe} missing (make build)"
    bad = tmp_path / "bad.yaml"
    bad.write_text("number_of_robots: 3\nrobot_constraints:\n  broadcast_rnage: 3\n")
    out = subprocess.run(
        [str(exe), "--ros-args", "-p", f"config_file:={bad}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )
    assert out.returncode == 2
    assert "broadcast_rnage" in out.stderr and "broadcast_range" in out.stderr
    good = tmp_path / "good.yaml"
    good.write_text(
        "number_of_robots: 2\nend_criteria:\n  tick: 20\n"
        f"global_settings:\n  statistics_result_path: {tmp_path}\n"
        "  should_write_csv_results: true\n"
    )
    out = subprocess.run(
        [str(exe), "--ros-args", "-p", f"config_file:={good}", "-p", "real_time_factor:=0.0"],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert out.returncode == 0, out.stderr
    assert "run finished at tick 20" in out.stderr + out.stdout
    assert list(tmp_path.glob("*/statistics.csv"))


def test_non_finite_cmd_vel_is_dropped_and_the_last_good_command_holds(harness):
    sim = Simulation(SimConfig(number_of_robots=1), world=room())
    place(sim, [[5.5, 7.0]])
    h = harness(sim, start_paused=True)
    pub = h.client.create_publisher(Twist, "/robot0/cmd_vel", DEFAULT_QOS)
    assert h.spin_until(lambda: pub.get_subscription_count() > 0, 10.0)
    pub.publish(Twist(linear=Vector3(x=1.0)))
    assert h.spin_until(lambda: h.node._driven[0], 5.0)
    for bad in (float("nan"), float("inf")):
        pub.publish(Twist(linear=Vector3(x=bad), angular=Vector3(z=0.5)))
    h.spin_for(0.3)
    h.step(3)
    assert np.isfinite(sim.poses).all()
    assert sim.velocities[0, 0] > 0 and sim.velocities[0, 1] == 0.0  # still the good command
