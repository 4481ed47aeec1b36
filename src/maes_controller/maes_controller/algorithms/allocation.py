"""Task allocation for SPACE's controllers: CBBA and GRAPE as pure functions, no ROS, no I/O.

Tasks are integer ids (the area ids of :func:`~._common.area_labels`); agents are robot indices.

CBBA (Choi, Brunet and How 2009; SPACE's plugin): each agent greedily builds a *bundle* of up to
``max_bundle`` tasks by marginal score of a time-discounted reward, then reaches consensus on
winning bids ``y``, winners ``z`` and message timestamps ``s`` with its neighbours (the paper's
Table 1, :func:`cbba_consensus`) and releases every task after the first one it was outbid on.

GRAPE (Jang et al. 2018; SPACE's MT-SR variant): each agent joins the task that maximises its
utility ``R_j / |S_j| - c_ij * |S_j| ** f_s`` given everyone else's assignment
(:func:`grape_choice`); a *satisfied* agent has no better task (:func:`grape_satisfied`). The
partition with the highest evolution number (ties: the highest random stamp) wins when agents
exchange partitions (:func:`grape_mutex`, the distributed mutex).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# CBBA


@dataclass
class CbbaState:
    """One agent's CBBA knowledge.

    Attributes
    ----------
    y : dict task -> float
        Highest bid known for each task (absent: 0).
    z : dict task -> int
        Winner known for each task (absent: none).
    s : dict agent -> int
        Time of the latest information from each agent (directly or relayed).
    bundle : list of task
        This agent's tasks, in the order they were added.
    path : list of task
        The same tasks in execution order.
    covers : (int or None, int or None) or None
        In a received broadcast that carries only part of its sender's tasks: the inclusive
        range of task ids it speaks for (None ends: unbounded); :func:`cbba_consensus` leaves
        every other task as it is. None: the whole state (a task absent has no winner).
    done : set of task
        Tasks known to be finished by some agent (MAES-ROS's extension for tasks that end
        when any agent completes them, as SPACE's areas do): spread by consensus as a union.
    """

    y: dict = field(default_factory=dict)
    z: dict = field(default_factory=dict)
    s: dict = field(default_factory=dict)
    bundle: list = field(default_factory=list)
    path: list = field(default_factory=list)
    covers: tuple | None = None
    done: set = field(default_factory=set)


def path_score(path: list, start_cost: Mapping, between, reward: Mapping, lam: float) -> float:
    """Time-discounted reward ``sum_j lam ** tau_j * R_j`` of doing ``path`` in order.

    ``tau_j`` is the travel cost to reach task j along the path: ``start_cost[path[0]]``, then
    ``between(a, b)`` for each next task.

    Examples
    --------
    >>> path_score([1, 2], {1: 1.0, 2: 5.0}, lambda a, b: 2.0, {1: 10.0, 2: 10.0}, 0.5)
    6.25
    """
    total, tau = 0.0, 0.0
    for k, task in enumerate(path):
        tau += start_cost[task] if k == 0 else between(path[k - 1], task)
        total += lam**tau * reward[task]
    return total


def cbba_build_bundle(
    state: CbbaState,
    me: int,
    start_cost: Mapping,
    between,
    reward: Mapping,
    *,
    lam: float,
    max_bundle: int,
) -> None:
    """CBBA phase 1: add the task of best marginal score while it beats the known winning bid.

    Only tasks in ``start_cost`` (the ones this agent knows and can reach) are bid on. A bid
    equal to the known one wins only against a higher agent index.
    """
    while len(state.bundle) < max_bundle:
        base = path_score(state.path, start_cost, between, reward, lam)
        best = None  # (marginal score, task, insertion index)
        for task in sorted(start_cost):
            if task in state.bundle:
                continue
            gain, pos = -math.inf, 0
            for k in range(len(state.path) + 1):
                trial = state.path[:k] + [task] + state.path[k:]
                g = path_score(trial, start_cost, between, reward, lam) - base
                if g > gain:
                    gain, pos = g, k
            known, winner = state.y.get(task, 0.0), state.z.get(task)
            beats = gain > known or (gain == known and winner is not None and me < winner)
            if gain > 0 and beats and (best is None or gain > best[0]):
                best = (gain, task, pos)
        if best is None:
            return
        gain, task, pos = best
        state.bundle.append(task)
        state.path.insert(pos, task)
        state.y[task], state.z[task] = gain, me


def cbba_drop(state: CbbaState, task: int) -> None:
    """Forget ``task`` (done or gone): out of bundle and path, no known winner."""
    if task in state.bundle:
        cbba_release_from(state, state.bundle.index(task), keep_first=False)
    state.y.pop(task, None)
    state.z.pop(task, None)


def cbba_release_from(state: CbbaState, n: int, *, keep_first: bool) -> None:
    """Remove ``bundle[n:]``; tasks after ``n`` (and ``n`` unless ``keep_first``) lose their bid."""
    released = state.bundle[n:]
    del state.bundle[n:]
    for k, task in enumerate(released):
        state.path.remove(task)
        if k > 0 or not keep_first:
            state.y.pop(task, None)
            state.z.pop(task, None)


def cbba_consensus(state: CbbaState, me: int, sender: int, msg: CbbaState, now: int) -> None:
    """CBBA phase 2: merge one neighbour's ``y, z, s`` (Choi et al. 2009, Table 1).

    ``msg`` is the sender's state as it broadcast it (only ``y``, ``z``, ``s``, ``covers`` and
    ``done`` are read; ``done`` joins this agent's). After the merge, the first task of this
    agent's bundle it no longer wins and everything after it are released.

    Examples
    --------
    Agent 0 bid 5 on task 7; agent 1 says it won task 7 with 9: agent 0 lets it go.

    >>> mine = CbbaState(y={7: 5.0}, z={7: 0}, bundle=[7], path=[7])
    >>> cbba_consensus(mine, 0, 1, CbbaState(y={7: 9.0}, z={7: 1}, s={1: 3}), now=4)
    >>> mine.z[7], mine.y[7], mine.bundle
    (1, 9.0, [])

    A broadcast that speaks for tasks 0..5 only says nothing of task 7:

    >>> mine = CbbaState(y={7: 5.0}, z={7: 0}, bundle=[7], path=[7])
    >>> cbba_consensus(mine, 0, 1, CbbaState(s={1: 3}, covers=(0, 5)), now=4)
    >>> mine.z[7], mine.bundle
    (0, [7])
    """
    i, k = me, sender
    s_i, s_k = state.s, msg.s

    def newer(m: int) -> bool:  # the sender's news of agent m is fresher than ours
        return s_k.get(m, -1) > s_i.get(m, -1)

    def older(m: int) -> bool:  # ours is fresher than the sender's
        return s_i.get(m, -1) > s_k.get(m, -1)

    tasks = set(state.z) | set(msg.z) | set(state.y) | set(msg.y)
    if msg.covers is not None:  # part of the sender's tasks: the others are not news
        lo, hi = msg.covers
        tasks = {t for t in tasks if (lo is None or t >= lo) and (hi is None or t <= hi)}
    for task in tasks:
        zk, yk = msg.z.get(task), msg.y.get(task, 0.0)
        zi, yi = state.z.get(task), state.y.get(task, 0.0)
        if zk == zi and yk == yi:
            continue  # the same news: every rule of Table 1 leaves the task as it is
        action = _table1(i, k, zi, yi, zk, yk, newer, older)
        if action == "update":
            state.y[task], state.z[task] = yk, zk
            if zk is None:
                state.y.pop(task, None)
                state.z.pop(task, None)
        elif action == "reset":
            state.y.pop(task, None)
            state.z.pop(task, None)
    state.done |= msg.done  # a finished task stays finished, whoever says so
    state.s[k] = now
    for m, t in s_k.items():
        if m != i and t > s_i.get(m, -1):
            s_i[m] = t
    for n, task in enumerate(state.bundle):
        if state.z.get(task) != i:
            cbba_release_from(state, n, keep_first=True)
            break


def _outbids(yk: float, zk: int, yi: float, zi: int) -> bool:
    """The sender's bid beats the receiver's: higher, or equal with a lower agent index."""
    return yk > yi or (yk == yi and zk is not None and (zi is None or zk < zi))


def _table1(i: int, k: int, zi, yi: float, zk, yk: float, newer, older) -> str:  # noqa: PLR0911, PLR0912
    """Table 1 of Choi et al. 2009: 'update', 'reset' or 'leave'."""
    if zk == k:
        if zi == i:
            return "update" if _outbids(yk, zk, yi, zi) else "leave"
        if zi == k or zi is None:
            return "update"
        return "update" if newer(zi) or _outbids(yk, zk, yi, zi) else "leave"
    if zk == i:
        if zi == i or zi is None:
            return "leave"
        if zi == k:
            return "reset"
        return "reset" if newer(zi) else "leave"
    if zk is not None:  # the sender says a third agent m won
        m = zk
        if zi == i:
            return "update" if newer(m) and _outbids(yk, zk, yi, zi) else "leave"
        if zi == k:
            return "update" if newer(m) else "reset"
        if zi == m:
            return "update" if newer(m) else "leave"
        if zi is None:
            return "update" if newer(m) else "leave"
        n = zi  # a fourth agent
        if newer(m) and newer(n):
            return "update"
        if newer(m) and _outbids(yk, zk, yi, zi):
            return "update"
        if newer(n) and older(m):
            return "reset"
        return "leave"
    # the sender knows no winner
    if zi == i or zi is None:
        return "leave"
    if zi == k:
        return "update"
    return "update" if newer(zi) else "leave"


# ---------------------------------------------------------------------------------------------
# GRAPE


def grape_utility(reward: float, cost: float, size: int, fs: float) -> float:
    """SPACE's MT-SR utility ``R / |S| - c * |S| ** fs`` of a task for a coalition of ``size``.

    Examples
    --------
    >>> grape_utility(10.0, 2.0, 1, 1.0), grape_utility(10.0, 2.0, 2, 1.0)
    (8.0, 1.0)
    """
    return reward / size - cost * size**fs


def grape_choice(
    me: int, partition: Mapping, reward: Mapping, cost: Mapping, fs: float
) -> tuple[int | None, float]:
    """The task ``me`` prefers given the others' assignment, and its utility.

    ``partition`` maps agent -> task (None: no task). Only tasks in ``cost`` (known and
    reachable for ``me``) are candidates; ties go to the current task, then the lowest id.
    Returns ``(None, -inf)`` when there is no candidate.

    Examples
    --------
    Agent 1 already does task 5, so agent 0 prefers the farther task 6 it would do alone:

    >>> grape_choice(0, {1: 5}, {5: 10.0, 6: 10.0}, {5: 1.0, 6: 3.0}, 1.0)
    (6, 7.0)
    """
    current = partition.get(me)
    best: tuple[int | None, float] = (None, -math.inf)
    for task in sorted(cost):
        others = sum(1 for a, t in partition.items() if t == task and a != me)
        u = grape_utility(reward[task], cost[task], others + 1, fs)
        if u > best[1] or (u == best[1] and task == current):
            best = (task, u)
    return best


def grape_satisfied(
    me: int, partition: Mapping, reward: Mapping, cost: Mapping, fs: float, margin: float = 0.0
) -> bool:
    """GRAPE's satisfaction rule: no task gives ``me`` strictly more than its current one,
    or more than ``margin`` more (a switching cost: an epsilon-stable partition).

    Examples
    --------
    >>> r, c = {5: 10.0, 6: 10.0}, {5: 1.0, 6: 3.0}
    >>> grape_satisfied(0, {0: 6, 1: 5}, r, c, 1.0), grape_satisfied(0, {0: 5, 1: 5}, r, c, 1.0)
    (True, False)
    >>> grape_satisfied(0, {0: 5, 1: 5}, r, c, 1.0, margin=4.0)  # 6 gives 7 against 3
    True
    """
    current = partition.get(me)
    if current not in cost:
        return not cost
    others = sum(1 for a, t in partition.items() if t == current and a != me)
    mine = grape_utility(reward[current], cost[current], others + 1, fs)
    return grape_choice(me, partition, reward, cost, fs)[1] <= mine + margin


def grape_mutex(local: tuple, received: list[tuple]) -> tuple:
    """The distributed mutex: of ``(evolution, stamp, partition)`` triples, the winner.

    Highest evolution number wins, then the highest random stamp; ``local`` wins full ties.

    Examples
    --------
    >>> grape_mutex((2, 0.5, {0: 1}), [(3, 0.1, {0: 2}), (3, 0.9, {0: 3})])[2]
    {0: 3}
    """
    best = local
    for cand in received:
        if (cand[0], cand[1]) > (best[0], best[1]):
            best = cand
    return best
