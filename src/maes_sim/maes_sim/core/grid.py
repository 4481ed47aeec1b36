"""Tile-grid conventions shared by the whole core.

Every distance in the core is in tiles (1 tile = ``tile_size`` metres in ROS).

Arrays
    ``walls[iy, ix]`` is a bool array of shape (H, W). Row ``iy = 0`` is the *bottom* of the map
    (smallest y), so ``walls.ravel()`` is in ``nav_msgs/OccupancyGrid`` data order. Images (PGM,
    PNG) store the top row first and are flipped on import/export.

Grid coordinates ``(gx, gy)``
    Continuous, in tiles, origin at the outer corner of tile (0, 0): tile ``(ix, iy)`` covers
    ``[ix, ix + 1) x [iy, iy + 1)``. Kernels (lidar, line of sight, collisions) work in these.

World coordinates ``(x, y)``
    Continuous, in tiles, origin at the map centre (MAES 2.0's ROS convention):
    ``x = gx - W / 2``, ``y = gy - H / 2``. Everything public (``Simulation.poses``, commands,
    ROS messages after scaling by ``tile_size``) uses world coordinates.

Headings are radians, counter-clockwise from +x (REP-103).
"""

from __future__ import annotations

import numpy as np

#: Cell codes of a simulated-SLAM map (uint8). Zero-initialised arrays are all unknown.
UNKNOWN = np.uint8(0)
OPEN = np.uint8(1)
SOLID = np.uint8(2)


def grid_offset(shape: tuple[int, int]) -> np.ndarray:
    """Grid coordinates of the world origin for a map of ``shape == (H, W)``.

    Examples
    --------
    >>> grid_offset((4, 6))
    array([3., 2.])
    """
    h, w = shape
    return np.array([w / 2.0, h / 2.0])


def world_to_grid(xy: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Convert world coordinates (..., 2) to grid coordinates (..., 2).

    Examples
    --------
    >>> world_to_grid(np.array([0.0, 0.0]), (4, 6))
    array([3., 2.])
    """
    return np.asarray(xy, dtype=np.float64) + grid_offset(shape)


def grid_to_world(gxy: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Convert grid coordinates (..., 2) to world coordinates (..., 2).

    Examples
    --------
    >>> grid_to_world(np.array([3.0, 2.0]), (4, 6))
    array([0., 0.])
    """
    return np.asarray(gxy, dtype=np.float64) - grid_offset(shape)


def tile_of(gxy: np.ndarray) -> np.ndarray:
    """Integer tile indices ``(ix, iy)`` (..., 2) containing grid points (..., 2).

    Examples
    --------
    >>> tile_of(np.array([[0.5, 1.999], [2.0, 0.0]]))
    array([[0, 1],
           [2, 0]])
    """
    return np.floor(np.asarray(gxy, dtype=np.float64)).astype(np.int64)


def tile_centre(ixy: np.ndarray) -> np.ndarray:
    """Grid coordinates (..., 2) of the centres of tiles ``(ix, iy)`` (..., 2).

    Examples
    --------
    >>> tile_centre(np.array([1, 2]))
    array([1.5, 2.5])
    """
    return np.asarray(ixy, dtype=np.float64) + 0.5
