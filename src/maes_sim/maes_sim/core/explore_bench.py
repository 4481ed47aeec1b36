"""The exploration metrics the field compares algorithms with (Explore-Bench), beside MAES's own.

Explore-Bench (Xu et al., ICRA 2022) compares exploration algorithms by the time to explore a
share of the map and to finish, the exploration efficiency (area explored per metre driven) and
the overlap of what the robots explored. Our definitions, on the simulator's tile grid (the
same *explored* and *reachable* tiles as :mod:`maes_sim.core.metrics`):

* **time to 90 %**: the first tick (and simulated seconds, ``tick * tick duration``) at which
  exploration reached 90 % of the reachable open area; None if it never did. **Time to the
  end**: the tick (and seconds) at which the run ended.
* **explored area**: explored reachable tiles x ``tile_size^2`` (m^2).
* **exploration efficiency**: explored area / distance driven by all robots together
  (m^2 per m); None while nobody has moved. Per robot: the area *that robot* saw / its distance.
* **seen by robot i**, ``S_i``: the reachable tiles robot i's own lidar rays reached at any
  time (the hit tile included), whatever the SLAM maps learnt from others.
* **overlap**: ``sum_i |S_i| / |S_1 u ... u S_N| - 1``, the average number of *other* robots that
  also saw an explored tile: 0 when no tile was seen by two robots, N - 1 when every robot saw
  everything (always 0 with one robot). **overlap share**: the share of the explored tiles that
  two or more robots saw (0..1).

The per-robot maps are filled by a second pass of the lidar kernel each tick, marking into an
(N, H, W) uint8 array instead of the SLAM maps; counts are taken only when a statistics row is
made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit

from .grid import UNKNOWN

#: Columns this module adds to every statistics row (after MAES's own).
EXPLORE_BENCH_COLUMNS = (
    "explored_area_m2",
    "exploration_efficiency_m2_per_m",
    "overlap",
    "overlap_share",
)

#: The exploration share (%) whose first tick is recorded.
TIME_TO_PERCENT = 90.0


def overlap_of(seen: np.ndarray, reachable: np.ndarray) -> tuple[float, float, np.ndarray]:
    """``(overlap, overlap_share, tiles seen per robot)`` of per-robot seen maps.

    Parameters
    ----------
    seen : ndarray (N, H, W)
        Non-zero where robot i's rays reached the tile.
    reachable : bool ndarray (H, W)
        The tiles that count.

    Examples
    --------
    Two robots on a 1 x 4 strip; robot 0 saw tiles 0-2, robot 1 tiles 2-3 (tile 2 by both):

    >>> seen = np.array([[[1, 1, 1, 0]], [[0, 0, 1, 1]]], dtype=np.uint8)
    >>> ov, share, per_robot = overlap_of(seen, np.ones((1, 4), dtype=bool))
    >>> round(ov, 4), share, per_robot.tolist()  # 5 sightings of 4 tiles; 1 of 4 twice
    (0.25, 0.25, [3, 2])
    """
    n = seen.shape[0]
    per_robot = np.zeros(n, dtype=np.int64)
    tiles = np.ascontiguousarray(seen).reshape(n, -1)
    ok = np.ascontiguousarray(reachable, dtype=np.bool_).reshape(-1)
    union, twice = _overlap_counts(tiles, ok, np.zeros(ok.shape[0], dtype=np.int64), per_robot)
    if union == 0:
        return 0.0, 0.0, per_robot
    return float(per_robot.sum()) / union - 1.0, float(twice) / union, per_robot


@njit(**JIT_OPTIONS)
def _overlap_counts(seen, reachable, k, per_robot):
    """:func:`overlap_of`'s counts in one pass over the seen maps (N, H*W), no temporaries:
    ``per_robot`` (N,) the reachable tiles each saw, ``k`` (H*W,) scratch; returns
    (tiles seen by any, tiles seen by two or more), integers as numpy's sums and counts."""
    for i in range(seen.shape[0]):
        count = 0
        for j in range(seen.shape[1]):
            if seen[i, j] != _UNKNOWN and reachable[j]:
                k[j] += 1
                count += 1
        per_robot[i] = count
    union = 0
    twice = 0
    for j in range(k.shape[0]):
        if k[j] > 0:
            union += 1
            if k[j] >= 2:
                twice += 1
    return union, twice


_UNKNOWN = int(UNKNOWN)


@dataclass
class ExploreBench:
    """Per-robot seen maps and the first tick at 90 % of one simulation."""

    n_robots: int
    shape: tuple[int, int]
    #: (N, H, W) uint8: what each robot's own rays reached (grid.UNKNOWN = not yet).
    seen: np.ndarray = field(init=False)
    #: First tick with exploration >= :data:`TIME_TO_PERCENT`, or None.
    tick_to_90: int | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.seen = np.full((self.n_robots, *self.shape), UNKNOWN, dtype=np.uint8)

    def record(self, tick: int, exploration_percent: float) -> None:
        """Note this tick's exploration (every tick, after marking)."""
        if self.tick_to_90 is None and exploration_percent >= TIME_TO_PERCENT:
            self.tick_to_90 = int(tick)

    def row(
        self, reachable: np.ndarray, explored_tiles: int, distance_tiles: float, tile_size: float
    ) -> dict[str, float | None]:
        """The :data:`EXPLORE_BENCH_COLUMNS` values now (distance: all robots, in tiles)."""
        area = explored_tiles * tile_size * tile_size
        metres = distance_tiles * tile_size
        ov, share, _ = overlap_of(self.seen, reachable)
        return {
            "explored_area_m2": round(area, 6),
            "exploration_efficiency_m2_per_m": round(area / metres, 6) if metres > 0 else None,
            "overlap": round(ov, 6),
            "overlap_share": round(share, 6),
        }

    def summary(
        self,
        reachable: np.ndarray,
        explored_tiles: int,
        distance_tiles: np.ndarray,
        tile_size: float,
        tick: int,
        tick_duration: float,
        finished: bool,
    ) -> dict[str, object]:
        """Everything for ``summary.json`` (``distance_tiles``: per robot)."""
        row = self.row(reachable, explored_tiles, float(np.sum(distance_tiles)), tile_size)
        _, _, per_robot = overlap_of(self.seen, reachable)
        seen_m2 = per_robot * tile_size * tile_size
        metres = np.asarray(distance_tiles, dtype=np.float64) * tile_size
        efficiency = [
            round(float(a / d), 6) if d > 0 else None for a, d in zip(seen_m2, metres, strict=True)
        ]
        t90 = self.tick_to_90
        return {
            "ticks_to_90_percent": t90,
            "seconds_to_90_percent": None if t90 is None else round(t90 * tick_duration, 6),
            "ticks_to_end": int(tick) if finished else None,
            "seconds_to_end": round(tick * tick_duration, 6) if finished else None,
            **row,
            "distance_travelled_m_total": round(float(metres.sum()), 6),
            "seen_area_m2_per_robot": [round(float(a), 6) for a in seen_m2],
            "exploration_efficiency_per_robot": efficiency,
        }
