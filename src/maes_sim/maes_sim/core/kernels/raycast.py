"""Lidar: exact grid traversal (Amanatides-Woo DDA) of every ray, with optional in-place marking.

Semantics (shared bit for bit with :func:`maes_sim.core.kernels.reference.trace_rays_reference`)

* Ray ``k`` of a robot with heading ``h`` points at ``h + (-pi + k * 2 * pi / R)`` (a LaserScan with
  ``angle_min = -pi``, ``angle_increment = 2 * pi / R``); its unit direction is the offset's
  direction rotated by ``h`` (see :func:`ray_directions`), and direction components below
  ``AXIS_SNAP`` (1e-12) count as exactly 0 so rays meant to be axis-parallel are.
* A ray starts in the tile containing its origin (``floor``: a point on a grid line belongs to the
  tile on its positive side, and a ray running along a grid line runs in those tiles) and walks
  the tiles it crosses in order. The range is the distance from the origin to the boundary of the
  first wall tile entered, computed afresh at every boundary as ``distance to the boundary /
  |direction component|`` (no accumulated error). Anything outside the array is wall, so every ray
  ends at the map edge at the latest.
* No wall within ``max_range``: range ``max_range`` and ``hit`` False. The interval is closed: a
  wall whose boundary is exactly ``max_range`` away is a hit.
* Origin inside a wall tile: range 0, ``hit`` True, and that tile is the hit tile. Origin outside
  the map: range 0, ``hit`` True, nothing marked.
* Corner rule: a ray passing exactly through a tile corner moves diagonally. When both tiles beside
  the corner (the x-neighbour and the y-neighbour) are walls, the ray is blocked there: a hit at
  the corner, and both side tiles are the hit tiles. A lidar therefore never sees through a diagonal
  wall seam (robots cannot pass there either). When at most one of them is a wall, the ray only
  grazes it at a point: it goes on into the diagonal tile, and the grazed tiles are not marked.
  The map's outer corners are such seams (outside is wall).
* Marking (optional, in the same traversal): every tile the ray reached, up to and including the
  hit tile(s), gets ``explored_tick[iy, ix] = tick``; in the robot's SLAM map ``slam[m]`` (``m =
  slam_index[i]``, -1 = skip) crossed tiles become OPEN unless already SOLID and hit tiles become
  SOLID (MAES 2.0, section 3.2.3). Tiles beyond the hit and tiles outside the map are not touched.
  Within one call a crossed tile is never a wall and a hit tile always is, so no tile is written
  both OPEN and SOLID: the result does not depend on the order of the rays, several robots may
  share one SLAM map, and ``parallel=True`` gives the same bits as the serial kernel.
* ``parallel=True`` splits the robots over numba's threads. It pays off only with idle cores: on a
  busy 2-core machine a parallel call can take milliseconds waiting for a thread, so the default
  is serial (the simulator's speed targets are for one core).
"""

from __future__ import annotations

import math

import numpy as np

from maes_sim.core.grid import OPEN, SOLID
from maes_sim.core.kernels import _checks
from maes_sim.core.kernels._compat import HAVE_NUMBA, JIT_OPTIONS, njit, prange
from maes_sim.core.kernels.reference import AXIS_SNAP, trace_rays_reference

__all__ = ["cast_rays", "ray_angle_offsets", "ray_directions", "rotate", "trace_rays"]

_OPEN = int(OPEN)  # plain ints: compile-time constants in the kernel
_SOLID = int(SOLID)


def ray_angle_offsets(n_rays: int = 180) -> np.ndarray:
    """Angles (R,) of the rays relative to the heading: ``-pi + k * 2 * pi / R``.

    Computed as ``pi * (2k - R) / R`` so the cardinal offsets are exact when ``R % 4 == 0``
    (``k = R/2`` is exactly 0: straight ahead; ``k = 0`` is exactly ``-pi``: straight back).

    Examples
    --------
    >>> ray_angle_offsets(4)
    array([-3.14159265, -1.57079633,  0.        ,  1.57079633])
    """
    r = _checks.check_n_rays(n_rays)
    return np.pi * ((2.0 * np.arange(r) - r) / r)


def ray_directions(headings: np.ndarray, n_rays: int = 180) -> np.ndarray:
    """Unit direction vectors (N, R, 2): ray ``k`` of robot ``i`` at ``headings[i] + offset_k``.

    Computed by rotating the R offset directions by each heading (2N + 2R trigonometric calls
    instead of 2NR). Components with magnitude below ``AXIS_SNAP`` are set to exactly 0 so rays
    meant to be axis-parallel are.

    Examples
    --------
    >>> ray_directions(np.array([0.0]), 4)[0]
    array([[-1.,  0.],
           [ 0., -1.],
           [ 1.,  0.],
           [ 0.,  1.]])
    """
    heads = np.asarray(headings, dtype=np.float64)
    if heads.ndim != 1:
        raise ValueError(f"headings must have shape (N,), got {heads.shape}")
    offsets = ray_angle_offsets(n_rays)
    base = np.stack((np.cos(offsets), np.sin(offsets)), axis=-1)[None]
    return rotate(np.stack((np.cos(heads), np.sin(heads)), axis=-1), base)


def rotate(rot: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Rotate directions ``base`` (1 or N, R, 2) by ``rot`` (N, 2) = (cos, sin) per robot.

    The exact floating-point operations of the kernel, then the axis snap (components below
    ``AXIS_SNAP`` become 0). Returns (N, R, 2).

    Examples
    --------
    >>> rotate(np.array([[0.0, 1.0]]), np.array([[[1.0, 0.0]]]))
    array([[[0., 1.]]])
    """
    c = rot[:, None, 0]
    s = rot[:, None, 1]
    bx = base[..., 0]
    by = base[..., 1]
    dirs = np.stack((c * bx - s * by, s * bx + c * by), axis=-1)
    dirs[np.abs(dirs) < AXIS_SNAP] = 0.0
    return dirs


def cast_rays(
    walls: np.ndarray,
    origins: np.ndarray,
    headings: np.ndarray,
    max_range: float,
    n_rays: int = 180,
    *,
    explored_tick: np.ndarray | None = None,
    tick: int = 0,
    slam: np.ndarray | None = None,
    slam_index: np.ndarray | None = None,
    parallel: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Cast ``n_rays`` lidar rays from each robot (see the module docstring for the exact rules).

    Parameters
    ----------
    walls : bool ndarray (H, W)
        ``walls[iy, ix]``; outside the array counts as wall.
    origins : float ndarray (N, 2)
        Ray origins in grid coordinates.
    headings : float ndarray (N,)
        Robot headings (rad, CCW). Ray ``k`` points at ``heading + (-pi + k * 2 * pi / R)``.
    max_range : float
        Lidar range in tiles (> 0).
    n_rays : int
        Rays per robot, ``R``.
    explored_tick : int32 ndarray (H, W), optional
        Updated in place: ``tick`` for every tile a ray reached (including the hit tile).
    tick : int
        Value written into ``explored_tick``.
    slam : uint8 ndarray (M, H, W), optional
        SLAM maps updated in place (UNKNOWN=0, OPEN=1, SOLID=2); needs ``slam_index``.
    slam_index : int ndarray (N,), optional
        Map of each robot in ``slam``; -1 = do not mark this robot.
    parallel : bool
        Split the robots over numba's threads (same results; only worth it with idle cores).

    Returns
    -------
    ranges : float64 ndarray (N, R)
        Distance to the first wall tile boundary, or ``max_range`` when there is none.
    hit : bool ndarray (N, R)
        Whether the ray hit a wall within ``max_range``.

    Examples
    --------
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> walls[:, 3] = True
    >>> ranges, hit = cast_rays(walls, np.array([[1.5, 2.5]]), np.array([0.0]), 7.0, n_rays=4)
    >>> ranges
    array([[1.5, 2.5, 1.5, 2.5]])
    >>> hit
    array([[ True,  True,  True,  True]])
    """
    origins = _checks.check_points("origins", origins)
    headings = _checks.check_vector("headings", headings, origins.shape[0])
    offsets = ray_angle_offsets(n_rays)
    base = np.stack((np.cos(offsets), np.sin(offsets)), axis=-1)[None]
    rot = np.stack((np.cos(headings), np.sin(headings)), axis=-1)
    return _trace(
        walls, origins, rot, base, max_range, explored_tick, tick, slam, slam_index, parallel
    )


def trace_rays(
    walls: np.ndarray,
    origins: np.ndarray,
    directions: np.ndarray,
    max_range: float,
    *,
    explored_tick: np.ndarray | None = None,
    tick: int = 0,
    slam: np.ndarray | None = None,
    slam_index: np.ndarray | None = None,
    parallel: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Like :func:`cast_rays` but with explicit ray directions (N, R, 2).

    Directions need not be unit vectors: the range is measured in units of the direction's length
    (pass unit vectors to get tiles). Useful for exact hand-made rays, e.g. ``(1, 1)`` through
    tile corners.

    Examples
    --------
    >>> walls = np.zeros((3, 3), dtype=bool)
    >>> walls[0, 1] = walls[1, 0] = True  # tiles (1, 0), (0, 1): a closed seam at corner (1, 1)
    >>> d = np.array([[[1.0, 1.0]]]) / np.sqrt(2.0)  # exactly through the corner
    >>> trace_rays(walls, np.array([[0.5, 0.5]]), d, 5.0)
    (array([[0.70710678]]), array([[ True]]))
    """
    origins = _checks.check_points("origins", origins)
    directions = _checks.check_directions(directions, origins.shape[0])
    rot = np.zeros((origins.shape[0], 2))
    rot[:, 0] = 1.0  # the identity rotation leaves every direction bit-identical
    return _trace(
        walls, origins, rot, directions, max_range, explored_tick, tick, slam, slam_index, parallel
    )


def _trace(walls, origins, rot, base, max_range, explored_tick, tick, slam, slam_index, parallel):
    """Check the shared arguments and run the kernel (or the reference without numba)."""
    walls = _checks.check_walls(walls)
    max_range = _checks.check_max_range(max_range)
    n, r = origins.shape[0], base.shape[1]
    explored_tick, tick, slam, slam_index = _checks.check_marking(
        walls.shape, n, explored_tick, tick, slam, slam_index
    )
    if not HAVE_NUMBA:
        return trace_rays_reference(
            walls, origins, rotate(rot, base), max_range, explored_tick, tick, slam, slam_index
        )
    ranges = np.empty((n, r), dtype=np.float64)
    hit = np.empty((n, r), dtype=np.bool_)
    do_explored = explored_tick is not None
    do_slam = slam is not None
    kernel = _trace_parallel if parallel else _trace_serial
    kernel(
        walls,
        origins,
        rot,
        base,
        max_range,
        explored_tick if do_explored else _NO_EXPLORED,
        np.int32(tick),
        do_explored,
        slam if do_slam else _NO_SLAM,
        slam_index if do_slam else _NO_INDEX,
        do_slam,
        ranges,
        hit,
    )
    return ranges, hit


# Placeholders for absent marking arrays: one compiled signature, no None specialisation.
_NO_EXPLORED = np.zeros((1, 1), dtype=np.int32)
_NO_SLAM = np.zeros((1, 1, 1), dtype=np.uint8)
_NO_INDEX = np.zeros(0, dtype=np.int64)


@njit(**JIT_OPTIONS)
def _trace_robot(
    walls, origins, rot, base, max_range, explored, tick, do_explored, slam, slam_index, do_slam,
    ranges, hit, i,
):  # fmt: skip
    """All rays of robot ``i``."""
    # One flat function on purpose: helper calls (even numba-inlined) for the wall tests and the
    # marking made this loop 2-3x slower, so both are written out by hand.
    h, w = walls.shape
    m = slam_index[i] if do_slam else -1
    ox = origins[i, 0]
    oy = origins[i, 1]
    x0 = math.floor(ox)
    y0 = math.floor(oy)
    c = rot[i, 0]
    s = rot[i, 1]
    b = i * (base.shape[0] > 1)  # same ray set for every robot when base has one row
    for k in range(base.shape[1]):
        bx = base[b, k, 0]
        by = base[b, k, 1]
        dx = c * bx - s * by
        dy = s * bx + c * by
        if abs(dx) < AXIS_SNAP:
            dx = 0.0
        if abs(dy) < AXIS_SNAP:
            dy = 0.0
        adx = abs(dx)  # crossings as (distance to boundary) / |d|: never a negative zero
        ady = abs(dy)
        ix = x0
        iy = y0
        if ix < 0 or iy < 0 or ix >= w or iy >= h:
            ranges[i, k] = 0.0  # origin outside the map: nothing to mark
            hit[i, k] = True
            continue
        rng = max_range
        is_hit = False
        solid = walls[iy, ix]  # origin inside a wall: range 0, this tile is the hit
        if solid:
            rng = 0.0
            is_hit = True
        sx = 0
        tx = math.inf
        if dx > 0.0:
            sx = 1
            tx = (ix + 1 - ox) / adx
        elif dx < 0.0:
            sx = -1
            tx = (ox - ix) / adx
        sy = 0
        ty = math.inf
        if dy > 0.0:
            sy = 1
            ty = (iy + 1 - oy) / ady
        elif dy < 0.0:
            sy = -1
            ty = (oy - iy) / ady
        while True:
            # Mark the current tile (in bounds here), then stop on a hit or advance.
            if do_explored:
                explored[iy, ix] = tick
            if m >= 0:
                if solid:
                    slam[m, iy, ix] = _SOLID
                elif slam[m, iy, ix] != _SOLID:
                    slam[m, iy, ix] = _OPEN
            if is_hit:
                break
            t = min(tx, ty)
            if t > max_range:
                break
            if tx < ty:
                ix += sx
                tx = ((ix + 1 - ox) if sx > 0 else (ox - ix)) / adx
            elif ty < tx:
                iy += sy
                ty = ((iy + 1 - oy) if sy > 0 else (oy - iy)) / ady
            else:
                # Exactly through a corner: blocked when both side tiles are walls (a
                # closed seam); the side tiles are then the hit tiles.
                jx = ix + sx
                jy = iy + sy
                out_x = jx < 0 or jx >= w
                out_y = jy < 0 or jy >= h
                if (out_x or walls[iy, jx]) and (out_y or walls[jy, ix]):
                    rng = t
                    is_hit = True
                    solid = True
                    if not out_x:
                        if do_explored:
                            explored[iy, jx] = tick
                        if m >= 0:
                            slam[m, iy, jx] = _SOLID
                    if out_y:
                        break
                    iy = jy  # the loop head marks (ix, jy) and stops
                    continue
                ix = jx
                iy = jy
                tx = ((ix + 1 - ox) if sx > 0 else (ox - ix)) / adx
                ty = ((iy + 1 - oy) if sy > 0 else (oy - iy)) / ady
            if ix < 0 or iy < 0 or ix >= w or iy >= h:
                rng = t
                is_hit = True
                break
            if walls[iy, ix]:
                rng = t
                is_hit = True
                solid = True
        ranges[i, k] = rng
        hit[i, k] = is_hit


# Serial and parallel drivers are separate functions on purpose: numba's on-disk cache keys on
# the Python function, so one function compiled twice with different flags would share an entry.
@njit(**JIT_OPTIONS)
def _trace_serial(
    walls, origins, rot, base, max_range, explored, tick, do_explored, slam, slam_index, do_slam,
    ranges, hit,
):  # fmt: skip
    for i in range(origins.shape[0]):
        _trace_robot(
            walls, origins, rot, base, max_range, explored, tick, do_explored, slam, slam_index,
            do_slam, ranges, hit, i,
        )  # fmt: skip


@njit(parallel=True, **JIT_OPTIONS)
def _trace_parallel(
    walls, origins, rot, base, max_range, explored, tick, do_explored, slam, slam_index, do_slam,
    ranges, hit,
):  # fmt: skip
    # Robots are independent; concurrent writes are either the same value (explored_tick) or
    # never OPEN-vs-SOLID on one tile (see the module docstring), so the result is deterministic.
    for i in prange(origins.shape[0]):
        _trace_robot(
            walls, origins, rot, base, max_range, explored, tick, do_explored, slam, slam_index,
            do_slam, ranges, hit, i,
        )  # fmt: skip
