"""Fixed-radius neighbour queries between point sets (robots, tags).

A uniform cell list makes a query O(N + pairs) instead of O(N * M). Results are sorted by
(query index, target index), so they do not depend on the hashing order: the same input gives
bit-identical output on every machine.
"""

from __future__ import annotations

import numpy as np

try:  # numba is a hard dependency of the project; the fallback only keeps imports working.
    from numba import njit
except ImportError:  # pragma: no cover - exercised only without numba
    njit = None


def _pairs_within_reference(a: np.ndarray, b: np.ndarray, radius: float, exclude_same: bool):
    """Brute-force O(N*M) reference for :func:`pairs_within`."""
    if len(a) == 0 or len(b) == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy(), np.empty(0, dtype=np.float64)
    diff = a[:, None, :] - b[None, :, :]
    dist = np.sqrt(diff[..., 0] ** 2 + diff[..., 1] ** 2)
    mask = dist <= radius
    if exclude_same:
        np.fill_diagonal(mask, False)
    ia, ib = np.nonzero(mask)
    return ia.astype(np.int64), ib.astype(np.int64), dist[ia, ib]


def _pairs_within_cells_py(a, b, radius, exclude_same, cell):
    # Cell list over b; every a-point scans the 3x3 block of cells around it.
    bx = np.floor(b[:, 0] / cell).astype(np.int64)
    by = np.floor(b[:, 1] / cell).astype(np.int64)
    minx, miny = bx.min(), by.min()
    w = bx.max() - minx + 1
    h = by.max() - miny + 1
    key = (by - miny) * w + (bx - minx)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    starts = np.searchsorted(sorted_key, np.arange(w * h + 1))
    out_a = []
    out_b = []
    out_d = []
    r2 = radius * radius
    for i in range(a.shape[0]):
        cx = int(np.floor(a[i, 0] / cell)) - minx
        cy = int(np.floor(a[i, 1] / cell)) - miny
        for yy in range(cy - 1, cy + 2):
            if yy < 0 or yy >= h:
                continue
            for xx in range(cx - 1, cx + 2):
                if xx < 0 or xx >= w:
                    continue
                c = yy * w + xx
                for s in range(starts[c], starts[c + 1]):
                    j = order[s]
                    if exclude_same and j == i:
                        continue
                    dx = a[i, 0] - b[j, 0]
                    dy = a[i, 1] - b[j, 1]
                    d2 = dx * dx + dy * dy
                    if d2 <= r2:
                        out_a.append(i)
                        out_b.append(j)
                        out_d.append(np.sqrt(d2))
    return (
        np.array(out_a, dtype=np.int64),
        np.array(out_b, dtype=np.int64),
        np.array(out_d, dtype=np.float64),
    )


_pairs_within_cells = njit(cache=True)(_pairs_within_cells_py) if njit else _pairs_within_cells_py


def pairs_within(
    a: np.ndarray, b: np.ndarray | None, radius: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pairs (i, j) with ``|a[i] - b[j]| <= radius``.

    Parameters
    ----------
    a : ndarray, shape (N, 2)
        Query points.
    b : ndarray, shape (M, 2) or None
        Target points. ``None`` means ``b = a`` without self-pairs (i == j excluded).
    radius : float
        Inclusive distance bound (same unit as the points), >= 0.

    Returns
    -------
    ia, ib : ndarray of int64, shape (P,)
        Pair indices, sorted by ``ia`` then ``ib``.
    dist : ndarray of float64, shape (P,)
        Euclidean distance of each pair.

    Examples
    --------
    >>> ia, ib, d = pairs_within(np.array([[0.0, 0.0], [3.0, 0.0], [1.0, 0.0]]), None, 2.0)
    >>> ia.tolist(), ib.tolist(), d.tolist()
    ([0, 1, 2, 2], [2, 2, 0, 1], [1.0, 2.0, 1.0, 2.0])
    """
    a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1, 2)
    exclude_same = b is None
    b = a if b is None else np.ascontiguousarray(b, dtype=np.float64).reshape(-1, 2)
    if len(a) == 0 or len(b) == 0 or radius < 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy(), np.empty(0, dtype=np.float64)
    # A cell no smaller than the radius keeps the scan to a 3x3 block; the extent bound keeps
    # the cell table small (at most ~1024 x 1024) when the radius is tiny.
    extent = float(np.max(b.max(axis=0) - b.min(axis=0)))
    cell = max(float(radius), extent / 1024.0, 1e-9)
    ia, ib, dist = _pairs_within_cells(a, b, float(radius), exclude_same, cell)
    order = np.lexsort((ib, ia))
    return ia[order], ib[order], dist[order]
