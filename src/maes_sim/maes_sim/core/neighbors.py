"""Fixed-radius neighbour queries between point sets (robots, tags).

A uniform cell list (:mod:`maes_sim.core.kernels.cells`, the core's only one) makes a query
O(N + pairs) instead of O(N * M). Results are sorted by
(query index, target index), so they do not depend on the hashing order: the same input gives
bit-identical output on every machine.
"""

from __future__ import annotations

import numpy as np

from maes_common.jit import njit

from .kernels.cells import cross_pairs
from .kernels.los import pairs_in_range


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
    b_given = None if b is None else np.ascontiguousarray(b, dtype=np.float64).reshape(-1, 2)
    other = a if b_given is None else b_given
    if len(a) and len(other) and radius >= 0:  # (no pairs to look for: nothing to check)
        for name, points in (("a", a), ("b", other)):
            if not np.isfinite(points).all():
                bad = points[~np.isfinite(points).all(axis=1)][0]
                raise ValueError(
                    f"pairs_within: every point must be finite; {name} has {bad.tolist()}"
                )
    return pairs_within_finite(a, b_given, radius)


def pairs_within_finite(
    a: np.ndarray, b: np.ndarray | None, radius: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`pairs_within` of points known to be finite (the simulation's own positions,
    checked where they are set), without checking them again on every call.

    Examples
    --------
    >>> ia, ib, d = pairs_within_finite(np.array([[0.0, 0.0]]), np.array([[0.0, 1.5]]), 2.0)
    >>> ia.tolist(), ib.tolist(), d.tolist()
    ([0], [0], [1.5])
    """
    a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1, 2)
    exclude_same = b is None
    b = a if b is None else np.ascontiguousarray(b, dtype=np.float64).reshape(-1, 2)
    if len(a) == 0 or len(b) == 0 or radius < 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy(), np.empty(0, dtype=np.float64)
    if exclude_same and len(a) >= 2:
        # One set against itself: each unordered pair is found once by the compiled symmetric
        # half-shell search of visible_pairs (several times faster than the general merge
        # below), then mirrored.
        ia, ib = pairs_in_range(a, radius)
        dx = a[ia, 0] - a[ib, 0]
        dy = a[ia, 1] - a[ib, 1]
        return ia, ib, np.sqrt(dx * dx + dy * dy)
    # Against another set: the cell list over b (kernels.cells, cells no smaller than the
    # radius, so a 3x3 scan suffices), merged per query point into (ia, ib) order.
    return cross_pairs(a, b, float(radius), exclude_same)


def _mirror_py(ia, ib, upper_ok, n):
    # For a symmetric pair list sorted by (ia, ib): ok[k] for ia < ib is given in order; for
    # ia > ib look up the mirrored pair (ib, ia) by binary search in row ib.
    starts = np.searchsorted(ia, np.arange(n + 1))
    ok = np.zeros(ia.shape[0], dtype=np.bool_)
    upper_index = np.full(ia.shape[0], -1, dtype=np.int64)
    u = 0
    for k in range(ia.shape[0]):
        if ia[k] < ib[k]:
            upper_index[k] = u
            ok[k] = upper_ok[u]
            u += 1
    for k in range(ia.shape[0]):
        if ia[k] > ib[k]:
            row = ib[k]
            lo, hi = starts[row], starts[row + 1]
            m = lo + np.searchsorted(ib[lo:hi], ia[k])
            ok[k] = ok[m]
    return ok


_mirror = njit(cache=True)(_mirror_py)


def mirror_symmetric(ia: np.ndarray, ib: np.ndarray, upper_ok: np.ndarray, n: int) -> np.ndarray:
    """Extend a per-unordered-pair result to a symmetric pair list.

    Parameters
    ----------
    ia, ib : ndarray of int64, shape (P,)
        A symmetric pair list (each (i, j) also present as (j, i)), sorted by (ia, ib), no
        self-pairs (as :func:`pairs_within` with ``b=None`` returns).
    upper_ok : ndarray of bool, shape (U,)
        The result for the pairs with ``ia < ib``, in list order.
    n : int
        Number of points (indices are in ``0..n-1``).

    Returns
    -------
    ndarray of bool, shape (P,)

    Examples
    --------
    >>> ia, ib = np.array([0, 0, 1, 2]), np.array([1, 2, 0, 0])
    >>> mirror_symmetric(ia, ib, np.array([True, False]), 3).tolist()
    [True, False, True, False]
    """
    return _mirror(
        np.asarray(ia, dtype=np.int64),
        np.asarray(ib, dtype=np.int64),
        np.asarray(upper_ok, dtype=np.bool_),
        int(n),
    )
