"""The core's one compiled cell list: points binned into a uniform grid over their bounding box.

Every fixed-radius pair search of the simulator is built on :func:`build_cells`:

* robot contacts and "touching" flags (:mod:`~maes_sim.core.kernels.physics`, called from its
  compiled sub-step loop, with the scratch arrays of :class:`maes_sim.core.collision.RobotGrid`);
* the symmetric search of one point set (nearby-robot sensing, broadcasts:
  :func:`~maes_sim.core.kernels.los.visible_pairs` and ``pairs_in_range``), a half-shell scan;
* the search of one set against another (tags in reading range:
  :func:`maes_sim.core.neighbors.pairs_within`), :func:`cross_pairs` here.

How the grid is sized: the cell side is at least ``cell_min`` (so only the 3x3 block of cells
around a point can hold points within ``cell_min`` of it) and at least the box's longer side /
``per_axis``, so there are at most ``(per_axis + 1) ** 2`` cells however small ``cell_min`` is.
Sizing by the points' spread, not the map's, keeps a crowd in a corner of a big map in small
cells. Members of a cell are kept in ascending index order, so every scan is deterministic.
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit

__all__ = ["build_cells", "cell_scratch", "cross_pairs"]


@njit(**JIT_OPTIONS)
def build_cells(pos, cell_min, per_axis, starts, order, cxy):
    """Counting sort of the points ``pos`` (N, 2), N >= 1, into a uniform grid, in place.

    ``cell_min`` must be > 0. Afterwards the points of cell ``c`` are
    ``order[starts[c]:starts[c + 1]]`` (ascending index) and ``cxy[i]`` is point i's cell
    column and row; ``starts`` needs ``(per_axis + 1) ** 2 + 1`` entries, ``order`` N and
    ``cxy`` (N, 2). Returns ``(gw, gh, minx, miny, cell)``: the grid's columns and rows, its
    lower-left corner and the cell side; cell ``(cx, cy)`` covers
    ``[minx + cx * cell, minx + (cx + 1) * cell)`` (the last column and row also their upper
    edge).
    """
    n = pos.shape[0]
    minx = pos[0, 0]
    maxx = pos[0, 0]
    miny = pos[0, 1]
    maxy = pos[0, 1]
    for i in range(1, n):
        minx = min(minx, pos[i, 0])
        maxx = max(maxx, pos[i, 0])
        miny = min(miny, pos[i, 1])
        maxy = max(maxy, pos[i, 1])
    cell = max(cell_min, (maxx - minx) / per_axis, (maxy - miny) / per_axis)
    gw = min(int((maxx - minx) / cell), per_axis) + 1
    gh = min(int((maxy - miny) / cell), per_axis) + 1
    starts[: gw * gh + 1] = 0
    for i in range(n):
        cx = min(int((pos[i, 0] - minx) / cell), gw - 1)
        cy = min(int((pos[i, 1] - miny) / cell), gh - 1)
        cxy[i, 0] = cx
        cxy[i, 1] = cy
        starts[cy * gw + cx + 1] += 1
    for c in range(gw * gh):
        starts[c + 1] += starts[c]
    fill = starts[: gw * gh].copy()
    for i in range(n):  # index order inside each cell: deterministic
        c = cxy[i, 1] * gw + cxy[i, 0]
        order[fill[c]] = i
        fill[c] += 1
    return gw, gh, minx, miny, cell


def cell_scratch(n: int, per_axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh ``(starts, order, cxy)`` arrays for :func:`build_cells` over ``n`` points.

    Examples
    --------
    >>> starts, order, cxy = cell_scratch(3, 2)
    >>> starts.shape, order.shape, cxy.shape
    ((10,), (3,), (3, 2))
    """
    return (
        np.empty((per_axis + 1) ** 2 + 1, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty((n, 2), dtype=np.int64),
    )


def per_axis_for(n: int) -> int:
    """Grid columns (and rows) for ``n`` points: about 4 cells per point, at most 1024 a side.

    Examples
    --------
    >>> per_axis_for(1), per_axis_for(100), per_axis_for(10**7)
    (2, 20, 1024)
    """
    return max(1, min(1024, math.ceil(2.0 * math.sqrt(n))))


@njit(**JIT_OPTIONS)
def _cross_pairs_kernel(a, b, radius, exclude_same, gw, gh, minx, miny, cell, starts, order):
    # Every a-point scans the (up to) 9 cells around it; merging those 9 runs (each in
    # ascending index order) emits its targets in ascending order, so the result comes out
    # sorted by (ia, ib) without any sort. Two passes (count, then fill) allocate the output
    # once.
    r2 = radius * radius
    na = a.shape[0]
    counts = np.zeros(na + 1, dtype=np.int64)
    head = np.empty(9, dtype=np.int64)
    stop = np.empty(9, dtype=np.int64)
    out_a = np.empty(0, dtype=np.int64)
    out_b = np.empty(0, dtype=np.int64)
    out_d = np.empty(0, dtype=np.float64)
    offsets = counts
    for fill in range(2):
        if fill == 1:
            offsets = np.cumsum(counts)
            out_a = np.empty(offsets[na], dtype=np.int64)
            out_b = np.empty(offsets[na], dtype=np.int64)
            out_d = np.empty(offsets[na], dtype=np.float64)
        for i in range(na):
            fx = math.floor((a[i, 0] - minx) / cell)
            fy = math.floor((a[i, 1] - miny) / cell)
            runs = 0
            if -2 < fx < gw + 1 and -2 < fy < gh + 1:  # else no cell within reach
                cx = int(fx)
                cy = int(fy)
                for yy in range(max(cy - 1, 0), min(cy + 2, gh)):
                    for xx in range(max(cx - 1, 0), min(cx + 2, gw)):
                        c = yy * gw + xx
                        if starts[c] < starts[c + 1]:
                            head[runs] = starts[c]
                            stop[runs] = starts[c + 1]
                            runs += 1
            k = 0
            while True:
                best = -1
                for r in range(runs):  # the run whose next member has the smallest index
                    if head[r] < stop[r] and (best < 0 or order[head[r]] < order[head[best]]):
                        best = r
                if best < 0:
                    break
                j = order[head[best]]
                head[best] += 1
                if exclude_same and j == i:
                    continue
                dx = a[i, 0] - b[j, 0]
                dy = a[i, 1] - b[j, 1]
                d2 = dx * dx + dy * dy
                if d2 <= r2:
                    if fill == 1:
                        out_a[offsets[i] + k] = i
                        out_b[offsets[i] + k] = j
                        out_d[offsets[i] + k] = np.sqrt(d2)
                    k += 1
            if fill == 0:
                counts[i + 1] = k
    return out_a, out_b, out_d


#: Up to this many (a, b) candidate pairs, :func:`cross_pairs` tests every one (a plain double
#: loop, already in (i, j) order) instead of building a cell list: cheaper for a few hundred
#: robots against a few hundred tags, where the list's setup and merging dominate.
BRUTE_FORCE_PAIRS = 1 << 18


@njit(**JIT_OPTIONS)
def _all_pairs_kernel(a, b, radius, exclude_same):
    # Every (i, j) tested with the cell list's own arithmetic; two passes as there.
    r2 = radius * radius
    na = a.shape[0]
    nb = b.shape[0]
    count = 0
    for i in range(na):
        for j in range(nb):
            dx = a[i, 0] - b[j, 0]
            dy = a[i, 1] - b[j, 1]
            if dx * dx + dy * dy <= r2 and not (exclude_same and j == i):
                count += 1
    out_a = np.empty(count, dtype=np.int64)
    out_b = np.empty(count, dtype=np.int64)
    out_d = np.empty(count, dtype=np.float64)
    k = 0
    for i in range(na):
        for j in range(nb):
            dx = a[i, 0] - b[j, 0]
            dy = a[i, 1] - b[j, 1]
            d2 = dx * dx + dy * dy
            if d2 <= r2 and not (exclude_same and j == i):
                out_a[k] = i
                out_b[k] = j
                out_d[k] = np.sqrt(d2)
                k += 1
    return out_a, out_b, out_d


def cross_pairs(
    a: np.ndarray, b: np.ndarray, radius: float, exclude_same: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pairs (i, j) with ``|a[i] - b[j]| <= radius``, sorted by (i, j), with distances.

    ``a`` (N, 2) and ``b`` (M, 2) are finite float64 arrays, M >= 1, ``radius >= 0``;
    ``exclude_same`` drops i == j (for ``b`` being ``a``). The cell list is built over ``b``.

    Examples
    --------
    >>> ia, ib, d = cross_pairs(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0], [1.0, 0.0]]), 5.0,
    ...                         False)
    >>> ia.tolist(), ib.tolist(), d.tolist()
    ([0, 0], [0, 1], [5.0, 1.0])
    """
    if a.shape[0] * b.shape[0] <= BRUTE_FORCE_PAIRS:
        return _all_pairs_kernel(a, b, float(radius), exclude_same)
    per_axis = per_axis_for(b.shape[0])
    starts, order, cxy = cell_scratch(b.shape[0], per_axis)
    gw, gh, minx, miny, cell = build_cells(
        b, max(float(radius), 1e-9), per_axis, starts, order, cxy
    )
    return _cross_pairs_kernel(
        a, b, float(radius), exclude_same, gw, gh, minx, miny, cell, starts, order
    )
