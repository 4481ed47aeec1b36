"""The frontier search's compiled parts (numba, ``maes_common.jit``).

:func:`label_clusters` groups the frontier cells into 8-connected clusters for
:func:`~maes_controller.frontier._clusters`, in the order its former Python breadth-first search
found them (every new map of every robot is searched: a crowd's maps have hundreds of clusters).

:func:`has_candidate` is the question :func:`~maes_controller.frontier.frontier_goal` asks
first. In a crowd most robots find no frontier reachable around the robots they sense (they are
hemmed in and wait); one compiled pass over the frontier cells answers that for far less than
building the candidate list of :func:`~maes_controller.frontier._goal_candidates` only to find
it empty.

:func:`near_claims` is the grid-stamping path of :func:`~maes_controller.frontier.near_points`
(which candidate goals lie within the claim radius of a goal another robot announced): with a
crowd's hundreds of remembered goals, one compiled pass instead of the index arrays of every
claim's disc.
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import njit


@njit(cache=True)
def has_candidate(cells: np.ndarray, dist: np.ndarray, trav: np.ndarray) -> bool:
    """Whether ``_goal_candidates(clusters, dist, trav)`` is non-empty, for ``cells`` (K, 2)
    int64 ``(ix, iy)``: the clusters' cells concatenated.

    It is, exactly when a frontier cell is reachable (finite ``dist``) or an untraversable
    frontier cell has a reachable 8-neighbour inside the grid: a cluster with a reachable cell
    gives that cell, one without gives the reachable neighbours of its untraversable cells.
    """
    height, width = dist.shape
    for k in range(cells.shape[0]):
        ix = cells[k, 0]
        iy = cells[k, 1]
        if math.isfinite(dist[iy, ix]):
            return True
        if not trav[iy, ix]:
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    nx = ix + dx
                    ny = iy + dy
                    inside = 0 <= nx < width and 0 <= ny < height
                    if (dx != 0 or dy != 0) and inside and math.isfinite(dist[ny, nx]):
                        return True
    return False


@njit(cache=True)
def label_clusters(mask: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> tuple[np.ndarray, int]:
    """The 8-connected cluster of each ``True`` cell of ``mask`` (H, W), given in raster order
    (``ys``, ``xs``: ``np.nonzero(mask)``): labels (K,) int64, numbered in the order of each
    cluster's first cell, and the number of clusters."""
    height, width = mask.shape
    index = np.full((height, width), -1, dtype=np.int64)  # a cell's position in the list
    for k in range(ys.shape[0]):
        index[ys[k], xs[k]] = k
    labels = np.full(ys.shape[0], -1, dtype=np.int64)
    queue = np.empty(ys.shape[0], dtype=np.int64)
    count = 0
    for seed in range(ys.shape[0]):
        if labels[seed] >= 0:
            continue
        labels[seed] = count
        head, tail = 0, 1
        queue[0] = seed
        while head < tail:
            k = queue[head]
            head += 1
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    ny = ys[k] + dy
                    nx = xs[k] + dx
                    if 0 <= nx < width and 0 <= ny < height:
                        j = index[ny, nx]
                        if j >= 0 and labels[j] < 0:
                            labels[j] = count
                            queue[tail] = j
                            tail += 1
        count += 1
    return labels, count


@njit(cache=True)
def near_claims(
    cand: np.ndarray, claims: np.ndarray, ox: np.ndarray, oy: np.ndarray, height: int, width: int
) -> np.ndarray:
    """bool (K,): whether each cell of ``cand`` (K, 2) ``(ix, iy)``, inside the grid, lies in
    the disc (offsets ``ox``, ``oy``) of a cell of ``claims`` (C, 2) int64: the discs stamped
    on a (``height``, ``width``) grid, their parts outside it left out, then looked up."""
    near = np.zeros((height, width), dtype=np.bool_)
    for k in range(claims.shape[0]):
        cx = claims[k, 0]
        cy = claims[k, 1]
        for j in range(ox.shape[0]):
            x = cx + ox[j]
            y = cy + oy[j]
            if 0 <= x < width and 0 <= y < height:
                near[y, x] = True
    out = np.empty(cand.shape[0], dtype=np.bool_)
    for k in range(cand.shape[0]):
        out[k] = near[cand[k, 1], cand[k, 0]]
    return out
