"""A message published as its bytes (``maes_state``, the markers) reaches a tap's sinks as it
is; a sink that changes a topic's messages (the live view's robot frames) gets it read back
first, so the bytes path and the message path give a sink the same thing."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from rclpy.qos import QoSProfile  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import LaserScan  # noqa: E402

from maes_interfaces.msg import State  # noqa: E402
from maes_sim.ros.live import adapt_for_live_view  # noqa: E402
from maes_sim.ros.tap import Tap  # noqa: E402


class Kept:
    """A sink that keeps what it is given (as a recorder would write it)."""

    def __init__(self) -> None:
        self.got: list[tuple[str, str, bytes]] = []

    def wants(self, topic: str) -> bool:
        return True

    def write(self, topic, type_name, definition, qos, data, time_ns) -> None:
        self.got.append((topic, type_name, bytes(data)))

    def close(self) -> None:
        pass


class Prefixing(Kept):
    """A sink that serves robot frames prefixed, as the live view does."""

    def __init__(self) -> None:
        super().__init__()
        self.adapted: list[str] = []

    def adapt(self, topic, msg):
        self.adapted.append(topic)
        return adapt_for_live_view(topic, msg)

    def adapts(self, topic: str) -> bool:
        return topic.endswith("/scan")


def test_bytes_reach_every_sink_and_an_adapting_sink_reads_them_first():
    plain, live = Kept(), Prefixing()
    tap = Tap([plain, live], forward=False)
    qos = QoSProfile(depth=1)
    scan = LaserScan(ranges=[1.0, 2.0])
    scan.header.frame_id = "base_scan"
    state = State(tick=7, status="exploring")

    scan_bytes, state_bytes = serialize_message(scan), serialize_message(state)
    tap.outlet(LaserScan, "/robot0/scan", qos).publish(scan_bytes)
    tap.outlet(State, "/robot0/maes_state", qos).publish(state_bytes)

    (scan_plain, state_plain) = plain.got
    (scan_live, state_live) = live.got
    assert (
        scan_plain[1] == "sensor_msgs/msg/LaserScan"
        and state_plain[1] == "maes_interfaces/msg/State"
    )
    assert scan_plain[2] == scan_bytes  # as published
    assert state_plain[2] == state_live[2] == state_bytes  # not read back
    assert live.adapted == ["/robot0/scan"]
    served = deserialize_message(scan_live[2], LaserScan)
    assert served.header.frame_id == "robot0/base_scan" and list(served.ranges) == [1.0, 2.0]
    assert tap.counts == {"/robot0/scan": 1, "/robot0/maes_state": 1}


def test_a_message_object_and_its_bytes_give_a_sink_the_same_bytes():
    scan = LaserScan(ranges=[3.0])
    scan.header.frame_id = "base_scan"
    by_object, by_bytes = Prefixing(), Prefixing()
    Tap([by_object], forward=False).outlet(LaserScan, "/robot2/scan", QoSProfile(depth=1)).publish(
        scan
    )
    Tap([by_bytes], forward=False).outlet(LaserScan, "/robot2/scan", QoSProfile(depth=1)).publish(
        serialize_message(scan)
    )
    assert deserialize_message(by_object.got[0][2], LaserScan) == deserialize_message(
        by_bytes.got[0][2], LaserScan
    )


def test_subscription_counter_counts_as_rclpy_does_as_readers_come_and_go():
    """The per-tick count (the native handle's, without rclpy's guard) follows a real reader
    that comes late and leaves, as ``get_subscription_count`` does; a tapped publisher adds
    its sink."""
    import time

    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from maes_common.publishers import subscription_counter
    from maes_common.qos import DEFAULT_QOS
    from maes_sim.ros.tap import TappedPublisher

    ctx = Context()
    rclpy.init(context=ctx)
    try:
        node = rclpy.create_node("counter_pub", context=ctx)
        reader = rclpy.create_node("counter_sub", context=ctx)
        executor = SingleThreadedExecutor(context=ctx)
        executor.add_node(node)
        executor.add_node(reader)
        pub = node.create_publisher(LaserScan, "/robot0/scan", DEFAULT_QOS)
        count = subscription_counter(pub)
        assert count() == pub.get_subscription_count() == 0

        def settle(expected: int) -> None:
            end = time.monotonic() + 10.0
            while pub.get_subscription_count() != expected and time.monotonic() < end:
                executor.spin_once(timeout_sec=0.01)
            assert pub.get_subscription_count() == expected

        sub = reader.create_subscription(LaserScan, "/robot0/scan", lambda m: None, DEFAULT_QOS)
        settle(1)
        assert count() == 1
        reader.destroy_subscription(sub)
        settle(0)
        assert count() == 0

        tapped = TappedPublisher(pub, Tap([Kept()]), LaserScan, QoSProfile(depth=1))
        assert tapped.get_subscription_count() == 1  # the sink, no DDS reader
        assert subscription_counter(tapped)() == 1
        node.destroy_node()
        reader.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
