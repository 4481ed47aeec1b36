"""Planar pose algebra over robots and the transforms a tick publishes, in metres.

One home for the frames the simulator node publishes every tick (``odom -> base_footprint``,
``map -> odom``, ``world -> odom``) and for the row-wise pose algebra behind them; direct mode
computes the same arrays with the same functions, then passes them through
:mod:`maes_sim.contract`'s wire functions as a receiver would read them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .contract import wire_yaw

__all__ = ["TickTransforms", "compose_many", "inverse_many", "tick_transforms", "wire_poses"]


def compose_many(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise 2-D pose composition ``a[k] * b[k]`` of (N, 3) arrays (x, y, yaw).

    Examples
    --------
    >>> compose_many(np.array([[1.0, 0.0, np.pi / 2]]), np.array([[2.0, 0.0, 0.0]])).round(6)
    array([[1.      , 2.      , 1.570796]])
    """
    c, s = np.cos(a[:, 2]), np.sin(a[:, 2])
    out = np.empty((a.shape[0], 3))  # filled column by column: cheaper than column_stack
    out[:, 0] = a[:, 0] + c * b[:, 0] - s * b[:, 1]
    out[:, 1] = a[:, 1] + s * b[:, 0] + c * b[:, 1]
    out[:, 2] = a[:, 2] + b[:, 2]
    return out


def inverse_many(a: np.ndarray) -> np.ndarray:
    """Row-wise inverse of (N, 3) poses (x, y, yaw).

    Examples
    --------
    >>> p = np.array([[1.0, 2.0, 0.5]])
    >>> np.allclose(compose_many(p, inverse_many(p)), 0.0)
    True
    """
    c, s = np.cos(a[:, 2]), np.sin(a[:, 2])
    out = np.empty((a.shape[0], 3))
    out[:, 0] = -c * a[:, 0] - s * a[:, 1]
    out[:, 1] = s * a[:, 0] - c * a[:, 1]
    out[:, 2] = -a[:, 2]
    return out


class TickTransforms(NamedTuple):
    """The transforms of one tick, (N, 3) each, metres and radians."""

    odom_base: np.ndarray  # odom -> base_footprint (odometry since the odom origin)
    map_odom: np.ndarray  # map -> odom (so that map -> base_footprint is the SLAM belief)
    world_odom: np.ndarray  # world -> robot<i>/odom (so that world -> base is the truth)


def tick_transforms(
    true_poses: np.ndarray,
    estimated_poses: np.ndarray,
    odometry_poses: np.ndarray,
    odom_origin: np.ndarray,
    tile_size: float,
) -> TickTransforms:
    """The transforms published for one tick, from the simulation's arrays (tiles).

    Parameters
    ----------
    true_poses, estimated_poses, odometry_poses : ndarray, shape (N, 3)
        ``Simulation.poses``, ``.estimated_poses`` and ``.odometry_poses`` (tiles, rad).
    odom_origin : ndarray, shape (N, 3)
        Each robot's odom frame origin in odometry coordinates (tiles, rad).
    tile_size : float
        Metres per tile.
    """
    scale = np.array([tile_size, tile_size, 1.0])
    odom_base = compose_many(inverse_many(odom_origin * scale), odometry_poses * scale)
    odom_inv = inverse_many(odom_base)
    return TickTransforms(
        odom_base,
        compose_many(estimated_poses * scale, odom_inv),
        compose_many(true_poses * scale, odom_inv),
    )


def wire_poses(poses: np.ndarray) -> list[tuple[float, float, float]]:
    """(N, 3) poses as a receiver reads them from ``TransformStamped`` messages.

    Examples
    --------
    >>> wire_poses(np.array([[1.0, 2.0, 0.0]]))
    [(1.0, 2.0, 0.0)]
    """
    return [(float(x), float(y), wire_yaw(float(yaw))) for x, y, yaw in poses.tolist()]
