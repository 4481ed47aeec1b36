"""Exploration and coverage metrics, recency heatmaps and statistics snapshots.

Definitions (MAES 2.0's measures on a tile grid):

* **explored**: a tile reached by any robot's lidar ray (the hit tile included), at any time.
* **coverage** (MAES 2.0's, its ``CoverageCalculator``): each tile is 2 x 2 *mini-tiles* of half
  a tile (MAES's SLAM resolution). Every tick a robot covers the 3 x 3 mini-tiles around the
  mini-tile holding its centre (1.5 x 1.5 tiles; MAES marks all of them "regardless of distance
  from the robot"), those of open tiles only. ``coverage_percent`` is covered mini-tiles over
  the mini-tiles of the reachable area; ``covered_tiles`` is that area in tiles (mini-tiles / 4).
* **centre coverage** (MAES-ROS before issue 13, kept as ``centre_coverage_percent`` and
  ``centre_covered_tiles``): the tile holding the robot's centre and every tile whose centre
  lies within the robot's radius of it. On the same paths MAES's coverage is about 1.5 times
  larger (a 1.5-tile swath instead of one tile).
* Percentages are of the *reachable open area*: the open tiles connected to the robots' spawn
  tiles. Walls and unreachable pockets never count, so 100 % is always attainable (MAES counts
  every open mini-tile instead, reachable or not).
* Recency heatmaps hold the last tick a tile was explored/covered (-1: never). A tile is "cold"
  ``ticks_before_*_heatmap_cold`` ticks after that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from maes_common.jit import njit

from . import metric_defs  # noqa: F401 (registers the metrics)
from .explore_bench import EXPLORE_BENCH_COLUMNS
from .metric_registry import MetricInputs, registered_metrics


def snapshot_columns() -> tuple[str, ...]:
    """Columns of a statistics snapshot, in CSV order: the tick, then every registered metric
    (:mod:`maes_sim.core.metric_defs`, and any registered since), then Explore-Bench's (time,
    efficiency and overlap)."""
    names = tuple(spec.name for spec in registered_metrics())
    return ("tick", "sim_time") + names + EXPLORE_BENCH_COLUMNS


#: :func:`snapshot_columns` of the built-in metrics (those registered at import).
SNAPSHOT_COLUMNS = snapshot_columns()


def _mark_covered_py(covered_tick, positions, radius, tick):
    h, w = covered_tick.shape
    r2 = radius * radius
    for n in range(positions.shape[0]):
        px, py = positions[n, 0], positions[n, 1]
        cx, cy = int(np.floor(px)), int(np.floor(py))
        if 0 <= cx < w and 0 <= cy < h:  # the tile under the centre, always
            covered_tick[cy, cx] = tick
        for iy in range(int(np.floor(py - radius)), int(np.floor(py + radius)) + 1):
            for ix in range(int(np.floor(px - radius)), int(np.floor(px + radius)) + 1):
                if 0 <= ix < w and 0 <= iy < h:
                    dx, dy = ix + 0.5 - px, iy + 0.5 - py
                    if dx * dx + dy * dy <= r2:  # tile centre under the disc
                        covered_tick[iy, ix] = tick


_mark_covered = njit(cache=True)(_mark_covered_py)


def _mark_minitiles_py(mini_tick, allowed, positions, tick):
    # MAES's CoverageCalculator.UpdateRobotCoverage: the 3 x 3 mini-tiles around the one
    # holding the robot's centre, each of an allowed (reachable open) tile.
    h2, w2 = mini_tick.shape
    for n in range(positions.shape[0]):
        mx = int(np.floor(2.0 * positions[n, 0]))
        my = int(np.floor(2.0 * positions[n, 1]))
        for iy in range(my - 1, my + 2):
            for ix in range(mx - 1, mx + 2):
                if 0 <= ix < w2 and 0 <= iy < h2 and allowed[iy // 2, ix // 2]:
                    mini_tick[iy, ix] = tick


_mark_minitiles = njit(cache=True)(_mark_minitiles_py)


def _count_reached_py(last_tick, reachable):
    # One pass, no temporaries: this runs every tick.
    flat_tick = last_tick.ravel()
    flat_ok = reachable.ravel()
    count = 0
    for k in range(flat_tick.shape[0]):
        if flat_tick[k] >= 0 and flat_ok[k]:
            count += 1
    return count


_count_reached = njit(cache=True)(_count_reached_py)


def _count_and_first_py(last_tick, reachable, first_tick):
    # _count_reached plus, in the same pass, the first tick of every tile reached for the first
    # time (its last tick, as it was reached just now).
    flat_tick = last_tick.ravel()
    flat_ok = reachable.ravel()
    flat_first = first_tick.ravel()
    count = 0
    for k in range(flat_tick.shape[0]):
        if flat_tick[k] >= 0:
            if flat_first[k] < 0:
                flat_first[k] = flat_tick[k]
            if flat_ok[k]:
                count += 1
    return count


_count_and_first = njit(cache=True)(_count_and_first_py)


def _count_marked_py(last_tick):
    # np.count_nonzero(last_tick >= 0) without the temporary
    flat = last_tick.ravel()
    count = 0
    for k in range(flat.shape[0]):
        if flat[k] >= 0:
            count += 1
    return count


_count_marked = njit(cache=True)(_count_marked_py)


def _add_motion_py(distance, travelled, collisions, collided):
    # distance += travelled; collisions += collided, in one pass
    for i in range(distance.shape[0]):
        distance[i] += travelled[i]
        if collided[i]:
            collisions[i] += 1


_add_motion = njit(cache=True)(_add_motion_py)


def _mark_and_count_py(
    covered_tick, mini_tick, reachable, positions, radius, tick, explored_tick, first_tick
):
    # mark_covered then refresh_counts, in one call
    _mark_covered(covered_tick, positions, radius, tick)
    _mark_minitiles(mini_tick, reachable, positions, tick)
    return (
        _count_and_first(explored_tick, reachable, first_tick),
        _count_reached(covered_tick, reachable),
        _count_marked(mini_tick),
    )


_mark_and_count = njit(cache=True)(_mark_and_count_py)


def _mark_and_count_near_py(
    covered_tick, mini_tick, reachable, positions, radius, tick, explored_tick, first_tick,
    reach, explored, covered, minis,
):  # fmt: skip
    # _mark_and_count's marks, and its counts brought up to date from the last ones (explored,
    # covered, minis) by looking only near each robot: the tiles its rays of length `reach`
    # can have marked (2 tiles of margin: the tile a ray enters, the side tiles of a corner)
    # and its coverage marks. Exact while every explored tile farther away already has its
    # first tick, as after every tick of a simulation (it counts right after marking).
    h, w = explored_tick.shape
    for n in range(positions.shape[0]):
        px, py = positions[n, 0], positions[n, 1]
        x0, x1 = max(int(np.floor(px - reach)) - 2, 0), min(int(np.floor(px + reach)) + 2, w - 1)
        y0, y1 = max(int(np.floor(py - reach)) - 2, 0), min(int(np.floor(py + reach)) + 2, h - 1)
        for iy in range(y0, y1 + 1):
            for ix in range(x0, x1 + 1):
                if explored_tick[iy, ix] >= 0 and first_tick[iy, ix] < 0:  # explored just now
                    first_tick[iy, ix] = explored_tick[iy, ix]
                    if reachable[iy, ix]:
                        explored += 1
        # coverage: this robot's marks counted before and after (marks only ever appear)
        cx0, cx1 = max(int(np.floor(px - radius)), 0), min(int(np.floor(px + radius)), w - 1)
        cy0, cy1 = max(int(np.floor(py - radius)), 0), min(int(np.floor(py + radius)), h - 1)
        mx, my = int(np.floor(2.0 * px)), int(np.floor(2.0 * py))
        mx0, mx1 = max(mx - 1, 0), min(mx + 1, 2 * w - 1)
        my0, my1 = max(my - 1, 0), min(my + 1, 2 * h - 1)
        for k in range(2):
            sign = -1 if k == 0 else 1
            for iy in range(cy0, cy1 + 1):
                for ix in range(cx0, cx1 + 1):
                    if covered_tick[iy, ix] >= 0 and reachable[iy, ix]:
                        covered += sign
            for iy in range(my0, my1 + 1):
                for ix in range(mx0, mx1 + 1):
                    if mini_tick[iy, ix] >= 0:
                        minis += sign
            if k == 0:
                _mark_covered(covered_tick, positions[n : n + 1], radius, tick)
                _mark_minitiles(mini_tick, reachable, positions[n : n + 1], tick)
    return explored, covered, minis


_mark_and_count_near = njit(cache=True)(_mark_and_count_near_py)


@dataclass
class Metrics:
    """Mutable metric state of one simulation.

    Parameters
    ----------
    reachable : ndarray of bool, shape (H, W)
        The open tiles the percentages are measured against.
    n_robots : int
        Number of robots.
    """

    reachable: np.ndarray
    n_robots: int
    explored_tick: np.ndarray = field(init=False)
    #: The first tick each tile was explored (-1: never): the order of discovery.
    first_explored_tick: np.ndarray = field(init=False)
    covered_tick: np.ndarray = field(init=False)
    mini_covered_tick: np.ndarray = field(init=False)
    distance: np.ndarray = field(init=False)
    collisions: np.ndarray = field(init=False)
    explored_count: int = field(init=False, default=0)
    covered_count: int = field(init=False, default=0)
    mini_covered_count: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.reachable.ndim != 2 or self.reachable.dtype != bool:
            raise ValueError(
                f"reachable must be a bool (H, W) array, got {self.reachable.dtype}"
                f" {self.reachable.shape}"
            )
        self.reachable_count = int(self.reachable.sum())
        self.explored_tick = np.full(self.reachable.shape, -1, dtype=np.int32)
        self.first_explored_tick = np.full(self.reachable.shape, -1, dtype=np.int32)
        self.covered_tick = np.full(self.reachable.shape, -1, dtype=np.int32)
        h, w = self.reachable.shape
        self.mini_covered_tick = np.full((2 * h, 2 * w), -1, dtype=np.int32)
        self.distance = np.zeros(self.n_robots, dtype=np.float64)
        self.collisions = np.zeros(self.n_robots, dtype=np.int64)

    def refresh_counts(self) -> None:
        """Recount explored and covered reachable tiles (after in-place marking); note the
        first tick of tiles explored for the first time.

        Examples
        --------
        >>> m = Metrics(np.ones((1, 3), dtype=bool), 1)
        >>> m.explored_tick[0] = [-1, 4, 4]
        >>> m.refresh_counts()
        >>> m.explored_tick[0] = [7, 7, 4]
        >>> m.refresh_counts()
        >>> m.explored_count, m.first_explored_tick.tolist()
        (3, [[7, 4, 4]])
        """
        self.explored_count = int(
            _count_and_first(self.explored_tick, self.reachable, self.first_explored_tick)
        )
        self.covered_count = int(_count_reached(self.covered_tick, self.reachable))
        # only reachable mini-tiles are ever marked
        self.mini_covered_count = int(_count_marked(self.mini_covered_tick))

    def add_motion(self, travelled: np.ndarray, collided: np.ndarray) -> None:
        """Book a tick's path lengths ``travelled`` (N,) tiles and new collisions
        ``collided`` (N,) bool: ``distance += travelled``, ``collisions += collided``."""
        _add_motion(self.distance, travelled, self.collisions, collided)

    def mark_covered_and_refresh(self, positions: np.ndarray, radius: float, tick: int) -> None:
        """:meth:`mark_covered` then :meth:`refresh_counts`, in one compiled call (the same
        marks and counts)."""
        pos = np.ascontiguousarray(positions, dtype=np.float64)
        counts = _mark_and_count(
            self.covered_tick,
            self.mini_covered_tick,
            self.reachable,
            pos,
            float(radius),
            np.int32(tick),
            self.explored_tick,
            self.first_explored_tick,
        )
        self.explored_count, self.covered_count, self.mini_covered_count = (int(c) for c in counts)

    @property
    def exploration_percent(self) -> float:
        """Explored share of the reachable open area, 0..100."""
        return 100.0 * self.explored_count / max(self.reachable_count, 1)

    @property
    def coverage_percent(self) -> float:
        """MAES 2.0's coverage: covered share of the reachable mini-tiles, 0..100."""
        return 100.0 * self.mini_covered_count / max(4 * self.reachable_count, 1)

    @property
    def centre_coverage_percent(self) -> float:
        """Share of the reachable tiles that were under a robot's centre (or disc), 0..100."""
        return 100.0 * self.covered_count / max(self.reachable_count, 1)

    def mark_covered(self, positions: np.ndarray, radius: float, tick: int) -> None:
        """Mark both coverages at robot positions ``positions`` (N, 2), grid coordinates.

        Examples
        --------
        A robot at (1.3, 1.3) on an open 4 x 4 map: its mini-tile is (2, 2), so mini-tiles 1..3
        along both axes are covered (9 of 64), and the centre tile (1, 1) (1 of 16):

        >>> m = Metrics(np.ones((4, 4), dtype=bool), 1)
        >>> m.mark_covered(np.array([[1.3, 1.3]]), 0.3, 0)
        >>> m.refresh_counts()
        >>> m.coverage_percent, m.centre_coverage_percent
        (14.0625, 6.25)
        """
        pos = np.ascontiguousarray(positions, dtype=np.float64)
        _mark_covered(self.covered_tick, pos, float(radius), np.int32(tick))
        _mark_minitiles(self.mini_covered_tick, self.reachable, pos, np.int32(tick))

    def tile_covered_tick(self) -> np.ndarray:
        """Per tile (H, W) int32, the last tick any of its mini-tiles was covered (-1: never)."""
        h, w = self.covered_tick.shape
        return self.mini_covered_tick.reshape(h, 2, w, 2).max(axis=(1, 3))

    def heatmap(self, which: str, tick: int, cold_after: int) -> np.ndarray:
        """Recency heatmap (H, W) float32: 1 just now, falling linearly to 0 when cold,
        -1 never visited. ``which`` is "exploration" or "coverage".

        Examples
        --------
        >>> m = Metrics(np.ones((1, 3), dtype=bool), 1)
        >>> m.explored_tick[0] = [-1, 10, 0]
        >>> m.heatmap("exploration", 10, 20).tolist()
        [[-1.0, 1.0, 0.5]]
        """
        if which == "coverage":  # a tile's latest coverage is that of its latest mini-tile
            last = self.tile_covered_tick()
        else:
            last = {"exploration": self.explored_tick}[which]
        age = (tick - last).astype(np.float32)
        hot = np.clip(1.0 - age / float(max(cold_after, 1)), 0.0, 1.0)
        return np.where(last >= 0, hot, np.float32(-1.0)).astype(np.float32)


def snapshot_row(
    metrics: Metrics,
    tick: int,
    sim_time: float,
    broadcasts_sent: int,
    broadcasts_delivered: int,
    tags_deposited: int,
    tile_size: float = 1.0,
    sim: object = None,
) -> dict[str, float | int]:
    """One statistics row with the keys of :data:`SNAPSHOT_COLUMNS` but the Explore-Bench ones
    (``Simulation.stats`` appends those: they need every robot's seen map).

    The tick and simulated time, then every registered metric
    (:mod:`maes_sim.core.metric_defs`) in registration order. Counts are in tiles (the grid's
    unit; ``covered_tiles`` is the covered area, in quarter tiles, ``covered_minitiles`` the
    count MAES keeps); ``distance_travelled_m``, all robots' path lengths summed, is in metres
    (``tile_size`` metres per tile), like every ``*_m`` value in results.
    """
    inputs = MetricInputs(
        metrics,
        tick,
        sim_time,
        broadcasts_sent,
        broadcasts_delivered,
        tags_deposited,
        tile_size,
        sim,
    )
    row: dict[str, float | int] = {"tick": int(tick), "sim_time": round(float(sim_time), 6)}
    for spec in registered_metrics():
        row[spec.name] = spec.compute(inputs)
    return row
