"""The per-robot controller node: calls the user's ``logic(robot)`` once per logic tick.

Run one per robot: ``ros2 run maes_controller controller_node --ros-args -p robot_id:=0
-p logic:=my_package.my_logic:logic`` (``logic`` defaults to ``maes_controller.logic:logic``,
the shipped frontier explorer; edit that file, or point ``logic`` at your own), or build it
in-process: ``ControllerNode(0, my_logic, context=...)``.

The node lives in namespace ``robot<i>`` and talks only to that namespace, through the same
names on both stacks: it subscribes ``maes_state`` (each new state triggers the callback),
``tf`` (map -> odom -> base_footprint gives ``robot_position``) and ``global_costmap/costmap``;
it sends ``navigate_to_pose`` goals and calls ``maes_broadcast`` / ``maes_deposit_tag``.
Nothing the callback calls blocks: goals, cancels and service calls are sent asynchronously
and their outcome shows in later ticks (``nav_status``, the next states). A callback that
raises is logged with its traceback (throttled) and called again on the next state.
"""

from __future__ import annotations

import traceback
from typing import Any

import rclpy
from action_msgs.msg import GoalStatus
from maes_interfaces.msg import State
from maes_interfaces.srv import BroadcastToAll, DepositTag
from maes_sim.ros.process import read_parameters, ros_process
from nav2_msgs.action import NavigateToPose
from nav_msgs.msg import OccupancyGrid
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from . import ros_conversions as cv
from .maes_compat import MaesCostmap
from .navigator_node import with_sim_time
from .robot_api import LogicFunction, NavStatus, load_logic
from .tf_pose import FrameTree

#: maes_state: reliable, depth 1 (what the simulator publishes).
STATE_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
#: The costmap: reliable, transient local (the latest one arrives even if published earlier).
COSTMAP_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: tf: reliable, a deep queue (the tf2 default).
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)

#: Seconds between two logs of a failing callback.
ERROR_LOG_PERIOD = 5.0

_GOAL_STATUS = {
    GoalStatus.STATUS_SUCCEEDED: NavStatus.SUCCEEDED,
    GoalStatus.STATUS_ABORTED: NavStatus.ABORTED,
    GoalStatus.STATUS_CANCELED: NavStatus.CANCELED,
}


class RosRobot:
    """The :class:`~maes_controller.robot_api.Robot` API backed by one namespace's ROS interface.

    Built by :class:`ControllerNode`; see :class:`~maes_controller.robot_api.Robot` for the
    meaning of every attribute and method.
    """

    def __init__(self, node: ControllerNode, robot_id: int) -> None:
        self._node = node
        self.robot_id = int(robot_id)
        self.namespace = f"robot{self.robot_id}"
        self.state: Any = None
        self.tick = -1
        self.global_costmap = MaesCostmap(node.get_logger())
        self.nav_status = NavStatus.IDLE
        self.nav_feedback: Any = None
        self.nav_error = ""
        self.logger = node.get_logger()
        self.memory: dict = {}
        #: Broadcast/tag requests sent and not yet answered by the simulator.
        self.pending_requests = 0
        self.frames = FrameTree()
        self._goal_seq = 0
        self._goal_handle = None
        self._cancel_requested = False

    # -- pose ---------------------------------------------------------------------------------
    @property
    def robot_position(self) -> tuple[float, float] | None:
        """``(x, y)`` metres in the map frame (map -> base_footprint), None until known."""
        pose = self.frames.lookup("map", "base_footprint")
        return None if pose is None else (pose[0], pose[1])

    @property
    def robot_heading(self) -> float | None:
        """Yaw (rad) in the map frame, None until known."""
        pose = self.frames.lookup("map", "base_footprint")
        return None if pose is None else pose[2]

    # -- navigation ---------------------------------------------------------------------------
    def nav_to_pos(self, x: float, y: float) -> None:
        """Send a ``navigate_to_pose`` goal to ``(x, y)`` (map frame); replaces the current one."""
        client = self._node.nav_client
        self._goal_seq += 1
        seq = self._goal_seq
        self._goal_handle = None
        self._cancel_requested = False
        self.nav_feedback = None
        self.nav_error = ""
        if not client.server_is_ready():
            self.nav_status = NavStatus.REJECTED
            self.nav_error = "navigate_to_pose action server is not available"
            self.logger.warning(f"{self.namespace}: {self.nav_error}", throttle_duration_sec=5.0)
            return
        stamp = self._node.get_clock().now().to_msg()
        future = client.send_goal_async(
            cv.goal_to_msg(x, y, stamp),
            feedback_callback=lambda msg: self._feedback(seq, msg))
        future.add_done_callback(lambda f: self._goal_response(seq, f))
        self.nav_status = NavStatus.PENDING

    def cancel_nav(self) -> None:
        """Ask the navigator to cancel the current goal (no-op when none is in progress)."""
        if self.nav_status.done:
            return
        if self._goal_handle is not None:
            self._goal_handle.cancel_goal_async()
        else:
            self._cancel_requested = True  # sent as soon as the goal is accepted

    def is_nav_complete(self) -> bool:
        """True when no goal is in progress."""
        return self.nav_status.done

    def _goal_response(self, seq: int, future) -> None:
        if seq != self._goal_seq:
            return  # an older goal: the navigator preempts it with the newer one
        handle = future.result()
        if handle is None or not handle.accepted:
            self.nav_status = NavStatus.REJECTED
            self.nav_error = "goal rejected by the navigator"
            return
        self._goal_handle = handle
        self.nav_status = NavStatus.ACTIVE
        handle.get_result_async().add_done_callback(lambda f: self._result(seq, f))
        if self._cancel_requested:
            handle.cancel_goal_async()

    def _feedback(self, seq: int, msg) -> None:
        if seq == self._goal_seq:
            self.nav_feedback = msg.feedback

    def _result(self, seq: int, future) -> None:
        if seq != self._goal_seq:
            return
        response = future.result()
        self._goal_handle = None
        self.nav_status = _GOAL_STATUS.get(response.status, NavStatus.ABORTED)
        if self.nav_status is NavStatus.ABORTED:
            result = response.result
            self.nav_error = f"error {result.error_code}: {result.error_msg}"

    # -- services -----------------------------------------------------------------------------
    def broadcast_msg(self, text: str) -> None:
        """Broadcast ``text`` (``maes_broadcast``); the answer is only checked for refusals."""
        self._call(self._node.broadcast_client, BroadcastToAll.Request(msg=str(text)),
                   "broadcast")

    def deposit_tag(self, text: str) -> None:
        """Deposit a tag with ``text`` here (``maes_deposit_tag``)."""
        self._call(self._node.tag_client, DepositTag.Request(msg=str(text)), "tag")

    def _call(self, client, request, what: str) -> None:
        if not client.service_is_ready():
            self.logger.warning(f"{self.namespace}: {client.srv_name} is not available; "
                                f"{what} dropped", throttle_duration_sec=5.0)
            return

        def done(future) -> None:
            self.pending_requests -= 1
            response = future.result()
            if response is not None and not response.result:
                self.logger.warning(f"{self.namespace}: {what} {request.msg!r} refused by the "
                                    f"simulator", throttle_duration_sec=5.0)

        self.pending_requests += 1
        client.call_async(request).add_done_callback(done)


class ControllerNode(Node):
    """One robot's controller: runs ``logic(robot)`` on every new ``maes_state``.

    Parameters
    ----------
    robot_id : int
        The robot ``i`` (namespace ``robot<i>``), >= 0.
    logic : callable or str
        ``logic(robot) -> None``, or a ``"package.module:function"`` spec.
    node_name, node_kwargs
        Passed to ``rclpy.node.Node`` (e.g. ``context=``); the namespace defaults to
        ``robot<i>`` and ``use_sim_time`` to True.

    Attributes
    ----------
    robot : RosRobot
        What the callback receives.
    calls, errors : int
        Callback calls and how many of them raised.
    """

    def __init__(self, robot_id: int, logic: LogicFunction | str = "maes_controller.logic:logic",
                 *, node_name: str = "maes_controller", **node_kwargs: Any) -> None:
        if isinstance(robot_id, bool) or not isinstance(robot_id, int) or robot_id < 0:
            raise ValueError(f"robot_id must be an int >= 0, got {robot_id!r}")
        fn = load_logic(logic) if isinstance(logic, str) else logic
        if not callable(fn):
            raise ValueError(f"logic must be callable or a 'package.module:function' spec, "
                             f"got {logic!r}")
        node_kwargs.setdefault("namespace", f"robot{robot_id}")
        super().__init__(node_name, **with_sim_time(node_kwargs))
        self.logic = fn
        self.calls = 0
        self.errors = 0
        self.robot = RosRobot(self, robot_id)
        # Relative names: they resolve inside the node's namespace (robot<i>).
        self.nav_client = ActionClient(self, NavigateToPose, "navigate_to_pose")
        self.broadcast_client = self.create_client(BroadcastToAll, "maes_broadcast")
        self.tag_client = self.create_client(DepositTag, "maes_deposit_tag")
        self.create_subscription(TFMessage, "tf", self.tf_callback, TF_QOS)
        self.create_subscription(OccupancyGrid, "global_costmap/costmap", self.costmap_callback,
                                 COSTMAP_QOS)
        self.create_subscription(State, "maes_state", self.state_callback, STATE_QOS)

    def tf_callback(self, msg: TFMessage) -> None:
        """Keep the latest transforms (the robot's pose)."""
        self.robot.frames.update(msg)

    def costmap_callback(self, msg: OccupancyGrid) -> None:
        """Keep the latest ``global_costmap/costmap``."""
        self.robot.global_costmap.update_costmap(msg)

    def state_callback(self, msg: State) -> None:
        """Store the state, then run the logic callback; an exception is logged, not raised."""
        robot = self.robot
        robot.state = msg
        robot.tick = int(msg.tick)
        self.calls += 1
        try:
            self.logic(robot)
        except Exception as exc:  # user code: report and keep the node alive
            self.errors += 1
            self.get_logger().error(
                f"logic callback raised at tick {msg.tick} ({self.errors} failures so far): "
                f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}",
                throttle_duration_sec=ERROR_LOG_PERIOD)

    def destroy_node(self) -> None:
        """Destroy the action client too."""
        self.nav_client.destroy()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Entry point of ``controller_node``: parameters ``robot_id`` and ``logic``.

    Runs until Ctrl-C or a shutdown (``ros2 launch`` ending), exiting quietly; a bad parameter
    or logic spec exits 2 with a one-line message.
    """
    with ros_process("controller_node", args) as proc:
        params = read_parameters("maes_controller_params",
                                 {"robot_id": 0, "logic": "maes_controller.logic:logic"})
        try:
            node = proc.own(ControllerNode(params["robot_id"], params["logic"]))
        except ValueError as exc:
            proc.fail(exc)
        rclpy.spin(node)
