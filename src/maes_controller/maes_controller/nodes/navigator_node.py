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

Run it as ``ros2 run maes_bringup navigator_node --ros-args -p config_file:=maes_config.yaml``
(the process, which reads the simulator's config, lives in ``maes_bringup`` so that this package
needs no simulator) or build it in-process: ``NavigatorNode(config, context=...)``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Collection
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped, Twist, TwistStamped
from nav_msgs.msg import OccupancyGrid, Path
from rclpy.action import ActionServer, CancelResponse
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from tf2_msgs.msg import TFMessage

from maes_common import read_state_neighbours, robot_index_of_id
from maes_common.contract import (
    BASE_FRAME,
    MAP_FRAME,
    NAVIGATION_DONE_TOPIC,
    ODOM_FRAME,
    TICK_DONE_TOPIC,
    TICK_TOPIC,
    robot_namespace,
)
from maes_common.lockstep import JOIN, LEAVE, RunMembership
from maes_common.participant import LockstepReporter
from maes_common.process import EndsQuietly
from maes_common.qos import (
    CMD_QOS,
    LATCHED_QOS,
    LOCKSTEP_READER_QOS,
    STATE_QOS,
    TF_QOS,
)
from maes_interfaces.msg import State, Tick, TickDone

from ..navigation import (
    PREEMPTED,
    GoalEnd,
    GridMap,
    Navigator,
    NavParams,
    NavSession,
    compute_path,
    error_text,
)
from ..robot_api import NavStatus
from ..tf_pose import (
    FrameTree,
    SmoothedTransform,
    compose,
    map_odom_jump_distance,
    stamp_seconds,
)
from . import nav2_api
from . import ros_conversions as cv

MAP, ODOM, BASE = MAP_FRAME, ODOM_FRAME, BASE_FRAME


def with_sim_time(node_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``node_kwargs`` with ``use_sim_time`` True unless the caller set it."""
    overrides = list(node_kwargs.get("parameter_overrides") or [])
    if not any(p.name == "use_sim_time" for p in overrides):
        overrides.append(Parameter("use_sim_time", value=True))
    return {**node_kwargs, "parameter_overrides": overrides}


class _Goal:
    """An accepted goal of any served action: the session's token for it."""

    def __init__(self, handle, kind: nav2_api.TaskKind) -> None:
        self.handle = handle
        self.kind = kind
        self.done: Future = Future()  # completed with the result message when it ends


class _Namespace:
    """One robot's navigation: its session, latest map and tf, goal, and ROS endpoints."""

    def __init__(
        self,
        node: NavigatorNode,
        i: int,
        params: NavParams,
        stamped: bool,
        jump: float,
        nav2: bool,
    ) -> None:
        self.name = robot_namespace(i)
        ns = "/" + self.name
        self.session = NavSession(Navigator(params, rank=i))
        self.frames = FrameTree()
        self.map_odom = SmoothedTransform(reset_distance=jump)
        self.map_odom_stamp: float | None = None  # stamp of the last sample smoothed
        self.grid: GridMap | None = None
        self.index = i
        self.path_requests: list[tuple[type, Any, Future]] = []  # answered at the next step
        self.last_control_stamp: float | None = None
        self.nearby_robots: list[tuple[float, float]] = []  # from maes_state, map frame
        self.nearby_ids: list[int | None] = []  # their indices: the yielding order
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
        # raw: the navigator reads two fields of the state, not its tags (maes_common.state_wire)
        node.create_subscription(
            State,
            f"{ns}/maes_state",
            lambda data: node.state_callback(self, data),
            STATE_QOS,
            raw=True,
        )

        kinds = (nav2_api.NAVIGATE_TO_POSE, *(nav2_api.MOTION_KINDS if nav2 else ()))
        self.servers = [node.task_server(self, kind) for kind in kinds]
        self.services: list[Any] = []
        self.localizer_pub = None
        if nav2:
            self.servers += [node.path_server(self, *kind) for kind in nav2_api.PATH_KINDS]
            self.services = nav2_api.serve_nav2_api(node, self, ns)
            self.localizer_pub = node.create_publisher(
                PoseWithCovarianceStamped, f"{ns}/amcl_pose", LATCHED_QOS
            )

    def publish_cmd(self, linear: float, angular: float, lateral: float, stamp) -> None:
        self.cmd_pub.publish(cv.twist_to_msg(linear, angular, self.stamped, stamp, lateral=lateral))
        self.cmd_vel_sent += 1


class _OnSystemClock:
    """The navigator as rclpy's ``ActionServer`` sees it: the node, but with the system clock.

    An action server's goal-expiry timer runs on the clock of the node it is given, for the
    navigator sim time. rclpy's events executor runs timers on the system clock only
    (ros2/rclcpp#2457): with one such timer per action server (an action per robot), the
    navigator on it busy-looped at tick 0 with 120 robots. On the system clock the timers are
    harmless, and the events executor (far faster than a wait-set one for a node of many
    robots) can spin the navigator. The same clock stamps accepted goals (``GoalInfo.stamp``
    in the action's status topic) with wall time; results and feedback keep sim time.
    """

    def __init__(self, node: Node) -> None:
        self._node = node
        self._clock = Clock(clock_type=ClockType.SYSTEM_TIME)

    def get_clock(self) -> Clock:
        return self._clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._node, name)


class NavigatorNode(EndsQuietly, Node):
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
    nav2_api : bool or collection of int
        Also serve Nav2's other tasks, costmap services and lifecycle states
        (:mod:`.nav2_api`, docs/nav2_task_api.md): True for every robot, or for the robots of
        these indices only (each robot's servers cost discovery and executor time); default:
        ``navigate_to_pose`` alone.
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
        nav2_api: bool | Collection[int] = False,
        run_id: str | None = None,
        node_name: str = "maes_navigator",
        **node_kwargs: Any,
    ) -> None:
        super().__init__(node_name, **with_sim_time(node_kwargs))
        self.params = nav_params if nav_params is not None else NavParams.from_config(config)
        self.verbose = bool(verbose)
        n = int(config.number_of_robots)
        if isinstance(nav2_api, bool):
            self.nav2_robots = frozenset(range(n)) if nav2_api else frozenset()
        else:
            self.nav2_robots = frozenset(int(i) for i in nav2_api)
            bad = sorted(i for i in self.nav2_robots if not 0 <= i < n)
            if bad:
                raise ValueError(f"nav2_api: robot index {bad[0]} is not in 0..{n - 1}")
        self._goals: dict[int, _Goal] = {}  # id(goal handle) -> the goal, until executed
        # each robot navigates with its own type's footprint, inflation and speeds
        per_robot = [
            nav_params if nav_params is not None else NavParams.from_config(config, robot=i)
            for i in range(n)
        ]
        # Larger map -> odom changes than the robot's SLAM pose error are real jumps, not noise.
        jumps = [map_odom_jump_distance(config, robot=i) for i in range(n)]
        self.robots = [
            _Namespace(self, i, per_robot[i], cmd_vel_stamped, jumps[i], i in self.nav2_robots)
            for i in range(n)
        ]
        self.manifest: Tick | None = None
        self._stepped_tick = -1  # the tick whose robots _stepped counts
        self._stepped = 0  # robots stepped at the manifest's tick
        self._manifest_stamp = 0.0
        self._lockstep_robots: frozenset[int] = frozenset()
        #: The run this node takes part in (its id from the simulator's first manifest).
        self.run = RunMembership(run_id)
        self._early_reports: list[TickDone] = []  # heard before the run was known
        #: Per controller participant: the robots of its latest report.
        self._controller_robots: dict[str, tuple[int, ...]] = {}
        self.lockstep_reporter = LockstepReporter(
            self,
            NAVIGATION_DONE_TOPIC,
            "navigator",
            lambda: [
                (ns.index, ns.cmd_vel_sent, ns.results_sent, ns.feedback_sent) for ns in self.robots
            ],
            run_id=lambda: self.run.run_id,
        )
        self.create_subscription(Tick, TICK_TOPIC, self.tick_callback, LOCKSTEP_READER_QOS)
        self.create_subscription(
            TickDone, TICK_DONE_TOPIC, self.tick_done_callback, LOCKSTEP_READER_QOS
        )
        # joins lockstep once the simulator's first manifest names the run (tick_callback)
        served = (
            f"Nav2's task interface ({len(self.nav2_robots)} of them)"
            if self.nav2_robots
            else "navigate_to_pose"
        )
        self.get_logger().info(f"serving {served} for {n} robot(s)")

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
    @property
    def reported_tick(self) -> int:
        """The newest tick reported on ``/maes/tick_done/navigation``."""
        return self.lockstep_reporter.reported_tick

    def _report(self, tick: int) -> None:
        self.lockstep_reporter.report(tick)

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
        reported t. A participant may act for many robots (a ``controller_container`` reports
        once for all of its controllers); a robot it no longer lists, or that it left with, is
        not waited for any more."""
        if msg.role != "controller":
            return
        if self.run.run_id is None:
            self._early_reports = [*self._early_reports[-255:], msg]
            return
        if not self.run.ours(msg.run_id):
            return
        n = len(self.robots)
        robots = tuple(i for i in (int(r) for r in msg.robots) if 0 <= i < n)
        before = self._controller_robots.get(msg.participant, ())
        tick = int(msg.tick)
        if tick == LEAVE:
            self._controller_robots.pop(msg.participant, None)
            released, robots = {*before, *robots}, ()
        else:
            self._controller_robots[msg.participant] = robots
            released = set(before).difference(robots)
        for i in released:
            self.robots[i].controller_tick = 2**62  # stop waiting for it
        for i in robots:
            ns = self.robots[i]
            if tick == JOIN and ns.controller_tick >= 2**62:
                ns.controller_tick = -1
            else:
                ns.controller_tick = max(
                    ns.controller_tick if ns.controller_tick < 2**62 else -1, tick
                )
        if len(robots) == 1 and not released:
            self._advance(self.robots[robots[0]])
        else:
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

    def _advance(self, only: _Namespace | None = None) -> None:
        """Lockstep: step every robot whose inputs of the manifest's tick are complete (``only``:
        the robot an input just came for; the others' inputs did not change); report the tick
        once all are stepped."""
        m = self.manifest
        if m is None or not m.lockstep or self.reported_tick >= m.tick:
            return
        if self._stepped_tick != m.tick:  # a new tick: count its robots stepped afresh
            self._stepped_tick = m.tick
            self._stepped = sum(ns.stepped_tick >= m.tick for ns in self.robots)
        for ns in self.robots if only is None else (only,):
            if ns.stepped_tick >= m.tick:
                continue
            with ns.lock:
                if self._inputs_ready(ns, m):
                    ns.stepped_tick = m.tick
                    self._stepped += 1
                    self._control_step(ns, self._manifest_stamp)
        if self._stepped >= len(self.robots) and all(
            ns.stepped_tick >= m.tick for ns in self.robots
        ):
            self._report(m.tick)

    # ------------------------------------------------------------------ inputs
    def map_callback(self, ns: _Namespace, msg: OccupancyGrid) -> None:
        """Keep the robot's map; publish the costmap computed from it."""
        grid = GridMap.from_msg(msg)
        with ns.lock:
            ns.grid = grid
            ns.map_stamp = stamp_seconds(msg.header.stamp)
            costs = ns.session.navigator.costmap_values(grid)
            pose = self._pose(ns) if ns.localizer_pub is not None else None
        ns.costmap_pub.publish(cv.costmap_to_msg(msg, costs))
        if pose is not None:
            ns.localizer_pub.publish(nav2_api.localizer_pose_msg(pose, msg.header.stamp))
        self._advance(ns)

    def state_callback(self, ns: _Namespace, data: bytes) -> None:
        """Keep where the other robots nearby are (recovery plans go around them), read from
        the serialized state without building its tags."""
        try:
            tick, nearby, ids = read_state_neighbours(data)
        except ValueError as exc:
            self.get_logger().error(
                f"{ns.name}: unreadable maes_state ({exc})", throttle_duration_sec=5.0
            )
            return
        with ns.lock:
            ns.nearby_robots = nearby
            ns.nearby_ids = [robot_index_of_id(i) for i in ids]
            ns.state_tick = tick
        self._advance(ns)

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
            self._advance(ns)

    def _control_step(self, ns: _Namespace, now: float) -> None:
        """One navigation step of ``ns`` at sim time ``now`` (its lock held)."""
        if ns.path_requests:
            self._answer_paths(ns, now)
        token = ns.session.token
        if token is None:
            return
        if token.handle.is_cancel_requested:
            self._carry(ns, ns.session.cancel(now), now)
            return
        pose = self._pose(ns)
        odom = ns.frames.lookup(ODOM, BASE)
        events = ns.session.step(
            pose, ns.grid, now, ns.nearby_robots, odom_pose=odom, robot_ids=ns.nearby_ids
        )
        self._carry(ns, events, now, pose)

    def _carry(self, ns: _Namespace, events, now: float, pose=None) -> None:
        """Publish a session call's events: plan, results, command, feedback."""
        stamp = cv.time_to_msg(now)
        if events.plan is not None:
            ns.plan_pub.publish(cv.path_to_msg(events.plan, stamp))
        for end in events.ended:
            self._finish(ns, end)
        if events.command is not None:
            ns.publish_cmd(*events.command, stamp)
        if events.feedback is not None and ns.session.token is not None:
            goal = ns.session.token
            goal.handle.publish_feedback(goal.kind.feedback(events.feedback, pose, stamp))
            ns.feedback_sent += int(goal.kind.counted)

    # ------------------------------------------------------------------ actions
    def task_server(self, ns: _Namespace, kind: nav2_api.TaskKind) -> ActionServer:
        """The action server of one motion task ``kind`` for robot ``ns``."""

        async def execute(handle):  # rclpy awaits only true coroutine functions
            return await self.execute_callback(ns, handle)

        return ActionServer(
            self._system_clock_view(),
            kind.action,
            f"/{ns.name}/{kind.name}",
            execute_callback=execute,
            handle_accepted_callback=lambda handle: self.accepted_callback(ns, handle, kind),
            cancel_callback=lambda handle: self.cancel_callback(ns, handle),
        )

    def _system_clock_view(self) -> _OnSystemClock:
        """This node as its action servers see it (:class:`_OnSystemClock`): one for all."""
        view = self.__dict__.get("_on_system_clock")
        if view is None:
            view = self._on_system_clock = _OnSystemClock(self)
        return view

    def accepted_callback(self, ns: _Namespace, handle, kind=nav2_api.NAVIGATE_TO_POSE) -> None:
        """A goal was accepted: it preempts the current task and starts (in lockstep: at the
        robot's next control step, with that tick's time)."""
        with ns.lock:
            goal = _Goal(handle, kind)
            self._goals[id(handle)] = goal
            handle.execute()
            frame, task = kind.task(ns, handle.request)
            now = None if self.lockstep else self._now(ns)
            if isinstance(task, str):  # a request the task cannot take
                events = ns.session.refuse(goal, kind.refuse_code, task)
            else:
                events = ns.session.submit(goal, task, now, frame)
            self._carry(ns, events, self._now(ns) if now is None else now)
            if ns.session.token is goal:
                self._log(f"{ns.name}: {kind.name} accepted")

    async def execute_callback(self, ns: _Namespace, handle):
        """Wait for the goal's end (it was started when accepted)."""
        goal = self._goals.pop(id(handle))  # every executed goal went through accepted_callback
        return await goal.done

    def cancel_callback(self, ns: _Namespace, handle) -> CancelResponse:
        """Accept; the robot stops at its next control step (free-running: right away)."""
        # The goal turns CANCELING only after this returns: finish it in a task just after.
        executor = self.executor
        if executor is not None and not self.lockstep:
            executor.create_task(self._cancel_now, ns, handle)
        return CancelResponse.ACCEPT

    def _cancel_now(self, ns: _Namespace, handle) -> None:
        with ns.lock:
            goal = ns.session.token
            if goal is not None and goal.handle is handle and handle.is_cancel_requested:
                now = self._now(ns)
                self._carry(ns, ns.session.cancel(now), now)

    def _finish(self, ns: _Namespace, end: GoalEnd) -> None:
        """Send an ended goal's result (its status from the session's final step)."""
        goal, step = end.token, end.step
        handle = goal.handle
        if not handle.is_active:
            pass  # already terminal (e.g. the client vanished): only the future is left
        elif step.status is NavStatus.SUCCEEDED:
            handle.succeed()
        elif step.status is NavStatus.CANCELED and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        name = f"{ns.name}: {goal.kind.name}"
        if step.error_msg == PREEMPTED and not step.error_code:
            self._log(f"{name} preempted by a new goal")
        elif step.error_code:
            self.get_logger().warning(
                f"{name} {step.status.value} ({error_text(step)})", throttle_duration_sec=5.0
            )
        else:
            self._log(f"{name} {step.status.value}")
        ns.results_sent += int(goal.kind.counted)
        if not goal.done.done():
            goal.done.set_result(goal.kind.result(step))

    # ------------------------------------------------------------------ planner
    def path_server(self, ns: _Namespace, action: type, name: str, code_base: int):
        """A compute-path action server: answered at the robot's next control step."""

        async def execute(handle):
            done: Future = Future()
            with ns.lock:
                ns.path_requests.append((action, handle, done, code_base))
                if not self.lockstep:
                    self._answer_paths(ns, self._now(ns))
            return await done

        return ActionServer(
            self._system_clock_view(), action, f"/{ns.name}/{name}", execute_callback=execute
        )

    def _answer_paths(self, ns: _Namespace, now: float) -> None:
        requests, ns.path_requests = ns.path_requests, []
        pose = self._pose(ns)
        for action, handle, done, code_base in requests:
            start, goals, frame = nav2_api.path_request(action, handle.request)
            if start is None and pose is not None:
                start = (pose[0], pose[1])
            if frame not in ("", MAP):
                points, code, msg = [], code_base + 2, f"frame {frame!r} is not supported"
            else:
                points, code, msg = compute_path(
                    ns.session.navigator, ns.grid, start, goals, code_base
                )
            if handle.is_active:
                handle.succeed() if code == 0 else handle.abort()
            done.set_result(
                nav2_api.path_result(action, points, code, msg, cv.time_to_msg(now), 0.0)
            )

    def costmap_for(self, ns: _Namespace, local: bool):
        """``nav2_msgs/Costmap`` of the robot's latest map (local: a window around it)."""
        with ns.lock:
            grid = ns.grid
            if grid is None:
                return None
            values = ns.session.navigator.costmap_values(grid)
            pose = self._pose(ns)
            stamp = cv.time_to_msg(self._now(ns))
        window = None
        if local:
            if pose is None:
                return None
            window = (pose[0], pose[1], nav2_api.LOCAL_COSTMAP_SIZE)
        layer = "local_costmap" if local else "global_costmap"
        return nav2_api.costmap_msg(grid, values, stamp, layer, window)

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
            for server in ns.servers:
                server.destroy()
        super().destroy_node()
