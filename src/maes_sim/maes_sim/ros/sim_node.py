"""The ``maes_sim`` node: one :class:`~maes_sim.core.Simulation` on the robot-facing ROS interface.

Run it as ``ros2 run maes_sim maes_sim_node --ros-args -p config_file:=maes_config.yaml``, or
build it in-process around a ready Simulation (``SimNode(sim)``) without spinning, as the
embedded runner and the tests do.

Per robot namespace ``robot<i>`` and logic tick: ``scan``, ``odom``, ``tf`` (odom ->
base_footprint, odom starting at the world origin; and map -> odom when the simulated SLAM owns
``map``), ``maes_state``, and on
SLAM updates ``map``; once, ``tf_static`` (base_footprint -> base_link -> base_scan). It takes
``cmd_vel`` and serves ``maes_broadcast`` and ``maes_deposit_tag``. Globally: ``/clock``,
``/tf`` (world -> robot<i>/odom -> robot<i>/base_footprint), ``/maes/ground_truth``,
``/maes/exploration``, ``/maes/coverage``, ``/maes/markers``, ``/maes/stats``, and the
services ``/maes/pause`` and ``/maes/resume``.

The node is built of parts: the messages of a tick are built by
:class:`~maes_sim.ros.messages.MessageFactory` and published by
:class:`~maes_sim.ros.publishing.TickPublishers`; who takes part and when the run may start is
:class:`~maes_sim.ros.admission.Admission`'s; when a step is due on the wall clock is the
:class:`~maes_sim.ros.stepping.Pacer`'s, and when a waiting lockstep tick looks for late
participants the :class:`~maes_sim.ros.stepping.LateWatch`'s. :class:`SimNode` composes them,
steps the simulation (free or in lockstep) and serves the robots' commands and the services.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import OccupancyGrid
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.duration import Duration as RosDuration
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from maes_common.contract import (
    NAVIGATION_DONE_TOPIC,
    TICK_DONE_TOPIC,
    TICK_TOPIC,
    robot_namespace,
)
from maes_common.lockstep import NOT_STARTED, new_run_id
from maes_common.process import (
    EndsQuietly,
    read_parameters,
    ros_process,
)
from maes_common.qos import (
    DEFAULT_QOS,
    LATCHED_QOS,
    LOCKSTEP_READER_QOS,
    SERVICE_QOS,
    STATE_QOS,
    TF_QOS,
)
from maes_interfaces.msg import TickDone
from maes_interfaces.srv import BroadcastToAll, DepositTag
from maes_sim.core import (
    CommandRejected,
    ConfigError,
    MapError,
    Simulation,
    load_config,
    with_slam,
)
from maes_sim.core.results import write_run_results

from . import conversions as cv
from .admission import WAIT_FOR_CONTROLLERS, Admission, check_wait_for_controllers
from .messages import SCAN_HEIGHT, MessageFactory
from .outputs import build_tap, listen_to_navigation
from .publishing import RobotPublishers, TickPublishers, prepare_tap
from .stepping import BURST_TICKS, LateWatch, Pacer
from .tap import Tap

# (with the QoS of the node's topics, which tests take from here)
__all__ = [
    "DEFAULT_QOS",
    "GRAPH_CHECK_S",
    "LATCHED_QOS",
    "PARAMETERS",
    "SCAN_HEIGHT",
    "STATE_QOS",
    "SYNC_MODES",
    "TF_QOS",
    "WAIT_FOR_CONTROLLERS",
    "SimNode",
    "main",
]

robot_name = robot_namespace
#: Synchronisation modes (see docs/lockstep.md).
SYNC_MODES = ("lockstep", "free")
#: Wall seconds between looks at the ROS graph while a lockstep tick waits: a participant whose
#: process ended without leaving (Ctrl-C, a kill) is dropped this soon after its node is gone.
GRAPH_CHECK_S = 1.0


class SimNode(EndsQuietly, Node):
    """Publishes a Simulation on the robot-facing ROS interface and steps it.

    Stepping is synchronous by default (``sync="lockstep"``, docs/lockstep.md): after a tick's
    outputs and its manifest (``/maes/tick``), the next tick waits until every participant that
    joined on ``/maes/tick_done`` (the built-in navigator, controllers) has handled it and their
    commands have arrived. A late participant is waited for as long as its node is on the ROS
    graph (every ``sync_timeout`` wall seconds a warning names it); one whose node has gone is
    dropped within about a second (the manifest then says so at once) and the run steps on
    without it (``admission.deadline_misses`` counts that). The result then
    does not depend on the machine's speed or load. ``real_time_factor`` only caps the speed.
    ``sync="free"`` steps on the wall clock alone, whatever the others do (as a real robot
    would be): results then depend on the machine.

    Who takes part is the :attr:`admission`'s (:class:`~maes_sim.ros.admission.Admission`: the run's
    id, the start barrier and the lockstep participants, the logic-call counts). Before the first
    step a start barrier waits (until ``start_timeout`` wall seconds pass in which nothing it waits
    for arrived; None = for ever, with a message every few seconds) until the expected participants
    are there: ``wait_for_navigator`` (a participant with role ``navigator``), and per robot a
    controller subscribed to its ``maes_state`` (``wait_for_controllers="connected"``) or joined in
    lockstep with ``scan`` and ``odom`` subscribed too (``"lockstep"``: the controller node waits
    for both every tick), or nothing (``"none"``). ``"external"`` (``maes_run --controllers none``)
    waits like ``"lockstep"``, but a robot whose ``maes_state`` has a subscriber that is not a
    lockstep participant (a MAES 2.0 controller) is accepted once that subscriber has been there
    ``join_grace`` wall seconds without joining.

    Each run has an id (``admission.run_id``): the manifests carry it (the first, with tick
    ``Tick.NOT_STARTED``, is published at once, so that participants can join before the
    start), reports of another run are refused with a warning naming the participant, and the
    end of the run is announced (a manifest with ``end_reason``; :meth:`announce_end`).

    The node paces itself on a steady wall clock and publishes ``/clock``; give it
    ``use_sim_time`` false (every other node uses sim time).

    Parameters
    ----------
    sim : Simulation
        The simulation to drive (the node steps it; nobody else should).
    real_time_factor : float
        Sim seconds per wall second at most; <= 0 runs as fast as possible.
    sync : {"lockstep", "free"}
    sync_timeout : float
        Wall seconds between warnings about a late participant still on the ROS graph (it is
        waited for). While a tick waits the graph is looked at every :data:`GRAPH_CHECK_S`
        (or ``sync_timeout`` if shorter), and a participant whose node is gone is dropped
        (<= 0: never checked, wait for ever).
    start_timeout : float or None
        Wall seconds in which nothing the start barrier waits for arrived, after which the
        run starts without it (None: for ever; each arrival starts the count again).
    wait_for_navigator : bool
    wait_for_controllers : {"none", "connected", "lockstep", "external"}
    join_grace : float
        ``"external"``: wall seconds a ``maes_state`` subscriber that is no lockstep
        participant waits before the barrier takes it as the robot's (free-running) controller.
    cmd_vel_stamped : bool
        Subscribe ``cmd_vel`` as TwistStamped instead of Twist.
    publish_slam_map : bool or None
        Publish each robot's SLAM ``map`` and map -> odom (default: when the config's
        ``stack.slam`` is one the simulator maps: "simulated" or "occupancy").
    results_dir : str or None
        Where the end-of-run results go (default: ``statistics_result_path``).
    stay_alive_after_end : bool
        Keep publishing (time frozen) after the end criteria, instead of finishing.
    heatmap_period_ticks : int
        Ticks between heatmap and ground-truth refreshes.
    start_paused : bool
        Start paused (``/maes/resume`` or :meth:`step_once` advance it).
    steps_itself : bool
        False: no stepping timer; the caller starts the run (:meth:`start_now`), steps the
        simulation and calls :meth:`after_step` (``maes_run``'s built-in controllers, in its
        process), honouring :attr:`paused` (the pause service still sets it).
    tap : maes_sim.ros.tap.Tap or None
        Every message this node publishes also goes to the tap's sinks (an MCAP recording,
        the live view), stamped with sim time; the caller closes it. With the live view's web
        page (``tap.page``) the page follows the run (:mod:`maes_sim.ros.watching`).
    run_id : str, optional
        The run's id (default: a new one); a launch gives it to every node it starts.
    exclusive : bool
        Never start while another simulator publishes ``/maes/tick`` on the domain: the run
        ends before tick 0 instead, :attr:`conflict` saying why (the embedded runner's
        backstop behind its domain check, ``maes_common.domain``).
    node_name, node_kwargs
        Passed to ``rclpy.node.Node`` (e.g. ``context=``).
    """

    def __init__(
        self,
        sim: Simulation,
        *,
        real_time_factor: float = 1.0,
        sync: str = "lockstep",
        sync_timeout: float = 10.0,
        start_timeout: float | None = 60.0,
        wait_for_navigator: bool = False,
        wait_for_controllers: str = "none",
        join_grace: float = 10.0,
        cmd_vel_stamped: bool = False,
        publish_slam_map: bool | None = None,
        results_dir: str | None = None,
        stay_alive_after_end: bool = False,
        heatmap_period_ticks: int = 10,
        start_paused: bool = False,
        steps_itself: bool = True,
        tap: Tap | None = None,
        run_id: str | None = None,
        exclusive: bool = False,
        node_name: str = "maes_sim",
        **node_kwargs,
    ) -> None:
        if sync not in SYNC_MODES:
            raise ValueError(f"sync must be one of {SYNC_MODES}, got {sync!r}")
        check_wait_for_controllers(wait_for_controllers)
        super().__init__(node_name, **node_kwargs)
        self.sim = sim
        self.tap = tap
        cfg = sim.config
        if tap is not None:
            prepare_tap(tap, sim)
        self.tile = cfg.world.tile_size
        #: False: a runner in this process steps the simulation (see ``steps_itself`` above).
        self.steps_itself = bool(steps_itself)
        #: Such a runner's robots' navigation in words (``robot -> str``), for the web page,
        #: where no ``navigate_to_pose`` action server runs (maes_sim.ros.watching.NavWatch).
        self.nav_status_source: Callable[[int], str] | None = None
        self.sync = sync
        self.sync_timeout = float(sync_timeout)
        self.exclusive = bool(exclusive)
        #: Why the run could not start (another simulator on the domain), else None.
        self.conflict: str | None = None
        #: Why the run ended, once announced (:meth:`announce_end`).
        self.end_reason = ""
        #: Builds the messages of the simulation's ticks (the node publishes them).
        self.messages = MessageFactory(sim, publish_slam_map)
        self.publish_slam_map = self.messages.publish_slam_map
        self.results_dir = results_dir or cfg.global_settings.statistics_result_path
        self.stay_alive_after_end = stay_alive_after_end
        self.heatmap_period_ticks = max(1, int(heatmap_period_ticks))
        self.cmd_vel_timeout = cfg.stack.cmd_vel_timeout
        self.paused = bool(start_paused)
        self.done = False
        #: True once the start barrier let the run begin (at ``started_wall``, monotonic s).
        self.started = False
        self.started_wall: float | None = None
        self._started_tick = 0
        #: Times a tick's outputs were published again for a participant still waiting.
        self.republishes = 0
        self.results_path: Path | None = None
        #: Write the results folder when the run ends (an embedding runner may do it itself).
        self.write_results_on_finish = True
        self.on_tick: list[Callable[[SimNode], None]] = []
        self.on_finished: list[Callable[[SimNode], None]] = []
        self._last_cmd = np.full(sim.n_robots, -np.inf)  # sim time of the last cmd_vel
        self._driven = np.zeros(sim.n_robots, dtype=bool)
        self._cmd_received = np.zeros(sim.n_robots, dtype=np.int64)
        # robots whose cmd_vel came from another node while this process drives them
        self._outside_cmd_told = np.zeros(sim.n_robots, dtype=bool)
        # Pacing and deadlines run on a steady wall clock: sim time is what this node makes.
        self._steady = RosClock(clock_type=ClockType.STEADY_TIME)
        now = time.monotonic()
        #: When steps are due at the real-time factor asked for, and the speed achieved.
        self.pacer = Pacer(sim.tick_duration, real_time_factor, now, sim.tick)
        #: While a lockstep tick waits: when to look for late participants and to warn.
        self.late = LateWatch(self.sync_timeout, GRAPH_CHECK_S, now)

        #: The node's publishers (DDS, and the tap when there is one) and what each tick
        #: publishes on them: the maps on every SLAM tick when this node steps itself
        #: (lockstep's navigator waits for them).
        self.tick_publishers = TickPublishers(
            self.messages,
            self.create_publisher,
            maps_every_slam_tick=self.steps_itself,
            heatmap_period_ticks=self.heatmap_period_ticks,
        )
        out = self.tick_publishers
        self.clock_pub, self.tf_pub, self.truth_pub = out.clock_pub, out.tf_pub, out.truth_pub
        self.explore_pub, self.cover_pub = out.explore_pub, out.cover_pub
        self.marker_pub, self.obstacle_pub = out.marker_pub, out.obstacle_pub
        self.stats_pub, self.tick_pub = out.stats_pub, out.tick_pub
        #: Per robot its publishers (``scan``, ``odom``, ``tf``, ``maes_state``, ``map``...).
        self.robots: list[RobotPublishers] = out.robots
        #: Who takes part in the run and when it may start (the start barrier).
        self.admission = Admission(
            self,
            self.robots,
            run_id=run_id or new_run_id(),
            wait_for_navigator=wait_for_navigator,
            wait_for_controllers=wait_for_controllers,
            join_grace=join_grace,
            start_timeout=start_timeout,
            sync_timeout=sync_timeout,
        )
        for topic in (TICK_DONE_TOPIC, NAVIGATION_DONE_TOPIC):
            self.create_subscription(TickDone, topic, self.tick_done_callback, LOCKSTEP_READER_QOS)
        self.create_service(Trigger, "/maes/pause", self.pause_callback)
        self.create_service(Trigger, "/maes/resume", self.resume_callback)
        for i in range(sim.n_robots):
            self._serve_robot(i, cmd_vel_stamped)
        if tap is not None:  # the navigator's plans and costmaps, for the live view
            listen_to_navigation(self, tap, sim.n_robots)
        #: The web page's feed (sampled after each tick's outputs while a page looks), or None.
        self.page = None
        if tap is not None and tap.page is not None:
            from .watching import follow

            follow(self, tap.page.feed)
            self.page = tap.page.feed

        self._publish_static()
        self._publish_tick(force_maps=True)
        # The run's id, for participants to join with before the start (not recorded: a
        # recording's manifests are the run's ticks).
        with self.tap.muted() if self.tap is not None else contextlib.nullcontext():
            self.publish_manifest(tick=NOT_STARTED)
        now = time.monotonic()
        self._created = now
        self.admission.last_notice = now
        self.pacer.restart(now, sim.tick)
        self.late.restart(now)
        # In lockstep, steps are triggered by the reports themselves; the timer serves the
        # speed cap, the start barrier and the deadline. The stepping timer gets a callback
        # group of its own: in the default (mutually exclusive) group an always-ready timer
        # would be picked first on every wait and the cmd_vel and service callbacks ready in
        # the same wait skipped, starving them. Spin this node with a single-threaded executor
        # (the simulation is not locked).
        self.timer = (
            self.create_timer(
                self.pacer.timer_period(sync == "lockstep"),
                self.timer_callback,
                callback_group=MutuallyExclusiveCallbackGroup(),
                clock=self._steady,
            )
            if steps_itself
            else None
        )

    def _serve_robot(self, i: int, stamped: bool) -> None:
        """Robot ``i``'s ``cmd_vel`` (Twist, or TwistStamped when ``stamped``),
        ``maes_broadcast`` and ``maes_deposit_tag``."""
        ns = "/" + robot_name(i)
        kind = TwistStamped if stamped else Twist
        self.create_subscription(
            kind, f"{ns}/cmd_vel", lambda msg, i=i: self.cmd_vel_callback(i, msg), DEFAULT_QOS
        )
        self.create_service(
            BroadcastToAll,
            f"{ns}/maes_broadcast",
            lambda req, res, i=i: self.broadcast_callback(i, req, res),
            qos_profile=SERVICE_QOS,
        )
        self.create_service(
            DepositTag,
            f"{ns}/maes_deposit_tag",
            lambda req, res, i=i: self.deposit_tag_callback(i, req, res),
            qos_profile=SERVICE_QOS,
        )

    def map_grid_msg(self, values: np.ndarray) -> OccupancyGrid:
        """An ``OccupancyGrid`` in ``map`` with the robots' maps' geometry, stamped now (sim
        time): for grids derived from a robot's map, e.g. the navigator's costmap."""
        return self.messages.map_grid(values)

    def create_publisher(self, msg_type, topic, qos_profile, **kwargs):
        """``Node.create_publisher``, its messages also going to the tap when there is one."""
        publisher = super().create_publisher(msg_type, topic, qos_profile, **kwargs)
        tap = getattr(self, "tap", None)  # None for the publishers Node.__init__ makes
        return publisher if tap is None else tap.wrap(publisher, msg_type, qos_profile)

    def logic_failure_line(self) -> str:
        """One line on the logic's failures ("" when none failed)."""
        return self.admission.logic_failure_line()

    def start_missing(self) -> list[str]:
        """What the start barrier still waits for (empty when the run may start)."""
        return self.admission.start_missing()

    # ------------------------------------------------------------------ start
    def _try_start(self, now: float) -> None:
        if self.exclusive and self.count_publishers(TICK_TOPIC) > 1:
            self.conflict = (
                "another MAES-ROS simulator appeared on this ROS domain before the start "
                "(two runs would mix their robots' traffic)"
            )
            self.get_logger().error(f"not starting: {self.conflict}")
            self.done = True
            return
        if self.admission.may_start(now, now - self._created):
            self.start_now(now)

    def start_now(self, now: float | None = None) -> None:
        """Start the run now (the start barrier passed, or a runner that steps the simulation
        itself begins): the current tick's outputs again, with the maps and the ground truth
        (a tap has them already), then its manifest. ``now``: the wall clock (monotonic)."""
        now = time.monotonic() if now is None else now
        self.started = True
        self.started_wall = now
        self._started_tick = self.sim.tick
        with self.tap.muted() if self.tap is not None else contextlib.nullcontext():
            self._publish_tick(force_maps=True)
        self.publish_manifest()
        self.late.restart(now)
        self.pacer.restart(now, self.sim.tick)

    # ------------------------------------------------------------------ pacing
    def timer_callback(self) -> None:
        """Start, step when due, and enforce the lockstep deadline."""
        if self.page is not None:  # the web page's commands, on this thread
            self.page.drain()
        if self.paused or self.done:
            return
        now = time.monotonic()
        if not self.started:
            self._try_start(now)
            return
        if self.sync == "lockstep":
            self._advance_lockstep(now)
        else:
            self._advance_free(now)

    def _advance_free(self, now: float) -> None:
        pacer = self.pacer
        if pacer.unpaced:
            self.step_once()
            return
        due = pacer.due_tick(now)
        steps = 0
        while self.sim.tick < due and steps < BURST_TICKS and not self.done:
            self.step_once()
            steps += 1
        if due - self.sim.tick > 0 and steps == BURST_TICKS:
            # Can't keep up: re-anchor so time is dropped instead of accumulated; say so when
            # the achieved speed (over the last seconds) is really below the one asked for.
            if pacer.lag_warning_due(now):
                self.get_logger().warning(
                    f"simulation cannot keep up with real_time_factor "
                    f"{pacer.real_time_factor:g}: achieving {pacer.achieved:.2f}x "
                    f"({self.sim.n_robots} robots)"
                )
            pacer.anchor(now, self.sim.tick)

    def _advance_lockstep(self, now: float) -> None:
        tick = self.sim.tick
        if self.admission.barrier.waiting_for(tick, self._cmd_received) and not self._check_late(
            now, tick
        ):
            return
        if not self.pacer.lockstep_due(now, tick):
            return  # the timer comes back
        self.step_once()
        self.late.restart(time.monotonic())

    def _check_late(self, now: float, tick: int) -> bool:
        """While tick ``tick`` waits: drop the late participants whose node has left the ROS
        graph (looked at every :data:`GRAPH_CHECK_S` wall seconds of waiting, or every
        ``sync_timeout`` if shorter), and every ``sync_timeout`` wall seconds warn about the
        ones still running and publish the tick's outputs again. True when nobody is waited
        for any more."""
        late = self.late
        if not late.active:
            return False
        waited = late.waited(now)
        if late.graph_check_due(now):
            self._drop_gone(now, tick, waited)
        waiting = self.admission.barrier.waiting_for(tick, self._cmd_received)
        if not waiting:
            return True
        if late.warning_due(now):
            self.get_logger().warning(
                f"tick {tick}: waiting {waited:.0f} s for "
                f"{', '.join(waiting[:8])}{' ...' if len(waiting) > 8 else ''} "
                "(still running: the tick waits, the result does not change); "
                "publishing the tick's outputs again"
            )
            # A reader that matched this node's writers late (a DDS discovery race in a
            # separate process) can miss the tick's messages, none of which are kept for late
            # joiners: publish them again, as the start barrier does for tick 0. Participants
            # handle each tick once, so a repeat changes nothing.
            self.republishes += 1
            with self.tap.muted() if self.tap is not None else contextlib.nullcontext():
                self._publish_tick()
            self.publish_manifest()
        return False

    def _drop_gone(self, now: float, tick: int, waited: float) -> None:
        """Stop waiting for the participants late for ``tick`` whose node is off the graph
        (:meth:`Admission.drop_gone <maes_sim.ros.admission.Admission.drop_gone>`)."""
        if self.admission.drop_gone(now, tick, waited):
            # The manifest names the robots whose controllers take part: the navigator waits
            # for those controllers' reports and must hear at once that a dropped one is no
            # longer among them.
            self.publish_manifest()

    def tick_complete(self) -> bool:
        """True when every lockstep participant handled the current tick and every command
        they counted has arrived."""
        return self.admission.barrier.ready(self.sim.tick, self._cmd_received)

    def publish_manifest(self, tick: int | None = None) -> None:
        """Publish ``/maes/tick`` for the current tick (after its outputs); ``tick``
        overrides the number (``Tick.NOT_STARTED`` before the start)."""
        self.tick_publishers.publish_manifest(
            tick=self.sim.tick if tick is None else int(tick),
            lockstep=self.sync == "lockstep",
            navigators=self.admission.navigators(),
            lockstep_robots=self.admission.barrier.controlled_robots(),
            run_id=self.admission.run_id,
            end_reason=self.end_reason,
        )

    def announce_end(self, reason: str) -> None:
        """Tell the participants that the run is over (a manifest with ``end_reason``): they
        leave (a ``controller_node`` exits). Once; the first reason stays."""
        if self.end_reason:
            return
        self.end_reason = str(reason) or "ended"
        with self.tap.muted() if self.tap is not None else contextlib.nullcontext():
            self.publish_manifest()

    def flush_announcements(self, timeout_s: float = 10.0) -> bool:
        """Wait (at most ``timeout_s`` wall seconds) until every matched reader acknowledged
        the latest manifest, so that an end announced just before this node goes reaches the
        participants. Returns at once when they have; a lost sample is only sent again at the
        writer's next heartbeat (Fast DDS: every 3 s), so the bound is well above that. False
        (with a warning) when some reader did not acknowledge in time: its participant still
        leaves once it sees this simulator gone from the graph."""
        try:
            acked = self.tick_pub.wait_for_all_acked(RosDuration(seconds=timeout_s))
        except Exception:  # a context shut down: nothing to flush
            return False
        if not acked:
            self.get_logger().warning(
                f"the end of the run was not acknowledged by every participant within "
                f"{timeout_s:g} s; they leave once they see this simulator gone"
            )
        return bool(acked)

    def tick_done_callback(self, msg: TickDone) -> None:
        """A participant's report: remember it, then step if the tick is complete. A report of
        another run is ignored, with one warning per participant."""
        if not self.admission.admit(msg):
            return
        changed = self.admission.report(msg)
        if changed and self.started and not self.done:
            # Who takes part changed after this tick's manifest went out (a controller joined
            # or left mid-run): say so now, not a tick later; the navigator waits for the
            # controllers the manifest names.
            self.publish_manifest()
        if self.started and self.sync == "lockstep" and not (self.paused or self.done):
            self._advance_lockstep(time.monotonic())

    def _speed(self) -> dict[str, float]:
        """The run's wall time from its first tick on and its achieved real-time factor (as
        maes_run's summary.json has them), for the results written at the end."""
        if self.started_wall is None:
            return {}
        wall = time.monotonic() - self.started_wall
        sim_s = (self.sim.tick - self._started_tick) * self.sim.tick_duration
        return {
            "wall_time_s": round(wall, 3),
            "real_time_factor_achieved": round(sim_s / wall, 3) if wall > 0 else 0.0,
        }

    def step_once(self) -> None:
        """One logic tick: stale commands stopped, simulation stepped, everything published."""
        sim = self.sim
        stale = self._driven & (sim.sim_time - self._last_cmd > self.cmd_vel_timeout)
        for i in np.flatnonzero(stale).tolist():
            sim.stop(i)
            self._driven[i] = False
        sim.step()
        self.after_step()

    def after_step(self) -> None:
        """What follows a step of the simulation: the achieved speed measured, the tick's
        outputs and manifest published, the ``on_tick`` callbacks, the end when the run is
        finished. :meth:`step_once` calls it; so does a runner that steps the simulation itself
        (``maes_run``'s built-in controllers, in its process)."""
        sim = self.sim
        self.pacer.record(time.monotonic(), sim.tick)
        self._publish_tick()
        self.publish_manifest()
        for callback in self.on_tick:
            callback(self)
        if sim.finished:
            self._finish()

    @property
    def achieved_real_time_factor(self) -> float:
        """Sim seconds per wall second over the last few seconds."""
        return self.pacer.achieved

    @property
    def real_time_factor(self) -> float:
        """The speed asked for: sim seconds per wall second at most (<= 0: as fast as it
        goes); :meth:`set_real_time_factor` changes it."""
        return self.pacer.real_time_factor

    def _finish(self) -> None:
        self.tick_publishers.publish_stats(self.pacer.achieved)
        if self.page is not None:  # the page shows the end, whenever it last sampled
            self.page.offer(force=True)
        # The results folder is always written; should_write_csv_results decides only about
        # statistics.csv (maes_sim.core.write_run_results), as for make run and direct mode.
        if self.write_results_on_finish and self.results_path is None:
            self.results_path = write_run_results(
                self.sim,
                self.results_dir,
                extra_summary={**self.admission.logic_summary(), **self._speed()},
            )
            self.get_logger().info(f"results written to {self.results_path}")
        failures = self.logic_failure_line()
        if failures:
            self.get_logger().error(failures)
        self.get_logger().info(f"run finished at tick {self.sim.tick}: {self.sim.end_reason}")
        self.announce_end(self.sim.end_reason)
        for callback in self.on_finished:
            callback(self)
        if not self.stay_alive_after_end:
            self.done = True
        else:
            self.paused = True

    # ------------------------------------------------------------------ publishing
    # The messages are the factory's (maes_sim.ros.messages) and what goes out on which
    # publisher the tick publishers' (maes_sim.ros.publishing): the node says when.
    def _publish_static(self) -> None:
        self.tick_publishers.publish_static()

    def _publish_tick(self, force_maps: bool = False) -> None:
        self.tick_publishers.publish_tick(force_maps, self.pacer.achieved)
        if self.page is not None:
            self.page.offer()

    # ------------------------------------------------------------------ callbacks
    def cmd_vel_callback(self, robot: int, msg: Twist | TwistStamped) -> None:
        """Map a velocity command through the motion model; a bad one is logged and dropped."""
        linear, angular, lateral = cv.twist_from_msg(msg, self.tile)
        self._cmd_received[robot] += 1  # counted as sent, whatever becomes of it
        if not self.steps_itself and not self._outside_cmd_told[robot]:
            # The built-in controllers drive the robots in this process, not over cmd_vel.
            self._outside_cmd_told[robot] = True
            self.get_logger().warning(
                f"{robot_name(robot)}/cmd_vel: a command from another node, applied, but the "
                "built-in controller drives this robot in this process and its navigation "
                "overrides it (and the run is no longer reproducible); to drive robots from "
                "your own nodes, run with CONTROLLERS=none (maes_run --controllers none)"
            )
        try:
            self.sim.set_velocity(robot, linear, angular, lateral)
        except CommandRejected as exc:
            self.get_logger().warning(
                f"{robot_name(robot)}/cmd_vel rejected: {exc}", throttle_duration_sec=2.0
            )
            return
        self._last_cmd[robot] = self.sim.sim_time
        self._driven[robot] = True

    def broadcast_callback(self, robot: int, request, response):
        """``maes_broadcast``: result false (with a warning) when the message is refused."""
        return self._answer(self.sim.broadcast, robot, request, response)

    def deposit_tag_callback(self, robot: int, request, response):
        """``maes_deposit_tag``: result false (with a warning) when the tag is refused."""
        return self._answer(self.sim.deposit_tag, robot, request, response)

    def _answer(self, action, robot: int, request, response):
        """Run ``action(robot, request.msg)``; ``response.result`` says whether it was taken."""
        try:
            action(robot, request.msg)
            response.result = True
        except CommandRejected as exc:
            self.get_logger().warning(str(exc), throttle_duration_sec=2.0)
            response.result = False
        return response

    def pause(self) -> bool:
        """Stop sim time and every robot until :meth:`resume`; False when already paused."""
        was = self.paused
        self.paused = True
        return not was

    def resume(self) -> bool:
        """Continue from where the simulation was paused; False when it was not paused (or
        the run is over)."""
        if not self.paused or self.done:
            return False
        self.paused = False
        now = time.monotonic()
        self.pacer.anchor(now, self.sim.tick)
        self.late.since = now
        return True

    def set_real_time_factor(self, rtf: float) -> None:
        """Cap the speed at ``rtf`` sim seconds per wall second from now on (0: as fast as the
        run goes); only the speed, never the result in lockstep."""
        self.pacer.set_rate(rtf, time.monotonic(), self.sim.tick)
        if self.sync == "free" and self.timer is not None:
            # the timer steps a free run: as often as the speed needs
            self.timer.timer_period_ns = int(self.pacer.timer_period(lockstep=False) * 1e9)

    def pause_callback(self, request, response):
        """``/maes/pause``: sim time and every robot stop until ``/maes/resume``."""
        response.success = self.pause()
        response.message = "paused" if response.success else "already paused"
        return response

    def resume_callback(self, request, response):
        """``/maes/resume``: continue from where the simulation was paused."""
        response.success = self.resume()
        response.message = "resumed" if response.success else "not paused"
        return response


def _optional_bool(value) -> bool | None:
    """A typed-bool parameter's value: True, False, or None when it was not given."""
    if isinstance(value, bool) or value is None:
        return value
    raise ValueError(f"publish_slam_map must be true or false, got {value!r}")


#: The node's parameters: name -> default (an ``rclpy.Parameter.Type``: typed, no default).
PARAMETERS = {
    "config_file": "maes_config.yaml",
    "real_time_factor": 1.0,
    "cmd_vel_stamped": False,
    "stay_alive_after_end": False,
    "results_dir": "",
    "sync": "lockstep",  # or "free" (docs/lockstep.md)
    "sync_timeout": 10.0,  # wall s between checks that a late participant's node still exists
    "start_timeout": 60.0,  # wall seconds the start barrier waits at most; 0 = for ever
    "wait_for_navigator": False,
    "wait_for_controllers": "none",  # "connected", "lockstep" or "external"
    "join_grace": 10.0,  # "external": s before a non-participant maes_state reader counts
    # Not given: from the config's stack.slam; a launch file decides with true/false.
    "publish_slam_map": Parameter.Type.BOOL,
    "slam": "",  # replaces the config's stack.slam ("" = keep it): the launch's slam:=
    # Watching and recording (docs/live_view.md): an MCAP path ("" = none), the live view.
    "record": "",
    "live": False,
    "live_host": "127.0.0.1",
    "live_port": 8765,
    "run_id": "",  # the run's id; "" = a new one (a launch gives every node the same)
}


def main(args: list[str] | None = None) -> None:
    """Entry point of ``maes_sim_node``: parameters carry only the wiring.

    Runs until the end criteria are met (then exits 0, which ends a ``ros2 launch``), Ctrl-C or
    a shutdown; either way the results folder is written and its path printed (on a stop
    signal ``summary.json``'s ``stopped_because`` names it). A bad config or parameter exits 2
    with a one-line message.
    """
    with ros_process("maes_sim_node", args) as proc:
        params = read_parameters("maes_sim_params", PARAMETERS)
        try:
            config = load_config(params["config_file"])
            if params["slam"] and params["slam"] != config.stack.slam:
                config = with_slam(config, params["slam"])
            sim = Simulation(config)
        except (ConfigError, MapError) as exc:
            proc.fail(exc)
        start_timeout = params["start_timeout"]
        try:
            tap = build_tap(
                params["record"] or None,
                params["live"],
                params["live_host"],
                params["live_port"],
                say=lambda text: print(f"maes_sim_node: {text}", file=sys.stderr, flush=True),
            )
        except (ValueError, OSError, RuntimeError, ImportError) as exc:
            proc.fail(exc)
        try:
            node = proc.own(
                SimNode(
                    sim,
                    real_time_factor=params["real_time_factor"],
                    sync=params["sync"],
                    sync_timeout=params["sync_timeout"],
                    start_timeout=start_timeout if start_timeout > 0 else None,
                    wait_for_navigator=params["wait_for_navigator"],
                    wait_for_controllers=params["wait_for_controllers"],
                    join_grace=params["join_grace"],
                    cmd_vel_stamped=params["cmd_vel_stamped"],
                    stay_alive_after_end=params["stay_alive_after_end"],
                    results_dir=params["results_dir"] or None,
                    publish_slam_map=_optional_bool(params["publish_slam_map"]),
                    tap=tap,
                    run_id=params["run_id"] or None,
                )
            )
        except ValueError as exc:
            if tap is not None:
                tap.close()
            proc.fail(exc)
        try:
            # rclpy's events executor: a wait-set executor rebuilds the set of every entity
            # (a dozen per robot) for each event, which made a 50-robot launch 5x slower. The
            # simulator runs on wall time with a steady-clock timer, which that executor's
            # timers handle (they cannot follow sim time: maes_common.process).
            executor = proc.events_executor()
            executor.add_node(node)
            proc.spin(node, until=lambda: node.done, executor=executor)
            if proc.stopped_by is None:  # ended by itself: its end reaches the controllers
                node.flush_announcements()
        finally:  # also on Ctrl-C: the results are written, the recording gets its footer
            try:
                if node.results_path is None:
                    _write_stopped_run(node, proc.stopped_by)
            finally:
                if tap is not None:
                    tap.close()


def _write_stopped_run(node: SimNode, signal_name: str | None) -> None:
    """Write the results of a run that did not reach its end (Ctrl-C, ``ros2 launch`` shutting
    down), as ``make run`` does, and say where."""
    sim = node.sim
    why = f"interrupted ({signal_name})" if signal_name else "stopped: ROS was shut down"
    node.results_path = write_run_results(
        sim, node.results_dir, extra_summary={"stopped_because": why}
    )
    print(
        f"maes_sim_node: {why} at tick {sim.tick}; results written to {node.results_path}",
        file=sys.stderr,
        flush=True,
    )
