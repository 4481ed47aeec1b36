"""Line of sight and distance through walls for many segments at once (exact grid traversal).

Semantics (shared bit for bit with :mod:`maes_sim.core.kernels.reference`)

* A segment ``a -> b`` (grid coordinates) is parametrised by ``s`` from 0 at ``a`` to 1 at ``b``
  and walked tile by tile from the tile containing ``a`` (``floor``), as the lidar does. Outside
  the array counts as wall.
* ``wall_distance`` is the length of the segment lying inside wall tiles.
* ``line_of_sight`` is False when the segment runs a positive length through a wall tile, or passes
  exactly through a tile corner strictly between its end points whose two side tiles are both
  walls (the lidar's closed-seam rule; a corner with at most one wall beside it is only grazed).
  End points that merely touch a wall tile's boundary do not block. Hence: no line of sight
  exactly when ``wall_distance > 0`` or the segment crosses a closed seam (which has no area and
  adds nothing to ``wall_distance``). A degenerate segment (``a == b``) has line of sight unless
  the point is inside a wall tile.
* A segment running exactly along a grid line belongs to the tiles on its positive side (floor),
  in both directions; swapping ``a`` and ``b`` gives the same answers up to rounding at exact
  corners.
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit, prange
from maes_sim.core.kernels import _checks
from maes_sim.core.kernels.cells import build_cells, cell_scratch, per_axis_for

__all__ = ["line_of_sight", "pairs_in_range", "visible_pairs", "wall_distance", "wall_sums"]


def line_of_sight(
    walls: np.ndarray, a: np.ndarray, b: np.ndarray, *, parallel: bool = False
) -> np.ndarray:
    """Whether each segment ``a[j] -> b[j]`` crosses no wall tile (see the module docstring).

    Parameters
    ----------
    walls : bool ndarray (H, W)
        ``walls[iy, ix]``; outside the array counts as wall.
    a, b : float ndarray (M, 2)
        Segment end points in grid coordinates.
    parallel : bool
        Split the segments over numba's threads (same results).

    Returns
    -------
    bool ndarray (M,)

    Examples
    --------
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> walls[:, 3] = True
    >>> line_of_sight(walls, np.array([[0.5, 0.5], [0.5, 0.5]]), np.array([[2.5, 4.5], [4.5, 0.5]]))
    array([ True, False])
    """
    walls, a, b = _check_segments(walls, a, b)
    out = np.empty(a.shape[0], dtype=np.bool_)
    (_los_parallel if parallel else _los_serial)(walls, a, b, out)
    return out


def wall_distance(
    walls: np.ndarray, a: np.ndarray, b: np.ndarray, *, parallel: bool = False
) -> np.ndarray:
    """Length of each segment ``a[j] -> b[j]`` lying inside wall tiles, in tiles.

    Meant for a broadcast signal function ``f(total_distance, distance_through_walls)``.

    Parameters
    ----------
    walls : bool ndarray (H, W)
        ``walls[iy, ix]``; outside the array counts as wall.
    a, b : float ndarray (M, 2)
        Segment end points in grid coordinates.
    parallel : bool
        Split the segments over numba's threads (same results).

    Returns
    -------
    float64 ndarray (M,)

    Examples
    --------
    >>> walls = np.zeros((5, 5), dtype=bool)
    >>> walls[:, 3] = True
    >>> wall_distance(walls, np.array([[0.5, 0.5], [0.5, 0.5]]), np.array([[4.5, 0.5], [2.5, 4.5]]))
    array([1., 0.])
    """
    walls, a, b = _check_segments(walls, a, b)
    out = np.empty(a.shape[0], dtype=np.float64)
    (_dist_parallel if parallel else _dist_serial)(walls, a, b, out)
    return out


def _check_segments(walls, a, b):
    walls = _checks.check_walls(walls)
    a = _checks.check_points("a", a)
    b = _checks.check_points("b", b, a.shape[0])
    return walls, a, b


@njit(**JIT_OPTIONS)
def _walk(walls, ax, ay, bx, by, stop_at_wall):
    """(blocked, s-length inside walls) of one segment; mirrors reference._segment_walk."""
    h, w = walls.shape
    dx = bx - ax
    dy = by - ay
    adx = abs(dx)
    ady = abs(dy)
    ix = math.floor(ax)
    iy = math.floor(ay)
    sx = 0
    tx = math.inf
    if dx > 0.0:
        sx = 1
        tx = (ix + 1 - ax) / adx
    elif dx < 0.0:
        sx = -1
        tx = (ax - ix) / adx
    sy = 0
    ty = math.inf
    if dy > 0.0:
        sy = 1
        ty = (iy + 1 - ay) / ady
    elif dy < 0.0:
        sy = -1
        ty = (ay - iy) / ady
    in_wall = ix < 0 or iy < 0 or ix >= w or iy >= h or walls[iy, ix]
    # A wall tile blocks only when the segment spends a positive length in it: the start tile
    # not when a starts on its boundary and leaves at once (t = 0).
    blocked = in_wall and min(tx, ty) > 0.0
    if blocked and stop_at_wall:
        return True, 0.0
    run_start = 0.0
    inside = 0.0
    while True:
        t = min(tx, ty)
        if t >= 1.0:
            if in_wall:
                inside += 1.0 - run_start
            return blocked, inside
        if tx < ty:
            ix += sx
            tx = ((ix + 1 - ax) if sx > 0 else (ax - ix)) / adx
        elif ty < tx:
            iy += sy
            ty = ((iy + 1 - ay) if sy > 0 else (ay - iy)) / ady
        else:
            # Exactly through a corner: a closed seam (both side tiles walls) blocks the view,
            # unless the corner is the start point.
            jx = ix + sx
            jy = iy + sy
            if (
                t > 0.0
                and (jx < 0 or jx >= w or iy < 0 or iy >= h or walls[iy, jx])
                and (jy < 0 or jy >= h or ix < 0 or ix >= w or walls[jy, ix])
            ):
                blocked = True
                if stop_at_wall:
                    return True, inside
            ix = jx
            iy = jy
            tx = ((ix + 1 - ax) if sx > 0 else (ax - ix)) / adx
            ty = ((iy + 1 - ay) if sy > 0 else (ay - iy)) / ady
        now_wall = ix < 0 or iy < 0 or ix >= w or iy >= h or walls[iy, ix]
        if now_wall:
            # A tile entered at t < 1 is left after t (both crossings moved past t), so the
            # segment runs a positive length in it.
            blocked = True
            if stop_at_wall:
                return True, inside
            if not in_wall:
                run_start = t
        elif in_wall:
            inside += t - run_start
        in_wall = now_wall


@njit(**JIT_OPTIONS)
def _los_serial(walls, a, b, out):
    for j in range(a.shape[0]):
        out[j] = not _walk(walls, a[j, 0], a[j, 1], b[j, 0], b[j, 1], True)[0]


@njit(parallel=True, **JIT_OPTIONS)
def _los_parallel(walls, a, b, out):
    for j in prange(a.shape[0]):
        out[j] = not _walk(walls, a[j, 0], a[j, 1], b[j, 0], b[j, 1], True)[0]


@njit(**JIT_OPTIONS)
def _dist_one(walls, a, b, j):
    inside = _walk(walls, a[j, 0], a[j, 1], b[j, 0], b[j, 1], False)[1]
    dx = b[j, 0] - a[j, 0]
    dy = b[j, 1] - a[j, 1]
    return inside * math.sqrt(dx * dx + dy * dy)


# Serial and parallel versions are separate functions on purpose: numba's on-disk cache keys on
# the Python function, so one function compiled twice with different flags would share an entry.
@njit(**JIT_OPTIONS)
def _dist_serial(walls, a, b, out):
    for j in range(a.shape[0]):
        out[j] = _dist_one(walls, a, b, j)


@njit(parallel=True, **JIT_OPTIONS)
def _dist_parallel(walls, a, b, out):
    for j in prange(a.shape[0]):
        out[j] = _dist_one(walls, a, b, j)


@njit(**JIT_OPTIONS)
def _visible_pairs_kernel(walls, sat, pos, radius, use_walls, gw, gh, starts, order):
    n = pos.shape[0]
    # The cell list (cells.build_cells: members of a cell in ascending index order) with the
    # coordinates copied in cell order for the scans below.
    px = np.empty(n)
    py = np.empty(n)
    for s in range(n):
        px[s] = pos[order[s], 0]
        py[s] = pos[order[s], 1]
    # Half-shell scan: a point meets the rest of its own cell, the cell to its right and the
    # three cells of the next row, so each unordered pair is met once. A cell and its right
    # neighbour, and the three cells of a row, are contiguous in cell order: two index ranges.
    # Pairs in range are kept without a branch (write, then advance by the test's result), as
    # the tests are unpredictable; ``cap`` bounds the candidates, plus one slot to write into.
    hi1 = np.empty(gw * gh, dtype=np.int64)  # own cell and right neighbour: [s + 1, hi1)
    lo2 = np.zeros(gw * gh, dtype=np.int64)  # the next row's three cells: [lo2, hi2)
    hi2 = np.zeros(gw * gh, dtype=np.int64)
    cap = 1
    for c in range(gw * gh):
        cx = c % gw
        cy = c // gw
        hi1[c] = starts[c + 2] if cx + 1 < gw else starts[c + 1]
        if cy + 1 < gh:
            lo2[c] = starts[(cy + 1) * gw + max(cx - 1, 0)]
            hi2[c] = starts[(cy + 1) * gw + min(cx + 1, gw - 1) + 1]
        k = starts[c + 1] - starts[c]
        cap += k * (hi1[c] - starts[c] - 1) + k * (hi2[c] - lo2[c])
    ua = np.empty(cap, dtype=np.int64)
    ub = np.empty(cap, dtype=np.int64)
    r2 = radius * radius
    m = 0
    for c in range(gw * gh):
        for s in range(starts[c], starts[c + 1]):
            x = px[s]
            y = py[s]
            a = order[s]
            for t in range(s + 1, hi1[c]):
                dx = x - px[t]
                dy = y - py[t]
                ua[m] = a
                ub[m] = order[t]
                m += dx * dx + dy * dy <= r2
            for t in range(lo2[c], hi2[c]):
                dx = x - px[t]
                dy = y - py[t]
                ua[m] = a
                ub[m] = order[t]
                m += dx * dx + dy * dy <= r2
    if use_walls:
        # Keep the pairs in sight. ``sat`` is the walls' summed-area table: a segment whose end
        # tiles span a wall-free rectangle inside the map crosses no wall and no closed seam
        # (every tile it enters, and both side tiles of every corner it passes, lie in that
        # rectangle), so it needs no walk. Segments run from the lower index to the higher.
        h, w = walls.shape
        kept = 0
        for k in range(m):
            i = min(ua[k], ub[k])
            j = max(ua[k], ub[k])
            x0 = math.floor(min(pos[i, 0], pos[j, 0]))
            x1 = math.floor(max(pos[i, 0], pos[j, 0]))
            y0 = math.floor(min(pos[i, 1], pos[j, 1]))
            y1 = math.floor(max(pos[i, 1], pos[j, 1]))
            clear = (
                x0 >= 0
                and y0 >= 0
                and x1 < w
                and y1 < h
                and sat[y1 + 1, x1 + 1] - sat[y0, x1 + 1] - sat[y1 + 1, x0] + sat[y0, x0] == 0
            )
            if clear or not _walk(walls, pos[i, 0], pos[i, 1], pos[j, 0], pos[j, 1], True)[0]:
                ua[kept] = i
                ub[kept] = j
                kept += 1
        m = kept
    # Both directions, sorted by (ia, ib): a counting sort by ib, then a stable one by ia (each
    # index has as many entries as first as as second member, so one count serves both).
    offs = np.zeros(n + 1, dtype=np.int64)
    for k in range(m):
        offs[ua[k] + 1] += 1
        offs[ub[k] + 1] += 1
    for i in range(n):
        offs[i + 1] += offs[i]
    tmp_a = np.empty(2 * m, dtype=np.int64)
    tmp_b = np.empty(2 * m, dtype=np.int64)
    slot = offs[:n].copy()
    for k in range(m):  # entry (first, second) goes to the bucket of its second member
        a = ua[k]
        b = ub[k]
        tmp_a[slot[b]] = a
        tmp_b[slot[b]] = b
        slot[b] += 1
        tmp_a[slot[a]] = b
        tmp_b[slot[a]] = a
        slot[a] += 1
    out_a = np.empty(2 * m, dtype=np.int64)
    out_b = np.empty(2 * m, dtype=np.int64)
    slot = offs[:n].copy()
    for k in range(2 * m):
        a = tmp_a[k]
        out_a[slot[a]] = a
        out_b[slot[a]] = tmp_b[k]
        slot[a] += 1
    return out_a, out_b


def wall_sums(walls: np.ndarray) -> np.ndarray:
    """Summed-area table of a wall grid, int32 (H + 1, W + 1): ``[y, x]`` counts the walls in
    rows ``< y`` and columns ``< x``.

    :func:`visible_pairs` builds it when not given one; a caller that asks again and again on
    the same map (the simulator, every tick) builds it once and passes it.

    Examples
    --------
    >>> wall_sums(np.array([[True, False], [True, True]])).tolist()
    [[0, 0, 0], [0, 1, 1], [0, 2, 3]]
    """
    walls = _checks.check_walls(walls)
    sums = np.zeros((walls.shape[0] + 1, walls.shape[1] + 1), dtype=np.int32)
    sums[1:, 1:] = walls.cumsum(axis=0, dtype=np.int32).cumsum(axis=1, dtype=np.int32)
    return sums


def visible_pairs(
    walls: np.ndarray, positions: np.ndarray, radius: float, *, sums: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs (i, j), i != j, within ``radius`` of each other with a line of sight.

    The same result as ``pairs_within(positions, None, radius)`` filtered by
    :func:`line_of_sight`, in one compiled pass that tests each unordered pair once.

    Parameters
    ----------
    walls : bool ndarray (H, W)
    positions : float ndarray (N, 2)
        Points in grid coordinates.
    radius : float
        Inclusive distance bound, tiles (``inf`` allowed).
    sums : int32 ndarray (H + 1, W + 1), optional
        ``wall_sums(walls)``, to save building it on every call.

    Returns
    -------
    ia, ib : int64 ndarray (P,)
        Sorted by ``ia`` then ``ib``.

    Examples
    --------
    >>> walls = np.zeros((3, 6), dtype=bool); walls[:, 3] = True
    >>> ia, ib = visible_pairs(walls, np.array([[0.5, 1.5], [2.5, 1.5], [4.5, 1.5]]), 5.0)
    >>> list(zip(ia.tolist(), ib.tolist()))
    [(0, 1), (1, 0)]
    """
    walls = _checks.check_walls(walls)
    pos = _checks.check_points("positions", positions)
    want = (walls.shape[0] + 1, walls.shape[1] + 1)
    if sums is not None and (
        not isinstance(sums, np.ndarray) or sums.dtype != np.int32 or sums.shape != want
    ):
        raise ValueError(f"sums must be wall_sums(walls): an int32 array of shape {want}")
    if pos.shape[0] < 2 or not radius >= 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy()
    if sums is None:
        sums = wall_sums(walls)
    return _visible_pairs_kernel(
        walls, np.ascontiguousarray(sums), pos, float(radius), True, *_cells(pos, radius)
    )


def pairs_in_range(positions: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs (i, j), i != j, with ``|p_i - p_j| <= radius``, sorted by (i, j).

    The walls-free half of :func:`visible_pairs`: the fast path of
    ``neighbors.pairs_within(positions, None, radius)``. ``positions`` must be a finite float64
    (N, 2) array with N >= 2 and ``radius >= 0``.

    Examples
    --------
    >>> ia, ib = pairs_in_range(np.array([[0.0, 0.0], [3.0, 0.0], [1.0, 0.0]]), 2.0)
    >>> list(zip(ia.tolist(), ib.tolist()))
    [(0, 2), (1, 2), (2, 0), (2, 1)]
    """
    return _visible_pairs_kernel(
        _NO_WALLS, _NO_SUMS, positions, float(radius), False, *_cells(positions, radius)
    )


_NO_WALLS = np.zeros((1, 1), dtype=np.bool_)
_NO_SUMS = np.zeros((2, 2), dtype=np.int32)


def _cells(pos: np.ndarray, radius: float) -> tuple[int, int, np.ndarray, np.ndarray]:
    """``(gw, gh, starts, order)`` of the points' cell list for a search within ``radius``.

    Cells no smaller than the radius (a 3x3 scan suffices) unless the points' whole spread is
    smaller (then one or two cells hold them all), and no more than ~4 cells per point (a tiny
    radius must not build a huge, mostly empty table).
    """
    extent = float(np.max(pos.max(axis=0) - pos.min(axis=0)))
    per_axis = per_axis_for(pos.shape[0])
    starts, order, cxy = cell_scratch(pos.shape[0], per_axis)
    cell_min = max(min(float(radius), max(extent, 1.0)), 1e-9)
    gw, gh, _, _, _ = build_cells(pos, cell_min, per_axis, starts, order, cxy)
    return gw, gh, starts, order
