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

import contextlib
import math
import threading
from typing import Any

from geometry_msgs.msg import Twist, TwistStamped
from nav2_msgs.action import NavigateToPose
from nav_msgs.msg import OccupancyGrid, Path
from rclpy.action import ActionServer, CancelResponse
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from tf2_msgs.msg import TFMessage

from maes_interfaces.msg import State, Tick, TickDone
from maes_sim.contract import (
    BASE_FRAME,
    MAP_FRAME,
    NAVIGATION_DONE_TOPIC,
    ODOM_FRAME,
    TICK_DONE_TOPIC,
    TICK_TOPIC,
    robot_namespace,
)
from maes_sim.lockstep import JOIN, LEAVE, RunMembership
from maes_sim.ros.process import read_parameters, ros_process
from maes_sim.ros.qos import (
    CMD_QOS,
    LATCHED_QOS,
    LOCKSTEP_READER_QOS,
    LOCKSTEP_WRITER_QOS,
    STATE_QOS,
    TF_QOS,
)

from ..navigation import GridMap, NavErrorCode, Navigator, NavParams, NavStep, goal_problem
from ..robot_api import NavStatus
from ..tf_pose import (
    FrameTree,
    SmoothedTransform,
    compose,
    map_odom_jump_distance,
    stamp_seconds,
)
from . import ros_conversions as cv

#: error_msg of a goal aborted because a new one arrived for the same robot.
_PREEMPTED = "preempted by a new goal"

MAP, ODOM, BASE = MAP_FRAME, ODOM_FRAME, BASE_FRAME


def with_sim_time(node_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``node_kwargs`` with ``use_sim_time`` True unless the caller set it."""
    overrides = list(node_kwargs.get("parameter_overrides") or [])
    if not any(p.name == "use_sim_time" for p in overrides):
        overrides.append(Parameter("use_sim_time", value=True))
    return {**node_kwargs, "parameter_overrides": overrides}


class _Namespace:
    """One robot's navigation: its session, latest map and tf, goal, and ROS endpoints."""

    def __init__(
        self, node: NavigatorNode, i: int, params: NavParams, stamped: bool, jump: float
    ) -> None:
        self.name = robot_namespace(i)
        ns = "/" + self.name
        self.navigator = Navigator(params)
        self.frames = FrameTree()
        self.map_odom = SmoothedTransform(reset_distance=jump)
        self.map_odom_stamp: float | None = None  # stamp of the last sample smoothed
        self.grid: GridMap | None = None
        self.index = i
        self.handle = None  # the executing ServerGoalHandle
        self.done: Future | None = None  # completed with the result when the goal ends
        self.start_pending: tuple[float, float] | None = None  # lockstep: start at next step
        self.last_control_stamp: float | None = None
        self.nearby_robots: list[tuple[float, float]] = []  # from maes_state, map frame
        # lockstep inputs: what has arrived for which tick
        self.state_tick = -1
        self.map_stamp: float | None = None
        self.controller_tick = -1  # highest tick its lockstep controller reported
        self.stepped_tick = -1
        # what this node sent for the robot (reported on /maes/tick_done)
        self.cmd_vel_sent = 0
        self.results_sent = 0
        self.feedback_sent = 0
        self.lock = threading.RLock()
        self.stamped = stamped
        self.cmd_pub = node.create_publisher(
            TwistStamped if stamped else Twist, f"{ns}/cmd_vel", CMD_QOS
        )
        self.costmap_pub = node.create_publisher(
            OccupancyGrid, f"{ns}/global_costmap/costmap", LATCHED_QOS
        )
        self.plan_pub = node.create_publisher(Path, f"{ns}/plan", LATCHED_QOS)
        node.create_subscription(
            OccupancyGrid, f"{ns}/map", lambda msg: node.map_callback(self, msg), LATCHED_QOS
        )
        node.create_subscription(
            TFMessage, f"{ns}/tf", lambda msg: node.tf_callback(self, msg), TF_QOS
        )
        node.create_subscription(
            State, f"{ns}/maes_state", lambda msg: node.state_callback(self, msg), STATE_QOS
        )

        async def execute(handle):  # rclpy awaits only true coroutine functions
            return await node.execute_callback(self, handle)

        self.server = ActionServer(
            node,
            NavigateToPose,
            f"{ns}/navigate_to_pose",
            execute_callback=execute,
            handle_accepted_callback=lambda handle: node.accepted_callback(self, handle),
            cancel_callback=lambda handle: node.cancel_callback(self, handle),
        )

    def publish_cmd(self, linear: float, angular: float, stamp) -> None:
        self.cmd_pub.publish(cv.twist_to_msg(linear, angular, self.stamped, stamp))
        self.cmd_vel_sent += 1


class NavigatorNode(Node):
    """Serves ``navigate_to_pose`` for ``robot0 .. robot<N-1>`` (see the module docstring).

    In lockstep (the simulator's ``/maes/tick`` manifest says so) it takes part as the
    participant with role ``navigator``: it steps robot ``i`` at tick ``t`` once it holds that
    tick's ``tf``, ``maes_state`` and (on SLAM ticks) ``map``, and, when robot ``i``'s controller
    takes part too, that controller's report of tick ``t`` (so goals sent by the logic at tick
    ``t`` start at tick ``t``, as in direct mode). When every robot is stepped it reports the tick
    on ``/maes/tick_done`` with what it sent. Otherwise (free-running) it steps each robot on
    every new pose.

    Parameters
    ----------
    config : SimConfig
        The run's configuration (number of robots, robot size and speed, map size, tile size).
    nav_params : NavParams, optional
        Navigation tuning; default ``NavParams.from_config(config)``.
    cmd_vel_stamped : bool
        Publish ``cmd_vel`` as TwistStamped (match the simulator's setting).
    verbose : bool
        Log every goal's start and end at info level (default: debug; failures always warn).
    run_id : str, optional
        Take part in this run only (the simulator's ``run_id``); default: the run of the first
        manifest.
    node_name, node_kwargs
        Passed to ``rclpy.node.Node`` (e.g. ``context=``); ``use_sim_time`` defaults to True.
    """

    def __init__(
        self,
        config: Any,
        *,
        nav_params: NavParams | None = None,
        cmd_vel_stamped: bool = False,
        verbose: bool = False,
        run_id: str | None = None,
        node_name: str = "maes_navigator",
        **node_kwargs: Any,
    ) -> None:
        super().__init__(node_name, **with_sim_time(node_kwargs))
        self.params = nav_params if nav_params is not None else NavParams.from_config(config)
        self.verbose = bool(verbose)
        n = int(config.number_of_robots)
        # Larger map -> odom changes than the SLAM's pose error are real jumps, not noise.
        jump = map_odom_jump_distance(config)
        self.robots = [_Namespace(self, i, self.params, cmd_vel_stamped, jump) for i in range(n)]
        self._done_of: dict[int, Future] = {}  # id(goal handle) -> its result future
        self.manifest: Tick | None = None
        self._manifest_stamp = 0.0
        self._lockstep_robots: frozenset[int] = frozenset()
        self.reported_tick = JOIN - 1  # joins with the run id of the first manifest
        #: The run this node takes part in (its id from the simulator's first manifest).
        self.run = RunMembership(run_id)
        self._early_reports: list[TickDone] = []  # heard before the run was known
        self.participant = self.get_fully_qualified_name()
        self.tick_done_pub = self.create_publisher(
            TickDone, NAVIGATION_DONE_TOPIC, LOCKSTEP_WRITER_QOS
        )
        self.create_subscription(Tick, TICK_TOPIC, self.tick_callback, LOCKSTEP_READER_QOS)
        self.create_subscription(
            TickDone, TICK_DONE_TOPIC, self.tick_done_callback, LOCKSTEP_READER_QOS
        )
        self.get_logger().info(f"serving navigate_to_pose for {n} robot(s)")

    @property
    def lockstep(self) -> bool:
        """True while the simulator runs in lockstep (its latest manifest says so)."""
        return self.manifest is not None and self.manifest.lockstep

    def _log(self, text: str) -> None:
        if self.verbose:
            self.get_logger().info(text)
        else:
            self.get_logger().debug(text)

    # ------------------------------------------------------------------ lockstep
    def _report(self, tick: int) -> None:
        self.reported_tick = tick
        self.tick_done_pub.publish(
            TickDone(
                run_id=self.run.run_id or "",
                participant=self.participant,
                role="navigator",
                tick=int(tick),
                robots=[ns.index for ns in self.robots],
                cmd_vel_sent=[ns.cmd_vel_sent for ns in self.robots],
                results_sent=[ns.results_sent for ns in self.robots],
                feedback_sent=[ns.feedback_sent for ns in self.robots],
            )
        )

    def tick_callback(self, msg: Tick) -> None:
        """A new manifest: join its run (the first), step what can be stepped."""
        self.run.see(msg.run_id, msg.end_reason)
        if self.reported_tick < JOIN and self.run.run_id is not None:
            self.run.joined = True
            self._report(JOIN)
            early, self._early_reports = self._early_reports, []
            for report in early:  # the latched reports may arrive before the first manifest
                self.tick_done_callback(report)
        if not self.run.ours(msg.run_id) or msg.tick < 0:
            return
        if self.manifest is not None and msg.tick < self.manifest.tick:
            return
        self.manifest = msg
        self._manifest_stamp = stamp_seconds(msg.stamp)
        self._lockstep_robots = frozenset(int(i) for i in msg.lockstep_robots)
        if msg.lockstep and self.reported_tick < msg.tick - 1:
            # Ticks before this one are over (missed, or the simulator stepped on without us):
            # say so, so that controllers waiting for our report of tick - 1 go on.
            self._report(msg.tick - 1)
        self._advance()

    def tick_done_callback(self, msg: TickDone) -> None:
        """Reports of the controllers: a robot's goals of tick t are in once its controller
        reported t."""
        if msg.role != "controller" or len(msg.robots) != 1:
            return
        if self.run.run_id is None:
            self._early_reports = [*self._early_reports[-255:], msg]
            return
        if not self.run.ours(msg.run_id):
            return
        i = int(msg.robots[0])
        if not 0 <= i < len(self.robots):
            return
        ns = self.robots[i]
        if msg.tick == LEAVE:
            ns.controller_tick = 2**62  # stop waiting for it
        elif msg.tick == JOIN and ns.controller_tick >= 2**62:
            ns.controller_tick = -1
        else:
            ns.controller_tick = max(
                ns.controller_tick if ns.controller_tick < 2**62 else -1, int(msg.tick)
            )
        self._advance()

    def _inputs_ready(self, ns: _Namespace, m: Tick) -> bool:
        base = ns.frames.get(BASE)
        return (
            base is not None
            and base.stamp == self._manifest_stamp
            and ns.state_tick == m.tick
            and (not m.maps_published or ns.map_stamp == self._manifest_stamp)
            and (ns.index not in self._lockstep_robots or ns.controller_tick >= m.tick)
        )

    def _advance(self) -> None:
        """Lockstep: step every robot whose inputs of the manifest's tick are complete; report
        the tick once all are stepped."""
        m = self.manifest
        if m is None or not m.lockstep or self.reported_tick >= m.tick:
            return
        pending = False
        for ns in self.robots:
            if ns.stepped_tick >= m.tick:
                continue
            with ns.lock:
                if self._inputs_ready(ns, m):
                    ns.stepped_tick = m.tick
                    self._control_step(ns, self._manifest_stamp)
                else:
                    pending = True
        if not pending:
            self._report(m.tick)

    # ------------------------------------------------------------------ inputs
    def map_callback(self, ns: _Namespace, msg: OccupancyGrid) -> None:
        """Keep the robot's map; publish the costmap computed from it."""
        grid = GridMap.from_msg(msg)
        with ns.lock:
            ns.grid = grid
            ns.map_stamp = stamp_seconds(msg.header.stamp)
            costs = ns.navigator.costmap_values(grid)
        ns.costmap_pub.publish(cv.costmap_to_msg(msg, costs))
        self._advance()

    def state_callback(self, ns: _Namespace, msg: State) -> None:
        """Keep where the other robots nearby are (recovery plans go around them)."""
        with ns.lock:
            ns.nearby_robots = [(r.pos.x, r.pos.y) for r in msg.nearby_robots]
            ns.state_tick = int(msg.tick)
        self._advance()

    def tf_callback(self, ns: _Namespace, msg: TFMessage) -> None:
        """Keep the robot's transforms; free-running, run one control step per new pose."""
        with ns.lock:
            ns.frames.update(msg)
            map_odom = ns.frames.get(ODOM)
            # One sample per stamp: a tick's tf published again (as at the start barrier) must
            # not weigh twice in the smoothing.
            if (
                map_odom is not None
                and map_odom.parent == MAP
                and map_odom.stamp != ns.map_odom_stamp
                and any(t.child_frame_id.lstrip("/") == ODOM for t in msg.transforms)
            ):
                ns.map_odom_stamp = map_odom.stamp
                ns.map_odom.add(map_odom.pose)
            if self.manifest is None:
                return  # nothing runs before the simulator's first manifest
            if self.lockstep:
                lockstep = True
            else:
                lockstep = False
                base = ns.frames.get(BASE)
                if base is not None and base.stamp != ns.last_control_stamp:
                    ns.last_control_stamp = base.stamp
                    self._control_step(ns, base.stamp)
        if lockstep:
            self._advance()

    def _control_step(self, ns: _Namespace, now: float) -> None:
        """One navigation step of ``ns`` at sim time ``now`` (its lock held)."""
        if ns.handle is None:
            return
        if ns.start_pending is not None:
            ns.navigator.start(ns.start_pending, now)
            ns.start_pending = None
        if ns.handle.is_cancel_requested:
            self._finish(ns, ns.navigator.cancel(now), now)
            return
        pose = self._pose(ns)
        step = ns.navigator.update(pose, ns.grid, now, ns.nearby_robots)
        stamp = cv.time_to_msg(now)
        if step.replanned:
            ns.plan_pub.publish(cv.path_to_msg(step.path, stamp))
        if step.status is NavStatus.ACTIVE:
            ns.publish_cmd(step.linear, step.angular, stamp)
            # No feedback before a route exists: "0 m remaining" would read as arrived.
            if math.isfinite(step.distance_remaining):
                ns.handle.publish_feedback(cv.feedback_to_msg(step, pose, stamp))
                ns.feedback_sent += 1
        else:
            self._finish(ns, step, now)

    # ------------------------------------------------------------------ action
    def accepted_callback(self, ns: _Namespace, handle) -> None:
        """A goal was accepted: it preempts the current one and starts (in lockstep: at the
        robot's next control step, with that tick's time)."""
        with ns.lock:
            if ns.handle is not None:
                self._finish(
                    ns,
                    NavStep(
                        status=NavStatus.ABORTED,
                        error_code=int(NavErrorCode.UNKNOWN),
                        error_msg=_PREEMPTED,
                    ),
                )
            done = Future()
            ns.handle, ns.done = handle, done
            ns.start_pending = None
            self._done_of[id(handle)] = done
            handle.execute()
            frame, x, y = cv.goal_from_msg(handle.request)
            if frame not in ("", MAP):
                self._finish(
                    ns,
                    NavStep(
                        status=NavStatus.ABORTED,
                        error_code=int(NavErrorCode.TF_ERROR),
                        error_msg=f"goal frame {frame!r} is not supported: give goals in {MAP!r}",
                    ),
                )
            elif (problem := goal_problem(x, y)) is not None:
                self._finish(ns, ns.navigator.refuse(problem))
            elif self.lockstep:
                ns.start_pending = (x, y)
            else:
                ns.navigator.start((x, y), self._now(ns))
            if ns.handle is handle:
                self._log(f"{ns.name}: navigating to ({x:.2f}, {y:.2f})")

    async def execute_callback(self, ns: _Namespace, handle) -> NavigateToPose.Result:
        """Wait for the goal's end (it was started when accepted)."""
        done = self._done_of.pop(id(handle), None)
        if done is None:  # not expected: every executed goal went through accepted_callback
            return cv.result_to_msg(
                NavStep(
                    status=NavStatus.ABORTED,
                    error_code=int(NavErrorCode.UNKNOWN),
                    error_msg="goal was not registered",
                )
            )
        return await done

    def cancel_callback(self, ns: _Namespace, handle) -> CancelResponse:
        """Accept; the robot stops at its next control step (free-running: right away)."""
        # The goal turns CANCELING only after this returns: finish it in a task just after.
        executor = self.executor
        if executor is not None and not self.lockstep:
            executor.create_task(self._cancel_now, ns, handle)
        return CancelResponse.ACCEPT

    def _cancel_now(self, ns: _Namespace, handle) -> None:
        with ns.lock:
            if ns.handle is handle and handle.is_cancel_requested:
                now = self._now(ns)
                self._finish(ns, ns.navigator.cancel(now), now)

    def _finish(self, ns: _Namespace, step: NavStep, now: float | None = None) -> None:
        """End the current goal with ``step``'s status; send the robot one zero command."""
        handle, done = ns.handle, ns.done
        ns.handle = ns.done = None
        ns.start_pending = None
        if handle is None:
            return
        if not handle.is_active:
            pass  # already terminal (e.g. the client vanished): only the future is left
        elif step.status is NavStatus.SUCCEEDED:
            handle.succeed()
        elif step.status is NavStatus.CANCELED and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        ns.publish_cmd(0.0, 0.0, cv.time_to_msg(self._now(ns) if now is None else now))
        if step.error_code == NavErrorCode.UNKNOWN and step.error_msg == _PREEMPTED:
            self._log(f"{ns.name}: goal preempted by a new goal")
        elif step.error_code:
            self.get_logger().warning(
                f"{ns.name}: goal {step.status.value} (error {step.error_code}: {step.error_msg})",
                throttle_duration_sec=5.0,
            )
        else:
            self._log(f"{ns.name}: goal {step.status.value}")
        ns.results_sent += 1
        if done is not None and not done.done():
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
        """Leave lockstep, then destroy the action servers too."""
        if self.reported_tick >= JOIN:
            with contextlib.suppress(Exception):  # the context may already be shut down
                self._report(LEAVE)
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
        params = read_parameters(
            "maes_navigator_params",
            {
                "config_file": "maes_config.yaml",
                "cmd_vel_stamped": False,
                "verbose": False,
                "run_id": "",
            },
        )
        try:
            config = load_config(params["config_file"])
        except (ConfigError, MapError, OSError) as exc:
            proc.fail(exc)
        node = proc.own(
            NavigatorNode(
                config,
                cmd_vel_stamped=params["cmd_vel_stamped"],
                verbose=params["verbose"],
                run_id=params["run_id"] or None,
            )
        )
        proc.spin(node)
