"""Stalls: robots that stay in one place while driven, with something left to explore.

A robot *stalls* when it has stayed within :data:`STALL_RADIUS_M` of one place for
:data:`STALL_SECONDS` while it was driven (a velocity or movement command arrived for it, as the
navigator sends one every tick while it has a goal, a zero one too while it waits for another
robot), at least once asked to move, and while reachable area was still unexplored. A robot its
logic told to stop, with no command for :data:`STOP_SECONDS` in a row, or one that is done
because everything is explored, does not stall: the clock restarts where the robot last left
such a circle or last stood that long without a command. Shorter pauses (a tick between two
goals, a few seconds' wait before trying again) do not restart it: a robot that waits and
tries again in the same place for a minute stalls.

Each robot's stall is counted once when it begins (``stalls``, a metric of the statistics and
``summary.json``) and lasts until the robot moves or stands :data:`STOP_SECONDS` without a
command (``robots_stalled``: how many are stalled now).
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit

from . import commands as C

#: A robot that stays within this many metres of one place ...
STALL_RADIUS_M = 1.0
#: ... for this many simulated seconds, driven and with area left to explore, stalls.
STALL_SECONDS = 60.0
#: A robot without a command for this many simulated seconds in a row was stopped by its logic:
#: its clock restarts. Nav2's progress checker gives a robot as long to move before it calls it
#: stuck (``movement_time_allowance``); the pauses of the shipped algorithms' waits are shorter.
STOP_SECONDS = 10.0


def asks_motion(commands: C.Commands) -> np.ndarray:
    """Bool (N,): the robots whose current command asks them to move or turn (compiled: the
    same answer as :func:`asks_motion_reference`).

    Examples
    --------
    >>> cmds = C.Commands.idle(3)
    >>> C.set_velocity(cmds, np.array([1, 2]), np.array([0.0, 0.5]), np.array([0.0, 0.0]), 0.0)
    >>> asks_motion(cmds).tolist()
    [False, False, True]
    """
    lateral = commands.lateral
    return _asks_motion_kernel(
        commands.kind,
        commands.linear,
        commands.angular,
        commands.target,
        commands.linear if lateral is None else lateral,
        lateral is not None,
    )


@njit(**JIT_OPTIONS)
def _asks_motion_kernel(kind, linear, angular, target, lateral, has_lateral):
    out = np.empty(kind.shape[0], dtype=np.bool_)
    for i in range(kind.shape[0]):
        k = kind[i]
        if k == C.VELOCITY:
            out[i] = linear[i] != 0.0 or angular[i] != 0.0 or (has_lateral and lateral[i] != 0.0)
        elif k == C.MOVE or k == C.ROTATE:
            out[i] = target[i] != 0.0
        else:
            out[i] = k == C.MOVE_CONT or k == C.ROTATE_CONT
    return out


def asks_motion_reference(commands: C.Commands) -> np.ndarray:
    """:func:`asks_motion` on numpy arrays: the definition the compiled one reproduces."""
    kind = commands.kind
    velocity = (kind == C.VELOCITY) & (
        (commands.linear != 0.0)
        | (commands.angular != 0.0)
        | (commands.lateral != 0.0 if commands.lateral is not None else False)
    )
    stepwise = ((kind == C.MOVE) | (kind == C.ROTATE)) & (commands.target != 0.0)
    continuous = (kind == C.MOVE_CONT) | (kind == C.ROTATE_CONT)
    return velocity | stepwise | continuous


class StallWatch:
    """Every robot's stall clock (see the module docstring).

    Parameters
    ----------
    positions : float (N, 2)
        The robots' positions (tiles) at the start.
    radius : float
        :data:`STALL_RADIUS_M` in tiles.
    ticks : int
        :data:`STALL_SECONDS` in logic ticks.
    pause : int
        :data:`STOP_SECONDS` in logic ticks: so many ticks in a row without a command restart
        the clock (the logic stopped the robot); fewer (a tick between two goals) do not.

    Examples
    --------
    A robot driven in place for 3 ticks stalls (with ``ticks=3``); one never driven does not:

    >>> w = StallWatch(np.zeros((2, 2)), radius=1.0, ticks=3)
    >>> for t in range(1, 5):
    ...     w.driven(0)
    ...     _ = w.update(t, np.zeros((2, 2)), np.array([True, False]), exploring=True)
    >>> w.count, w.per_robot.tolist(), w.stalled.tolist()
    (1, [1, 0], [True, False])
    """

    def __init__(self, positions: np.ndarray, radius: float, ticks: int, pause: int = 1) -> None:
        n = positions.shape[0]
        self.radius = float(radius)
        self.ticks = int(ticks)
        self.pause = max(1, int(pause))
        #: Ticks in a row without a command, up to now.
        self.idle = np.zeros(n, dtype=np.int64)
        self.anchor = np.array(positions, dtype=np.float64, copy=True)
        self.since = np.zeros(n, dtype=np.int64)
        #: A command asked the robot to move since its clock restarted.
        self.asked = np.zeros(n, dtype=bool)
        #: A command (not a stop) arrived since the last tick.
        self.commanded = np.zeros(n, dtype=bool)
        #: Stalled now.
        self.stalled = np.zeros(n, dtype=bool)
        #: Stalls begun, per robot, and in all.
        self.per_robot = np.zeros(n, dtype=np.int64)
        self.count = 0

    def driven(self, robots) -> None:
        """Note that a command (not a stop) arrived for ``robots`` (an index or indices)."""
        self.commanded[robots] = True

    def update(self, tick: int, positions: np.ndarray, asked: np.ndarray, exploring: bool) -> int:
        """Advance the clocks to ``tick``: positions (N, 2) tiles after the tick's motion,
        ``asked`` (N,) the robots whose command of the tick asked for motion, ``exploring``
        whether reachable area is still unexplored. Returns the stalls begun now (compiled:
        the same clocks as :meth:`update_reference`)."""
        started = _update_kernel(
            int(tick),
            np.asarray(positions, dtype=np.float64),
            np.asarray(asked, dtype=np.bool_),
            bool(exploring),
            self.radius,
            self.ticks,
            self.pause,
            self.idle,
            self.anchor,
            self.since,
            self.asked,
            self.commanded,
            self.stalled,
            self.per_robot,
        )
        self.count += started
        return started

    def kernel_state(self) -> tuple:
        """:meth:`update`'s kernel arguments after ``exploring``: the radius, the stall and
        pause ticks and the clocks' arrays (updated in place; the kernel's return value is the
        stalls begun, for :attr:`count`)."""
        return (
            self.radius, self.ticks, self.pause, self.idle, self.anchor, self.since, self.asked,
            self.commanded, self.stalled, self.per_robot,
        )  # fmt: skip

    def update_reference(
        self, tick: int, positions: np.ndarray, asked: np.ndarray, exploring: bool
    ) -> int:
        """:meth:`update` on numpy arrays: the definition the compiled one reproduces."""
        moved = np.hypot(*(positions - self.anchor).T) > self.radius
        self.idle[:] = np.where(self.commanded, 0, self.idle + 1)  # in place, as update()
        restart = moved | (self.idle >= self.pause)
        self.anchor[restart] = positions[restart]
        self.since[restart] = tick
        self.asked[restart] = False
        self.stalled[restart] = False
        self.asked |= asked & self.commanded
        self.commanded[:] = False
        now = self.asked & (tick - self.since >= self.ticks) & bool(exploring)
        begun = now & ~self.stalled
        self.stalled |= now
        self.per_robot += begun
        started = int(begun.sum())
        self.count += started
        return started


@njit(**JIT_OPTIONS)
def _update_kernel(
    tick,
    positions,
    asked,
    exploring,
    radius,
    ticks,
    pause,
    idle,
    anchor,
    since,
    asked_since,
    commanded,
    stalled,
    per_robot,
):
    started = 0
    for i in range(positions.shape[0]):
        moved = math.hypot(positions[i, 0] - anchor[i, 0], positions[i, 1] - anchor[i, 1]) > radius
        if commanded[i]:
            idle[i] = 0
        else:
            idle[i] += 1
        if moved or idle[i] >= pause:  # the clock restarts here
            anchor[i, 0] = positions[i, 0]
            anchor[i, 1] = positions[i, 1]
            since[i] = tick
            asked_since[i] = False
            stalled[i] = False
        if asked[i] and commanded[i]:
            asked_since[i] = True
        commanded[i] = False
        if asked_since[i] and tick - since[i] >= ticks and exploring:
            if not stalled[i]:
                per_robot[i] += 1
                started += 1
            stalled[i] = True
    return started
