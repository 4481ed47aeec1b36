"""The frontier search's compiled parts (numba, ``maes_common.jit``).

:func:`label_clusters` groups the frontier cells into 8-connected clusters for
:func:`~maes_controller.frontier._clusters`, in the order its former Python breadth-first search
found them (every new map of every robot is searched: a crowd's maps have hundreds of clusters).

:func:`has_candidate` is the question :func:`~maes_controller.frontier.frontier_goal` asks
first. In a crowd most robots find no frontier reachable around the robots they sense (they are
hemmed in and wait); one compiled pass over the frontier cells answers that for far less than
building the candidate list of :func:`~maes_controller.frontier._goal_candidates` only to find
it empty.

:func:`crowding_sums` is the "every frontier is claimed" cost of
:func:`~maes_controller.frontier.frontier_goal`: per candidate, the sum over the claims of how
near each is. The NumPy form built the (candidates x claims) matrix of distances (a crowd has
hundreds of each); here a claim farther than the radius plus a cell on either axis is not
measured (its term is 0.0 either way), and each row is summed as NumPy sums a row of a
C-contiguous matrix (:func:`_pairwise_sum`), so the sums are the same, to the bit.

:func:`cut_out` takes the cells of the robots a searching robot senses out of its traversable
mask (the search "around" them): in a crowd every robot senses a hundred others, and the NumPy
bounds checks, masks and fancy assignment cost more than the hemmed robot's whole search.

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
def cut_out(trav: np.ndarray, cells: np.ndarray, sx: int, sy: int) -> tuple[np.ndarray, bool]:
    """A C-contiguous copy of ``trav`` (bool (H, W)) with every cell of ``cells`` (K, 2) int64
    ``(ix, iy)`` that lies inside it, other than ``(sx, sy)``, set False; and whether ``cells``
    had such a cell."""
    height, width = trav.shape
    out = np.empty((height, width), dtype=np.bool_)
    out[:, :] = trav
    cut = False
    for k in range(cells.shape[0]):
        ix = cells[k, 0]
        iy = cells[k, 1]
        if 0 <= ix < width and 0 <= iy < height and (ix != sx or iy != sy):
            out[iy, ix] = False
            cut = True
    return out, cut


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


@njit(cache=True)
def _block_sum(values: np.ndarray, start: int, n: int) -> float:
    """NumPy's pairwise summation of ``values[start:start + n]`` for ``n`` <= 128: one pass
    (under 8 values) or 8 running sums combined in pairs, then the rest."""
    if n < 8:
        total = 0.0
        for i in range(n):
            total += values[start + i]
        return total
    r0 = values[start]
    r1 = values[start + 1]
    r2 = values[start + 2]
    r3 = values[start + 3]
    r4 = values[start + 4]
    r5 = values[start + 5]
    r6 = values[start + 6]
    r7 = values[start + 7]
    i = 8
    while i < n - n % 8:
        r0 += values[start + i]
        r1 += values[start + i + 1]
        r2 += values[start + i + 2]
        r3 += values[start + i + 3]
        r4 += values[start + i + 4]
        r5 += values[start + i + 5]
        r6 += values[start + i + 6]
        r7 += values[start + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += values[start + i]
        i += 1
    return total


@njit(cache=True)
def _pairwise_sum(values: np.ndarray) -> float:
    """The sum of ``values`` (float64 (N,)) in the order of NumPy's pairwise summation
    (``pairwise_sum`` of its ``add`` loops): blocks of at most 128 summed by
    :func:`_block_sum`, a longer run split in two halves (the first a multiple of 8 long) and
    their sums added. ``0.0 + this`` of a row is NumPy's ``sum(axis=-1)`` of that row of a
    C-contiguous float64 matrix, to the bit (a test compares them).

    NumPy recurses; this walks the same tree with a stack (a recursive kernel would not load
    from numba's on-disk cache)."""
    # tasks: (start, length, combine?); a combine task adds the two sums on top of ``sums``
    starts = np.empty(192, dtype=np.int64)
    lengths = np.empty(192, dtype=np.int64)
    combine = np.empty(192, dtype=np.bool_)
    sums = np.empty(64)
    starts[0], lengths[0], combine[0] = 0, values.shape[0], False
    tasks = 1
    done = 0
    while tasks > 0:
        tasks -= 1
        start, n = starts[tasks], lengths[tasks]
        if combine[tasks]:
            done -= 1
            sums[done - 1] = sums[done - 1] + sums[done]  # (first half) + (second half)
        elif n <= 128:
            sums[done] = _block_sum(values, start, n)
            done += 1
        else:
            half = n // 2
            half -= half % 8
            starts[tasks], lengths[tasks], combine[tasks] = start, n, True
            starts[tasks + 1], lengths[tasks + 1], combine[tasks + 1] = (
                start + half,
                n - half,
                False,
            )
            starts[tasks + 2], lengths[tasks + 2], combine[tasks + 2] = start, half, False
            tasks += 3
    return sums[0]


@njit(cache=True)
def crowding_sums(cand: np.ndarray, claims: np.ndarray, radius: float) -> np.ndarray:
    """float64 (K,): for each cell of ``cand`` (K, 2) int64 ``(ix, iy)``, the sum over the
    claims (C, 2) float64 of ``max(1 - hypot(cell - claim) / radius, 0)``, ``radius`` > 0:
    ``np.clip(1.0 - _gaps(cand, claims) / radius, 0.0, None).sum(axis=1)``, to the bit.

    A claim more than ``radius + 1`` away on either axis gets 0.0 without its ``hypot``: the
    distance exceeds the radius by far more than a rounding error, so the clipped term is 0.0
    as computed in full. The others take the same ``hypot`` (the C library's, as NumPy's) and
    the same operations in the same order."""
    n_claims = claims.shape[0]
    out = np.empty(cand.shape[0])
    row = np.empty(n_claims)
    far = radius + 1.0
    for k in range(cand.shape[0]):
        x = float(cand[k, 0])
        y = float(cand[k, 1])
        for j in range(n_claims):
            dx = x - claims[j, 0]
            dy = y - claims[j, 1]
            if abs(dx) > far or abs(dy) > far:
                row[j] = 0.0
                continue
            near = 1.0 - math.hypot(dx, dy) / radius
            row[j] = near if near > 0.0 else 0.0
        out[k] = 0.0 + _pairwise_sum(row)
    return out
