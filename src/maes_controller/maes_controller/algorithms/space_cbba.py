"""SPACE with CBBA: area tasks allocated by the Consensus-Based Bundle Algorithm.

The behaviour tree of :mod:`.space_bt` with a CBBA decision plugin (:class:`CbbaPlugin`). Bids
are the marginal gain of a time-discounted reward (SPACE's equation 2): a task's reward is its
workload (frontier cells) and ``tau`` is the travel in metres to it along the bundle's path,
discounted by ``LAMBDA`` per metre. Consensus runs over the real broadcasts (range-limited,
may not arrive): every robot broadcasts its ``y``, ``z`` and ``s`` every few ticks as one
``cbba ...`` text within the radio's 1024 bytes (:func:`encode`). SPACE's modification is
kept: a robot whose bundle stays empty for ``RESET_TICKS`` forgets every winning bid it knows,
so tasks won with stale bids are freed.

MAES-ROS's additions (the paper's robots shared one map): an area a robot explored is
*finished* for every robot (:meth:`CbbaPlugin.explored`), and a robot bids on areas others
finished only when no other task is left to it; its bids on them ride in the broadcasts as
the others do, so each has one winner. Then each such task's travel counts also the
straight distance from its goal to the nearest *unvisited* cell (:func:`unvisited_gaps`):
unknown in the robot's own map, in an area nobody finished, with at most
:data:`NEAR_DONE_MAX` of the 8 areas around finished. Each robot maps alone, so the unexplored
rooms lie beyond its own map's frontier; without this it re-explored the nearest ground others
had explored (10 robots on a 60x60 building, seed 2: 4 of them re-explored the east half
while the west half was unexplored).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from maes_common.contract import MAX_MESSAGE_BYTES

from ._common import AREA_ROW, MapView, area_labels
from ._gaps_kernel import gap_candidates, unvisited_cells
from .allocation import CbbaState, cbba_build_bundle, cbba_consensus, cbba_drop
from .space_bt import AREA_SIDE_M, Task, run_tree

#: Discount per metre of travel (SPACE used 0.999 per second on a 1400 x 1000 unit map).
LAMBDA = 0.95
#: Longest bundle (tasks per robot).
MAX_BUNDLE = 3
#: Ticks with an empty bundle before the robot resets the bids it knows (SPACE's modification).
RESET_TICKS = 30
#: Share of a broadcast the task entries may fill when they are sent in parts
#: (:func:`encode_part`); the rest carries the freshest timestamps.
TASK_SHARE = 0.75
#: An unknown cell is *unvisited* (:func:`unvisited_gaps`) only where at most this many of the
#: 8 areas around its area are finished: lone unfinished areas amid finished ones are mostly
#: explored ground no robot happened to finish.
NEAR_DONE_MAX = 2


def encode(state: CbbaState, limit: int = MAX_MESSAGE_BYTES) -> str:
    """The broadcast of a CBBA state (``y``, ``z``, ``s`` and ``done``), at most ``limit`` bytes.

    ``cbba <task>:<winner>:<bid>;...|<agent>:<tick>;...``: one entry per task (an empty winner or
    bid where the state has none; a finished task's winner written ``x<winner>``, ``<task>:x:``
    when nobody bid on it: robots left with only finished areas bid on them, and consensus
    gives each one winner as it does the others) and the agents' timestamps,
    freshest first. Where all of them do not fit (a big team: one timestamp per agent heard
    of), the stalest timestamps are left out, which a receiver reads as "no fresher news of
    that agent" (CBBA's rules then keep its own).
    Where even the tasks do not fit, this is the first part of :func:`encode_part`'s round. The
    bids are rounded to 6 decimals, as JSON carried them before.

    Examples
    --------
    >>> encode(CbbaState(y={3: 1.5}, z={3: 0}, s={0: 7, 2: 5}))
    'cbba 3:0:1.5|0:7;2:5'
    >>> decode(encode(CbbaState(y={3: 1.5}, z={3: 0}, s={0: 7}))).z
    {3: 0}
    >>> decode(encode(CbbaState(s={k: 100 + k for k in range(9)}), limit=30)).s
    {8: 108, 7: 107, 6: 106, 5: 105}
    >>> encode(CbbaState(y={3: 1.5}, z={3: 0}, done={4}))
    'cbba 3:0:1.5;4:x:|'
    >>> decode('cbba 3:0:1.5;4:x:|').done
    {4}
    >>> encode(CbbaState(y={4: 0.5}, z={4: 2}, done={4}))
    'cbba 4:x2:0.5|'
    """
    return encode_part(state, None, limit)[0]


def encode_part(state: CbbaState, first: int | None, limit: int = MAX_MESSAGE_BYTES):
    """``(text, next_first)``: the broadcast of a CBBA state, its tasks split over broadcasts
    when they do not all fit in ``limit`` bytes.

    When every task fits, the text is :func:`encode`'s whole state and ``next_first`` is
    ``first``. Otherwise (many areas known at once: a big map, a big team) the text carries the
    tasks from id ``first`` on (None: from the lowest), as many as fill ``TASK_SHARE`` of the
    limit, and says which ids it speaks for: ``cbba @<lo>..<hi> <tasks>|<stamps>``, an empty
    end unbounded. A receiver leaves the tasks outside that range as they are
    (:attr:`CbbaState.covers`), where a whole state's missing task means "no winner".
    ``next_first`` is where the sender's next part starts; after the highest id, the round
    starts again from the lowest. The rest of the limit holds the freshest timestamps.

    Examples
    --------
    >>> st = CbbaState(y={t: 1.0 for t in range(10)}, z={t: 0 for t in range(10)}, s={0: 7})
    >>> encode_part(st, None, limit=60)
    ('cbba @..3 0:0:1.0;1:0:1.0;2:0:1.0;3:0:1.0|0:7', 4)
    >>> encode_part(st, 4, limit=60)
    ('cbba @4..7 4:0:1.0;5:0:1.0;6:0:1.0;7:0:1.0|0:7', 8)
    >>> text, then = encode_part(st, 8, limit=60)
    >>> text, then, decode(text).covers
    ('cbba @8.. 8:0:1.0;9:0:1.0|0:7', None, (8, None))
    """
    entries = [
        (t, _entry(state, t, finished=t in state.done))
        for t in sorted(set(state.y) | set(state.z) | state.done)
    ]
    text = f"cbba {';'.join(entry for _, entry in entries)}|"
    following = first
    if len(text.encode()) > limit:  # not every task fits: the round's next part
        k = 0 if first is None else next((n for n, (t, _) in enumerate(entries) if t >= first), 0)
        lo = None if k == 0 else first
        head = f"cbba @{'' if lo is None else lo}.."
        budget = int(limit * TASK_SHARE)
        body_size, n = -1, k  # the entries and their separators (all ASCII)
        while n < len(entries):
            t, entry = entries[n]
            size = len(head) + len(str(t)) + 1 + body_size + 1 + len(entry) + 1  # ... hi body|
            if n > k and size > budget:
                break
            body_size += 1 + len(entry)
            n += 1
        hi = entries[n - 1][0] if n < len(entries) else None
        body = ";".join(entry for _, entry in entries[k:n])
        text = f"{head}{'' if hi is None else hi} {body}|"
        following = None if hi is None else hi + 1
    stamps = sorted(state.s.items(), key=lambda item: (-item[1], item[0]))
    for k, (agent, tick) in enumerate(stamps):
        entry = f"{';' if k else ''}{agent}:{tick}"
        if len(text) + len(entry) > limit:
            break
        text += entry
    return text, following


def _entry(state: CbbaState, t: int, *, finished: bool = False) -> str:
    """A task's ``<task>:<winner>:<bid>`` entry (empty winner or bid where there is none), the
    winner written ``x<winner>`` for a finished task."""
    bid = "" if t not in state.y else repr(round(state.y[t], 6))
    return f"{t}:{'x' if finished else ''}{state.z.get(t, '')}:{bid}"


def decode(text: str) -> CbbaState | None:
    """The state in a ``cbba`` broadcast (whole or part), None for other or malformed messages."""
    if not text.startswith("cbba "):
        return None
    try:
        body, covers = text[5:], None
        if body.startswith("@"):
            span, body = body[1:].split(" ", 1)
            lo, hi = span.split("..")
            covers = (int(lo) if lo else None, int(hi) if hi else None)
        tasks, stamps = body.split("|")
        state = CbbaState(covers=covers)
        for entry in filter(None, tasks.split(";")):
            t, winner, bid = entry.split(":")
            if winner.startswith("x"):  # finished, with its winner and bid if it has them
                state.done.add(int(t))
                winner = winner[1:]
            if winner:
                state.z[int(t)] = int(winner)
            if bid:
                state.y[int(t)] = float(bid)
        for entry in filter(None, stamps.split(";")):
            agent, tick = entry.split(":")
            state.s[int(agent)] = int(tick)
        return state
    except ValueError:
        return None


@functools.lru_cache(maxsize=1024)
def _heard(text: str) -> CbbaState | None:
    """:func:`decode`, once per text: every robot in range hears the same broadcast, and
    decoding it for each of them was half of a 120-robot run's time. The state is shared by
    its receivers, so it is never modified (:func:`cbba_consensus` only reads it)."""
    return decode(text)


class CbbaPlugin:
    """CBBA as a SPACE decision plugin (receive, decide, task_done, message)."""

    #: The tree gives a task up after 30 s without progress (space_bt.STUCK_TICKS).
    gives_up_when_stuck = True

    def __init__(self, me: int) -> None:
        self.me = me
        self.state = CbbaState()
        self.inbox: list[tuple[int, CbbaState]] = []
        self.empty_since: int | None = None
        self.next_part: int | None = None  # where the next broadcast's tasks start
        self.finished: set[int] = set()  # areas this robot explored (state.done: anyone's)
        self.view: MapView | None = None  # the map view the tasks were last built from
        self._gaps: tuple | None = None  # (view, (done, points), gaps): _unvisited_gaps

    def receive(self, sender: int, text: str, now: int) -> None:
        msg = _heard(text)
        if msg is not None and sender != self.me:
            self.inbox.append((sender, msg))

    def decide(self, tasks: dict[int, Task], now: int) -> int | None:
        st = self.state
        st.s[self.me] = now
        for sender, msg in self.inbox:
            cbba_consensus(st, self.me, sender, msg, now)
        self.inbox.clear()
        for task in [t for t in st.bundle if t not in tasks]:
            cbba_drop(st, task)  # explored (or unreachable) in this robot's map
        others = st.done - self.finished
        fresh = {t: task for t, task in tasks.items() if t not in others}
        if fresh:  # areas another robot finished wait until nothing else is left
            for task in [t for t in st.bundle if t not in fresh]:
                cbba_drop(st, task)
            tasks = fresh
        start = {t: task.cost_m for t, task in tasks.items()}
        if not fresh and tasks and self.view is not None:
            # every task lies in areas others finished: head for where nobody has been
            gaps = self._unvisited_gaps(st.done, [task.pos for task in tasks.values()])
            if gaps is not None:
                start = {t: c + g for (t, c), g in zip(start.items(), gaps, strict=True)}
        reward = {t: float(task.workload) for t, task in tasks.items()}

        def between(a: int, b: int) -> float:
            pa, pb = tasks[a].pos, tasks[b].pos
            return math.hypot(pa[0] - pb[0], pa[1] - pb[1])

        cbba_build_bundle(st, self.me, start, between, reward, lam=LAMBDA, max_bundle=MAX_BUNDLE)
        if st.bundle:
            self.empty_since = None
        elif tasks:
            self.empty_since = now if self.empty_since is None else self.empty_since
            if now - self.empty_since >= RESET_TICKS:
                st.y.clear()
                st.z.clear()
                self.empty_since = None
        return st.path[0] if st.path else None

    def task_done(self, task: int) -> None:
        cbba_drop(self.state, task)

    def _unvisited_gaps(self, done: set[int], points: list) -> list[float] | None:
        """:func:`unvisited_gaps` on the last view, kept while the view, the finished areas
        and the points stay the same (a robot with nothing else to do asks every tick)."""
        key = (frozenset(done), tuple(points))
        kept = self._gaps
        if kept is not None and kept[0] is self.view and kept[1] == key:
            return kept[2]
        gaps = unvisited_gaps(self.view, done, points)
        self._gaps = (self.view, key, gaps)
        return gaps

    def seen(self, view: MapView) -> None:
        """The map view the tree built the tasks from (:func:`unvisited_gaps` reads it)."""
        self.view = view

    def explored(self, areas: set[int]) -> None:
        """``areas`` have no frontier left in this robot's map: finished, for every robot.

        Each robot maps alone by default (``distribute_slam: false``), so an area another robot
        explored still shows frontier in this robot's map; without this, CBBA's winner of it
        dropped it when done and the others bid on it next (2 robots on a 60x60 building, seed
        0, explored less than 1). Finished areas ride in the broadcasts (``<task>:x...``) and
        are merged as a union; a robot takes them only when no other area is left to it. An
        area it finished itself that shows frontier again in its own map is a task again.
        """
        self.finished |= areas
        self.state.done |= areas

    def message(self) -> str | None:
        text, self.next_part = encode_part(self.state, self.next_part)
        return text


def unvisited_gaps(
    view: MapView, done: Iterable[int], points: Sequence[Sequence[float]]
) -> list[float] | None:
    """The straight distance (metres) from each of ``points`` (world metres) to the nearest
    *unvisited* cell of ``view``: unknown in the robot's map, in an area (``AREA_SIDE_M``) not in
    ``done``, with at most :data:`NEAR_DONE_MAX` of the 8 areas around it in ``done``. None when
    there is no such cell. Each is ``np.hypot`` of the point's offset from a cell, the least
    over every such cell; compiled kernels (:mod:`._gaps_kernel`) find the few cells that can be
    the least, so only theirs are taken.

    Examples
    --------
    >>> from maes_controller.navigation import GridMap
    >>> g = GridMap.from_array(np.array([[0, 0, 0, -1]], dtype=np.int8), 1.0)
    >>> unvisited_gaps(MapView(g, (0.5, 0.5)), set(), [(0.5, 0.5), (3.0, 0.5)])
    [3.0, 0.5]
    >>> unvisited_gaps(MapView(g, (0.5, 0.5)), {AREA_ROW * 1000 + 1000}, [(0.5, 0.5)]) is None
    True
    """
    done = set(done)
    if done:
        # an area's id is row * AREA_ROW + column
        labels = area_labels(view, AREA_SIDE_M)
        rows, cols = labels[:, 0] // AREA_ROW, labels[0, :] % AREA_ROW
        unvisited = unvisited_cells(view.array, rows, cols, _ids(done), AREA_ROW, NEAR_DONE_MAX)
    else:
        unvisited = view.array < 0
    if not unvisited.any():
        return None
    h, w = unvisited.shape
    # the centres of the columns and rows, as each cell's was: origin + (index + 0.5) * res
    xs = view.grid.origin_x + (np.arange(w) + 0.5) * view.resolution
    ys = view.grid.origin_y + (np.arange(h) + 0.5) * view.resolution
    px, py = np.array(points, dtype=np.float64).reshape(len(points), 2).T.copy()
    gaps = np.empty(px.size)
    k, iy, ix, first = gap_candidates(unvisited, xs, ys, px, py)
    found = first >= 0
    if k.size:  # np.hypot of the candidates alone, the least per point
        gaps[found] = np.minimum.reduceat(np.hypot(xs[ix] - px[k], ys[iy] - py[k]), first[found])
    if not found.all():  # a point not finite or too far for a float: every cell
        iy, ix = np.nonzero(unvisited)
        for j in np.flatnonzero(~found).tolist():
            gaps[j] = np.hypot(xs[ix] - px[j], ys[iy] - py[j]).min()
    return gaps.tolist()


def _ids(done: set[int]) -> np.ndarray:
    """The area ids of ``done`` as int64 (an id beyond it names no area of a grid)."""
    try:
        return np.fromiter(done, dtype=np.int64, count=len(done))
    except OverflowError:
        return np.fromiter((a for a in done if -(2**63) <= a < 2**63), dtype=np.int64)


def logic(robot: Any) -> None:
    """SPACE's behaviour tree with CBBA allocating the area tasks."""
    run_tree(robot, lambda r: CbbaPlugin(r.robot_id))
