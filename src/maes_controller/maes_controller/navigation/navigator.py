"""A navigation session: plan on the robot's map, follow with the MAES motion model, recover.

The built-in navigator's whole behaviour as pure Python, one :class:`Navigator` per robot. The
ROS navigator node (``navigator_node``) and direct mode both drive it, so a goal is navigated
identically on either. Call :meth:`Navigator.update` once per control tick with the robot's pose
and its latest map; it returns a :class:`NavStep`: the velocity command to send and everything
``NavigateToPose`` feedback and results report.

Behaviour (metres, seconds, radians; map frame)
    * Plans with :func:`~.global_planner.plan_route` (A* over the robot's map inflated by its
      radius, unknown cells allowed, pruned to line-of-sight waypoints) on the first update
      with a map, and follows with :func:`~.following.follow_path` (rotate in place to the next
      waypoint, then drive straight).
    * Replans when a new map blocks the remaining route, and (a recovery) when the follower
      reports no progress; every second recovery first backs up a little, as Nav2's backup
      behaviour does. Recovery plans treat the other robots nearby (``robots``) as obstacles,
      so two robots meeting head-on plan around each other (the map holds only walls). Too
      many recoveries without getting closer to the goal abort.
    * Plans around the robots it senses when a way around them is not much longer
      (``plan_around_robots``), so a robot at the edge of a crowd leaves it on the outside.
    * Yields to robots (``yield_to_robots``): a straight move is held while a sensed robot
      stands in the corridor it sweeps next, for a bounded time that a total order (the robot
      index, ``rank``) makes longer for the robot that lets the other go first; then the
      navigator recovers as above and plans around the robots (:mod:`.yielding`). Waiting for
      robots that move (a crowd leaving) is no failure; waiting for robots that stand still
      is, and the outranked robot gives up first. A robot that goes first and has stood in
      one place for ``jam_pass_after`` seconds passes the robots in its way as close as
      contact allows (a knot in which every robot holds for the ones beside it dissolves).
    * Reports ``FAILED_TO_MAKE_PROGRESS``, as Nav2's progress checker does, when the robot has
      not moved ``progress_radius`` for ``progress_timeout`` seconds, whatever held it, or
      has not got that much closer for twice as long.
    * Aborts with a Nav2 error code (:class:`NavErrorCode`) and a message on a goal outside the
      map, a goal no path reaches, no pose or no map for too long, or the goal timeout.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

import numpy as np

from maes_common.motion_models import MODELS

from ..robot_api import NavStatus
from ._discs import mark_discs
from ._segment import segment_clear
from .costmap import GridMap
from .following import FollowParams, FollowState, FollowStatus, follow_rows, path_tails
from .global_planner import Route, plan_route
from .inflation import costmap_from_occupancy
from .planning import traversable_mask
from .yielding import (
    Hold,
    as_positions,
    free_heading,
    gap_ahead,
    outranked,
    robots_in_the_way,
)


class NavErrorCode(enum.IntEnum):
    """Error codes of a failed goal: the numbers Nav2 Jazzy defines.

    ``NavigateToPose`` reports the code of the task that failed, as Jazzy's behaviour tree
    does: the planner's (``ComputePathToPose``, 200+) or the controller's (``FollowPath``,
    100+). Jazzy's ``NavigateToPose`` defines no failure codes of its own; a goal given in an
    unknown frame or with no robot pose gets the planner's ``TF_ERROR`` (202), a preempted goal
    0 (Nav2 aborts it with an empty result).
    """

    NONE = 0
    FOLLOW_UNKNOWN = 100
    FAILED_TO_MAKE_PROGRESS = 105
    CONTROLLER_TIMED_OUT = 107
    PLANNER_UNKNOWN = 200
    TF_ERROR = 202
    START_OUTSIDE_MAP = 203
    GOAL_OUTSIDE_MAP = 204
    NO_VALID_PATH = 208


def goal_problem(x: Any, y: Any) -> str | None:
    """Why ``(x, y)`` cannot be a navigation goal, or None when it can.

    A goal is two real numbers (int, float or numpy reals; not bool, str or complex), both
    finite. The navigator node, :class:`~maes_controller.nodes.controller_node.RosRobot` and direct
    mode all refuse what this names, with :attr:`NavErrorCode.GOAL_OUTSIDE_MAP`.

    Examples
    --------
    >>> goal_problem(1.0, -2) is None
    True
    >>> goal_problem(float("nan"), 0.0)
    'goal (nan, 0.0) is not a finite position'
    >>> goal_problem("1.0", 0.0)
    "goal ('1.0', 0.0) is not two numbers"
    """
    for v in (x, y):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            return f"goal ({x!r:.40}, {y!r:.40}) is not two numbers"
    try:
        fx, fy = float(x), float(y)
    except (OverflowError, ValueError):  # an int beyond float range
        return f"goal ({x!r:.40}, {y!r:.40}) is not a finite position"
    if not (math.isfinite(fx) and math.isfinite(fy)):
        return f"goal ({fx!r}, {fy!r}) is not a finite position"
    return None


def _lateral(model: str | None) -> bool:
    """Whether motion model ``model`` moves sideways (False for None, a type without one)."""
    return model is not None and MODELS[model].lateral


@dataclass(frozen=True)
class NavParams:
    """Tuning of a :class:`Navigator`; invalid values raise ``ValueError`` naming the field.

    Parameters
    ----------
    robot_radius : float
        Metres (> 0); obstacles are inflated by it.
    max_linear_speed, max_angular_speed : float
        Top commanded speeds, m/s and rad/s (> 0).
    inflation_radius : float
        Metres (>= ``robot_radius``): the costmap's cost decays to zero this far from walls.
    cost_scaling_factor : float
        Decay of the inflated cost per metre (Nav2's ``cost_scaling_factor``).
    safety_margin : float
        Metres (>= 0) of extra clearance the planner keeps from walls beyond the radius, so
        the follower's sideways tolerance cannot bring the robot into contact (capped below
        half a map cell, where the planner's clearance rule applies).
    goal_tolerance, waypoint_tolerance, lateral_tolerance, heading_tolerance,
    slowdown_distance, blocked_timeout, progress_epsilon : float
        Passed to :class:`~.following.FollowParams` (metres, rad, seconds).
    goal_timeout : float
        Seconds from :meth:`Navigator.start` before a goal aborts (``CONTROLLER_TIMED_OUT``).
    input_timeout : float
        Seconds without a pose (``TF_ERROR``) or a map (``NO_VALID_PATH``) before aborting.
    max_recoveries : int
        Consecutive recoveries (no progress) allowed before ``FAILED_TO_MAKE_PROGRESS``.
    backup_distance, backup_speed : float
        Nav2-style backup recovery: reverse this far (m) at this speed (m/s).
    allow_unknown : bool
        Plan through unknown cells (Nav2's global planner default).
    yield_to_robots : bool
        Hold a straight move while a sensed robot is in the corridor it sweeps next
        (:func:`~.yielding.robot_in_the_way`); held long enough, the recovery replans around.
    yield_margin, yield_lookahead : float
        Metres (>= 0): the corridor's extra half-width beyond two radii, and how far beyond
        contact distance it reaches ahead.
    close_margin : float
        Metres (>= 0): the corridor's extra half-width for a robot already within two radii
        plus ``yield_margin`` (a packed start: :func:`~.yielding.robots_in_the_way`).
    approach_time, approach_distance, approach_min_speed : float
        Slowing behind a robot (>= 0; ``approach_time`` 0: never, the default), as Nav2's
        collision monitor's ``approach`` action does for obstacles: a drive towards a robot
        sensed in the corridor ahead (two radii plus ``yield_margin`` wide, up to
        ``approach_distance`` metres beyond contact) is limited to the speed that would reach
        contact no sooner than ``approach_time`` seconds, but not below
        ``approach_min_speed`` m/s (the hold stops it, ``yield_lookahead`` from contact).
        Measured with 0.5 s and a 0.2 m ``yield_lookahead`` (docs/scaling.md, "Slowing behind
        a robot"): half the collisions of a crowd, but new stalls and less explored in 2
        minutes with 50 robots on a 75x75 building, so it is off.
    escape_distance : float
        Metres (>= 0): a robot whose drive is held by a robot already within two radii plus
        ``yield_margin`` (pressed in a crowd) first drives this far along the free heading
        nearest to "away from the robots around" (:func:`~.yielding.free_heading`), then
        re-plans: how a robot steps out of a crowd. 0: never.
    yield_timeout : float
        Seconds (> 0) a move may be held before the navigator recovers (replans around the
        robots, every second time backing up first), without waiting for ``blocked_timeout``.
    outranked_wait_factor : float
        (>= 1) How many times ``yield_timeout`` a robot waits when a robot in its way goes
        first (a lower index: :func:`~.yielding.outranked`).
    outranked_recoveries : int
        Recoveries without progress, each after a hold by robots that stood still, that an
        outranked robot makes before ``FAILED_TO_MAKE_PROGRESS`` (others: ``max_recoveries``).
    jam_radius, jam_pass_after : float
        A robot that has stayed within ``jam_radius`` metres (> 0) of one place for
        ``jam_pass_after`` seconds (>= 0; 0: never) while navigating (its goals one after
        another, no pause without one) is in a long jam. Held there by robots none of which
        goes before it, it drives on when none of them is within two radii plus
        ``close_margin`` of its line of travel: it passes them as close as contact allows,
        without the margin for the pose error (``yield_margin``). In a knot of robots
        that each hold for the ones beside them, the first in the order then moves and the
        knot dissolves (:mod:`.yielding`).
    progress_radius, progress_timeout : float
        Nav2's progress checker: a goal aborts (``FAILED_TO_MAKE_PROGRESS``) when the robot has
        not moved ``progress_radius`` metres from where it last did within
        ``progress_timeout`` seconds, or its path left has not become ``progress_radius``
        shorter than ever before within twice that (robots giving way to each other in turn).
    plan_around_robots : bool
        Plan every route around the robots sensed when that route ends where the plain one
        does and is at most ``detour_factor`` times as long plus ``detour_extra`` metres
        (recoveries take a way around of any length).
    detour_factor, detour_extra : float
        (>= 1, >= 0) The longest detour ``plan_around_robots`` takes.
    omnidirectional : bool
        The robot can strafe (``motion.model: omnidirectional``): the follower drives straight
        at each waypoint, turning towards it on the way, instead of turning in place first.

    Examples
    --------
    >>> p = NavParams(robot_radius=0.3, max_linear_speed=3.0, max_angular_speed=3.14)
    >>> p.follow_params().max_linear_speed
    3.0
    """

    robot_radius: float
    max_linear_speed: float
    max_angular_speed: float
    inflation_radius: float = 0.0
    cost_scaling_factor: float = 3.0
    safety_margin: float = 0.0
    goal_tolerance: float = 0.25
    waypoint_tolerance: float = 0.25
    lateral_tolerance: float = 0.1
    heading_tolerance: float = 0.5
    slowdown_distance: float = 1.0
    blocked_timeout: float = 3.0
    progress_epsilon: float = 0.05
    goal_timeout: float = 300.0
    input_timeout: float = 5.0
    max_recoveries: int = 6
    backup_distance: float = 0.3
    backup_speed: float = 0.5
    allow_unknown: bool = True
    yield_to_robots: bool = True
    yield_margin: float = 0.0
    yield_lookahead: float = 0.0
    close_margin: float = 0.0
    approach_time: float = 0.0
    approach_distance: float = 0.0
    approach_min_speed: float = 0.0
    escape_distance: float = 0.0
    yield_timeout: float = 1.0
    outranked_wait_factor: float = 2.0
    outranked_recoveries: int = 2
    jam_radius: float = 1.0
    jam_pass_after: float = 20.0
    progress_radius: float = 0.5
    progress_timeout: float = 15.0
    plan_around_robots: bool = True
    detour_factor: float = 1.5
    detour_extra: float = 2.0
    omnidirectional: bool = False

    def __post_init__(self) -> None:
        positive = (
            "robot_radius",
            "max_linear_speed",
            "max_angular_speed",
            "goal_tolerance",
            "waypoint_tolerance",
            "lateral_tolerance",
            "heading_tolerance",
            "slowdown_distance",
            "blocked_timeout",
            "progress_epsilon",
            "goal_timeout",
            "input_timeout",
            "backup_speed",
            "yield_timeout",
            "jam_radius",
            "progress_radius",
            "progress_timeout",
        )
        non_negative = (
            "inflation_radius",
            "cost_scaling_factor",
            "safety_margin",
            "backup_distance",
            "yield_margin",
            "yield_lookahead",
            "close_margin",
            "approach_time",
            "approach_distance",
            "approach_min_speed",
            "escape_distance",
            "jam_pass_after",
            "detour_extra",
        )
        for name in positive + non_negative:
            value = getattr(self, name)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            low_ok = value > 0 if name in positive else value >= 0
            if not (ok and low_ok and math.isfinite(value)):
                need = "> 0" if name in positive else ">= 0"
                raise ValueError(f"NavParams.{name} must be a finite number {need}, got {value!r}")
        for name in ("max_recoveries", "outranked_recoveries"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"NavParams.{name} must be an int >= 0, got {value!r}")
        for name in ("outranked_wait_factor", "detour_factor"):
            value = getattr(self, name)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not (ok and math.isfinite(value) and value >= 1):
                raise ValueError(f"NavParams.{name} must be a finite number >= 1, got {value!r}")
        self.follow_params()  # validates the follower's share now, not at the first goal

    @classmethod
    def from_config(cls, cfg: Any, robot: int = 0, **overrides: Any) -> NavParams:
        """Parameters for robot ``robot`` of a ``SimConfig``, in metres.

        The robot's type (``cfg.robot_type_per_robot()[robot]``) gives its radius and the top
        speeds of its motion model (``max_speed`` tiles/s, ``max_angular_speed`` rad/s: the
        core's, not restated here); tolerances are scaled by ``tile_size``, a goal timeout long
        enough to cross the map ten times, and a yielding corridor widened by half the SLAM
        position inaccuracy: the error of the navigator's smoothed pose against the sensed
        robots' positions (measured with ``slam_position_inaccuracy: 0.5``: median 0.09, 99th
        percentile 0.30, largest 0.41 tiles, 5 robots, 600 ticks).
        ``overrides`` replace any field.

        Examples
        --------
        >>> from types import SimpleNamespace as NS
        >>> kind = NS(radius=0.3, max_speed=3.0, max_angular_speed=math.pi)
        >>> cfg = NS(world=NS(tile_size=0.5), map=NS(width_in_tiles=20, height_in_tiles=10),
        ...          robot_constraints=NS(), robot_type_per_robot=lambda: [kind])
        >>> p = NavParams.from_config(cfg)
        >>> p.robot_radius, p.max_linear_speed, p.goal_timeout
        (0.15, 1.5, 100.0)
        """
        tile = float(cfg.world.tile_size)
        rc = cfg.robot_constraints
        kind = cfg.robot_type_per_robot()[robot]
        radius = kind.radius * tile
        speed = kind.max_speed * tile
        crossing = (cfg.map.width_in_tiles + cfg.map.height_in_tiles) * tile / speed
        # the robot's type's SLAM pose error (robot_constraints' when the type sets none)
        inaccuracy = float(
            getattr(kind, "slam_position_inaccuracy", getattr(rc, "slam_position_inaccuracy", 0.0))
        )
        values: dict[str, Any] = {
            "robot_radius": radius,
            "max_linear_speed": speed,
            "max_angular_speed": kind.max_angular_speed,
            "inflation_radius": radius + tile,
            "cost_scaling_factor": 3.0 / tile,
            "safety_margin": 0.1 * tile,
            "goal_tolerance": 0.25 * tile,
            "waypoint_tolerance": 0.25 * tile,
            "lateral_tolerance": 0.1 * tile,
            "slowdown_distance": 1.0 * tile,
            "progress_epsilon": 0.25 * tile,
            "goal_timeout": max(60.0, 10.0 * crossing),
            "backup_distance": 0.3 * tile,
            "progress_radius": 0.5 * tile,
            "detour_extra": 2.0 * tile,
            "backup_speed": 0.2 * speed,
            "yield_margin": (0.1 + 0.5 * inaccuracy) * tile,
            "yield_lookahead": 0.5 * tile,
            "close_margin": 0.01 * tile,
            "approach_distance": 2.0 * tile,
            "approach_min_speed": speed / 10.0,
            "escape_distance": 1.0 * tile,
            "jam_radius": 1.0 * tile,
            "omnidirectional": _lateral(getattr(kind, "motion_model", None)),
        }
        values.update(overrides)
        return cls(**values)

    def planning_radius(self, resolution: float) -> float:
        """Radius the planner keeps clear on a map of ``resolution``: radius plus margin.

        Examples
        --------
        >>> p = NavParams(robot_radius=0.3, max_linear_speed=1.0, max_angular_speed=1.0,
        ...               safety_margin=0.3)
        >>> p.planning_radius(1.0), p.planning_radius(0.25)
        (0.49, 0.6)
        """
        padded = self.robot_radius + self.safety_margin
        half = 0.5 * resolution
        if self.robot_radius < half <= padded:
            return min(padded, 0.98 * half)  # keep the sub-cell clearance rule of the planner
        return padded

    def follow_params(self) -> FollowParams:
        """The :class:`~.following.FollowParams` share of these parameters."""
        return FollowParams(
            max_linear_speed=self.max_linear_speed,
            max_angular_speed=self.max_angular_speed,
            heading_tolerance=self.heading_tolerance,
            lateral_tolerance=self.lateral_tolerance,
            waypoint_tolerance=self.waypoint_tolerance,
            goal_tolerance=self.goal_tolerance,
            slowdown_distance=self.slowdown_distance,
            blocked_timeout=self.blocked_timeout,
            progress_epsilon=self.progress_epsilon,
            omnidirectional=self.omnidirectional,
        )


@dataclass(frozen=True)
class NavStep:
    """What one :meth:`Navigator.update` decided.

    Attributes
    ----------
    linear, angular : float
        Velocity command, m/s and rad/s (zero unless ``status`` is ACTIVE).
    status : NavStatus
        IDLE before the first goal; ACTIVE while navigating; then SUCCEEDED, ABORTED or
        CANCELED.
    distance_remaining : float
        Path length left, metres (``nan`` before the first plan).
    navigation_time : float
        Seconds since the goal started.
    estimated_time_remaining : float
        ``distance_remaining / max_linear_speed`` seconds.
    number_of_recoveries : int
        Recoveries (replans after no progress) during this goal.
    error_code : int
        A :class:`NavErrorCode` value; 0 unless ABORTED.
    error_msg : str
        Why it aborted ("" otherwise).
    path : list of (x, y)
        The current plan, dense (one point per map cell), from the robot to the goal; empty
        without one.
    replanned : bool
        True when ``path`` is new since the previous step (publish it).
    waypoint, poses_remaining : int
        Tasks of poses in sequence (:mod:`.tasks`): the index of the goal being approached and
        how many goals are left (that one included).
    traveled : float
        Behaviours (:mod:`.tasks`): distance (m) or angle (rad) travelled so far.
    missed : tuple of (index, error code)
        ``follow_waypoints``: the waypoints missed so far.
    lateral : float
        Sideways velocity command, m/s to the robot's left (an omnidirectional robot's
        follower; 0 otherwise).
    """

    linear: float = 0.0
    angular: float = 0.0
    status: NavStatus = NavStatus.IDLE
    distance_remaining: float = math.nan
    navigation_time: float = 0.0
    estimated_time_remaining: float = 0.0
    number_of_recoveries: int = 0
    error_code: int = 0
    error_msg: str = ""
    path: list[tuple[float, float]] = field(default_factory=list)
    replanned: bool = False
    waypoint: int = 0
    poses_remaining: int = 0
    traveled: float = 0.0
    missed: tuple[tuple[int, int], ...] = ()
    lateral: float = 0.0


#: NavStep's plain defaults (every field but ``path``, whose default is a factory), for
#: :meth:`Navigator._emit`'s construction without the frozen ``__init__``
_STEP_DEFAULTS = {f.name: f.default for f in fields(NavStep) if f.default is not MISSING}


def costmap_values(grid: GridMap, params: NavParams) -> np.ndarray:
    """The Nav2-style costmap the navigator plans on, as published on ``global_costmap/costmap``.

    Parameters
    ----------
    grid : GridMap
        The robot's map.
    params : NavParams

    Returns
    -------
    int8 (H, W)
        0 free, 1..98 inflated, 99 inscribed, 100 lethal, -1 unknown.

    Examples
    --------
    >>> g = GridMap.from_array(np.array([[0, 0, 100, -1]]), resolution=1.0)
    >>> p = NavParams(robot_radius=0.3, max_linear_speed=1.0, max_angular_speed=1.0,
    ...               inflation_radius=1.3)
    >>> costmap_values(g, p)
    array([[  0,  12, 100,  -1]], dtype=int8)
    """
    res = grid.resolution
    return costmap_from_occupancy(
        grid.array,
        params.robot_radius / res,
        max(params.inflation_radius, params.robot_radius) / res,
        params.cost_scaling_factor * res,
        occupied_threshold=grid.occupied_threshold,
    )


def _costmap_of(params: NavParams) -> Any:
    """``grid -> costmap_values(grid, params)``, read-only (kept with the grid and shared)."""

    def compute(grid: GridMap) -> np.ndarray:
        costs = costmap_values(grid, params)
        costs.flags.writeable = False
        return costs

    return compute


def robots_as_obstacles(
    costs: np.ndarray, grid: GridMap, positions: Sequence[Sequence[float]], radius: float
) -> np.ndarray:
    """A copy of ``costs`` with lethal discs of ``radius`` (metres) around other robots.

    A cell is marked when any part of it lies within ``radius`` of a position (a robot centre
    there would come that close); use twice the robot radius (two discs touching).

    Examples
    --------
    >>> g = GridMap.from_array(np.zeros((3, 5), dtype=np.int8), 1.0)
    >>> robots_as_obstacles(g.array, g, [(2.0, 1.5)], 0.6)
    array([[  0, 100, 100,   0,   0],
           [  0, 100, 100,   0,   0],
           [  0, 100, 100,   0,   0]], dtype=int8)
    """
    out = np.array(costs, dtype=np.int8, copy=True)
    res = grid.resolution
    xs = grid.origin_x + (np.arange(grid.width) + 0.5) * res
    ys = grid.origin_y + (np.arange(grid.height) + 0.5) * res
    points = np.array(positions, dtype=np.float64).reshape(-1, 2)
    # every position's window of cells, in one compiled pass (the same test per cell)
    mark_discs(
        out, xs, ys, points, float(grid.origin_x), float(grid.origin_y), float(res), float(radius)
    )
    return out


#: A robot in the way that got this much farther (metres) since the last step is leaving ...
LEAVING_SPEED = 0.02
#: ... and is followed, not waited for, while more than this gap (metres) from contact.
LEAVING_GAP = 0.1


def _free_cells(grid: GridMap) -> np.ndarray:
    """Bool (H, W): cells that are not walls (unknown ones included), read-only."""
    free = grid.array < grid.occupied_threshold
    free.flags.writeable = False
    return free


def _pose(pose: Sequence[float] | None) -> tuple[float, float, float] | None:
    if pose is None:
        return None
    try:
        x, y, yaw = pose
        x, y, yaw = float(x), float(y), float(yaw)
    except (TypeError, ValueError):
        raise ValueError(f"pose must be (x, y, yaw) or None, got {pose!r}") from None
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(yaw)):
        raise ValueError(f"pose must be finite, got {(x, y, yaw)}")
    return x, y, yaw


#: Types known to be ``Sequence`` (an ABC's answer never changes): asked once per type, not on
#: every step of every robot.
_SEQUENCE_TYPES: set[type] = {list, tuple}


def _as_sequence(items: Any) -> Sequence[Any]:
    """``items`` itself when it is a ``Sequence``, else a list of it."""
    kind = type(items)
    if kind in _SEQUENCE_TYPES:
        return items
    if isinstance(items, Sequence):
        _SEQUENCE_TYPES.add(kind)
        return items
    return list(items)


class Navigator:
    """One robot's navigation session (see the module docstring).

    Parameters
    ----------
    params : NavParams
    rank : int, optional
        The robot's place in the yielding order (its index: a lower one goes first; see
        :mod:`.yielding`); None: it lets no robot go first.

    Examples
    --------
    A 7 x 3 room with a wall stub; the robot at the left end, facing +x:

    >>> walls = np.zeros((3, 7), dtype=np.int8); walls[0:2, 3] = 100
    >>> grid = GridMap.from_array(walls, resolution=1.0, origin_x=-3.5, origin_y=-1.5)
    >>> nav = Navigator(NavParams(robot_radius=0.3, max_linear_speed=1.0, max_angular_speed=2.0))
    >>> nav.start((3.0, -1.0), now=0.0)
    >>> step = nav.update((-3.0, -1.0, 0.0), grid, now=0.1)
    >>> step.status.name, step.linear, round(step.angular, 2), round(step.distance_remaining, 2)
    ('ACTIVE', 0.0, 2.0, 7.66)
    >>> nav.cancel(now=0.2).status.name
    'CANCELED'
    """

    def __init__(self, params: NavParams, rank: int | None = None) -> None:
        if not isinstance(params, NavParams):
            raise TypeError(f"params must be NavParams, got {type(params).__name__}")
        if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int)):
            raise TypeError(f"rank must be an int or None, got {rank!r}")
        self.params = params
        self.rank = rank
        self._follow = params.follow_params()
        self._status = NavStatus.IDLE
        self._goal: tuple[float, float] | None = None
        self._last = NavStep()
        self._costs_for: GridMap | None = None
        self._costs: np.ndarray | None = None
        #: Where the robot has stayed (within ``jam_radius``) since when, while navigating:
        #: (x, y, since), or None without a goal (see ``jam_pass_after``).
        self._anchor: tuple[float, float, float] | None = None
        self._reset_goal(0.0)

    # -- public -------------------------------------------------------------------------------

    @property
    def status(self) -> NavStatus:
        """The session's :class:`~.robot_api.NavStatus`."""
        return self._status

    @property
    def goal(self) -> tuple[float, float] | None:
        """The current or last goal ``(x, y)``, or None."""
        return self._goal

    @property
    def last_step(self) -> NavStep:
        """The :class:`NavStep` of the latest update (or of start/cancel)."""
        return self._last

    @property
    def holding(self) -> bool:
        """Whether the latest update held the drive for a robot in the way (yielding)."""
        return self._hold is not None

    def start(self, goal_xy: Sequence[float], now: float, keep_progress: bool = False) -> None:
        """Begin navigating to ``goal_xy`` (metres, map frame), replacing any current goal.

        ``keep_progress``: the new goal preempts the running one, and the progress check (no
        ``progress_radius`` metres of movement within ``progress_timeout`` seconds) goes on
        from where it was, as Nav2's controller server keeps its progress checker for a
        preempting goal. A robot held in a crowd whose logic keeps changing its goal then still
        gives up (FAILED_TO_MAKE_PROGRESS) instead of waiting afresh for every new goal.
        """
        try:
            gx, gy = (float(v) for v in goal_xy)
        except (TypeError, ValueError):
            raise ValueError(f"goal_xy must be an (x, y) pair, got {goal_xy!r}") from None
        if not (math.isfinite(gx) and math.isfinite(gy)):
            raise ValueError(f"goal_xy must be finite, got {(gx, gy)}")
        self._goal = (gx, gy)
        checkpoint = (
            self._checkpoint if keep_progress and self._status is NavStatus.ACTIVE else None
        )
        self._reset_goal(float(now))
        if checkpoint is not None:
            self._checkpoint = checkpoint
        self._status = NavStatus.ACTIVE
        self._last = NavStep(status=NavStatus.ACTIVE)

    def refuse(self, error_msg: str) -> NavStep:
        """Refuse a new goal that cannot be navigated (e.g. :func:`goal_problem` named why).

        As a new goal would, it replaces the current one: the session ends ABORTED with
        :attr:`NavErrorCode.GOAL_OUTSIDE_MAP` and ``error_msg``; the robot should be stopped.
        """
        self._status = NavStatus.ABORTED
        self._last = NavStep(
            status=NavStatus.ABORTED,
            error_code=int(NavErrorCode.GOAL_OUTSIDE_MAP),
            error_msg=str(error_msg),
        )
        return self._last

    def cancel(self, now: float) -> NavStep:
        """Stop the current goal (CANCELED); no effect when none is active."""
        if self._status is NavStatus.ACTIVE:
            self._status = NavStatus.CANCELED
            self._last = self._finished(float(now), NavStatus.CANCELED, self._last)
        return self._last

    def costmap_values(self, grid: GridMap) -> np.ndarray:
        """:func:`costmap_values` of ``grid``, kept with the grid (:meth:`GridMap.derived`):
        computed once per grid object and parameters, whichever navigator asks first."""
        if grid is not self._costs_for:
            params = self.params
            self._costs = grid.derived(("navigator costmap", params), _costmap_of(params))
            self._costs_for = grid
        return self._costs

    def update(
        self,
        pose_xyyaw: Sequence[float] | None,
        grid: GridMap | None,
        now: float,
        robots: Sequence[Sequence[float]] = (),
        robot_ids: Sequence[int | None] | None = None,
    ) -> NavStep:
        """One control step.

        Parameters
        ----------
        pose_xyyaw : (x, y, yaw) or None
            The robot's pose in the map frame; None while unknown (no tf yet).
        grid : GridMap or None
            The robot's latest map (pass the same object until a new map arrives: a new object
            triggers the route check); None before the first.
        now : float
            Seconds (sim time).
        robots : sequence of (x, y)
            Positions (map frame) of other robots nearby, e.g. ``State.nearby_robots``;
            plans go around them and drives yield to them.
        robot_ids : sequence of int or None, optional
            Their indices (``robot<i>``), in the same order: the yielding order. None: unknown.

        Returns
        -------
        NavStep
        """
        pose = _pose(pose_xyyaw)
        now = float(now)
        # read only when a plan goes around them: kept as given until then
        self._previous = self._seen  # where the robots were at the last step, by id
        self._robots = _as_sequence(robots)
        self._robots_xy = None  # their positions as the yielding checks read them (once)
        self._robot_ids = robot_ids
        self._seen = None if robot_ids is None else (robot_ids, self._robots)
        p = self.params
        if self._status is not NavStatus.ACTIVE:
            self._anchor = None
            self._last = replace(self._last, linear=0.0, angular=0.0, replanned=False)
            return self._last
        elapsed = now - self._started
        if elapsed > p.goal_timeout:
            return self._abort(
                now,
                NavErrorCode.CONTROLLER_TIMED_OUT,
                f"goal {self._goal} not reached within the goal timeout ({p.goal_timeout:g} s)",
            )
        if pose is None or grid is None:
            waited = now - self._started
            if waited > p.input_timeout:
                if pose is None:
                    return self._abort(
                        now,
                        NavErrorCode.TF_ERROR,
                        f"no robot pose (map -> base_footprint) for {waited:g} s",
                    )
                return self._abort(
                    now, NavErrorCode.NO_VALID_PATH, f"no map to plan on for {waited:g} s"
                )
            return self._emit(now, 0.0, 0.0, replanned=False)

        anchor = self._anchor
        if anchor is None or math.hypot(pose[0] - anchor[0], pose[1] - anchor[1]) > p.jam_radius:
            self._anchor = (pose[0], pose[1], now)
        if math.hypot(pose[0] - self._checkpoint[0], pose[1] - self._checkpoint[1]) >= (
            p.progress_radius
        ) or math.isnan(self._checkpoint[0]):
            self._checkpoint = (pose[0], pose[1], now)
        elif now - self._checkpoint[2] > p.progress_timeout:
            return self._abort(
                now,
                NavErrorCode.FAILED_TO_MAKE_PROGRESS,
                f"no progress towards {self._goal}: moved less than {p.progress_radius:g} m "
                f"in {p.progress_timeout:g} s",
            )
        if self._remaining < self._closest[0] - p.progress_radius:
            self._closest = (self._remaining, now)
        elif now - self._closest[1] > 2.0 * p.progress_timeout:
            # moving, but never closer: robots that keep giving way to each other
            return self._abort(
                now,
                NavErrorCode.FAILED_TO_MAKE_PROGRESS,
                f"no progress towards {self._goal}: its path got no {p.progress_radius:g} m "
                f"shorter in {2.0 * p.progress_timeout:g} s",
            )

        replanned = False
        if self._route is None or (
            grid is not self._grid and not self._escaping and not self._route_clear(pose, grid)
        ):
            failure = self._plan(pose, grid, now, avoid_robots=p.plan_around_robots, detour=True)
            if failure is not None:
                return failure
            replanned = True
        self._grid = grid

        if self._backup_until is not None:
            if now < self._backup_until:
                back = 0.0 if self._in_the_way(pose, -1.0) else -p.backup_speed
                return self._emit(now, back, 0.0, replanned)
            self._backup_until = None
            failure = self._plan(pose, grid, now, avoid_robots=True)
            if failure is not None:
                return failure
            replanned = True
        elif self._escaping and self._follow_state is not None and self._follow_state.target:
            # stepped out: the way on from here
            failure = self._plan(pose, grid, now, avoid_robots=p.plan_around_robots, detour=True)
            if failure is not None:
                return failure
            replanned = True

        cmd = follow_rows(*pose, self._rows, self._follow, self._follow_state, now, self._tails)
        self._follow_state = cmd.state
        self._remaining = cmd.remaining
        if cmd.status is FollowStatus.SUCCEEDED:
            self._status = NavStatus.SUCCEEDED
            self._last = self._finished(now, NavStatus.SUCCEEDED, self._emit(now, 0, 0, False))
            return self._last
        if cmd.status is FollowStatus.BLOCKED:
            return self._recover(pose, grid, now)
        if cmd.state.best_remaining < self._best_remaining_at_recovery - p.goal_tolerance:
            self._consecutive_recoveries = 0  # real progress since the last recovery
        linear, lateral = cmd.linear, cmd.lateral
        # the drive's own direction: along the heading, or (strafing) the velocity's
        heading, direction = pose, linear
        if lateral != 0.0:
            heading = (pose[0], pose[1], pose[2] + math.atan2(lateral, linear))
            direction = 1.0
        turning = direction == 0.0 and cmd.angular != 0.0
        if turning:  # look before turning: the drive the turn is for
            wx, wy = self._rows[cmd.state.target]
            heading, direction = (pose[0], pose[1], math.atan2(wy - pose[1], wx - pose[0])), 1.0
        # a robot beyond the goal is not in the way: this one stops before it
        blockers = self._blockers(heading, direction, reach=cmd.remaining)
        if blockers and self._previous:
            blockers = [k for k in blockers if not self._leaving(pose, k)]
        if blockers and turning and not self._crowded(pose, [self._robots[k] for k in blockers]):
            blockers = []  # out in the open, turn now: the way may be free by then
        passing = False  # a long jam: passing the robots in the way as close as contact allows
        if blockers and self._pass_close(now, blockers):
            passing = not self._blockers(heading, direction, cmd.remaining, p.close_margin)
            if passing:
                blockers = []
        if blockers:
            ids = self._ids_of(blockers)
            positions = [self._robots[k] for k in blockers]
            if self._hold is None:
                self._hold = Hold(now, positions, ids)
            else:
                self._hold.see(positions, ids)
            hold = self._hold
            if self._crowded(pose, positions):
                # pressed in a crowd: step out where there is room; with none, wait for
                # the robots outside to go first (the progress checker bounds the wait)
                if not self._escaping and now >= hold.next_try:
                    hold.next_try = now + 0.5 * p.yield_timeout
                    if self._escape(pose, grid, backwards=outranked(self.rank, ids)):
                        self._hold = None
                        return self._emit(now, 0.0, 0.0, replanned)
                return self._emit(now, 0.0, 0.0, replanned)
            behind = outranked(self.rank, ids)
            wait = p.yield_timeout * (p.outranked_wait_factor if behind else 1.0)
            if now - hold.since >= wait:
                self._hold = None
                return self._recover(
                    pose, grid, now, counted=not hold.moving, outranked=behind, by_robots=True
                )
            linear = lateral = 0.0  # hold, and let the other robot pass
        elif not passing:  # a pass keeps its hold: the jam goes on until the way is free
            self._hold = None
        if linear > 0.0 and lateral == 0.0 and p.approach_time > 0 and p.yield_to_robots:
            gap = self._gap_ahead(heading)
            if gap < math.inf:  # a robot ahead: reach it no sooner than approach_time
                linear = min(linear, max(p.approach_min_speed, gap / p.approach_time))
        return self._emit(now, linear, cmd.angular, replanned, lateral)

    # -- internals ----------------------------------------------------------------------------

    def _reset_goal(self, now: float) -> None:
        self._started = now
        self._route: Route | None = None
        self._set_waypoints(np.empty((0, 2)))
        self._dense: list[tuple[float, float]] = []
        self._grid: GridMap | None = None
        self._follow_state: FollowState | None = None
        self._remaining = math.nan
        self._recoveries = 0
        self._consecutive_recoveries = 0
        self._best_remaining_at_recovery = math.inf
        self._backup_until: float | None = None
        self._hold: Hold | None = None
        self._escaping = False  # the first waypoint is a step out of a crowd
        self._checkpoint = (math.nan, math.nan, now)  # progress checker: where, when
        self._closest = (math.inf, now)  # the shortest path left so far, and when
        self._robots: Sequence[Sequence[float]] = ()
        self._robots_xy: Sequence[Sequence[float]] | np.ndarray | None = None
        self._robot_ids: Sequence[int | None] | None = None
        self._seen: tuple | None = None  # (ids, positions) of the robots at the last step
        self._previous: tuple | None = None

    def _set_waypoints(self, waypoints: np.ndarray) -> None:
        """The waypoints to follow (float (K, 2), finite), kept with what the follower reads
        every step: their rows as Python floats and their :func:`~.following.path_tails`."""
        self._waypoints = waypoints
        self._rows: list[list[float]] = waypoints.tolist()
        self._tails: list[float] = path_tails(waypoints)

    def _plan(
        self,
        pose: tuple[float, float, float],
        grid: GridMap,
        now: float,
        avoid_robots: bool = False,
        detour: bool = False,
    ) -> NavStep | None:
        """Plan from the pose; the aborted step on failure, None on success.

        ``avoid_robots``: take a way around the robots sensed when one ends where the plain
        route does; ``detour``: only when it is at most the detour limit longer.
        """
        p = self.params
        goal = self._goal
        if not grid.in_bounds(*grid.pos_to_cell(*goal)):
            return self._abort(
                now, NavErrorCode.GOAL_OUTSIDE_MAP, f"goal {goal} lies outside the robot's map"
            )
        if not grid.in_bounds(*grid.pos_to_cell(pose[0], pose[1])):
            return self._abort(
                now,
                NavErrorCode.START_OUTSIDE_MAP,
                f"robot position {pose[:2]} lies outside its map",
            )
        radius = p.planning_radius(grid.resolution)
        costs = self.costmap_values(grid)
        route = plan_route(grid, pose[:2], goal, radius, costs=costs, allow_unknown=p.allow_unknown)
        robots = [(float(x), float(y)) for x, y in self._robots] if avoid_robots else []
        if route is not None and robots:
            # a detour goes around the cells the robots stand in (the coarse map cannot thread
            # between packed robots); a recovery keeps two radii from them
            blocked = robots_as_obstacles(
                costs, grid, robots, 0.0 if detour else 2.0 * p.robot_radius
            )
            around = plan_route(
                grid, pose[:2], goal, radius, costs=blocked, allow_unknown=p.allow_unknown
            )
            # Only a way around the robots to the same end: a goal a robot stands on would
            # otherwise move to the nearest free cell, and the robot would "succeed" there.
            short = around is not None and (
                not detour or around.length <= p.detour_factor * route.length + p.detour_extra
            )
            if short and around.waypoints[-1] == route.waypoints[-1]:
                route = around
        if route is None:
            return self._abort(
                now,
                NavErrorCode.NO_VALID_PATH,
                f"no path from {tuple(round(v, 2) for v in pose[:2])} to goal "
                f"{goal} on the robot's map",
            )
        self._route = route
        self._set_waypoints(np.asarray(route.waypoints, dtype=np.float64))
        dense = [grid.cell_to_pos(ix, iy) for ix, iy in route.cells]
        dense[0] = (pose[0], pose[1])
        dense[-1] = route.waypoints[-1]
        self._dense = dense
        self._follow_state = None
        self._escaping = False
        self._grid = grid
        return None

    def _leaving(self, pose: tuple[float, float, float], k: int) -> bool:
        """Whether robot ``k`` (sensed now) moved away from this one since the last step and
        is still more than a small gap from contact: a robot to follow, not to wait for."""
        p = self.params
        ids, positions = self._previous
        me = self._robot_ids[k]
        if me is None:
            return False
        try:
            x0, y0 = positions[ids.index(me)]
        except ValueError:
            return False
        x, y = self._robots[k]
        now = math.hypot(x - pose[0], y - pose[1])
        before = math.hypot(x0 - pose[0], y0 - pose[1])
        gap = 2.0 * p.robot_radius + p.close_margin + LEAVING_GAP
        return now - before >= LEAVING_SPEED and now > gap

    def _crowded(
        self, pose: tuple[float, float, float], positions: Sequence[Sequence[float]]
    ) -> bool:
        """Whether a robot in the way is already within two radii plus ``yield_margin``."""
        p = self.params
        near = 2.0 * p.robot_radius + p.yield_margin
        return any(math.hypot(x - pose[0], y - pose[1]) < near for x, y in positions)

    def _escape(
        self, pose: tuple[float, float, float], grid: GridMap, backwards: bool = True
    ) -> bool:
        """When the route starts into a robot, put a step out along the nearest free heading
        (:func:`~.yielding.free_heading`) before it; the route is planned again from there.
        ``backwards``: any heading (an outranked robot gives way); else only within 90 degrees
        of the route's (the robot that goes first keeps its ground). Returns whether it did."""
        p = self.params
        if p.escape_distance <= 0 or not self._waypoints.shape[0] or not p.yield_to_robots:
            return False
        wx, wy = self._waypoints[0]
        desired = math.atan2(wy - pose[1], wx - pose[0])
        if not self._blockers((pose[0], pose[1], desired), 1.0):
            return False
        res = grid.resolution
        free = grid.derived(("navigator free", grid.occupied_threshold), _free_cells)
        clearance = p.robot_radius / res

        def clear(x: float, y: float) -> bool:
            ox, oy = grid.origin_x, grid.origin_y
            a = ((pose[0] - ox) / res, (pose[1] - oy) / res)
            b = ((x - ox) / res, (y - oy) / res)
            h, w = free.shape
            inside = 0 <= b[0] < w and 0 <= b[1] < h
            return inside and segment_clear(free, a[0], a[1], b[0], b[1], clearance)

        # in a crowd, outwards first: away from the robots around, so the crowd empties
        # from the outside in; else as near to the route as there is room
        prefer = desired
        near = 2.0 * p.robot_radius + p.yield_margin
        around = [
            (dx, dy) for dx, dy in self._offsets_within(pose, near) if math.hypot(dx, dy) < near
        ]
        if around:
            prefer = math.atan2(-sum(d[1] for d in around), -sum(d[0] for d in around))
        heading = free_heading(
            pose,
            prefer,
            self._yield_positions(),
            p.robot_radius,
            p.yield_margin,
            p.close_margin,
            p.escape_distance,
            clear,
            towards=None if backwards else desired,
        )
        if heading is None or heading == desired:
            return False
        step = (
            pose[0] + p.escape_distance * math.cos(heading),
            pose[1] + p.escape_distance * math.sin(heading),
        )
        self._set_waypoints(np.vstack([np.asarray([step]), self._waypoints]))
        self._follow_state = None
        self._escaping = True
        return True

    def _offsets_within(
        self, pose: tuple[float, float, float], near: float
    ) -> list[tuple[float, float]]:
        """``(x - pose x, y - pose y)`` of the robots sensed that may lie within ``near``, in
        their order: every one, or in a crowd (an array) those within ``near`` on both axes
        (with a margin; the caller applies the exact distance test, so the same robots)."""
        xy = self._yield_positions()
        if not isinstance(xy, np.ndarray):
            return [(x - pose[0], y - pose[1]) for x, y in xy]
        dx, dy = xy[:, 0] - pose[0], xy[:, 1] - pose[1]
        bound = near * (1.0 + 1e-9)
        keep = (np.abs(dx) < bound) & (np.abs(dy) < bound)
        return list(zip(dx[keep].tolist(), dy[keep].tolist(), strict=True))

    def _blockers(
        self,
        pose: tuple[float, float, float],
        direction: float,
        reach: float = math.inf,
        margin: float | None = None,
    ) -> list[int]:
        """Indices into the robots sensed of those in the way of a drive in ``direction``;
        ``margin``: the corridor's extra half-width (default ``yield_margin``)."""
        p = self.params
        if not p.yield_to_robots or direction == 0.0:
            return []
        lookahead = min(p.yield_lookahead, max(float(reach), 0.0))
        return robots_in_the_way(
            pose,
            direction,
            self._yield_positions(),
            p.robot_radius,
            p.yield_margin if margin is None else margin,
            lookahead,
            p.close_margin,
        )

    def _gap_ahead(self, pose: tuple[float, float, float]) -> float:
        """Metres from contact to the nearest robot sensed in the corridor ahead of a drive
        along ``pose``'s heading (two radii plus ``yield_margin`` wide, up to
        ``approach_distance`` beyond contact; 0 for one already closer than contact), or inf
        when there is none (:func:`~.yielding.gap_ahead`)."""
        p = self.params
        return gap_ahead(
            pose,
            self._yield_positions(),
            p.robot_radius,
            p.yield_margin,
            p.approach_distance,
        )

    def _pass_close(self, now: float, blockers: list[int]) -> bool:
        """Whether this robot may pass ``blockers`` (indices into the robots sensed) as close
        as contact allows: it has stood within ``jam_radius`` of one place for
        ``jam_pass_after`` seconds and none of them goes first."""
        p = self.params
        anchor = self._anchor
        return (
            p.jam_pass_after > 0
            and anchor is not None
            and now - anchor[2] >= p.jam_pass_after
            and not outranked(self.rank, self._ids_of(blockers))
        )

    def _yield_positions(self) -> Sequence[Sequence[float]] | np.ndarray:
        """The robots sensed at this step as the yielding checks read them (converted once)."""
        if self._robots_xy is None:
            self._robots_xy = as_positions(self._robots)
        return self._robots_xy

    def _in_the_way(
        self, pose: tuple[float, float, float], direction: float, reach: float = math.inf
    ) -> bool:
        return bool(self._blockers(pose, direction, reach))

    def _ids_of(self, indices: list[int]) -> list[int | None]:
        ids = self._robot_ids
        if ids is None:
            return [None] * len(indices)
        return [ids[k] for k in indices]

    def _route_clear(self, pose: tuple[float, float, float], grid: GridMap) -> bool:
        """Whether the remaining route's segments are still clear on ``grid``."""
        if grid.shape != self._grid.shape or (grid.resolution, grid.origin_x, grid.origin_y) != (
            self._grid.resolution,
            self._grid.origin_x,
            self._grid.origin_y,
        ):
            return False
        costs = self.costmap_values(grid)
        allow = self.params.allow_unknown
        trav = grid.derived(
            ("navigator traversable", self.params), lambda g: traversable_mask(costs, allow)
        )
        res = grid.resolution
        radius = self.params.planning_radius(res) / res
        clearance = radius if radius < 0.5 else 0.0
        target = self._follow_state.target if self._follow_state is not None else 0
        wps = self._route.waypoints
        prev = (
            wps[target - 1]
            if target > 0
            else (
                self._follow_state.start
                if self._follow_state and self._follow_state.start
                else pose[:2]
            )
        )
        points = [prev, *wps[target:]]
        for (ax, ay), (bx, by) in zip(points[:-1], points[1:], strict=True):
            if not segment_clear(
                trav,
                (ax - grid.origin_x) / res,
                (ay - grid.origin_y) / res,
                (bx - grid.origin_x) / res,
                (by - grid.origin_y) / res,
                clearance,
            ):
                return False
        return True

    def _recover(
        self,
        pose: tuple[float, float, float],
        grid: GridMap,
        now: float,
        counted: bool = True,
        outranked: bool = False,
        by_robots: bool = False,
    ) -> NavStep:
        """Re-plan around the robots (every second counted time backing up first); abort
        after too many counted recoveries. ``counted``: False after waiting for robots that
        moved (a crowd leaving is no failure); ``outranked``: a robot that goes first was in
        the way, and this robot gives up sooner; ``by_robots``: robots held the drive, so only
        an outranked robot backs up (the one that goes first holds its ground: backing up, it
        would cede the space the other then takes, and both would dance)."""
        p = self.params
        limit = p.outranked_recoveries if outranked else p.max_recoveries
        if counted:
            self._consecutive_recoveries += 1
        if self._consecutive_recoveries > limit:
            return self._abort(
                now,
                NavErrorCode.FAILED_TO_MAKE_PROGRESS,
                f"no progress towards {self._goal} after {limit} recoveries",
            )
        self._recoveries += 1
        # Only getting closer than at any earlier blockage resets the count: backing up and
        # driving back into the same obstacle is no progress.
        self._best_remaining_at_recovery = min(self._best_remaining_at_recovery, self._remaining)
        backs = outranked or not by_robots
        if counted and backs and self._consecutive_recoveries % 2 == 0 and p.backup_distance > 0:
            self._backup_until = now + p.backup_distance / p.backup_speed
            return self._emit(now, -p.backup_speed, 0.0, False)
        failure = self._plan(pose, grid, now, avoid_robots=True)
        if failure is not None:
            return failure
        return self._emit(now, 0.0, 0.0, True)

    def _emit(
        self, now: float, linear: float, angular: float, replanned: bool, lateral: float = 0.0
    ) -> NavStep:
        remaining = self._remaining
        if math.isnan(remaining) and self._route is not None:
            remaining = self._route.length
        # NavStep(...) without its frozen __init__'s per-field object.__setattr__ (a plain
        # frozen dataclass: no __post_init__, no slots), for every robot on every step
        step = object.__new__(NavStep)
        step.__dict__.update(
            _STEP_DEFAULTS,
            linear=float(linear),
            angular=float(angular),
            lateral=float(lateral),
            status=self._status,
            distance_remaining=remaining,
            navigation_time=now - self._started,
            estimated_time_remaining=(
                remaining / self.params.max_linear_speed if math.isfinite(remaining) else 0.0
            ),
            number_of_recoveries=self._recoveries,
            path=self._dense,
            replanned=replanned,
        )
        self._last = step
        return step

    def _abort(self, now: float, code: NavErrorCode, msg: str) -> NavStep:
        self._status = NavStatus.ABORTED
        step = self._emit(now, 0.0, 0.0, False)
        self._last = replace(step, status=NavStatus.ABORTED, error_code=int(code), error_msg=msg)
        return self._last

    def _finished(self, now: float, status: NavStatus, step: NavStep) -> NavStep:
        return replace(
            step,
            linear=0.0,
            angular=0.0,
            status=status,
            navigation_time=now - self._started,
            replanned=False,
        )
