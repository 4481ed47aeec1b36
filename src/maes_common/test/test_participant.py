"""The participant's reports (maes_common.participant) over real DDS, read by a real Barrier."""

from __future__ import annotations

import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from maes_common.contract import TICK_DONE_TOPIC  # noqa: E402
from maes_common.lockstep import JOIN, LEAVE, Barrier  # noqa: E402
from maes_common.participant import LockstepReporter  # noqa: E402
from maes_common.qos import LOCKSTEP_READER_QOS  # noqa: E402
from maes_interfaces.msg import TickDone  # noqa: E402


def test_join_reports_and_leave_reach_the_simulators_barrier():
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        node = rclpy.create_node("reporter", namespace="robot1", context=ctx)
        sim = rclpy.create_node("sim", context=ctx)
        got: list[TickDone] = []
        sim.create_subscription(TickDone, TICK_DONE_TOPIC, got.append, LOCKSTEP_READER_QOS)
        counts = {"cmd_vel": 0}
        reporter = LockstepReporter(
            node, TICK_DONE_TOPIC, "controller", lambda: [(1, counts["cmd_vel"], 0, 0)]
        )
        assert not reporter.joined
        executor = SingleThreadedExecutor(context=ctx)
        executor.add_node(node)
        executor.add_node(sim)

        def spin_until(n: int) -> None:
            deadline = time.monotonic() + 20.0
            while len(got) < n and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.05)
            assert len(got) >= n, [m.tick for m in got]

        reporter.join()
        counts["cmd_vel"] = 2
        reporter.report(0)
        spin_until(2)
        reporter.leave()
        spin_until(3)
        assert [m.tick for m in got] == [JOIN, 0, LEAVE]
        assert {m.participant for m in got} == {"/robot1/reporter"}
        assert [list(m.cmd_vel_sent) for m in got] == [[0], [2], [2]]
        assert got[1].role == "controller" and list(got[1].robots) == [1]

        # The simulator's barrier, fed these messages, waits for the counted commands.
        barrier = Barrier(3)
        for m in got[:2]:
            barrier.report(m.participant, m.tick, list(m.robots), list(m.cmd_vel_sent), m.role)
        assert barrier.controlled_robots() == [1]
        assert not barrier.ready(0, np.array([0, 1, 0]))
        assert barrier.ready(0, np.array([0, 2, 0]))
        barrier.report(got[2].participant, got[2].tick, [], [], got[2].role)
        assert barrier.participants == {}
        executor.shutdown()
        node.destroy_node()
        sim.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
