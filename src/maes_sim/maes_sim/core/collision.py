"""Contacts between robots (discs) and wall tiles (unit squares), and between robots.

All positions are grid coordinates (tiles); a robot is a disc of radius ``radius`` tiles;
``walls[iy, ix]`` is True for a wall tile covering ``[ix, ix + 1) x [iy, iy + 1)``; anything
outside the array is wall.

Contact model (what Unity's 2D physics gives MAES, minus restitution and friction)
    * Penetration is removed by moving the disc out along the contact normal (from the closest
      point of the obstacle to the disc centre) by exactly the penetration depth: the part of the
      motion that points into the contact is removed, the tangential part is kept, so a robot
      pushed against a wall at an angle slides along it. A robot's speed state is its drive
      (wheel) speed along the heading and is not changed by a contact: with the drive force held,
      a Unity ``Rigidbody2D`` also slides at ``u * cos(angle)`` along the wall, which is exactly
      what projecting a drive of ``u`` along the heading gives. (Cutting the speed state at every
      contact instead would compound with the slow 0.4 s rise and stall sliding robots.) The
      motion actually made is what ``TickResult.distance`` / ``odom_delta`` report.
    * Robot-robot overlaps are split evenly between the two robots, at most
      ``MAX_STEP_FRACTION * radius`` per robot per pass, so a correction can never carry a centre
      across a wall tile. Unlike walls, a robot contact also cuts the drive speed by the part of
      the robot's motion pointing into the other robot (``v <- v * (1 - (m . n)^2)``, ``m`` the
      unit direction of this sub-step's motion, not the heading: a robot sliding along a wall
      into another one heads elsewhere). Without it a crowd all pushing the same way piles up
      faster than one correction pass per sub-step can separate it. Robots rubbing past each
      other slow down and a robot cannot shove another one along, which is harmless for
      exploration.
    * A robot whose disc still overlaps a wall after the projection (only possible when wedged
      between robots and walls) is put back where it started the sub-step. Together with the
      sub-step size (at most ``MAX_STEP_FRACTION * radius`` of travel) this makes tunnelling
      impossible: a robot's disc never overlaps a wall by more than :data:`CONTACT_EPS` at the
      end of a sub-step, whatever the speed or time step.

Resolution order is fixed (robots by index, tiles bottom-to-top and left-to-right, robot pairs by
the index of the first robot then cell order), so equal inputs give bit-identical outputs.
"""

from __future__ import annotations

import math

import numpy as np

from .kernels.physics import (
    CONTACT_EPS,
    MAX_STEP_FRACTION,
    TOUCH_TOL,
    resolve_contacts,
    touching_kernel,
    wall_depth_kernel,
)

__all__ = [
    "CONTACT_EPS",
    "MAX_STEP_FRACTION",
    "TOUCH_TOL",
    "RobotGrid",
    "resolve_contacts",
    "robot_overlap",
    "touching",
    "wall_penetration",
]


class RobotGrid:
    """Scratch arrays of the uniform robot grid (spatial hash) for N robots of one radius.

    The grid is rebuilt at every use over the robots' bounding box. Its cell side is at least
    the robot diameter ``cell_min`` (so only the 3x3 block of cells around a robot can hold
    robots it touches) and at least the box's longer side / ``per_axis``, so there are at most
    ``(per_axis + 1) ** 2``, about 9 N, cells: the robots' spread, not the map's size, sets the
    cost, and a crowd in one room of a big map gets small cells.

    Examples
    --------
    >>> g = RobotGrid(0.3, 1000)
    >>> g.cell_min, g.per_axis, g.starts.size
    (0.6, 95, 9217)
    """

    def __init__(self, radius: float, n_robots: int) -> None:
        n = max(int(n_robots), 1)
        self.cell_min = max(2.0 * float(radius), 1e-6)
        self.per_axis = max(1, math.ceil(3.0 * math.sqrt(n)))
        self.starts = np.zeros((self.per_axis + 1) ** 2 + 1, dtype=np.int64)
        self.order = np.zeros(n, dtype=np.int64)
        self.cells = np.zeros((n, 2), dtype=np.int64)

    def args(self) -> tuple:
        """The grid arguments of the kernels: ``cell_min, per_axis, starts, order, cxy``."""
        return self.cell_min, self.per_axis, self.starts, self.order, self.cells


def _as_positions(positions: np.ndarray) -> np.ndarray:
    pos = np.ascontiguousarray(positions, dtype=np.float64)
    if pos.ndim != 2 or pos.shape[1] != 2:
        raise ValueError(f"positions must have shape (N, 2), got {pos.shape}")
    return pos


def _radii(radius: float | np.ndarray, n: int) -> np.ndarray:
    """One radius per robot (N,) from a scalar or an (N,) array (robot types)."""
    r = np.asarray(radius, dtype=np.float64)
    if r.ndim == 0:
        return np.full(n, float(r))
    if r.shape != (n,):
        raise ValueError(f"radius must be a number or have shape ({n},), got {r.shape}")
    return np.ascontiguousarray(r)


def wall_penetration(
    walls: np.ndarray, positions: np.ndarray, radius: float | np.ndarray
) -> np.ndarray:
    """Depth (tiles) by which each robot disc overlaps wall tiles (0 when clear).

    Parameters
    ----------
    walls : ndarray of bool, shape (H, W)
        ``walls[iy, ix]``; outside the array counts as wall.
    positions : ndarray, shape (N, 2)
        Disc centres, grid coordinates.
    radius : float or ndarray, shape (N,)
        Disc radius, tiles (one per robot for a team of types).

    Returns
    -------
    ndarray of float64, shape (N,)
        ``radius - distance to the nearest wall point`` where positive, else 0.

    Examples
    --------
    >>> walls = np.zeros((3, 3), dtype=bool); walls[1, 2] = True
    >>> wall_penetration(walls, np.array([[1.5, 1.5], [1.9, 1.5]]), 0.3).round(3).tolist()
    [0.0, 0.2]
    """
    pos = _as_positions(positions)
    out = np.zeros(len(pos), dtype=np.float64)
    r = _radii(radius, len(pos))
    wall_depth_kernel(np.ascontiguousarray(walls, dtype=np.bool_), pos, r, out)
    return out


def touching(
    walls: np.ndarray, positions: np.ndarray, radius: float | np.ndarray, tol: float = TOUCH_TOL
) -> np.ndarray:
    """Which robots touch (within ``tol``) a wall tile or another robot.

    Parameters
    ----------
    walls : ndarray of bool, shape (H, W)
    positions : ndarray, shape (N, 2)
        Disc centres, grid coordinates.
    radius : float or ndarray, shape (N,)
        Disc radius, tiles (one per robot for a team of types).
    tol : float
        Gap (tiles) still counted as touching.

    Returns
    -------
    ndarray of bool, shape (N,)

    Examples
    --------
    >>> walls = np.zeros((4, 4), dtype=bool)
    >>> touching(walls, np.array([[1.0, 2.0], [1.6, 2.0], [2.5, 0.3]]), 0.3).tolist()
    [True, True, True]
    >>> touching(walls, np.array([[1.0, 2.0], [2.5, 2.0]]), 0.3).tolist()
    [False, False]
    """
    pos = _as_positions(positions)
    w = np.ascontiguousarray(walls, dtype=np.bool_)
    r = _radii(radius, len(pos))
    grid = RobotGrid(float(r.max()) if len(r) else 0.0, len(pos))
    out = np.zeros(len(pos), dtype=np.bool_)
    touching_kernel(w, pos, r, float(tol), *grid.args(), out)
    return out


def robot_overlap(positions: np.ndarray, radius: float | np.ndarray) -> float:
    """Largest overlap depth (tiles) between any two robot discs (0.0 when none overlap).

    Brute force O(N^2): meant for tests and checks, not the hot path.

    Examples
    --------
    >>> robot_overlap(np.array([[0.0, 0.0], [0.5, 0.0], [3.0, 0.0]]), 0.3)
    0.09999999999999998
    """
    pos = _as_positions(positions)
    if len(pos) < 2:
        return 0.0
    d = np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(axis=-1))
    np.fill_diagonal(d, np.inf)
    r = _radii(radius, len(pos))
    return float(max(0.0, (r[:, None] + r[None, :] - d).max()))
