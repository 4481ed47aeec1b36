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

The linked robots are then the *attempts* of the sender's radio model
(:mod:`maes_sim.core.radio`: loss, latency, a send budget); MAES 2.0's ``range`` model, the
default, keeps them all.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from maes_common.contract import MAX_MESSAGE_BYTES, robot_namespace
from maes_common.jit import njit

from .kernels import line_of_sight, visible_pairs, wall_distance
from .neighbors import mirror_symmetric, pairs_within
from .radio import MAX_BROADCASTS_PER_TICK, Radio

SignalFunction = Callable[..., bool]
#: No robots (int64, read-only): the senders of a tick without messages, and its links.
NO_ROBOTS = np.empty(0, dtype=np.int64)
NO_ROBOTS.flags.writeable = False


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
    """Outgoing broadcasts of the current tick, the messages in flight, and those delivered at
    the last step, through the robots' radio (:class:`~maes_sim.core.radio.Radio`).

    Delivery is recorded as (receiver, message) arrays, and a robot's inbox is built when it is
    read (:meth:`inbox_of`): a thousand robots in range of each other exchange a million
    deliveries per tick, and only the inboxes somebody reads need to exist as lists.

    Parameters
    ----------
    n_robots : int
    radio : Radio, optional
        The robots' radio models, latencies and budgets (default: MAES 2.0's lossless radio).
    """

    def __init__(self, n_robots: int, radio: Radio | None = None) -> None:
        self.n = n_robots
        self.radio = radio if radio is not None else Radio.lossless(n_robots)
        self.outbox: list[tuple[int, str]] = []
        self.sent_this_tick = np.zeros(n_robots, dtype=np.int64)
        self.total_sent = 0
        self.total_delivered = 0
        self.total_dropped = 0
        self.clock = 0  # steps delivered so far (the simulation's tick)
        # arrival tick -> batches (messages, their senders, receiver and message index of each
        # copy, tick sent at)
        self._in_flight: dict[int, list[tuple]] = {}
        self._messages: list[Broadcast] = []
        self._by_sender: dict[int, list[Broadcast]] = {}  # the lossless radio's inbox
        self._inbox = (np.zeros(n_robots + 1, dtype=np.int64), np.empty(0, dtype=np.int64))

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
        """Sorted unique indices of robots with queued messages (read-only when none)."""
        if not self.outbox:
            return NO_ROBOTS
        return np.unique(np.array([s for s, _ in self.outbox], dtype=np.int64))

    def deliver(
        self,
        ia: np.ndarray,
        ib: np.ndarray,
        positions: np.ndarray | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        """End a tick: send the queued messages along links (ia -> ib, sorted by sender) through
        the radio, then make the copies due now the delivered ones (they replace the last).

        ``positions`` (N, 2) at sending time and ``rng`` serve the models that need them.
        """
        if self.radio.simple:  # MAES 2.0's radio: everything in range arrives at the next tick
            self._deliver_at_once(ia, ib)
            return
        if self.outbox:
            self._send(
                np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64), positions, rng
            )
        self.sent_this_tick[:] = 0
        self.clock += 1
        arrivals = self._in_flight.pop(self.clock, None)
        if arrivals is None:  # the common tick: nothing arrives
            if self._messages:
                self._messages = []
                self._inbox = (np.zeros(self.n + 1, dtype=np.int64), np.empty(0, dtype=np.int64))
            return
        messages: list[Broadcast] = []
        receivers, indices, latencies, senders = [], [], [], []
        for batch, batch_senders, recv, index, sent_at in arrivals:
            receivers.append(recv)
            indices.append(index + len(messages))
            latencies.append(np.full(recv.size, self.clock - sent_at, dtype=np.int64))
            senders.append(batch_senders[index])
            messages.extend(batch)
        recv = np.concatenate(receivers)
        index = np.concatenate(indices)
        latency = np.concatenate(latencies)
        radio = self.radio
        sender = np.concatenate(senders)
        radio.delivered += np.bincount(sender, minlength=self.n)
        radio.received += np.bincount(recv, minlength=self.n)
        radio.latency_sum += np.bincount(sender, weights=latency, minlength=self.n).astype(np.int64)
        self.total_delivered += int(recv.size)
        # CSR of messages per receiver, in arrival order (sending tick, sender, sending order);
        # a stable sort of small ints is a radix sort in numpy
        order = np.argsort(recv.astype(np.int16) if self.n < 2**15 else recv, kind="stable")
        starts = np.searchsorted(recv[order], np.arange(self.n + 1))
        self._inbox = (starts, index[order])
        self._messages = messages

    def _deliver_at_once(self, ia: np.ndarray, ib: np.ndarray) -> None:
        """:meth:`deliver` for the lossless radio without latency or budget (the default):
        every message of a sender reaches each of its links, kept as a CSR of senders per
        receiver (no copy per message and receiver)."""
        self.clock += 1
        if not self.outbox:  # the common tick: nothing sent, so nothing is delivered
            # (and every sent_this_tick is still 0: only an accepted post raises one)
            if self._by_sender:
                self._by_sender = {}
                self._inbox = (np.zeros(self.n + 1, dtype=np.int64), np.empty(0, dtype=np.int64))
            return
        self.sent_this_tick[:] = 0
        ia, ib = np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64)
        by_sender: dict[int, list[Broadcast]] = {}
        for sender, text in self.outbox:
            by_sender.setdefault(sender, []).append(Broadcast(msg=text, sender=robot_name(sender)))
        counts = np.zeros(self.n, dtype=np.int64)
        for sender, msgs in by_sender.items():
            counts[sender] = len(msgs)
        copies = counts[ia]
        radio = self.radio
        delivered = np.bincount(ia, weights=copies, minlength=self.n).astype(np.int64)
        radio.sent += counts
        radio.delivered += delivered
        radio.latency_sum += delivered  # one tick each
        radio.received += np.bincount(ib, weights=copies, minlength=self.n).astype(np.int64)
        self.total_delivered += int(copies.sum())
        self.total_sent += len(self.outbox)
        # CSR of senders per receiver, senders ascending within each receiver
        order = np.lexsort((ia, ib))
        starts = np.searchsorted(ib[order], np.arange(self.n + 1))
        self._inbox = (starts, ia[order])
        self._by_sender = by_sender
        self.outbox = []

    def _send(self, ia, ib, positions, rng) -> None:
        radio = self.radio
        # messages by sender, each sender's in sending order (the order of posting across
        # senders may differ between direct mode and ROS; this one does not)
        outbox = self.outbox
        self.outbox = []
        sender = np.fromiter((s for s, _ in outbox), dtype=np.int64, count=len(outbox))
        if sender.size > 1 and (np.diff(sender) < 0).any():
            order = np.argsort(sender, kind="stable")
            sender = sender[order]
            outbox = [outbox[k] for k in order.tolist()]
        first = np.searchsorted(sender, sender, side="left")
        rank = np.arange(sender.size) - first
        over = (radio.budget[sender] >= 0) & (rank >= radio.budget[sender])
        # one attempt per (message, linked receiver), receivers ascending
        if ia.size > 1 and (np.diff(ia) < 0).any() | ((np.diff(ia) == 0) & (np.diff(ib) < 0)).any():
            order = np.lexsort((ib, ia))
            ia, ib = ia[order], ib[order]
        lo = np.searchsorted(ia, sender, side="left")
        count = np.searchsorted(ia, sender, side="right") - lo
        message = np.repeat(np.arange(sender.size), count)
        link = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(int(count.sum()))
        a, b = sender[message], ib[link]
        keep = ~over[message]
        keep[keep] = radio.keep(a[keep], b[keep], positions, rng)
        radio.sent += np.bincount(sender, minlength=self.n)
        radio.over_budget += np.bincount(sender[over], minlength=self.n)
        radio.dropped += np.bincount(a[~keep], minlength=self.n)
        self.total_sent += sender.size
        self.total_dropped += int((~keep).sum())
        batch = [Broadcast(msg=text, sender=robot_name(s)) for s, text in outbox]
        if radio.uniform_latency is not None:  # one latency for all: one batch
            delays = [(radio.uniform_latency, keep)] if keep.any() else []
        else:
            delay = radio.latency[a]
            kept = np.flatnonzero(np.bincount(delay[keep])).tolist()  # small ints, ascending
            delays = [(k, keep & (delay == k)) for k in kept]
        for k, chosen in delays:
            self._in_flight.setdefault(self.clock + 1 + k, []).append(
                (batch, sender, b[chosen], message[chosen], self.clock)
            )

    def inbox_of(self, robot: int) -> list[Broadcast]:
        """Messages ``robot`` received at the last step, by sending tick, sender index, then
        sending order."""
        starts, index = self._inbox
        if self.radio.simple:  # senders per receiver (see _deliver_at_once)
            out: list[Broadcast] = []
            for s in index[starts[robot] : starts[robot + 1]].tolist():
                out.extend(self._by_sender.get(s, ()))
            return out
        return [self._messages[k] for k in index[starts[robot] : starts[robot + 1]].tolist()]

    def in_flight(self) -> int:
        """Copies sent but not yet delivered (latency)."""
        return sum(b[2].size for batches in self._in_flight.values() for b in batches)
