"""Connected regions of tile maps (4-connectivity), compiled with numba.

Regions are 4-connected on purpose: two open tiles that only touch at a corner leave a gap of zero
width between the wall tiles, which no disc-shaped robot can pass.
"""

from __future__ import annotations

import numpy as np

from maes_common.jit import njit

from .worldmap import MapError


@njit(cache=True)
def _label4(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # BFS in raster order, so labels and sizes are deterministic.
    h, w = mask.shape
    labels = np.full((h, w), -1, dtype=np.int32)
    queue = np.empty(h * w, dtype=np.int64)
    sizes = np.zeros(h * w, dtype=np.int64)
    count = 0
    for sy in range(h):
        for sx in range(w):
            if not mask[sy, sx] or labels[sy, sx] >= 0:
                continue
            labels[sy, sx] = count
            head = 0
            tail = 1
            queue[0] = sy * w + sx
            while head < tail:
                idx = queue[head]
                head += 1
                y = idx // w
                x = idx - y * w
                for k in range(4):
                    ny = y + (1 if k == 0 else -1 if k == 1 else 0)
                    nx = x + (1 if k == 2 else -1 if k == 3 else 0)
                    if 0 <= ny < h and 0 <= nx < w and mask[ny, nx] and labels[ny, nx] < 0:
                        labels[ny, nx] = count
                        queue[tail] = ny * w + nx
                        tail += 1
            sizes[count] = tail
            count += 1
    return labels, sizes[:count].copy()


@njit(cache=True)
def _bfs_steps(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    h, w = mask.shape
    dist = np.full((h, w), -1, dtype=np.int64)
    queue = np.empty(h * w, dtype=np.int64)
    tail = 0
    for i in range(starts.shape[0]):
        x = starts[i, 0]
        y = starts[i, 1]
        if 0 <= x < w and 0 <= y < h and mask[y, x] and dist[y, x] < 0:
            dist[y, x] = 0
            queue[tail] = y * w + x
            tail += 1
    head = 0
    while head < tail:
        idx = queue[head]
        head += 1
        y = idx // w
        x = idx - y * w
        for k in range(4):
            ny = y + (1 if k == 0 else -1 if k == 1 else 0)
            nx = x + (1 if k == 2 else -1 if k == 3 else 0)
            if 0 <= ny < h and 0 <= nx < w and mask[ny, nx] and dist[ny, nx] < 0:
                dist[ny, nx] = dist[y, x] + 1
                queue[tail] = ny * w + nx
                tail += 1
    return dist


@njit(cache=True)
def _flood(grid: np.ndarray, passable: bool, seen: np.ndarray, starts: np.ndarray) -> np.ndarray:
    # Mark in ``seen`` every tile 4-connected to ``starts`` ((K, 2) of (x, y)) through tiles
    # where ``grid == passable`` and not seen yet, the starts included; returns the flat indices
    # (y * w + x) of the tiles marked, in the order reached. The queue has room for the whole
    # map but pages in only as far as what is reached.
    h, w = grid.shape
    queue = np.empty(h * w, dtype=np.int64)
    tail = 0
    for i in range(starts.shape[0]):
        x = starts[i, 0]
        y = starts[i, 1]
        if 0 <= x < w and 0 <= y < h and grid[y, x] == passable and not seen[y, x]:
            seen[y, x] = True
            queue[tail] = y * w + x
            tail += 1
    head = 0
    while head < tail:
        idx = queue[head]
        head += 1
        y = idx // w
        x = idx - y * w
        for k in range(4):
            ny = y + (1 if k == 0 else -1 if k == 1 else 0)
            nx = x + (1 if k == 2 else -1 if k == 3 else 0)
            if 0 <= ny < h and 0 <= nx < w and grid[ny, nx] == passable and not seen[ny, nx]:
                seen[ny, nx] = True
                queue[tail] = ny * w + nx
                tail += 1
    return queue[:tail]


@njit(cache=True)
def _reach4(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    # _bfs_steps(...) >= 0 without its int64 distance map (8 bytes a tile, all written): a bool
    # map instead.
    seen = np.zeros(mask.shape, dtype=np.bool_)
    _flood(mask, True, seen, starts)
    return seen


def _as_mask(mask: np.ndarray, what: str) -> np.ndarray:
    arr = np.asarray(mask)
    if arr.ndim != 2:
        raise MapError(f"{what} must be a 2-D (H, W) array, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.bool_)


def _as_tiles(tiles: np.ndarray) -> np.ndarray:
    arr = np.asarray(tiles)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise MapError(f"start tiles must have shape (K, 2) of (ix, iy), got {np.shape(tiles)}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise MapError(f"start tiles must be integer tile indices (ix, iy), got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def label_regions(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Label the 4-connected regions of ``mask``.

    Parameters
    ----------
    mask : np.ndarray
        bool (H, W); True tiles are grouped into regions.

    Returns
    -------
    labels : np.ndarray
        int32 (H, W): region index 0..K-1, numbered in raster order of each region's first tile
        (row 0 first), or -1 where ``mask`` is False.
    sizes : np.ndarray
        int64 (K,): number of tiles of each region.

    Examples
    --------
    >>> labels, sizes = label_regions(np.array([[1, 0, 1], [1, 0, 0]], dtype=bool))
    >>> labels
    array([[ 0, -1,  1],
           [ 0, -1, -1]], dtype=int32)
    >>> sizes
    array([2, 1])
    """
    return _label4(_as_mask(mask, "mask"))


def open_regions(walls: np.ndarray) -> tuple[np.ndarray, ...]:
    """The 4-connected open regions of a map as bool (H, W) masks, largest first.

    Ties in size keep raster order (the region whose first tile comes first).

    Examples
    --------
    >>> walls = np.array([[0, 1, 0, 0]], dtype=bool)
    >>> [int(m.sum()) for m in open_regions(walls)]
    [2, 1]
    """
    labels, sizes = label_regions(~_as_mask(walls, "walls"))
    order = np.argsort(-sizes, kind="stable")
    return tuple(labels == k for k in order)


def largest_open_region(walls: np.ndarray) -> np.ndarray:
    """bool (H, W): the largest 4-connected open region (all False if the map is all wall).

    Ties in size go to the region whose first tile comes first in raster order.

    Examples
    --------
    >>> walls = np.array([[0, 1, 0, 0]], dtype=bool)
    >>> largest_open_region(walls)
    array([[False, False,  True,  True]])
    """
    labels, sizes = label_regions(~_as_mask(walls, "walls"))
    if sizes.size == 0:
        return np.zeros(labels.shape, dtype=bool)
    return labels == int(np.argmax(sizes))


def reachable_open(walls: np.ndarray, start_tiles: np.ndarray) -> np.ndarray:
    """bool (H, W): open tiles 4-connected to any of the start tiles.

    Parameters
    ----------
    walls : np.ndarray
        bool (H, W) wall map.
    start_tiles : np.ndarray
        int (K, 2) or (2,) tile indices ``(ix, iy)`` (e.g. ``grid.tile_of(positions)``). Start
        tiles that are walls or outside the map reach nothing.

    Examples
    --------
    >>> walls = np.array([[0, 0, 1, 0]], dtype=bool)
    >>> reachable_open(walls, np.array([[0, 0]]))
    array([[ True,  True, False, False]])
    """
    open_mask = ~_as_mask(walls, "walls")
    return _reach4(open_mask, _as_tiles(start_tiles))


def path_steps(mask: np.ndarray, start_tiles: np.ndarray) -> np.ndarray:
    """int64 (H, W): 4-connected steps from the nearest start tile inside ``mask`` (-1 = unreached).

    Examples
    --------
    >>> path_steps(np.array([[1, 1, 0, 1]], dtype=bool), np.array([0, 0]))
    array([[ 0,  1, -1, -1]])
    """
    return _bfs_steps(_as_mask(mask, "mask"), _as_tiles(start_tiles))
