"""Obstacle inflation and Nav2-style costmaps from an occupancy grid (numpy, numba kernel).

All distances here are in *cells*, measured between cell centres, as Nav2's inflation layer does.
Convert from world units with ``radius_cells = radius / resolution`` and
``scaling_per_cell = cost_scaling_factor_per_metre * resolution``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from maes_common.jit import njit

from .._checks import check_bool_grid, check_int_grid, check_non_negative
from .costmap import INSCRIBED, LETHAL, OCCUPIED_THRESHOLD, UNKNOWN

# Nav2's internal costs (nav2_costmap_2d/cost_values.hpp) before translation to 0..100.
_NAV2_INSCRIBED = 253


def disc_offsets(radius: float) -> np.ndarray:
    """Integer offsets ``(dx, dy)`` (K, 2) with ``dx**2 + dy**2 <= radius**2``, in raster order.

    Examples
    --------
    >>> disc_offsets(1.0).tolist()
    [[0, -1], [-1, 0], [0, 0], [1, 0], [0, 1]]
    """
    radius = check_non_negative("radius", radius)
    r = math.floor(radius)
    dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
    keep = dx * dx + dy * dy <= radius * radius
    return np.stack([dx[keep], dy[keep]], axis=1)


@functools.lru_cache(maxsize=32)
def _disc(radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`disc_offsets`' ``dx`` and ``dy`` columns and their lengths (read-only), made once
    per radius: every new map of every robot is inflated with the same few radii."""
    offsets = disc_offsets(radius)
    columns = (offsets[:, 0].copy(), offsets[:, 1].copy(), np.hypot(offsets[:, 0], offsets[:, 1]))
    for column in columns:
        column.flags.writeable = False
    return columns


@njit(cache=True)
def _costs(
    occ: np.ndarray,
    threshold: int,
    dist: np.ndarray,
    robot_radius: float,
    factor: np.ndarray,
    inflate_unknown: bool,
    costs: tuple[int, int, int],
    out: np.ndarray,
) -> None:
    """:func:`costmap_from_occupancy`'s cell values into ``out`` (int8 (H, W)); ``factor``:
    the decay ``exp(-scaling * (dist - robot_radius))`` of each cell beyond the robot's radius
    within the inflation radius, in raster order; ``costs``: the values of unknown, inscribed
    and lethal cells (passed in: a kernel cached on disk would keep another module's
    constants)."""
    unknown, inscribed, lethal = costs
    height, width = occ.shape
    k = 0
    for iy in range(height):
        for ix in range(width):
            d = dist[iy, ix]
            if occ[iy, ix] >= threshold:  # at distance 0: no factor
                out[iy, ix] = lethal
                continue
            if d <= robot_radius:
                out[iy, ix] = inscribed
                continue
            translated = 0
            if math.isfinite(d):
                # Nav2 computes the decayed cost as an unsigned char, i.e. truncated
                decayed = int(math.floor((_NAV2_INSCRIBED - 1) * factor[k]))
                k += 1
                if decayed > 0:
                    translated = 1 + (97 * (decayed - 1)) // 251
            if occ[iy, ix] < 0 and not (inflate_unknown and translated > 0):
                out[iy, ix] = unknown
            else:
                out[iy, ix] = translated


@njit(cache=True)
def _stamp_distances(
    boundary_x: np.ndarray,
    boundary_y: np.ndarray,
    off_x: np.ndarray,
    off_y: np.ndarray,
    lengths: np.ndarray,
    dist: np.ndarray,
) -> None:
    """``dist[y + dy, x + dx] = min(., length)`` for every boundary cell and disc offset."""
    h, w = dist.shape
    for b in range(boundary_x.shape[0]):
        for k in range(off_x.shape[0]):
            x = boundary_x[b] + off_x[k]
            y = boundary_y[b] + off_y[k]
            if 0 <= x < w and 0 <= y < h and lengths[k] < dist[y, x]:
                dist[y, x] = lengths[k]


def inflate(occupied: np.ndarray, radius: float) -> np.ndarray:
    """Grow obstacles by a disc: cells whose centre lies within ``radius`` of an occupied centre.

    Parameters
    ----------
    occupied : bool (H, W)
        ``occupied[iy, ix]``.
    radius : float
        Disc radius in cells (>= 0); below 1 nothing grows.

    Returns
    -------
    bool (H, W)
        A new array; cells outside the grid are not obstacles.

    Examples
    --------
    >>> occ = np.zeros((3, 5), dtype=bool); occ[1, 2] = True
    >>> inflate(occ, 1.0).astype(int)
    array([[0, 0, 1, 0, 0],
           [0, 1, 1, 1, 0],
           [0, 0, 1, 0, 0]])
    """
    return np.isfinite(obstacle_distance(occupied, radius))


def obstacle_distance(occupied: np.ndarray, max_distance: float) -> np.ndarray:
    """Distance (cells, centre to centre) to the nearest occupied cell, up to ``max_distance``.

    Stamps the disc of offsets around every occupied cell that borders a free one:
    O(boundary cells * max_distance**2), compiled with numba when available.

    Parameters
    ----------
    occupied : bool (H, W)
    max_distance : float
        Largest distance computed, in cells.

    Returns
    -------
    float64 (H, W)
        ``inf`` beyond ``max_distance``.

    Examples
    --------
    >>> occ = np.zeros((1, 4), dtype=bool); occ[0, 0] = True
    >>> obstacle_distance(occ, 2.0)
    array([[ 0.,  1.,  2., inf]])
    """
    occ = check_bool_grid("occupied", occupied)
    off_x, off_y, lengths = _disc(check_non_negative("max_distance", max_distance))
    dist = np.where(occ, 0.0, np.inf)
    # The nearest occupied cell to a free cell always has a free edge neighbour (the step from it
    # towards the free cell is closer), so stamping discs around boundary cells is enough.
    inner = occ.copy()
    inner[:, 1:] &= occ[:, :-1]
    inner[:, :-1] &= occ[:, 1:]
    inner[1:, :] &= occ[:-1, :]
    inner[:-1, :] &= occ[1:, :]
    by, bx = np.nonzero(occ & ~inner)
    _stamp_distances(bx, by, off_x, off_y, lengths, dist)
    return dist


def costmap_from_occupancy(
    occupancy: np.ndarray,
    robot_radius: float,
    inflation_radius: float | None = None,
    cost_scaling_factor: float = 3.0,
    *,
    occupied_threshold: int = OCCUPIED_THRESHOLD,
    inflate_unknown: bool = False,
) -> np.ndarray:
    """Nav2-style costmap (0..100, -1 unknown) from an occupancy grid.

    Follows Nav2's static + inflation layers and its ``costmap/costmap`` translation:

    - occupied cells (value >= ``occupied_threshold``) -> 100 (lethal);
    - cells within ``robot_radius`` of an occupied cell -> 99 (inscribed), unknown ones included;
    - cells within ``inflation_radius``: Nav2's ``252 * exp(-k * (d - robot_radius))`` translated
      to ``1 + 97 * (c - 1) // 251`` (0 when the cost rounds to 0);
    - other known cells -> 0, other unknown cells -> -1 (or, with ``inflate_unknown``, the
      decayed cost when it is above 0, as Nav2's ``inflate_unknown: true``).

    Parameters
    ----------
    occupancy : int (H, W)
        Values -1 or 0..100, ``occupancy[iy, ix]`` (e.g. ``GridMap.array``).
    robot_radius : float
        Inscribed radius in cells.
    inflation_radius : float, optional
        Radius of the decaying cost, in cells, >= ``robot_radius``. Default: ``robot_radius``
        (no decay: only lethal, inscribed and free).
    cost_scaling_factor : float
        Decay rate per cell (Nav2's per-metre factor times the resolution).
    occupied_threshold : int
        Occupancy values at or above it are obstacles.
    inflate_unknown : bool
        Give unknown cells the decayed cost too (Nav2's ``inflate_unknown``).

    Returns
    -------
    int8 (H, W)

    Examples
    --------
    >>> occ = np.array([[0, 0, 100, 0, -1, -1]], dtype=np.int8)
    >>> costmap_from_occupancy(occ, robot_radius=1.0, inflation_radius=3.0)
    array([[  5,  99, 100,  99,  -1,  -1]], dtype=int8)
    """
    occ = check_int_grid("occupancy", occupancy)
    robot_radius = check_non_negative("robot_radius", robot_radius)
    if inflation_radius is None:
        inflation_radius = robot_radius
    inflation_radius = check_non_negative("inflation_radius", inflation_radius)
    if inflation_radius < robot_radius:
        raise ValueError(
            f"inflation_radius ({inflation_radius}) must be >= robot_radius ({robot_radius})"
        )
    cost_scaling_factor = check_non_negative("cost_scaling_factor", cost_scaling_factor)

    lethal = occ >= occupied_threshold
    dist = obstacle_distance(lethal, inflation_radius)
    # The decayed cost counts only beyond the robot's radius (inside it the cell is inscribed);
    # exp is numpy's there, element by element as over the whole grid.
    decays = np.isfinite(dist) & (dist > robot_radius)
    factor = np.exp(-cost_scaling_factor * (dist[decays] - robot_radius))
    out = np.empty(occ.shape, dtype=np.int8)
    costs = (UNKNOWN, INSCRIBED, LETHAL)
    _costs(occ, occupied_threshold, dist, robot_radius, factor, inflate_unknown, costs, out)
    return out
