"""MAES-style movement commands held as a struct of arrays (robot axis first).

One active command per robot; a new command replaces the current one at once (MAES asserts the
robot is idle instead; preempting is what a ROS user expects from ``cmd_vel`` and goals). The
command functions write into a :class:`Commands` **in place** (so a thousand robots issuing a
command each per tick cost nothing) and are atomic: every value is checked first, and a bad one
raises :class:`CommandError` naming the robot and the value with nothing changed.

Conventions: distances in tiles, angles in radians, counter-clockwise positive (REP-103; MAES's
``Rotate(degrees)`` turns clockwise for positive degrees), speeds in tiles/s and rad/s.

Command kinds (``Commands.kind``)
    ``NONE``          no command: the robot brakes to a standstill (also what :func:`stop` sets)
    ``MOVE``          move ``target`` tiles along the heading (negative = reverse), then stop
    ``ROTATE``        turn by ``target`` radians in place, then stop
    ``MOVE_CONT``     move at top speed until told otherwise (``target`` = +1 forward, -1 reverse)
    ``ROTATE_CONT``   turn at top angular speed (``target`` = +1 counter-clockwise, -1 clockwise)
    ``VELOCITY``      hold the velocity ``(linear, angular)``, mapped through the motion model
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from numbers import Integral, Real

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit

from .safe_yaml import short_repr

NONE, MOVE, ROTATE, MOVE_CONT, ROTATE_CONT, VELOCITY = range(6)
#: Names of the command kinds, indexed by kind code.
KIND_NAMES = ("none", "move", "rotate", "move_continuous", "rotate_continuous", "velocity")
#: Largest magnitude accepted for any command value (tiles, rad, tiles/s or rad/s). Larger
#: values are certainly a bug upstream (unit mix-ups, uninitialised memory); velocities below it
#: are clamped to the motion model's limits instead.
MAX_COMMAND_MAGNITUDE = 1e6


class Status(IntEnum):
    """What a robot is doing, MAES's ``RobotStatus`` plus ``ROTATING``.

    ``str(Status.ROTATING)`` gives ``"rotating"`` (the core's own name, for logs and tests);
    :attr:`maes_name` gives the value ``maes_interfaces/State.status`` carries, MAES 2.0's.
    """

    IDLE = 0
    MOVING = 1
    ROTATING = 2
    STOPPING = 3

    def __str__(self) -> str:
        return self.name.lower()

    @property
    def maes_name(self) -> str:
        """MAES 2.0's ``RobotStatus`` name: ``"Idle"``, ``"Moving"`` or ``"Stopping"``.

        MAES 2.0 sends ``Enum.GetName(typeof(RobotStatus), status)``; a turn in place is a task
        there, so ``ROTATING`` is ``"Moving"``.

        Examples
        --------
        >>> [s.maes_name for s in Status]
        ['Idle', 'Moving', 'Moving', 'Stopping']
        """
        return MAES_STATUS_NAMES[self]


#: ``State.status`` per :class:`Status` code: MAES 2.0's ``RobotStatus`` names
#: (``Assets/Scripts/Robot/Task/RobotStatus.cs``: Moving, Stopping, Idle).
MAES_STATUS_NAMES = ("Idle", "Moving", "Moving", "Stopping")


class CommandError(ValueError):
    """A rejected command (non-finite or absurd value, bad robot index).

    Attributes
    ----------
    robot : int or None
        Index of the robot whose command was rejected.
    value : float or None
        The offending value.
    """

    def __init__(self, message: str, robot: int | None = None, value: float | None = None):
        super().__init__(message)
        self.robot = robot
        self.value = value


@dataclass(frozen=True)
class Commands:
    """Current command of every robot (arrays of shape (N,), modified in place by commands).

    Attributes
    ----------
    kind : ndarray of int8
        Command kind code (``NONE`` ... ``VELOCITY``).
    target : ndarray of float64
        ``MOVE``: signed distance (tiles); ``ROTATE``: signed angle (rad); continuous kinds:
        direction +1 / -1; unused otherwise.
    progress : ndarray of float64
        ``MOVE``: distance covered along the heading; ``ROTATE``: angle turned (same sign
        convention as ``target``).
    linear, angular : ndarray of float64
        ``VELOCITY``: requested speeds (tiles/s, rad/s) before clamping and mapping.
    stopping : ndarray of bool
        ``MOVE``/``ROTATE``: braking onto the target has begun.
    lateral : ndarray of float64, optional
        ``VELOCITY``: requested sideways speed (tiles/s, to the robot's left); only an
        omnidirectional robot follows it. Defaults to zeros.
    """

    kind: np.ndarray
    target: np.ndarray
    progress: np.ndarray
    linear: np.ndarray
    angular: np.ndarray
    stopping: np.ndarray
    lateral: np.ndarray | None = None

    @classmethod
    def idle(cls, n: int) -> Commands:
        """No command for ``n`` robots.

        Examples
        --------
        >>> Commands.idle(2).kind.tolist()
        [0, 0]
        """
        z = np.zeros(int(n), dtype=np.float64)
        return cls(
            np.zeros(int(n), dtype=np.int8),
            z.copy(),
            z.copy(),
            z.copy(),
            z.copy(),
            np.zeros(int(n), dtype=np.bool_),
            z.copy(),
        )

    def __post_init__(self) -> None:
        n = self.kind.shape[0] if self.kind.ndim == 1 else -1
        if self.lateral is None:
            object.__setattr__(self, "lateral", np.zeros(max(n, 0), dtype=np.float64))
        for name in _FIELDS:
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.shape != (n,):
                raise ValueError(f"Commands.{name} must be a 1-D array of length {n}")

    @property
    def n(self) -> int:
        """Number of robots."""
        return self.kind.shape[0]

    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(kind, target, progress, linear, angular, lateral, stopping)``: the order the
        motion kernels take them in."""
        d = self.__dict__
        return (
            d["kind"], d["target"], d["progress"], d["linear"], d["angular"], d["lateral"],
            d["stopping"],
        )  # fmt: skip

    def copy(self) -> Commands:
        """Deep copy (the arrays are copied)."""
        new = object.__new__(Commands)  # a valid instance's copy: no need to check it again
        d = self.__dict__
        new.__dict__.update({f: d[f].copy() for f in _FIELDS})
        return new


_FIELDS = ("kind", "target", "progress", "linear", "angular", "stopping", "lateral")


def as_numbers(name: str, values, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``values`` as float64, refusing anything that is not plainly real numbers.

    ``bool``, strings (``'1.0'``), complex numbers, dicts, ``None`` and ragged or wrongly shaped
    arrays are refused: numpy would silently turn most of them into numbers.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    values : float or array_like
        A real number, or an array of them.
    shape : tuple of int, optional
        The shape required of an array (a single number is always accepted and broadcast).

    Raises
    ------
    CommandError
        Naming ``name`` and what was given.

    Examples
    --------
    >>> as_numbers("linear", [1, 2.5]).tolist()
    [1.0, 2.5]
    >>> as_numbers("linear", "1.0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maes_sim.core.commands.CommandError: linear must be a real number ..., got '1.0' (str)
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        arr = values  # the common case (a controller's arrays): nothing to look into
    else:
        arr = _checked_array(name, values)
        if arr.ndim == 0 and not isinstance(values, np.ndarray):
            return arr  # a single number, already float64
    if shape is not None and arr.shape not in ((), tuple(shape)):
        raise CommandError(f"{name} must have shape {tuple(shape)}, got shape {arr.shape}")
    return arr.astype(np.float64)


def _not_numbers(name: str, values) -> CommandError:
    """The error of :func:`as_numbers` (its message is built only when a command is refused)."""
    return CommandError(
        f"{name} must be a real number or an array of them, got {short_repr(values)} "
        f"({type(values).__name__})"
    )


def _checked_array(name: str, values) -> np.ndarray:
    """``values`` (anything but a numeric ndarray) as an array of real numbers, else the error."""
    if isinstance(values, bool | np.bool_):
        raise _not_numbers(name, values)
    if isinstance(values, Real):
        try:
            return np.asarray(float(values), dtype=np.float64)
        except (OverflowError, ValueError):
            raise _not_numbers(name, values) from None  # an integer beyond float range
    if isinstance(values, str | bytes | dict) or values is None:
        raise _not_numbers(name, values)
    try:
        arr = np.asarray(values)
        if not isinstance(values, np.ndarray) and arr.dtype.kind == "f":
            # A list mixing True or 1+0j with floats converts silently: look at the items.
            items = np.asarray(values, dtype=object).ravel()
            if any(isinstance(v, bool | np.bool_ | complex | np.complexfloating) for v in items):
                raise _not_numbers(name, values)
    except (ValueError, TypeError, OverflowError):  # ragged nesting, odd objects
        raise _not_numbers(name, values) from None
    if arr.dtype.kind not in "iuf":  # bool, complex, strings, objects
        raise _not_numbers(name, values)
    return arr


def as_flag(name: str, value) -> bool:
    """``value`` if it is a bool (numpy's included), else :class:`CommandError` naming ``name``.

    Examples
    --------
    >>> as_flag("reverse", "no")
    Traceback (most recent call last):
    ...
    maes_sim.core.commands.CommandError: reverse must be True or False, got 'no' (str)
    """
    if not isinstance(value, bool | np.bool_):
        raise CommandError(
            f"{name} must be True or False, got {short_repr(value)} ({type(value).__name__})"
        )
    return bool(value)


def _robots(cmds: Commands, robots) -> np.ndarray:
    if isinstance(robots, np.ndarray) and robots.ndim == 1 and robots.dtype.kind in "iu":
        idx = robots  # the common case: nothing to look into
    else:
        idx = _checked_indices(cmds, robots)
    if idx.dtype == np.int64:  # one compiled pass, no reductions (the common case)
        out = _out_of_range(idx, cmds.n)
    else:
        out = idx.size and (int(idx.min()) < 0 or int(idx.max()) >= cmds.n)
    if out:
        bad = (idx < 0) | (idx >= cmds.n)
        i = int(idx[np.argmax(bad)])
        raise CommandError(f"robot index {i} out of range [0, {cmds.n})", robot=i)
    return idx.astype(np.int64, copy=False)


def _checked_indices(cmds: Commands, robots) -> np.ndarray:
    """``robots`` (anything but an integer ndarray) as a 1-D integer array, else the error."""
    bad = CommandError(f"robot indices must be integers, got {short_repr(robots)}")
    if isinstance(robots, bool | np.bool_ | str | bytes | dict) or robots is None:
        raise bad
    if isinstance(robots, Integral):
        if not 0 <= int(robots) < cmds.n:  # before numpy, which overflows past 2**63
            raise CommandError(
                f"robot index {short_repr(int(robots))} out of range [0, {cmds.n})",
                robot=None,
            )
        idx = np.array([int(robots)], dtype=np.int64)
    else:
        try:
            idx = np.atleast_1d(np.asarray(robots))
        except (ValueError, TypeError, OverflowError):
            raise bad from None
    if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
        raise bad
    return idx


def _values(name: str, idx: np.ndarray, values) -> np.ndarray:
    if type(values) is float and abs(values) <= MAX_COMMAND_MAGNITUDE:  # not NaN, not inf
        return np.full(idx.shape, values)  # a plain number (lateral=0.0): nothing to look into
    vals = as_numbers(name, values, idx.shape)
    if vals.shape != idx.shape:
        vals = np.broadcast_to(vals, idx.shape)
    # one compiled pass for the common case: NaN and inf compare False
    if not _within(vals, MAX_COMMAND_MAGNITUDE):
        bad = ~np.isfinite(vals) | (np.abs(vals) > MAX_COMMAND_MAGNITUDE)
        k = int(np.argmax(bad))
        robot, value = int(idx[k]), float(vals[k])
        raise CommandError(
            f"robot {robot}: {name} = {value!r} rejected (must be finite and at most "
            f"{MAX_COMMAND_MAGNITUDE:g} in magnitude)",
            robot=robot,
            value=value,
        )
    return vals


@njit(**JIT_OPTIONS)
def _out_of_range(idx, n):
    """Whether any robot index in ``idx`` (int64) is outside ``[0, n)``."""
    out = False
    for k in range(idx.shape[0]):
        if idx[k] < 0 or idx[k] >= n:
            out = True
            break
    return out


@njit(**JIT_OPTIONS)
def _within(values, limit):
    """Whether every value (float64, 1-D) is at most ``limit`` in magnitude (NaN is not)."""
    ok = True
    for k in range(values.shape[0]):
        if not abs(values[k]) <= limit:
            ok = False
            break
    return ok


def _set(cmds: Commands, idx, kind, target=0.0, linear=0.0, angular=0.0, lateral=0.0) -> None:
    cmds.kind[idx] = kind
    cmds.target[idx] = target
    cmds.progress[idx] = 0.0
    cmds.linear[idx] = linear
    cmds.angular[idx] = angular
    cmds.stopping[idx] = False
    cmds.lateral[idx] = lateral


def move(cmds: Commands, robots, distance) -> None:
    """Move ``distance`` tiles straight along the heading (negative = reverse), then stop.

    Parameters
    ----------
    cmds : Commands
        Modified in place.
    robots : int or array_like of int, shape (K,)
        Robot indices.
    distance : float or array_like, shape (K,)
        Signed distance, tiles.

    Raises
    ------
    CommandError
        A distance that is not finite or exceeds :data:`MAX_COMMAND_MAGNITUDE`, or a bad index;
        no command is changed.

    Examples
    --------
    >>> c = Commands.idle(3)
    >>> move(c, [0, 2], [1.5, -2.0])
    >>> c.kind.tolist(), c.target.tolist()
    ([1, 0, 1], [1.5, 0.0, -2.0])
    """
    idx = _robots(cmds, robots)
    d = _values("distance", idx, distance)
    _set(cmds, idx, MOVE, target=d)


def rotate(cmds: Commands, robots, angle) -> None:
    """Turn in place by ``angle`` radians (counter-clockwise positive), then stop.

    Parameters
    ----------
    cmds : Commands
        Modified in place.
    robots : int or array_like of int, shape (K,)
    angle : float or array_like, shape (K,)
        Signed angle, radians; may exceed a full turn.

    Raises
    ------
    CommandError
        Non-finite or absurd angle, or a bad index; nothing is changed.

    Examples
    --------
    >>> c = Commands.idle(1)
    >>> rotate(c, 0, -np.pi / 2)
    >>> KIND_NAMES[c.kind[0]], round(float(c.target[0]), 4)
    ('rotate', -1.5708)
    """
    idx = _robots(cmds, robots)
    a = _values("angle", idx, angle)
    _set(cmds, idx, ROTATE, target=a)


def move_continuous(cmds: Commands, robots, reverse: bool = False) -> None:
    """Move straight at top speed until another command (or a collision) ends it.

    Examples
    --------
    >>> c = Commands.idle(2)
    >>> move_continuous(c, 1, reverse=True)
    >>> c.kind.tolist(), c.target.tolist()
    ([0, 3], [0.0, -1.0])
    """
    idx = _robots(cmds, robots)
    _set(cmds, idx, MOVE_CONT, target=-1.0 if as_flag("reverse", reverse) else 1.0)


def rotate_continuous(cmds: Commands, robots, counter_clockwise: bool = True) -> None:
    """Turn in place at top angular speed until another command ends it.

    Examples
    --------
    >>> c = Commands.idle(1)
    >>> rotate_continuous(c, 0, counter_clockwise=False)
    >>> c.kind.tolist(), c.target.tolist()
    ([4], [-1.0])
    """
    idx = _robots(cmds, robots)
    turn = 1.0 if as_flag("counter_clockwise", counter_clockwise) else -1.0
    _set(cmds, idx, ROTATE_CONT, target=turn)


def stop(cmds: Commands, robots) -> None:
    """Cancel the current command; the robot brakes to a standstill.

    Examples
    --------
    >>> c = Commands.idle(1)
    >>> move(c, 0, 3.0); stop(c, 0)
    >>> c.kind.tolist()
    [0]
    """
    idx = _robots(cmds, robots)
    _set(cmds, idx, NONE)


def set_velocity(cmds: Commands, robots, linear, angular, lateral=0.0) -> None:
    """Hold a velocity (``cmd_vel``): ``linear`` tiles/s along the heading, ``angular`` rad/s,
    ``lateral`` tiles/s to the robot's left (``cmd_vel.linear.y``; only an omnidirectional
    robot follows it, the other motion models drop it).

    The request is clamped to the motion model's limits at every physics step and, under the
    MAES model (rotate xor move), reduced to whichever of the two has the larger share of its
    limit (see :func:`maes_sim.core.motion.map_velocity`). It is held until replaced; a
    collision does not cancel it (the controller decides).

    Parameters
    ----------
    cmds : Commands
        Modified in place.
    robots : int or array_like of int, shape (K,)
    linear, angular, lateral : float or array_like, shape (K,)

    Raises
    ------
    CommandError
        A non-finite or absurd value, or a bad index; nothing is changed.

    Examples
    --------
    >>> c = Commands.idle(1)
    >>> set_velocity(c, 0, 0.5, 0.1)
    >>> KIND_NAMES[c.kind[0]], c.linear.tolist(), c.angular.tolist()
    ('velocity', [0.5], [0.1])
    >>> set_velocity(c, 0, float("nan"), 0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maes_sim.core.commands.CommandError: robot 0: linear = nan rejected (must be finite ...)
    """
    idx = _robots(cmds, robots)
    lin = _values("linear", idx, linear)
    ang = _values("angular", idx, angular)
    lat = _values("lateral", idx, lateral)
    _set(cmds, idx, VELOCITY, linear=lin, angular=ang, lateral=lat)


def set_velocity_every(cmds: Commands, every: np.ndarray, linear, angular, lateral=0.0) -> None:
    """:func:`set_velocity` for every robot: ``every`` is ``arange(cmds.n)`` (int64, the
    caller's), which the checks and their messages see as the robots; the rows are written
    whole (no fancy indexing). The same commands and errors as ``set_velocity(cmds, every,
    ...)``.

    Examples
    --------
    >>> c = Commands.idle(2)
    >>> set_velocity_every(c, np.arange(2), [0.5, 1.0], 0.0)
    >>> KIND_NAMES[c.kind[1]], c.linear.tolist(), c.angular.tolist()
    ('velocity', [0.5, 1.0], [0.0, 0.0])
    """
    if (  # the common case: float64 arrays of every robot and one sideways speed
        type(lateral) is float
        and type(linear) is np.ndarray
        and type(angular) is np.ndarray
        and linear.dtype is _FLOAT64
        and angular.dtype is _FLOAT64
        and linear.shape == every.shape == angular.shape
        and _checked_velocity_rows(*cmds.arrays(), linear, angular, lateral, MAX_COMMAND_MAGNITUDE)
    ):
        return  # checked and written in one compiled pass; else the checks below say why
    lin = _values("linear", every, linear)
    ang = _values("angular", every, angular)
    if type(lateral) is float and abs(lateral) <= MAX_COMMAND_MAGNITUDE:
        # a plain number written to every row, as _values' full array would be
        lat, lat_value, one_lateral = lin, lateral, True
    else:
        lat, lat_value, one_lateral = _values("lateral", every, lateral), 0.0, False
    _velocity_rows(
        cmds.kind, cmds.target, cmds.progress, cmds.linear, cmds.angular, cmds.stopping,
        cmds.lateral, lin, ang, lat, lat_value, one_lateral,
    )  # fmt: skip


_FLOAT64 = np.dtype(np.float64)


@njit(**JIT_OPTIONS)
def _checked_velocity_rows(
    kind, target, progress, linear, angular, lateral, stopping, lin, ang, lat_value, limit
):
    """:func:`_velocity_rows` for every robot with one sideways speed ``lat_value``, written
    only when every requested value is at most ``limit`` in magnitude (NaN is not, as in
    :func:`_within`); returns whether it was written (the arguments before ``lin`` in the order
    of :meth:`Commands.arrays`)."""
    if not abs(lat_value) <= limit:
        return False
    for i in range(lin.shape[0]):
        if not (abs(lin[i]) <= limit and abs(ang[i]) <= limit):
            return False
    _velocity_rows(
        kind, target, progress, linear, angular, stopping, lateral, lin, ang, lin, lat_value, True
    )
    return True


@njit(**JIT_OPTIONS)
def _velocity_rows(
    kind, target, progress, linear, angular, stopping, lateral, lin, ang, lat, lat_value, one
):
    """What :func:`_set` writes for a ``VELOCITY`` command of every robot, in one pass
    (``lateral`` is ``lat_value`` for every robot when ``one``, else ``lat``)."""
    for i in range(kind.shape[0]):
        kind[i] = VELOCITY
        target[i] = 0.0
        progress[i] = 0.0
        linear[i] = lin[i]
        angular[i] = ang[i]
        stopping[i] = False
        lateral[i] = lat_value if one else lat[i]
