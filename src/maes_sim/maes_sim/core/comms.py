"""Broadcast communication between robots (MAES's ``BroadcastToAll``).

A message posted during tick ``t`` is delivered with the state of tick ``t + 1`` to every other
robot the sender can reach. Reachability is decided at delivery time from the positions at which
the message was sent (the start of the step), by one of two rules:

* MAES's rule: receiver within ``broadcast_range`` tiles, and, when
  ``broadcast_blocked_by_walls``, a clear line of sight;
* a user signal function ``f(total_distance, distance_through_walls) -> bool`` (both in tiles),
  or ``f(total_distance, distance_through_walls, rng)`` to draw from the simulation's generator.
  It is evaluated for every ordered (sender, receiver) pair, so it costs N**2 Python calls for a
  sync of N robots: fine for tens of robots, slow for a thousand.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from maes_common.contract import robot_namespace
from maes_common.jit import njit

from .kernels import line_of_sight, visible_pairs, wall_distance
from .neighbors import mirror_symmetric, pairs_within

#: Longest accepted broadcast or tag text, in UTF-8 bytes.
MAX_MESSAGE_BYTES = 1024
#: Broadcasts one robot may post per logic tick; later ones in the same tick are refused.
MAX_BROADCASTS_PER_TICK = 20

SignalFunction = Callable[..., bool]


#: The id of robot ``index`` in messages: its ROS namespace (``robot_name(3) == "robot3"``), from
#: the one home of the robot-facing names.
robot_name = robot_namespace


class SignalFunctionError(RuntimeError):
    """The user's signal function raised or returned something that is not a bool."""


@dataclass(frozen=True)
class Broadcast:
    """A received broadcast; fields as ``maes_interfaces/Broadcast``."""

    msg: str
    sender: str


def check_message(text: object) -> str | None:
    """Why ``text`` cannot be sent as a broadcast or tag, or None when it can.

    Examples
    --------
    >>> check_message("hello") is None
    True
    >>> check_message("")
    'empty message'
    """
    if not isinstance(text, str):
        return f"message must be a str, got {type(text).__name__}"
    if text == "":
        return "empty message"
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate: no UTF-8 (nor ROS string) holds it
        return f"message is not valid Unicode text (a lone surrogate at character {exc.start})"
    if size > MAX_MESSAGE_BYTES:
        return f"message of {size} bytes exceeds the limit of {MAX_MESSAGE_BYTES} bytes"
    return None


@dataclass(frozen=True)
class CommsRule:
    """Who can hear whom.

    Parameters
    ----------
    broadcast_range : float
        Range in tiles (MAES's rule).
    blocked_by_walls : bool
        Require line of sight (MAES's rule).
    signal_function : callable or None
        Replaces MAES's rule when given (see module docstring).
    """

    broadcast_range: float
    blocked_by_walls: bool
    signal_function: SignalFunction | None = None

    def links(
        self,
        walls: np.ndarray,
        positions: np.ndarray,
        rng: np.random.Generator,
        senders: np.ndarray | None = None,
        *,
        sums: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Directed links (sender, receiver) among robots at ``positions`` (N, 2) grid coords.

        ``senders`` (K,) restricts the senders considered (default: all); ``sums`` is
        ``kernels.wall_sums(walls)`` when the caller keeps one. Returns two int64
        arrays sorted by sender then receiver. Raises :class:`SignalFunctionError` when the
        signal function fails; nothing else changes then (the rng may have advanced).

        Examples
        --------
        >>> walls = np.zeros((5, 5), dtype=bool)
        >>> rule = CommsRule(2.0, False)
        >>> rule.links(walls, np.array([[1.0, 1.0], [2.0, 1.0], [4.5, 1.0]]),
        ...            np.random.default_rng(0))
        (array([0, 1]), array([1, 0]))
        """
        n = len(positions)
        if senders is None:
            senders = np.arange(n, dtype=np.int64)
        senders = np.asarray(senders, dtype=np.int64)
        if n < 2 or senders.size == 0:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty.copy()
        if self.signal_function is None and senders.size == n:
            if self.blocked_by_walls:
                return visible_pairs(walls, positions, self.broadcast_range, sums=sums)
            ia, ib, _ = pairs_within(positions, None, self.broadcast_range)
            return ia, ib
        if self.signal_function is None:
            ia, ib, _ = pairs_within(positions[senders], positions, self.broadcast_range)
            ia = senders[ia]
            keep = ia != ib
            ia, ib = ia[keep], ib[keep]
            if self.blocked_by_walls and ia.size:
                clear = line_of_sight(walls, positions[ia], positions[ib])
                ia, ib = ia[clear], ib[clear]
            order = np.lexsort((ib, ia))
            return ia[order], ib[order]
        return self._custom_links(walls, positions, rng, senders)

    def _custom_links(self, walls, positions, rng, senders):
        n = len(positions)
        ia = np.repeat(senders, n)
        ib = np.tile(np.arange(n, dtype=np.int64), senders.size)
        keep = ia != ib
        ia, ib = ia[keep], ib[keep]
        a, b = positions[ia], positions[ib]
        total = np.hypot(*(b - a).T)
        through = wall_distance(walls, a, b)
        fn = self.signal_function
        wants_rng = _takes_three_args(fn)
        ok = np.zeros(ia.size, dtype=bool)
        for k in range(ia.size):
            try:
                args = (float(total[k]), float(through[k]))
                result = fn(*args, rng) if wants_rng else fn(*args)
            except Exception as exc:  # the user's code: report whatever it raised
                raise SignalFunctionError(
                    f"signal function {getattr(fn, '__name__', fn)!r} raised "
                    f"{type(exc).__name__}: {exc} for total_distance={total[k]:.3f}, "
                    f"distance_through_walls={through[k]:.3f}"
                ) from exc
            if not isinstance(result, (bool, np.bool_)):
                raise SignalFunctionError(
                    f"signal function {getattr(fn, '__name__', fn)!r} must return a bool, "
                    f"got {result!r}"
                )
            ok[k] = bool(result)
        return ia[ok], ib[ok]


def clear_pairs(
    walls: np.ndarray, positions: np.ndarray, ia: np.ndarray, ib: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Keep the pairs of a *symmetric* pair list (both (i, j) and (j, i) present) that have a
    line of sight, testing each unordered pair once; sorted by (ia, ib).

    Examples
    --------
    >>> walls = np.zeros((3, 5), dtype=bool); walls[:, 2] = True
    >>> pos = np.array([[0.5, 1.5], [1.5, 1.5], [3.5, 1.5]])
    >>> a, b = clear_pairs(walls, pos, np.array([0, 0, 1, 1, 2, 2]), np.array([1, 2, 0, 2, 0, 1]))
    >>> list(zip(a.tolist(), b.tolist()))
    [(0, 1), (1, 0)]
    """
    upper = ia < ib
    if not upper.any():
        return ia[:0], ib[:0]
    ok_upper = line_of_sight(walls, positions[ia[upper]], positions[ib[upper]])
    keep = mirror_symmetric(ia, ib, ok_upper, len(positions))
    return ia[keep], ib[keep]


def _takes_three_args(fn: Callable) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3 or any(p.kind == p.VAR_POSITIONAL for p in params)


def _groups_py(n, ia, ib):
    parent = np.arange(n)
    for k in range(ia.shape[0]):
        a, b = ia[k], ib[k]
        while parent[a] != a:  # find with path halving
            parent[a] = parent[parent[a]]
            a = parent[a]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a != b:  # union: the smaller root wins, so labels are the smallest index
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
    for i in range(n):  # parents always point to smaller indices: one pass resolves roots
        parent[i] = parent[parent[i]]
    return parent


_groups = njit(cache=True)(_groups_py)


def communication_groups(n: int, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Label (n,) of the connected groups formed by links (ia, ib), taken as undirected.

    Labels are the smallest robot index in each group, so they are deterministic.

    Examples
    --------
    >>> communication_groups(5, np.array([0, 3]), np.array([1, 4])).tolist()
    [0, 0, 2, 3, 3]
    """
    return _groups(int(n), np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64))


class Mailbox:
    """Outgoing broadcasts of the current tick and those delivered at the last step.

    Delivery is recorded as links, and a robot's inbox is built when it is read
    (:meth:`inbox_of`): a thousand robots in range of each other exchange a million deliveries
    per tick, and only the inboxes somebody reads need to exist as lists.
    """

    def __init__(self, n_robots: int) -> None:
        self.n = n_robots
        self.outbox: list[tuple[int, str]] = []
        self.sent_this_tick = np.zeros(n_robots, dtype=np.int64)
        self.total_sent = 0
        self.total_delivered = 0
        self._by_sender: dict[int, list[Broadcast]] = {}
        self._senders_of = (np.zeros(n_robots + 1, dtype=np.int64), np.empty(0, dtype=np.int64))

    def post(self, robot: int, text: str) -> str | None:
        """Queue ``text`` from ``robot``; returns why it was refused, or None when accepted."""
        problem = check_message(text)
        if problem is not None:
            return problem
        if self.sent_this_tick[robot] >= MAX_BROADCASTS_PER_TICK:
            return f"robot {robot} already sent {MAX_BROADCASTS_PER_TICK} broadcasts this tick"
        self.sent_this_tick[robot] += 1
        self.outbox.append((robot, text))
        return None

    def pending_senders(self) -> np.ndarray:
        """Sorted unique indices of robots with queued messages."""
        if not self.outbox:
            return np.empty(0, dtype=np.int64)
        return np.unique(np.array([s for s, _ in self.outbox], dtype=np.int64))

    def deliver(self, ia: np.ndarray, ib: np.ndarray) -> None:
        """Deliver the queued messages along links (ia -> ib); they replace the last delivery."""
        if not self.outbox:  # the common tick: nothing sent, so nothing is delivered
            if self._by_sender:
                self._by_sender = {}
                self._senders_of = (
                    np.zeros(self.n + 1, dtype=np.int64),
                    np.empty(0, dtype=np.int64),
                )
            self.sent_this_tick[:] = 0
            return
        by_sender: dict[int, list[Broadcast]] = {}
        for sender, text in self.outbox:
            by_sender.setdefault(sender, []).append(Broadcast(msg=text, sender=robot_name(sender)))
        counts = np.zeros(self.n, dtype=np.int64)
        for sender, msgs in by_sender.items():
            counts[sender] = len(msgs)
        ia = np.asarray(ia, dtype=np.int64)
        ib = np.asarray(ib, dtype=np.int64)
        self.total_delivered += int(counts[ia].sum()) if ia.size else 0
        # CSR of senders per receiver, senders ascending within each receiver
        order = np.lexsort((ia, ib))
        starts = np.searchsorted(ib[order], np.arange(self.n + 1))
        self._senders_of = (starts, ia[order])
        self._by_sender = by_sender
        self.total_sent += len(self.outbox)
        self.outbox = []
        self.sent_this_tick[:] = 0

    def inbox_of(self, robot: int) -> list[Broadcast]:
        """Messages ``robot`` received at the last step, by sender index then sending order."""
        starts, senders = self._senders_of
        out: list[Broadcast] = []
        for s in senders[starts[robot] : starts[robot + 1]].tolist():
            out.extend(self._by_sender.get(s, ()))
        return out
