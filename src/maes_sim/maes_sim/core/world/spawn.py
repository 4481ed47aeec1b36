"""Robot spawn positions (MAES 2.0's spawn modes) for disc-shaped robots.

Every mode places one robot per tile, at the tile's centre (where MAES 2.0's ``CreateRobot``
puts it: on the map's tile, plus 0.01), as MAES 2.0's ``RobotSpawner`` does. Robots wider than
0.95 of a tile (with :data:`SPAWN_MARGIN`) take every second tile (every third above 1.95, and
so on), with as many open tiles around theirs as their clearance needs. Only the largest open
region is used.

``spawn_together`` (and no mode at all) follows ``SpawnRobotsTogether``: on tiles with an open
tile on every side (MAES: "we cannot spawn adjacent to a wall"), filled by a flood (breadth
first, neighbours in the order left, down, up, right) from the such tile nearest the target
point (Manhattan distance; ties: lowest x, then y); when the flood has filled its part of the
map (a room), it starts again from the nearest tile not yet taken. Where the map has too few
such tiles for the team (MAES 2.0 gives up), the flood goes on over tiles next to walls that the
robot's disc still clears.

``biggest_room`` follows ``SpawnRobotsInBiggestRoom``: of the map's rooms *and hallways* (MAES
keeps both in one list), the one with the most tiles less its edge tiles (``Room.edgeTiles``,
one entry per side facing a wall: tiles minus the room's perimeter in tile sides) wins; ties go
to hallways before rooms, then the order listed (largest first). Caves: the cave regions;
imported maps and maps with no regions: the largest open region. Two layers of edge tiles are
peeled off it (a tile with a 4-neighbour outside the room, twice: MAES's ``edgeTiles`` and
``FindEdgeTiles(..., checkDiagonal: true)``, which checks the four sides only), and robots take
the rest in order of x, then y. Where too few tiles are left (MAES 2.0 throws "Room not big
enough"; a hallway 4 tiles wide keeps none), one layer is peeled, then none (tiles next to
walls, those the robot's disc clears), the fewest layers that fit the team, in the same order.

``spawn_at_hallway_ends`` follows ``SpawnAtHallWayEnds``: the tiles of all hallways less their
edge tiles (one layer), nearest the map's border first (``min(x, W-1-x, y, H-1-y)`` in tiles;
MAES 2.0's sort leaves ties unordered: here lowest x, then y). Where too few tiles are left
(MAES 2.0 then spawns fewer robots than asked), the hallways' edge tiles are used too, in the
same order.

The result does not depend on ``rng``: every tie has a rule.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from .connectivity import largest_open_region
from .worldmap import MapError, Regions, WorldMap

#: Clearance (tiles) kept between a spawned robot and walls, and added to the robot spacing.
SPAWN_MARGIN = 0.05

#: Columns of the map read at a time when robots take a room's tiles in order of x, then y:
#: a huge room is not listed whole to place a few robots.
_COLUMNS = 64


def _labels(regions, shape: tuple[int, int]) -> np.ndarray:
    """(H, W) labels of ``world.rooms`` / ``world.hallways`` (0 none, k + 1 region k)."""
    if isinstance(regions, Regions):
        return regions.labels
    return Regions.from_masks(regions, shape, "regions").labels


def _check_args(n: object, radius: object, rng: object) -> tuple[int, float]:
    if isinstance(n, bool) or not isinstance(n, Integral) or int(n) < 0:
        raise MapError(f"number of robots must be a non-negative integer, got {n!r}")
    if (
        isinstance(radius, bool)
        or not isinstance(radius, Real)
        or not (math.isfinite(float(radius)) and float(radius) > 0)
    ):
        raise MapError(f"robot radius must be a finite number > 0, got {radius!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return int(n), float(radius)


def _target_point(together_at: object, shape: tuple[int, int]) -> np.ndarray:
    h, w = shape
    centre = np.array([w / 2.0, h / 2.0])
    if together_at is None:
        return centre
    xy = np.asarray(together_at, dtype=np.float64)
    if xy.shape != (2,) or not np.all(np.isfinite(xy)):
        raise MapError(f"together_at must be a finite (x, y) in world tiles, got {together_at!r}")
    return xy + centre


def _all_open_around(open_: np.ndarray, k: int) -> np.ndarray:
    """bool (H, W): tiles whose (2k + 1) x (2k + 1) block of tiles is all in ``open_`` (outside
    the map counts as closed)."""
    if k <= 0:
        return open_.copy()
    h, w = open_.shape
    # rows first, then columns: a run of 2k + 1 open tiles each way
    pad = np.pad(open_, k, constant_values=False)
    rows = np.ones((h + 2 * k, w), dtype=bool)
    for dx in range(2 * k + 1):
        rows &= pad[:, dx : dx + w]
    out = np.ones((h, w), dtype=bool)
    for dy in range(2 * k + 1):
        out &= rows[dy : dy + h, :]
    return out


def _nearest_tile(
    tiles: np.ndarray, taken: np.ndarray, queued: np.ndarray, tile: tuple[int, int]
) -> tuple[int, int] | None:
    """The tile of ``tiles`` neither ``taken`` nor ``queued`` nearest ``tile`` by Manhattan
    distance (ties: lowest x, then y), searched in a window that doubles until it holds one
    (a large map is not read whole at each new start); None when there is none."""
    h, w = tiles.shape
    tx, ty = tile
    reach = 16
    while True:
        x0, x1 = max(0, tx - reach), min(w, tx + reach + 1)
        y0, y1 = max(0, ty - reach), min(h, ty + reach + 1)
        window = np.s_[y0:y1, x0:x1]
        ys, xs = np.nonzero(tiles[window] & ~taken[window] & ~queued[window])
        whole = x0 == 0 and y0 == 0 and x1 == w and y1 == h
        if xs.size:
            xs, ys = xs + x0, ys + y0
            d = np.abs(xs - tx) + np.abs(ys - ty)
            inside = d <= reach  # nearer than anything outside the window
            if inside.any() or whole:
                keep = inside if inside.any() else np.ones_like(inside)
                i = np.lexsort((ys[keep], xs[keep], d[keep]))[0]
                return int(xs[keep][i]), int(ys[keep][i])
        elif whole:
            return None
        reach *= 2


def _spacing(radius: float) -> tuple[int, int]:
    """(stride, need): robots of ``radius`` take every ``stride``-th tile and need ``need``
    rings of open tiles round their own (0: their tile alone)."""
    stride = max(1, math.ceil(2.0 * radius + SPAWN_MARGIN - 1e-9))
    need = max(0, math.ceil(radius + SPAWN_MARGIN - 0.5 - 1e-9))
    return stride, need


def _block(taken: np.ndarray, x: int, y: int, stride: int) -> None:
    """Mark the tiles a robot on (x, y) keeps others off (every ``stride``-th tile stays free)."""
    taken[max(0, y - stride + 1) : y + stride, max(0, x - stride + 1) : x + stride] = True


def _flood_together(region: np.ndarray, target: np.ndarray, n: int, radius: float) -> np.ndarray:
    """MAES 2.0's ``SpawnRobotsTogether`` (the module docstring): float (m, 2), the tile
    centres of the first ``m = min(n, capacity)`` robots."""
    h, w = region.shape
    stride, need = _spacing(radius)
    clear = _all_open_around(region, need)
    roomy = _all_open_around(region, max(1, need))
    taken = np.zeros((h, w), dtype=bool)  # tiles a new robot may not stand on
    queued = np.zeros((h, w), dtype=bool)
    start = (
        min(max(int(math.floor(target[0])), 0), w - 1),
        min(max(int(math.floor(target[1])), 0), h - 1),
    )
    out: list[tuple[float, float]] = []
    for tiles in (roomy, clear):  # tiles next to walls only when no other is left
        queue: list[tuple[int, int]] = []
        head = 0
        while len(out) < n:
            if head == len(queue):
                first = _nearest_tile(tiles, taken, queued, start)
                if first is None:
                    break
                queue.append(first)
                queued[first[1], first[0]] = True
            x, y = queue[head]
            head += 1
            if taken[y, x]:
                continue
            out.append((x + 0.5, y + 0.5))
            _block(taken, x, y, stride)
            for nx, ny in ((x - stride, y), (x, y - stride), (x, y + stride), (x + stride, y)):
                inside = 0 <= nx < w and 0 <= ny < h
                if inside and tiles[ny, nx] and not taken[ny, nx] and not queued[ny, nx]:
                    queued[ny, nx] = True
                    queue.append((nx, ny))
        queued[:] = False
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def _peel(region: np.ndarray, layers: int) -> np.ndarray:
    """bool (H, W): ``region`` less ``layers`` layers of edge tiles, an edge tile being one with
    a 4-neighbour outside what is left (MAES 2.0's ``Room.edgeTiles``, then ``FindEdgeTiles``)."""
    out = region.copy()
    for _ in range(layers):
        pad = np.pad(out, 1, constant_values=False)
        out &= pad[:-2, 1:-1] & pad[2:, 1:-1] & pad[1:-1, :-2] & pad[1:-1, 2:]
    return out


def _take(
    xs: np.ndarray, ys: np.ndarray, n: int, stride: int, taken: np.ndarray, out: list
) -> None:
    """Append to ``out`` the centres of tiles (xs, ys), in order, until it holds ``n``; with
    ``stride`` > 1 a tile near one already taken is skipped."""
    if stride == 1:  # tiles are distinct: take them as they come
        k = min(n - len(out), xs.size)
        out.extend(zip((xs[:k] + 0.5).tolist(), (ys[:k] + 0.5).tolist(), strict=True))
        return
    for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
        if len(out) == n:
            return
        if not taken[y, x]:
            out.append((x + 0.5, y + 0.5))
            _block(taken, x, y, stride)


def _by_x_then_y(tiles: np.ndarray, n: int, stride: int) -> list:
    """Centres of up to ``n`` of ``tiles`` taken in order of x, then y (MAES 2.0's
    ``SpawnRobotsInBiggestRoom``), reading the map a few columns at a time."""
    taken = np.zeros(tiles.shape, dtype=bool)
    out: list[tuple[float, float]] = []
    for x0 in range(0, tiles.shape[1], _COLUMNS):
        if len(out) == n:
            break
        xs, ys = np.nonzero(tiles[:, x0 : x0 + _COLUMNS].T)  # column by column, y upward
        _take(xs + x0, ys, n, stride, taken, out)
    return out


def _by_border_distance(tiles: np.ndarray, n: int, stride: int) -> list:
    """Centres of up to ``n`` of ``tiles``, nearest the map's border first (MAES 2.0's
    ``SpawnAtHallWayEnds``; ties: lowest x, then y), read ring by ring from the border in."""
    h, w = tiles.shape
    taken = np.zeros(tiles.shape, dtype=bool)
    out: list[tuple[float, float]] = []
    for d in range((min(h, w) + 1) // 2):
        if len(out) == n:
            break
        x0, x1, y0, y1 = d, w - 1 - d, d, h - 1 - d
        side = np.arange(y0, y1 + 1)
        across = np.arange(x0 + 1, x1)
        xs = np.concatenate([np.full(side.size, x0), np.full(side.size, x1), across, across])
        ys = np.concatenate([side, side, np.full(across.size, y0), np.full(across.size, y1)])
        xs, ys = np.unique(np.stack([xs, ys]), axis=1)  # sorted by x, then y; a thin ring once
        keep = tiles[ys, xs]
        _take(xs[keep], ys[keep], n, stride, taken, out)
    return out


def _biggest_room(world: WorldMap, reachable: np.ndarray) -> np.ndarray | None:
    """bool (H, W): the reachable tiles of the room or hallway MAES 2.0 calls the biggest (most
    tiles less its perimeter in tile sides, ``RoomSizeExcludingEdgeTiles``); ties: hallways
    first, then the order listed. None when the map has no rooms or hallways."""
    halls = _labels(world.hallways, world.shape)
    n_halls = len(world.hallways)
    count = n_halls + len(world.rooms) + 1
    # one label array: hallways 1..n_halls (MAES lists them first), then the rooms
    labels = _labels(world.rooms, world.shape).astype(np.int64 if count >= 2**31 else np.int32)
    labels[labels > 0] += n_halls
    is_hall = halls > 0
    labels[is_hall] = halls[is_hall]
    labels[~reachable] = 0
    area = np.bincount(labels.ravel(), minlength=count)
    # sides facing another region, no region or the map's edge (MAES: a wall)
    sides = np.zeros(count, dtype=np.int64)
    for a, b in ((labels[:, 1:], labels[:, :-1]), (labels[1:, :], labels[:-1, :])):
        differ = a != b
        sides += np.bincount(a[differ], minlength=count) + np.bincount(b[differ], minlength=count)
    for edge in (labels[0, :], labels[-1, :], labels[:, 0], labels[:, -1]):
        sides += np.bincount(edge, minlength=count)
    key = (area - sides)[1:]
    present = area[1:] > 0
    if not present.any():
        return None
    best = int(np.argmax(np.where(present, key, np.iinfo(np.int64).min)))
    return labels == best + 1


def _too_few(world: WorldMap, placed: int, radius: float, what: str, n: int) -> MapError:
    return MapError(
        f"map {world.name!r} has room for {placed} robots of radius {radius:g} "
        f"in the {what} (one a tile), {n} requested"
    )


def spawn_positions(
    world: WorldMap,
    n: int,
    radius: float,
    rng: np.random.Generator,
    *,
    biggest_room: bool = False,
    together_at: tuple[float, float] | None = None,
    at_hallway_ends: bool = False,
) -> np.ndarray:
    """Grid coordinates of ``n`` robot centres that overlap no wall and no other robot.

    The modes follow MAES 2.0's ``RobotSpawner`` (the module docstring says how, and where it
    departs from it).

    Parameters
    ----------
    world : WorldMap
        The map.
    n : int
        Number of robots.
    radius : float
        Robot disc radius in tiles (``agent_relative_size / 2``).
    rng : np.random.Generator
        The simulation's generator; no mode draws from it (every tie has a fixed rule).
    biggest_room : bool
        Spawn in the biggest room or hallway (MAES ``biggest_room``): its tiles two away from
        its edge, in order of x, then y.
    together_at : (float, float) or None
        Spawn together around this point in world tiles (origin at the map centre; MAES
        ``spawn_together`` with a suggested starting point). With no mode at all the robots
        spawn together around the map centre.
    at_hallway_ends : bool
        Spawn in the hallways, nearest the map's outer edge first (MAES
        ``spawn_at_hallway_ends``; building maps only).

    Returns
    -------
    np.ndarray
        float64 (n, 2) grid coordinates ``(gx, gy)``; robot 0 is at the best spot.

    Raises
    ------
    MapError
        More than one mode, no hallways for ``at_hallway_ends``, bad arguments, or no room for
        ``n`` robots in the chosen region (the message says how many fit).

    Examples
    --------
    >>> walls = np.ones((8, 10), dtype=bool)
    >>> walls[1:7, 1:9] = False  # open tiles x 1..8, y 1..6
    >>> spawn_positions(WorldMap(walls=walls), 2, 0.3, np.random.default_rng(0)).shape
    (2, 2)
    >>> spawn_positions(WorldMap(walls=walls), 3, 0.3, np.random.default_rng(0), biggest_room=True)
    array([[3.5, 3.5],
           [3.5, 4.5],
           [4.5, 3.5]])
    """
    n, radius = _check_args(n, radius, rng)
    modes = [
        name
        for name, on in (
            ("biggest_room", biggest_room),
            ("together_at", together_at is not None),
            ("at_hallway_ends", at_hallway_ends),
        )
        if on
    ]
    if len(modes) > 1:
        raise MapError(f"choose one spawn mode, got {' and '.join(modes)}")
    reachable = largest_open_region(world.walls)
    if not reachable.any():
        raise MapError(f"map {world.name!r} has no open tile to spawn robots on")

    if not (at_hallway_ends or biggest_room):
        target = _target_point(together_at, world.shape)
        pts = np.asarray(_flood_together(reachable, target, n, radius))
        if pts.shape[0] < n:
            raise _too_few(world, pts.shape[0], radius, "largest open region", n)
        return np.ascontiguousarray(pts, dtype=np.float64)

    stride, need = _spacing(radius)
    clear = _all_open_around(reachable, need)  # tiles the robot's disc clears walls on
    if at_hallway_ends:
        region = (_labels(world.hallways, world.shape) > 0) & reachable
        if not region.any():
            raise MapError(
                f"at_hallway_ends needs a map with hallways (a building); map {world.name!r} "
                "has none"
            )
        what, layers, order = "hallways", (1, 0), _by_border_distance
    else:
        room = _biggest_room(world, reachable)
        region, what = (
            (reachable, "largest open region") if room is None else (room, "biggest room")
        )
        layers, order = (2, 1, 0), _by_x_then_y
    placed = 0
    for peel in layers:  # MAES's edge layers off, fewer only when the team needs more tiles
        pts = order(_peel(region, peel) & clear, n, stride)
        if len(pts) == n:
            return np.asarray(pts, dtype=np.float64).reshape(n, 2)
        placed = max(placed, len(pts))
    raise _too_few(world, placed, radius, what, n)
