"""Pure-numpy references of the compiled kernels: the same exact traversals, vectorized over rays.

They define the results the numba kernels must reproduce bit for bit (same floating-point
operations in the same order; tests compare them on random maps). They are not a runtime
fallback: numba is required. Inputs are assumed already checked by the public functions in
:mod:`~maes_sim.core.kernels.raycast` and :mod:`~maes_sim.core.kernels.los`.

Every step advances all still-active rays (or segments) by one tile boundary at once, so a call
costs about ``max tiles per ray`` numpy passes.
"""

from __future__ import annotations

import numpy as np

from maes_sim.core.grid import OPEN, SOLID

__all__ = [
    "AXIS_SNAP",
    "line_of_sight_reference",
    "trace_rays_reference",
    "wall_distance_reference",
]

#: Direction components smaller than this in magnitude (e.g. the rounding noise of cos/sin at
#: multiples of pi/2) count as exactly 0, so rays meant to be axis-parallel are.
AXIS_SNAP = 1e-12


def _is_wall(walls: np.ndarray, ix: np.ndarray, iy: np.ndarray) -> np.ndarray:
    h, w = walls.shape
    inside = (ix >= 0) & (iy >= 0) & (ix < w) & (iy < h)
    out = ~inside
    out[inside] = walls[iy[inside], ix[inside]]
    return out


def _first_crossing(o: np.ndarray, i: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step sign and parameter of the first boundary crossing along one axis (inf when d == 0)."""
    step = np.where(d > 0.0, 1, np.where(d < 0.0, -1, 0)).astype(np.int64)
    return step, _next_crossing(o, i, d, step)


def _next_crossing(o: np.ndarray, i: np.ndarray, d: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Parameter of the boundary of tile ``i`` ahead of the ray, inf when d == 0.

    ``(distance to the boundary) / |d|``, never a negative zero; the int tile index is converted
    to float inside the subtraction, exactly as in the numba kernels.
    """
    num = np.where(step > 0, (i + 1) - o, o - i)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = num / np.abs(d)
    return np.where(step != 0, t, np.inf)


def _ray_crossings(o: np.ndarray, i: np.ndarray, d: np.ndarray):
    """Lidar DDA along one axis: (step sign, first crossing, crossing spacing ``1 / |d|``).

    The first crossing is ``(distance to the boundary) * (1 / |d|)``; the kernel then adds the
    spacing at every step. ``inf`` (and spacing 0) when ``d == 0``.
    """
    step = np.where(d > 0.0, 1, np.where(d < 0.0, -1, 0)).astype(np.int64)
    num = np.where(step > 0, (i + 1) - o, o - i)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(step != 0, 1.0 / np.abs(d), 0.0)
        t = np.where(step != 0, num * inv, np.inf)
    return step, t, inv


class _Marker:
    """Applies explored/SLAM marks; order-free because no tile gets both OPEN and SOLID."""

    def __init__(self, walls, explored_tick, tick, slam, m):
        self.h, self.w = walls.shape
        self.explored, self.tick, self.slam, self.m = explored_tick, tick, slam, m

    def __call__(self, rays: np.ndarray, ix: np.ndarray, iy: np.ndarray, code: np.uint8) -> None:
        inside = (ix >= 0) & (iy >= 0) & (ix < self.w) & (iy < self.h)
        rays, ix, iy = rays[inside], ix[inside], iy[inside]
        if self.explored is not None:
            self.explored[iy, ix] = self.tick
        if self.slam is not None:
            m = self.m[rays]
            sel = m >= 0
            m, ix, iy = m[sel], ix[sel], iy[sel]
            if code == SOLID:
                self.slam[m, iy, ix] = SOLID
            else:
                cur = self.slam[m, iy, ix]
                self.slam[m, iy, ix] = np.where(cur == SOLID, SOLID, OPEN)


def trace_rays_reference(
    walls: np.ndarray,
    origins: np.ndarray,
    directions: np.ndarray,
    max_range: float,
    explored_tick: np.ndarray | None = None,
    tick: int = 0,
    slam: np.ndarray | None = None,
    slam_index: np.ndarray | None = None,
    bodies: np.ndarray | None = None,
    body_radius: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Numpy reference of :func:`maes_sim.core.kernels.raycast.trace_rays` (same semantics).

    Parameters are as there: walls bool (H, W), origins float64 (N, 2), directions float64
    (N, R, 2), optional explored_tick int32 (H, W) and slam uint8 (M, H, W) with slam_index int64
    (N,), updated in place, optional bodies float64 (K, 2) with body_radius. Returns ranges
    float64 (N, R) and hit bool (N, R).

    Examples
    --------
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> walls[:, 3] = True
    >>> trace_rays_reference(walls, np.array([[1.5, 2.5]]), np.array([[[1.0, 0.0]]]), 7.0)
    (array([[1.5]]), array([[ True]]))
    """
    n, r = directions.shape[:2]
    origins = origins + 0.0  # no negative zeros (as the public functions ensure)
    ox = np.repeat(origins[:, 0], r)
    oy = np.repeat(origins[:, 1], r)
    dx = directions[..., 0].ravel()
    dy = directions[..., 1].ravel()
    dx = np.where(np.abs(dx) < AXIS_SNAP, 0.0, dx)
    dy = np.where(np.abs(dy) < AXIS_SNAP, 0.0, dy)
    m = np.repeat(slam_index, r) if slam is not None else None
    mark = _Marker(walls, explored_tick, tick, slam, m)
    ranges = np.full(n * r, float(max_range))
    hit = np.zeros(n * r, dtype=bool)

    ix = np.floor(ox).astype(np.int64)
    iy = np.floor(oy).astype(np.int64)
    rays = np.arange(n * r)
    start_wall = _is_wall(walls, ix, iy)
    ranges[start_wall] = 0.0
    hit[start_wall] = True
    mark(rays[start_wall], ix[start_wall], iy[start_wall], SOLID)
    mark(rays[~start_wall], ix[~start_wall], iy[~start_wall], OPEN)
    sx, tx, rx = _ray_crossings(ox, ix, dx)
    sy, ty, ry = _ray_crossings(oy, iy, dy)

    act = rays[~start_wall]
    while act.size:
        t = np.minimum(tx[act], ty[act])
        go = t <= max_range
        act, t = act[go], t[go]
        txa, tya = tx[act], ty[act]
        corner = txa == tya
        seam = np.zeros(act.size, dtype=bool)
        if corner.any():
            c = act[corner]
            side_x = _is_wall(walls, ix[c] + sx[c], iy[c])
            side_y = _is_wall(walls, ix[c], iy[c] + sy[c])
            seam[corner] = side_x & side_y
            s = act[seam]
            ranges[s] = t[seam]
            hit[s] = True
            mark(s, ix[s] + sx[s], iy[s], SOLID)
            mark(s, ix[s], iy[s] + sy[s], SOLID)
        keep = ~seam
        act, t, txa, tya = act[keep], t[keep], txa[keep], tya[keep]
        step_x = act[txa <= tya]
        step_y = act[tya <= txa]
        ix[step_x] += sx[step_x]
        tx[step_x] += rx[step_x]
        iy[step_y] += sy[step_y]
        ty[step_y] += ry[step_y]
        blocked = _is_wall(walls, ix[act], iy[act])
        b = act[blocked]
        ranges[b] = t[blocked]
        hit[b] = True
        mark(b, ix[b], iy[b], SOLID)
        act = act[~blocked]
        mark(act, ix[act], iy[act], OPEN)
    # Bodies shorten the ranges only (marking followed the walls alone).
    body_t = _body_distances(ox, oy, dx, dy, bodies, body_radius)
    nearer = (body_t <= max_range) & (body_t < ranges)
    ranges[nearer] = body_t[nearer]
    hit[nearer] = True
    return ranges.reshape(n, r), hit.reshape(n, r)


def _body_distances(ox, oy, dx, dy, bodies, body_radius):
    """Per ray: the parameter of its first point on a body's disc, inf when none."""
    if bodies is None or len(bodies) == 0:
        return np.full(ox.shape, np.inf)
    r2 = float(body_radius) * float(body_radius)
    ex = bodies[None, :, 0] - ox[:, None]  # (rays, K)
    ey = bodies[None, :, 1] - oy[:, None]
    bb = dx[:, None] * ex + dy[:, None] * ey
    cc = ex * ex + ey * ey - r2
    aa = dx * dx + dy * dy
    disc = bb * bb - aa[:, None] * cc
    ok = (bb > 0.0) & (cc > 0.0) & (disc >= 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tb = np.where(ok, cc / (bb + np.sqrt(np.where(ok, disc, 0.0))), np.inf)
    return tb.min(axis=1)


def _segment_walk(walls: np.ndarray, a: np.ndarray, b: np.ndarray, stop_at_wall: bool):
    """Walk segments a->b (M, 2) over tiles; returns (blocked (M,), wall length in s units (M,)).

    The parameter ``s`` runs from 0 at ``a`` to 1 at ``b``. A wall tile blocks when the segment
    spends a positive length of ``s`` in it; a closed seam blocks at ``0 < s < 1``.
    ``stop_at_wall`` ends a segment once it is blocked (line of sight only).
    """
    ax, ay = a[:, 0] + 0.0, a[:, 1] + 0.0  # no negative zeros (as the public functions ensure)
    dx = b[:, 0] - ax
    dy = b[:, 1] - ay
    ix = np.floor(ax).astype(np.int64)
    iy = np.floor(ay).astype(np.int64)
    sx, tx = _first_crossing(ax, ix, dx)
    sy, ty = _first_crossing(ay, iy, dy)
    in_wall = _is_wall(walls, ix, iy)
    blocked = in_wall & (np.minimum(tx, ty) > 0.0)
    run_start = np.zeros(a.shape[0])  # s where the current run of wall tiles began
    inside = np.zeros(a.shape[0])  # total s inside walls
    act = np.flatnonzero(~blocked) if stop_at_wall else np.arange(a.shape[0])
    while act.size:
        t = np.minimum(tx[act], ty[act])
        done = t >= 1.0
        fin = act[done]
        inside[fin] += np.where(in_wall[fin], 1.0 - run_start[fin], 0.0)
        act, t = act[~done], t[~done]
        txa, tya = tx[act], ty[act]
        corner = (txa == tya) & (t > 0.0)
        c = act[corner]
        seam = _is_wall(walls, ix[c] + sx[c], iy[c]) & _is_wall(walls, ix[c], iy[c] + sy[c])
        blocked[c[seam]] = True
        step_x = act[txa <= tya]
        step_y = act[tya <= txa]
        ix[step_x] += sx[step_x]
        tx[step_x] = _next_crossing(ax[step_x], ix[step_x], dx[step_x], sx[step_x])
        iy[step_y] += sy[step_y]
        ty[step_y] = _next_crossing(ay[step_y], iy[step_y], dy[step_y], sy[step_y])
        now_wall = _is_wall(walls, ix[act], iy[act])
        was_wall = in_wall[act]
        blocked[act[now_wall]] = True
        enter = now_wall & ~was_wall
        leave = ~now_wall & was_wall
        run_start[act[enter]] = t[enter]
        inside[act[leave]] += t[leave] - run_start[act[leave]]
        in_wall[act] = now_wall
        if stop_at_wall:
            act = act[~blocked[act]]
    return blocked, inside


def line_of_sight_reference(walls: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Numpy reference of :func:`maes_sim.core.kernels.los.line_of_sight` (bool (M,)).

    Examples
    --------
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> walls[:, 3] = True
    >>> line_of_sight_reference(walls, np.array([[0.5, 0.5], [0.5, 0.5]]),
    ...                         np.array([[2.5, 4.5], [4.5, 0.5]]))
    array([ True, False])
    """
    blocked, _ = _segment_walk(walls, a, b, stop_at_wall=True)
    return ~blocked


def wall_distance_reference(walls: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Numpy reference of :func:`maes_sim.core.kernels.los.wall_distance` (float64 (M,)).

    Examples
    --------
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> walls[:, 3] = True
    >>> wall_distance_reference(walls, np.array([[0.5, 0.5]]), np.array([[4.5, 0.5]]))
    array([1.])
    """
    _, inside = _segment_walk(walls, a, b, stop_at_wall=False)
    dx = b[:, 0] - a[:, 0]
    dy = b[:, 1] - a[:, 1]
    return inside * np.sqrt(dx * dx + dy * dy)
