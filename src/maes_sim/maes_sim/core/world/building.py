"""MAES-style building (office) generator: hallways, recursively split rooms, doors.

Steps (MAES 2.0's building generator, re-implemented from its behaviour):

1. Hallways: while hallways cover less than ``max_hall_in_percent`` of the interior, the largest
   remaining block is cut by a straight hallway ``hall_width`` tiles wide, alternating vertical and
   horizontal cuts, at a random place that leaves at least ``min_room_side_length`` + 2 tiles
   (a room plus its two walls) on both sides. Stops early when no block can be cut.
2. Every block between hallways gets a one-tile wall around it; its inside is split recursively by
   one-tile walls (alternating axis, the first split of a block forced, later ones with
   probability ``room_split_chance`` percent), never leaving a side shorter than
   ``min_room_side_length``.
3. The interior's outer ring is walled (closing the hallway ends); the border is added.
4. Doors ``door_width`` wide, at least ``door_padding`` tiles from the ends of the wall they are cut
   in, connect rooms to the main hallway (the largest): in passes, every not yet connected room or
   hallway sharing a wall with the connected part gets one to three doors (one per shared wall
   line). Where no shared wall is long enough, the padding and then the width are relaxed so every
   room is reached; anything still cut off (never in practice) is walled up.
"""

from __future__ import annotations

import itertools
import math
from typing import Protocol

import numpy as np

from ._params import add_border, as_int, as_real, attr, map_size
from .connectivity import label_regions, reachable_open
from .generators import map_generator
from .worldmap import MapError, WorldMap, ranked_regions

_ROOM, _HALL, _WALL, _DOOR = 0, 1, 2, 3


class BuildingParams(Protocol):
    """Any object with MAES's building settings (e.g. the config's ``BuildingConfig``)."""

    hall_width: int
    max_hall_in_percent: float
    min_room_side_length: int
    door_width: int
    door_padding: int
    room_split_chance: float


# A rectangle is (x0, y0, x1, y1), bounds included, in interior tile coordinates.
Rect = tuple[int, int, int, int]


def _cut_positions(lo: int, hi: int, cut: int, margin: int) -> np.ndarray:
    """Starts c of a cut [c, c + cut) leaving >= margin tiles on both sides inside [lo, hi]."""
    return np.arange(lo + margin, hi - margin - cut + 2)


def _place_halls(
    tiles: np.ndarray, hall_width: int, max_percent: float, min_side: int, rng: np.random.Generator
) -> list[Rect]:
    ih, iw = tiles.shape
    blocks: list[Rect] = [(0, 0, iw - 1, ih - 1)]
    hall_tiles = 0
    vertical = True  # cut along x first (a vertical hallway), as MAES
    while hall_tiles * 100.0 < max_percent * ih * iw:
        areas = [(x1 - x0 + 1) * (y1 - y0 + 1) for x0, y0, x1, y1 in blocks]
        k = int(np.argmax(areas))
        x0, y0, x1, y1 = blocks[k]
        for axis_vertical in (vertical, not vertical):
            lo, hi = (x0, x1) if axis_vertical else (y0, y1)
            starts = _cut_positions(lo, hi, hall_width, min_side + 2)
            if starts.size:
                break
        else:
            break  # the largest block cannot take a hallway: the percentage cannot be reached
        c = int(starts[rng.integers(starts.size)])
        if axis_vertical:
            tiles[y0 : y1 + 1, c : c + hall_width] = _HALL
            parts = [(x0, y0, c - 1, y1), (c + hall_width, y0, x1, y1)]
            hall_tiles += hall_width * (y1 - y0 + 1)
        else:
            tiles[c : c + hall_width, x0 : x1 + 1] = _HALL
            parts = [(x0, y0, x1, c - 1), (x0, c + hall_width, x1, y1)]
            hall_tiles += hall_width * (x1 - x0 + 1)
        blocks[k : k + 1] = parts
        vertical = not axis_vertical
    return blocks


def _split_rooms(
    tiles: np.ndarray, inner: Rect, min_side: int, chance: float, rng: np.random.Generator
) -> list[Rect]:
    rooms: list[Rect] = []
    # Explicit stack (depth-first, first half first) instead of recursion: no depth limit.
    stack: list[tuple[Rect, bool, bool]] = [(inner, False, True)]
    while stack:
        rect, split_x, forced = stack.pop()
        x0, y0, x1, y1 = rect
        wants = rng.random() * 100.0 < chance
        if not (wants or forced):
            rooms.append(rect)
            continue
        for on_x in (split_x, not split_x):
            lo, hi = (x0, x1) if on_x else (y0, y1)
            walls_at = _cut_positions(lo, hi, 1, min_side)
            if walls_at.size:
                break
        else:
            rooms.append(rect)
            continue
        c = int(walls_at[rng.integers(walls_at.size)])
        if on_x:
            tiles[y0 : y1 + 1, c] = _WALL
            halves = [(x0, y0, c - 1, y1), (c + 1, y0, x1, y1)]
        else:
            tiles[c, x0 : x1 + 1] = _WALL
            halves = [(x0, y0, x1, c - 1), (x0, c + 1, x1, y1)]
        stack.append((halves[1], not on_x, False))
        stack.append((halves[0], not on_x, False))
    return rooms


def _wall_runs(region: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
    """Straight runs of one-tile walls between two different regions.

    Returns (a, b, tiles) with a < b the region ids and tiles an (L, 2) array of (x, y) in order.
    """
    runs: list[tuple[int, int, np.ndarray]] = []
    for horizontal in (True, False):
        # A horizontal wall separates a region below from one above and runs along x; the
        # transpose turns vertical walls into horizontal ones.
        r = region if horizontal else region.T
        below, above, mid = r[:-2, :], r[2:, :], r[1:-1, :]
        shared = (mid < 0) & (below >= 0) & (above >= 0) & (below != above)
        rows, cols = np.nonzero(shared)  # row-major: along each wall line in order
        lo = np.minimum(below[rows, cols], above[rows, cols])
        hi = np.maximum(below[rows, cols], above[rows, cols])
        breaks = np.ones(rows.size, dtype=bool)
        breaks[1:] = (
            (rows[1:] != rows[:-1])
            | (cols[1:] != cols[:-1] + 1)
            | (lo[1:] != lo[:-1])
            | (hi[1:] != hi[:-1])
        )
        bounds = np.append(np.flatnonzero(breaks), rows.size)
        for s, e in itertools.pairwise(bounds):
            line, along = rows[s:e] + 1, cols[s:e]
            xy = np.stack([along, line] if horizontal else [line, along], axis=1)
            runs.append((int(lo[s]), int(hi[s]), xy.astype(np.int64)))
    return runs


def _door_start(length: int, width: int, padding: int, rng: np.random.Generator) -> int | None:
    if length < width + 2 * padding:
        return None
    return int(rng.integers(padding, length - width - padding + 1))


def _connect_with_doors(
    tiles: np.ndarray,
    region: np.ndarray,
    n_regions: int,
    main: int,
    door_width: int,
    door_padding: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Cut doors until every region is reached from ``main``; returns the reached flags."""
    runs = _wall_runs(region)
    by_pair: dict[tuple[int, int], list[np.ndarray]] = {}
    for a, b, line in runs:
        by_pair.setdefault((a, b), []).append(line)
    reached = np.zeros(n_regions, dtype=bool)
    reached[main] = True
    linked: set[tuple[int, int]] = set()
    # Relax only when stuck: first MAES's padding, then no padding, then doors as wide as fit.
    for padding, shrink in ((door_padding, False), (0, False), (0, True)):
        while not reached.all():
            frontier = reached.copy()
            for (a, b), lines in by_pair.items():
                if frontier[a] == frontier[b] or (a, b) in linked:
                    continue
                max_doors = int(rng.integers(1, 4)) if len(lines) > 1 else 1
                made = 0
                for li in rng.permutation(len(lines)):
                    line = lines[int(li)]
                    width = min(door_width, len(line)) if shrink else door_width
                    start = _door_start(len(line), width, padding, rng)
                    if start is None:
                        continue
                    door = line[start : start + width]
                    tiles[door[:, 1], door[:, 0]] = _DOOR
                    made += 1
                    if made >= max_doors:
                        break
                if made:
                    linked.add((a, b))
                    reached[a] = reached[b] = True
            if np.array_equal(frontier, reached):
                break
    return reached


def generate_building(
    width: int,
    height: int,
    border_size: int,
    building: BuildingParams,
    rng: np.random.Generator,
) -> WorldMap:
    """Generate a MAES-style building map whose open tiles are all 4-connected.

    Parameters
    ----------
    width, height : int
        Map size in tiles, border included (the result has shape (height, width)).
    border_size : int
        Wall tiles around the map on every side.
    building : BuildingParams
        Object with ``hall_width``, ``max_hall_in_percent`` (0-100), ``min_room_side_length``,
        ``door_width``, ``door_padding`` (tiles) and ``room_split_chance`` (0-100 percent).
    rng : np.random.Generator
        The only source of randomness; the same seed gives the same map.

    Returns
    -------
    WorldMap
        ``walls`` (height, width); ``rooms`` (largest first) and ``hallways`` (largest first) as
        bool masks; door tiles are open but belong to neither.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> cfg = SimpleNamespace(hall_width=3, max_hall_in_percent=20, min_room_side_length=5,
    ...                       door_width=2, door_padding=1, room_split_chance=70)
    >>> world = generate_building(50, 40, 1, cfg, np.random.default_rng(3))
    >>> world.shape, len(world.hallways) > 0, len(world.rooms) > 1
    ((40, 50), True, True)
    """
    w, h, b = map_size(width, height, border_size)
    sec = "building_config"
    hall_width = as_int(attr(building, sec, "hall_width"), f"{sec}.hall_width", 1)
    max_hall = as_real(
        attr(building, sec, "max_hall_in_percent"), f"{sec}.max_hall_in_percent", 0, 100
    )
    min_side_raw = as_real(
        attr(building, sec, "min_room_side_length"), f"{sec}.min_room_side_length", 1, math.inf
    )
    min_side = math.ceil(min_side_raw)
    door_width = as_int(attr(building, sec, "door_width"), f"{sec}.door_width", 1)
    door_padding = as_int(attr(building, sec, "door_padding"), f"{sec}.door_padding", 0)
    chance = as_real(attr(building, sec, "room_split_chance"), f"{sec}.room_split_chance", 0, 100)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")

    ih, iw = h - 2 * b, w - 2 * b
    tiles = np.full((ih, iw), _ROOM, dtype=np.int8)
    blocks = _place_halls(tiles, hall_width, max_hall, min_side, rng)
    room_rects: list[Rect] = []
    for x0, y0, x1, y1 in blocks:
        tiles[y0, x0 : x1 + 1] = tiles[y1, x0 : x1 + 1] = _WALL
        tiles[y0 : y1 + 1, x0] = tiles[y0 : y1 + 1, x1] = _WALL
        if x1 - x0 >= 2 and y1 - y0 >= 2:
            inner = (x0 + 1, y0 + 1, x1 - 1, y1 - 1)
            room_rects += _split_rooms(tiles, inner, min_side, chance, rng)
    tiles[0, :] = tiles[-1, :] = tiles[:, 0] = tiles[:, -1] = _WALL

    # One id array for every room and hallway (rooms first): memory for one map, not one mask
    # per room (a 700x700 building has thousands of rooms).
    region = np.full((ih, iw), -1, dtype=np.int32)
    for k, (x0, y0, x1, y1) in enumerate(room_rects):
        region[y0 : y1 + 1, x0 : x1 + 1] = k
    room_sizes = np.array(
        [(x1 - x0 + 1) * (y1 - y0 + 1) for x0, y0, x1, y1 in room_rects], dtype=np.int64
    )
    hall_labels, hall_sizes = label_regions(tiles == _HALL)
    n_rooms = len(room_rects)
    is_hall = hall_labels >= 0
    region[is_hall] = n_rooms + hall_labels[is_hall]
    del is_hall
    n_regions = n_rooms + hall_sizes.size
    if n_regions == 0:
        raise MapError(f"building {w}x{h} with border_size {b} has no room left inside")
    main = n_rooms + int(np.argmax(hall_sizes)) if hall_sizes.size else int(np.argmax(room_sizes))
    _connect_with_doors(tiles, region, n_regions, main, door_width, door_padding, rng)

    walls = tiles == _WALL
    # Guarantee, not hope: whatever the doors did not reach is walled up.
    start = np.argwhere(region == main)[0][::-1]
    reach = reachable_open(walls, start)
    walls |= ~reach
    # A room or hallway is kept when all of it is reached; largest first, ties in id order.
    cut_off = np.bincount(region[~reach & (region >= 0)], minlength=n_regions)
    sizes = np.concatenate([room_sizes, hall_sizes.astype(np.int64)])
    kept = np.flatnonzero(cut_off == 0)
    rooms_kept = kept[kept < n_rooms]
    halls_kept = kept[kept >= n_rooms]
    rooms_kept = rooms_kept[np.argsort(-sizes[rooms_kept], kind="stable")]
    halls_kept = halls_kept[np.argsort(-sizes[halls_kept], kind="stable")]
    rooms = ranked_regions(region, rooms_kept).padded(b)
    halls = ranked_regions(region, halls_kept).padded(b)
    return WorldMap(walls=add_border(walls, b, True), rooms=rooms, hallways=halls, name="building")


@map_generator("building", "building_config")
def building_from_config(config, rng: np.random.Generator) -> WorldMap:
    """The building of a config's ``map`` section (``map.building_config``)."""
    m = config.map
    return generate_building(
        m.width_in_tiles, m.height_in_tiles, m.border_size, m.building_config, rng
    )
