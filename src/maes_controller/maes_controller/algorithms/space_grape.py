"""SPACE with GRAPE: area tasks allocated as an anonymous hedonic game.

The behaviour tree of :mod:`.space_bt` with a GRAPE decision plugin (:class:`GrapePlugin`), in
SPACE's MT-SR variant: utility ``R_j / |S_j| - c_ij * |S_j| ** FS`` with ``R_j`` the task's
workload (frontier cells) and ``c_ij`` the path length in metres. Each robot keeps a partition
(robot -> task), an evolution number and a random stamp, broadcast as ``grape ...``
(:func:`encode`); the distributed mutex adopts the received partition with the highest
evolution number (then stamp).
A robot that is not satisfied (a task would give it more than :data:`SWITCH_MARGIN` more)
moves to its best task and increments the evolution number. As in SPACE, the initial
partition puts each robot on its nearest task.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .allocation import grape_choice, grape_mutex, grape_satisfied
from .space_bt import Task, run_tree

#: Social inhibition exponent (SPACE used 100 with its units; with path metres, 1 already
#: makes a second robot on a task cost more than most tasks are worth).
FS = 1.0
#: A robot moves to another task only when it gains more than this (utility, metres of path
#: for a lone robot; MAES-ROS): path costs jump as a crowd jostles, and without it a robot
#: in a packed start changed its task every second and stood where it was.
SWITCH_MARGIN = 3.0


#: The digits of a task id in a broadcast (base 64), :data:`_WIDTH` of them per robot.
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/"
_VALUE = {c: v for v, c in enumerate(_DIGITS)}
_WIDTH = 4
#: A robot without a task, and a robot the partition does not hold.
_NO_TASK, _ABSENT = "-" * _WIDTH, "." * _WIDTH


def encode(evolution: int, stamp: float, partition: dict) -> str:
    """The broadcast of a GRAPE partition: ``grape <evolution> <stamp> <tasks>``.

    ``<tasks>`` holds 4 characters per robot, robot 0 first: its task id in base 64 (the
    digits ``0-9A-Za-z+/``, most significant first), ``----`` for a robot without a task,
    ``....`` for a robot the partition does not hold. Task ids are the 7-digit area ids of
    :func:`~._common.area_labels` (below 4,000,000; 4 digits hold up to 16,777,215), so the
    partition of up to about 245 robots fits the radio's 1024 bytes. JSON's
    ``{"17":2003000,...}`` took 13-14 bytes a robot and outgrew the limit from 77 robots.

    Examples
    --------
    >>> encode(3, 0.25, {0: 7, 1: None, 3: 2003000})
    'grape 3 0.25 0007----....7f0u'
    >>> decode(encode(3, 0.25, {0: 7, 1: None, 3: 2003000}))
    (3, 0.25, {0: 7, 1: None, 3: 2003000})
    """
    cells = []
    for a in range(max(partition) + 1 if partition else 0):
        if a not in partition:
            cells.append(_ABSENT)
        elif partition[a] is None:
            cells.append(_NO_TASK)
        else:
            t = int(partition[a])
            if not 0 <= t < 64**_WIDTH:
                raise ValueError(f"task id {t} cannot be broadcast: ids run 0..{64**_WIDTH - 1}")
            cells.append("".join(_DIGITS[(t >> (6 * k)) & 63] for k in range(_WIDTH - 1, -1, -1)))
    return f"grape {int(evolution)} {float(stamp)!r} {''.join(cells)}"


def decode(text: str) -> tuple[int, float, dict] | None:
    """``(evolution, stamp, partition)`` of a ``grape`` broadcast, None for other messages."""
    if not text.startswith("grape "):
        return None
    try:
        evolution, stamp, tasks = text[6:].split(" ")
        if len(tasks) % _WIDTH:
            return None
        part = {}
        for a in range(len(tasks) // _WIDTH):
            cell = tasks[_WIDTH * a : _WIDTH * (a + 1)]
            if cell == _NO_TASK:
                part[a] = None
            elif cell != _ABSENT:
                t = 0
                for c in cell:
                    t = t * 64 + _VALUE[c]
                part[a] = t
        return int(evolution), float(stamp), part
    except (ValueError, KeyError):
        return None


class GrapePlugin:
    """GRAPE as a SPACE decision plugin (receive, decide, task_done, message)."""

    def __init__(self, me: int, rng: np.random.Generator) -> None:
        self.me = me
        self.rng = rng  # draws the partition's random stamps
        self.evolution, self.stamp = 0, float(self.rng.random())
        self.partition: dict[int, int | None] = {}
        self.inbox: list[tuple[int, float, dict]] = []

    def receive(self, sender: int, text: str, now: int) -> None:
        msg = decode(text)
        if msg is not None and sender != self.me:
            self.inbox.append(msg)

    def decide(self, tasks: dict[int, Task], now: int) -> int | None:
        local = (self.evolution, self.stamp, self.partition)
        self.evolution, self.stamp, part = grape_mutex(local, self.inbox)
        self.inbox.clear()
        self.partition = dict(part)
        reward = {t: float(task.workload) for t, task in tasks.items()}
        cost = {t: task.cost_m for t, task in tasks.items()}
        if self.partition.get(self.me) not in cost:
            self.partition[self.me] = None  # done, gone or never chosen
        if self.me not in part and tasks:  # SPACE's initial partition: the nearest task
            self.partition[self.me] = min(cost, key=lambda t: (cost[t], t))
            self._evolve()
        elif not grape_satisfied(self.me, self.partition, reward, cost, FS, SWITCH_MARGIN):
            self.partition[self.me] = grape_choice(self.me, self.partition, reward, cost, FS)[0]
            self._evolve()
        return self.partition[self.me]

    def _evolve(self) -> None:
        self.evolution += 1
        self.stamp = float(self.rng.random())

    def task_done(self, task: int) -> None:
        if self.partition.get(self.me) == task:
            self.partition[self.me] = None

    def message(self) -> str | None:
        return encode(self.evolution, self.stamp, self.partition)


def logic(robot: Any) -> None:
    """SPACE's behaviour tree with GRAPE allocating the area tasks."""
    # Stamps from a generator seeded by the robot index alone, so a robot draws the same stamps
    # on every stack (direct mode's robot.rng does not exist on ROS).
    run_tree(robot, lambda r: GrapePlugin(r.robot_id, np.random.default_rng([r.robot_id] * 2)))
