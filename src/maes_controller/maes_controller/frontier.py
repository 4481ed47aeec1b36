"""Frontier detection and the example explorer's choice of the next goal.

A frontier cell is a free (known, unoccupied) cell with an unknown cell among its 4 edge
neighbours. Edge neighbours only: a cell seen only diagonally past a wall corner can stay unknown
for ever, and counting it would leave an unreachable frontier that never closes. Frontier cells
are grouped into 8-connected clusters.

Grids are occupancy arrays ``grid[iy, ix]`` (-1 unknown, 0..100; e.g. ``GridMap.array`` of the
``map`` or of ``global_costmap/costmap``) or a :class:`~maes_controller.navigation.GridMap`; cells
are ``(ix, iy)`` tuples.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ._checks import check_non_negative
from ._frontier_kernel import crowding_sums, cut_out, has_candidate, label_clusters, near_claims
from .navigation import OCCUPIED_THRESHOLD, Cell, GridMap, distance_field, nearest_traversable

_OFFSETS_8 = ((1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1))


def _occupancy(grid: Any, occupied_threshold: int | None) -> tuple[np.ndarray, int]:
    """(int (H, W) values, threshold) of an array or a GridMap."""
    if hasattr(grid, "array") and hasattr(grid, "occupied_threshold"):
        arr = grid.array
        thr = grid.occupied_threshold if occupied_threshold is None else occupied_threshold
    else:
        arr = np.asarray(grid)
        thr = OCCUPIED_THRESHOLD if occupied_threshold is None else occupied_threshold
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"grid must be an integer (H, W) occupancy array or a GridMap, got dtype={arr.dtype}, "
            f"shape={arr.shape}"
        )
    if not (isinstance(thr, (int, np.integer)) and 1 <= thr <= 100):
        raise ValueError(f"occupied_threshold must be an int in 1..100, got {thr!r}")
    return arr, int(thr)


def _kept(grid: Any, key: tuple, occupied_threshold: int | None, compute: Any) -> Any:
    """``compute(values, threshold)`` of ``grid``, kept with the grid when it is a GridMap
    (or a ``MaesCostmap``): the robots sharing a map, and the ticks between two maps, compute
    it once (:meth:`~maes_controller.navigation.GridMap.derived`)."""
    kept = grid if isinstance(grid, GridMap) else getattr(grid, "grid", None)  # MaesCostmap
    if isinstance(kept, GridMap):
        thr = kept.occupied_threshold if occupied_threshold is None else occupied_threshold
        if not (isinstance(thr, (int, np.integer)) and 1 <= thr <= 100):
            raise ValueError(f"occupied_threshold must be an int in 1..100, got {thr!r}")
        return kept.derived((*key, int(thr)), lambda g: compute(g.array, int(thr)))
    return compute(*_occupancy(grid, occupied_threshold))


def _mask(arr: np.ndarray, thr: int) -> np.ndarray:
    free = (arr >= 0) & (arr < thr)
    unknown = arr < 0
    near_unknown = np.zeros_like(unknown)
    near_unknown[:, :-1] |= unknown[:, 1:]
    near_unknown[:, 1:] |= unknown[:, :-1]
    near_unknown[:-1, :] |= unknown[1:, :]
    near_unknown[1:, :] |= unknown[:-1, :]
    mask = free & near_unknown
    mask.flags.writeable = False
    return mask


def _frontier_clusters(arr: np.ndarray, thr: int) -> list[np.ndarray]:
    return _clusters(_mask(arr, thr))


def frontier_mask(grid: Any, occupied_threshold: int | None = None) -> np.ndarray:
    """Bool (H, W): free cells with at least one unknown edge neighbour.

    Parameters
    ----------
    grid : int (H, W) or GridMap
    occupied_threshold : int, optional
        Values at or above it are occupied; default the GridMap's, else 65.

    Examples
    --------
    >>> frontier_mask(np.array([[0, 0, -1], [100, 0, 0]])).astype(int)
    array([[0, 1, 0],
           [0, 0, 1]])
    """
    return _kept(grid, ("frontier_mask",), occupied_threshold, _mask).copy()


def _clusters(mask: np.ndarray) -> list[np.ndarray]:
    """8-connected components of ``mask`` as int64 (K, 2) ``(ix, iy)`` arrays: each in raster
    order (by ``iy``, then ``ix``), ordered by their first cell (compiled labelling,
    :func:`~maes_controller._frontier_kernel.label_clusters`)."""
    ys, xs = np.nonzero(mask)
    labels, count = label_clusters(mask, ys, xs)
    order = np.argsort(labels, kind="stable")  # cluster after cluster, raster order within
    cells = np.stack([xs[order], ys[order]], axis=1).astype(np.int64)
    bounds = np.cumsum(np.bincount(labels, minlength=count))[:-1]
    clusters = np.split(cells, bounds) if count else []
    for cluster in clusters:
        cluster.flags.writeable = False  # may be kept with a grid and shared
    return clusters


def find_frontiers(
    grid: Any, min_cluster_size: int = 1, occupied_threshold: int | None = None
) -> list[np.ndarray]:
    """Frontier clusters: 8-connected groups of frontier cells.

    Parameters
    ----------
    grid : int (H, W) or GridMap
    min_cluster_size : int
        Smaller clusters are dropped (>= 1).
    occupied_threshold : int, optional
        As in :func:`frontier_mask`.

    Returns
    -------
    list of int64 (K, 2) arrays
        Each cluster's cells ``(ix, iy)`` in raster order (by ``iy``, then ``ix``); clusters
        ordered by their first cell.

    Examples
    --------
    >>> grid = np.array([[-1, 0, 0, 0, -1],
    ...                  [-1, 0, 0, 0, 100]])
    >>> [c.tolist() for c in find_frontiers(grid)]
    [[[1, 0], [1, 1]], [[3, 0]]]
    >>> len(find_frontiers(grid, min_cluster_size=2))
    1
    """
    if isinstance(min_cluster_size, bool) or not isinstance(min_cluster_size, (int, np.integer)):
        raise TypeError(f"min_cluster_size must be an int >= 1, got {min_cluster_size!r}")
    if min_cluster_size < 1:
        raise ValueError(f"min_cluster_size must be an int >= 1, got {min_cluster_size!r}")
    clusters = _kept(grid, ("frontier_clusters",), occupied_threshold, _frontier_clusters)
    if min_cluster_size == 1:
        return list(clusters)  # (every cluster has a cell: none is left out)
    return [c for c in clusters if c.shape[0] >= min_cluster_size]


def is_near_frontier(
    grid: Any, cell: Sequence[int], radius: int = 1, occupied_threshold: int | None = None
) -> bool:
    """Whether a frontier cell lies within ``radius`` cells (Chebyshev) of ``cell``.

    The explorer's test of whether its goal from :func:`choose_frontier_goal` is still worth
    reaching (MAES 2.0's example asked whether its target was still a frontier).

    Examples
    --------
    >>> grid = np.array([[0, 0, 0, -1]])
    >>> is_near_frontier(grid, (1, 0)), is_near_frontier(grid, (0, 0))
    (True, False)
    """
    ix, iy = (int(v) for v in cell)
    kept = grid if isinstance(grid, GridMap) else getattr(grid, "grid", None)  # MaesCostmap
    if isinstance(kept, GridMap) and isinstance(radius, int):
        # asked every tick by every robot with a goal: the window's rows looked at in the
        # mask's bytes (kept with the map), not with a numpy slice and reduction
        def mask_bytes(_values: np.ndarray, thr: int) -> bytes:
            return _kept(grid, ("frontier_mask",), thr, _mask).tobytes()

        cells = _kept(grid, ("frontier_mask_bytes",), occupied_threshold, mask_bytes)
        h, w = kept.height, kept.width
        x0, x1 = max(ix - radius, 0), min(ix + radius + 1, w)
        for y in range(max(iy - radius, 0), min(iy + radius + 1, h)):
            if x0 < x1 and b"\x01" in cells[y * w + x0 : y * w + x1]:
                return True
        return False
    mask = _kept(grid, ("frontier_mask",), occupied_threshold, _mask)
    h, w = mask.shape
    rows = slice(max(iy - radius, 0), min(iy + radius + 1, h))
    cols = slice(max(ix - radius, 0), min(ix + radius + 1, w))
    window = mask[rows, cols]
    return bool(window.any())


def _goal_candidates(clusters: list[np.ndarray], dist: np.ndarray, trav: np.ndarray) -> np.ndarray:
    """Every cluster's candidate goals, cluster after cluster: its reachable cells (in the
    cluster's order) or, when none is reachable, the reachable 8-neighbours of its
    untraversable cells (sorted by ``ix``, then ``iy``). int64 (K, 2); K may be 0.

    The fallback serves frontier cells the robot may not stand on (e.g. inflated); a frontier
    cell that is traversable but unreachable gets no stand-in, since nothing leads there. All
    clusters are handled in one pass of array operations (a crowd's map has hundreds of small
    clusters); ``tests``' per-cluster reference gives the same cells in the same order.

    Examples
    --------
    >>> dist = np.array([[0.0, 1.0, np.inf]])
    >>> trav = np.array([[True, True, False]])
    >>> _goal_candidates([np.array([[1, 0]]), np.array([[2, 0]])], dist, trav).tolist()
    [[1, 0], [1, 0]]
    """
    if not clusters:
        return np.empty((0, 2), dtype=np.int64)
    cells = np.concatenate(clusters)
    cid = np.repeat(np.arange(len(clusters)), [c.shape[0] for c in clusters])
    reach = np.isfinite(dist[cells[:, 1], cells[:, 0]])
    direct = np.bincount(cid[reach], minlength=len(clusters)) > 0
    keep = reach & direct[cid]
    out, out_cid = cells[keep], cid[keep]
    # the clusters with no reachable cell: the reachable neighbours of their blocked cells
    blocked = ~direct[cid] & ~trav[cells[:, 1], cells[:, 0]]
    if blocked.any():
        h, w = dist.shape
        around = (cells[blocked][:, None, :] + np.array(_OFFSETS_8)[None, :, :]).reshape(-1, 2)
        around_cid = np.repeat(cid[blocked], len(_OFFSETS_8))
        inside = (around[:, 0] >= 0) & (around[:, 0] < w) & (around[:, 1] >= 0) & (around[:, 1] < h)
        # unique per cluster, ordered by ix then iy (np.unique's row order) within it
        key = np.unique((around_cid[inside] * w + around[inside, 0]) * h + around[inside, 1])
        key_cid, rest = np.divmod(key, w * h)
        ix, iy = np.divmod(rest, h)
        ok = np.isfinite(dist[iy, ix])
        out = np.concatenate([out, np.stack([ix[ok], iy[ok]], axis=1)])
        out_cid = np.concatenate([out_cid, key_cid[ok]])
        out = out[np.argsort(out_cid, kind="stable")]  # cluster after cluster
    return out


def _cluster_cells(grid: Any, clusters: list[np.ndarray], key: tuple) -> np.ndarray:
    """``clusters`` concatenated, int64 (K, 2): kept with the grid when it is a GridMap (or a
    ``MaesCostmap``) under ``key``, as the clusters are."""

    def concatenate(_grid: Any = None) -> np.ndarray:
        cells = np.concatenate(clusters) if clusters else np.empty((0, 2), dtype=np.int64)
        cells.flags.writeable = False
        return cells

    kept = grid if isinstance(grid, GridMap) else getattr(grid, "grid", None)  # MaesCostmap
    if isinstance(kept, GridMap):
        return kept.derived(key, concatenate)
    return concatenate()


def _candidates(
    clusters: list[np.ndarray],
    trav: np.ndarray,
    start: Cell,
    avoid: Iterable[Sequence[int]],
    through: bool = True,
    cells: np.ndarray | None = None,
) -> tuple[np.ndarray | None, np.ndarray]:
    """(candidate goal cells (K, 2), the distance field) from ``start``: around the ``avoid``
    cells when that reaches a candidate, else (``through``) through them. ``cells``: the
    clusters concatenated, when the caller has them (default: concatenated here)."""
    if isinstance(avoid, np.ndarray):
        stand = avoid.astype(np.int64, copy=False)
    else:
        stand = np.array(avoid if isinstance(avoid, Sequence) else list(avoid), dtype=np.int64)
    stand = np.ascontiguousarray(stand.reshape(-1, 2))
    # the avoid cells inside the grid, but the start, taken out (one compiled pass)
    around, cut = cut_out(trav, stand, int(start[0]), int(start[1]))
    tries = [trav]
    if cut:
        tries = [around, trav] if through else [around]
    if cells is None:
        cells = _cluster_cells(None, clusters, ())
    for mask in tries:
        dist = distance_field(mask, start)
        if not has_candidate(cells, dist, mask):
            continue  # e.g. hemmed in by robots: nothing reachable around them
        found = _goal_candidates(clusters, dist, mask)
        if found.shape[0]:
            return found, dist
    return None, dist


def choose_frontier_goal(
    grid: Any,
    robot_cell: Sequence[int],
    traversable: np.ndarray | None = None,
    *,
    claimed: Iterable[Sequence[int]] = (),
    claim_radius: float = 3.0,
    min_cluster_size: int = 1,
    occupied_threshold: int | None = None,
    share_cost: float | None = None,
    avoid: Iterable[Sequence[int]] = (),
    seen: Iterable[Sequence[int]] = (),
) -> Cell | None:
    """The reachable frontier goal nearest to the robot by path length.

    One Dijkstra pass from the robot gives the path length to every cell; for each frontier
    cluster, the candidate goals are its reachable frontier cells or, when none is reachable
    because they are not traversable (e.g. inflated), the reachable cells next to those. The
    candidate with the shortest path wins (ties: lowest ``iy``, then ``ix``). Candidates within
    ``claim_radius`` of a cell in ``claimed`` (other robots' goals) are skipped unless every
    candidate is claimed, so robots spread out yet still finish the last frontier together. An
    explorer can also put its own earlier goals in ``claimed`` when reaching them did not close
    their frontier. :func:`frontier_goal` gives the path length too.

    Parameters
    ----------
    grid : int (H, W) or GridMap
        The robot's map or costmap values.
    robot_cell : (ix, iy)
        Where the robot is; if not traversable, the nearest traversable cell is used instead.
    traversable : bool (H, W), optional
        Where the robot may go, e.g. ``traversable_mask(costs)``. Default: the free cells of
        ``grid``.
    claimed : iterable of (ix, iy), or an array (K, 2) of them
        Goals other robots announced.
    claim_radius : float
        In cells (Euclidean).
    min_cluster_size : int
        Ignore smaller frontier clusters.
    occupied_threshold : int, optional
        As in :func:`frontier_mask`.
    share_cost : float, optional
        When every candidate is claimed: cells of path added per claim, times ``1 - gap /
        claim_radius`` for a claim ``gap`` cells away, so robots left without a frontier of
        their own spread over the claimed ones, and over each one's cells, instead of all
        taking the nearest. None: the nearest.
    avoid : iterable of (ix, iy), or int (K, 2) array
        Cells the path should not cross (e.g. where other robots stand): the path lengths are
        taken around them, unless that leaves no frontier reachable (a robot inside a crowd),
        then through them.
    seen : iterable of (ix, iy), or int (K, 2) array
        Cells other robots passed (their trails): without shared maps the robot's own map
        still shows frontier there. Among the candidates no claim is near, those farther than
        ``claim_radius`` from every one of them go first; the others only when none is left.

    Returns
    -------
    (ix, iy) or None
        ``None`` when no frontier is reachable: exploration is complete for this robot.

    Examples
    --------
    A wall separates the robot from the Euclidean-nearest frontier cell (1, 2); the one reached
    by a shorter path wins, unless another robot claimed it:

    >>> grid = np.array([[  0,   0,   0,   0,   0],
    ...                  [100, 100, 100,   0,   0],
    ...                  [ -1,   0,   0,   0,  -1]])
    >>> choose_frontier_goal(grid, (0, 0))
    (4, 1)
    >>> choose_frontier_goal(grid, (0, 0), claimed=[(4, 1)], claim_radius=1.5)
    (1, 2)
    """
    found = frontier_goal(
        grid,
        robot_cell,
        traversable,
        claimed=claimed,
        claim_radius=claim_radius,
        min_cluster_size=min_cluster_size,
        occupied_threshold=occupied_threshold,
        share_cost=share_cost,
        avoid=avoid,
        seen=seen,
    )
    return None if found is None else found[0]


def _cells_array(cells) -> np.ndarray:
    """float64 (K, 2) of ``cells``: an array (float or int cells, the same values) or any
    iterable of ``(ix, iy)``."""
    if isinstance(cells, np.ndarray):
        return cells.astype(np.float64).reshape(-1, 2)
    if not isinstance(cells, list | tuple):
        cells = list(cells)
    return np.array(cells, dtype=np.float64).reshape(-1, 2)


def frontier_goal(
    grid: Any,
    robot_cell: Sequence[int],
    traversable: np.ndarray | None = None,
    *,
    claimed: Iterable[Sequence[int]] = (),
    claim_radius: float = 3.0,
    min_cluster_size: int = 1,
    occupied_threshold: int | None = None,
    share_cost: float | None = None,
    avoid: Iterable[Sequence[int]] = (),
    through: bool = True,
    seen: Iterable[Sequence[int]] = (),
) -> tuple[Cell, float] | None:
    """:func:`choose_frontier_goal`'s goal and its path length from the robot, in cells.

    ``through=False``: no path through the ``avoid`` cells, even when nothing is reachable
    around them (None then: the robot is hemmed in).

    ``seen``: as in :func:`choose_frontier_goal`.

    Examples
    --------
    >>> grid = np.array([[0, 0, 0, -1], [0, 0, 0, -1]])
    >>> frontier_goal(grid, (0, 0))
    ((2, 0), 2.0)
    >>> frontier_goal(grid, (0, 0), claimed=[(2, 0), (2, 0)], claim_radius=0.5, share_cost=5.0)
    ((2, 1), 2.414213562373095)
    >>> frontier_goal(grid, (0, 0), seen=[(2, 0)], claim_radius=0.5)
    ((2, 1), 2.414213562373095)
    """
    arr, thr = _occupancy(grid, occupied_threshold)
    if traversable is None:
        trav = (arr >= 0) & (arr < thr)
    else:
        trav = np.asarray(traversable)
        if trav.dtype != np.bool_ or trav.shape != arr.shape:
            raise ValueError(
                f"traversable must be a bool array of the grid's shape {arr.shape}, got "
                f"dtype={trav.dtype}, shape={trav.shape}"
            )
    claim_radius = check_non_negative("claim_radius", claim_radius)
    if share_cost is not None:
        share_cost = check_non_negative("share_cost", share_cost)
    start = nearest_traversable(trav, robot_cell)
    if start is None:
        return None
    clusters = find_frontiers(grid, min_cluster_size, thr)
    cells = _cluster_cells(grid, clusters, ("frontier_cells", min_cluster_size, thr))
    cand, dist = _candidates(clusters, trav, start, avoid, through, cells)
    if cand is None:
        return None
    claimed_arr = _cells_array(claimed)
    d = dist[cand[:, 1], cand[:, 0]]
    cost = d
    free_of_claims = None
    if claimed_arr.size:
        free_of_claims = ~near_points(cand, claimed_arr, claim_radius, trav.shape)
        if free_of_claims.any():
            cand, d, cost = cand[free_of_claims], d[free_of_claims], d[free_of_claims]
        elif share_cost is not None:  # per claim, less the farther from it the cell is
            scale = max(claim_radius, 1.0)
            if np.isfinite(claimed_arr).all():  # (the compiled form: the same sums)
                crowding = crowding_sums(cand, claimed_arr, scale)
            else:
                crowding = np.clip(1.0 - _gaps(cand, claimed_arr) / scale, 0.0, None).sum(axis=1)
            cost = d + share_cost * crowding
    if free_of_claims is None or free_of_claims.any():
        seen_arr = _cells_array(seen)
        if seen_arr.size:  # among the unclaimed frontier cells, those nobody passed go first
            fresh = ~near_points(cand, seen_arr, claim_radius, trav.shape)
            if fresh.any():
                cand, d, cost = cand[fresh], d[fresh], d[fresh]
    order = np.lexsort((cand[:, 0], cand[:, 1], cost))
    ix, iy = cand[order[0]]
    return (int(ix), int(iy)), float(d[order[0]])


def _gaps(cand: np.ndarray, claimed: np.ndarray) -> np.ndarray:
    """float64 (K, C): the distance (cells) from each candidate cell to each claimed one."""
    return np.hypot(cand[:, None, 0] - claimed[None, :, 0], cand[:, None, 1] - claimed[None, :, 1])


#: Claim radii (cells) up to which :func:`near_points` stamps discs on the grid.
_STAMP_RADIUS_MAX = 32


def near_points(
    cand: np.ndarray, claimed: np.ndarray, radius: float, shape: tuple[int, int]
) -> np.ndarray:
    """bool (K,): whether each candidate cell lies within ``radius`` cells (Euclidean, centre
    to centre) of one of the points ``claimed`` (cells of announced goals, of trail points):
    ``(_gaps(cand, claimed) <= radius).any(axis=1)``, computed by
    stamping each claim's disc on a grid of ``shape`` when the claims are whole cells (the
    same offsets, the same ``hypot``: the same answer). The candidates are cells of the grid.

    Examples
    --------
    >>> cand = np.array([[0, 0], [3, 0], [5, 2]])
    >>> near_points(cand, np.array([[4.0, 0.0], [9.0, 9.0]]), 1.5, (4, 6)).tolist()
    [False, True, False]
    """
    small = cand.shape[0] * claimed.shape[0] <= 4096  # pairs: computing them all is as quick
    whole = np.isfinite(claimed).all() and np.array_equal(claimed, np.floor(claimed))
    if small or not whole or not radius < _STAMP_RADIUS_MAX:
        return (_gaps(cand, claimed) <= radius).any(axis=1)
    ox, oy = _disc_offsets(float(radius))
    cells = np.ascontiguousarray(cand, dtype=np.int64)
    h, w = shape
    return near_claims(cells, claimed.astype(np.int64), ox, oy, h, w)


@functools.lru_cache(maxsize=16)
def _disc_offsets(radius: float) -> tuple[np.ndarray, np.ndarray]:
    """int64 (x, y) offsets of the cells within ``radius`` cells of a cell (centre to centre,
    ``hypot``), read-only: made once per radius (an explorer uses one for every search)."""
    reach = int(radius)
    dy, dx = np.mgrid[-reach : reach + 1, -reach : reach + 1]
    disc = np.hypot(dx.astype(np.float64), dy.astype(np.float64)) <= radius
    ox, oy = dx[disc].astype(np.int64), dy[disc].astype(np.int64)
    ox.flags.writeable = oy.flags.writeable = False
    return ox, oy
