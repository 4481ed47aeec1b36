"""The markers written as bytes (``simulation_markers_wire``): two readers we did not write,
rclpy's deserializer and rosbags' own CDR reader, find in them what the arrays say: robots at
their poses in their colours, headings, tags and each communication link once."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from builtin_interfaces.msg import Time  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from maes_sim.ros.markers import (  # noqa: E402
    NS_HEADINGS,
    NS_LINKS,
    NS_OBSTACLES,
    NS_ROBOTS,
    NS_TAGS,
    obstacle_markers_wire,
    simulation_markers_wire,
)

POSES = np.array([[1.0, 2.0, 0.0], [-3.0, 0.5, math.pi / 2], [4.0, -1.0, math.pi]])
RADII = np.array([0.2, 0.3, 0.2])
HIT = np.array([False, True, False])
TAGS = np.array([[0.5, 0.5], [-1.0, 2.0]])
LINKS = (np.array([0, 1, 2, 0]), np.array([1, 0, 0, 2]))  # 0-1 both ways, 2->0, 0->2
OBSTACLES = np.array([[0.0, 1.0, 2.0, 0.5, 0.5], [1.0, -2.0, 0.0, 1.0, 0.25]])
STAMP = Time(sec=12, nanosec=345_000_000)


def _wire() -> bytes:
    return simulation_markers_wire(
        POSES, RADII, HIT, TAGS, LINKS, STAMP, "world", obstacles_m=OBSTACLES
    )


def _by_ns(markers) -> dict:
    out: dict = {}
    for m in markers:
        out.setdefault(m.ns, []).append(m)
    return out


def test_rclpy_reads_the_markers_the_arrays_describe():
    data = _wire()
    msg = deserialize_message(data, MarkerArray)
    # rclpy writes the same message in as many bytes (CDR's layout; only padding may differ)
    assert len(serialize_message(msg)) == len(data)
    ns = _by_ns(msg.markers)
    assert set(ns) == {NS_ROBOTS, NS_HEADINGS, NS_TAGS, NS_LINKS, NS_OBSTACLES}
    for m in msg.markers:
        assert (m.header.stamp.sec, m.header.stamp.nanosec) == (12, 345_000_000)
        assert m.header.frame_id == "world" and m.action == Marker.ADD
        assert m.pose.orientation.w == 1.0

    small, large = sorted(ns[NS_ROBOTS], key=lambda m: m.scale.x)  # one sphere list per size
    assert small.type == Marker.SPHERE_LIST and (small.scale.x, large.scale.x) == (0.4, 0.6)
    assert [(p.x, p.y, p.z) for p in small.points] == [(1.0, 2.0, 0.0), (4.0, -1.0, 0.0)]
    assert [(p.x, p.y) for p in large.points] == [(-3.0, 0.5)]
    red = large.colors[0]  # the colliding robot
    blue = small.colors[0]
    assert red.r > 0.8 and red.b < 0.2 and blue.b > 0.8 and blue.r < 0.2

    (heads,) = ns[NS_HEADINGS]
    assert heads.type == Marker.LINE_LIST and len(heads.points) == 6
    for i, (x, y, yaw) in enumerate(POSES):
        start, end = heads.points[2 * i], heads.points[2 * i + 1]
        assert (start.x, start.y) == (x, y)
        assert math.hypot(end.x - x, end.y - y) == pytest.approx(1.2 * RADII[i])
        assert math.atan2(end.y - y, end.x - x) == pytest.approx(
            math.atan2(math.sin(yaw), math.cos(yaw))
        )

    (tags,) = ns[NS_TAGS]
    assert [(p.x, p.y) for p in tags.points] == [(0.5, 0.5), (-1.0, 2.0)]

    (links,) = ns[NS_LINKS]  # each undirected pair once, from the lower index
    ends = [(p.x, p.y, p.z) for p in links.points]
    assert ends == [(1.0, 2.0, 0.05), (-3.0, 0.5, 0.05), (1.0, 2.0, 0.05), (4.0, -1.0, 0.05)]

    disc, box = ns[NS_OBSTACLES]
    assert (disc.type, disc.id, box.type, box.id) == (Marker.CYLINDER, 0, Marker.CUBE, 1)
    assert (box.pose.position.x, box.scale.x, box.scale.y) == (-2.0, 2.0, 0.5)


def test_rosbags_own_cdr_reader_agrees():
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    theirs = store.deserialize_cdr(_wire(), "visualization_msgs/msg/MarkerArray")
    ours = deserialize_message(_wire(), MarkerArray)
    assert len(theirs.markers) == len(ours.markers) == 2 + 3 + 2
    for a, b in zip(theirs.markers, ours.markers, strict=True):
        assert (a.ns, a.id, a.type, a.header.frame_id) == (b.ns, b.id, b.type, b.header.frame_id)
        assert (a.scale.x, a.scale.y, a.scale.z) == (b.scale.x, b.scale.y, b.scale.z)
        assert [(p.x, p.y, p.z) for p in a.points] == [(p.x, p.y, p.z) for p in b.points]
        assert [(c.r, c.g, c.b, c.a) for c in a.colors] == [(c.r, c.g, c.b, c.a) for c in b.colors]
        assert (a.text, a.mesh_resource, a.mesh_use_embedded_materials) == ("", "", False)


@pytest.mark.parametrize("robots", [0, 1, 7])
def test_empty_and_single_families_are_well_formed(robots):
    rng = np.random.default_rng(robots)
    poses = rng.normal(0, 5, (robots, 3))
    links = (np.arange(robots), np.arange(robots)[::-1])
    data = simulation_markers_wire(
        poses, 0.25, np.zeros(robots, bool), np.empty((0, 2)), links, Time()
    )
    msg = deserialize_message(data, MarkerArray)
    assert len(serialize_message(msg)) == len(data)
    ns = _by_ns(msg.markers)
    assert len(ns[NS_ROBOTS][0].points) == robots and len(ns[NS_TAGS][0].points) == 0
    assert len(ns[NS_LINKS][0].points) == 2 * (robots // 2)
    assert NS_OBSTACLES not in ns


def test_obstacles_alone():
    msg = deserialize_message(obstacle_markers_wire(OBSTACLES, STAMP, "map"), MarkerArray)
    assert [(m.ns, m.id, m.header.frame_id) for m in msg.markers] == [
        (NS_OBSTACLES, 0, "map"),
        (NS_OBSTACLES, 1, "map"),
    ]
    assert msg.markers[0].pose.position.z == pytest.approx(0.25)
    assert (
        deserialize_message(obstacle_markers_wire(np.empty((0, 5)), STAMP), MarkerArray).markers
        == []
    )
