"""Segment-against-grid clearance kernel (numba, via ``maes_common.jit``).

Grid coordinates: cell ``(ix, iy)`` is the square ``[ix, ix + 1] x [iy, iy + 1]``. A blocked
cell *touching* the segment (even at a single corner) or nearer than the clearance makes the
segment not clear.
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import njit

# Slack for rounding: a segment through a cell corner must count as touching that cell.
_EPS = 1e-9


@njit(cache=True)
def _point_segment_distance(
    px: float, py: float, ax: float, ay: float, dx: float, dy: float, len2: float
) -> float:
    s = 0.0
    if len2 > 0.0:
        s = min(max(((px - ax) * dx + (py - ay) * dy) / len2, 0.0), 1.0)
    return math.hypot(px - (ax + s * dx), py - (ay + s * dy))


@njit(cache=True)
def _point_box_distance(px: float, py: float, cx: int, cy: int) -> float:
    gx = max(cx - px, px - (cx + 1.0), 0.0)
    gy = max(cy - py, py - (cy + 1.0), 0.0)
    return math.hypot(gx, gy)


@njit(cache=True)
def _touches(
    ax: float, ay: float, bx: float, by: float, cx: int, cy: int, clearance: float
) -> bool:
    """Whether segment a-b comes within ``clearance`` of the square of cell (cx, cy)."""
    dx = bx - ax
    dy = by - ay
    # Liang-Barsky clipping: does the segment meet the square at all?
    t0 = 0.0
    t1 = 1.0
    hit = True
    if dx == 0.0:
        hit = cx <= ax <= cx + 1.0
    else:
        ta = (cx - ax) / dx
        tb = (cx + 1.0 - ax) / dx
        t0 = max(t0, min(ta, tb))
        t1 = min(t1, max(ta, tb))
    if dy == 0.0:
        hit = hit and cy <= ay <= cy + 1.0
    else:
        ta = (cy - ay) / dy
        tb = (cy + 1.0 - ay) / dy
        t0 = max(t0, min(ta, tb))
        t1 = min(t1, max(ta, tb))
    if hit and t0 <= t1 + _EPS:
        return True
    if clearance <= 0.0:
        return False
    # Disjoint convex shapes are nearest at a vertex of one of them.
    best = min(_point_box_distance(ax, ay, cx, cy), _point_box_distance(bx, by, cx, cy))
    len2 = dx * dx + dy * dy
    for kx in range(2):
        for ky in range(2):
            d = _point_segment_distance(cx + kx, cy + ky, ax, ay, dx, dy, len2)
            best = min(best, d)
    return best <= clearance


@njit(cache=True)
def segment_clear(
    traversable: np.ndarray, ax: float, ay: float, bx: float, by: float, clearance: float
) -> bool:
    """Whether segment (ax, ay)-(bx, by) keeps ``clearance`` from every non-traversable cell.

    Cells outside the grid are not checked (callers keep segments well inside). Work is
    proportional to the segment's length: per column, only the rows the segment (grown by the
    clearance) spans are tested.
    """
    h, w = traversable.shape
    dx = bx - ax
    dy = by - ay
    reach = clearance + _EPS
    col0 = max(math.ceil(min(ax, bx) - reach) - 1, 0)
    col1 = min(math.floor(max(ax, bx) + reach), w - 1)
    for cx in range(col0, col1 + 1):
        if dx == 0.0:
            ylo = min(ay, by)
            yhi = max(ay, by)
        else:
            ta = (cx - reach - ax) / dx
            tb = (cx + 1.0 + reach - ax) / dx
            t0 = max(min(ta, tb), 0.0)
            t1 = min(max(ta, tb), 1.0)
            if t0 > t1:
                continue
            ylo = min(ay + t0 * dy, ay + t1 * dy)
            yhi = max(ay + t0 * dy, ay + t1 * dy)
        row0 = max(math.ceil(ylo - reach) - 1, 0)
        row1 = min(math.floor(yhi + reach), h - 1)
        for cy in range(row0, row1 + 1):
            if not traversable[cy, cx] and _touches(ax, ay, bx, by, cx, cy, clearance):
                return False
    return True


@njit(cache=True)
def prune_indices(
    xs: np.ndarray, ys: np.ndarray, traversable: np.ndarray, clearance: float
) -> np.ndarray:
    """The indices of the waypoints :func:`~.planning.prune_path` keeps of the path of cells
    ``(xs[k], ys[k])`` (int64 (K,), K > 2): greedy string pulling with :func:`segment_clear`
    between cell centres, as its Python loop did (the same tests in the same order)."""
    n = xs.shape[0]
    kept = np.empty(n, dtype=np.int64)
    kept[0] = 0
    m = 1
    anchor = 0
    i = 1
    while i < n - 1:
        # cells[i] is reachable from the anchor; try to extend to cells[i + 1]
        ax = xs[anchor] + 0.5
        ay = ys[anchor] + 0.5
        if segment_clear(traversable, ax, ay, xs[i + 1] + 0.5, ys[i + 1] + 0.5, clearance):
            i += 1
        else:
            kept[m] = i
            m += 1
            anchor = i
            i = anchor + 1
    kept[m] = n - 1
    return kept[: m + 1]
