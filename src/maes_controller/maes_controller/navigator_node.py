"""The built-in navigator: Nav2's ``navigate_to_pose`` for every robot, from one node.

Embedded stack only (the full stack runs Nav2). Per namespace ``robot<i>`` it serves the
``navigate_to_pose`` action (``nav2_msgs/action/NavigateToPose``), reads ``map`` (the robot's
simulated-SLAM map) and ``tf`` (map -> odom -> base_footprint), publishes
``global_costmap/costmap`` (0..100, -1 unknown; on every map) and ``plan`` (``nav_msgs/Path``; on
every new plan), and drives the robot through ``cmd_vel``. It also reads ``maes_state`` for the
other robots nearby: the map holds only walls, so plans made to recover from a blockage go
around them. The navigation itself is
:class:`maes_controller.navigation.Navigator`, also used by direct mode.

One control step per robot runs for every new ``odom -> base_footprint`` transform, i.e. once
per simulator tick, with the transform's stamp as the time. Idle robots get no ``cmd_vel`` (the
simulator's cmd_vel timeout stops them); a finished, cancelled or aborted goal gets one zero
command. A new goal for a namespace preempts (aborts) the current one, as Nav2 does.

Run it as ``ros2 run maes_controller navigator_node --ros-args -p config_file:=maes_config.yaml``
or build it in-process: ``NavigatorNode(config, context=...)``.
"""

from __future__ import annotations

import math

import threading
from typing import Any

import rclpy
from geometry_msgs.msg import Twist, TwistStamped
from maes_interfaces.msg import State
from maes_sim.ros.process import read_parameters, ros_process
from nav2_msgs.action import NavigateToPose
from nav_msgs.msg import OccupancyGrid, Path
from rclpy.action import ActionServer, CancelResponse
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from tf2_msgs.msg import TFMessage

from . import ros_conversions as cv
from .costmap import GridMap
from .navigation import NavErrorCode, NavParams, Navigator, NavStep
from .robot_api import NavStatus
from .tf_pose import FrameTree, SmoothedTransform, compose

#: Maps, costmaps and plans: reliable, transient local (late subscribers get the latest).
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: tf: reliable, a deep queue (the tf2 default).
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
#: maes_state: reliable, depth 1 (as the simulator publishes it).
STATE_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
#: cmd_vel: reliable, shallow.
CMD_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)

#: error_msg of a goal aborted because a new one arrived for the same robot.
_PREEMPTED = "preempted by a new goal"

#: Frames inside a namespace (REP-105, no prefixes).
MAP, ODOM, BASE = "map", "odom", "base_footprint"


def robot_namespace(i: int) -> str:
    """Namespace of robot ``i``: ``"robot<i>"``."""
    return f"robot{int(i)}"


def with_sim_time(node_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``node_kwargs`` with ``use_sim_time`` True unless the caller set it."""
    overrides = list(node_kwargs.get("parameter_overrides") or [])
    if not any(p.name == "use_sim_time" for p in overrides):
        overrides.append(Parameter("use_sim_time", value=True))
    return {**node_kwargs, "parameter_overrides": overrides}


class _Namespace:
    """One robot's navigation: its session, latest map and tf, goal, and ROS endpoints."""

    def __init__(self, node: NavigatorNode, i: int, params: NavParams, stamped: bool,
                 jump: float) -> None:
        self.name = robot_namespace(i)
        ns = "/" + self.name
        self.navigator = Navigator(params)
        self.frames = FrameTree()
        self.map_odom = SmoothedTransform(reset_distance=jump)
        self.grid: GridMap | None = None
        self.handle = None  # the executing ServerGoalHandle
        self.done: Future | None = None  # completed with the result when the goal ends
        self.last_control_stamp: float | None = None
        self.nearby_robots: list[tuple[float, float]] = []  # from maes_state, map frame
        self.lock = threading.RLock()
        self.stamped = stamped
        self.cmd_pub = node.create_publisher(TwistStamped if stamped else Twist,
                                             f"{ns}/cmd_vel", CMD_QOS)
        self.costmap_pub = node.create_publisher(OccupancyGrid, f"{ns}/global_costmap/costmap",
                                                 LATCHED_QOS)
        self.plan_pub = node.create_publisher(Path, f"{ns}/plan", LATCHED_QOS)
        node.create_subscription(OccupancyGrid, f"{ns}/map",
                                 lambda msg: node.map_callback(self, msg), LATCHED_QOS)
        node.create_subscription(TFMessage, f"{ns}/tf",
                                 lambda msg: node.tf_callback(self, msg), TF_QOS)
        node.create_subscription(State, f"{ns}/maes_state",
                                 lambda msg: node.state_callback(self, msg), STATE_QOS)

        async def execute(handle):  # rclpy awaits only true coroutine functions
            return await node.execute_callback(self, handle)

        self.server = ActionServer(
            node, NavigateToPose, f"{ns}/navigate_to_pose", execute_callback=execute,
            cancel_callback=lambda handle: node.cancel_callback(self, handle))


class NavigatorNode(Node):
    """Serves ``navigate_to_pose`` for ``robot0 .. robot<N-1>`` (see the module docstring).

    Parameters
    ----------
    config : SimConfig
        The run's configuration (number of robots, robot size and speed, map size, tile size).
    nav_params : NavParams, optional
        Navigation tuning; default ``NavParams.from_config(config)``.
    cmd_vel_stamped : bool
        Publish ``cmd_vel`` as TwistStamped (match the simulator's setting).
    node_name, node_kwargs
        Passed to ``rclpy.node.Node`` (e.g. ``context=``); ``use_sim_time`` defaults to True.
    """

    def __init__(self, config: Any, *, nav_params: NavParams | None = None,
                 cmd_vel_stamped: bool = False, node_name: str = "maes_navigator",
                 **node_kwargs: Any) -> None:
        super().__init__(node_name, **with_sim_time(node_kwargs))
        self.params = nav_params if nav_params is not None else NavParams.from_config(config)
        n = int(config.number_of_robots)
        # Larger map -> odom changes than the SLAM's pose error are real jumps, not noise.
        jump = 2.0 * config.world.tile_size * max(
            1.0, 1.5 * config.robot_constraints.slam_position_inaccuracy)
        self.robots = [_Namespace(self, i, self.params, cmd_vel_stamped, jump) for i in range(n)]
        self.get_logger().info(f"serving navigate_to_pose for {n} robot(s)")

    # ------------------------------------------------------------------ inputs
    def map_callback(self, ns: _Namespace, msg: OccupancyGrid) -> None:
        """Keep the robot's map; publish the costmap computed from it."""
        grid = GridMap.from_msg(msg)
        with ns.lock:
            ns.grid = grid
            costs = ns.navigator.costmap_values(grid)
        ns.costmap_pub.publish(cv.costmap_to_msg(msg, costs))

    def state_callback(self, ns: _Namespace, msg: State) -> None:
        """Keep where the other robots nearby are (recovery plans go around them)."""
        with ns.lock:
            ns.nearby_robots = [(r.pos.x, r.pos.y) for r in msg.nearby_robots]

    def tf_callback(self, ns: _Namespace, msg: TFMessage) -> None:
        """Keep the robot's transforms; run one control step per new robot pose."""
        with ns.lock:
            ns.frames.update(msg)
            map_odom = ns.frames.get(ODOM)
            if map_odom is not None and map_odom.parent == MAP and any(
                    t.child_frame_id.lstrip("/") == ODOM for t in msg.transforms):
                ns.map_odom.add(map_odom.pose)
            base = ns.frames.get(BASE)
            if base is None or base.stamp == ns.last_control_stamp:
                return
            ns.last_control_stamp = base.stamp
            if ns.handle is None:
                return
            if ns.handle.is_cancel_requested:
                self._finish(ns, ns.navigator.cancel(base.stamp))
                return
            pose = self._pose(ns)
            step = ns.navigator.update(pose, ns.grid, base.stamp, ns.nearby_robots)
            stamp = cv.time_to_msg(base.stamp)
            if step.replanned:
                ns.plan_pub.publish(cv.path_to_msg(step.path, stamp))
            if step.status is NavStatus.ACTIVE:
                ns.cmd_pub.publish(cv.twist_to_msg(step.linear, step.angular, ns.stamped, stamp))
                # No feedback before a route exists: "0 m remaining" would read as arrived.
                if math.isfinite(step.distance_remaining):
                    ns.handle.publish_feedback(cv.feedback_to_msg(step, pose, stamp))
            else:
                self._finish(ns, step)

    # ------------------------------------------------------------------ action
    async def execute_callback(self, ns: _Namespace, handle) -> NavigateToPose.Result:
        """Start the goal (preempting the current one) and wait for its end."""
        done = Future()
        with ns.lock:
            if ns.handle is not None:
                self._finish(ns, NavStep(status=NavStatus.ABORTED,
                                         error_code=int(NavErrorCode.UNKNOWN),
                                         error_msg=_PREEMPTED))
            ns.handle, ns.done = handle, done
            frame, x, y = cv.goal_from_msg(handle.request)
            now = self._now(ns)
            if frame not in ("", MAP):
                self._finish(ns, NavStep(status=NavStatus.ABORTED,
                                         error_code=int(NavErrorCode.TF_ERROR),
                                         error_msg=f"goal frame {frame!r} is not supported: "
                                                   f"give goals in {MAP!r}"))
            else:
                ns.navigator.start((x, y), now)
                self.get_logger().info(f"{ns.name}: navigating to ({x:.2f}, {y:.2f})")
        return await done

    def cancel_callback(self, ns: _Namespace, handle) -> CancelResponse:
        """Accept; the robot stops at its next control step (or right away, see below)."""
        # The goal turns CANCELING only after this returns: finish it in a task just after.
        executor = self.executor
        if executor is not None:
            executor.create_task(self._cancel_now, ns, handle)
        return CancelResponse.ACCEPT

    def _cancel_now(self, ns: _Namespace, handle) -> None:
        with ns.lock:
            if ns.handle is handle and handle.is_cancel_requested:
                self._finish(ns, ns.navigator.cancel(self._now(ns)))

    def _finish(self, ns: _Namespace, step: NavStep) -> None:
        """End the current goal with ``step``'s status; send the robot one zero command."""
        handle, done = ns.handle, ns.done
        ns.handle = ns.done = None
        if handle is None:
            return
        if step.status is NavStatus.SUCCEEDED:
            handle.succeed()
        elif step.status is NavStatus.CANCELED and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        ns.cmd_pub.publish(cv.twist_to_msg(0.0, 0.0, ns.stamped,
                                           cv.time_to_msg(self._now(ns))))
        if step.error_code == NavErrorCode.UNKNOWN and step.error_msg == _PREEMPTED:
            self.get_logger().info(f"{ns.name}: goal preempted by a new goal")
        elif step.error_code:
            self.get_logger().warning(f"{ns.name}: goal {step.status.value} (error "
                                      f"{step.error_code}: {step.error_msg})")
        else:
            self.get_logger().info(f"{ns.name}: goal {step.status.value}")
        done.set_result(cv.result_to_msg(step))

    def _pose(self, ns: _Namespace):
        """The robot's map pose: smoothed map -> odom, then odom -> base_footprint."""
        odom_base = ns.frames.lookup(ODOM, BASE)
        if odom_base is not None and ns.map_odom.value is not None:
            return compose(ns.map_odom.value, odom_base)
        return ns.frames.lookup(MAP, BASE)

    def _now(self, ns: _Namespace) -> float:
        """Sim time: the robot's latest pose stamp, else the node clock."""
        base = ns.frames.get(BASE)
        if base is not None:
            return base.stamp
        return self.get_clock().now().nanoseconds * 1e-9

    def destroy_node(self) -> None:
        """Destroy the action servers too."""
        for ns in self.robots:
            ns.server.destroy()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Entry point of ``navigator_node``: parameter ``config_file`` (the run's YAML).

    Runs until Ctrl-C or a shutdown (``ros2 launch`` ending), exiting quietly; a bad config or
    parameter exits 2 with a one-line message.
    """
    from maes_sim.core import ConfigError, MapError, load_config

    with ros_process("navigator_node", args) as proc:
        params = read_parameters("maes_navigator_params",
                                 {"config_file": "maes_config.yaml", "cmd_vel_stamped": False})
        try:
            config = load_config(params["config_file"])
        except (ConfigError, MapError, OSError) as exc:
            proc.fail(exc)
        node = proc.own(NavigatorNode(config, cmd_vel_stamped=params["cmd_vel_stamped"]))
        rclpy.spin(node)
