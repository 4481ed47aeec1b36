"""Exploration and coverage metrics, recency heatmaps and statistics snapshots.

Definitions (MAES 2.0's measures on a tile grid):

* **explored**: a tile reached by any robot's lidar ray (the hit tile included), at any time.
* **covered**: a tile under a robot's footprint: the tile holding the robot's centre and every
  tile whose centre lies within the robot's radius of it.
* Percentages are of the *reachable open area*: the open tiles connected to the robots' spawn
  tiles. Walls and unreachable pockets never count, so 100 % is always attainable.
* Recency heatmaps hold the last tick a tile was explored/covered (-1: never). A tile is "cold"
  ``ticks_before_*_heatmap_cold`` ticks after that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .explore_bench import EXPLORE_BENCH_COLUMNS
from .kernels.jit import njit

#: Columns of a statistics snapshot, in CSV order.
SNAPSHOT_COLUMNS = (
    "tick",
    "sim_time",
    "exploration_percent",
    "coverage_percent",
    "explored_tiles",
    "covered_tiles",
    "reachable_tiles",
    "distance_travelled_m",
    "collisions",
    "broadcasts_sent",
    "broadcasts_delivered",
    "tags_deposited",
) + EXPLORE_BENCH_COLUMNS  # time, efficiency and overlap (Explore-Bench): explore_bench.py


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
    covered_tick: np.ndarray = field(init=False)
    distance: np.ndarray = field(init=False)
    collisions: np.ndarray = field(init=False)
    explored_count: int = field(init=False, default=0)
    covered_count: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.reachable.ndim != 2 or self.reachable.dtype != bool:
            raise ValueError(
                f"reachable must be a bool (H, W) array, got {self.reachable.dtype}"
                f" {self.reachable.shape}"
            )
        self.reachable_count = int(self.reachable.sum())
        self.explored_tick = np.full(self.reachable.shape, -1, dtype=np.int32)
        self.covered_tick = np.full(self.reachable.shape, -1, dtype=np.int32)
        self.distance = np.zeros(self.n_robots, dtype=np.float64)
        self.collisions = np.zeros(self.n_robots, dtype=np.int64)

    def refresh_counts(self) -> None:
        """Recount explored and covered reachable tiles (after in-place marking)."""
        self.explored_count = int(_count_reached(self.explored_tick, self.reachable))
        self.covered_count = int(_count_reached(self.covered_tick, self.reachable))

    @property
    def exploration_percent(self) -> float:
        """Explored share of the reachable open area, 0..100."""
        return 100.0 * self.explored_count / max(self.reachable_count, 1)

    @property
    def coverage_percent(self) -> float:
        """Covered share of the reachable open area, 0..100."""
        return 100.0 * self.covered_count / max(self.reachable_count, 1)

    def mark_covered(self, positions: np.ndarray, radius: float, tick: int) -> None:
        """Mark the tiles under robot footprints at ``positions`` (N, 2) grid coords."""
        _mark_covered(
            self.covered_tick,
            np.ascontiguousarray(positions, dtype=np.float64),
            float(radius),
            np.int32(tick),
        )

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
        last = {"exploration": self.explored_tick, "coverage": self.covered_tick}[which]
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
) -> dict[str, float | int]:
    """One statistics row with the keys of :data:`SNAPSHOT_COLUMNS`.

    Counts are in tiles (the grid's unit); ``distance_travelled_m``, all robots' path lengths
    summed, is in metres (``tile_size`` metres per tile), like every ``*_m`` value in results.
    """
    return {
        "tick": int(tick),
        "sim_time": round(float(sim_time), 6),
        "exploration_percent": round(metrics.exploration_percent, 4),
        "coverage_percent": round(metrics.coverage_percent, 4),
        "explored_tiles": metrics.explored_count,
        "covered_tiles": metrics.covered_count,
        "reachable_tiles": metrics.reachable_count,
        "distance_travelled_m": round(float(metrics.distance.sum()) * tile_size, 6),
        "collisions": int(metrics.collisions.sum()),
        "broadcasts_sent": int(broadcasts_sent),
        "broadcasts_delivered": int(broadcasts_delivered),
        "tags_deposited": int(tags_deposited),
    }
