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

import math
from typing import Protocol

import numpy as np

from maes_common.jit import njit

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


def _cut_count(lo: int, hi: int, cut: int, margin: int) -> int:
    """How many starts c of a cut [c, c + cut) leave >= margin tiles on both sides inside
    [lo, hi]; they are ``lo + margin + k`` for k below the count (plain ints: no array per
    cut, there are hundreds of thousands on a 5000x5000 map)."""
    return max(0, hi - margin - cut + 2 - (lo + margin))


def _place_halls(
    tiles: np.ndarray, hall_width: int, max_percent: float, min_side: int, rng: np.random.Generator
) -> list[Rect]:
    ih, iw = tiles.shape
    blocks: list[Rect] = [(0, 0, iw - 1, ih - 1)]
    hall_tiles = 0
    vertical = True  # cut along x first (a vertical hallway), as MAES
    areas = np.array([iw * ih], dtype=np.int64)  # kept beside blocks, not recomputed per cut
    while hall_tiles * 100.0 < max_percent * ih * iw:
        k = int(np.argmax(areas))
        x0, y0, x1, y1 = blocks[k]
        for axis_vertical in (vertical, not vertical):
            lo, hi = (x0, x1) if axis_vertical else (y0, y1)
            n_starts = _cut_count(lo, hi, hall_width, min_side + 2)
            if n_starts:
                break
        else:
            break  # the largest block cannot take a hallway: the percentage cannot be reached
        c = lo + min_side + 2 + int(rng.integers(n_starts))
        if axis_vertical:
            tiles[y0 : y1 + 1, c : c + hall_width] = _HALL
            parts = [(x0, y0, c - 1, y1), (c + hall_width, y0, x1, y1)]
            hall_tiles += hall_width * (y1 - y0 + 1)
        else:
            tiles[c : c + hall_width, x0 : x1 + 1] = _HALL
            parts = [(x0, y0, x1, c - 1), (x0, c + hall_width, x1, y1)]
            hall_tiles += hall_width * (x1 - x0 + 1)
        blocks[k : k + 1] = parts
        areas = np.concatenate(
            (areas[:k], [(x1 - x0 + 1) * (y1 - y0 + 1) for x0, y0, x1, y1 in parts], areas[k + 1 :])
        )
        vertical = not axis_vertical
    return blocks


def _split_rooms(
    tiles: np.ndarray, inner: Rect, min_side: int, chance: float, rng: np.random.Generator
) -> list[Rect]:
    rooms: list[Rect] = []
    walls: list[tuple[int, int, int, int]] = []
    random, integers = rng.random, rng.integers  # bound once: this loop runs per room
    span = 2 * min_side - 1  # a side of length L + 1 takes L - span wall positions
    # Explicit stack (depth-first, first half first) instead of recursion: no depth limit.
    stack: list[tuple[Rect, bool, bool]] = [(inner, False, True)]
    while stack:
        rect, split_x, forced = stack.pop()
        x0, y0, x1, y1 = rect
        wants = random() * 100.0 < chance
        if not (wants or forced):
            rooms.append(rect)
            continue
        # _cut_count(lo, hi, 1, min_side) along the preferred axis, else the other, inlined
        on_x = split_x
        n_walls = (x1 - x0 if on_x else y1 - y0) - span
        if n_walls <= 0:
            on_x = not on_x
            n_walls = (x1 - x0 if on_x else y1 - y0) - span
            if n_walls <= 0:
                rooms.append(rect)
                continue
        c = (x0 if on_x else y0) + min_side + int(integers(n_walls))
        if on_x:
            walls.append((c, y0, c, y1))
            halves = [(x0, y0, c - 1, y1), (c + 1, y0, x1, y1)]
        else:
            walls.append((x0, c, x1, c))
            halves = [(x0, y0, x1, c - 1), (x0, c + 1, x1, y1)]
        stack.append((halves[1], not on_x, False))
        stack.append((halves[0], not on_x, False))
    # Nothing above reads the tiles: the walls are drawn at once (one kernel call, not one
    # numpy slice per wall).
    _fill_rects(tiles, np.array(walls, dtype=np.int64).reshape(-1, 4), _WALL)
    return rooms


@njit(cache=True)
def _scan_runs(region: np.ndarray, out: np.ndarray) -> int:
    # Wall runs in the order the row-major scans of the map (horizontal walls) and of its
    # transpose (vertical walls) meet them; rows of ``out`` are (lo, hi, horizontal, line,
    # first, length). With an empty ``out`` only counts, so the caller can size it.
    h, w = region.shape
    n = 0
    write = out.shape[0] > 0
    for horizontal in (True, False):
        n_lines = h - 2 if horizontal else w - 2
        n_along = w if horizontal else h
        for i in range(max(n_lines, 0)):
            prev_lo = -1
            prev_hi = -1
            prev_j = -2
            for j in range(n_along):
                if horizontal:
                    mid, below, above = region[i + 1, j], region[i, j], region[i + 2, j]
                else:
                    mid, below, above = region[j, i + 1], region[j, i], region[j, i + 2]
                if mid >= 0 or below < 0 or above < 0 or below == above:
                    continue
                lo = min(below, above)
                hi = max(below, above)
                if j == prev_j + 1 and lo == prev_lo and hi == prev_hi:
                    if write:
                        out[n - 1, 5] += 1
                else:
                    if write:
                        out[n, 0] = lo
                        out[n, 1] = hi
                        out[n, 2] = 1 if horizontal else 0
                        out[n, 3] = i + 1
                        out[n, 4] = j
                        out[n, 5] = 1
                    n += 1
                prev_j, prev_lo, prev_hi = j, lo, hi
    return n


def _wall_runs(region: np.ndarray) -> np.ndarray:
    """Straight runs of one-tile walls between two different regions.

    Returns int64 (R, 6) rows (a, b, horizontal, line, first, length): a < b the region ids; a
    horizontal run's tiles are (x, y) = (first + t, line), a vertical one's (line, first + t),
    t < length; horizontal runs first, each kind in row-major order of its wall line.
    """
    region = np.ascontiguousarray(region, dtype=np.int32)
    out = np.empty((_scan_runs(region, np.empty((0, 6), dtype=np.int64)), 6), dtype=np.int64)
    _scan_runs(region, out)
    return out


@njit(cache=True)
def _cut_doors(tiles: np.ndarray, runs: np.ndarray, doors: np.ndarray, value: np.int8) -> None:
    # doors rows (run index, start along the run, width): the tiles set to ``value``.
    for k in range(doors.shape[0]):
        r, start, width = doors[k, 0], doors[k, 1], doors[k, 2]
        line, first = runs[r, 3], runs[r, 4]
        for t in range(first + start, first + start + width):
            if runs[r, 2]:
                tiles[line, t] = value
            else:
                tiles[t, line] = value


@njit(cache=True)
def _fill_rects(out: np.ndarray, rects: np.ndarray, value: int) -> None:
    # out[y0:y1 + 1, x0:x1 + 1] = value for every rect (x0, y0, x1, y1), or = k for rect k
    # when value < 0.
    for k in range(rects.shape[0]):
        x0, y0, x1, y1 = rects[k, 0], rects[k, 1], rects[k, 2], rects[k, 3]
        v = k if value < 0 else value
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                out[y, x] = v


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
    # Region pairs in the order their first run was found, each with its runs in found order
    # (pair p's runs are runs[line_of[first_line[p]:first_line[p + 1]]]).
    key = runs[:, 0] * n_regions + runs[:, 1]
    _, first_run, pair_of_run = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(first_run.size, dtype=np.int64)
    rank[np.argsort(first_run, kind="stable")] = np.arange(first_run.size)
    pair_of_run = rank[pair_of_run.ravel()]
    line_of = np.argsort(pair_of_run, kind="stable")
    first_line = np.searchsorted(pair_of_run[line_of], np.arange(first_run.size + 1))
    pair_a = runs[np.sort(first_run), 0]
    pair_b = runs[np.sort(first_run), 1]
    # Plain Python lists for the per-door loop below: scalar numpy indexing costs far more.
    lengths = runs[:, 5].tolist()
    line_list = line_of.tolist()
    first_list = first_line.tolist()
    a_list, b_list = pair_a.tolist(), pair_b.tolist()

    reached = np.zeros(n_regions, dtype=bool)
    reached[main] = True
    linked = np.zeros(first_run.size, dtype=bool)
    doors: list[tuple[int, int, int]] = []
    integers, permutation = rng.integers, rng.permutation  # bound once: called per door
    # Relax only when stuck: first MAES's padding, then no padding, then doors as wide as fit.
    for padding, shrink in ((door_padding, False), (0, False), (0, True)):
        while not reached.all():
            frontier = reached.copy()
            # Every pair across the frontier not yet given a door, in pair order; within a pass
            # only ``reached`` changes, never ``frontier``, so the list is known up front.
            todo = np.flatnonzero((frontier[pair_a] != frontier[pair_b]) & ~linked)
            for p in todo.tolist():
                n_lines = first_list[p + 1] - first_list[p]
                max_doors = int(integers(1, 4)) if n_lines > 1 else 1
                made = 0
                # permutation(1) draws nothing, so it is skipped for the many one-line pairs
                for li in permutation(n_lines).tolist() if n_lines > 1 else (0,):
                    r = line_list[first_list[p] + li]
                    length = lengths[r]
                    width = min(door_width, length) if shrink else door_width
                    if length < width + 2 * padding:
                        continue
                    start = int(integers(padding, length - width - padding + 1))
                    doors.append((r, start, width))
                    made += 1
                    if made >= max_doors:
                        break
                if made:
                    linked[p] = True
                    reached[a_list[p]] = reached[b_list[p]] = True
            if np.array_equal(frontier, reached):
                break
    # Doors only ever turn wall tiles into door tiles, and nothing above reads the tiles, so
    # they are cut all at once.
    _cut_doors(tiles, runs, np.array(doors, dtype=np.int64).reshape(-1, 3), np.int8(_DOOR))
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
    rects = np.array(room_rects, dtype=np.int64).reshape(-1, 4)
    _fill_rects(region, rects, -1)
    room_sizes = (rects[:, 2] - rects[:, 0] + 1) * (rects[:, 3] - rects[:, 1] + 1)
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
    first = int(np.argmax(region == main))  # the first tile in raster order, as (x, y) below
    start = np.array([first % iw, first // iw])
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
    rooms = ranked_regions(region, rooms_kept, border=b)
    halls = ranked_regions(region, halls_kept, border=b)
    return WorldMap(walls=add_border(walls, b, True), rooms=rooms, hallways=halls, name="building")


@map_generator("building", "building_config")
def building_from_config(config, rng: np.random.Generator) -> WorldMap:
    """The building of a config's ``map`` section (``map.building_config``)."""
    m = config.map
    return generate_building(
        m.width_in_tiles, m.height_in_tiles, m.border_size, m.building_config, rng
    )
