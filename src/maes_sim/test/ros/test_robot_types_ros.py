"""Robot types on the real ROS topics: each robot's scan (ray count, angles, range), its speeds
measured from odometry, an omnidirectional robot driven sideways by ``cmd_vel.linear.y``, sizes
in collisions, and the type named in ``maes_state``."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from geometry_msgs.msg import Twist, Vector3  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import LaserScan  # noqa: E402

from maes_interfaces.msg import State  # noqa: E402
from maes_sim.core import Simulation, WorldMap, config_from_dict  # noqa: E402
from maes_sim.ros.sim_node import DEFAULT_QOS  # noqa: E402

DEEP = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
DEEP_BEST_EFFORT = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)
TILE = 0.5

TEAM = {
    "world": {"tile_size": TILE},
    "robot_types": {
        "scout": {
            "agent_relative_size": 0.4,
            "relative_move_speed": 1.5,
            "motion": {"model": "omnidirectional"},
            "lidar": {"rays": 90, "field_of_view_deg": 120, "range": 5.0},
        },
        "diff": {
            "agent_relative_size": 0.8,
            "motion": {"model": "differential_drive"},
            "lidar": {"rays": 360},
        },
    },
    "team": [
        {"type": "scout", "count": 1},
        {"type": "diff", "count": 1},
        {"type": "default", "count": 1},
    ],
}


def room(h=20, w=40):
    walls = np.zeros((h, w), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    return WorldMap(walls=walls, name="room")


def place(sim, grid_xy, headings):
    xy = np.asarray(grid_xy, dtype=float) - np.array([sim.shape[1], sim.shape[0]]) / 2
    sim.place_robots(np.column_stack([xy, np.asarray(headings, dtype=float)]))


def test_each_robot_scans_with_its_types_lidar_and_states_name_the_type(harness):
    sim = Simulation(config_from_dict(TEAM), world=room())
    place(sim, [(10.0, 10.0), (20.0, 10.0), (25.0, 10.0)], [0.0, 0.0, 0.0])
    h = harness(sim, start_paused=True)
    scans = [h.collect(LaserScan, f"/robot{i}/scan", DEEP_BEST_EFFORT) for i in range(3)]
    states = [h.collect(State, f"/robot{i}/maes_state", DEEP) for i in range(3)]
    for _ in range(50):
        h.step(settle=0.05)
        if all(scans) and all(states):
            break
    assert all(scans) and all(states), "no scan or state arrived"
    expected = [  # rays, angle_min, angle_max, range_max (m)
        (90, -math.radians(60), math.radians(60), 5.0 * TILE),
        (360, -math.pi, math.pi - 2 * math.pi / 360, 7.0 * TILE),
        (180, -math.pi, math.pi - 2 * math.pi / 180, 7.0 * TILE),
    ]
    for i, (rays, lo, hi, reach) in enumerate(expected):
        s = scans[i][-1]
        assert len(s.ranges) == rays
        assert s.angle_min == pytest.approx(lo, abs=1e-6)
        assert s.angle_max == pytest.approx(hi, abs=1e-5)
        assert s.angle_min + (rays - 1) * s.angle_increment == pytest.approx(s.angle_max)
        assert s.range_max == pytest.approx(reach)
        core_ranges, core_hit = sim.lidar_of(i)
        got = np.asarray(s.ranges)
        np.testing.assert_allclose(got[core_hit], core_ranges[core_hit] * TILE, rtol=1e-6)
    # the scout looks ahead (+x) only: the diff robot 10 tiles ahead is beyond its 5-tile range
    # and the wall behind it is out of its view; the diff robot's ray 180 (straight ahead)
    # stops at the default robot's body: 5 tiles less its radius 0.3
    assert np.isinf(np.asarray(scans[0][-1].ranges)).all()
    assert scans[1][-1].ranges[180] == pytest.approx((5.0 - 0.3) * TILE, rel=1e-6)
    assert [s[-1].robot_type for s in states] == ["scout", "diff", "default"]


def _drive(h, pubs, commands, ticks):
    for k in range(ticks):
        if k % 2 == 0:
            for i, (pub, twist) in enumerate(zip(pubs, commands, strict=True)):
                if twist is None:
                    continue
                h.node._driven[i] = False
                pub.publish(twist)
            assert h.spin_until(
                lambda: all(h.node._driven[i] for i, t in enumerate(commands) if t is not None),
                5.0,
            )
        h.step(1)


def test_speeds_from_odometry_and_sideways_motion_of_the_omnidirectional_robot(harness):
    sim = Simulation(config_from_dict(TEAM), world=room())
    place(sim, [(5.0, 5.0), (5.0, 10.0), (5.0, 15.0)], [0.0, 0.0, 0.0])
    h = harness(sim, start_paused=True)
    odoms = [h.collect(Odometry, f"/robot{i}/odom", DEEP) for i in range(3)]
    pubs = [h.client.create_publisher(Twist, f"/robot{i}/cmd_vel", DEFAULT_QOS) for i in range(3)]
    assert h.spin_until(lambda: all(p.get_subscription_count() for p in pubs), 10.0)
    fast = Twist(linear=Vector3(x=100.0))  # beyond every top speed: each type's own limit
    _drive(h, pubs, [fast, fast, fast], 40)
    assert h.spin_until(lambda: all(len(o) >= 40 for o in odoms), 10.0)
    speeds = [o[-1].twist.twist.linear.x for o in odoms]
    # 3 tiles/s x relative_move_speed x 0.5 m/tile
    np.testing.assert_allclose(speeds, [2.25, 1.5, 1.5], rtol=1e-3)
    # the same from the odometry poses over the last 10 ticks (1 s)
    for i, top in enumerate([2.25, 1.5, 1.5]):
        a, b = odoms[i][-11].pose.pose.position, odoms[i][-1].pose.pose.position
        assert math.hypot(b.x - a.x, b.y - a.y) == pytest.approx(top, rel=5e-3)  # still rising

    # sideways: only the omnidirectional scout follows linear.y
    stop = Twist()
    _drive(h, pubs, [stop, stop, stop], 20)
    assert h.spin_until(lambda: all(len(o) >= 60 for o in odoms), 10.0)
    before = [o[-1].pose.pose for o in odoms]
    side = Twist(linear=Vector3(y=1.0))  # 1 m/s to the robot's left
    _drive(h, pubs, [side, side, side], 30)
    assert h.spin_until(lambda: all(len(o) >= 90 for o in odoms), 10.0)
    after = [o[-1].pose.pose for o in odoms]
    dy = [a.position.y - b.position.y for a, b in zip(after, before, strict=True)]
    dx = [a.position.x - b.position.x for a, b in zip(after, before, strict=True)]
    assert dy[0] > 2.0 and abs(dx[0]) < 1e-9  # 3 s at up to 1 m/s, heading kept
    assert after[0].orientation.z == pytest.approx(before[0].orientation.z, abs=1e-12)
    assert dy[1:] == [0.0, 0.0] and dx[1:] == [0.0, 0.0]  # the others drop it


def test_robots_of_different_sizes_collide_at_the_sum_of_their_radii(harness):
    sim = Simulation(config_from_dict(TEAM), world=room())
    # the scout (radius 0.2) and the diff robot (radius 0.4) face each other 4 tiles apart
    place(sim, [(10.0, 10.0), (14.0, 10.0), (30.0, 10.0)], [0.0, math.pi, 0.0])
    h = harness(sim, start_paused=True)
    odoms = [h.collect(Odometry, f"/robot{i}/odom", DEEP) for i in range(2)]
    states = [h.collect(State, f"/robot{i}/maes_state", DEEP) for i in range(2)]
    pubs = [h.client.create_publisher(Twist, f"/robot{i}/cmd_vel", DEFAULT_QOS) for i in range(2)]
    assert h.spin_until(lambda: all(p.get_subscription_count() for p in pubs), 10.0)
    slow = Twist(linear=Vector3(x=0.5))
    _drive(h, pubs, [slow, slow], 40)
    assert h.spin_until(lambda: all(len(o) >= 40 for o in odoms) and all(states), 10.0)
    # odom starts at the world origin (no odometry noise): odom poses are world poses
    a, b = (o[-1].pose.pose.position for o in odoms)
    gap_tiles = math.hypot(a.x - b.x, a.y - b.y) / TILE
    assert gap_tiles == pytest.approx(0.2 + 0.4, abs=0.01)
    assert any(s.colliding for s in states[0]) and any(s.colliding for s in states[1])


def test_markers_draw_each_robot_at_its_size():
    from maes_sim.ros.conversions import time_to_msg
    from maes_sim.ros.markers import simulation_markers

    poses = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [4.0, 0.0, 0.0]])
    radii = np.array([0.1, 0.2, 0.1])
    out = simulation_markers(
        poses, radii, np.zeros(3, dtype=bool), np.empty((0, 2)), None, time_to_msg(0.0)
    )
    spheres = [m for m in out.markers if m.type == m.SPHERE_LIST]
    drawn = {(m.scale.x, tuple(p.x for p in m.points)) for m in spheres}
    assert drawn == {(0.2, (0.0, 4.0)), (0.4, (2.0,))}  # diameters; one list per size
    assert len({m.id for m in spheres}) == 2
