"""One lockstep participant for the many controllers of one process (``controller_container``).

Alone, each :class:`~maes_controller.nodes.controller_node.ControllerNode` reads the run's
manifests (``/maes/tick``) and the navigators' reports (``/maes/tick_done/navigation``) itself,
and reports every tick on ``/maes/tick_done`` itself. With N controllers in one process that is,
per tick, N copies of each of the two shared messages to read, N reports to send, and N reports
for the simulator and the navigator to read: at 120 robots the lockstep messages alone cost
the three processes about as much as the robots' own topics (docs/ros_launch.md).

The :class:`ControllerHub` is a node of its own (``controller_container``'s is
``/controllers_<i>``, ``i`` its first robot, so that two containers of other robots have two
hubs; ``/controllers`` by default) that reads each
shared message once and hands it to every controller, and sends one report for all of them:
tick ``t`` once every controller has handled ``t``, with each robot's counts (``cmd_vel`` sent,
logic calls and failures), as a single participant whose ``robots`` are the controllers that
joined. The lockstep protocol (docs/lockstep.md) already allows a participant that acts for
many robots (the navigator is one); the simulator waits for the same things, in the same order,
so a run's result is the same to the byte. The hub also answers the controllers' "is the
simulator still on the ROS graph?" once per second for all of them.

Each controller keeps its own view (its :class:`HubMember`: the tick it handled, joined or
not); a controller that leaves (its node destroyed) drops out of the hub's next report, and
the hub leaves once the last one has.
"""

from __future__ import annotations

import math
import time
from typing import Any

from rclpy.node import Node

from maes_common.contract import NAVIGATION_DONE_TOPIC, TICK_DONE_TOPIC, TICK_TOPIC
from maes_common.lockstep import JOIN, LEAVE, NOT_STARTED
from maes_common.participant import LockstepReporter
from maes_common.process import EndsQuietly
from maes_common.qos import LOCKSTEP_READER_QOS
from maes_interfaces.msg import Tick, TickDone

from .controller_node import SIMULATOR_CHECK_PERIOD, navigator_counts

__all__ = ["HUB_NODE_NAME", "ControllerHub", "HubMember"]

#: The hub's node name (in the root namespace) by default: the participant the simulator waits
#: for (``controller_container`` appends ``_<its first robot>``).
HUB_NODE_NAME = "controllers"


class HubMember:
    """One controller's side of the hub: what a ``LockstepReporter`` is to a controller alone
    (:attr:`reported_tick`, :attr:`joined`, :meth:`report`)."""

    def __init__(self, hub: ControllerHub, node: Any) -> None:
        self.hub = hub
        self.node = node
        self.reported_tick = JOIN - 1  # not joined yet

    @property
    def joined(self) -> bool:
        """True once the controller joined, until it left."""
        return self.reported_tick >= JOIN

    def report(self, tick: int) -> None:
        """The controller handled ``tick`` (or joins / leaves): the hub reports when due."""
        old, self.reported_tick = self.reported_tick, int(tick)
        self.hub.update(self, old)


class ControllerHub(EndsQuietly, Node):
    """The lockstep participant, manifest reader and graph watcher of a process's controllers.

    Create it first, pass it to each ``ControllerNode(..., hub=hub)``, spin it with them, and
    destroy it after them (its last report says it leaves).

    Parameters
    ----------
    node_name : str
        The hub node's name (default :data:`HUB_NODE_NAME`); the participant's name is its
        fully qualified name (``/controllers``).
    node_kwargs
        Passed to ``rclpy.node.Node`` (e.g. ``context=``).
    """

    def __init__(self, node_name: str = HUB_NODE_NAME, **node_kwargs: Any) -> None:
        super().__init__(node_name, **node_kwargs)
        self.members: list[HubMember] = []
        self._reported: list[HubMember] = []  # the members of the latest report, robot order
        self._min: int | None = None  # the lowest tick they handled
        self._at_min = 0  # how many of them are at that tick
        self.reporter = LockstepReporter(
            self,
            TICK_DONE_TOPIC,
            "controller",
            self._counts,
            extra=self._extra,
            run_id=self._run_id,
        )
        self._graph_checked = -SIMULATOR_CHECK_PERIOD
        self._tick_publishers = 0
        # The newest started tick of this run's manifests, since when (wall, monotonic s), and
        # when the hub last said which controllers hold it back (check_late).
        self._manifest_tick = NOT_STARTED
        self._manifest_wall = 0.0
        self._late_said = -math.inf
        self.create_subscription(Tick, TICK_TOPIC, self.tick_callback, LOCKSTEP_READER_QOS)
        self.create_subscription(
            TickDone, NAVIGATION_DONE_TOPIC, self.tick_done_callback, LOCKSTEP_READER_QOS
        )

    def member(self, node: Any) -> HubMember:
        """Take controller ``node`` in (its reporter: ``ControllerNode`` calls this)."""
        member = HubMember(self, node)
        self.members.append(member)
        return member

    # -- the report ------------------------------------------------------------------------
    def update(self, member: HubMember | None = None, old: int | None = None) -> None:
        """``member`` moved from tick ``old`` to its :attr:`~HubMember.reported_tick`: report
        when the joined controllers changed or all of them handled a newer tick; leave once
        none is left. Without arguments: look at every member afresh."""
        if member is None or old is None or (old >= JOIN) != member.joined:
            self._rebuild()
        elif old == self._min:
            self._at_min -= 1
            if self._at_min <= 0:  # the last one at the lowest tick moved on: once a tick
                self._recount()

    def _rebuild(self) -> None:
        joined = sorted((m for m in self.members if m.joined), key=lambda m: m.node.robot.robot_id)
        if not joined:
            self._min, self._at_min = None, 0
            if self.reporter.joined:
                self.reporter.report(LEAVE)  # with the robots of the latest report
            return
        self._reported = joined
        self._recount(force=True)

    def _recount(self, force: bool = False) -> None:
        ticks = [m.reported_tick for m in self._reported]
        self._min = min(ticks)
        self._at_min = ticks.count(self._min)
        if force or self._min != self.reporter.reported_tick:
            self.reporter.report(self._min)

    def _counts(self) -> list[tuple[int, int, int, int]]:
        return [(m.node.robot.robot_id, m.node.robot.cmd_vel_sent, 0, 0) for m in self._reported]

    def _extra(self) -> dict[str, list[int]]:
        return {
            "logic_failures": [m.node.errors for m in self._reported],
            "logic_calls": [m.node.calls for m in self._reported],
        }

    def _run_id(self) -> str | None:
        for m in self._reported or self.members:
            if m.node.run.run_id is not None:
                return m.node.run.run_id
        return None

    # -- what every controller reads -------------------------------------------------------
    def tick_callback(self, msg: Tick) -> None:
        """A manifest: hand it to every controller."""
        for m in list(self.members):
            m.node.tick_callback(msg)
        if msg.tick > self._manifest_tick and msg.run_id == self._run_id():
            self._manifest_tick = int(msg.tick)
            self._manifest_wall = time.monotonic()

    # -- a tick held back ------------------------------------------------------------------
    def late(self) -> list[tuple[int, str]]:
        """The joined controllers that have not handled the newest manifest's tick: (robot,
        why in words: :meth:`ControllerNode.holdup`)."""
        tick = self._manifest_tick
        if tick < 0:
            return []
        return [
            (m.node.robot.robot_id, m.node.holdup())
            for m in self._reported
            if m.reported_tick < tick
        ]

    def check_late(self, timeout: float) -> str | None:
        """Every ``timeout`` wall seconds while the newest manifest's tick waits for controllers
        of this hub, log which ones and why (the simulator only names the hub); returns the
        line logged, else None. A controller waiting for its inputs says so itself; one that
        no longer runs the logic, or never joined, would otherwise hold the run back in
        silence."""
        tick = self._manifest_tick
        if timeout <= 0 or tick < 0 or self.reporter.reported_tick >= tick:
            return None
        now = time.monotonic()
        if now - self._manifest_wall < timeout or now - self._late_said < timeout:
            return None
        late = self.late()
        if not late:
            return None
        self._late_said = now
        shown = "; ".join(f"robot{i}: {why}" for i, why in late[:8])
        text = (
            f"tick {tick}: {len(late)} of {len(self._reported)} controllers have not handled it "
            f"after {now - self._manifest_wall:.0f} s ({shown}{' ...' if len(late) > 8 else ''})"
        )
        self.get_logger().warning(text)
        return text

    def tick_done_callback(self, msg: TickDone) -> None:
        """A navigator's report: read it once, hand each controller its robot's counts."""
        if msg.role != "navigator":
            return
        counts = navigator_counts(msg)
        tick = int(msg.tick)
        for m in list(self.members):
            sent = counts.get(m.node.robot.robot_id)
            if sent is not None:
                m.node.navigator_report(msg.run_id, msg.participant, tick, *sent)

    def tick_publishers(self) -> int:
        """How many nodes publish the manifests (the simulator), looked at once per
        :data:`SIMULATOR_CHECK_PERIOD` for all controllers."""
        now = time.monotonic()
        if now - self._graph_checked >= SIMULATOR_CHECK_PERIOD:
            self._graph_checked = now
            self._tick_publishers = self.count_publishers(TICK_TOPIC)
        return self._tick_publishers
