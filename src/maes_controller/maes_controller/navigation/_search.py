"""Grid search kernels (A*, Dijkstra) shared by planning and frontier choice.

Written in the Python subset numba compiles (see ``maes_common.jit``). Moves are
8-connected without corner cutting: a diagonal step needs both edge neighbours it passes
between to be passable. A step into cell ``v`` costs ``length * (1 + penalty[v])`` with length 1
or sqrt(2), so the octile distance is an admissible, consistent heuristic. Ties are broken by
(f, h, insertion order), which depends only on the inputs: results are deterministic.
"""

from __future__ import annotations

import heapq

import numpy as np

from maes_common.jit import njit

SQRT2 = 1.4142135623730951
# Offsets in a fixed order (E, N, W, S, NE, NW, SW, SE); determinism relies on it.
_DX = (1, 0, -1, 0, 1, -1, -1, 1)
_DY = (0, 1, 0, -1, 1, 1, -1, -1)


@njit(cache=True)
def _octile(ax: int, ay: int, bx: int, by: int) -> float:
    dx = abs(ax - bx)
    dy = abs(ay - by)
    if dx < dy:
        dx, dy = dy, dx
    return (dx - dy) + SQRT2 * dy


@njit(cache=True)
def search(
    passable: np.ndarray,
    penalty: np.ndarray,
    sx: int,
    sy: int,
    gx: int,
    gy: int,
) -> tuple[np.ndarray, np.ndarray]:
    """A* from (sx, sy) to (gx, gy), or Dijkstra over the whole grid when ``gx < 0``.

    Parameters
    ----------
    passable : bool (H, W)
    penalty : float64 (H, W), >= 0
    sx, sy, gx, gy : int
        Start and goal cells; the start must be passable.

    Returns
    -------
    cost : float64 (H * W,)
        Path cost from the start; ``inf`` where not reached. With a goal, exact only for settled
        cells (the goal's value is exact when it was reached).
    parent : int64 (H * W,)
        Flat index of each reached cell's predecessor, -1 for the start and unreached cells.
    """
    h, w = passable.shape
    n = h * w
    cost = np.full(n, np.inf)
    parent = np.full(n, -1, dtype=np.int64)
    closed = np.zeros(n, dtype=np.bool_)
    use_goal = gx >= 0
    s = sy * w + sx
    t = gy * w + gx if use_goal else -1
    cost[s] = 0.0
    h0 = _octile(sx, sy, gx, gy) if use_goal else 0.0
    seq = 0
    heap = [(h0, h0, seq, s)]
    while len(heap) > 0:
        item = heapq.heappop(heap)
        u = item[3]
        if closed[u]:
            continue
        closed[u] = True
        if u == t:
            break
        uy = u // w
        ux = u - uy * w
        gu = cost[u]
        for k in range(8):
            vx = ux + _DX[k]
            vy = uy + _DY[k]
            if vx < 0 or vy < 0 or vx >= w or vy >= h or not passable[vy, vx]:
                continue
            if k >= 4:
                if not (passable[uy, vx] and passable[vy, ux]):
                    continue
                step = SQRT2
            else:
                step = 1.0
            v = vy * w + vx
            if closed[v]:
                continue
            cand = gu + step * (1.0 + penalty[vy, vx])
            if cand < cost[v]:
                cost[v] = cand
                parent[v] = u
                hv = _octile(vx, vy, gx, gy) if use_goal else 0.0
                seq += 1
                heapq.heappush(heap, (cand + hv, hv, seq, v))
    return cost, parent


@njit(cache=True)
def walk_back(parent: np.ndarray, t: int) -> np.ndarray:
    """The flat indices of the path :func:`search` found to ``t``, from the start to ``t``:
    ``t``'s parents followed back to the start (parent -1), in reverse. int64 (K,)."""
    n = 0
    node = t
    while node >= 0:
        n += 1
        node = parent[node]
    out = np.empty(n, dtype=np.int64)
    node = t
    for k in range(n - 1, -1, -1):
        out[k] = node
        node = parent[node]
    return out
