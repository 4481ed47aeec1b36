"""Yielding to robots: who waits when robots are in each other's way, and for how long.

The MAES motion model drives straight or turns in place, so two discs can only touch while one
of them drives. Before a drive command is sent, :func:`robots_in_the_way` looks at the other
robots the robot senses (``State.nearby_robots``) and the drive is held (linear speed 0) while
one of them is inside the corridor the drive sweeps next: ahead (behind, when reversing) within
``lookahead``, and closer to the line of travel than two radii plus ``margin``. The margin
absorbs the difference between the robot's believed pose (its SLAM estimate) and the sensed
robots' positions.

A hold is bounded, and a total order decides who waits longer, so two robots (or a ring of
them) can never wait for each other for ever:

* **The order** is the robots' index (``robot<i>``: a lower index goes first), known from each
  sensed robot's id. A robot whose way is blocked by a robot that goes first is *outranked*.
* **Bounded wait.** A robot that goes first waits ``yield_timeout`` before it re-plans around
  the robots in its way (:func:`~.navigator.robots_as_obstacles`, as Nav2 re-plans when its
  costmap shows an obstacle); an outranked robot waits ``outranked_wait_factor`` times longer,
  so in a head-on meeting the first robot steers around a robot that stands still.
* **Giving way.** When the way stays blocked and nothing in it moves, each re-plan counts as a
  recovery without progress; an outranked robot gives up after fewer of them
  (:class:`Hold` only tracks the hold; the counting is the navigator's), so it is the one that
  reports ``FAILED_TO_MAKE_PROGRESS`` and lets its logic choose another goal, while the robot
  that goes first keeps its goal.
* **A crowd that moves is no jam.** While a robot in the way has moved since the hold began
  (a packed start emptying from the outside in), waiting counts as no failure: the robot waits
  for the crowd, bounded by the navigator's progress timeout. A robot passing by excuses no
  robot that stays: while one that was in the way when the hold began is still in it, unmoved,
  the hold is a jam (two robots in a door, each in the other's corridor, while a third walks
  past), and the re-plans count.
* **A long jam.** A robot that has stayed within ``jam_radius`` of one place for
  ``jam_pass_after`` seconds while navigating (:class:`~.navigator.NavParams`) and is held by
  robots none of which goes first drives on when none of them is within two radii plus
  ``close_margin`` of its line of travel: it passes as close as contact allows, without the
  margin for the pose error. In a knot where every robot holds for the ones beside it, the
  first in the order moves and the knot dissolves. A robot outranked by one in its way
  never passes close.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ._corridor import corridor_hits, headings_blocked

__all__ = [
    "Hold",
    "as_positions",
    "free_heading",
    "gap_ahead",
    "outranked",
    "robot_in_the_way",
    "robots_in_the_way",
]

#: A robot in the way that moved at least this far (metres) since a hold began is moving.
MOVED_DISTANCE = 0.1
#: From this many robots sensed on, the corridor test runs on arrays (a crowd: a packed start
#: senses dozens); below it a plain loop is quicker. Both give the same robots, to the bit.
ARRAY_FROM = 12


def as_positions(robots: Sequence[Sequence[float]] | np.ndarray) -> Sequence | np.ndarray:
    """``robots`` in the form :func:`robots_in_the_way` reads fastest: an (N, 2) float64 array
    for a crowd (:data:`ARRAY_FROM` robots or more), else as given. Convert once when the same
    robots are tested many times (every heading of :func:`free_heading`, every check of a
    navigator step).

    Examples
    --------
    >>> as_positions([(0.0, 1.0)])
    [(0.0, 1.0)]
    >>> as_positions([(float(k), 0.0) for k in range(12)]).shape
    (12, 2)
    """
    if isinstance(robots, np.ndarray) or len(robots) < ARRAY_FROM:
        return robots
    return np.asarray(robots, dtype=np.float64).reshape(-1, 2)


def robots_in_the_way(
    pose: Sequence[float],
    direction: float,
    robots: Sequence[Sequence[float]],
    radius: float,
    margin: float,
    lookahead: float,
    close_margin: float | None = None,
) -> list[int]:
    """Indices (into ``robots``) of the robots in the corridor a straight drive sweeps next.

    A robot already closer than two radii plus ``margin`` (robots spawned packed, or one that
    just passed) is in the way only when the drive would bring the two closer than two radii
    plus ``close_margin``: the margin for the pose error would otherwise hold every drive that
    does not point straight away from it, and a packed crowd could never leave.

    Parameters
    ----------
    pose : (x, y, yaw)
        The driving robot (metres, rad).
    direction : float
        Sign of the linear command: > 0 forwards, < 0 reversing, 0 never in the way.
    robots : sequence of (x, y)
        Other robots' centres (same frame).
    radius : float
        Robot radius (metres); two discs touch at ``2 * radius``.
    margin : float
        Extra sideways and forward clearance (metres).
    lookahead : float
        How far ahead of the robot's centre (metres) a robot may be and still count, measured
        to the other robot's centre, plus ``2 * radius``.
    close_margin : float, optional
        The sideways clearance (metres) for robots already within ``2 * radius + margin``;
        default ``margin``.

    Returns
    -------
    list of int

    Examples
    --------
    >>> robots_in_the_way((0.0, 0.0, 0.0), 1.0, [(1.0, 0.2), (-1.0, 0.0), (0.5, -0.1)], 0.3,
    ...                   0.2, 0.5)
    [0, 2]

    A neighbour 0.65 m away and 0.63 m to the side, with a 0.6 m contact distance:

    >>> robots_in_the_way((0.0, 0.0, 0.0), 1.0, [(0.15, 0.63)], 0.3, 0.5, 0.5)
    [0]
    >>> robots_in_the_way((0.0, 0.0, 0.0), 1.0, [(0.15, 0.63)], 0.3, 0.5, 0.5, close_margin=0.02)
    []
    """
    if direction == 0.0 or len(robots) == 0:
        return []
    heading = float(pose[2]) if direction > 0 else float(pose[2]) + math.pi
    c, s = math.cos(heading), math.sin(heading)
    px, py = float(pose[0]), float(pose[1])
    contact = 2.0 * radius
    ahead, beside = contact + lookahead, contact + margin
    close = beside if close_margin is None else contact + close_margin
    near2 = beside * beside
    if len(robots) >= ARRAY_FROM:
        # a crowd: the same arithmetic on arrays (IEEE operations element by element, in the
        # same order as the loop below, so the same robots to the bit)
        xy = _float_rows(robots if isinstance(robots, np.ndarray) else as_positions(robots))
        return corridor_hits(xy, px, py, c, s, ahead, beside, close).tolist()
    found = []
    # a plain loop over the few robots sensed (float arithmetic as numpy's, in the same order)
    for k, (x, y) in enumerate(robots):
        dx = float(x) - px
        dy = float(y) - py
        along = c * dx + s * dy
        if 0.0 < along <= ahead:
            side = abs(-s * dx + c * dy)
            if side < (close if dx * dx + dy * dy < near2 else beside):
                found.append(k)
    return found


def robot_in_the_way(
    pose: Sequence[float],
    direction: float,
    robots: Sequence[Sequence[float]],
    radius: float,
    margin: float,
    lookahead: float,
    close_margin: float | None = None,
) -> bool:
    """Whether a robot lies in the corridor a straight drive from ``pose`` sweeps next.

    The parameters are :func:`robots_in_the_way`'s.

    Examples
    --------
    >>> robot_in_the_way((0.0, 0.0, 0.0), 1.0, [(1.0, 0.2)], 0.3, 0.2, 0.5)
    True
    >>> robot_in_the_way((0.0, 0.0, 0.0), 1.0, [(-1.0, 0.0)], 0.3, 0.2, 0.5)  # behind
    False
    >>> robot_in_the_way((0.0, 0.0, 0.0), -1.0, [(-1.0, 0.0)], 0.3, 0.2, 0.5)  # reversing
    True
    >>> robot_in_the_way((0.0, 0.0, 0.0), 1.0, [(1.0, 0.9)], 0.3, 0.2, 0.5)  # beside the path
    False
    """
    return bool(robots_in_the_way(pose, direction, robots, radius, margin, lookahead, close_margin))


def gap_ahead(
    pose: Sequence[float],
    robots: Sequence[Sequence[float]] | np.ndarray,
    radius: float,
    margin: float,
    reach: float,
) -> float:
    """Metres from contact to the nearest robot in the corridor ahead of ``pose``: robots
    closer to the line of travel than two radii plus ``margin``, ahead of the robot's centre
    by at most two radii plus ``reach``. 0 for a robot already closer than contact; inf when
    the corridor is empty. What a robot slowing behind another reads
    (``NavParams.approach_time``); a crowd (an array from :func:`as_positions`) gives the same
    answer as the loop, to the bit.

    Examples
    --------
    >>> gap_ahead((0.0, 0.0, 0.0), [(1.0, 0.1), (0.8, 2.0), (-1.0, 0.0)], 0.3, 0.2, 2.0)
    0.4
    >>> gap_ahead((0.0, 0.0, 0.0), [(3.0, 0.0)], 0.3, 0.2, 2.0)
    inf
    """
    px, py, heading = float(pose[0]), float(pose[1]), float(pose[2])
    c, s = math.cos(heading), math.sin(heading)
    contact = 2.0 * radius
    ahead, beside = contact + reach, contact + margin
    if isinstance(robots, np.ndarray):
        if len(robots) == 0:
            return math.inf
        xy = _float_rows(robots)
        dx, dy = xy[:, 0] - px, xy[:, 1] - py
        along = c * dx + s * dy
        inside = (along > 0.0) & (along <= ahead) & (np.abs(-s * dx + c * dy) < beside)
        if not inside.any():
            return math.inf
        return max(float(along[inside].min()) - contact, 0.0)
    best = math.inf
    for x, y in robots:
        dx, dy = float(x) - px, float(y) - py
        along = c * dx + s * dy
        if 0.0 < along <= ahead and abs(-s * dx + c * dy) < beside:
            best = min(best, along - contact)
    return max(best, 0.0)


def outranked(rank: int | None, ids: Sequence[int | None]) -> bool:
    """Whether a robot of ``rank`` must let one of the robots ``ids`` go first.

    The order is the robot index: a lower index goes first. Robots of unknown index (None)
    outrank nobody, and a robot of unknown rank is outranked by nobody.

    Examples
    --------
    >>> outranked(3, [5, 1]), outranked(3, [5, 7]), outranked(None, [0]), outranked(3, [None])
    (True, False, False, False)
    """
    if rank is None:
        return False
    return any(i is not None and i < rank for i in ids)


class Hold:
    """One hold: since when the drive is held, and whether the robots in the way moved.

    The robots in the way are told apart by id (when known) and remembered where they were
    first seen in the way. The way *changed* once one of them moved :data:`MOVED_DISTANCE` or
    more, or a new robot came into it; :attr:`moving` is true while the way has changed and no
    robot that was in the way when the hold began is in it now, unmoved (one that stays is a
    jam, whoever passes by).

    Examples
    --------
    >>> h = Hold(now=1.0, positions=[(1.0, 0.0)], ids=[4])
    >>> h.see([(1.0, 0.0)], [4]); h.moving
    False
    >>> h.see([(1.3, 0.0)], [4]); h.moving
    True

    Robot 5 walks into the way while robot 4 stays put: still a jam, until robot 4 leaves.

    >>> h = Hold(now=1.0, positions=[(1.0, 0.0)], ids=[4])
    >>> h.see([(1.0, 0.0), (0.8, 0.3)], [4, 5]); h.moving
    False
    >>> h.see([(0.8, 0.4)], [5]); h.moving
    True
    """

    def __init__(
        self, now: float, positions: Sequence[Sequence[float]], ids: Sequence[int | None]
    ) -> None:
        self.since = float(now)
        #: When the holding robot may next look for a way out of a crowd.
        self.next_try = float(now)
        self._first: dict[int | None, tuple[float, float]] = {
            i: (float(x), float(y)) for (x, y), i in zip(positions, ids, strict=True)
        }
        #: The robots in the way when the hold began.
        self._start = frozenset(self._first)
        #: Whether a robot in the way moved or a new one came since the hold began.
        self._changed = False
        #: Whether one of :attr:`_start` was in the way, unmoved, at the last :meth:`see`.
        self._stuck = bool(self._first)

    @property
    def moving(self) -> bool:
        """Whether the way is changing (a crowd moving), not jammed."""
        return self._changed and not self._stuck

    def see(self, positions: Sequence[Sequence[float]], ids: Sequence[int | None]) -> None:
        """Note the robots in the way at this step (positions and ids, in the same order)."""
        stuck = False
        for (x, y), i in zip(positions, ids, strict=True):
            first = self._first.get(i)
            if first is None:
                if self._first and i is not None:
                    self._changed = True  # another robot came into the way: the crowd moves
                self._first[i] = (float(x), float(y))
            elif math.hypot(float(x) - first[0], float(y) - first[1]) >= MOVED_DISTANCE:
                self._changed = True
            elif i in self._start:
                stuck = True  # in the way since the hold began, and still where it was
        self._stuck = stuck


def free_heading(
    pose: Sequence[float],
    desired: float,
    robots: Sequence[Sequence[float]],
    radius: float,
    margin: float,
    close_margin: float,
    distance: float,
    clear: Callable[[float, float], bool] | None = None,
    steps: int = 72,
    towards: float | None = None,
) -> float | None:
    """The heading nearest to ``desired`` along which the robot can drive ``distance`` metres
    with no robot in its way: a way out of a crowd for a robot that drives only straight.

    Headings are tried in ``steps`` equal turns, nearest to ``desired`` first (ties: turning
    left first). A heading is free when :func:`robots_in_the_way` finds nobody in its corridor
    up to ``distance`` beyond contact and ``clear(x, y)`` (when given) accepts the end point
    (e.g. no wall on the way). ``towards`` (rad): only headings within 90 degrees of it.

    Returns
    -------
    float or None
        The heading (rad), or None when every heading is blocked.

    Examples
    --------
    A robot with a neighbour just ahead and one to the left may leave to the right:

    >>> h = free_heading((0.0, 0.0, 0.0), 0.0, [(0.65, 0.0), (0.0, 0.65)], 0.3, 0.2, 0.02, 1.0)
    >>> round(math.degrees(h))
    -75
    """
    x, y = float(pose[0]), float(pose[1])
    robots = as_positions(robots)  # once for every heading tried
    order = [0]
    for k in range(1, steps // 2 + 1):
        order += [k, -k] if k < steps - k else [k]
    headings = [desired + 2.0 * math.pi * k / steps for k in order]
    if towards is not None:
        headings = [h for h in headings if math.cos(h - towards) >= 0.0]
    blocked = _blocked_headings(x, y, headings, robots, radius, margin, distance, close_margin)
    for heading, no_way in zip(headings, blocked, strict=True):
        if no_way:
            continue
        end = (x + distance * math.cos(heading), y + distance * math.sin(heading))
        if clear is None or clear(*end):
            return math.atan2(math.sin(heading), math.cos(heading))
    return None


def _blocked_headings(
    x: float,
    y: float,
    headings: Sequence[float],
    robots: Sequence[Sequence[float]] | np.ndarray,
    radius: float,
    margin: float,
    lookahead: float,
    close_margin: float,
) -> list[bool]:
    """For each heading, whether :func:`robots_in_the_way` finds a robot in the corridor of a
    drive from ``(x, y)`` along it. A crowd (an array from :func:`as_positions`) is tested for
    every heading at once: each heading's sine and cosine from :mod:`math`, as
    :func:`robots_in_the_way` takes them, and the same element-wise arithmetic, so the same
    answers to the bit.
    """
    if not isinstance(robots, np.ndarray) or len(robots) == 0 or not headings:
        return [
            bool(robots_in_the_way((x, y, h), 1.0, robots, radius, margin, lookahead, close_margin))
            for h in headings
        ]
    c = np.array([math.cos(h) for h in headings])
    s = np.array([math.sin(h) for h in headings])
    contact = 2.0 * radius
    ahead, beside, close = contact + lookahead, contact + margin, contact + close_margin
    xy = _float_rows(robots)
    return headings_blocked(xy, float(x), float(y), c, s, ahead, beside, close).tolist()


def _float_rows(xy: np.ndarray) -> np.ndarray:
    """``xy`` as the kernels take it: C-contiguous float64 (K, 2) (a copy only if needed)."""
    return np.ascontiguousarray(xy, dtype=np.float64).reshape(-1, 2)
