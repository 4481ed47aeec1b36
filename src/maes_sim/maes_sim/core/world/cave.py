"""MAES-style cellular-automaton cave generator.

Steps (as MAES 2.0's cave generator, re-implemented from its description and behaviour):

1. Random fill of the interior (map minus ``border_size`` on each side): each tile is a wall with
   probability ``random_fill_percent`` / 100; the interior's outer ring starts as wall.
2. ``smoothing_runs`` synchronous smoothing passes: a tile with more than 4 of its 8 neighbours
   walls becomes wall, fewer than 4 becomes open, exactly 4 keeps its state (outside = wall).
3. Narrow spots are walled off until every open tile has open room on both sides horizontally and
   vertically (a 3-tile run) and an open diagonal neighbour on each diagonal (MAES does this so
   every open tile is traversable).
4. 4-connected wall regions smaller than ``wall_threshold_size`` become open, then open regions
   smaller than ``room_threshold_size`` become wall (the largest open region is always kept).
5. Every region is connected to the largest (the main room): repeatedly the closest pair of edge
   tiles between the main-connected area and any other region is joined by a straight passage
   drawn with discs of radius ``connection_passage_width`` (MAES's meaning of "width").
6. Whatever open tile is still not 4-connected to the main room is filled (none in practice), and
   the border is added, so every open tile is reachable from every other.

If nothing open survives steps 1-4 (a high fill on a small map, or no smoothing), the fill is
drawn again from the same ``rng`` (up to ``_ATTEMPTS`` times) before a ``MapError``.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from maes_common.jit import njit

from ._params import add_border, as_int, as_real, attr, map_size
from .connectivity import _flood, label_regions
from .generators import map_generator
from .worldmap import MapError, WorldMap, ranked_regions

#: Fresh random fills tried (from the same rng, so still deterministic) before giving up when
#: nothing open survives clean-up, which happens on small maps with a high fill.
_ATTEMPTS = 10


class CaveParams(Protocol):
    """Any object with MAES's cave settings (e.g. the config's ``CaveConfig``)."""

    smoothing_runs: int
    connection_passage_width: int
    random_fill_percent: float
    wall_threshold_size: int
    room_threshold_size: int


@njit(cache=True)
def _smooth(walls: np.ndarray) -> np.ndarray:
    # One synchronous smoothing pass: more than 4 of the 8 neighbours walls (outside the map
    # counts as wall) -> wall, fewer than 4 -> open, exactly 4 -> unchanged. Counts come from
    # sums of 3-tile columns of the map padded with wall, one row at a time.
    h, w = walls.shape
    padded = np.ones((h + 2, w + 2), dtype=np.uint8)
    for y in range(h):
        for x in range(w):
            padded[y + 1, x + 1] = walls[y, x]
    out = np.empty((h, w), dtype=np.bool_)
    column = np.empty(w + 2, dtype=np.uint8)
    for y in range(h):
        for x in range(w + 2):
            column[x] = padded[y, x] + padded[y + 1, x] + padded[y + 2, x]
        for x in range(w):
            count = column[x] + column[x + 1] + column[x + 2] - padded[y + 1, x + 1]
            out[y, x] = count > 4 or (count == 4 and walls[y, x])
    return out


@njit(cache=True)
def _is_narrow(o: np.ndarray, y: int, x: int) -> bool:
    # ``o`` is the open map padded with 2 closed tiles, (y, x) a padded index. An open tile is
    # narrow without open room on both sides horizontally and vertically (a 3-tile run through
    # it) or without an open diagonal neighbour on each diagonal.
    if not o[y, x]:
        return False
    left, right = o[y, x - 1], o[y, x + 1]
    horizontal = (left and right) or (right and o[y, x + 2]) or (left and o[y, x - 2])
    up, down = o[y - 1, x], o[y + 1, x]
    vertical = (up and down) or (down and o[y + 2, x]) or (up and o[y - 2, x])
    diagonal = (o[y - 1, x - 1] or o[y + 1, x + 1]) and (o[y + 1, x - 1] or o[y - 1, x + 1])
    return not (horizontal and vertical and diagonal)


@njit(cache=True)
def _wall_off_narrow(walls: np.ndarray) -> np.ndarray:
    # Synchronous passes, each walling every narrow tile of the previous state, until none is
    # left. After the first (full) pass only tiles within 2 of a tile just walled can turn
    # narrow, so later passes look at those alone.
    h, w = walls.shape
    o = np.zeros((h + 4, w + 4), dtype=np.bool_)
    for y in range(h):
        for x in range(w):
            o[y + 2, x + 2] = not walls[y, x]
    pw = w + 4
    todo = np.empty(16, dtype=np.int64)
    n_todo = 0
    for y in range(2, h + 2):
        for x in range(2, w + 2):
            if _is_narrow(o, y, x):
                if n_todo == todo.shape[0]:
                    todo = np.concatenate((todo, np.empty(n_todo, dtype=np.int64)))
                todo[n_todo] = y * pw + x
                n_todo += 1
    seen = np.zeros((h + 4, w + 4), dtype=np.int32)  # the pass that last queued a tile
    stamp = 0
    near = np.empty(16, dtype=np.int64)
    while n_todo:
        for k in range(n_todo):
            o[todo[k] // pw, todo[k] % pw] = False
        stamp += 1
        n_near = 0
        for k in range(n_todo):
            cy, cx = todo[k] // pw, todo[k] % pw
            for y in range(cy - 2, cy + 3):
                for x in range(cx - 2, cx + 3):
                    if seen[y, x] == stamp or not o[y, x]:
                        continue  # the padding is never open, so never queued
                    seen[y, x] = stamp
                    if n_near == near.shape[0]:
                        near = np.concatenate((near, np.empty(n_near, dtype=np.int64)))
                    near[n_near] = y * pw + x
                    n_near += 1
        if todo.shape[0] < n_near:
            todo = np.empty(n_near, dtype=np.int64)
        n_todo = 0
        for k in range(n_near):
            if _is_narrow(o, near[k] // pw, near[k] % pw):
                todo[n_todo] = near[k]
                n_todo += 1
    out = np.empty((h, w), dtype=np.bool_)
    for y in range(h):
        for x in range(w):
            out[y, x] = not o[y + 2, x + 2]
    return out


def _remove_small_regions(
    walls: np.ndarray, wall_min: int, room_min: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The walls without small regions, and ``label_regions`` of their open tiles."""
    walls = walls.copy()
    labels, sizes = label_regions(walls)
    # A lookup by label (index 0 for -1, no region) instead of np.isin, which sorts the map.
    small = np.concatenate(([False], sizes < wall_min))
    if small.any():
        walls[small[labels + 1]] = False
    labels, sizes = label_regions(~walls)
    if sizes.size == 0:
        return walls, labels, sizes
    small = sizes < room_min
    small[int(np.argmax(sizes))] = False  # keep the main room even when it is below threshold
    if small.any():
        walls[np.concatenate(([False], small))[labels + 1]] = True
        # Walling whole regions leaves the others as they were: their labels are renumbered
        # (raster order of first tiles is kept) instead of labelling the map again.
        kept = np.flatnonzero(~small)
        renumber = np.full(sizes.size + 1, -1, dtype=np.int32)
        renumber[kept + 1] = np.arange(kept.size, dtype=np.int32)
        labels, sizes = renumber[labels + 1], sizes[kept]
    return walls, labels, sizes


def _edge_tiles(open_mask: np.ndarray) -> np.ndarray:
    p = np.pad(~open_mask, 1, mode="constant", constant_values=True)
    h, w = open_mask.shape
    near_wall = p[:h, 1 : w + 1] | p[2:, 1 : w + 1] | p[1 : h + 1, :w] | p[1 : h + 1, 2:]
    return open_mask & near_wall


@njit(cache=True)
def _update_nearest(
    ux: np.ndarray,
    uy: np.ndarray,
    cx: np.ndarray,
    cy: np.ndarray,
    best_d2: np.ndarray,
    best_x: np.ndarray,
    best_y: np.ndarray,
) -> None:
    # For every candidate tile u, the closest tile c of this batch replaces u's best when it is
    # strictly closer; among equally close tiles of the batch the first (lowest index) wins, as
    # a scan of the batch in order with "<" would pick. The batch is binned into square buckets
    # and each u looks at rings of buckets around it only while they can still hold a tile at
    # most as far as the best so far (the exact answer, at a cost that follows the distance,
    # not the batch's size).
    n = cx.shape[0]
    if n == 0 or ux.shape[0] == 0:
        return
    side = 16
    x_lo, x_hi, y_lo, y_hi = cx.min(), cx.max(), cy.min(), cy.max()
    gw = (x_hi - x_lo) // side + 1
    gh = (y_hi - y_lo) // side + 1
    starts = np.zeros(gw * gh + 1, dtype=np.int64)
    for j in range(n):
        starts[((cy[j] - y_lo) // side) * gw + (cx[j] - x_lo) // side + 1] += 1
    for b in range(gw * gh):
        starts[b + 1] += starts[b]
    fill = starts[:-1].copy()
    members = np.empty(n, dtype=np.int64)
    for j in range(n):  # ascending j within each bucket
        b = ((cy[j] - y_lo) // side) * gw + (cx[j] - x_lo) // side
        members[fill[b]] = j
        fill[b] += 1
    for i in range(ux.shape[0]):
        x, y = ux[i], uy[i]
        # u's bucket, possibly outside the grid (then clamped rings still start from it)
        bx = (x - x_lo) // side if x >= x_lo else -((x_lo - x + side - 1) // side)
        by = (y - y_lo) // side if y >= y_lo else -((y_lo - y + side - 1) // side)
        found_d = best_d2[i]
        found_j = -1
        reach = max(abs(bx), abs(bx - gw + 1), abs(by), abs(by - gh + 1))
        r = 0
        while r <= reach:
            if r > 0:
                # every tile of ring r is at least (r - 1) * side + 1 away along one axis
                lower = (r - 1) * side + 1
                if lower * lower > found_d:
                    break
            for gy in range(max(by - r, 0), min(by + r, gh - 1) + 1):
                on_edge = gy == by - r or gy == by + r
                step = 1 if on_edge else 2 * r
                gx = bx - r
                while gx <= bx + r:
                    if 0 <= gx < gw:
                        x0 = x_lo + gx * side
                        y0 = y_lo + gy * side
                        dx = max(0, x0 - x, x - (x0 + side - 1))
                        dy = max(0, y0 - y, y - (y0 + side - 1))
                        if dx * dx + dy * dy <= found_d:
                            b = gy * gw + gx
                            for m in range(starts[b], starts[b + 1]):
                                j = members[m]
                                ddx = x - cx[j]
                                ddy = y - cy[j]
                                d2 = ddx * ddx + ddy * ddy
                                if d2 < found_d or (d2 == found_d and 0 <= j < found_j):
                                    found_d = d2
                                    found_j = j
                    gx += step if step > 0 else 1
            r += 1
        if found_j >= 0:
            best_d2[i] = found_d
            best_x[i] = cx[found_j]
            best_y[i] = cy[found_j]


@njit(cache=True)
def _absorb(walls: np.ndarray, connected: np.ndarray, carved: np.ndarray) -> np.ndarray:
    # After a passage (tiles ``carved``, (K, 2) of (x, y), now open) joined the connected area:
    # flood from the passage over open tiles not yet connected, which reaches exactly the tiles
    # the passage joined to it (the passage itself and every region it cuts or touches: the
    # other regions touched nothing connected before). Marks them connected and returns the
    # flat indices (y * w + x) of those that border a wall or the map's edge, ascending.
    h, w = walls.shape
    queue = _flood(walls, False, connected, carved)  # (the passage's tiles are open)
    tail = queue.shape[0]
    edge = np.empty(tail, dtype=np.int64)
    n_edge = 0
    for k in range(tail):
        y = queue[k] // w
        x = queue[k] - y * w
        if (
            y == 0
            or y == h - 1
            or x == 0
            or x == w - 1
            or walls[y - 1, x]
            or walls[y + 1, x]
            or walls[y, x - 1]
            or walls[y, x + 1]
        ):
            edge[n_edge] = queue[k]
            n_edge += 1
    return np.sort(edge[:n_edge])


def _line4(x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    """(L, 2) tiles (x, y) of a 4-connected line from (x0, y0) to (x1, y1), both included."""
    dx, dy = abs(x1 - x0), abs(y1 - y0)
    sx, sy = (1 if x1 > x0 else -1), (1 if y1 > y0 else -1)
    x, y = x0, y0
    points = [(x, y)]
    ix = iy = 0
    while ix < dx or iy < dy:
        # One axis per step keeps the line 4-connected (a diagonal step would leave a corner
        # gap); step along x while the next x crossing comes before the next y crossing.
        if (1 + 2 * ix) * dy < (1 + 2 * iy) * dx:
            x += sx
            ix += 1
        else:
            y += sy
            iy += 1
        points.append((x, y))
    return np.array(points, dtype=np.int64)


def _carve(walls: np.ndarray, line: np.ndarray, radius: int) -> np.ndarray:
    """Open discs of ``radius`` around the tiles of ``line``; returns the opened (x, y)."""
    r = np.arange(-radius, radius + 1)
    ox, oy = np.meshgrid(r, r)
    inside = ox * ox + oy * oy <= radius * radius
    offsets = np.stack([ox[inside], oy[inside]], axis=1)
    pts = (line[:, None, :] + offsets[None, :, :]).reshape(-1, 2)
    h, w = walls.shape
    ok = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
    walls[pts[ok, 1], pts[ok, 0]] = False
    return pts[ok]


def _connect_to_main(
    walls: np.ndarray, main_label: int, labels: np.ndarray, radius: int
) -> np.ndarray:
    """Cut passages until every open tile is 4-connected to region ``main_label`` (in place).

    Returns bool (H, W): the tiles 4-connected to that region, kept up to date passage by
    passage (what labelling the final map would give for it).
    """
    connected = labels == main_label
    edges = _edge_tiles(~walls)
    uy, ux = np.nonzero(edges & ~connected)
    cy, cx = np.nonzero(edges & connected)
    del edges
    best_d2 = np.full(ux.shape, np.iinfo(np.int64).max, dtype=np.int64)
    best_x = np.zeros(ux.shape, dtype=np.int64)
    best_y = np.zeros(ux.shape, dtype=np.int64)
    _update_nearest(ux, uy, cx, cy, best_d2, best_x, best_y)
    w = walls.shape[1]
    while ux.size:
        i = int(np.argmin(best_d2))
        line = _line4(int(ux[i]), int(uy[i]), int(best_x[i]), int(best_y[i]))
        carved = _carve(walls, line, radius)
        # The passage's side of the map only: no relabelling of the whole map per passage.
        new = _absorb(walls, connected, carved)
        keep = ~connected[uy, ux]
        ux, uy = ux[keep], uy[keep]
        best_d2, best_x, best_y = best_d2[keep], best_x[keep], best_y[keep]
        _update_nearest(ux, uy, new % w, new // w, best_d2, best_x, best_y)
    return connected


def generate_cave(
    width: int, height: int, border_size: int, cave: CaveParams, rng: np.random.Generator
) -> WorldMap:
    """Generate a MAES-style cave map whose open tiles are all 4-connected.

    Parameters
    ----------
    width, height : int
        Map size in tiles, border included (the result has shape (height, width)).
    border_size : int
        Wall tiles around the map on every side.
    cave : CaveParams
        Object with ``smoothing_runs``, ``connection_passage_width`` (passage disc radius, tiles),
        ``random_fill_percent`` (0-100), ``wall_threshold_size`` and ``room_threshold_size``
        (tiles).
    rng : np.random.Generator
        The only source of randomness; the same seed gives the same map.

    Returns
    -------
    WorldMap
        ``walls`` (height, width); ``rooms`` are the cave regions that survived clean-up, before
        the passages joined them, largest first; no hallways.

    Raises
    ------
    MapError
        Bad parameters, or nothing open left (``random_fill_percent`` too high).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> cfg = SimpleNamespace(smoothing_runs=4, connection_passage_width=2,
    ...                       random_fill_percent=45, wall_threshold_size=10,
    ...                       room_threshold_size=10)
    >>> world = generate_cave(40, 30, 1, cfg, np.random.default_rng(1))
    >>> world.shape, bool(world.walls[0].all())
    ((30, 40), True)
    """
    w, h, b = map_size(width, height, border_size)
    runs = as_int(attr(cave, "cave_config", "smoothing_runs"), "cave_config.smoothing_runs")
    radius = as_int(
        attr(cave, "cave_config", "connection_passage_width"),
        "cave_config.connection_passage_width",
    )
    fill = as_real(
        attr(cave, "cave_config", "random_fill_percent"), "cave_config.random_fill_percent", 0, 100
    )
    wall_min = as_int(
        attr(cave, "cave_config", "wall_threshold_size"), "cave_config.wall_threshold_size"
    )
    room_min = as_int(
        attr(cave, "cave_config", "room_threshold_size"), "cave_config.room_threshold_size"
    )
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")

    ih, iw = h - 2 * b, w - 2 * b
    for _ in range(_ATTEMPTS):
        draws = rng.random((ih, iw))
        draws *= 100.0  # in place: no second map of floats (200 MB at 5000x5000)
        walls = draws < fill
        del draws
        walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
        for _ in range(runs):
            walls = _smooth(walls)
        walls = _wall_off_narrow(walls)
        walls, labels, sizes = _remove_small_regions(walls, wall_min, room_min)
        if sizes.size:
            break
    else:
        raise MapError(
            f"cave {w}x{h} kept no open tile in {_ATTEMPTS} attempts with "
            f"random_fill_percent={fill:g} and smoothing_runs={runs}; lower the fill or smooth "
            "more (unsmoothed noise has no tile wide enough to keep)"
        )
    order = np.argsort(-sizes, kind="stable")
    rooms = labels  # region ids before the passages (one array, not one mask per region)
    main = _connect_to_main(walls, int(order[0]), labels, radius)

    # Guarantee, not hope: anything still cut off from the main room is filled.
    walls |= ~main
    rooms = np.where(main, rooms, -1)
    left = np.bincount(rooms[rooms >= 0], minlength=sizes.size)
    order = order[left[order] > 0]
    return WorldMap(
        walls=add_border(walls, b, True),
        rooms=ranked_regions(rooms, order, border=b),
        name="cave",
    )


@map_generator("cave", "cave_config")
def cave_from_config(config, rng: np.random.Generator) -> WorldMap:
    """The cave of a config's ``map`` section (``map.cave_config``)."""
    m = config.map
    return generate_cave(m.width_in_tiles, m.height_in_tiles, m.border_size, m.cave_config, rng)
