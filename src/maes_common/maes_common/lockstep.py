"""Lockstep bookkeeping, ROS-free: who the simulator waits for, and what it waits for.

The protocol (docs/lockstep.md): after tick ``t``'s outputs the simulator publishes the
manifest ``/maes/tick``; every participant handles tick ``t`` and publishes
``/maes/tick_done`` with ``tick = t`` and how many ``cmd_vel`` messages it has published per
robot so far. The simulator steps to ``t + 1`` once every participant has reported ``t`` and
the ``cmd_vel`` messages they counted have all arrived (a report can overtake the commands sent
before it: they travel on other topics). A participant joins with ``tick = JOIN`` and leaves
with ``tick = LEAVE``. A late participant is waited for as long as its node is on the ROS graph
(a loaded machine or a first-run compile only makes a tick slower, never different); one whose
node has gone (its process ended without leaving) is dropped with a warning until it reports
again.

Every run has an id (:func:`new_run_id`), carried by each manifest and each report: the
simulator refuses reports of another run (a participant left over from an earlier run can never
join a new one), and a participant takes part in one run only (:class:`RunMembership`): it
leaves when that run announces its end, or when a manifest of another run shows that its own
ended without saying so (the simulator was killed).

:class:`Barrier` keeps that state for the simulator node; it holds no clock and does no I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "JOIN",
    "LEAVE",
    "NOT_STARTED",
    "Barrier",
    "Participant",
    "RunMembership",
    "new_run_id",
]

#: ``TickDone.tick`` of a joining and of a leaving participant (maes_interfaces/TickDone).
JOIN, LEAVE = -1, -2
#: ``Tick.tick`` of the manifest published before the first tick (it announces the run's id).
NOT_STARTED = -1


def new_run_id() -> str:
    """A fresh run id: 12 random hex digits (never part of a result).

    Examples
    --------
    >>> a, b = new_run_id(), new_run_id()
    >>> len(a), a != b
    (12, True)
    """
    return uuid.uuid4().hex[:12]


class RunMembership:
    """Which run a participant (a controller, the navigator) takes part in, and whether it is
    over for it.

    The first manifest that has not ended gives the run id; the participant joins with it. A
    participant that has not joined yet follows a newer run instead (its simulator was
    replaced before it was ready). Once joined, the run is over for it when a manifest of that
    run carries an end reason, or when a manifest of *another* run arrives (its own run ended
    without a word: the simulator was killed), or when the simulator has left the graph
    (:meth:`simulator_gone`, the owner's check); :attr:`over` then says why, and the
    participant should leave.

    Given a ``run_id`` (a participant started together with its simulator: the embedded
    runner's nodes, a launch's), it takes part in that run only and ignores every other, so it
    never follows another run on the domain.

    Examples
    --------
    >>> m = RunMembership()
    >>> m.see("r1", ""); m.run_id, m.ours("r1"), m.ours("r0")
    ('r1', True, False)
    >>> m.joined = True
    >>> m.see("r1", "exploration reached 95.00 %"); m.over
    'run r1 ended: exploration reached 95.00 %'
    >>> stale = RunMembership(); stale.see("r1", ""); stale.joined = True
    >>> stale.see("r2", ""); stale.over  # doctest: +ELLIPSIS
    'a new run (r2) started on this ROS domain; this one belonged to run r1, which ...'
    >>> fixed = RunMembership("r1"); fixed.joined = True
    >>> fixed.see("r2", ""); fixed.over, fixed.ours("r2"), fixed.ours("r1")
    (None, False, True)
    """

    def __init__(self, run_id: str | None = None) -> None:
        self.run_id: str | None = run_id or None
        self.fixed = self.run_id is not None
        self.joined = False
        #: Why the run is over for this participant (None while it goes on).
        self.over: str | None = None

    def see(self, run_id: str, end_reason: str = "") -> None:
        """Take a manifest's ``run_id`` and ``end_reason``."""
        if self.over is not None or (self.fixed and run_id != self.run_id):
            return
        if self.run_id is None or (not self.joined and run_id != self.run_id):
            if not end_reason:  # a run that has ended is not joined; wait for the next one
                self.run_id = run_id
            return
        if run_id != self.run_id:
            self.over = (
                f"a new run ({run_id}) started on this ROS domain; this one belonged to run "
                f"{self.run_id}, which ended without announcing it (its simulator was killed?)"
            )
        elif end_reason:
            self.over = f"run {run_id} ended: {end_reason}"

    def simulator_gone(self) -> None:
        """The run's simulator left the ROS graph: the run is over for a joined participant,
        also when its end announcement never arrived (a lost message, a killed simulator).

        >>> m = RunMembership(); m.see("r1", ""); m.simulator_gone(); m.over is None  # not joined
        True
        >>> m.joined = True; m.simulator_gone(); m.over  # doctest: +ELLIPSIS
        'run r1 ended: its simulator left the ROS graph ...'
        """
        if self.over is None and self.joined and self.run_id is not None:
            self.over = (
                f"run {self.run_id} ended: its simulator left the ROS graph (its end "
                "announcement, if any, did not arrive)"
            )

    def ours(self, run_id: str) -> bool:
        """True for a message of the run this participant takes part in."""
        return self.run_id is not None and run_id == self.run_id and self.over is None


@dataclass
class Participant:
    """One lockstep participant as the simulator knows it."""

    name: str
    robots: np.ndarray  # int64 (k,)
    role: str = ""
    tick: int = JOIN  # highest tick reported
    cmd_vel_sent: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    dropped: bool = False  # missed a deadline; not waited for until it reports again


class Barrier:
    """The simulator's side of lockstep for ``n_robots`` robots.

    Examples
    --------
    >>> b = Barrier(2, run_id="r1")
    >>> b.admit("old_ctl", "r0")  # a report of another run: refused, remembered
    False
    >>> b.stale
    {'old_ctl': 'r0'}
    >>> b.report("nav", 0, [0, 1], [0, 0])  # joins by reporting: who takes part changed
    True
    >>> b.report("ctl0", 0, [0], [0], role="controller")
    True
    >>> b.controlled_robots()
    [0]
    >>> b.ready(0, np.array([0, 0]))
    True
    >>> b.report("nav", 1, [0, 1], [1, 0])  # one cmd_vel for robot 0 is on its way
    False
    >>> b.report("ctl0", 1, [0], [0], role="controller")
    False
    >>> b.ready(1, np.array([0, 0])), b.ready(1, np.array([1, 0]))
    (False, True)
    """

    def __init__(self, n_robots: int, run_id: str = "") -> None:
        self.n_robots = int(n_robots)
        self.run_id = str(run_id)
        self.participants: dict[str, Participant] = {}
        #: Participants whose reports carried another run's id: name -> that id.
        self.stale: dict[str, str] = {}
        # Per robot, the cmd_vel the active participants counted; kept up to date by report()
        # (every report of every tick reads it) and rebuilt when the membership changes.
        self._expected = np.zeros(self.n_robots, dtype=np.int64)

    # -- reports ---------------------------------------------------------------------------
    def admit(self, name: str, run_id: str) -> bool:
        """True when a report of ``name`` carrying ``run_id`` belongs to this run; otherwise
        ``name`` is remembered in :attr:`stale` (the caller warns once per name) and the
        report must be ignored."""
        if run_id == self.run_id:
            return True
        self.stale[name] = run_id
        return False

    def report(self, name: str, tick: int, robots, cmd_vel_sent, role: str = "") -> bool:
        """Take one ``TickDone`` report; robots out of range are ignored. True when it changed
        who is waited for (a participant joined, left, came back or changed robots): the
        manifest's ``navigators`` and ``lockstep_robots`` may then be out of date.

        Reports are cumulative, so a lost or reordered one is harmless: the newest tick and
        the highest counts win.
        """
        if tick == LEAVE:
            if self.participants.pop(name, None) is not None:
                self._rebuild_expected()
                return True
            return False
        robots = np.asarray(robots, dtype=np.int64).reshape(-1)
        sent = np.asarray(cmd_vel_sent, dtype=np.int64).reshape(-1)
        if sent.size != robots.size:
            sent = np.zeros(robots.size, dtype=np.int64)
        keep = (robots >= 0) & (robots < self.n_robots)
        robots, sent = robots[keep], sent[keep]
        p = self.participants.get(name)
        rebuild = p is None or p.dropped or not np.array_equal(p.robots, robots)
        if p is None or not np.array_equal(p.robots, robots):
            p = Participant(
                name, robots, role=str(role), cmd_vel_sent=np.zeros(robots.size, dtype=np.int64)
            )
            self.participants[name] = p
        p.tick = max(p.tick, int(tick))
        grown = np.maximum(p.cmd_vel_sent, sent)
        if not rebuild:
            np.add.at(self._expected, p.robots, grown - p.cmd_vel_sent)
        p.cmd_vel_sent = grown
        p.dropped = False
        if rebuild:
            self._rebuild_expected()
        return rebuild

    def _rebuild_expected(self) -> None:
        total = np.zeros(self.n_robots, dtype=np.int64)
        for p in self.active:
            np.add.at(total, p.robots, p.cmd_vel_sent)
        self._expected = total

    # -- queries ---------------------------------------------------------------------------
    @property
    def active(self) -> list[Participant]:
        """Participants waited for (joined, not left, not dropped)."""
        return [p for p in self.participants.values() if not p.dropped]

    def expected_cmd_vel(self) -> np.ndarray:
        """Per robot: ``cmd_vel`` messages the active participants say they have sent."""
        return self._expected.copy()

    def waiting_for(self, tick: int, cmd_vel_received: np.ndarray) -> list[str]:
        """What keeps tick ``tick`` from being complete: participant names, and
        ``"cmd_vel of robot<i>"`` for commands counted but not yet received."""
        late = [p.name for p in self.active if p.tick < tick]
        short = np.flatnonzero(np.asarray(cmd_vel_received) < self._expected)
        return late + [f"cmd_vel of robot{i}" for i in short.tolist()]

    def ready(self, tick: int, cmd_vel_received: np.ndarray) -> bool:
        """True when every active participant handled ``tick`` and its commands arrived."""
        return not self.waiting_for(tick, cmd_vel_received)

    def late(self, tick: int) -> list[str]:
        """Names of the active participants that have not reported ``tick``."""
        return [p.name for p in self.active if p.tick < tick]

    def drop_late(self, tick: int, names: Iterable[str] | None = None) -> list[str]:
        """Stop waiting for the participants that have not reported ``tick`` (only those in
        ``names`` when given); their names.

        Examples
        --------
        >>> b = Barrier(1)
        >>> b.report("a", 0, [0], [0]) and b.report("b", 0, [0], [0])
        True
        >>> b.drop_late(1, names=["b"]), b.late(1)
        (['b'], ['a'])
        """
        only = None if names is None else set(names)
        late = [p for p in self.active if p.tick < tick and (only is None or p.name in only)]
        for p in late:
            p.dropped = True
        if late:
            self._rebuild_expected()
        return [p.name for p in late]

    def controlled_robots(self) -> list[int]:
        """Sorted robots whose controller (role ``"controller"``) takes part in lockstep."""
        robots: set[int] = set()
        for p in self.active:
            if p.role == "controller":
                robots.update(p.robots.tolist())
        return sorted(robots)
