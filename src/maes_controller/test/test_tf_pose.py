"""Planar tf composition without tf2_ros (no ROS needed)."""

from __future__ import annotations

import doctest
import math
from types import SimpleNamespace as NS

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from maes_controller import tf_pose
from maes_controller.tf_pose import (
    FrameTree,
    SmoothedTransform,
    compose,
    inverse,
    transform_from_msg,
    yaw_from_quaternion,
)

coords = st.floats(-50.0, 50.0)
angles = st.floats(-math.pi, math.pi)
poses = st.tuples(coords, coords, angles)


def tf_msg(parent, child, x, y, yaw, sec=0, nanosec=0):
    return NS(
        header=NS(frame_id=parent, stamp=NS(sec=sec, nanosec=nanosec)),
        child_frame_id=child,
        transform=NS(
            translation=NS(x=x, y=y, z=0.0),
            rotation=NS(x=0.0, y=0.0, z=math.sin(yaw / 2), w=math.cos(yaw / 2)),
        ),
    )


def as_matrix(p):
    c, s = math.cos(p[2]), math.sin(p[2])
    return np.array([[c, -s, p[0]], [s, c, p[1]], [0.0, 0.0, 1.0]])


@given(poses, poses)
def test_compose_is_matrix_product(a, b):
    got = as_matrix(compose(a, b))
    np.testing.assert_allclose(got, as_matrix(a) @ as_matrix(b), atol=1e-9)


@given(poses)
def test_inverse_undoes_compose(a):
    x, y, yaw = compose(inverse(a), a)
    assert abs(x) < 1e-9 and abs(y) < 1e-9 and abs(math.sin(yaw)) < 1e-12


@given(angles)
def test_yaw_of_a_z_rotation(yaw):
    got = yaw_from_quaternion(0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))
    assert math.isclose(math.cos(got), math.cos(yaw), abs_tol=1e-9)
    assert math.isclose(math.sin(got), math.sin(yaw), abs_tol=1e-9)


def test_sim_style_messages_give_the_map_pose():
    # The simulator's per-tick message: odom -> base_footprint and map -> odom together.
    tree = FrameTree()
    msg = NS(
        transforms=[
            tf_msg("odom", "base_footprint", 1.0, 0.0, math.pi / 2, sec=2),
            tf_msg("map", "odom", -3.0, 4.0, math.pi / 2, sec=2, nanosec=10),
        ]
    )
    assert tree.update(msg) == 2
    x, y, yaw = tree.lookup("map", "base_footprint")
    assert (x, y) == pytest.approx((-3.0, 5.0)) and yaw == pytest.approx(math.pi)
    assert tree.stamp("map", "base_footprint") == pytest.approx(2.0)
    assert tree.lookup("odom", "base_footprint") == pytest.approx((1.0, 0.0, math.pi / 2))


def test_transforms_from_separate_messages_combine_and_update():
    # Full stack: slam_toolbox publishes map -> odom, the simulator odom -> base_footprint.
    tree = FrameTree()
    tree.update(NS(transforms=[tf_msg("odom", "base_footprint", 1.0, 1.0, 0.0, sec=1)]))
    assert tree.lookup("map", "base_footprint") is None
    assert tree.stamp("map", "base_footprint") is None
    tree.update(NS(transforms=[tf_msg("/map", "odom", 0.5, 0.0, 0.0, sec=3)]))
    assert tree.lookup("map", "base_footprint") == pytest.approx((1.5, 1.0, 0.0))
    assert tree.stamp("map", "base_footprint") == pytest.approx(1.0)  # the older link counts
    tree.update(NS(transforms=[tf_msg("odom", "base_footprint", 2.0, 1.0, 0.0, sec=4)]))
    assert tree.lookup("map", "base_footprint") == pytest.approx((2.5, 1.0, 0.0))
    assert tree.get("odom").parent == "map"


def test_lookup_misses_and_cycles_return_none():
    tree = FrameTree()
    tree.set_transform("a", "b", (1.0, 0.0, 0.0))
    tree.set_transform("b", "a", (1.0, 0.0, 0.0))  # a cycle in bad data
    assert tree.lookup("map", "a") is None
    assert tree.lookup("a", "a") == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="two different frame names"):
        tree.set_transform("map", "map", (0.0, 0.0, 0.0))


def test_transform_from_msg_reads_frames_stamp_and_yaw():
    t = transform_from_msg(tf_msg("map", "odom", 1.0, 2.0, -0.5, sec=7, nanosec=250_000_000))
    assert (t.parent, t.child, t.stamp) == ("map", "odom", 7.25)
    assert t.pose == pytest.approx((1.0, 2.0, -0.5))


def test_smoothing_averages_scattered_samples_and_ignores_repeats():
    rng = np.random.default_rng(0)
    f = SmoothedTransform(min_alpha=0.1)
    assert f.value is None
    truth = (2.0, -1.0, 3.1)
    for _ in range(200):
        noisy = (truth[0] + rng.uniform(-0.5, 0.5), truth[1] + rng.uniform(-0.5, 0.5), 3.1)
        for _ in range(10):  # tf repeats one estimate every tick until the next SLAM update
            f.add(noisy)
    assert f.samples == 200
    x, y, yaw = f.value
    assert math.hypot(x - truth[0], y - truth[1]) < 0.15 and yaw == pytest.approx(3.1)


def test_smoothing_averages_yaw_across_the_wrap_and_resets_on_a_jump():
    f = SmoothedTransform(min_alpha=0.5, reset_distance=1.0)
    f.add((0.0, 0.0, math.pi - 0.1))
    _, _, yaw = f.add((0.0, 0.01, -math.pi + 0.1))
    assert abs(abs(yaw) - math.pi) < 1e-9  # the mean of +-(pi - 0.1) is pi, not 0
    assert f.add((5.0, 0.0, 0.0)) == (5.0, 0.0, 0.0)  # a jump: start over
    assert f.samples == 1
    with pytest.raises(ValueError, match="min_alpha must be in"):
        SmoothedTransform(min_alpha=0.0)


def test_docstring_examples():
    result = doctest.testmod(tf_pose, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
