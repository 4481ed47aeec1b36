"""Robot spawn positions (MAES 2.0's spawn modes) for disc-shaped robots.

``spawn_together`` (and no mode at all) follows MAES 2.0's ``SpawnRobotsTogether``: one robot
per tile, at the tile's centre, on tiles with an open tile on every side (MAES: "we cannot spawn
adjacent to a wall"), filled by a flood (breadth first, neighbours in the order left, down, up,
right) from the such tile nearest the target point (Manhattan distance; ties: lowest x, then y);
when the flood has filled its part of the map (a room), it starts again from the nearest tile
not yet taken. Robots wider than 0.95 of a tile (with :data:`SPAWN_MARGIN`) take every second
tile (every third above 1.95, and so on), with as many open tiles around theirs as their
clearance needs. Where the map has too few such tiles for the team (MAES 2.0 gives up), the
flood goes on over tiles next to walls that the robot's disc still clears. Only the largest open
region is used.

``biggest_room`` and ``spawn_at_hallway_ends`` place robots on a square lattice with spacing
``2 * radius + SPAWN_MARGIN`` (denser than MAES 2.0's one robot per tile), so robots never
overlap; a candidate is kept when its tile is in the chosen region and its disc, grown by
``SPAWN_MARGIN``, touches no wall tile. Candidates are then ordered per mode and the first ``n``
taken:

- ``biggest_room``: the largest of ``world.rooms``, outward from its centroid (MAES spawns in the
  biggest room; for caves these are the cave regions, for imported maps the largest open region);
  by straight-line distance where nothing is in the way, by steps along open tiles where a wall
  is;
- ``at_hallway_ends``: hallway tiles closest to the map's outer edge first (MAES's rule).

Remaining ties are broken with ``rng``, so the result is deterministic for a given seed.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from .connectivity import largest_open_region, path_steps
from .worldmap import MapError, Regions, WorldMap

#: Clearance (tiles) kept between a spawned robot and walls, and added to the robot spacing.
SPAWN_MARGIN = 0.05

_CHUNK = 65536
#: Lattice points (over the region's bounding box) above which candidates for an outward spawn
#: come from a window around the target that doubles until it holds enough robots, instead of
#: the whole region: memory and time then follow the robots, not the map (a 5000 x 5000 map has
#: ~60 M lattice points, ~6 GB of candidate arrays). Smaller regions keep the whole-region
#: order, so their spawns (and every draw from the rng after them) are as before.
WINDOW_POINTS = 1 << 21


def _box(region: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) corners (x, y) of the tiles of ``region``, without listing every tile."""
    cols = np.flatnonzero(region.any(axis=0))
    rows = np.flatnonzero(region.any(axis=1))
    lo = np.array([cols[0], rows[0]], dtype=np.float64)
    return lo, np.array([cols[-1] + 1.0, rows[-1] + 1.0])


def _lattice(
    anchor: np.ndarray,
    spacing: float,
    region: np.ndarray,
    box: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """(M, 2) lattice points anchor + spacing * (i, j) whose tile lies in ``region``.

    ``box`` (lo, hi corners) limits the points to a window; default the region's tiles.
    """
    if box is None:
        ys, xs = np.nonzero(region)
        lo = np.array([xs.min(), ys.min()], dtype=np.float64)
        hi = np.array([xs.max() + 1.0, ys.max() + 1.0])
    else:
        lo, hi = box
    i0 = np.ceil((lo - anchor) / spacing).astype(np.int64)
    i1 = np.floor((hi - anchor) / spacing).astype(np.int64)
    gx = anchor[0] + spacing * np.arange(i0[0], i1[0] + 1)
    gy = anchor[1] + spacing * np.arange(i0[1], i1[1] + 1)
    px, py = np.meshgrid(gx, gy)
    pts = np.stack([px.ravel(), py.ravel()], axis=1)
    tiles = np.floor(pts).astype(np.int64)
    h, w = region.shape
    ok = (tiles[:, 0] >= 0) & (tiles[:, 0] < w) & (tiles[:, 1] >= 0) & (tiles[:, 1] < h)
    pts, tiles = pts[ok], tiles[ok]
    return pts[region[tiles[:, 1], tiles[:, 0]]]


def _clear_of_walls(walls: np.ndarray, pts: np.ndarray, clearance: float) -> np.ndarray:
    """bool (M,): discs of radius ``clearance`` at ``pts`` (M, 2) overlap no wall tile."""
    h, w = walls.shape
    # A tile m columns away from a point's tile is at least m - 1 away: m <= ceil(clearance).
    k = max(1, math.ceil(clearance))
    r = np.arange(-k, k + 1)
    ox, oy = (a.ravel() for a in np.meshgrid(r, r))
    base = np.floor(pts).astype(np.int64)
    tx = base[:, 0:1] + ox[None, :]
    ty = base[:, 1:2] + oy[None, :]
    outside = (tx < 0) | (tx >= w) | (ty < 0) | (ty >= h)
    wall = outside | walls[np.clip(ty, 0, h - 1), np.clip(tx, 0, w - 1)]
    # Distance from each point to each tile square [tx, tx+1] x [ty, ty+1].
    dx = np.maximum(np.maximum(tx - pts[:, 0:1], pts[:, 0:1] - (tx + 1)), 0.0)
    dy = np.maximum(np.maximum(ty - pts[:, 1:2], pts[:, 1:2] - (ty + 1)), 0.0)
    too_close = wall & (dx * dx + dy * dy < clearance * clearance)
    return ~too_close.any(axis=1)


def _first_clear(walls: np.ndarray, pts: np.ndarray, n: int, clearance: float) -> np.ndarray:
    """Indices of the first ``n`` points (in order) that are clear of walls (fewer if absent)."""
    found: list[np.ndarray] = []
    count = start = 0
    size = 4 * n + 256  # most candidates near the target are clear: start small, then grow
    while start < pts.shape[0] and count < n:
        ok = np.flatnonzero(_clear_of_walls(walls, pts[start : start + size], clearance))
        found.append(ok + start)
        count += ok.size
        start += size
        size = min(2 * size, _CHUNK)
    idx = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    return idx[:n]


def _count_clear(walls: np.ndarray, pts: np.ndarray, clearance: float) -> int:
    return sum(
        int(_clear_of_walls(walls, pts[s : s + _CHUNK], clearance).sum())
        for s in range(0, pts.shape[0], _CHUNK)
    )


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


def _start_tile(region: np.ndarray, point: np.ndarray) -> np.ndarray:
    """(ix, iy) of the region tile holding ``point``, else of the region tile nearest to it."""
    h, w = region.shape
    ix, iy = int(math.floor(point[0])), int(math.floor(point[1]))
    if 0 <= ix < w and 0 <= iy < h and region[iy, ix]:
        return np.array([ix, iy], dtype=np.int64)
    ys, xs = np.nonzero(region)
    d2 = (xs + 0.5 - point[0]) ** 2 + (ys + 0.5 - point[1]) ** 2
    i = int(np.argmin(d2))
    return np.array([xs[i], ys[i]], dtype=np.int64)


def _outward_windowed(
    walls: np.ndarray,
    region: np.ndarray,
    target: np.ndarray,
    spacing: float,
    n: int,
    clearance: float,
    rng: np.random.Generator,
) -> np.ndarray | None:
    """The first ``n`` clear points in outward order, searched in a growing window.

    A point's key (its straight-line distance, or its BFS steps behind a wall, which are never
    shorter) is at least its distance from the target, so the points with key <= R all lie
    within R of it: ranking the window's points with key <= R ranks them as the whole region
    would (ties broken by the window's own draws). Returns None when even the whole region
    holds fewer than ``n`` (the caller then reports how many fit).
    """
    lo_all, hi_all = _box(region)
    start = _start_tile(region, target)
    steps = path_steps(region, start)
    radius = spacing * (2.0 * math.sqrt(n) + 4.0)
    while True:
        lo = np.maximum(lo_all, np.floor(target - radius))
        hi = np.minimum(hi_all, np.ceil(target + radius))
        pts = _lattice(target, spacing, region, (lo, hi))
        whole = bool(np.all(lo <= lo_all) and np.all(hi >= hi_all))
        tiebreak = rng.random(pts.shape[0])
        order = _outward_order(region, pts, target, tiebreak, steps=steps, start=start)
        near = np.hypot(pts[order, 0] - target[0], pts[order, 1] - target[1])
        key = _keys(pts[order], target, steps, start)
        if not whole:
            order = order[(key <= radius) & (near <= radius)]
        chosen = _first_clear(walls, pts[order], n, clearance)
        if chosen.size == n:
            return pts[order][chosen]
        if whole:
            return None
        radius *= 2.0


def _keys(pts: np.ndarray, target: np.ndarray, steps: np.ndarray, start: np.ndarray):
    tiles = np.floor(pts).astype(np.int64)
    pt_steps = steps[tiles[:, 1], tiles[:, 0]]
    manhattan = np.abs(tiles - start).sum(axis=1)
    near = np.hypot(pts[:, 0] - target[0], pts[:, 1] - target[1])
    return np.where(pt_steps == manhattan, near, pt_steps.astype(np.float64))


def _outward_order(
    region: np.ndarray,
    pts: np.ndarray,
    target: np.ndarray,
    tiebreak: np.ndarray,
    steps: np.ndarray | None = None,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of ``pts`` inside ``region`` ordered by distance from ``target`` along open tiles.

    A point whose tile is reached by a monotone staircase of tiles (BFS steps == Manhattan
    distance) is ranked by straight-line distance, which keeps groups round in the open; one
    behind a wall is ranked by its BFS steps (longer than any straight line to it), so robots
    fill the target's side of a wall first.
    """
    if steps is None:
        start = _start_tile(region, target)
        steps = path_steps(region, start)
    tiles = np.floor(pts).astype(np.int64)
    pt_steps = steps[tiles[:, 1], tiles[:, 0]]
    manhattan = np.abs(tiles - start).sum(axis=1)
    near = np.hypot(pts[:, 0] - target[0], pts[:, 1] - target[1])
    key = np.where(pt_steps == manhattan, near, pt_steps.astype(np.float64))
    keep = np.flatnonzero(pt_steps >= 0)
    return keep[np.lexsort((tiebreak[keep], near[keep], key[keep]))]


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


def _flood_together(region: np.ndarray, target: np.ndarray, n: int, radius: float) -> np.ndarray:
    """MAES 2.0's ``SpawnRobotsTogether`` (the module docstring): float (m, 2), the tile
    centres of the first ``m = min(n, capacity)`` robots."""
    h, w = region.shape
    stride = max(1, math.ceil(2.0 * radius + SPAWN_MARGIN - 1e-9))
    need = max(0, math.ceil(radius + SPAWN_MARGIN - 0.5 - 1e-9))  # open tiles round a robot's
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
            taken[max(0, y - stride + 1) : y + stride, max(0, x - stride + 1) : x + stride] = True
            for nx, ny in ((x - stride, y), (x, y - stride), (x, y + stride), (x + stride, y)):
                inside = 0 <= nx < w and 0 <= ny < h
                if inside and tiles[ny, nx] and not taken[ny, nx] and not queued[ny, nx]:
                    queued[ny, nx] = True
                    queue.append((nx, ny))
        queued[:] = False
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


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

    Parameters
    ----------
    world : WorldMap
        The map.
    n : int
        Number of robots.
    radius : float
        Robot disc radius in tiles (``agent_relative_size / 2``).
    rng : np.random.Generator
        Breaks ties between equally good spots; same seed, same positions.
    biggest_room : bool
        Spawn in the largest of ``world.rooms`` (MAES ``biggest_room``).
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
    >>> walls = np.ones((6, 8), dtype=bool)
    >>> walls[1:5, 1:7] = False
    >>> spawn_positions(WorldMap(walls=walls), 2, 0.3, np.random.default_rng(0)).shape
    (2, 2)
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
    walls = world.walls
    reachable = largest_open_region(walls)
    if not reachable.any():
        raise MapError(f"map {world.name!r} has no open tile to spawn robots on")

    region, what = reachable, "largest open region"
    target = _target_point(together_at, world.shape)
    if at_hallway_ends:
        region = _labels(world.hallways, world.shape) > 0
        region &= reachable
        what = "hallways"
        if not region.any():
            raise MapError(
                f"at_hallway_ends needs a map with hallways (a building); map {world.name!r} "
                "has none"
            )
    elif biggest_room:
        labels = _labels(world.rooms, world.shape)
        # Reachable tiles of each room; the first of the largest wins ties (argmax).
        sizes = np.bincount(labels[reachable], minlength=len(world.rooms) + 1)[1:]
        if sizes.size and sizes.max() > 0:
            region = (labels == int(np.argmax(sizes)) + 1) & reachable
            what = "biggest room"
            ys, xs = np.nonzero(region)
            target = np.array([xs.mean() + 0.5, ys.mean() + 0.5])

    if not (at_hallway_ends or biggest_room):
        pts = _flood_together(region, target, n, radius)
        if pts.shape[0] < n:
            raise MapError(
                f"map {world.name!r} has room for {pts.shape[0]} robots of radius {radius:g} "
                f"in the {what} (one a tile), {n} requested"
            )
        return np.ascontiguousarray(pts, dtype=np.float64)
    spacing = 2.0 * radius + SPAWN_MARGIN
    h, w = world.shape
    if not at_hallway_ends:
        lo, hi = _box(region)
        if np.prod((hi - lo) / spacing + 1.0) > WINDOW_POINTS:
            found = _outward_windowed(walls, region, target, spacing, n, radius + SPAWN_MARGIN, rng)
            if found is not None:
                return np.ascontiguousarray(found, dtype=np.float64).reshape(n, 2)
    anchor = np.array([w / 2.0, h / 2.0]) if at_hallway_ends else target
    pts = _lattice(anchor, spacing, region)
    tiebreak = rng.random(pts.shape[0])
    if at_hallway_ends:
        edge = np.minimum(
            np.minimum(pts[:, 0], w - pts[:, 0]), np.minimum(pts[:, 1], h - pts[:, 1])
        )
        order = np.lexsort((tiebreak, edge))
    else:
        order = _outward_order(region, pts, target, tiebreak)
    pts = pts[order]
    chosen = _first_clear(walls, pts, n, radius + SPAWN_MARGIN)
    if chosen.size < n:
        room = _count_clear(walls, pts, radius + SPAWN_MARGIN)
        raise MapError(
            f"map {world.name!r} has room for {room} robots of radius {radius:g} in the {what}, "
            f"{n} requested"
        )
    return np.ascontiguousarray(pts[chosen], dtype=np.float64).reshape(n, 2)
