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
from .connectivity import label_regions
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


def _neighbour_walls(walls: np.ndarray) -> np.ndarray:
    p = np.pad(walls, 1, mode="constant", constant_values=True).astype(np.uint8)
    h, w = walls.shape
    count = np.zeros((h, w), dtype=np.uint8)
    for dy in range(3):
        for dx in range(3):
            if dy != 1 or dx != 1:
                count += p[dy : dy + h, dx : dx + w]
    return count


def _smooth(walls: np.ndarray) -> np.ndarray:
    count = _neighbour_walls(walls)
    return np.where(count > 4, True, np.where(count < 4, False, walls))


def _wall_off_narrow(walls: np.ndarray) -> np.ndarray:
    walls = walls.copy()
    h, w = walls.shape
    while True:
        o = np.pad(~walls, 2, mode="constant", constant_values=False)

        def at(dx: int, dy: int, o: np.ndarray = o) -> np.ndarray:
            return o[2 + dy : 2 + dy + h, 2 + dx : 2 + dx + w]

        horizontal = (at(-1, 0) & at(1, 0)) | (at(1, 0) & at(2, 0)) | (at(-1, 0) & at(-2, 0))
        vertical = (at(0, -1) & at(0, 1)) | (at(0, 1) & at(0, 2)) | (at(0, -1) & at(0, -2))
        diagonal = (at(-1, -1) | at(1, 1)) & (at(-1, 1) | at(1, -1))
        narrow = ~walls & ~(horizontal & vertical & diagonal)
        if not narrow.any():
            return walls
        walls |= narrow


def _remove_small_regions(walls: np.ndarray, wall_min: int, room_min: int) -> np.ndarray:
    walls = walls.copy()
    labels, sizes = label_regions(walls)
    small = np.flatnonzero(sizes < wall_min)
    if small.size:
        walls[np.isin(labels, small)] = False
    labels, sizes = label_regions(~walls)
    if sizes.size == 0:
        return walls
    small = sizes < room_min
    small[int(np.argmax(sizes))] = False  # keep the main room even when it is below threshold
    if small.any():
        walls[np.isin(labels, np.flatnonzero(small))] = True
    return walls


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
    # For every candidate tile u, remember the closest connected tile seen so far (first wins ties).
    for i in range(ux.shape[0]):
        bd = best_d2[i]
        for j in range(cx.shape[0]):
            dx = ux[i] - cx[j]
            dy = uy[i] - cy[j]
            d2 = dx * dx + dy * dy
            if d2 < bd:
                bd = d2
                best_x[i] = cx[j]
                best_y[i] = cy[j]
        best_d2[i] = bd


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


def _carve(walls: np.ndarray, line: np.ndarray, radius: int) -> None:
    r = np.arange(-radius, radius + 1)
    ox, oy = np.meshgrid(r, r)
    inside = ox * ox + oy * oy <= radius * radius
    offsets = np.stack([ox[inside], oy[inside]], axis=1)
    pts = (line[:, None, :] + offsets[None, :, :]).reshape(-1, 2)
    h, w = walls.shape
    ok = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
    walls[pts[ok, 1], pts[ok, 0]] = False


def _connect_to_main(walls: np.ndarray, main_label: int, labels: np.ndarray, radius: int) -> None:
    """Cut passages until every open tile is 4-connected to region ``main_label`` (in place)."""
    anchor = np.argwhere(labels == main_label)[0]  # (iy, ix) of a tile that stays in main
    connected = labels == main_label
    edges = _edge_tiles(~walls)
    uy, ux = np.nonzero(edges & ~connected)
    cy, cx = np.nonzero(edges & connected)
    best_d2 = np.full(ux.shape, np.iinfo(np.int64).max, dtype=np.int64)
    best_x = np.zeros(ux.shape, dtype=np.int64)
    best_y = np.zeros(ux.shape, dtype=np.int64)
    _update_nearest(ux, uy, cx, cy, best_d2, best_x, best_y)
    while ux.size:
        i = int(np.argmin(best_d2))
        _carve(walls, _line4(int(ux[i]), int(uy[i]), int(best_x[i]), int(best_y[i])), radius)
        labels, _ = label_regions(~walls)
        now = labels == labels[anchor[0], anchor[1]]
        new_cy, new_cx = np.nonzero(now & ~connected & _edge_tiles(~walls))
        connected = now
        keep = ~connected[uy, ux]
        ux, uy = ux[keep], uy[keep]
        best_d2, best_x, best_y = best_d2[keep], best_x[keep], best_y[keep]
        _update_nearest(ux, uy, new_cx, new_cy, best_d2, best_x, best_y)


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
        walls = rng.random((ih, iw)) * 100.0 < fill
        walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
        for _ in range(runs):
            walls = _smooth(walls)
        walls = _wall_off_narrow(walls)
        walls = _remove_small_regions(walls, wall_min, room_min)
        labels, sizes = label_regions(~walls)
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
    _connect_to_main(walls, int(order[0]), labels, radius)

    # Guarantee, not hope: anything still cut off from the main room is filled.
    labels, _ = label_regions(~walls)
    first = np.argwhere(rooms == order[0])[0]
    main = labels == labels[first[0], first[1]]
    walls |= ~main
    rooms = np.where(main, rooms, -1)
    left = np.bincount(rooms[rooms >= 0], minlength=sizes.size)
    order = order[left[order] > 0]
    return WorldMap(
        walls=add_border(walls, b, True),
        rooms=ranked_regions(rooms, order).padded(b),
        name="cave",
    )


@map_generator("cave", "cave_config")
def cave_from_config(config, rng: np.random.Generator) -> WorldMap:
    """The cave of a config's ``map`` section (``map.cave_config``)."""
    m = config.map
    return generate_cave(m.width_in_tiles, m.height_in_tiles, m.border_size, m.cave_config, rng)
