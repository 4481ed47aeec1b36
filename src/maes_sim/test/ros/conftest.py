"""Harness for the simulator node tests: real rclpy, a separate client node, DDS on loopback.

Each test gets its own rclpy Context, so nodes of one test never outlive it. The simulator node
can be stepped by hand (``start_paused=True`` + ``h.step(n)``) for exact control, or run on its
own timer for the pacing tests.
"""

from __future__ import annotations

import time

import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from maes_sim.ros.sim_node import SimNode  # noqa: E402


class Harness:
    """A SimNode and a client node in one executor."""

    def __init__(self, sim, **node_kwargs) -> None:
        self.ctx = Context()
        rclpy.init(context=self.ctx)
        self.sim = sim
        self.node = SimNode(sim, context=self.ctx, **node_kwargs)
        self.client = rclpy.create_node("test_client", context=self.ctx)
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.node)
        self.executor.add_node(self.client)

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def spin_until(self, condition, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if condition():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return condition()

    def step(self, n: int = 1, settle: float = 0.0) -> None:
        """Step the simulation by hand, spinning in between so messages flow both ways."""
        for _ in range(n):
            self.spin_for(0.005)
            self.node.step_once()
        self.spin_for(settle)

    def collect(self, msg_type, topic: str, qos) -> list:
        got: list = []
        self.client.create_subscription(msg_type, topic, got.append, qos)
        return got

    def call(self, srv_type, name: str, request, timeout: float = 10.0):
        cli = self.client.create_client(srv_type, name)
        assert cli.wait_for_service(timeout_sec=timeout), f"service {name} not available"
        future = cli.call_async(request)
        assert self.spin_until(future.done, timeout), f"no answer from {name}"
        return future.result()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.client.destroy_node()
        rclpy.shutdown(context=self.ctx)


@pytest.fixture
def harness():
    made: list[Harness] = []

    def make(sim, **kwargs) -> Harness:
        h = Harness(sim, **kwargs)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()
