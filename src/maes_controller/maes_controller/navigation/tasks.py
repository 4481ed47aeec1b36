"""Nav2's other tasks on a :class:`~.session.NavSession`: poses in sequence, behaviours, paths.

Each task has ``begin(now)``, ``update(inputs) -> NavStep`` and ``cancel(now) -> NavStep``, so
the session runs it as it runs a ``navigate_to_pose`` goal (one task per robot; a new one
preempts). The error codes are the ones Nav2 Jazzy's action definitions give each server:

=====================  ============================================  =========================
task                   Nav2 action                                   codes
=====================  ============================================  =========================
:class:`PoseSequence`  ``NavigateThroughPoses``, ``FollowWaypoints``  the legs' (1xx/2xx); 600
:class:`FollowGiven`   ``FollowPath``                                 103, 105, 107
:class:`Spin`          ``Spin``                                       701 timeout, 702 tf
:class:`Drive`         ``BackUp`` / ``DriveOnHeading``                71x / 72x
=====================  ============================================  =========================

:func:`compute_path` answers ``ComputePathToPose`` / ``ComputePathThroughPoses`` (200+/300+).
Metres, radians, seconds; map frame, except that behaviours measure travel on odometry
(``odom -> base_footprint``), as Nav2's behaviour server does. Pure: no rclpy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..robot_api import NavStatus
from .costmap import INSCRIBED, GridMap
from .following import FollowState, FollowStatus, follow_path, wrap_angle
from .global_planner import plan_route
from .navigator import Navigator, NavStep
from .session import StepInputs

#: FollowWaypoints' UNKNOWN: a waypoint's navigation failed.
WAYPOINT_FAILED = 600

#: Seconds: behaviours command ``remaining / SETTLE`` (capped at the top speed), so the
#: distance or angle left shrinks by about a third per 0.1 s tick near the end.
SETTLE = 0.3


class PoseSequence:
    """Navigate to ``goals`` in order with the robot's navigator.

    ``through=True`` is ``navigate_through_poses``: any leg's failure aborts with that leg's
    code. Otherwise ``follow_waypoints``: a failed leg is a missed waypoint (its index in
    ``missed``); with ``stop_on_failure`` (Nav2's default) the task aborts with code 600.
    ``NavStep.waypoint`` is the index of the goal being approached; ``distance_remaining`` the
    current leg's path plus straight lines between the later goals.
    """

    def __init__(
        self,
        navigator: Navigator,
        goals: Sequence[tuple[float, float]],
        *,
        through: bool,
        start_index: int = 0,
        stop_on_failure: bool = True,
    ) -> None:
        self.navigator = navigator
        self.goals = [(float(x), float(y)) for x, y in goals]
        self.through = through
        self.index = int(start_index)
        self.stop_on_failure = stop_on_failure
        self.missed: list[tuple[int, int]] = []  # (index, error code)

    def begin(self, now: float) -> None:
        """Start towards the first goal."""
        if self.index < len(self.goals):
            self.navigator.start(self.goals[self.index], now)

    def _later(self) -> float:
        pts = self.goals[self.index :]
        return sum(math.dist(a, b) for a, b in zip(pts[:-1], pts[1:], strict=False))

    def _tag(self, step: NavStep) -> NavStep:
        remaining = step.distance_remaining
        if math.isfinite(remaining):
            remaining += self._later()
        return replace(
            step,
            distance_remaining=remaining,
            waypoint=min(self.index, max(len(self.goals) - 1, 0)),
            poses_remaining=max(len(self.goals) - self.index, 0),
            missed=tuple(self.missed),
        )

    def update(self, inputs: StepInputs) -> NavStep:
        """Step the current leg; on its end go on to the next goal in the same step."""
        if not self.goals:
            return NavStep(status=NavStatus.SUCCEEDED)
        while True:
            step = self.navigator.update(
                inputs.pose, inputs.grid, inputs.now, inputs.robots, inputs.robot_ids
            )
            if step.status is NavStatus.ACTIVE:
                return self._tag(step)
            if step.status is NavStatus.ABORTED:
                if self.through:
                    return self._tag(step)
                self.missed.append((self.index, WAYPOINT_FAILED))
                if self.stop_on_failure:
                    return self._tag(replace(step, error_code=WAYPOINT_FAILED))
            self.index += 1
            if self.index >= len(self.goals):
                return self._tag(replace(step, status=NavStatus.SUCCEEDED, error_code=0))
            self.navigator.start(self.goals[self.index], inputs.now)

    def cancel(self, now: float) -> NavStep:
        """Stop (CANCELED)."""
        return self._tag(self.navigator.cancel(now))


class FollowGiven:
    """``follow_path``: drive along a given path (no planning) with the MAES follower.

    The path's points are thinned to its corners; a blocked robot aborts with
    ``FAILED_TO_MAKE_PROGRESS`` (105), an empty path with ``INVALID_PATH`` (103), a path not
    finished within the navigator's goal timeout with ``CONTROLLER_TIMED_OUT`` (107).
    """

    def __init__(self, navigator: Navigator, points: Sequence[tuple[float, float]]) -> None:
        self.params = navigator.params
        self.follow = navigator.params.follow_params()
        self.waypoints = corners([(float(x), float(y)) for x, y in points])
        self.state: FollowState | None = None
        self.started = 0.0

    def begin(self, now: float) -> None:
        """Remember the start time."""
        self.started = now

    def update(self, inputs: StepInputs) -> NavStep:
        """One follower command."""
        now = inputs.now
        base = {"navigation_time": now - self.started}
        if not self.waypoints:
            return NavStep(status=NavStatus.ABORTED, error_code=103, error_msg="empty path", **base)
        if inputs.pose is None:
            return NavStep(
                status=NavStatus.ABORTED, error_code=102, error_msg="no robot pose", **base
            )
        if now - self.started > self.params.goal_timeout:
            msg = f"path not finished within {self.params.goal_timeout:g} s"
            return NavStep(status=NavStatus.ABORTED, error_code=107, error_msg=msg, **base)
        cmd = follow_path(inputs.pose, self.waypoints, self.follow, self.state, now)
        self.state = cmd.state
        if cmd.status is FollowStatus.SUCCEEDED:
            return NavStep(status=NavStatus.SUCCEEDED, distance_remaining=0.0, **base)
        if cmd.status is FollowStatus.BLOCKED:
            msg = "no progress along the path"
            return NavStep(status=NavStatus.ABORTED, error_code=105, error_msg=msg, **base)
        return NavStep(
            linear=cmd.linear,
            angular=cmd.angular,
            status=NavStatus.ACTIVE,
            distance_remaining=cmd.remaining,
            traveled=abs(cmd.linear),
            **base,
        )

    def cancel(self, now: float) -> NavStep:
        """Stop (CANCELED)."""
        return NavStep(status=NavStatus.CANCELED, navigation_time=now - self.started)


def corners(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """``points`` without the ones on a straight line between their neighbours (and repeats).

    Examples
    --------
    >>> corners([(0, 0), (1, 0), (2, 0), (2, 1), (2, 1)])
    [(0, 0), (2, 0), (2, 1)]
    """
    out: list[tuple[float, float]] = []
    for p in points:
        if out and p == out[-1]:
            continue
        if len(out) >= 2:
            (ax, ay), (bx, by) = out[-2], out[-1]
            if abs((bx - ax) * (p[1] - by) - (by - ay) * (p[0] - bx)) < 1e-9:
                out[-1] = p
                continue
        out.append(p)
    return out


@dataclass
class _Behaviour:
    """What Spin and Drive share: time allowance, codes, the odometry they measure on."""

    time_allowance: float
    code_base: int  # 700 spin, 710 backup, 720 drive_on_heading
    started: float = 0.0
    traveled: float = 0.0

    def begin(self, now: float) -> None:
        self.started = now

    def _end(self, now: float, status: NavStatus, code: int = 0, msg: str = "") -> NavStep:
        return NavStep(
            status=status,
            error_code=code,
            error_msg=msg,
            navigation_time=now - self.started,
            traveled=self.traveled,
            distance_remaining=0.0,
        )

    def _speed(self, remaining: float, top: float) -> float:
        # slow down proportionally to what is left: the simulator brakes within a tick, so
        # the robot coasts only ~remaining * tau / SETTLE past a zero command (no overshoot)
        return min(top, remaining / SETTLE)

    def cancel(self, now: float) -> NavStep:
        return self._end(now, NavStatus.CANCELED)


class Spin(_Behaviour):
    """``spin``: turn by ``target_yaw`` (signed, rad) on the spot, measured on odometry.

    Turns at the navigator's top angular speed, slowing down over the last radian
    (:data:`SETTLE`) so as to stop on the target. Ends SUCCEEDED within ``tolerance``;
    ``TIMEOUT`` (701) past ``time_allowance`` seconds (0: none); ``TF_ERROR`` (702) without
    odometry. ``NavStep.traveled`` is the angle turned so far.
    """

    def __init__(
        self, target_yaw: float, max_speed: float, time_allowance: float, tolerance: float = 2e-3
    ) -> None:
        super().__init__(time_allowance=time_allowance, code_base=700)
        self.target = float(target_yaw)
        self.max_speed = float(max_speed)
        self.tolerance = tolerance
        self.last_yaw: float | None = None

    def update(self, inputs: StepInputs) -> NavStep:
        """Measure the turn so far and command the rest."""
        now = inputs.now
        if inputs.odom_pose is None:
            return self._end(now, NavStatus.ABORTED, 702, "no odometry (odom -> base_footprint)")
        yaw = float(inputs.odom_pose[2])
        if self.last_yaw is not None:
            self.traveled += abs(wrap_angle(yaw - self.last_yaw))
        self.last_yaw = yaw
        remaining = abs(self.target) - self.traveled
        if remaining <= self.tolerance:
            return self._end(now, NavStatus.SUCCEEDED)
        if self.time_allowance > 0 and now - self.started > self.time_allowance:
            msg = f"turned {self.traveled:.3f} of {abs(self.target):.3f} rad in the time allowed"
            return self._end(now, NavStatus.ABORTED, 701, msg)
        speed = self._speed(remaining, self.max_speed)
        return NavStep(
            angular=math.copysign(speed, self.target),
            status=NavStatus.ACTIVE,
            navigation_time=now - self.started,
            distance_remaining=remaining,
            traveled=self.traveled,
        )


class Drive(_Behaviour):
    """``backup`` / ``drive_on_heading``: drive straight ``distance`` m at ``speed`` m/s.

    Signed: a negative distance drives backwards (``backup`` passes ``-|x|`` and ``-|speed|``,
    as Nav2's BackUp does). The speed is capped at the navigator's top speed and lowered near
    the end (:data:`SETTLE`) so as to stop on the distance; travel is measured on odometry.
    Ends SUCCEEDED within ``tolerance``; ``TIMEOUT`` past ``time_allowance`` (0: none);
    ``TF_ERROR`` without odometry; ``COLLISION_AHEAD`` when the costmap is inscribed or
    lethal within the next ``lookahead`` seconds of travel (Nav2's ``simulate_ahead_time``).
    """

    def __init__(
        self,
        distance: float,
        speed: float,
        max_speed: float,
        time_allowance: float,
        code_base: int,
        costs: object = None,
        lookahead: float = 2.0,
        tolerance: float = 2e-3,
    ) -> None:
        super().__init__(time_allowance=time_allowance, code_base=code_base)
        self.distance = float(distance)
        self.speed = min(abs(float(speed)), float(max_speed))
        self.costs = costs  # callable grid -> int8 costmap, or None
        self.lookahead = lookahead
        self.tolerance = tolerance
        self.start_xy: tuple[float, float] | None = None

    def _collision_ahead(self, inputs: StepInputs, remaining: float) -> bool:
        if self.costs is None or inputs.grid is None or inputs.pose is None:
            return False
        grid: GridMap = inputs.grid
        costs = np.asarray(self.costs(grid))
        x, y, yaw = (float(v) for v in inputs.pose)
        sign = 1.0 if self.distance >= 0 else -1.0
        reach = min(remaining, self.speed * self.lookahead)
        n = max(1, int(math.ceil(reach / (0.5 * grid.resolution))))
        for k in range(1, n + 1):
            d = sign * reach * k / n
            ix, iy = grid.pos_to_cell(x + d * math.cos(yaw), y + d * math.sin(yaw))
            if grid.in_bounds(ix, iy) and costs[iy, ix] >= INSCRIBED:
                return True
        return False

    def update(self, inputs: StepInputs) -> NavStep:
        """Measure the distance so far and command the rest."""
        now = inputs.now
        if inputs.odom_pose is None:
            msg = "no odometry (odom -> base_footprint)"
            return self._end(now, NavStatus.ABORTED, self.code_base + 2, msg)
        xy = (float(inputs.odom_pose[0]), float(inputs.odom_pose[1]))
        if self.start_xy is None:
            self.start_xy = xy
        self.traveled = math.dist(self.start_xy, xy)
        remaining = abs(self.distance) - self.traveled
        if remaining <= self.tolerance:
            return self._end(now, NavStatus.SUCCEEDED)
        if self.time_allowance > 0 and now - self.started > self.time_allowance:
            msg = f"drove {self.traveled:.3f} of {abs(self.distance):.3f} m in the time allowed"
            return self._end(now, NavStatus.ABORTED, self.code_base + 1, msg)
        if self._collision_ahead(inputs, remaining):
            code = self.code_base + (4 if self.code_base == 710 else 3)
            return self._end(now, NavStatus.ABORTED, code, "collision ahead")
        speed = self._speed(remaining, self.speed)
        return NavStep(
            linear=math.copysign(speed, self.distance),
            status=NavStatus.ACTIVE,
            navigation_time=now - self.started,
            distance_remaining=remaining,
            traveled=self.traveled,
        )


def compute_path(
    navigator: Navigator,
    grid: GridMap | None,
    start: tuple[float, float] | None,
    goals: Sequence[tuple[float, float]],
    code_base: int,
) -> tuple[list[tuple[float, float]], int, str]:
    """Plan from ``start`` through ``goals`` on the robot's map, as the navigator plans.

    Returns ``(points, error_code, error_msg)``: the dense path (one point per map cell; it
    starts at ``start`` and ends at the last goal) and 0, or ``[]`` and the planner's code
    (``code_base`` 200 for ``ComputePathToPose``, 300 for ``ComputePathThroughPoses``: +2 no
    pose, +3 start outside the map, +4 goal outside, +8 no path, +9 no goals (300 only)).
    """
    if not goals:
        return [], code_base + 9, "no goals given"
    if start is None:
        return [], code_base + 2, "no robot pose (map -> base_footprint)"
    if grid is None:
        return [], code_base + 8, "no map to plan on yet"
    if not grid.in_bounds(*grid.pos_to_cell(*start)):
        return [], code_base + 3, f"start {start} lies outside the robot's map"
    params = navigator.params
    radius = params.planning_radius(grid.resolution)
    costs = navigator.costmap_values(grid)
    points: list[tuple[float, float]] = []
    here = (float(start[0]), float(start[1]))
    for goal in goals:
        goal = (float(goal[0]), float(goal[1]))
        if not grid.in_bounds(*grid.pos_to_cell(*goal)):
            return [], code_base + 4, f"goal {goal} lies outside the robot's map"
        route = plan_route(
            grid, here, goal, radius, costs=costs, allow_unknown=params.allow_unknown
        )
        if route is None:
            return [], code_base + 8, f"no path from {here} to goal {goal} on the robot's map"
        leg = [grid.cell_to_pos(ix, iy) for ix, iy in route.cells]
        leg[0], leg[-1] = here, goal
        points.extend(leg if not points else leg[1:])
        here = goal
    return points, 0, ""
