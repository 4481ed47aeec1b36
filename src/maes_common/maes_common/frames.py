"""The transforms a tick publishes, in metres, for every robot at once.

One home for the frames the simulator node publishes every tick (``odom -> base_footprint``,
``map -> odom``, ``world -> odom``), computed with :mod:`maes_common.pose`; direct mode
computes the same arrays with the same functions, then passes them through
:mod:`maes_common.contract`'s wire functions as a receiver would read them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .contract import wire_yaw
from .pose import compose_many, inverse_many

__all__ = ["OdomFrames", "TickTransforms", "tick_transforms", "wire_poses"]


class TickTransforms(NamedTuple):
    """The transforms of one tick, (N, 3) each, metres and radians."""

    odom_base: np.ndarray  # odom -> base_footprint (odometry since the odom origin)
    map_odom: np.ndarray  # map -> odom (so that map -> base_footprint is the SLAM belief)
    world_odom: np.ndarray | None  # world -> robot<i>/odom (so that world -> base is the truth)


class OdomFrames:
    """The robots' odom frames from a fixed origin: :func:`tick_transforms` for one run, with
    what the origin contributes worked out once instead of every tick (the same numbers).

    Parameters
    ----------
    odom_origin : ndarray, shape (N, 3)
        Each robot's odom frame origin in odometry coordinates (tiles, rad).
    tile_size : float
        Metres per tile.

    Examples
    --------
    >>> frames = OdomFrames(np.zeros((1, 3)), 0.5)
    >>> frames.transforms(None, np.array([[2.0, 0.0, 0.0]]), np.array([[2.0, 0.0, 0.0]]),
    ...                   world=False).odom_base.tolist()
    [[1.0, 0.0, 0.0]]
    """

    def __init__(self, odom_origin: np.ndarray, tile_size: float) -> None:
        self._scale = np.array([tile_size, tile_size, 1.0])
        self._origin_inverse = inverse_many(odom_origin * self._scale)

    def transforms(
        self,
        true_poses: np.ndarray | None,
        estimated_poses: np.ndarray,
        odometry_poses: np.ndarray,
        world: bool = True,
    ) -> TickTransforms:
        """This tick's transforms (see :func:`tick_transforms`)."""
        scale = self._scale
        odom_base = compose_many(self._origin_inverse, odometry_poses * scale)
        odom_inv = inverse_many(odom_base)
        return TickTransforms(
            odom_base,
            compose_many(estimated_poses * scale, odom_inv),
            compose_many(true_poses * scale, odom_inv) if world else None,
        )


def tick_transforms(
    true_poses: np.ndarray | None,
    estimated_poses: np.ndarray,
    odometry_poses: np.ndarray,
    odom_origin: np.ndarray,
    tile_size: float,
    world: bool = True,
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
    world : bool
        Whether to compute ``world_odom`` (None otherwise: for a reader of the robots' own
        frames only, such as direct mode's navigators; ``true_poses`` is then not read and
        may be None).
    """
    frames = OdomFrames(odom_origin, tile_size)
    return frames.transforms(true_poses, estimated_poses, odometry_poses, world)


def wire_poses(poses: np.ndarray) -> list[tuple[float, float, float]]:
    """(N, 3) poses as a receiver reads them from ``TransformStamped`` messages.

    Examples
    --------
    >>> wire_poses(np.array([[1.0, 2.0, 0.0]]))
    [(1.0, 2.0, 0.0)]
    """
    return [(float(x), float(y), wire_yaw(float(yaw))) for x, y, yaw in poses.tolist()]
