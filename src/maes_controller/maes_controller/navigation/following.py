"""Path following for the MAES movement model: a robot either rotates in place or drives straight.

:func:`follow_path` is a pure function of (pose, waypoints, params, state, time) returning one
velocity command. Call it once per control tick with the state it returned last time. The rule:

1. Advance past every waypoint already reached (within ``waypoint_tolerance``, or passed
   alongside within that distance of it); the final goal is reached within ``goal_tolerance``.
2. If driving straight on would miss the current waypoint sideways by more than
   ``lateral_tolerance`` (or the heading error exceeds ``heading_tolerance``), rotate in place
   (proportional, capped at ``max_angular_speed``); otherwise drive straight at
   ``max_linear_speed``, slowing linearly within ``slowdown_distance`` of the final goal.
   Bounding the sideways miss, not the angle, keeps the robot within ``lateral_tolerance`` of
   the straight segment the planner checked, however long. Once driving, both limits are 1.5
   times larger, so the robot does not stop to re-aim for rounding-sized errors.
3. Report ``BLOCKED`` when neither the remaining path length nor (while rotating) the heading
   error improved for ``blocked_timeout`` seconds.

An omnidirectional robot (``FollowParams.omnidirectional``) never rotates in place: it drives
straight at the current waypoint at once, the velocity split into forward (``linear``) and
sideways (``lateral``) parts in its own frame, and turns towards the waypoint on the way (the
same proportional turn rate). Differential and MAES robots are followed as above.

Units are the caller's (tiles or metres, seconds, radians); pose and waypoints share a frame.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

# Smallest decrease of the heading error (rad) that counts as progress while turning.
_HEADING_EPSILON = 0.01


class FollowStatus(enum.Enum):
    """What :func:`follow_path` is doing."""

    ROTATING = "rotating"
    DRIVING = "driving"
    SUCCEEDED = "succeeded"
    BLOCKED = "blocked"

    @property
    def finished(self) -> bool:
        """True for ``SUCCEEDED`` and ``BLOCKED`` (the command is zero)."""
        return self in (FollowStatus.SUCCEEDED, FollowStatus.BLOCKED)


@dataclass(frozen=True)
class FollowParams:
    """Tuning of :func:`follow_path`; invalid values raise ``ValueError`` naming the field.

    Parameters
    ----------
    max_linear_speed : float
        Top driving speed (> 0), distance per second.
    max_angular_speed : float
        Top turning speed (> 0), rad/s.
    heading_tolerance : float
        Largest heading error (rad) to drive with, < pi/2; near a waypoint the lateral rule
        allows more, far from it less.
    lateral_tolerance : float
        Largest sideways miss of the waypoint to start driving with (distance), at most half
        of ``waypoint_tolerance`` and of ``goal_tolerance``.
    waypoint_tolerance : float
        Distance at which an intermediate waypoint counts as reached.
    goal_tolerance : float
        Distance at which the final waypoint counts as reached.
    slowdown_distance : float
        Start slowing this far from the final goal (keep it >= ``max_linear_speed`` times the
        control period so the last step cannot jump over the goal tolerance).
    min_speed_fraction : float
        Slowest approach speed, as a fraction of ``max_linear_speed`` (0 < f <= 1).
    angular_gain : float
        Turning speed per radian of heading error (1/s); keep it below 1 / control period.
        5 /s: against the MAES model's speed lag a turn in place ends in about 1.1 s, where
        2.5 /s left a slow tail (1.5 s); with it the shipped explorers explore more and leave
        a packed start sooner (docs/scaling.md, "The path follower's turn").
    blocked_timeout : float
        Seconds without progress before ``BLOCKED``; longer than a half turn takes.
    progress_epsilon : float
        Smallest decrease of the remaining path length that counts as progress.
    omnidirectional : bool
        The robot strafes: drive at the waypoint in any direction, turning on the way.

    Examples
    --------
    >>> FollowParams(max_linear_speed=1.0, max_angular_speed=2.0).goal_tolerance
    0.2
    """

    max_linear_speed: float
    max_angular_speed: float
    heading_tolerance: float = 0.5
    lateral_tolerance: float = 0.05
    waypoint_tolerance: float = 0.15
    goal_tolerance: float = 0.2
    slowdown_distance: float = 1.0
    min_speed_fraction: float = 0.1
    angular_gain: float = 5.0
    blocked_timeout: float = 6.0
    progress_epsilon: float = 0.05
    omnidirectional: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.omnidirectional, bool):
            raise ValueError(
                f"FollowParams.omnidirectional must be a bool, got {self.omnidirectional!r}"
            )
        for name in (
            "max_linear_speed",
            "max_angular_speed",
            "heading_tolerance",
            "lateral_tolerance",
            "waypoint_tolerance",
            "goal_tolerance",
            "slowdown_distance",
            "angular_gain",
            "blocked_timeout",
            "progress_epsilon",
        ):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0 < value < math.inf):
                raise ValueError(f"FollowParams.{name} must be a finite number > 0, got {value!r}")
        if not (
            isinstance(self.min_speed_fraction, (int, float)) and 0 < self.min_speed_fraction <= 1
        ):
            value = self.min_speed_fraction
            raise ValueError(f"FollowParams.min_speed_fraction must be in (0, 1], got {value!r}")
        if self.heading_tolerance >= math.pi / 2:
            raise ValueError(
                f"FollowParams.heading_tolerance must be < pi/2 rad, got {self.heading_tolerance!r}"
            )
        limit = 0.5 * min(self.waypoint_tolerance, self.goal_tolerance)
        if self.lateral_tolerance > limit:
            raise ValueError(
                f"FollowParams.lateral_tolerance must be <= half of waypoint_tolerance and of "
                f"goal_tolerance ({limit}), got {self.lateral_tolerance!r}"
            )


@dataclass(frozen=True)
class FollowState:
    """What :func:`follow_path` remembers between calls (start with ``FollowState()``).

    Attributes
    ----------
    target : int
        Index of the waypoint being approached.
    driving : bool
        Whether the last command drove (widens the heading tolerance: hysteresis).
    best_remaining : float
        Shortest remaining path length seen so far.
    best_heading_error : float
        Smallest absolute heading error seen while turning towards ``target``.
    last_progress_time : float or None
        When progress was last made.
    start : (x, y) or None
        Where following began (the segment into the first waypoint starts there).
    """

    target: int = 0
    driving: bool = False
    best_remaining: float = math.inf
    best_heading_error: float = math.inf
    last_progress_time: float | None = field(default=None)
    start: tuple[float, float] | None = None


class FollowCommand(NamedTuple):
    """One control step: velocities, status, the state for the next call, remaining length,
    and the sideways velocity (``lateral``, to the robot's left: an omnidirectional robot)."""

    linear: float
    angular: float
    status: FollowStatus
    state: FollowState
    remaining: float
    lateral: float = 0.0


def wrap_angle(angle: float) -> float:
    """Wrap an angle to [-pi, pi).

    Examples
    --------
    >>> round(wrap_angle(3 * math.pi / 2), 6)
    -1.570796
    """
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def _check_inputs(pose: Sequence[float], waypoints: Sequence[Sequence[float]]) -> tuple:
    try:
        x, y, yaw = (float(v) for v in pose)
    except (TypeError, ValueError):
        raise ValueError(f"pose must be (x, y, yaw), got {pose!r}") from None
    if not all(math.isfinite(v) for v in (x, y, yaw)):
        raise ValueError(f"pose must be finite, got {(x, y, yaw)}")
    wps = np.asarray(waypoints, dtype=np.float64)
    if wps.ndim != 2 or wps.shape[1] != 2 or wps.shape[0] == 0:
        raise ValueError(f"waypoints must be a non-empty (K, 2) sequence, got shape {wps.shape}")
    if not np.isfinite(wps).all():
        raise ValueError("waypoints must be finite")
    return x, y, yaw, wps


def _passed(px: float, py: float, wps: list, i: int, tol: float, start: tuple) -> bool:
    """Whether the robot is past waypoint ``i`` (along its segment), within ``tol`` of it."""
    ax, ay = wps[i - 1] if i > 0 else start
    bx, by = wps[i]
    sx, sy = bx - ax, by - ay
    length = math.hypot(sx, sy)
    if length == 0.0:
        return True
    ux, uy = sx / length, sy / length
    rx, ry = px - bx, py - by
    return rx * ux + ry * uy >= 0.0 and abs(rx * uy - ry * ux) <= tol


def path_tails(waypoints: Sequence[Sequence[float]]) -> list[float]:
    """Length of the path from each waypoint on to the last, as :func:`follow_path` adds it.

    A caller following one path for many steps computes this once and passes it as
    ``follow_path(..., tails=...)``: the same numbers, not recomputed every step.

    Examples
    --------
    >>> path_tails([(0.0, 0.0), (3.0, 4.0), (3.0, 5.0)])
    [6.0, 1.0, 0.0]
    """
    wps = np.asarray(waypoints, dtype=np.float64)
    if len(wps) < 2:
        return [0.0] * len(wps)
    # each segment's length once; a tail is the sum of its segments, as _tail_length sums them
    # (np.diff is this subtraction; the same pairwise sum over the same values)
    d = wps[1:] - wps[:-1]
    seg = np.hypot(d[:, 0], d[:, 1])
    return [float(seg[t:].sum()) for t in range(len(wps) - 1)] + [0.0]


def _with(st: FollowState, **changes: Any) -> FollowState:
    # dataclasses.replace without its per-field introspection (FollowState is a plain frozen
    # dataclass: no __post_init__, no slots), on every step of every robot
    new = object.__new__(type(st))
    new.__dict__.update(st.__dict__, **changes)
    return new


def _tail_length(wps: np.ndarray, target: int) -> float:
    tail = np.diff(wps[target:], axis=0)
    return float(np.hypot(tail[:, 0], tail[:, 1]).sum()) if tail.size else 0.0


def follow_path(
    pose: Sequence[float],
    waypoints: Sequence[Sequence[float]],
    params: FollowParams,
    state: FollowState | None = None,
    time: float = 0.0,
    tails: Sequence[float] | None = None,
) -> FollowCommand:
    """One rotate-xor-move command towards the next waypoint of a path.

    Parameters
    ----------
    pose : (x, y, yaw)
        The robot's pose (yaw in rad, CCW).
    waypoints : (K, 2) sequence
        Points to visit in order after the current pose (drop the planner's start cell); the
        last one is the goal.
    params : FollowParams
    state : FollowState, optional
        The ``state`` of the previous command; ``None`` starts at the first waypoint.
    time : float
        Current time in seconds (e.g. sim time); only used to detect a blocked robot.
    tails : sequence of float, optional
        :func:`path_tails` of ``waypoints``, when the caller keeps it for the path; computed
        here otherwise.

    Returns
    -------
    FollowCommand
        ``(linear, angular, status, state, remaining, lateral)``; exactly one of
        ``linear``/``angular`` is non-zero while ``ROTATING``/``DRIVING`` (``lateral`` is 0),
        all are zero once finished; an omnidirectional robot only drives, with all three.
        ``remaining`` is the path length left from the pose.

    Examples
    --------
    >>> p = FollowParams(max_linear_speed=1.0, max_angular_speed=1.0)
    >>> cmd = follow_path((0.0, 0.0, 0.0), [(0.0, 2.0)], p)
    >>> cmd.status.name, cmd.linear, round(cmd.angular, 3)
    ('ROTATING', 0.0, 1.0)
    >>> cmd = follow_path((0.0, 0.0, math.pi / 2), [(0.0, 2.0)], p, cmd.state)
    >>> cmd.status.name, cmd.linear, cmd.angular, cmd.remaining
    ('DRIVING', 1.0, 0.0, 2.0)
    >>> omni = FollowParams(max_linear_speed=1.0, max_angular_speed=1.0, omnidirectional=True)
    >>> cmd = follow_path((0.0, 0.0, 0.0), [(0.0, 2.0)], omni)  # strafes left at once
    >>> cmd.status.name, round(cmd.linear, 6), round(cmd.lateral, 6), cmd.angular
    ('DRIVING', 0.0, 1.0, 1.0)
    """
    x, y, yaw, wps = _check_inputs(pose, waypoints)
    return follow_rows(x, y, yaw, wps.tolist(), params, state, time, tails)


def follow_rows(
    x: float,
    y: float,
    yaw: float,
    rows: list[list[float]],
    params: FollowParams,
    state: FollowState | None,
    time: float,
    tails: Sequence[float] | None = None,
) -> FollowCommand:
    """:func:`follow_path` on inputs already checked: a finite pose as three floats and the
    waypoints as a non-empty list of finite ``[x, y]`` rows (``ndarray.tolist()``), with their
    :func:`path_tails` when the caller keeps them. The same arithmetic on Python floats,
    without the per-call checks and array conversions: for a caller that checks a path once
    and follows it for many steps (the navigator).

    Examples
    --------
    >>> p = FollowParams(max_linear_speed=1.0, max_angular_speed=1.0)
    >>> cmd = follow_rows(0.0, 0.0, math.pi / 2, [[0.0, 2.0]], p, None, 0.0, [0.0])
    >>> cmd.status.name, cmd.linear, cmd.remaining
    ('DRIVING', 1.0, 2.0)
    """
    st = state if state is not None else FollowState(start=(x, y))
    # the new state's changes, made into one FollowState when the command is returned
    changes: dict[str, Any] = {}
    start = st.start
    if start is None:
        start = changes["start"] = (x, y)
    last = len(rows) - 1
    if not 0 <= st.target <= last:
        raise ValueError(f"state.target {st.target} does not index the {last + 1} waypoints")

    target = st.target
    while target < last and (
        math.hypot(rows[target][0] - x, rows[target][1] - y) <= params.waypoint_tolerance
        or _passed(x, y, rows, target, params.waypoint_tolerance, start)
    ):
        target += 1
    best_heading_error = st.best_heading_error
    if target != st.target:
        changes["target"] = target
        best_heading_error = changes["best_heading_error"] = math.inf

    tx, ty = rows[target]
    dx, dy = tx - x, ty - y
    dist = math.hypot(dx, dy)
    tail = _tail_length(np.asarray(rows), target) if tails is None else tails[target]
    remaining = dist + tail
    if target == last and dist <= params.goal_tolerance:
        done = _with(st, **changes, driving=False, last_progress_time=time)
        return FollowCommand(0.0, 0.0, FollowStatus.SUCCEEDED, done, remaining)

    err = wrap_angle(math.atan2(dy, dx) - yaw)
    # Driving on with error err misses the waypoint sideways by dist * sin(err).
    slack = 1.5 if st.driving else 1.0
    lateral_limit = math.asin(min(1.0, slack * params.lateral_tolerance / dist))
    rotate = not params.omnidirectional and abs(err) > min(
        slack * params.heading_tolerance, lateral_limit
    )

    progressed = remaining < st.best_remaining - params.progress_epsilon or (
        rotate and abs(err) < best_heading_error - _HEADING_EPSILON
    )
    if progressed or st.last_progress_time is None:
        changes["best_remaining"] = min(st.best_remaining, remaining)
        if rotate:
            changes["best_heading_error"] = min(best_heading_error, abs(err))
        changes["last_progress_time"] = time
    elif time - st.last_progress_time > params.blocked_timeout:
        blocked = _with(st, **changes, driving=False)
        return FollowCommand(0.0, 0.0, FollowStatus.BLOCKED, blocked, remaining)

    if rotate:
        angular = math.copysign(min(params.max_angular_speed, params.angular_gain * abs(err)), err)
        rotating = _with(st, **changes, driving=False)
        return FollowCommand(0.0, angular, FollowStatus.ROTATING, rotating, remaining)
    speed = params.max_linear_speed
    if target == last:
        fraction = min(1.0, max(params.min_speed_fraction, dist / params.slowdown_distance))
        speed *= fraction
    driving = _with(st, **changes, driving=True)
    if params.omnidirectional:  # straight at the waypoint, turning towards it on the way
        angular = math.copysign(min(params.max_angular_speed, params.angular_gain * abs(err)), err)
        return FollowCommand(
            speed * math.cos(err),
            angular,
            FollowStatus.DRIVING,
            driving,
            remaining,
            speed * math.sin(err),
        )
    return FollowCommand(speed, 0.0, FollowStatus.DRIVING, driving, remaining)
