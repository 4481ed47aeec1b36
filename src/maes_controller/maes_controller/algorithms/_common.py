"""What the shipped algorithms share: one look at the robot's costmap per decision.

:class:`MapView` bundles the robot's costmap grid, where it may drive, the frontier cells and the
path length from the robot to every cell (one Dijkstra pass, computed on first use). The
algorithms build one per decision, not per tick, and use the project's frontier and planning code
(:mod:`maes_controller.frontier`, :mod:`maes_controller.navigation`) through it.

What robots hear from others is kept here too: :func:`remember_point` is the one store of the
last N distinct points heard and their cells (the trail points of :func:`hear_trail`, the
frontier explorer's goals announced by others).
"""

from __future__ import annotations

import base64
import functools
import math
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from maes_common.contract import MAX_MESSAGE_BYTES

from ..frontier import frontier_mask, near_points
from ..navigation import (
    INSCRIBED,
    LETHAL,
    Cell,
    GridMap,
    distance_field,
    nearest_traversable,
    traversable_mask,
)

#: Broadcasts of a robot's way start with this word, then "x y": where it was.
TRAIL_PREFIX = "frontier-trail"
#: A robot announces where it is every time it has moved this many metres since it last did.
TRAIL_STEP_M = 3.0
#: The most trail points of others that a robot remembers (the oldest are forgotten).
TRAIL_LIMIT = 2000
#: A robot with this many robots within CROWD_RADIUS_M metres is in a crowd ...
CROWD_COUNT = 3
CROWD_RADIUS_M = 1.5
#: ... and, when every frontier is taken, first makes room: it drives to the place within this
#: many metres of path that is farthest from the robots it senses (:func:`spread_cell`).
SPREAD_RADIUS_M = 6.0


class MapView:
    """The robot's costmap at one moment, with the derived grids the algorithms need.

    Parameters
    ----------
    grid : GridMap
        The costmap (``robot.global_costmap.grid``).
    position : (x, y)
        The robot's position, metres, map frame.
    avoid : sequence of (x, y), optional
        Where other robots stand (metres): path lengths are taken around their cells when
        that still reaches a frontier; when it reaches none but a path through them would,
        :attr:`hemmed` is True (a robot inside a packed crowd) and the lengths go through.

    Examples
    --------
    >>> from maes_controller.navigation import GridMap
    >>> g = GridMap.from_array(np.array([[0, 0, -1], [0, 0, 0]], dtype=np.int8), 1.0)
    >>> view = MapView(g, (0.5, 0.5))
    >>> view.robot_cell, view.frontier.sum(), view.dist[0, 1]
    ((0, 0), np.int64(2), np.float64(1.0))
    """

    def __init__(
        self, grid: Any, position: Sequence[float], avoid: Sequence[Sequence[float]] = ()
    ) -> None:
        self.grid = grid
        self.array = grid.array
        self.resolution = float(grid.resolution)
        self.traversable = traversable_mask(self.array)
        self.position = (float(position[0]), float(position[1]))
        cell = grid.pos_to_cell(*self.position)
        self.robot_cell: Cell | None = nearest_traversable(self.traversable, cell)
        h, w = self.array.shape
        cells = {grid.pos_to_cell(float(x), float(y)) for x, y in avoid}
        self._avoid = sorted(
            (ix, iy) for ix, iy in cells if 0 <= ix < w and 0 <= iy < h and (ix, iy) != cell
        )
        self._hemmed = False
        self._area_labels: dict[float, np.ndarray] = {}  # area_labels' results, by side

    @classmethod
    def of(cls, robot: Any, around_robots: bool = False) -> MapView | None:
        """The view of ``robot``'s latest costmap and pose, or None while either is missing;
        ``around_robots``: path lengths around the robots it senses (``avoid``)."""
        costmap = robot.global_costmap
        if costmap.costmap is None or robot.robot_position is None:
            return None
        nearby = robot.state.nearby_robots if around_robots else ()
        return cls(costmap.grid, robot.robot_position, [(r.pos.x, r.pos.y) for r in nearby])

    @cached_property
    def frontier(self) -> np.ndarray:
        """Bool (H, W): the frontier cells (:func:`~maes_controller.frontier.frontier_mask`)."""
        return frontier_mask(self.array)

    @cached_property
    def dist(self) -> np.ndarray:
        """Float (H, W): path length in cells from the robot to every cell (inf: unreachable),
        around the ``avoid`` cells while that reaches a frontier (see :attr:`hemmed`)."""
        if self.robot_cell is None:
            return np.full(self.array.shape, np.inf)
        if self._avoid:
            around = self.traversable.copy()
            xs, ys = zip(*self._avoid, strict=True)
            around[list(ys), list(xs)] = False
            around[self.robot_cell[1], self.robot_cell[0]] = True
            dist = distance_field(around, self.robot_cell)
            if (self.frontier & np.isfinite(dist)).any():
                return dist
        dist = distance_field(self.traversable, self.robot_cell)
        self._hemmed = bool(self._avoid) and bool((self.frontier & np.isfinite(dist)).any())
        return dist

    @property
    def hemmed(self) -> bool:
        """No frontier can be reached but through the robots in ``avoid``."""
        self.dist  # noqa: B018 (computed with the distances)
        return self._hemmed

    @property
    def goes_around(self) -> bool:
        """:attr:`dist` goes around the robots in ``avoid`` (some are, and a frontier is
        still reachable around them)."""
        return bool(self._avoid) and not self.hemmed

    @cached_property
    def reachable_frontier(self) -> np.ndarray:
        """Bool (H, W): frontier cells the robot can reach (traversable ones only)."""
        return self.frontier & np.isfinite(self.dist)

    def cell_of(self, x: float, y: float) -> Cell:
        """Grid cell of a world point (may lie outside the grid)."""
        return self.grid.pos_to_cell(x, y)

    def pos_of(self, cell: Sequence[int]) -> tuple[float, float]:
        """World position (metres) of a cell's centre."""
        return self.grid.cell_to_pos(int(cell[0]), int(cell[1]))

    def nearest_in(self, mask: np.ndarray) -> Cell | None:
        """The reachable frontier cell inside ``mask`` nearest by path (ties: lowest iy, ix)."""
        sel = self.reachable_frontier & mask
        if not sel.any():
            return None
        d = np.where(sel, self.dist, np.inf)
        iy, ix = np.unravel_index(int(np.argmin(d)), d.shape)  # raster order breaks ties
        return int(ix), int(iy)


#: :func:`area_labels`: ids per row of areas (an area's id is ``row * AREA_ROW + column``,
#: rows and columns counted from -1000).
AREA_ROW = 2000


def area_labels(view: MapView, side_m: float) -> np.ndarray:
    """Int (H, W), read-only: the index of the square area (``side_m`` metres) each cell lies
    in (computed once per view and side: the tasks and the finished areas both need it).

    Areas tile the world from the world origin, so every robot numbers them alike whatever its
    grid's size: index ``(ay + 1000) * AREA_ROW + (ax + 1000)`` of area column ``ax``, row ``ay``.

    Examples
    --------
    >>> from maes_controller.navigation import GridMap
    >>> g = GridMap.from_array(np.zeros((2, 4), dtype=np.int8), 1.0, origin_x=-2.0)
    >>> labels = area_labels(MapView(g, (0.5, 0.5)), 2.0)
    >>> [area_center(int(a), 2.0) for a in np.unique(labels)]
    [(-1.0, 1.0), (1.0, 1.0)]
    """
    known = view._area_labels.get(side_m)  # once per view and side (read-only, shared)
    if known is not None:
        return known
    h, w = view.array.shape
    xs = view.grid.origin_x + (np.arange(w) + 0.5) * view.resolution
    ys = view.grid.origin_y + (np.arange(h) + 0.5) * view.resolution
    ax = np.floor(xs / side_m).astype(np.int64) + 1000
    ay = np.floor(ys / side_m).astype(np.int64) + 1000
    labels = ay[:, None] * AREA_ROW + ax[None, :]
    labels.flags.writeable = False
    view._area_labels[side_m] = labels
    return labels


def area_center(area: int, side_m: float) -> tuple[float, float]:
    """World centre (metres) of area ``area`` of :func:`area_labels`."""
    ay, ax = divmod(int(area), AREA_ROW)
    return ((ax - 1000 + 0.5) * side_m, (ay - 1000 + 0.5) * side_m)


def cells_of(grid: Any, points: Iterable[Sequence[float]]) -> list[Cell]:
    """The cells ``(ix, iy)`` of many world points (metres), in order: ``grid.pos_to_cell`` of
    each, computed on arrays in one pass (the same cells, to the bit).

    Examples
    --------
    >>> from maes_controller.navigation import GridMap
    >>> cells_of(GridMap(4, 4, 0.5, -1.0, -1.0), [(-0.01, 0.0), (0.3, -0.9)])
    [(1, 2), (2, 0)]
    >>> cells_of(GridMap(4, 4, 0.5, -1.0, -1.0), {})
    []
    """
    xy = np.array(list(points), dtype=np.float64).reshape(-1, 2)
    return list(map(tuple, grid.pos_to_cells(xy).tolist()))


def nearby_positions(robot: Any) -> np.ndarray:
    """float64 (K, 2): where the robots ``robot`` senses stand (metres), in the order of
    ``robot.state.nearby_robots``. Read from the robot's arrays when it has them (direct mode
    and ``make run``'s controllers: ``robot.nearby_positions``), else from the state's objects;
    the same values either way.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> state = NS(nearby_robots=[NS(pos=NS(x=1.0, y=-2.0))])
    >>> nearby_positions(NS(state=state)).tolist()
    [[1.0, -2.0]]
    """
    xy = getattr(robot, "nearby_positions", None)
    if xy is not None:
        return xy
    points = [(r.pos.x, r.pos.y) for r in robot.state.nearby_robots]
    return np.array(points, dtype=np.float64).reshape(-1, 2)


def robot_index(namespace: str) -> int | None:
    """The index ``i`` of ``"robot<i>"``, None for another name.

    Examples
    --------
    >>> robot_index("robot12"), robot_index("base")
    (12, None)
    """
    if namespace.startswith("robot") and namespace[5:].isdigit():
        return int(namespace[5:])
    return None


def robot_rng(robot: Any) -> np.random.Generator:
    """The robot's random generator: direct mode's ``robot.rng``, else one seeded by its id.

    Kept in ``robot.memory`` so every call gets the same stream.
    """
    rng = robot.memory.get("_rng")
    if rng is None:
        rng = getattr(robot, "rng", None) or np.random.default_rng(robot.robot_id)
        robot.memory["_rng"] = rng
    return rng


def distance_m(a: Sequence[float], b: Sequence[float]) -> float:
    """Euclidean distance of two world points."""
    return math.hypot(a[0] - b[0], a[1] - b[1])


def spread_cell(view: MapView, robots: Sequence[Sequence[float]], radius_m: float) -> Cell | None:
    """The cell within ``radius_m`` of path from the robot that lies farthest from every robot
    in ``robots`` (``(x, y)``, metres): where a robot with nothing of its own to do makes room
    in a crowd. Ties: the shorter path, then raster order. None when no cell is reachable.

    Examples
    --------
    >>> from maes_controller.navigation import GridMap
    >>> g = GridMap.from_array(np.zeros((1, 6), dtype=np.int8), 1.0)
    >>> spread_cell(MapView(g, (1.5, 0.5)), [(0.5, 0.5)], 3.0)
    (4, 0)
    """
    sel = np.isfinite(view.dist) & (view.dist * view.resolution <= radius_m) & view.traversable
    iy, ix = np.nonzero(sel)
    if ix.size == 0:
        return None
    px = view.grid.origin_x + (ix + 0.5) * view.resolution
    py = view.grid.origin_y + (iy + 0.5) * view.resolution
    pts = np.asarray(robots, dtype=np.float64).reshape(-1, 2)
    if pts.shape[0] == 0:
        room = np.zeros(ix.size)
    else:
        room = np.hypot(px[:, None] - pts[None, :, 0], py[:, None] - pts[None, :, 1]).min(axis=1)
    order = np.lexsort((ix, iy, view.dist[iy, ix], -room))
    return int(ix[order[0]]), int(iy[order[0]])


@functools.lru_cache(maxsize=4096)
def parsed_trail(text: str) -> tuple[float, float] | None:
    """``(x, y)`` of a trail broadcast (``frontier-trail x y``), or None for other messages.

    Examples
    --------
    >>> parsed_trail("frontier-trail 1.5 -2.0"), parsed_trail("frontier-trail 1.5 nope")
    ((1.5, -2.0), None)
    """
    parts = text.split()
    if len(parts) != 3 or parts[0] != TRAIL_PREFIX:
        return None
    try:
        x, y = float(parts[1]), float(parts[2])
    except ValueError:
        return None
    return (x, y) if math.isfinite(x) and math.isfinite(y) else None


def remember_point(memory: dict, name: str, point: tuple[float, float], limit: int) -> None:
    """Remember ``point`` in ``memory[name]``: the last ``limit`` distinct points heard, oldest
    first. A point heard again keeps its first place; a new point past the limit forgets the
    oldest. The one store of "the last N points and their cells", shared by the trails heard
    (:func:`hear_trail`) and the frontier explorer's goals announced by others (``visited``);
    read it through :func:`remembered_points` and :func:`remembered_cells`.

    The store is plain data, made here on first use with ``limit`` (a later ``limit`` is not
    read): ``"order"`` (a dict used as an ordered set, the points as keys), the same points as
    rows of a ring (``"xy"``, float64 (limit + 1, 2): ``"count"`` rows from row ``"start"``),
    ``"added"`` (the points added so far) and the cells kept for :func:`remembered_cells`.

    Examples
    --------
    >>> memory = {}
    >>> for point in [(1.0, 2.0), (3.0, 4.0), (1.0, 2.0), (5.0, 6.0)]:
    ...     remember_point(memory, "seen", point, 2)
    >>> list(memory["seen"]["order"])
    [(3.0, 4.0), (5.0, 6.0)]
    """
    store = memory.get(name)
    if store is None:
        xy = np.empty((limit + 1, 2))
        store = memory[name] = {
            "limit": limit,
            "order": {},
            "xy": xy,
            "start": 0,
            "count": 0,
            "added": 0,
            "cells": None,
        }
    order = store["order"]
    if point in order:
        return  # (a point heard again keeps its place)
    order[point] = None
    xy = store["xy"]
    xy[(store["start"] + store["count"]) % xy.shape[0]] = point
    store["count"] += 1
    store["added"] += 1
    if store["count"] > store["limit"]:
        del order[next(iter(order))]  # the oldest
        store["start"] = (store["start"] + 1) % xy.shape[0]
        store["count"] -= 1


def _in_order(ring: np.ndarray, start: int, count: int) -> np.ndarray:
    """The ``count`` rows of ``ring`` from row ``start`` on, wrapping round (a view unless
    they wrap)."""
    end = start + count
    if end <= ring.shape[0]:
        return ring[start:end]
    return np.concatenate([ring[start:], ring[: end - ring.shape[0]]])


def remembered_points(memory: dict, name: str) -> np.ndarray:
    """float64 (K, 2): the points of ``memory[name]`` (:func:`remember_point`), oldest first;
    none when nothing was remembered there.

    The rows may be a view of the store's ring: read them before the next point is remembered.

    Examples
    --------
    >>> memory = {}
    >>> for point in [(1.0, 2.0), (3.0, 4.0), (1.0, 2.0)]:
    ...     remember_point(memory, "seen", point, 5)
    >>> remembered_points(memory, "seen").tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> remembered_points({}, "seen").shape
    (0, 2)
    """
    store = memory.get(name)
    if store is None:
        return np.empty((0, 2))
    return _in_order(store["xy"], store["start"], store["count"])


def remembered_cells(memory: dict, name: str, grid: Any) -> np.ndarray:
    """int64 (K, 2), read-only: the cells ``(ix, iy)`` of :func:`remembered_points`, in their
    order (``grid.pos_to_cells``: the cells :func:`cells_of` gives, to the bit).

    Kept in the store beside the points, as a ring of the same rows: only the cells of the
    points remembered since the last call are computed, all of them when the map's origin or
    resolution changed (or more points were added since than it holds). The rows may be a
    view of that ring: read them before the next point is remembered.

    Examples
    --------
    >>> from maes_controller.navigation import GridMap
    >>> memory = {}
    >>> remember_point(memory, "seen", (0.3, -0.9), 5)
    >>> remembered_cells(memory, "seen", GridMap(4, 4, 0.5, -1.0, -1.0)).tolist()
    [[2, 0]]
    >>> remembered_cells({}, "seen", GridMap(4, 4, 0.5, -1.0, -1.0)).shape
    (0, 2)
    """
    store = memory.get(name)
    if store is None:
        return _NO_CELLS
    geometry = (grid.origin_x, grid.origin_y, grid.resolution)
    start, count, added = store["start"], store["count"], store["added"]
    kept = store["cells"]
    if kept is None or kept["geometry"] != geometry:
        ij = np.empty(store["xy"].shape, dtype=np.int64) if kept is None else kept["ij"]
        kept = store["cells"] = {"geometry": geometry, "added": added - count, "ij": ij}
    new = min(added - kept["added"], count)  # the last rows: the points added since
    if new:
        ring, xy = kept["ij"], store["xy"]
        first = (start + count - new) % ring.shape[0]
        if first + new <= ring.shape[0]:
            ring[first : first + new] = grid.pos_to_cells(xy[first : first + new])
        else:
            rows = (first + np.arange(new)) % ring.shape[0]
            ring[rows] = grid.pos_to_cells(xy[rows])
        kept["added"] = added
    cells = _in_order(kept["ij"], start, count)
    cells.flags.writeable = False
    return cells


_NO_CELLS = np.empty((0, 2), dtype=np.int64)
_NO_CELLS.flags.writeable = False


def hear_trail(memory: dict, text: str) -> bool:
    """Whether ``text`` is a trail broadcast; if so, its point is remembered in
    ``memory["trails"]`` (:func:`remember_point`, the last :data:`TRAIL_LIMIT` distinct
    points), shared by every algorithm that hears trails (the frontier explorer's and TRS's),
    read through :func:`trail_points` and :func:`trail_cells`.

    Parameters
    ----------
    memory : dict
        The robot's memory.
    text : str
        A broadcast heard.

    Returns
    -------
    bool
        True for a trail broadcast (``frontier-trail x y``), False for any other message.

    Examples
    --------
    >>> memory = {}
    >>> hear_trail(memory, "frontier-trail 1.5 -2.0"), hear_trail(memory, "frontier-goal 1 2")
    (True, False)
    >>> hear_trail(memory, "frontier-trail 3.0 0.5"), hear_trail(memory, "frontier-trail 1.5 -2.0")
    (True, True)
    >>> trail_points(memory).tolist()
    [[1.5, -2.0], [3.0, 0.5]]
    """
    point = parsed_trail(text)
    if point is None:
        return False
    remember_point(memory, "trails", point, TRAIL_LIMIT)  # where others were
    return True


def trail_points(memory: dict) -> np.ndarray:
    """float64 (K, 2): the trail points heard (:func:`hear_trail`), oldest first
    (:func:`remembered_points`: read them before the next trail is heard).

    Examples
    --------
    >>> memory = {}
    >>> for text in ["frontier-trail 1 2", "frontier-trail 3 4", "frontier-trail 1 2"]:
    ...     _ = hear_trail(memory, text)
    >>> trail_points(memory).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> trail_points({}).shape
    (0, 2)
    """
    return remembered_points(memory, "trails")


def announce_trail(robot: Any, here: Sequence[float]) -> None:
    """Broadcast ``frontier-trail x y`` when the robot has moved :data:`TRAIL_STEP_M` metres
    since it last did (or since its first pose, which is not announced)."""
    memory = robot.memory
    mark = memory.setdefault("trail_at", here)  # where it last announced itself (or started)
    if math.hypot(here[0] - mark[0], here[1] - mark[1]) >= TRAIL_STEP_M:
        memory["trail_at"] = here
        robot.broadcast_msg(f"{TRAIL_PREFIX} {here[0]:.1f} {here[1]:.1f}")


def trail_cells(memory: dict, grid: Any) -> np.ndarray:
    """int64 (K, 2), read-only: the cells ``(ix, iy)`` of the trail points heard
    (:func:`trail_points`, in their order; :func:`remembered_cells`).

    Examples
    --------
    >>> from maes_controller.navigation import GridMap
    >>> memory = {}
    >>> _ = hear_trail(memory, "frontier-trail 0.3 -0.9")
    >>> trail_cells(memory, GridMap(4, 4, 0.5, -1.0, -1.0)).tolist()
    [[2, 0]]
    """
    return remembered_cells(memory, "trails", grid)


def without_trails(
    view: MapView, allowed: np.ndarray, seen: np.ndarray | Sequence[Cell], radius: float
) -> np.ndarray:
    """``allowed`` without the reachable frontier cells within ``radius`` cells of a trail
    point heard (``seen``, cells such as :func:`trail_cells` gives: ground other robots drove
    over), unless that leaves none of them (then ``allowed`` itself)."""
    if len(seen) == 0:
        return allowed
    cand = np.argwhere(view.reachable_frontier & allowed)[:, ::-1]  # (ix, iy)
    points = np.array(seen, dtype=np.float64).reshape(-1, 2)
    near = near_points(cand, points, radius, view.array.shape)
    if near.all():
        return allowed
    fresh = allowed.copy()
    fresh[cand[near, 1], cand[near, 0]] = False
    return fresh


def crowded(here: Sequence[float], robots: Iterable[Sequence[float]]) -> bool:
    """Whether :data:`CROWD_COUNT` or more of ``robots`` (``(x, y)``, metres) stand within
    :data:`CROWD_RADIUS_M` of ``here``.

    Examples
    --------
    >>> crowded((0.0, 0.0), [(1.0, 0.0), (0.0, -1.0), (0.5, 0.5)]), crowded((0, 0), [(1, 0)])
    (True, False)
    """
    x, y = here
    near = sum(math.hypot(px - x, py - y) < CROWD_RADIUS_M for px, py in robots)
    return near >= CROWD_COUNT


#: Broadcasts of map tiles start with this word (:func:`share_map`).
MAP_PREFIX = "maptiles"
#: Side of a shared map tile, cells; tiles are counted from the world origin's cell.
MAP_TILE = 8
#: Ticks between a robot's broadcasts of its map tiles (each robot at its own tick).
MAP_PERIOD = 10
#: Of the tiles a broadcast carries, at most this many are tiles that did not change (sent
#: again in turn, for robots that came into range since).
MAP_RESEND = 2
#: Messages of tiles a robot keeps unmerged at most (they are merged when it next decides).
MAP_HEARD_LIMIT = 500
_TILE_BYTES = MAP_TILE * MAP_TILE // 4  # two bit planes: known, blocked


def map_classes(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(known, blocked)`` bool (H, W) of a costmap: known cells, and known cells where the
    robot's centre may not be (cost at or above the inscribed cost)."""
    known = array >= 0
    return known, known & (array >= INSCRIBED)


class _TileFrame:
    """A grid's cells as tiles of :data:`MAP_TILE` cells, counted from the world origin's
    cell (robots whose grids of one resolution lie differently agree on the tiles)."""

    def __init__(self, grid: Any) -> None:
        ox, oy = round(grid.origin_x / grid.resolution), round(grid.origin_y / grid.resolution)
        self.shape = grid.array.shape
        h, w = self.shape
        self.tx0, self.ty0 = ox // MAP_TILE, oy // MAP_TILE  # floor division: tiles of cell 0
        self.ntx = (ox + w - 1) // MAP_TILE - self.tx0 + 1
        self.nty = (oy + h - 1) // MAP_TILE - self.ty0 + 1
        self.px, self.py = ox - self.tx0 * MAP_TILE, oy - self.ty0 * MAP_TILE  # grid in tiles

    def tiled(self, cells: np.ndarray) -> np.ndarray:
        """Bool (H, W) as (tile rows, tile columns, MAP_TILE, MAP_TILE), outside False."""
        h, w = self.shape
        out = np.zeros((self.nty * MAP_TILE, self.ntx * MAP_TILE), dtype=bool)
        out[self.py : self.py + h, self.px : self.px + w] = cells
        return np.ascontiguousarray(
            out.reshape(self.nty, MAP_TILE, self.ntx, MAP_TILE).transpose(0, 2, 1, 3)
        )

    def cells(self, tiles: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`tiled`: bool (H, W)."""
        h, w = self.shape
        flat = tiles.transpose(0, 2, 1, 3).reshape(self.nty * MAP_TILE, self.ntx * MAP_TILE)
        return flat[self.py : self.py + h, self.px : self.px + w]


def encode_tiles(
    tx: Sequence[int], ty: Sequence[int], known: np.ndarray, blocked: np.ndarray
) -> str:
    """``maptiles <tx>,<ty>:<base64> ...``: for each tile (world tile column ``tx[k]``, row
    ``ty[k]``) its known and blocked bits (``known[k]``, ``blocked[k]``: :data:`MAP_TILE`
    square, row-major).

    Examples
    --------
    >>> known = np.zeros((1, MAP_TILE, MAP_TILE), dtype=bool); known[0, 0, :3] = True
    >>> blocked = np.zeros_like(known); blocked[0, 0, 2] = True
    >>> text = encode_tiles([-1], [2], known, blocked)
    >>> text
    'maptiles -1,2:4AAAAAAAAAAgAAAAAAAAAA=='
    >>> tx, ty, k, b = decode_tiles(text)
    >>> tx.tolist(), ty.tolist(), int(k.sum()), int(b.sum())
    ([-1], [2], 3, 1)
    """
    fields = [MAP_PREFIX]
    for k in range(len(tx)):
        raw = np.packbits(np.concatenate([known[k].reshape(-1), blocked[k].reshape(-1)]))
        fields.append(f"{int(tx[k])},{int(ty[k])}:{base64.b64encode(raw.tobytes()).decode()}")
    return " ".join(fields)


_NO_TILES = (
    np.empty(0, dtype=np.int64),
    np.empty(0, dtype=np.int64),
    np.empty((0, MAP_TILE, MAP_TILE), dtype=bool),
    np.empty((0, MAP_TILE, MAP_TILE), dtype=bool),
)


@functools.lru_cache(maxsize=4096)
def decode_tiles(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(tx, ty, known, blocked)`` of a :func:`encode_tiles` broadcast (no tiles for other
    or malformed text), read-only. Decoded once for all the robots that hear it."""
    parts = text.split()
    if len(parts) < 2 or parts[0] != MAP_PREFIX:
        return _NO_TILES
    where, raw = [], []
    for field in parts[1:]:
        try:
            at, bits = field.split(":")
            tx, ty = (int(v) for v in at.split(","))
            data = base64.b64decode(bits, validate=True)
        except ValueError:
            return _NO_TILES
        if len(data) != _TILE_BYTES:
            return _NO_TILES
        where.append((tx, ty))
        raw.append(data)
    planes = np.unpackbits(np.frombuffer(b"".join(raw), dtype=np.uint8)).astype(bool)
    planes = planes.reshape(len(raw), 2, MAP_TILE, MAP_TILE)
    xy = np.array(where, dtype=np.int64)
    out = (xy[:, 0], xy[:, 1], planes[:, 0], planes[:, 1] & planes[:, 0])
    for a in out:
        a.flags.writeable = False
    return out


def _own_tiles(robot: Any) -> tuple[_TileFrame, dict] | None:
    """The robot's tile frame and its store of map tiles (``memory["map_tiles"]``: heard
    known and blocked, and what it sent), made anew when its grid changes."""
    costmap = robot.global_costmap
    if costmap.costmap is None:
        return None
    grid = costmap.grid
    store = robot.memory.get("map_tiles")
    key = (grid.array.shape, grid.origin_x, grid.origin_y, grid.resolution)
    if store is None or store["key"] != key:
        frame = _TileFrame(grid)
        empty = np.zeros((frame.nty, frame.ntx, MAP_TILE, MAP_TILE), dtype=bool)
        store = {
            "key": key,
            "frame": frame,
            "heard": (empty.copy(), empty.copy()),
            "sent": (empty.copy(), empty.copy()),
            "heard_any": False,
        }
        robot.memory["map_tiles"] = store
    return store["frame"], store


def hear_map(robot: Any, text: str) -> bool:
    """Whether ``text`` is a broadcast of map tiles; if so, its tiles wait in
    ``memory["map_heard"]`` until :func:`merged_view` merges them (once per decision, not once
    per message)."""
    if not text.startswith(MAP_PREFIX):
        return False
    tiles = decode_tiles(text)
    if tiles[0].size:
        heard = robot.memory.setdefault("map_heard", [])
        heard.append(tiles)
        if len(heard) >= MAP_HEARD_LIMIT:  # a robot that has not decided for long
            own = _own_tiles(robot)
            if own is not None:
                _merge_heard(*own, heard)
            else:  # no map yet to merge into: keep the newest (tiles are sent again in turn)
                del heard[: len(heard) - MAP_HEARD_LIMIT + 1]
    return True


def _merge_heard(frame: _TileFrame, store: dict, heard: list) -> None:
    """OR the tiles heard into ``store["heard"]``: all messages at once, one OR per tile."""
    tx, ty, known, blocked = (np.concatenate(parts) for parts in zip(*heard, strict=True))
    heard.clear()
    lx, ly = tx - frame.tx0, ty - frame.ty0
    ok = (lx >= 0) & (lx < frame.ntx) & (ly >= 0) & (ly < frame.nty)
    index = (ly * frame.ntx + lx)[ok]
    if index.size == 0:
        return
    order = np.argsort(index, kind="stable")
    index = index[order]
    tiles, starts = np.unique(index, return_index=True)
    heard_known, heard_blocked = store["heard"]
    flat_known = heard_known.reshape(-1, MAP_TILE, MAP_TILE)
    flat_blocked = heard_blocked.reshape(-1, MAP_TILE, MAP_TILE)
    flat_known[tiles] |= np.logical_or.reduceat(known[ok][order], starts, axis=0)
    flat_blocked[tiles] |= np.logical_or.reduceat(blocked[ok][order], starts, axis=0)
    store["heard_any"] = True


def share_map(robot: Any) -> None:
    """Every :data:`MAP_PERIOD` ticks (each robot at its own tick), broadcast the tiles of the
    robot's own map that changed since it last sent them, nearest first, as many as one
    message holds, and up to :data:`MAP_RESEND` others in turn (robots that came into range
    since hear the whole map in time)."""
    index = robot_index(robot.namespace) or 0
    if robot.tick % MAP_PERIOD != index % MAP_PERIOD:
        return
    own = _own_tiles(robot)
    if own is None:
        return
    frame, store = own
    grid = robot.global_costmap.grid
    known, blocked = (frame.tiled(c) for c in map_classes(grid.array))
    sent_known, sent_blocked = store["sent"]
    has = known.any(axis=(2, 3))
    changed = (known != sent_known).any(axis=(2, 3)) | (blocked != sent_blocked).any(axis=(2, 3))
    here = robot.robot_position or (0.0, 0.0)
    cx, cy = grid.pos_to_cell(*here)
    centre = (np.arange(max(frame.nty, frame.ntx)) + 0.5) * MAP_TILE
    d = np.abs(centre[: frame.ntx][None, :] - frame.px - cx) + np.abs(
        centre[: frame.nty][:, None] - frame.py - cy
    )
    ly, lx = np.nonzero(changed)
    order = np.lexsort((lx, ly, d[ly, lx]))  # nearest first (ties: row, then column)
    chosen_y, chosen_x = list(ly[order][:_TILES_PER_MESSAGE]), list(lx[order][:_TILES_PER_MESSAGE])
    oy, ox = np.nonzero(has & ~changed)
    if oy.size and len(chosen_y) < _TILES_PER_MESSAGE:
        start = store.get("resend", 0) % oy.size
        take = min(MAP_RESEND, _TILES_PER_MESSAGE - len(chosen_y), oy.size)
        pick = (np.arange(take) + start) % oy.size
        chosen_y += list(oy[pick])
        chosen_x += list(ox[pick])
        store["resend"] = start + take
    cy_, cx_ = np.array(chosen_y, dtype=np.int64), np.array(chosen_x, dtype=np.int64)
    while cy_.size:
        text = encode_tiles(cx_ + frame.tx0, cy_ + frame.ty0, known[cy_, cx_], blocked[cy_, cx_])
        if len(text.encode()) <= MAX_MESSAGE_BYTES:
            break
        cy_, cx_ = cy_[:-1], cx_[:-1]  # tile numbers wider than counted for (a huge map)
    if not cy_.size:
        return
    sent_known[cy_, cx_] = known[cy_, cx_]
    sent_blocked[cy_, cx_] = blocked[cy_, cx_]
    robot.broadcast_msg(text)


#: Tiles one broadcast holds (:func:`encode_tiles`: " -100,-100:" and the base64 of each).
_TILES_PER_MESSAGE = (MAX_MESSAGE_BYTES - len(MAP_PREFIX)) // (
    len(" -100,-100:") + 4 * -(-_TILE_BYTES // 3)
)


def merged_view(robot: Any, around_robots: bool = False) -> MapView | None:
    """:meth:`MapView.of` on the robot's own map with the cells only others mapped filled in
    from the tiles it heard (:func:`hear_map`): blocked cells as lethal, the rest free."""
    costmap = robot.global_costmap
    if costmap.costmap is None or robot.robot_position is None:
        return None
    own = _own_tiles(robot)
    if own is None:
        return MapView.of(robot, around_robots)
    frame, store = own
    heard = robot.memory.get("map_heard")
    if heard:
        _merge_heard(frame, store, heard)
    if not store["heard_any"]:
        return MapView.of(robot, around_robots)
    grid = costmap.grid
    heard_known, heard_blocked = (frame.cells(t) for t in store["heard"])
    array = grid.array.copy()
    unknown = array < 0
    array[unknown & heard_known] = 0
    array[unknown & heard_blocked] = LETHAL
    merged = GridMap.from_array(array, grid.resolution, grid.origin_x, grid.origin_y)
    nearby = robot.state.nearby_robots if around_robots else ()
    return MapView(merged, robot.robot_position, [(r.pos.x, r.pos.y) for r in nearby])
