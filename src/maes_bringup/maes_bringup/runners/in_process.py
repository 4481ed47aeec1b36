"""``maes_run`` with the built-in controllers: every robot's controller and navigator in the
simulator's process, handed their data in-process, in lockstep's order.

The robots run as direct mode runs them (:class:`~maes_bringup.runners.team.RobotTeam`), so a
run equals direct mode's and the lockstep ROS stack's to the bit; no message crosses DDS between
the simulator, the navigator and the controllers. The simulator node stays: it publishes each
robot's topics (``tf``, ``odom``, ``scan``, ``maes_state``, ``map``) for whoever listens from
outside (RViz, Foxglove, a recorder, your own node: looked at every tick), ``/clock``, the
run's statistics and manifest, and serves the broadcast, tag and pause services. The driver adds
the navigator's topics, ``plan`` and ``global_costmap/costmap``, on the same terms: built only
while someone takes them, the newest at once to a reader that comes late. What a logic
does is what it does on the ROS stack: a logic that raises is logged (the first time with its
traceback, then at most every few seconds), counted and called again on the next tick.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from typing import Any

from maes_common.contract import robot_namespace
from maes_common.publishers import subscription_counter
from maes_common.qos import LATCHED_QOS

from .direct_robot import DirectRobot
from .team import RobotTeam

__all__ = ["TeamDriver", "robot_logger"]

#: Seconds between two logs of a logic that keeps failing (as the controller node logs them).
ERROR_LOG_PERIOD = 5.0
#: Longest wall time the driver waits between two looks at the services and the stop signal.
IDLE_SLICE_S = 0.05
#: NavStatus values in the words the web page shows for a heard action status.
_STATUS_WORDS = {
    "idle": "idle",
    "pending": "accepted",
    "active": "navigating",
    "succeeded": "arrived (succeeded)",
    "aborted": "failed (aborted)",
    "canceled": "cancelled",
    "rejected": "rejected",
}


class TeamDriver:
    """Steps a :class:`RobotTeam` and publishes each tick through the simulator node.

    Parameters
    ----------
    sim_node : maes_sim.ros.sim_node.SimNode
        Built with ``steps_itself=False`` (the driver steps the simulation, not its timer).
    team : RobotTeam
        Its robots' loggers (:func:`robot_logger`) are rclpy's, as on the ROS stack.
    executor : rclpy executor
        Holds ``sim_node``; spun between ticks for the services and the graph.
    real_time_factor : float
        Sim seconds per wall second at most (<= 0: as fast as the machine goes).
    """

    def __init__(self, sim_node: Any, team: RobotTeam, executor: Any, real_time_factor: float):
        self.node = sim_node
        self.team = team
        self.executor = executor
        self.real_time_factor = float(real_time_factor)
        self._anchor_wall = 0.0
        self._anchor_tick = 0
        self._nav_topics = [_NavigatorTopics(sim_node, i) for i in range(len(team.robots))]
        sim_node.nav_status_source = self.nav_status

    def start(self) -> None:
        """Publish the first tick (with the maps) and begin pacing from now."""
        self.node.start_now()
        self._anchor_wall, self._anchor_tick = time.monotonic(), self.team.sim.tick

    def step(self) -> None:
        """One tick: every robot's logic and navigation, the simulation's step, its outputs."""
        node = self.node
        node.admission.logic_calls += 1
        self.team.tick(self._logic_failed)
        self._publish_navigation()
        node.after_step()

    def nav_status(self, i: int) -> str:
        """Robot ``i``'s navigation in the web page's words (as heard from a
        ``navigate_to_pose`` status topic: :func:`maes_sim.ros.watching.status_line`)."""
        robot = self.team.robots[i]
        goals = robot.goals_accepted
        if goals == 0:
            return "no goal yet"
        word = _STATUS_WORDS.get(robot.nav_status.value, robot.nav_status.value)
        return f"{word} ({goals} goal{'s' if goals != 1 else ''} so far)"

    def _publish_navigation(self) -> None:
        """Each robot's newest plan and costmap, to whoever takes them (the navigator node's
        topics, in the same frames); nothing is built for a topic nobody takes."""
        from maes_controller.nodes import ros_conversions as ccv

        node = self.node
        for robot, topics in zip(self.team.robots, self._nav_topics, strict=True):
            if robot.plan_update is not None and topics.plan_readers():
                points, at = robot.plan_update
                topics.plan.publish(ccv.path_to_msg(points, ccv.time_to_msg(at)))
                robot.plan_update = None
            grid = robot._grid
            if grid is not None and grid is not topics.costmap_of and topics.costmap_readers():
                costs = robot.session.navigator.costmap_values(grid)
                topics.costmap.publish(node.map_grid_msg(costs))
                topics.costmap_of = grid

    def wait_until_due(self, stop: Callable[[], bool]) -> None:
        """Serve the node (services, the web page, a pause) until the next tick is due under
        the real-time factor (the node's: the page may change it), or once when none applies;
        returns early once ``stop()``."""
        sim = self.team.sim
        rtf = float(self.node.real_time_factor)
        if rtf != self.real_time_factor:  # changed (the web page's speed): from now on
            self.real_time_factor = rtf
            self._anchor_wall, self._anchor_tick = time.monotonic(), sim.tick
        if rtf <= 0:
            self._serve(0.0)
            return
        due = self._anchor_wall + (sim.tick - self._anchor_tick) * sim.tick_duration / rtf
        now = time.monotonic()
        if now - due > 0.1:  # behind: cap the speed, never catch up in a burst
            self._anchor_wall, self._anchor_tick = now, sim.tick
            due = now
        while now < due and not stop():
            self._serve(min(due - now, IDLE_SLICE_S))
            now = time.monotonic()
        self._serve(0.0)

    def idle(self) -> None:
        """While paused: serve the node for a short slice."""
        self._serve(IDLE_SLICE_S)
        self._anchor_wall, self._anchor_tick = time.monotonic(), self.team.sim.tick

    def _serve(self, timeout: float) -> None:
        """The web page's commands (on this thread, as the node's timer takes them when the
        node steps itself), then the node's services and graph for up to ``timeout`` s."""
        if self.node.page is not None:
            self.node.page.drain()
        self.executor.spin_once(timeout_sec=timeout)

    def _logic_failed(self, robot: DirectRobot, exc: Exception) -> None:
        """As the controller node: count it, log it (throttled), go on."""
        failures = self.node.admission.logic_failures
        failures[robot.robot_id] += 1
        calls = int(self.node.admission.logic_calls[robot.robot_id])
        robot.logger.error(
            f"logic callback raised at tick {robot.tick} ({int(failures[robot.robot_id])} of "
            f"{calls} calls failed so far): {type(exc).__name__}: {exc}\n{traceback.format_exc()}",
            throttle_duration_sec=ERROR_LOG_PERIOD,
        )


class _NavigatorTopics:
    """The topics the navigator node publishes for one robot, published by the driver."""

    def __init__(self, node: Any, i: int) -> None:
        from nav_msgs.msg import OccupancyGrid, Path
        from rclpy.node import Node

        # rclpy's own create_publisher, not the simulator node's: these are the navigator's
        # topics, which a recording does not hold; the live view hears them as it hears the
        # navigator node's (maes_sim.ros.outputs.listen_to_navigation).
        ns = "/" + robot_namespace(i)
        self.plan = Node.create_publisher(node, Path, f"{ns}/plan", LATCHED_QOS)
        self.costmap = Node.create_publisher(
            node, OccupancyGrid, f"{ns}/global_costmap/costmap", LATCHED_QOS
        )
        self.plan_readers = subscription_counter(self.plan)
        self.costmap_readers = subscription_counter(self.costmap)
        #: The map whose costmap was published last.
        self.costmap_of: Any = None


def robot_logger(robot: DirectRobot) -> Any:
    """The rclpy logger a robot's logic logs with: the controller node's own name
    (``robot<i>.maes_controller``), so the lines read as on the ROS stack."""
    from rclpy.logging import get_logger

    return get_logger(f"{robot_namespace(robot.robot_id)}.maes_controller")
