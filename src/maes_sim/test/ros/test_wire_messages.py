"""Messages written as bytes (``maes_sim.ros.wire``) read back, by rclpy's deserializer and by
rosbags' own CDR reader, as the messages they stand for: any message compiled into a template,
and the simulator's ``tf``, ``odom``, ``scan`` and ``/tf`` of a moving, drifting mixed team."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import Point  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import LaserScan  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402

from maes_common.contract import robot_namespace  # noqa: E402
from maes_interfaces.msg import State  # noqa: E402
from maes_sim.core import Simulation, WorldMap, config_from_dict  # noqa: E402
from maes_sim.ros import conversions as cv  # noqa: E402
from maes_sim.ros.messages import MessageFactory  # noqa: E402
from maes_sim.ros.wire import WireTemplate  # noqa: E402


def _round_trip(msg):
    """``msg`` as a reader gets it (float32 fields rounded)."""
    return deserialize_message(serialize_message(msg), type(msg))


def _messages(rng):
    odom = cv.odometry_to_msg(tuple(rng.normal(size=3)), 0.3, -0.2, Time(sec=4, nanosec=9))
    odom.pose.covariance = rng.normal(size=36)
    scan = cv.scan_to_msg(rng.uniform(0, 9, 37), Time(sec=1), "base_scan", 0.5, 9.0, 0.1)
    scan.intensities = rng.uniform(0, 1, 37).tolist()
    tf = TFMessage(
        transforms=[
            cv.transform_to_msg(tuple(rng.normal(size=3)), "odom", f"frame_{k}" * k, Time(sec=k))
            for k in range(3)
        ]
    )
    grid = cv.occupancy_to_msg(
        rng.integers(-1, 101, (3, 5)).astype(np.int8), Time(sec=2), "map", 0.5, (-1.0, 2.0)
    )
    marker = Marker(ns="näme", id=7, text="hello", mesh_resource="x")
    marker.points = [Point(x=float(v), y=1.0, z=2.0) for v in rng.normal(size=4)]
    state = State(tick=3, status="exploring", colliding=True, heading=1.5, robot_type="scout")
    return [odom, scan, tf, grid, marker, state, LaserScan(), TFMessage()]


@pytest.mark.parametrize("seed", range(3))
def test_a_template_without_slots_is_the_message(seed):
    for msg in _messages(np.random.default_rng(seed)):
        data = WireTemplate(msg, []).pack()
        assert len(data) == len(serialize_message(msg)), type(msg).__name__
        assert deserialize_message(data, type(msg)) == _round_trip(msg), type(msg).__name__


def test_slots_fill_the_fields_they_name():
    scan = cv.scan_to_msg(np.zeros(4), Time(), "base_scan", 1.0, 5.0, 0.1)
    template = WireTemplate(scan, ["header.stamp.sec", "ranges", "header.stamp.nanosec"])
    ranges = np.array([1.0, 2.5, np.inf, 0.25], dtype="<f4")
    got = deserialize_message(template.pack(12, ranges.tobytes(), 34), LaserScan)
    assert (got.header.stamp.sec, got.header.stamp.nanosec) == (12, 34)
    assert list(got.ranges) == [1.0, 2.5, math.inf, 0.25]
    assert got.header.frame_id == "base_scan" and got.range_max == 5.0
    with pytest.raises(ValueError, match="8 bytes for a field of 16"):
        template.pack(1, ranges[:2].tobytes(), 2)  # a scan keeps its number of rays
    with pytest.raises(ValueError, match="no field header.stamp.secs"):
        WireTemplate(scan, ["header.stamp.secs"])
    with pytest.raises(ValueError, match="cannot vary"):
        WireTemplate(scan, ["header.frame_id"])


TEAM = {
    "world": {"tile_size": 0.5},
    "motion": {"odometry_noise": 0.05, "heading_noise": 0.05},
    "robot_types": {
        "scout": {"lidar": {"rays": 90, "field_of_view_deg": 120, "range": 5.0}},
        "diff": {"motion": {"model": "differential_drive"}, "lidar": {"rays": 360}},
    },
    "team": [
        {"type": "scout", "count": 2},
        {"type": "diff", "count": 1},
        {"type": "default", "count": 1},
    ],
}


def _moving_team() -> Simulation:
    walls = np.zeros((24, 40), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    walls[12, 5:30] = True
    sim = Simulation(config_from_dict(TEAM), world=WorldMap(walls=walls, name="room"))
    rng = np.random.default_rng(0)
    for _ in range(30):  # drive and turn, so odometry drifts from the truth
        for i in range(sim.n_robots):
            sim.set_velocity(i, float(rng.uniform(0, 1)), float(rng.uniform(-1, 1)))
        sim.step()
    return sim


def test_the_simulators_tf_odom_scan_and_global_tf_are_the_messages_they_stand_for():
    sim = _moving_team()
    factory = MessageFactory(sim)
    frame = factory.frame()
    stamp, tile = frame.stamp, factory.tile
    assert stamp.sec == 3 and factory.publish_slam_map
    assert not np.allclose(frame.odom_rel[:, :2], sim.poses[:, :2] * tile)  # odometry drifted
    for i in range(sim.n_robots):
        tf = deserialize_message(factory.robot_tf(frame, i), TFMessage)
        expected = TFMessage(
            transforms=[
                cv.transform_to_msg(frame.odom_rel[i], "odom", "base_footprint", stamp),
                cv.transform_to_msg(frame.map_to_odom[i], "map", "odom", stamp),
            ]
        )
        assert tf == expected
        vx, wz = frame.observation.velocities[i, :2]
        odom = deserialize_message(factory.odom(frame, i), Odometry)
        assert odom == cv.odometry_to_msg(frame.odom_rel[i], vx, wz, stamp)
        rays, fov = sim.lidar_geometry(i)
        ranges, hit = sim.lidar_of(i)
        scan = deserialize_message(factory.scan(frame, i), LaserScan)
        want = cv.scan_to_msg(
            ranges, stamp, "base_scan", tile, sim.team.types[i].lidar_range, 0.1, hit, fov
        )
        assert len(scan.ranges) == rays and np.isinf(scan.ranges).any() == (not hit.all())
        assert scan == _round_trip(want)
    everyone = deserialize_message(factory.global_tf(frame), TFMessage)
    assert len(everyone.transforms) == 2 * sim.n_robots
    for i in range(sim.n_robots):
        odom_frame = f"{robot_namespace(i)}/odom"
        assert everyone.transforms[2 * i] == cv.transform_to_msg(
            frame.world_to_odom[i], "world", odom_frame, stamp
        )
        assert everyone.transforms[2 * i + 1] == cv.transform_to_msg(
            frame.odom_rel[i], odom_frame, f"{robot_namespace(i)}/base_footprint", stamp
        )


def test_rosbags_reads_the_simulators_bytes():
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    sim = _moving_team()
    factory = MessageFactory(sim)
    frame = factory.frame()
    scan = store.deserialize_cdr(factory.scan(frame, 0), "sensor_msgs/msg/LaserScan")
    ranges, hit = sim.lidar_of(0)
    assert scan.header.frame_id == "base_scan" and len(scan.ranges) == 90
    np.testing.assert_array_equal(
        scan.ranges, np.where(hit, ranges * factory.tile, np.inf).astype(np.float32)
    )
    odom = store.deserialize_cdr(factory.odom(frame, 2), "nav_msgs/msg/Odometry")
    assert (odom.pose.pose.position.x, odom.pose.pose.position.y) == tuple(frame.odom_rel[2, :2])
    assert odom.child_frame_id == "base_footprint"
    tf = store.deserialize_cdr(factory.global_tf(frame), "tf2_msgs/msg/TFMessage")
    assert [t.child_frame_id for t in tf.transforms[:2]] == ["robot0/odom", "robot0/base_footprint"]
