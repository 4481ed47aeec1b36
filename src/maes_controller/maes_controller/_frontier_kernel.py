"""Whether a frontier search has any candidate goal (numba, ``maes_common.jit``).

The question :func:`~maes_controller.frontier.frontier_goal` asks first: in a crowd most robots
find no frontier reachable around the robots they sense (they are hemmed in and wait), and
answering that with one compiled pass over the frontier cells costs far less than building the
candidate list of :func:`~maes_controller.frontier._goal_candidates` only to find it empty.
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
