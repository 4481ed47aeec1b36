"""The lockstep participant's side, for any node taking part (controllers, the navigator).

A participant reports on a ``TickDone`` topic: ``JOIN`` first, then each tick it handled with
how many ``cmd_vel`` messages (and navigation results and feedback) it has published per robot
so far, and ``LEAVE`` when it goes (docs/lockstep.md; the simulator's side is
:class:`maes_common.lockstep.Barrier`). :class:`LockstepReporter` is that report, written once:
the controller node and the navigator node each own one. It imports rclpy and the messages, so
it is imported as a module (not from ``maes_common``'s ``__init__``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from maes_interfaces.msg import TickDone

from .lockstep import JOIN, LEAVE
from .qos import LOCKSTEP_WRITER_QOS

__all__ = ["LockstepReporter"]

#: Per robot of the participant: (robot, cmd_vel sent, results sent, feedback sent) so far.
Counts = Callable[[], Sequence[tuple[int, int, int, int]]]


class LockstepReporter:
    """Publishes one participant's ``TickDone`` reports.

    Parameters
    ----------
    node : rclpy.node.Node
        The participant's node (its fully qualified name names the participant).
    topic : str
        ``TICK_DONE_TOPIC`` (controllers) or ``NAVIGATION_DONE_TOPIC`` (navigators).
    role : str
        ``"controller"``, ``"navigator"`` or another role the simulator shows.
    counts : callable
        Returns, per robot the participant acts for, ``(robot, cmd_vel_sent, results_sent,
        feedback_sent)``: cumulative counts, read at every report.
    extra : callable, optional
        Returns further ``TickDone`` fields by name (e.g. a controller's ``logic_failures``
        and ``logic_calls``), read at every report.
    run_id : callable, optional
        Returns the id of the run the participant takes part in (None: not known yet), read at
        every report: the simulator refuses reports of another run.
    """

    def __init__(
        self,
        node,
        topic: str,
        role: str,
        counts: Counts,
        extra: Callable[[], dict[str, Any]] | None = None,
        run_id: Callable[[], str | None] | None = None,
    ) -> None:
        self.participant = node.get_fully_qualified_name()
        self.role = role
        self.reported_tick = JOIN - 1  # not joined yet
        self._counts = counts
        self._extra = extra
        self._run_id = run_id
        self._pub = node.create_publisher(TickDone, topic, LOCKSTEP_WRITER_QOS)

    @property
    def joined(self) -> bool:
        """True once :meth:`join` (or any report) was sent, until :meth:`leave`."""
        return self.reported_tick >= JOIN

    def report(self, tick: int) -> None:
        """Report ``tick`` handled (or ``JOIN`` / ``LEAVE``) with the current counts."""
        self.reported_tick = int(tick)
        rows = list(self._counts())
        self._pub.publish(
            TickDone(
                run_id=(self._run_id() if self._run_id is not None else None) or "",
                participant=self.participant,
                role=self.role,
                tick=int(tick),
                robots=[r[0] for r in rows],
                cmd_vel_sent=[r[1] for r in rows],
                results_sent=[r[2] for r in rows],
                feedback_sent=[r[3] for r in rows],
                **(self._extra() if self._extra is not None else {}),
            )
        )

    def join(self) -> None:
        """Ask the simulator to wait for this participant from now on."""
        self.report(JOIN)

    def leave(self) -> None:
        """Tell the simulator to stop waiting (quietly: the context may be shut down)."""
        if self.joined:
            with contextlib.suppress(Exception):
                self.report(LEAVE)
