"""Who takes part in a run and when it may start: the simulator node's controller admission.

:class:`Admission` holds the lockstep participants (a :class:`~maes_common.lockstep.Barrier`),
the start barrier's rules (``wait_for_navigator``, ``wait_for_controllers``, ``join_grace``),
the controllers accepted outside lockstep, the participants dropped when their node left the
ROS graph, and the logic call and failure counts the controllers report. It looks at the ROS
graph through the node and speaks through the node's logger, but publishes nothing: the node
(:class:`maes_sim.ros.sim_node.SimNode`) publishes the manifests and steps the simulation.
See docs/lockstep.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from maes_common.contract import NAVIGATION_DONE_TOPIC, TICK_DONE_TOPIC, robot_namespace
from maes_common.lockstep import Barrier
from maes_common.process import reporting_node_names
from maes_interfaces.msg import TickDone

__all__ = ["WAIT_FOR_CONTROLLERS", "Admission", "check_wait_for_controllers", "robot_list"]

robot_name = robot_namespace
#: What the start barrier waits for per robot (SimNode's ``wait_for_controllers``).
WAIT_FOR_CONTROLLERS = ("none", "connected", "lockstep", "external")


def check_wait_for_controllers(value: str) -> str:
    """``value`` when it is one of :data:`WAIT_FOR_CONTROLLERS`; ValueError otherwise."""
    if value not in WAIT_FOR_CONTROLLERS:
        raise ValueError(
            f"wait_for_controllers must be one of {WAIT_FOR_CONTROLLERS}, got {value!r}"
        )
    return value


def robot_list(what: str, robots: list[int]) -> str:
    """``what`` and the first robots' names, for a log line.

    Examples
    --------
    >>> robot_list("a lockstep controller", [0, 2])
    'a lockstep controller (robot0, robot2)'
    >>> robot_list("x", list(range(8)))
    'x (robot0, robot1, robot2, robot3, robot4, robot5, ...)'
    """
    shown = ", ".join(robot_name(i) for i in robots[:6])
    return f"{what} ({shown}{', ...' if len(robots) > 6 else ''})"


class Admission:
    """The participants of one run and the start barrier (see the module's docstring).

    Parameters
    ----------
    node : rclpy.node.Node
        The simulator node: its view of the ROS graph (subscriptions, node names) and its
        logger.
    robots : sequence
        Per robot its publishers (:class:`maes_sim.ros.publishing.RobotPublishers`): whom
        the start barrier waits for reads ``scan``, ``odom``, ``tf`` and ``maes_state``.
    run_id : str
        This run's id: reports of another run are refused.
    wait_for_navigator, wait_for_controllers, join_grace, start_timeout, sync_timeout
        As :class:`~maes_sim.ros.sim_node.SimNode`'s.
    """

    def __init__(
        self,
        node: Any,
        robots: Sequence[Any],
        *,
        run_id: str,
        wait_for_navigator: bool = False,
        wait_for_controllers: str = "none",
        join_grace: float = 10.0,
        start_timeout: float | None = 60.0,
        sync_timeout: float = 10.0,
    ) -> None:
        self.node = node
        self.robots = robots
        n_robots = len(robots)
        self.run_id = run_id
        self.wait_for_navigator = bool(wait_for_navigator)
        self.wait_for_controllers = check_wait_for_controllers(wait_for_controllers)
        self.join_grace = max(0.0, float(join_grace))
        self.start_timeout = None if start_timeout is None else float(start_timeout)
        self.sync_timeout = float(sync_timeout)
        self.barrier = Barrier(n_robots, run_id=run_id)
        # "external": per robot, since when (monotonic s) a maes_state subscriber that is not a
        # lockstep participant has been seen; robots accepted with such a controller.
        self._plain_since: dict[int, float] = {}
        self.free_controllers: dict[int, list[str]] = {}
        #: Ticks stepped after the deadline passed with participants still missing.
        self.deadline_misses = 0
        #: Per robot: logic calls its controller made and how many raised, as reported in the
        #: controllers' lockstep reports (``TickDone.logic_calls`` / ``logic_failures``).
        self.logic_calls = np.zeros(n_robots, dtype=np.int64)
        self.logic_failures = np.zeros(n_robots, dtype=np.int64)
        #: Wall time (monotonic s) of the last "waiting to start" line.
        self.last_notice = -math.inf
        # The start barrier: how many things it still waits for, and since when (monotonic s)
        # that number has not fallen.
        self._start_left = math.inf
        self._start_progress = -math.inf
        # Lockstep participants: wall time of each one's first report, and those whose node was
        # seen on the ROS graph while late (either lets a gone one be dropped at once).
        self._first_report: dict[str, float] = {}
        self._seen_on_graph: set[str] = set()
        self._stale_warned: dict[str, str] = {}

    def _log(self):
        return self.node.get_logger()

    # ------------------------------------------------------------------ start barrier
    def start_missing(self) -> list[str]:
        """What the start barrier still waits for (empty when the run may start)."""
        return [text for text, _ in self._start_gaps()]

    def _start_gaps(self) -> list[tuple[str, int]]:
        """What the start barrier still waits for: (what, how many: robots, or 1)."""
        missing: list[tuple[str, int]] = []
        roles = {p.role for p in self.barrier.active}
        if self.wait_for_navigator and "navigator" not in roles:
            missing.append(("the navigator", 1))
        if self.wait_for_controllers in ("lockstep", "external"):
            have = set(self.barrier.controlled_robots())
            lacking = [i for i in range(len(self.robots)) if i not in have]
            if self.wait_for_controllers == "external":
                lacking, notes = self._accept_free_controllers(lacking)
                missing.extend((note, 1) for note in notes)
            if lacking:
                missing.append((robot_list("a lockstep controller", lacking), len(lacking)))
            # The controller node waits for each tick's scan and odom: they must reach it too.
            lacking = [
                i
                for i, r in enumerate(self.robots)
                if i not in self.free_controllers
                and (r.scan.get_subscription_count() < 1 or r.odom.get_subscription_count() < 1)
            ]
            if lacking:
                missing.append(
                    (robot_list("a controller subscribed to scan and odom", lacking), len(lacking))
                )
        # Subscribers of maes_state (the navigator reads it too) and of tf must be matched,
        # or the first ticks' outputs would be lost to them.
        need = int(self.wait_for_navigator) + int(self.wait_for_controllers != "none")
        need_tf = int(self.wait_for_navigator)  # controllers need not read tf
        if need:
            # (a robot driven by a Nav2 script outside lockstep has no maes_state reader)
            lacking = [
                i
                for i, r in enumerate(self.robots)
                if r.state.get_subscription_count() < need - int(i in self.free_controllers)
                or r.tf.get_subscription_count() < need_tf
            ]
            if lacking:
                what = (
                    "a controller subscribed to maes_state"
                    if self.wait_for_controllers != "none"
                    else "the navigator's subscriptions"
                )
                missing.append((robot_list(what, lacking), len(lacking)))
        return missing

    def _accept_free_controllers(self, lacking: list[int]) -> tuple[list[int], list[str]]:
        """``"external"``: of the robots ``lacking`` a lockstep controller, accept those whose
        ``maes_state`` subscriber or ``navigate_to_pose`` client (not a lockstep participant, not
        left over from another run) has waited ``join_grace`` s; returns the robots still lacking
        and notes on the others.
        """
        now = time.monotonic()
        navigators = {p.name for p in self.barrier.active if p.role == "navigator"}
        still, notes = [], []
        for i in lacking:
            # a node reading the robot's state (a MAES 2.0 controller), or a client of its
            # navigate_to_pose (a Nav2 script: an action client subscribes its feedback)
            topics = (
                f"/{robot_name(i)}/maes_state",
                f"/{robot_name(i)}/navigate_to_pose/_action/feedback",
            )
            plain = sorted(
                {
                    (info.node_namespace.rstrip("/") + "/" + info.node_name)
                    for topic in topics
                    for info in self.node.get_subscriptions_info_by_topic(topic)
                }
                - navigators
                - set(self.barrier.participants)
                - set(self.barrier.stale)
                - {self.node.get_fully_qualified_name()}
            )
            if not plain:
                self._plain_since.pop(i, None)
                self.free_controllers.pop(i, None)
                still.append(i)
                continue
            since = self._plain_since.setdefault(i, now)
            if now - since >= self.join_grace:
                self.free_controllers[i] = plain
                continue
            still.append(i)
            notes.append(
                f"{robot_name(i)}'s {', '.join(plain)}, which reads its maes_state or sends it "
                "Nav2 goals but has not joined lockstep (a MAES 2.0 controller or a Nav2 "
                "script?): taken as its controller, outside "
                f"lockstep, in {max(0.0, self.join_grace - (now - since)):.0f} s"
            )
        return still, notes

    def may_start(self, now: float, waited: float) -> bool:
        """True when the run may start now (``now``: the wall clock, monotonic; ``waited``:
        wall seconds since the node was made): nothing is missing, or the start barrier timed
        out (said with a warning). While it waits, a line every 5 s says for what.

        The barrier times out after ``start_timeout`` s in which nothing it waits for arrived:
        each participant that joins, or robot whose subscriptions match, starts the count
        again. So a slow machine (or a container bringing up a hundred controllers one by one)
        is waited for, and a participant that never comes is not waited for for ever; starting
        without one changes the run's result, so the machine's speed alone must not decide it.
        """
        gaps = self._start_gaps()
        missing = [text for text, _ in gaps]
        left = sum(count for _, count in gaps)
        if left < self._start_left:  # something arrived (or the first look): count again
            self._start_left = left
            self._start_progress = now
        quiet = now - self._start_progress
        if missing and (self.start_timeout is None or quiet < self.start_timeout):
            if now - self.last_notice >= 5.0:
                self.last_notice = now
                self._log().info(f"waiting to start for {'; '.join(missing)} ({waited:.0f} s)")
            return False
        if missing:
            self._log().warning(
                f"starting without {'; '.join(missing)}: start barrier timed out, nothing of "
                f"it arrived in {self.start_timeout:g} s (after {waited:.0f} s of waiting)"
            )
        # Robots accepted with a controller outside lockstep, unless it joined since.
        joined = set(self.barrier.controlled_robots())
        free = {i: names for i, names in self.free_controllers.items() if i not in joined}
        if free:
            self._log().warning(
                "starting with "
                + "; ".join(f"{robot_name(i)} driven by {', '.join(n)}" for i, n in free.items())
                + f": not lockstep participants after {self.join_grace:g} s, so not waited "
                "for; the run's result depends on the machine (docs/lockstep.md)"
            )
        return True

    # ------------------------------------------------------------------ participants
    def navigators(self) -> list[str]:
        """The names of the navigators taking part, sorted (for the manifest)."""
        return sorted(p.name for p in self.barrier.active if p.role == "navigator")

    def admit(self, msg: TickDone) -> bool:
        """False when the report ``msg`` is of another run (one warning per participant)."""
        if self.barrier.admit(msg.participant, msg.run_id):
            return True
        if self._stale_warned.get(msg.participant) != msg.run_id:
            self._stale_warned[msg.participant] = msg.run_id
            self._log().warning(
                f"ignoring {msg.participant or '(unnamed)'}: it reports for run "
                f"{msg.run_id or '(none)'}, not this run ({self.run_id}) - a participant "
                "left over from an earlier run? It is never waited for; stop it (a "
                "controller_node leaves by itself once it sees this run)"
            )
        return False

    def report(self, msg: TickDone) -> bool:
        """Take an admitted report: the participant's tick, robots and commands, and the logic
        counts it carries. True when who takes part changed (a participant joined or left)."""
        self._first_report.setdefault(msg.participant, time.monotonic())
        changed = self.barrier.report(
            msg.participant, int(msg.tick), list(msg.robots), list(msg.cmd_vel_sent), role=msg.role
        )
        self._count_logic(msg)
        return changed

    def drop_gone(self, now: float, tick: int, waited: float) -> bool:
        """Stop waiting for the participants late for ``tick`` whose node is off the graph;
        True when some were dropped (the manifest must then say so at once).

        A late participant still on the ROS graph is slow (a loaded machine, a first-run
        compile, a long logic call), not gone: it is waited for, so the result stays the same.
        One whose process ended (a Ctrl-C'd or killed controller: its LEAVE report cannot be
        sent once rclpy's signal handler has shut its context down) is dropped once its report
        publisher is off the graph (it goes with the process; the node's name may stay:
        :meth:`_reporters_alive`). Only a participant seen on the graph before, or known for
        ``sync_timeout``, is judged at once: the graph may list a node that just joined a
        moment after its first report arrives.
        """
        late = self.barrier.late(tick)
        if not late:
            return False
        alive = self._reporters_alive()
        self._seen_on_graph.update(name for name in late if name in alive)
        gone = [
            name
            for name in late
            if name not in alive
            and (
                name in self._seen_on_graph
                or waited >= self.sync_timeout
                or now - self._first_report.get(name, now) >= self.sync_timeout
            )
        ]
        if not gone:
            return False
        dropped = self.barrier.drop_late(tick, gone)
        self.deadline_misses += 1
        self._log().warning(
            f"tick {tick}: {', '.join(dropped[:8])}{' ...' if len(dropped) > 8 else ''} "
            "left the ROS graph without leaving lockstep (a process ended?); stepping on "
            "without them until they report again (this run is no longer reproducible)"
        )
        return True

    def _reporters_alive(self) -> set[str]:
        """The nodes that publish lockstep reports now (a participant's node name alone may
        stay on the graph after its process ended: :func:`reporting_node_names`)."""
        return reporting_node_names(self.node, (TICK_DONE_TOPIC, NAVIGATION_DONE_TOPIC))

    # ------------------------------------------------------------------ the logic's record
    def _count_logic(self, msg: TickDone) -> None:
        """Keep the logic call and failure counts a controller's report carries (cumulative)."""
        calls, failures = list(msg.logic_calls), list(msg.logic_failures)
        for k, robot in enumerate(msg.robots):
            if 0 <= robot < len(self.logic_calls) and k < len(calls) and k < len(failures):
                self.logic_calls[robot] = max(int(self.logic_calls[robot]), int(calls[k]))
                self.logic_failures[robot] = max(int(self.logic_failures[robot]), int(failures[k]))

    def logic_summary(self) -> dict[str, list[int]]:
        """``{"logic_calls": [...], "logic_failures": [...]}`` per robot, for summary.json."""
        return {
            "logic_calls": self.logic_calls.tolist(),
            "logic_failures": self.logic_failures.tolist(),
        }

    @property
    def logic_always_failed(self) -> bool:
        """True when controllers reported logic calls and every one of them raised."""
        calls = int(self.logic_calls.sum())
        return calls > 0 and int(self.logic_failures.sum()) == calls

    def logic_failure_line(self) -> str:
        """One line on the logic's failures ("" when none failed)."""
        failed, calls = int(self.logic_failures.sum()), int(self.logic_calls.sum())
        if failed == 0:
            return ""
        robots = ", ".join(
            f"{robot_name(i)} {int(n)}" for i, n in enumerate(self.logic_failures) if n
        )
        every = "the logic failed on every call" if self.logic_always_failed else "logic failures"
        return f"{every}: {failed} of {calls} calls raised ({robots}); see the controllers' log"
