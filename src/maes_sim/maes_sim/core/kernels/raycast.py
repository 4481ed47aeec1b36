"""Lidar: exact grid traversal (Amanatides-Woo DDA) of every ray, with optional in-place marking.

Semantics (shared bit for bit with :func:`maes_sim.core.kernels.reference.trace_rays_reference`)

* Ray ``k`` of a robot with heading ``h`` points at ``h + (-pi + k * 2 * pi / R)`` (a LaserScan with
  ``angle_min = -pi``, ``angle_increment = 2 * pi / R``); a lidar with a field of view ``fov`` below
  the full circle spreads its rays evenly from ``-fov / 2`` to ``+fov / 2`` instead, both ends
  included (:func:`ray_angle_offsets`); its unit direction is the offset's
  direction rotated by ``h`` (see :func:`ray_directions`), and direction components below
  ``AXIS_SNAP`` (1e-12) count as exactly 0 so rays meant to be axis-parallel are.
* A ray starts in the tile containing its origin (``floor``: a point on a grid line belongs to the
  tile on its positive side, and a ray running along a grid line runs in those tiles) and walks
  the tiles it crosses in order. The range is the distance from the origin to the boundary of the
  first wall tile entered. Along each axis the first boundary is at ``(distance to it) * (1 /
  |direction component|)`` and every next one ``1 / |direction component|`` further, added up
  step by step (a DDA; the rounding this accumulates over a lidar's few tiles is ~1e-15 tiles).
  Anything outside the array is wall, so every ray ends at the map edge at the latest.
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
* Bodies (optional): discs of radius ``body_radius`` centred at ``bodies`` (K, 2), the robots.
  After the traversal, a ray's *range* is shortened to the first point of a disc it meets, when
  that is nearer than its wall: parameter ``t = cc / (b + sqrt(b * b - a * cc))`` with
  ``e = centre - origin``, ``b = d . e``, ``cc = |e|^2 - r^2``, ``a = d . d`` (the near root of
  ``|o + t d - c| = r``, in this cancellation-free form, evaluated in exactly this order), if
  ``t <= max_range``; ``hit`` is then True. Only discs ahead of the ray (``b > 0``) with the
  origin strictly outside (``cc > 0``) count, so a robot never sees its own body (its rays start
  at its centre). Bodies change the ranges only: the marking below follows the walls alone, as
  if the bodies were not there (MAES 2.0's exploration and SLAM; docs/maes2_fidelity.md,
  "Robots in the scan"). :func:`stop_rays_at_bodies` applies bodies to ranges already cast.
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

import functools
import math

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit, prange
from maes_sim.core.grid import OPEN, SOLID, UNKNOWN
from maes_sim.core.kernels import _checks
from maes_sim.core.kernels.reference import AXIS_SNAP

__all__ = [
    "cast_rays",
    "full_circle",
    "ray_angle_offsets",
    "ray_directions",
    "ray_fan",
    "rotate",
    "stop_rays_at_bodies",
    "trace_rays",
]

_UNKNOWN = int(UNKNOWN)  # plain ints: compile-time constants in the kernel
_OPEN = int(OPEN)
_SOLID = int(SOLID)


def full_circle(fov: float | None) -> bool:
    """Whether a field of view (rad; None = MAES 2.0's full circle) is the full circle."""
    return fov is None or fov >= 2.0 * math.pi


def ray_angle_offsets(n_rays: int = 180, fov: float | None = None) -> np.ndarray:
    """Angles (R,) of the rays relative to the heading.

    Full circle (``fov`` None or >= 2 pi): ``-pi + k * 2 * pi / R``, computed as
    ``pi * (2k - R) / R`` so the cardinal offsets are exact when ``R % 4 == 0`` (``k = R/2`` is
    exactly 0: straight ahead; ``k = 0`` is exactly ``-pi``: straight back). A narrower
    ``fov`` (rad): ``-fov / 2 + k * fov / (R - 1)``, both edges included (one ray: straight
    ahead), computed as ``(fov / 2) * (2k - (R - 1)) / (R - 1)`` so the middle ray of an odd
    count is exactly 0.

    Examples
    --------
    >>> ray_angle_offsets(4)
    array([-3.14159265, -1.57079633,  0.        ,  1.57079633])
    >>> ray_angle_offsets(3, math.pi / 2)
    array([-0.78539816,  0.        ,  0.78539816])
    """
    r = _checks.check_n_rays(n_rays)
    if full_circle(fov):
        return np.pi * ((2.0 * np.arange(r) - r) / r)
    if not (isinstance(fov, float | int) and fov > 0.0):
        raise ValueError(f"fov must be a number of radians > 0, got {fov!r}")
    if r == 1:
        return np.zeros(1)
    return (float(fov) / 2.0) * ((2.0 * np.arange(r) - (r - 1)) / (r - 1))


def ray_directions(headings: np.ndarray, n_rays: int = 180, fov: float | None = None) -> np.ndarray:
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
    offsets = ray_angle_offsets(n_rays, fov)
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


@functools.lru_cache(maxsize=32)
def ray_fan(n_rays: int, fov: float | None = None) -> np.ndarray:
    """Unit directions (1, R, 2) of the ray offsets (heading 0), read-only and shared: the fan
    the kernels rotate by each robot's heading.

    Examples
    --------
    >>> ray_fan(4)[0].round(12) + 0.0
    array([[-1.,  0.],
           [ 0., -1.],
           [ 1.,  0.],
           [ 0.,  1.]])
    """
    offsets = ray_angle_offsets(n_rays, None if full_circle(fov) else fov)
    base = np.stack((np.cos(offsets), np.sin(offsets)), axis=-1)[None]
    base.flags.writeable = False
    return base


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
    bodies: np.ndarray | None = None,
    body_radius: float = 0.0,
    parallel: bool = False,
    fov: float | None = None,
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
    bodies : float ndarray (K, 2), optional
        Centres of discs that stop rays (the robots: pass ``origins``), grid coordinates.
    body_radius : float
        Radius of those discs in tiles (>= 0).
    parallel : bool
        Split the robots over numba's threads (same results; only worth it with idle cores).
    fov : float, optional
        Field of view, rad (None: the full circle; see :func:`ray_angle_offsets`).

    Returns
    -------
    ranges : float64 ndarray (N, R)
        Distance to the first wall tile boundary or body, or ``max_range`` when there is none.
    hit : bool ndarray (N, R)
        Whether the ray hit a wall or a body within ``max_range``.

    Examples
    --------
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> walls[:, 3] = True
    >>> ranges, hit = cast_rays(walls, np.array([[1.5, 2.5]]), np.array([0.0]), 7.0, n_rays=4)
    >>> ranges
    array([[1.5, 2.5, 1.5, 2.5]])
    >>> hit
    array([[ True,  True,  True,  True]])

    A second robot 1.5 tiles ahead (radius 0.3) stops the forward ray at 1.2 (marking still
    follows the walls only):

    >>> two = np.array([[1.5, 2.5], [3.0, 2.5]])
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> cast_rays(walls, two, np.zeros(2), 7.0, n_rays=4, bodies=two, body_radius=0.3)[0][0]
    array([1.5, 2.5, 1.2, 2.5])
    """
    origins = _checks.check_points("origins", origins)
    headings = _checks.check_vector("headings", headings, origins.shape[0])
    base = ray_fan(_checks.check_n_rays(n_rays), fov)
    _checks.check_bodies(bodies, body_radius)  # before any marking
    rot = _rotations(headings)
    ranges, hit = _trace(
        walls, origins, rot, base, max_range, explored_tick, tick, slam, slam_index, parallel
    )
    if bodies is not None:
        circle = full_circle(fov)
        _stop(origins, rot, base, float(max_range), bodies, body_radius, circle, ranges, hit)
    return ranges, hit


def _rotations(headings: np.ndarray) -> np.ndarray:
    """(cos, sin) (N, 2) of checked headings, as the kernels rotate the ray fan by them."""
    rot = np.empty((headings.shape[0], 2))
    np.cos(headings, out=rot[:, 0])
    np.sin(headings, out=rot[:, 1])
    return rot


def stop_rays_at_bodies(
    ranges: np.ndarray,
    hit: np.ndarray,
    origins: np.ndarray,
    headings: np.ndarray,
    max_range: float,
    bodies: np.ndarray,
    body_radius: float,
    fov: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ranges and hits of :func:`cast_rays` (without bodies) with ``bodies`` stopping rays.

    ``cast_rays(..., bodies=b, body_radius=r)`` equals ``stop_rays_at_bodies(*cast_rays(...),
    origins, headings, max_range, b, r)`` bit for bit; apart, the wall traversal (and its
    marking) can run every tick and the bodies only when someone reads the ranges. ``ranges``
    (N, R) and ``hit`` (N, R) are not modified; new arrays are returned.

    Examples
    --------
    >>> two = np.array([[1.5, 2.5], [3.0, 2.5]])
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> plain = cast_rays(walls, two, np.zeros(2), 7.0, n_rays=4)
    >>> stop_rays_at_bodies(*plain, two, np.zeros(2), 7.0, two, 0.3)[0][0]
    array([1.5, 2.5, 1.2, 2.5])
    """
    origins = _checks.check_points("origins", origins)
    headings = _checks.check_vector("headings", headings, origins.shape[0])
    max_range = _checks.check_max_range(max_range)
    r = np.asarray(ranges)
    if r.ndim != 2 or r.shape[0] != origins.shape[0] or np.shape(hit) != r.shape:
        raise ValueError(
            f"ranges and hit must both have shape ({origins.shape[0]}, R), got {r.shape} and "
            f"{np.shape(hit)}"
        )
    out_r = np.array(r, dtype=np.float64, copy=True)
    out_h = np.array(hit, dtype=np.bool_, copy=True)
    base = ray_fan(_checks.check_n_rays(r.shape[1]), fov)
    rot = _rotations(headings)
    _stop(origins, rot, base, max_range, bodies, body_radius, full_circle(fov), out_r, out_h)
    return out_r, out_h


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
    bodies: np.ndarray | None = None,
    body_radius: float = 0.0,
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
    _checks.check_bodies(bodies, body_radius)  # before any marking
    rot = np.zeros((origins.shape[0], 2))
    rot[:, 0] = 1.0  # the identity rotation leaves every direction bit-identical
    ranges, hit = _trace(
        walls, origins, rot, directions, max_range, explored_tick, tick, slam, slam_index, parallel
    )
    if bodies is not None:
        _stop(origins, rot, directions, float(max_range), bodies, body_radius, False, ranges, hit)
    return ranges, hit


def _stop(origins, rot, base, max_range, bodies, body_radius, fan, ranges, hit):
    """Check the bodies and shorten ``ranges``/``hit`` in place (``fan``: the full-circle unit
    rays of :func:`cast_rays`, which allow skipping by angle and distance; a narrower field of
    view is checked ray by ray)."""
    bodies, radius = _checks.check_bodies(bodies, body_radius)
    if fan:
        reach = max_range
    else:  # range is in units of the direction's length
        reach = max_range * float(np.sqrt((base**2).sum(axis=-1)).max()) if base.size else 0.0
    search = (reach + radius) * (1.0 + 1e-9) + 1e-9
    same = bodies.shape == origins.shape and bool(np.array_equal(bodies, origins))
    _stop_at_bodies(
        origins, rot, base, max_range, bodies, radius * radius, search * search, fan, same,
        ranges, hit,
    )  # fmt: skip


def cast_rays_checked(
    walls: np.ndarray,
    origins: np.ndarray,
    headings: np.ndarray,
    max_range: float,
    n_rays: int,
    *,
    explored_tick: np.ndarray | None,
    tick: int,
    slam: np.ndarray | None,
    slam_index: np.ndarray | None,
    parallel: bool,
    fov: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cast_rays` without bodies for a caller whose arguments already pass its checks:
    the simulator's own state every tick (walls a C-contiguous bool (H, W) array, origins a
    finite float64 (N, 2) one, headings finite float64 (N,), ``n_rays`` a positive int,
    ``max_range`` finite and > 0, ``explored_tick`` int32 (H, W), ``slam`` uint8 (M, H, W)
    with ``slam_index`` int64 (N,) in -1..M-1). The same results; the one-robot tick of
    the wander benchmark fell from 200 to 184 us when the simulator switched to it."""
    origins = np.ascontiguousarray(origins, dtype=np.float64) + 0.0  # as check_points
    base = ray_fan(n_rays, fov)
    return _run_trace(
        walls,
        origins,
        _rotations(headings),
        base,
        float(max_range),
        explored_tick,
        int(tick),
        slam,
        slam_index,
        parallel,
    )


def _trace(walls, origins, rot, base, max_range, explored_tick, tick, slam, slam_index, parallel):
    """Check the shared arguments and run the kernel."""
    walls = _checks.check_walls(walls)
    max_range = _checks.check_max_range(max_range)
    explored_tick, tick, slam, slam_index = _checks.check_marking(
        walls.shape, origins.shape[0], explored_tick, tick, slam, slam_index
    )
    return _run_trace(
        walls, origins, rot, base, max_range, explored_tick, tick, slam, slam_index, parallel
    )


def _run_trace(
    walls, origins, rot, base, max_range, explored_tick, tick, slam, slam_index, parallel
):
    """Run the kernel on checked arguments."""
    n, r = origins.shape[0], base.shape[1]
    ranges = np.empty((n, r), dtype=np.float64)
    hit = np.empty((n, r), dtype=np.bool_)
    # The kernel always marks (flag tests in its inner loop cost ~10 %): what the caller does not
    # want marked goes to a scratch map of the same size, which is never read.
    if explored_tick is None:
        explored_tick = _scratch(walls.shape, np.int32)
    robots = _index_range(n)
    kernel = _trace_parallel if parallel else _trace_serial
    if slam is not None and not _any_negative(slam_index):  # every robot marks its map
        runs = [(slam, slam_index, robots)]
    elif slam is None:
        runs = [(_scratch((1, *walls.shape), np.uint8), np.zeros(n, dtype=np.int64), robots)]
    else:
        skip = slam_index < 0
        runs = [(slam, slam_index, robots[~skip])]
        if skip.any():
            runs.append(
                (_scratch((1, *walls.shape), np.uint8), np.zeros(n, dtype=np.int64), robots[skip])
            )
    for slam_maps, index, which in runs:
        kernel(
            walls,
            origins,
            rot,
            base,
            max_range,
            explored_tick,
            np.int32(tick),
            slam_maps,
            index,
            which,
            ranges,
            hit,
        )
    return ranges, hit


_SCRATCH: dict[tuple, np.ndarray] = {}
_RANGES: dict[int, np.ndarray] = {}


def _index_range(n: int) -> np.ndarray:
    """``arange(n)`` (int64) kept for the next call: the kernels only read it, and it is
    never handed out."""
    arr = _RANGES.get(n)
    if arr is None:
        if len(_RANGES) > 8:
            _RANGES.clear()
        arr = _RANGES[n] = np.arange(n, dtype=np.int64)
    return arr


@njit(**JIT_OPTIONS)
def _any_negative(index):
    """Whether any entry of ``index`` is < 0 (robots whose marks go to no SLAM map)."""
    out = False
    for i in range(index.shape[0]):
        if index[i] < 0:
            out = True
            break
    return out


def _scratch(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """A reusable array to mark into when the caller wants no marks (contents are garbage)."""
    key = (shape, np.dtype(dtype).str)
    arr = _SCRATCH.get(key)
    if arr is None:
        if len(_SCRATCH) > 8:
            _SCRATCH.clear()
        arr = _SCRATCH[key] = np.zeros(shape, dtype=dtype)
    return arr


@njit(**JIT_OPTIONS)
def _trace_robot(walls, origins, rot, base, max_range, explored, tick, slam, m, ranges, hit, i):
    """All rays of robot ``i``, marking ``explored`` and SLAM map ``slam[m]``."""
    # One flat function on purpose: helper calls (even numba-inlined) for the wall tests and the
    # marking made this loop 2-3x slower, so both are written out by hand. Tiles are addressed
    # by their flat index ``iy * w + ix`` (one add per step instead of 2-D indexing).
    h, w = walls.shape
    hw = h * w
    wf = walls.reshape(hw)
    ef = explored.reshape(hw)
    sf = slam.reshape(slam.size)
    so = m * hw
    ox = origins[i, 0]
    oy = origins[i, 1]
    x0 = math.floor(ox)
    y0 = math.floor(oy)
    if x0 < 0 or y0 < 0 or x0 >= w or y0 >= h:
        ranges[i, :] = 0.0  # origin outside the map: nothing to mark
        hit[i, :] = True
        return
    origin = y0 * w + x0
    ef[origin] = tick
    if wf[origin]:  # origin inside a wall: every range is 0 and this tile is the hit
        sf[so + origin] = _SOLID
        ranges[i, :] = 0.0
        hit[i, :] = True
        return
    if sf[so + origin] == _UNKNOWN:
        sf[so + origin] = _OPEN
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
        # Boundary crossings along each axis: the first at (distance to it) * (1 / |d|), each
        # next one a further 1 / |d| on (sx = 0 and t = inf on an axis the ray runs along).
        sx = 0
        tx = math.inf
        rx = 0.0
        if dx > 0.0:
            sx = 1
            rx = 1.0 / dx
            tx = (x0 + 1 - ox) * rx
        elif dx < 0.0:
            sx = -1
            rx = 1.0 / -dx
            tx = (ox - x0) * rx
        sy = 0
        ty = math.inf
        ry = 0.0
        if dy > 0.0:
            sy = 1
            ry = 1.0 / dy
            ty = (y0 + 1 - oy) * ry
        elif dy < 0.0:
            sy = -1
            ry = 1.0 / -dy
            ty = (oy - y0) * ry
        syw = sy * w
        ix = x0
        iy = y0
        cell = origin
        rng = max_range
        is_hit = False
        while True:
            # The current tile is open, in the map and marked: advance to the next one.
            t = min(tx, ty)
            if t > max_range:
                break
            if tx == ty:
                # Exactly through a corner: blocked when both side tiles are walls (a closed
                # seam); the side tiles are then the hit tiles.
                jx = ix + sx
                jy = iy + sy
                out_x = jx < 0 or jx >= w
                out_y = jy < 0 or jy >= h
                if (out_x or wf[cell + sx]) and (out_y or wf[cell + syw]):
                    rng = t
                    is_hit = True
                    if not out_x:
                        ef[cell + sx] = tick
                        sf[so + cell + sx] = _SOLID
                    if not out_y:
                        ef[cell + syw] = tick
                        sf[so + cell + syw] = _SOLID
                    break
                ix = jx
                iy = jy
                cell += sx + syw
                tx += rx
                ty += ry
            elif tx < ty:
                ix += sx
                cell += sx
                tx += rx
            else:
                iy += sy
                cell += syw
                ty += ry
            if ix < 0 or iy < 0 or ix >= w or iy >= h:
                rng = t
                is_hit = True
                break
            if wf[cell]:
                rng = t
                is_hit = True
                ef[cell] = tick
                sf[so + cell] = _SOLID
                break
            ef[cell] = tick
            if sf[so + cell] == _UNKNOWN:
                sf[so + cell] = _OPEN
        ranges[i, k] = rng
        hit[i, k] = is_hit


# Serial and parallel drivers are separate functions on purpose: numba's on-disk cache keys on
# the Python function, so one function compiled twice with different flags would share an entry.
@njit(**JIT_OPTIONS)
def _trace_serial(
    walls, origins, rot, base, max_range, explored, tick, slam, slam_index, robots, ranges, hit
):
    for j in range(robots.shape[0]):
        i = robots[j]
        _trace_robot(
            walls,
            origins,
            rot,
            base,
            max_range,
            explored,
            tick,
            slam,
            slam_index[i],
            ranges,
            hit,
            i,
        )


@njit(parallel=True, **JIT_OPTIONS)
def _trace_parallel(
    walls, origins, rot, base, max_range, explored, tick, slam, slam_index, robots, ranges, hit
):
    # Robots are independent; concurrent writes are either the same value (explored_tick) or
    # never OPEN-vs-SOLID on one tile (see the module docstring), so the result is deterministic.
    for j in prange(robots.shape[0]):
        i = robots[j]
        _trace_robot(
            walls,
            origins,
            rot,
            base,
            max_range,
            explored,
            tick,
            slam,
            slam_index[i],
            ranges,
            hit,
            i,
        )


@njit(**JIT_OPTIONS)
def _approx_atan2(y, x):
    """``atan2(y, x)`` within 3e-4 rad (a minimax polynomial; the body pass widens its ray
    intervals by 1e-3 rad), a few times cheaper than ``math.atan2``."""
    ax = abs(x)
    ay = abs(y)
    hi = max(ax, ay)
    if hi == 0.0:
        return 0.0
    a = min(ax, ay) / hi
    a2 = a * a
    r = ((-0.0464964749 * a2 + 0.15931422) * a2 - 0.327622764) * a2 * a + a
    if ay > ax:
        r = 0.5 * math.pi - r
    if x < 0.0:
        r = math.pi - r
    if y < 0.0:
        r = -r
    return r


@njit(**JIT_OPTIONS)
def _stop_at_bodies(origins, rot, base, max_range, bodies, r2, reach2, fan, same, ranges, hit):
    """Shorten every robot's ranges (already traced against the walls) at the bodies' discs.

    Every (ray, body) pair that can meet is evaluated with the exact formula of the module
    docstring; pairs that cannot are skipped by conservative tests, so skipping never changes a
    result: a body beyond ``reach`` (``reach2`` is its square, with a margin), the robot's own
    body (``same``: ``bodies`` is ``origins``; its disc holds the origin), and for the uniform
    fan of unit rays of :func:`cast_rays` (``fan``) a body not nearer than the ray's wall (or
    than every ray's range, once the nearest bodies are done), or a ray more than 1e-3 rad
    outside the body's angular extent around its bearing (bounded by
    ``atan(r / sqrt(|e|^2 - r^2)) <= r / sqrt(|e|^2 - r^2)``; the bearing within 3e-4 rad).
    """
    n_rays = base.shape[1]
    per_ray = n_rays / (2.0 * math.pi)
    radius = math.sqrt(r2)
    close2 = (radius * 2.0 + 1.5) ** 2  # the nearest bodies, which occlude most others
    cand = np.empty(bodies.shape[0], dtype=np.int64)
    for i in range(origins.shape[0]):
        if ranges[i, 0] == 0.0 and hit[i, 0] and (ranges[i] == 0.0).all():
            continue  # origin in a wall or off the map: every range is 0
        ox = origins[i, 0]
        oy = origins[i, 1]
        c = rot[i, 0]
        s = rot[i, 1]
        b = i * (base.shape[0] > 1)
        # The candidates, those within ``close2`` first: the rays they stop are then too short
        # for most bodies behind them, which are skipped wholesale or per ray.
        n_close = 0
        n_cand = 0
        for j in range(bodies.shape[0]):
            if same and j == i:
                continue
            ex = bodies[j, 0] - ox
            ey = bodies[j, 1] - oy
            d2 = ex * ex + ey * ey
            if d2 > reach2 or d2 - r2 <= 0.0:  # out of reach, or the origin is inside its disc
                continue
            if d2 <= close2:
                cand[n_cand] = cand[n_close]
                cand[n_close] = j
                n_close += 1
            else:
                cand[n_cand] = j
            n_cand += 1
        longest = max_range
        for q0 in range(n_cand):
            j = cand[q0]
            if q0 == n_close and fan:
                longest = 0.0
                for k in range(n_rays):
                    longest = max(longest, ranges[i, k])
            ex = bodies[j, 0] - ox
            ey = bodies[j, 1] - oy
            d2 = ex * ex + ey * ey
            if fan and q0 >= n_close and math.sqrt(d2) - radius > longest * (1.0 + 1e-9) + 1e-12:
                continue  # beyond every ray's current range
            k_lo = 0
            k_hi = n_rays - 1
            near = -1.0
            if fan:
                near = (math.sqrt(d2) - radius) * (
                    1.0 - 1e-9
                ) - 1e-12  # no unit ray meets it sooner
                bearing = _approx_atan2(ey * c - ex * s, ex * c + ey * s)  # rel. to the heading
                half = radius / math.sqrt(d2 - r2)
                # widened by 1e-3 rad, more than the bearing's error
                k_lo = int(math.floor((bearing - half - 1e-3 + math.pi) * per_ray))
                k_hi = int(math.ceil((bearing + half + 1e-3 + math.pi) * per_ray))
                if k_hi - k_lo + 1 >= n_rays:
                    k_lo = 0
                    k_hi = n_rays - 1
            cc = ex * ex + ey * ey - r2
            for q in range(k_lo, k_hi + 1):
                k = q % n_rays
                if ranges[i, k] < near:
                    continue
                bx = base[b, k, 0]
                by = base[b, k, 1]
                dx = c * bx - s * by
                dy = s * bx + c * by
                if abs(dx) < AXIS_SNAP:
                    dx = 0.0
                if abs(dy) < AXIS_SNAP:
                    dy = 0.0
                bb = dx * ex + dy * ey
                if bb <= 0.0:
                    continue
                aa = dx * dx + dy * dy
                disc = bb * bb - aa * cc
                if disc < 0.0:
                    continue
                tb = cc / (bb + math.sqrt(disc))
                if tb <= max_range and tb < ranges[i, k]:  # nearer than its wall
                    ranges[i, k] = tb
                    hit[i, k] = True
