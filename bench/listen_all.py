"""An outside listener for benchmarks: one rclpy node, in its own process, subscribed to every
robot's ``scan``, ``tf`` and ``maes_state`` (as a recorder would be), counting what arrives.

It prints ``ready`` once its subscriptions exist, and on SIGINT or SIGTERM one JSON line: the
messages received per topic kind and the newest and oldest ``maes_state`` tick per robot (read
from the bytes). The subscriptions take the bytes (``raw=True``), so the listener costs the run
little beyond DDS itself; each uses the simulator's QoS with a deep queue.

    scripts/with_env python bench/listen_all.py --robots 120
"""

from __future__ import annotations

import argparse
import json
import signal
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, required=True)
    args = parser.parse_args(argv)

    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.qos import QoSProfile
    from sensor_msgs.msg import LaserScan
    from tf2_msgs.msg import TFMessage

    from maes_common.contract import robot_namespace
    from maes_common.qos import SCAN_PUB_QOS, STATE_QOS, TF_QOS
    from maes_common.state_wire import read_state_head
    from maes_interfaces.msg import State

    try:
        from rclpy.experimental import EventsExecutor as Executor
    except ImportError:  # an rclpy without it
        from rclpy.executors import SingleThreadedExecutor as Executor

    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node("maes_bench_listener")
    counts = {"scan": 0, "tf": 0, "maes_state": 0}
    newest = [-1] * args.robots
    oldest = [-1] * args.robots

    def deep(qos: QoSProfile) -> QoSProfile:
        return QoSProfile(depth=1000, reliability=qos.reliability, durability=qos.durability)

    def counter(kind: str, i: int):
        def heard(data: bytes) -> None:
            counts[kind] += 1
            if kind == "maes_state":
                tick = read_state_head(data).tick
                newest[i] = max(newest[i], tick)
                oldest[i] = tick if oldest[i] < 0 else min(oldest[i], tick)

        return heard

    for i in range(args.robots):
        ns = "/" + robot_namespace(i)
        for kind, msg_type, qos in (
            ("scan", LaserScan, SCAN_PUB_QOS),
            ("tf", TFMessage, TF_QOS),
            ("maes_state", State, STATE_QOS),
        ):
            node.create_subscription(
                msg_type, f"{ns}/{kind}", counter(kind, i), deep(qos), raw=True
            )
    executor = Executor()
    executor.add_node(node)
    stop = []

    def finish(*_) -> None:
        stop.append(True)

    signal.signal(signal.SIGINT, finish)
    signal.signal(signal.SIGTERM, finish)
    print("ready", flush=True)
    try:
        while not stop:
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    print(json.dumps({"counts": counts, "newest_tick": newest, "oldest_tick": oldest}), flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
