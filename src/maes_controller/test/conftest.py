"""Harness for the controller and navigator tests: the simulator, navigator and controllers in
one process, on one executor, with a separate client node; real rclpy, DDS on loopback.

The simulator is stepped by hand, and each step waits until every node has reported the new
tick through the lockstep protocol (``/maes/tick_done``: the controllers ran their callbacks and
their requests were answered, the navigator ran its control steps) and the simulator has every
velocity command they counted. Runs are therefore in lockstep and fast, independent of the
machine's load; the timeouts only bound how long a lost message may stall a test.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from maes_controller.nodes.controller_hub import ControllerHub  # noqa: E402
from maes_controller.nodes.controller_node import ControllerNode  # noqa: E402
from maes_controller.nodes.navigator_node import NavigatorNode  # noqa: E402
from maes_sim.core import Simulation, WorldMap  # noqa: E402
from maes_sim.core.config import config_from_dict  # noqa: E402
from maes_sim.ros.sim_node import SimNode  # noqa: E402

#: Wall seconds a single tick may take to settle before the test fails.
SETTLE_TIMEOUT = 30.0


def make_config(n_robots: int = 1, seed: int = 3, size: int = 30, **sections) -> object:
    """A SimConfig for tests: a generated building of ``size`` x ``size`` tiles, no end."""
    raw = {
        "number_of_robots": n_robots,
        "random_seeds": [seed],
        "map": {"width_in_tiles": size, "height_in_tiles": size, "building_config": {}},
        "end_criteria": {"exploration_percent": None, "coverage_percent": None, "tick": None},
        "global_settings": {"should_write_csv_results": False},
    }
    for key, value in sections.items():
        raw[key] = {**raw.get(key, {}), **value} if isinstance(value, dict) else value
    return config_from_dict(raw)


def room_world(h: int, w: int, edit: Callable[[np.ndarray], None] | None = None) -> WorldMap:
    """A walled room of h x w tiles; ``edit(walls)`` may add walls before it is frozen."""
    walls = np.zeros((h, w), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    if edit is not None:
        edit(walls)
    return WorldMap(walls=walls, name="room")


def place(sim: Simulation, tiles_xy, headings=None) -> None:
    """Put the robots at grid positions (tiles from the map's lower-left corner)."""
    xy = np.asarray(tiles_xy, dtype=float) - np.array([sim.shape[1], sim.shape[0]]) / 2
    yaw = np.zeros(len(xy)) if headings is None else np.asarray(headings, dtype=float)
    sim.place_robots(np.column_stack([xy, yaw]))


class Stack:
    """SimNode (stepped by hand) + NavigatorNode + ControllerNodes + a client node; with
    ``hub=True`` the controllers take part in lockstep through one ControllerHub, as in
    ``controller_container``; with ``hub=[[0], [1, 2]]`` through one hub per group of robots
    (``/controllers_<first robot>``), as two containers would."""

    def __init__(
        self,
        sim: Simulation,
        *,
        navigator: bool = True,
        logic: Callable | dict[int, Callable] | None = None,
        nav2_api: bool = False,
        hub: bool | list[list[int]] = False,
    ) -> None:
        self.sim = sim
        self.ctx = Context()
        rclpy.init(context=self.ctx)
        self.sim_node = SimNode(sim, real_time_factor=0.0, start_paused=True, context=self.ctx)
        # Stepped by hand: the node's unpaced timer is always ready and would starve the node's
        # own subscriptions (same mutually exclusive callback group), so it is switched off.
        self.sim_node.timer.cancel()
        self.navigator = (
            NavigatorNode(sim.config, nav2_api=nav2_api, context=self.ctx) if navigator else None
        )
        if logic is None:
            logic = {}
        elif callable(logic):
            logic = dict.fromkeys(range(sim.n_robots), logic)
        groups = [list(logic)] if hub is True else (hub or [])
        self.hubs = [
            ControllerHub(
                "controllers" if hub is True else f"controllers_{min(group)}", context=self.ctx
            )
            for group in groups
        ]
        self.hub = self.hubs[0] if hub is True else None
        hub_of = {i: h for h, group in zip(self.hubs, groups, strict=True) for i in group}
        self.controllers = {
            i: ControllerNode(
                i, fn, wait_for_navigator=navigator, context=self.ctx, hub=hub_of.get(i)
            )
            for i, fn in logic.items()
        }
        self.client = rclpy.create_node(
            "test_client",
            context=self.ctx,
            parameter_overrides=[Parameter("use_sim_time", value=True)],
        )
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.nodes = [self.sim_node, self.client, *self.controllers.values()]
        if self.navigator is not None:
            self.nodes.append(self.navigator)
        self.nodes += self.hubs  # destroyed after their controllers: their reports leave
        for node in self.nodes:
            self.executor.add_node(node)
        self.cmd_sent = 0
        self.cmd_taken = 0
        self.caught_up: list[Callable[[], bool]] = []
        self._count_commands()

    def add_node(self, node, caught_up: Callable[[], bool] | None = None) -> None:
        """Spin another node too; ``caught_up()`` joins the per-tick settle condition."""
        self.nodes.append(node)
        self.executor.add_node(node)
        if caught_up is not None:
            self.caught_up.append(caught_up)

    def _count_commands(self) -> None:
        taken = self.sim_node.cmd_vel_callback

        def take(i, msg):
            self.cmd_taken += 1
            return taken(i, msg)

        self.sim_node.cmd_vel_callback = take
        for ns in self.navigator.robots if self.navigator is not None else ():
            publish = ns.cmd_pub.publish

            def send(msg, publish=publish):
                self.cmd_sent += 1
                publish(msg)

            ns.cmd_pub.publish = send

    # ------------------------------------------------------------------ spinning
    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.005)

    def spin_until(self, condition: Callable[[], bool], timeout: float = SETTLE_TIMEOUT) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if condition():
                return True
            self.executor.spin_once(timeout_sec=0.005)
        return condition()

    def settled(self) -> bool:
        """Every node has reported the current tick (the lockstep protocol), and the
        simulator has every command they counted."""
        tick = self.sim.tick
        if self.navigator is not None and self.navigator.reported_tick < tick:
            return False
        if any(c.reported_tick < tick for c in self.controllers.values()):
            return False  # a state not handled yet, or a request still on its way
        if not all(check() for check in self.caught_up):
            return False
        return self.sim_node.tick_complete() and self.cmd_taken == self.cmd_sent

    def step(self, n: int = 1, each: Callable[[], None] | None = None) -> None:
        """Advance ``n`` ticks in lockstep; ``each()`` runs after every settled tick."""
        for _ in range(n):
            self.sim_node.step_once()
            assert self.spin_until(self.settled), f"nodes did not catch up at tick {self.sim.tick}"
            if each is not None:
                each()

    def step_until(
        self, condition: Callable[[], bool], max_ticks: int, each: Callable[[], None] | None = None
    ) -> int:
        """Step until ``condition()``; returns the ticks stepped (fails after ``max_ticks``)."""
        for k in range(max_ticks):
            if condition():
                return k
            self.step(1, each)
        assert condition(), f"condition not met within {max_ticks} ticks"
        return max_ticks

    def wait_ready(self) -> None:
        """Let discovery finish: every node has matched its peers and handled a whole tick."""
        sim = self.sim

        def matched() -> bool:
            tf_ok = self.navigator is None or all(
                self.sim_node.count_subscribers(f"/robot{i}/tf") >= 1 for i in range(sim.n_robots)
            )
            cmd_ok = self.navigator is None or all(
                ns.cmd_pub.get_subscription_count() >= 1 for ns in self.navigator.robots
            )
            ctl_ok = all(
                self.sim_node.count_subscribers(f"/robot{i}/maes_state") >= 1
                and (self.navigator is None or c.nav_client.server_is_ready())
                for i, c in self.controllers.items()
            )
            return tf_ok and cmd_ok and ctl_ok

        assert self.spin_until(matched), "nodes did not discover each other"
        joined = self.spin_until(
            lambda: all(c.reported_tick >= -1 for c in self.controllers.values())
        )
        assert joined, "controllers did not join lockstep"
        self.sim_node.publish_manifest()  # tick 0, now that everybody listens
        if self.spin_until(self.settled, timeout=5.0):
            return
        for _ in range(20):  # graph discovery may run a little ahead of the data connections
            self.sim_node.step_once()
            if self.spin_until(self.settled, timeout=2.0):
                return
        raise AssertionError("nodes never caught up with a tick")

    def close(self) -> None:
        """Destroy the nodes and the context (again: a no-op)."""
        if not self.ctx.ok():
            return
        self.executor.shutdown()
        for node in self.nodes:
            node.destroy_node()
        rclpy.shutdown(context=self.ctx)


@pytest.fixture
def stack():
    made: list[Stack] = []

    def make(sim: Simulation, **kwargs) -> Stack:
        s = Stack(sim, **kwargs)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


@pytest.fixture
def tools():
    """The module's helpers (importlib mode: tests cannot import this conftest)."""
    return SimpleNamespace(config=make_config, room=room_world, place=place)
