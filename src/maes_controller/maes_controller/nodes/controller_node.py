"""The per-robot controller node: calls the user's ``logic(robot)`` once per logic tick.

Run one per robot: ``ros2 run maes_controller controller_node --ros-args -p robot_id:=0
-p logic:=my_package.my_logic:logic`` (``logic`` defaults to the shipped frontier explorer,
``maes_controller.algorithms.frontier_explorer:logic``; point it at your own, e.g. the template
``maes_controller.logic:logic`` or ``path/to/my_logic.py:logic``), or build it
in-process: ``ControllerNode(0, my_logic, context=...)``.

The node lives in namespace ``robot<i>`` and talks only to that namespace, through the same
names on both stacks: it subscribes ``maes_state`` (each new state triggers the callback),
``tf`` (map -> odom -> base_footprint gives ``robot_position``), ``global_costmap/costmap``,
``scan`` and ``odom`` (``scan_ranges`` / ``scan_angles``, ``robot_velocity``); it sends
``navigate_to_pose`` goals, publishes ``cmd_vel`` while the logic drives with
``set_velocity`` (once per logic tick, after the callback) and calls ``maes_broadcast`` /
``maes_deposit_tag``.
Nothing the callback calls blocks: goals, cancels and service calls are sent asynchronously
and their outcome shows in later ticks (``nav_status``, the next states). A callback that
raises is logged with its traceback (throttled), counted (``errors``; sent to the simulator in
each lockstep report, ``TickDone.logic_failures``) and called again on the next state.

With Nav2 (parameter ``navigator:=nav2``) the node joins lockstep without waiting for Nav2,
whose activation may need the simulation to run (docs/full_stack.md, "How the full stack
starts"); a goal sent before Nav2's ``bt_navigator`` reports active waits here (``PENDING``)
and is sent once it does.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from typing import Any

import numpy as np
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import Twist, TwistStamped
from lifecycle_msgs.msg import State as LifecycleState
from lifecycle_msgs.srv import GetState
from nav2_msgs.action import NavigateToPose
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.action import ActionClient
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.node import Node
from sensor_msgs.msg import LaserScan
from tf2_msgs.msg import TFMessage

from maes_common.contract import (
    BASE_FRAME,
    DEFAULT_LOGIC,
    NAVIGATION_DONE_TOPIC,
    TICK_DONE_TOPIC,
    TICK_TOPIC,
    robot_namespace,
    scan_angles,
)
from maes_common.lockstep import JOIN, LEAVE, RunMembership
from maes_common.participant import LockstepReporter
from maes_common.process import (
    EndsQuietly,
    read_parameters,
    reporting_node_names,
    ros_process,
)
from maes_common.qos import (
    CMD_QOS,
    DEFAULT_QOS,
    LATCHED_QOS,
    LOCKSTEP_READER_QOS,
    MAX_REQUESTS_IN_FLIGHT,
    SCAN_READER_QOS,
    SERVICE_QOS,
    STATE_QOS,
    TF_QOS,
)
from maes_interfaces.msg import State, Tick, TickDone
from maes_interfaces.srv import BroadcastToAll, DepositTag

from ..maes_compat import MaesCostmap
from ..navigation import NavErrorCode, NavStep, error_text, goal_problem
from ..robot_api import LogicFunction, NavStatus, load_logic
from ..tf_pose import FrameTree, stamp_seconds
from ..velocity import MotionNote, VelocityCommand, check_motion_model, velocity_problem
from . import ros_conversions as cv
from .navigator_node import with_sim_time

#: The costmap: reliable, transient local (the latest one arrives even if published earlier).
COSTMAP_QOS = LATCHED_QOS

#: Seconds between two logs of a failing callback.
ERROR_LOG_PERIOD = 5.0
#: Who serves navigate_to_pose (the ``navigator`` parameter): the built-in navigator, which is
#: up before the controllers join lockstep, or Nav2, whose goals wait for its activation.
NAVIGATORS = ("builtin", "nav2")
#: Nav2's node whose lifecycle state says navigate_to_pose accepts goals (as
#: nav2_simple_commander's waitUntilNav2Active asks it), and how often it is asked (wall s).
NAV2_GATE_NODE = "bt_navigator"
NAV2_POLL_PERIOD = 1.0
#: Wall seconds between two looks at whether the run's simulator is still on the graph, and
#: how long it must have been gone before the run counts as over (a backstop: the simulator
#: announces the end, but a message can be lost when its process ends right after sending).
SIMULATOR_CHECK_PERIOD = 1.0
SIMULATOR_GONE_S = 2.0

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
        self.namespace = robot_namespace(self.robot_id)
        self.state: Any = None
        self.tick = -1
        self.global_costmap = MaesCostmap(node.get_logger())
        self.nav_status = NavStatus.IDLE
        self.nav_feedback: Any = None
        self.nav_error = ""
        self.logger = node.get_logger()
        self.memory: dict = {}
        #: Broadcast/tag requests refused here: MAX_REQUESTS_IN_FLIGHT were unanswered.
        self.requests_refused = 0
        # per kind (goal, cancel, broadcast, tag): requests sent, not yet answered
        self._in_flight: dict[str, int] = {}
        #: navigate_to_pose results and feedback messages received (for lockstep).
        self.results_received = 0
        self.feedback_received = 0
        self.frames = FrameTree()
        #: The latest scan and odometry (None before the first) and their stamps (sim s).
        self.scan_ranges: np.ndarray | None = None
        self.scan_angles: np.ndarray | None = None
        self.robot_velocity: tuple[float, float] | None = None
        self.scan_stamp: float | None = None
        self.odom_stamp: float | None = None
        self._angles_key: tuple[float, float, int] | None = None
        #: What set_velocity asked for; cmd_vel messages published for it so far.
        self.velocity = VelocityCommand()
        #: Says once what the motion model drops of a set_velocity command.
        self.motion_note = MotionNote(*node.motion)
        self.cmd_vel_sent = 0
        self._goal_seq = 0
        self._sent_seq = 0  # the newest goal sent to the navigator
        self._goal_handle = None
        self._cancel_requested = False
        self._queued_goal: tuple[float, float] | None = None  # waits for Nav2's activation

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
        previous = self._goal_handle
        self._goal_seq += 1
        self._goal_handle = None
        self._cancel_requested = False
        self._queued_goal = None
        self.nav_feedback = None
        self.nav_error = ""
        problem = goal_problem(x, y)
        self.velocity.goal_sent(refused=problem is not None)
        if problem is not None:
            # Refused here, as the navigator would refuse it (Nav2's code, status ABORTED);
            # like any new goal it ends the current one, which the navigator learns by a cancel.
            if previous is not None and not self.nav_status.done:
                self._cancel(previous)
            step = NavStep(
                status=NavStatus.ABORTED,
                error_code=int(NavErrorCode.GOAL_OUTSIDE_MAP),
                error_msg=problem,
            )
            self.nav_status = NavStatus.ABORTED
            self.nav_error = error_text(step)
            self.logger.warning(
                f"{self.namespace}: goal refused ({self.nav_error})", throttle_duration_sec=5.0
            )
            return
        if self._node.goals_wait_for_navigator and not self._node.navigator_active:
            # Nav2 is still coming up: the goal waits here, the tick goes on.
            self._queued_goal = (x, y)
            self.nav_status = NavStatus.PENDING
            self.logger.info(
                f"{self.namespace}: goal waits until Nav2's {NAV2_GATE_NODE} is active",
                throttle_duration_sec=5.0,
            )
            return
        if not client.server_is_ready():
            self.nav_status = NavStatus.REJECTED
            self.nav_error = "navigate_to_pose action server is not available"
            self.logger.warning(f"{self.namespace}: {self.nav_error}", throttle_duration_sec=5.0)
            return
        self._send_goal(x, y)

    def send_queued_goal(self) -> None:
        """Send the goal that waited for the navigator (none: nothing to do)."""
        if self._queued_goal is not None:
            x, y = self._queued_goal
            self._queued_goal = None
            self._send_goal(x, y)

    def _send_goal(self, x: float, y: float) -> None:
        client = self._node.nav_client
        seq = self._goal_seq
        stamp = self._node.get_clock().now().to_msg()
        self._sent_seq = seq
        self._sent("goal")
        future = client.send_goal_async(
            cv.goal_to_msg(x, y, stamp), feedback_callback=lambda msg: self._feedback(seq, msg)
        )
        future.add_done_callback(lambda f: self._goal_response(seq, f))
        self.nav_status = NavStatus.PENDING

    def cancel_nav(self) -> None:
        """Ask the navigator to cancel the current goal (no-op when none is in progress)."""
        if self.nav_status.done:
            return
        if self._queued_goal is not None:  # never sent: nothing to ask
            self._queued_goal = None
            self.nav_status = NavStatus.CANCELED
            return
        if self._goal_handle is not None:
            self._cancel(self._goal_handle)
        else:
            self._cancel_requested = True  # sent as soon as the goal is accepted

    def is_nav_complete(self) -> bool:
        """True when no goal is in progress."""
        return self.nav_status.done

    # -- reactive -----------------------------------------------------------------------------
    def set_velocity(self, linear: float, angular: float, lateral: float = 0.0) -> None:
        """Drive with ``linear`` m/s, ``angular`` rad/s and ``lateral`` m/s (sideways, an
        omnidirectional robot) from now on (rules: :mod:`maes_controller.velocity`); published
        on ``cmd_vel`` after each logic call."""
        problem = velocity_problem(linear, angular, lateral)
        if problem is not None:
            self.logger.warning(
                f"{self.namespace}: set_velocity refused: {problem}", throttle_duration_sec=5.0
            )
            return
        in_progress = not self.nav_status.done
        if in_progress:
            self.cancel_nav()
        self.velocity.set(linear, angular, self.tick, in_progress, lateral)
        note = self.motion_note.check(linear, angular, lateral)
        if note is not None:
            self.logger.warning(f"{self.namespace}: {note}")

    def receive_scan(self, msg: LaserScan) -> None:
        """Keep a ``scan`` as metres (+inf: no return) and its rays' angles."""
        n = len(msg.ranges)
        self.scan_ranges = np.frombuffer(msg.ranges, dtype=np.float32).astype(np.float64)
        key = (msg.angle_min, msg.angle_increment, n)
        if key != self._angles_key:
            self._angles_key = key
            self.scan_angles = scan_angles(msg.angle_min, msg.angle_increment, n)
            self.scan_angles.setflags(write=False)
        self.scan_stamp = stamp_seconds(msg.header.stamp)

    def receive_odom(self, msg: Odometry) -> None:
        """Keep the robot's own velocity from ``odom``'s twist."""
        twist = msg.twist.twist
        self.robot_velocity = (float(twist.linear.x), float(twist.angular.z))
        self.odom_stamp = stamp_seconds(msg.header.stamp)

    def _cancel(self, handle) -> None:
        self._sent("cancel")
        handle.cancel_goal_async().add_done_callback(lambda _f: self._answered("cancel"))

    @property
    def pending_requests(self) -> int:
        """Broadcast/tag requests, goals and cancels sent and not yet answered."""
        return sum(self._in_flight.values())

    def _sent(self, what: str) -> None:
        self._in_flight[what] = self._in_flight.get(what, 0) + 1

    def _answered(self, what: str) -> None:
        self._in_flight[what] -= 1
        self._node.request_answered()

    def unanswered(self) -> list[str]:
        """The requests sent and not yet answered, by kind (e.g. ``["1 goal", "2 tag"]``)."""
        return [f"{n} {what}" for what, n in sorted(self._in_flight.items()) if n > 0]

    def _goal_response(self, seq: int, future) -> None:
        try:
            handle = future.result()
            if handle is not None and handle.accepted:
                # every accepted goal's result is fetched: lockstep counts them all
                handle.get_result_async().add_done_callback(lambda f: self._result(seq, f))
            if seq != self._goal_seq:
                # An older goal: the navigator preempts it with the newer one, unless the newer
                # one was refused here and never sent; then this one is cancelled.
                if seq == self._sent_seq and handle is not None and handle.accepted:
                    self._cancel(handle)
                return
            if handle is None or not handle.accepted:
                self.nav_status = NavStatus.REJECTED
                self.nav_error = "goal rejected by the navigator"
                return
            self._goal_handle = handle
            self.nav_status = NavStatus.ACTIVE
            if self._cancel_requested:
                self._cancel(handle)
        finally:
            self._answered("goal")

    def _feedback(self, seq: int, msg) -> None:
        self.feedback_received += 1
        if seq == self._goal_seq:
            self.nav_feedback = msg.feedback
        self._node.request_answered()

    def _result(self, seq: int, future) -> None:
        # The outcome first, then the count: counting may run the next tick's logic at once,
        # which must see this goal's outcome.
        try:
            if seq != self._goal_seq:
                return
            response = future.result()
            self._goal_handle = None
            self.nav_status = _GOAL_STATUS.get(response.status, NavStatus.ABORTED)
            if self.nav_status is NavStatus.ABORTED:
                result = response.result
                self.nav_error = error_text(result)
        finally:
            self.results_received += 1
            self._node.request_answered()

    # -- services -----------------------------------------------------------------------------
    def broadcast_msg(self, text: str) -> None:
        """Broadcast ``text`` (``maes_broadcast``); the answer is only checked for refusals."""
        self._call(self._node.broadcast_client, BroadcastToAll.Request(msg=str(text)), "broadcast")

    def deposit_tag(self, text: str) -> None:
        """Deposit a tag with ``text`` here (``maes_deposit_tag``)."""
        self._call(self._node.tag_client, DepositTag.Request(msg=str(text)), "tag")

    def _call(self, client, request, what: str) -> None:
        if not client.service_is_ready():
            self.logger.warning(
                f"{self.namespace}: {client.srv_name} is not available; {what} dropped",
                throttle_duration_sec=5.0,
            )
            return
        in_flight = self._in_flight.get(what, 0)
        if in_flight >= MAX_REQUESTS_IN_FLIGHT:
            # Beyond the service's queue DDS would drop requests silently: refuse them here.
            self.requests_refused += 1
            self.logger.warning(
                f"{self.namespace}: {what} refused: {in_flight} {what} requests are unanswered "
                f"(at most {MAX_REQUESTS_IN_FLIGHT} in flight; {self.requests_refused} "
                "refused so far)",
                throttle_duration_sec=5.0,
            )
            return

        def done(future) -> None:
            response = future.result()
            if response is not None and not response.result:
                text = request.msg if len(request.msg) <= 60 else request.msg[:57] + "..."
                self.logger.warning(
                    f"{self.namespace}: {what} {text!r} refused by the simulator",
                    throttle_duration_sec=5.0,
                )
            self._answered(what)

        self._sent(what)
        client.call_async(request).add_done_callback(done)


def navigator_counts(msg: TickDone) -> dict[int, tuple[int, int]]:
    """A navigator's report read per robot: ``{robot: (results sent, feedback sent)}`` (a count
    the report lacks is 0)."""
    results, feedback = list(msg.results_sent), list(msg.feedback_sent)
    return {
        int(r): (
            int(results[k]) if k < len(results) else 0,
            int(feedback[k]) if k < len(feedback) else 0,
        )
        for k, r in enumerate(msg.robots)
    }


class ControllerNode(EndsQuietly, Node):
    """One robot's controller: runs ``logic(robot)`` once per logic tick.

    With the simulator in lockstep (its ``/maes/tick`` manifest says so) the node takes part
    as a participant with role ``controller``: it runs the logic of tick ``t`` once it holds
    that tick's ``maes_state`` and ``tf``, the costmap of the tick's map (when maps were
    published and a lockstep navigator serves it), and the navigator's report of tick ``t - 1``
    with every result and feedback message it counted; when the logic's requests (goals,
    cancels, broadcasts, tags) are all answered, it reports tick ``t`` on ``/maes/tick_done``.
    Free-running, it runs the logic on every new state. Nothing runs before the simulator's
    first manifest. Inputs missing for ``input_timeout`` wall seconds are waited for while the
    simulator and the navigators are on the ROS graph (a warning says so); once one of them is
    gone the logic runs with what it has. Requests unanswered ``input_timeout`` wall seconds
    after the logic sent them are waited for too, with a warning naming them.

    The node takes part in one run: it joins with the run id of the simulator's first manifest
    and ignores everything of other runs. When that run announces its end, or a manifest of
    another run shows it ended without a word, or the simulator has left the ROS graph (for
    :data:`SIMULATOR_GONE_S`), :attr:`run.over <RunMembership.over>` says why
    and the node does nothing more (``controller_node`` then exits).

    Parameters
    ----------
    robot_id : int
        The robot ``i`` (namespace ``robot<i>``), >= 0.
    logic : callable or str
        ``logic(robot) -> None``, or a ``"package.module:function"`` spec.
    input_timeout : float
        Wall seconds between checks of a tick's missing inputs in lockstep: waited for while
        their publishers run, given up on once one is gone (<= 0: wait for ever).
    wait_for_navigator : bool
        Join lockstep only once ``navigate_to_pose`` is served (default True; False for a
        controller that never navigates, or for Nav2: see ``goals_wait_for_navigator``).
    goals_wait_for_navigator : bool
        Nav2 serves ``navigate_to_pose`` (default False): goals sent before its
        ``bt_navigator`` reports the lifecycle state active (asked through
        ``bt_navigator/get_state``, as nav2_simple_commander does) wait in ``PENDING`` and are
        sent once it does; lockstep goes on meanwhile.
    poll_timer : bool
        Own a 20 Hz steady timer for joining and input deadlines (default). With False the
        owner calls :meth:`timer_callback` itself, as the embedded runner does for all its
        controllers at once.
    cmd_vel_stamped : bool
        Publish ``cmd_vel`` (from ``set_velocity``) as TwistStamped; match the simulator's
        ``cmd_vel_stamped`` (default False: Twist).
    motion : (str, float or None, float or None)
        The simulator's motion model and the robot's top speeds (m/s, rad/s; None: unknown),
        only to log once what the model drops of a ``set_velocity`` command
        (:func:`~maes_controller.velocity.motion_model_note`). Default ``("maes", None, None)``.
    run_id : str, optional
        Take part in this run only (the simulator's ``run_id``; the embedded runner and the
        launch know it); default: the run of the first manifest.
    hub : ControllerHub, optional
        The process's hub of many controllers (``controller_container``,
        :class:`~maes_controller.nodes.controller_hub.ControllerHub`): the node then reads the
        manifests and the navigators' reports through it, reports each tick to it (the hub
        sends one report for all its controllers once each has handled the tick) and asks it
        whether the simulator is on the ROS graph. Default: on its own.
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

    def __init__(
        self,
        robot_id: int,
        logic: LogicFunction | str = DEFAULT_LOGIC,
        *,
        input_timeout: float = 10.0,
        wait_for_navigator: bool = True,
        goals_wait_for_navigator: bool = False,
        poll_timer: bool = True,
        cmd_vel_stamped: bool = False,
        motion: tuple[str, float | None, float | None] = ("maes", None, None),
        run_id: str | None = None,
        hub: Any = None,
        node_name: str = "maes_controller",
        **node_kwargs: Any,
    ) -> None:
        if isinstance(robot_id, bool) or not isinstance(robot_id, int) or robot_id < 0:
            raise ValueError(f"robot_id must be an int >= 0, got {robot_id!r}")
        fn = load_logic(logic) if isinstance(logic, str) else logic
        if not callable(fn):
            raise ValueError(
                f"logic must be callable or a 'package.module:function' spec, got {logic!r}"
            )
        node_kwargs.setdefault("namespace", robot_namespace(robot_id))
        super().__init__(node_name, **with_sim_time(node_kwargs))
        self.logic = fn
        self.motion = (str(motion[0]), motion[1] or None, motion[2] or None)
        self.calls = 0
        self.errors = 0
        self.input_timeout = float(input_timeout)
        self.wait_for_navigator = bool(wait_for_navigator)
        self.goals_wait_for_navigator = bool(goals_wait_for_navigator)
        #: False until Nav2's bt_navigator reported active (True when goals do not wait).
        self.navigator_active = not self.goals_wait_for_navigator
        self._gate_client = (
            self.create_client(GetState, f"{NAV2_GATE_NODE}/get_state")
            if self.goals_wait_for_navigator
            else None
        )
        self._gate_future = None
        self._gate_asked = -NAV2_POLL_PERIOD
        self._sim_checked = -SIMULATOR_CHECK_PERIOD  # wall time of the last look
        self._sim_missing_since: float | None = None
        self.robot = RosRobot(self, robot_id)
        self.manifest: Tick | None = None
        self._manifest_stamp = 0.0
        self._manifest_wall = 0.0
        self._costmap_stamp: float | None = None
        self._navigator_reports: dict[str, tuple[int, int, int]] = {}  # tick, results, feedback
        self._ran_tick = -1  # tick whose logic ran
        self._ran_wall = 0.0  # when it ran (monotonic s)
        #: The run this node takes part in (its id from the first manifest).
        self.run = RunMembership(run_id)
        # navigators' reports heard before the run was known: (run_id, participant, tick,
        # results sent, feedback sent) for this robot
        self._early_reports: list[tuple[str, str, int, int, int]] = []
        self.hub = hub
        # Relative names: they resolve inside the node's namespace (robot<i>).
        self.nav_client = ActionClient(self, NavigateToPose, "navigate_to_pose")
        self.broadcast_client = self.create_client(
            BroadcastToAll, "maes_broadcast", qos_profile=SERVICE_QOS
        )
        self.tag_client = self.create_client(
            DepositTag, "maes_deposit_tag", qos_profile=SERVICE_QOS
        )
        robot = self.robot
        self.lockstep_reporter = (
            hub.member(self)
            if hub is not None
            else LockstepReporter(
                self,
                TICK_DONE_TOPIC,
                "controller",
                lambda: [(robot.robot_id, robot.cmd_vel_sent, 0, 0)],
                extra=lambda: {"logic_failures": [self.errors], "logic_calls": [self.calls]},
                run_id=lambda: self.run.run_id,
            )
        )
        self.cmd_vel_stamped = bool(cmd_vel_stamped)
        self.cmd_pub = self.create_publisher(
            TwistStamped if self.cmd_vel_stamped else Twist, "cmd_vel", CMD_QOS
        )
        self.create_subscription(LaserScan, "scan", self.scan_callback, SCAN_READER_QOS)
        self.create_subscription(Odometry, "odom", self.odom_callback, DEFAULT_QOS)
        self.create_subscription(TFMessage, "tf", self.tf_callback, TF_QOS)
        self.create_subscription(
            OccupancyGrid, "global_costmap/costmap", self.costmap_callback, COSTMAP_QOS
        )
        # raw: most logics read the tick and the broadcasts, not the tags (cv.WireState)
        self.create_subscription(State, "maes_state", self.state_callback, STATE_QOS, raw=True)
        if hub is None:  # else the hub hands the manifests and reports on
            self.create_subscription(Tick, TICK_TOPIC, self.tick_callback, LOCKSTEP_READER_QOS)
            self.create_subscription(
                TickDone, NAVIGATION_DONE_TOPIC, self.tick_done_callback, LOCKSTEP_READER_QOS
            )
        # Joins lockstep once the servers it sends to are there; then checks input deadlines.
        # On the steady clock: sim time stands still until the simulator starts. An owner
        # running many controllers in one process polls them instead (poll_timer=False).
        self._timer = (
            self.create_timer(
                0.05, self.timer_callback, clock=RosClock(clock_type=ClockType.STEADY_TIME)
            )
            if poll_timer
            else None
        )

    # -- lockstep ------------------------------------------------------------------------------
    @property
    def lockstep(self) -> bool:
        """True while the simulator runs in lockstep (its latest manifest says so)."""
        return self.manifest is not None and self.manifest.lockstep

    @property
    def reported_tick(self) -> int:
        """The newest tick reported on ``/maes/tick_done`` (``JOIN - 1`` before joining)."""
        return self.lockstep_reporter.reported_tick

    def _report(self, tick: int) -> None:
        self.lockstep_reporter.report(tick)

    def _watch_navigator(self) -> None:
        """Ask Nav2's bt_navigator for its lifecycle state until it is active; then send the
        goal that waited."""
        if not self.navigator_active:
            future, self._gate_future = self._gate_future, None
            if future is not None and not future.done():
                self._gate_future = future
                return
            state = future.result() if future is not None else None
            if state is not None and state.current_state.id == LifecycleState.PRIMARY_STATE_ACTIVE:
                self.navigator_active = True
                self.get_logger().info(f"Nav2's {NAV2_GATE_NODE} is active: goals go out")
            elif time.monotonic() - self._gate_asked >= NAV2_POLL_PERIOD:
                if self._gate_client.service_is_ready():
                    self._gate_asked = time.monotonic()
                    self._gate_future = self._gate_client.call_async(GetState.Request())
                return
        if self.navigator_active and self.nav_client.server_is_ready():
            self.robot.send_queued_goal()

    def timer_callback(self) -> None:
        """Join once the simulator announced its run and the navigator and the simulator's
        services answer; enforce the input deadline; with Nav2, send a goal that waited once
        Nav2 is active."""
        if self.run.over is not None:
            return
        if self._gate_client is not None:
            self._watch_navigator()
        if self.reported_tick < JOIN:
            if (
                self.run.run_id is not None
                and (self.nav_client.server_is_ready() or not self.wait_for_navigator)
                and self.broadcast_client.service_is_ready()
                and self.tag_client.service_is_ready()
            ):
                self.run.joined = True
                self._report(JOIN)
                # The logic may have run this tick already (a simulator that does not wait for
                # controllers steps on before this node joins): report it, or the simulator,
                # now waiting for this node, would wait for ever.
                self.request_answered()
            return
        if self._simulator_gone():
            self.run.simulator_gone()
            return
        m = self.manifest
        if (
            m is not None
            and m.lockstep
            and self._ran_tick == m.tick
            and self.reported_tick < m.tick
            and self.robot.pending_requests > 0
            and self.input_timeout > 0
            and time.monotonic() - self._ran_wall > self.input_timeout
        ):
            # A lost answer would stop the run here for ever: say what it waits for.
            self.get_logger().warning(
                f"tick {m.tick}: requests unanswered {self.input_timeout:g} s after the logic "
                f"sent them ({', '.join(self.robot.unanswered())}); the tick is reported once "
                "they are answered",
                throttle_duration_sec=ERROR_LOG_PERIOD,
            )
            return
        if (
            m is not None
            and m.lockstep
            and self._ran_tick < m.tick
            and self.input_timeout > 0
            and time.monotonic() - self._manifest_wall > self.input_timeout
        ):
            missing = self._missing(m)
            if self._producers_alive(m):
                # Slow, not gone (a loaded machine, a first-run compile): wait, so that the
                # logic sees the same inputs whatever the machine's speed.
                self.get_logger().warning(
                    f"tick {m.tick}: inputs missing after {self.input_timeout:g} s "
                    f"({', '.join(missing)}); their publishers are running: waiting",
                    throttle_duration_sec=ERROR_LOG_PERIOD,
                )
                return
            self.get_logger().warning(
                f"tick {m.tick}: inputs missing after {self.input_timeout:g} s "
                f"({', '.join(missing)}) and their publisher is gone; running the logic "
                "with what is here",
                throttle_duration_sec=ERROR_LOG_PERIOD,
            )
            self._run(m.tick)

    def _simulator_gone(self) -> bool:
        """True once no node has published the run's manifests (``/maes/tick``) for
        :data:`SIMULATOR_GONE_S` wall seconds; looked at every :data:`SIMULATOR_CHECK_PERIOD`."""
        now = time.monotonic()
        if now - self._sim_checked < SIMULATOR_CHECK_PERIOD:
            return False
        self._sim_checked = now
        hub = self.hub
        if (hub.tick_publishers() if hub is not None else self.count_publishers(TICK_TOPIC)) > 0:
            self._sim_missing_since = None
            return False
        if self._sim_missing_since is None:
            self._sim_missing_since = now
        return now - self._sim_missing_since >= SIMULATOR_GONE_S

    def _producers_alive(self, m: Tick) -> bool:
        """True while the simulator and every navigator of manifest ``m`` are on the graph (a
        navigator by its report publisher: a node's name may outlive its process,
        :func:`~maes_common.process.reporting_node_names`)."""
        alive = reporting_node_names(self, (NAVIGATION_DONE_TOPIC,))
        if any(name not in alive for name in m.navigators):
            return False
        return self.count_publishers("maes_state") > 0

    def tick_callback(self, msg: Tick) -> None:
        """A new manifest: run the logic when its inputs are here. Before the start (tick
        ``NOT_STARTED``) it only announces the run; one of another run, or with an end reason,
        may end this node's run (:attr:`run`)."""
        self.run.see(msg.run_id, msg.end_reason)
        if self._early_reports and self.run.run_id is not None:
            early, self._early_reports = self._early_reports, []
            for report in early:  # the latched reports may arrive before the first manifest
                self.navigator_report(*report)
        if not self.run.ours(msg.run_id) or msg.tick < 0:
            return
        if self.manifest is not None and msg.tick < self.manifest.tick:
            return
        self.manifest = msg
        self._manifest_stamp = stamp_seconds(msg.stamp)
        self._manifest_wall = time.monotonic()
        self._advance()

    def tick_done_callback(self, msg: TickDone) -> None:
        """Keep the navigators' reports (of this node's run): what they sent for this robot so
        far."""
        if msg.role != "navigator":
            return
        sent = navigator_counts(msg).get(self.robot.robot_id)
        if sent is not None:
            self.navigator_report(msg.run_id, msg.participant, int(msg.tick), *sent)

    def navigator_report(
        self, run_id: str, participant: str, tick: int, results: int, feedback: int
    ) -> None:
        """Take navigator ``participant``'s report of ``tick`` (or LEAVE) for run ``run_id``:
        the navigation results and feedback it sent this robot so far (from
        :meth:`tick_done_callback`, or from the process's hub, which reads each report once)."""
        if self.run.run_id is None:
            self._early_reports = [
                *self._early_reports[-63:],
                (run_id, participant, tick, results, feedback),
            ]
            return
        if not self.run.ours(run_id):
            return
        old = self._navigator_reports.get(participant, (JOIN, 0, 0))
        if tick == LEAVE:
            self._navigator_reports.pop(participant, None)
        else:
            self._navigator_reports[participant] = (
                max(old[0], tick),
                max(old[1], results),
                max(old[2], feedback),
            )
        self._advance()

    def holdup(self) -> str:
        """Why this controller has not reported its latest manifest's tick, in words (for the
        warning of a process's hub that waits for it: :meth:`ControllerHub.check_late`)."""
        if self.run.over is not None:
            return f"it runs no more ticks: {self.run.over}"
        if self.reported_tick < JOIN:
            return "not joined yet"
        m = self.manifest
        if m is None:
            return "no manifest of a started tick yet"
        if self._ran_tick < m.tick:
            missing = self._missing(m)
            if missing:
                return f"inputs missing: {', '.join(missing)}"
            return "its inputs are here, the logic has not run yet"
        if self.robot.pending_requests > 0:
            return f"requests unanswered: {', '.join(self.robot.unanswered())}"
        return f"ran tick {self._ran_tick}, reported {self.reported_tick}"

    def _missing(self, m: Tick) -> list[str]:
        """The inputs of tick ``m.tick`` that are not here yet."""
        robot = self.robot
        missing = []
        if robot.tick != m.tick:
            missing.append("maes_state")
        base = robot.frames.get(BASE_FRAME)
        if base is None or base.stamp != self._manifest_stamp:
            missing.append("tf")
        if robot.scan_stamp != self._manifest_stamp:
            missing.append("scan")
        if robot.odom_stamp != self._manifest_stamp:
            missing.append("odom")
        if m.maps_published and m.navigators and self._costmap_stamp != self._manifest_stamp:
            missing.append("global_costmap/costmap")
        for name in m.navigators:
            tick, results, feedback = self._navigator_reports.get(name, (JOIN - 1, 0, 0))
            if tick < m.tick - 1:
                missing.append(f"{name}'s report of tick {m.tick - 1}")
            elif robot.results_received < results or robot.feedback_received < feedback:
                missing.append(f"navigate_to_pose results/feedback from {name}")
        return missing

    def _advance(self) -> None:
        m = self.manifest
        if m is None or self._ran_tick >= m.tick or self.run.over is not None:
            return
        if not m.lockstep:
            if self.robot.tick > self._ran_tick:  # free-running: every new state
                self._run(self.robot.tick)
            return
        if not self._missing(m):
            self._run(m.tick)

    def _run(self, tick: int) -> None:
        """Run the logic once for ``tick``; report it when its requests are answered."""
        self._ran_tick = tick
        self._ran_wall = time.monotonic()
        robot = self.robot
        self.calls += 1
        try:
            self.logic(robot)
        except Exception as exc:  # user code: report and keep the node alive
            if not self.context.ok():
                # A stop signal shut the context down during the call (the robot API's rclpy
                # calls then raise "context is invalid"): the node is ending, the logic did not
                # fail, and nothing can be sent any more.
                return
            self.errors += 1
            # The first failure with its traceback; later ones throttled (the simulator counts
            # them all: summary.json's logic_failures, maes_run's progress line).
            self.get_logger().error(
                f"logic callback raised at tick {robot.tick} ({self.errors} of {self.calls} "
                f"calls failed so far): {type(exc).__name__}: {exc}\n{traceback.format_exc()}",
                throttle_duration_sec=ERROR_LOG_PERIOD,
            )
        command = robot.velocity.to_send(tick)
        if command is not None:  # counted in the tick's report, before it is sent
            self.cmd_pub.publish(
                cv.twist_to_msg(
                    command[0],
                    command[1],
                    self.cmd_vel_stamped,
                    self.get_clock().now().to_msg(),
                    BASE_FRAME,
                    lateral=command[2],
                )
            )
            robot.cmd_vel_sent += 1
        self.request_answered()

    def request_answered(self) -> None:
        """Something the node waited for arrived: report the tick or run the next logic."""
        m = self.manifest
        if m is None or not m.lockstep or self.reported_tick < JOIN:
            return
        if self._ran_tick == m.tick and self.reported_tick < m.tick:
            if self.robot.pending_requests <= 0:
                self._report(m.tick)
        else:
            self._advance()

    # -- inputs --------------------------------------------------------------------------------
    def tf_callback(self, msg: TFMessage) -> None:
        """Keep the latest transforms (the robot's pose)."""
        self.robot.frames.update(msg)
        self._advance()

    def costmap_callback(self, msg: OccupancyGrid) -> None:
        """Keep the latest ``global_costmap/costmap``."""
        self.robot.global_costmap.update_costmap(msg)
        self._costmap_stamp = stamp_seconds(msg.header.stamp)
        self._advance()

    def scan_callback(self, msg: LaserScan) -> None:
        """Keep the latest ``scan``."""
        self.robot.receive_scan(msg)
        self._advance()

    def odom_callback(self, msg: Odometry) -> None:
        """Keep the latest ``odom`` (the robot's velocity)."""
        self.robot.receive_odom(msg)
        self._advance()

    def state_callback(self, data: bytes) -> None:
        """Keep the state (read as needed from its bytes); the logic runs when the tick's
        inputs are complete."""
        try:
            state = cv.WireState(data)
        except ValueError as exc:
            self.get_logger().error(f"unreadable maes_state ({exc})", throttle_duration_sec=5.0)
            return
        robot = self.robot
        robot.state = state
        robot.tick = state.tick
        self._advance()

    def destroy_node(self) -> None:
        """Leave lockstep; destroy the action client too."""
        if self.reported_tick >= JOIN:
            with contextlib.suppress(Exception):  # the context may already be shut down
                self._report(LEAVE)
        self.nav_client.destroy()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Entry point of ``controller_node``: parameters ``robot_id``, ``logic``,
    ``cmd_vel_stamped``, ``navigator`` (``builtin``, the default, or ``nav2``) and
    ``motion_model``, ``max_speed`` (m/s), ``max_angular_speed`` (rad/s; 0: unknown), which only
    say what a ``set_velocity`` command becomes.

    Before it starts it looks at its ROS domain: with two MAES-ROS simulators (or built-in
    navigators) on it, it could not tell which run to join, and exits 3 with one line naming the
    domain. Runs until its run ends (the simulator announces it, or a new run shows that it ended
    without a word, or its simulator left the ROS graph), then exits 0 with a line saying so;
    Ctrl-C or a shutdown (``ros2 launch`` ending) also exit quietly. A bad parameter or logic
    spec exits 2 with a one-line message.
    """
    with ros_process("controller_node", args) as proc:
        check_domain(proc)
        params = read_parameters("maes_controller_params", {"robot_id": 0, **CONTROLLER_PARAMETERS})
        try:
            node = proc.own(controller_from_parameters(params["robot_id"], params))
        except ValueError as exc:
            proc.fail(exc)
        proc.spin(node, until=lambda: node.run.over is not None)
        if node.run.over is not None:
            print(f"controller_node: {node.run.over}; exiting", file=sys.stderr, flush=True)


#: controller_node's parameters besides robot_id, with their defaults (controller_container
#: takes the same, for every robot and per robot).
CONTROLLER_PARAMETERS: dict[str, Any] = {
    "logic": DEFAULT_LOGIC,
    "cmd_vel_stamped": False,
    "motion_model": "maes",
    "max_speed": 0.0,
    "max_angular_speed": 0.0,
    "run_id": "",
    "navigator": "builtin",
}


def controller_from_parameters(
    robot_id: int, params: dict[str, Any], name: str = "navigator", **kwargs: Any
) -> ControllerNode:
    """Robot ``robot_id``'s ControllerNode from CONTROLLER_PARAMETERS' values (``name``: how an
    error names the navigator parameter); ``kwargs`` go to ControllerNode. ValueError for a
    bad value."""
    if params["navigator"] not in NAVIGATORS:
        raise ValueError(
            f"parameter {name} must be one of {', '.join(NAVIGATORS)}, got {params['navigator']!r}"
        )
    try:
        check_motion_model(params["motion_model"])
    except ValueError as exc:
        raise ValueError(f"parameter motion_model: {exc}") from None
    nav2 = params["navigator"] == "nav2"
    return ControllerNode(
        robot_id,
        params["logic"],
        cmd_vel_stamped=params["cmd_vel_stamped"],
        motion=(params["motion_model"], params["max_speed"], params["max_angular_speed"]),
        run_id=params["run_id"] or None,
        wait_for_navigator=not nav2,
        goals_wait_for_navigator=nav2,
        **kwargs,
    )


def check_domain(proc) -> None:
    """Exit 3 with one line when this domain holds more than one MAES-ROS simulator or
    navigator (two runs: which would this controller join?)."""
    from maes_common.domain import current_domain, find_runs

    try:
        found = find_runs(whole=True)
    except ValueError as exc:  # a bad ROS_DOMAIN_ID or MAES_DOMAIN_PROBE_S
        proc.fail(exc)
    for role in ("simulator", "navigator"):
        mine = [what for what in found if what.split(" ")[0] == role]
        if len(mine) > 1:
            proc.fail(
                f"ROS domain {current_domain()} holds {len(mine)} MAES-ROS {role}s "
                f"({', '.join(mine)}): two runs share it, and this controller cannot tell which "
                "to join. Give each run its own domain (ROS_DOMAIN_ID=<n> make run) and start "
                "its controllers with the same ROS_DOMAIN_ID",
                code=3,
            )
