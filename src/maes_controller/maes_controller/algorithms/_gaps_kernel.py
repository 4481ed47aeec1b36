"""SPACE CBBA's unvisited ground, compiled (numba, ``maes_common.jit``).

The kernels behind :func:`~.space_cbba.unvisited_gaps`, which gives, for each task of a robot
whose tasks all lie in areas others finished, the straight distance to the nearest unvisited
cell. It judged each area of the grid in a Python loop and took
``np.hypot(xs - px, ys - py).min()`` over every unvisited cell for every task: 11 % of the CPU
time of 50 SPACE CBBA robots on a 60x60 building, 18 % of 120 on a 75x75 one (py-spy, code
``865b1e4``). These give the same floats, to the bit:

- :func:`unvisited_cells` judges the areas by the loop's rule (the same ids, the same counts)
  and marks the cells.
- :func:`gap_candidates` finds, per point, the few cells that can hold the nearest one, and
  :func:`~.space_cbba.unvisited_gaps` takes ``np.hypot`` of those alone, with the very
  ``dx`` and ``dy`` the full pass took (each a single subtraction of the same two floats).

Why the candidates always hold the cell the full pass would pick: a cell's squared distance
``a = dy * dy + dx * dx`` is within a few units in the last place of the exact square of
``(dx, dy)``, and so is ``np.hypot(dx, dy)`` of the exact distance; a cell whose ``np.hypot``
is the least therefore has ``a`` within 1e-14 (relative) of the least ``a``, and every cell
within ``1e-9`` of it (plus 1e-300, for underflow) is a candidate. Within a row, ``dx`` only
grows with the distance from the point's column on either side (rounding keeps order), so the
row's least ``a`` is at the nearest unvisited column left of the point or right of it: found
through two running indexes per row instead of a pass over the row.
"""

from __future__ import annotations

import numpy as np

from maes_common.jit import njit

#: A cell is a candidate when its squared distance is at most the least one times this ...
CANDIDATE_REL = 1.0 + 1e-9
#: ... plus this (squares of distances below 1e-150 m underflow to 0 or to subnormals).
CANDIDATE_ABS = 1e-300


@njit(cache=True)
def _count_to(values: np.ndarray, value: float) -> int:
    """How many of the ascending ``values`` are at most ``value`` (binary search)."""
    lo, hi = 0, values.size
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def unvisited_cells(
    array: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    done: np.ndarray,
    row_step: int,
    near_max: int,
) -> np.ndarray:
    """Bool (H, W): the cells of ``array`` below 0 whose area ``rows[iy] * row_step + cols[ix]``
    is not in ``done`` (ids) and has at most ``near_max`` of the 8 areas around it
    (``area + dy * row_step + dx``) in ``done``. An area is judged again only where the row's or
    the column's id changes."""
    h, w = array.shape
    out = np.zeros((h, w), dtype=np.bool_)
    if h == 0 or w == 0:
        return out
    # every id the areas and those around them can have, lo..hi: finished or not
    lo = rows.min() * row_step + cols.min() - row_step - 1
    hi = rows.max() * row_step + cols.max() + row_step + 1
    finished = np.zeros(hi - lo + 1, dtype=np.bool_)
    for area in done:
        if lo <= area <= hi:
            finished[area - lo] = True
    ok = np.empty(w, dtype=np.bool_)  # the verdicts along the current row of cells
    for iy in range(h):
        if iy == 0 or rows[iy] != rows[iy - 1]:
            for ix in range(w):
                if ix == 0 or cols[ix] != cols[ix - 1]:
                    at = rows[iy] * row_step + cols[ix] - lo
                    near = 0
                    for dy in range(-1, 2):
                        for dx in range(-1, 2):
                            if dy != 0 or dx != 0:
                                near += finished[at + dy * row_step + dx]
                    ok[ix] = not finished[at] and near <= near_max
                else:
                    ok[ix] = ok[ix - 1]
        for ix in range(w):
            out[iy, ix] = array[iy, ix] < 0 and ok[ix]
    return out


@njit(cache=True)
def gap_candidates(
    unvisited: np.ndarray, xs: np.ndarray, ys: np.ndarray, px: np.ndarray, py: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(k, iy, ix, first)``: the cells of ``unvisited`` (bool (H, W); cell ``(ix, iy)``'s
    centre ``(xs[ix], ys[iy])``, ``xs`` ascending) that may be the nearest to point ``k``
    (``(px[k], py[k])``), by point, then row, then column, and where each point's cells start
    (-1: none). A point with no finite squared distance to any cell (not finite, or too far for
    a float) has none."""
    h, w = unvisited.shape
    n = px.size
    # left[iy, j]: the last unvisited column before j (-1: none); right[iy, j]: the first from j on
    left = np.empty((h, w + 1), dtype=np.int64)
    right = np.empty((h, w + 1), dtype=np.int64)
    for iy in range(h):
        last = -1
        left[iy, 0] = -1
        for ix in range(w):
            if unvisited[iy, ix]:
                last = ix
            left[iy, ix + 1] = last
        first = w
        right[iy, w] = w
        for ix in range(w - 1, -1, -1):
            if unvisited[iy, ix]:
                first = ix
            right[iy, ix] = first
    row_least = np.full((n, h), np.inf)
    limit = np.full(n, -np.inf)  # the largest squared distance of a candidate
    for k in range(n):
        x, y = px[k], py[k]
        if not (np.isfinite(x) and np.isfinite(y)):
            continue
        split = _count_to(xs, x)  # the columns with xs <= x
        least = np.inf
        for iy in range(h):
            dy = ys[iy] - y
            dy2 = dy * dy
            for ix in (left[iy, split], right[iy, split]):
                if 0 <= ix < w:
                    dx = xs[ix] - x
                    a = dy2 + dx * dx
                    if a < row_least[k, iy]:
                        row_least[k, iy] = a
            if row_least[k, iy] < least:
                least = row_least[k, iy]
        if np.isfinite(least):
            limit[k] = least * CANDIDATE_REL + CANDIDATE_ABS
    count = 0
    ks = np.empty(0, dtype=np.int64)
    iys = np.empty(0, dtype=np.int64)
    ixs = np.empty(0, dtype=np.int64)
    first = np.full(n, -1, dtype=np.int64)
    for fill in range(2):  # count, then fill
        if fill:
            ks = np.empty(count, dtype=np.int64)
            iys = np.empty(count, dtype=np.int64)
            ixs = np.empty(count, dtype=np.int64)
        count = 0
        for k in range(n):
            start = count
            for iy in range(h):
                if row_least[k, iy] > limit[k]:
                    continue
                dy = ys[iy] - py[k]
                dy2 = dy * dy
                for ix in range(w):
                    if unvisited[iy, ix]:
                        dx = xs[ix] - px[k]
                        if dy2 + dx * dx <= limit[k]:
                            if fill:
                                ks[count] = k
                                iys[count] = iy
                                ixs[count] = ix
                            count += 1
            if fill and count > start:
                first[k] = start
    return ks, iys, ixs, first
