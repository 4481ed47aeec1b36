"""Path planning over grid cells: A*, distance fields, line of sight and path pruning.

Cells are ``(ix, iy)`` tuples indexing arrays as ``grid[iy, ix]`` (``GridMap.array`` order).
A grid given to the planners is either

- a bool (H, W) array: ``True`` where the robot centre may be (e.g. ``~inflate(...)``), or
- an integer (H, W) Nav2 costmap (:func:`costmap_from_occupancy`, or a received
  ``global_costmap/costmap`` as ``GridMap.array``): cells below 99 are traversable, unknown
  (-1) only with ``allow_unknown``; a cell's cost ``c`` makes stepping into it
  ``1 + cost_weight * c / 98`` times longer.

Moves are 8-connected without cutting corners. Anything outside the grid is blocked.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence

import numpy as np

from .._checks import check_bool_grid, check_int_grid, check_non_negative
from ._search import search, walk_back
from ._segment import prune_indices, segment_clear
from .costmap import INSCRIBED
from .inflation import costmap_from_occupancy, inflate

Cell = tuple[int, int]

__all__ = [
    "Cell",
    "astar",
    "costmap_from_occupancy",
    "distance_field",
    "inflate",
    "line_of_sight",
    "nearest_traversable",
    "path_length",
    "prune_path",
    "traversable_mask",
]


def traversable_mask(costs: np.ndarray, allow_unknown: bool = False) -> np.ndarray:
    """Bool (H, W): cells of a Nav2 costmap where the robot centre may be (cost < 99).

    Examples
    --------
    >>> traversable_mask(np.array([[0, 98, 99, 100, -1]]), allow_unknown=True)
    array([[ True,  True, False, False,  True]])
    """
    c = check_int_grid("costs", costs)
    known = (c >= 0) & (c < INSCRIBED)
    return known | (c < 0) if allow_unknown else known


def _prepare(
    grid: np.ndarray, allow_unknown: bool, cost_weight: float
) -> tuple[np.ndarray, np.ndarray]:
    """(passable bool (H, W), penalty float64 (H, W)) of a bool grid or an integer costmap."""
    arr = np.asarray(grid)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"grid must be a non-empty (H, W) array, got shape {arr.shape}")
    cost_weight = check_non_negative("cost_weight", cost_weight)
    if arr.dtype == np.bool_:
        return np.ascontiguousarray(arr), np.zeros(arr.shape)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"grid must be bool or an integer costmap, got dtype={arr.dtype}")
    passable = traversable_mask(arr, allow_unknown)
    penalty = (cost_weight / (INSCRIBED - 1)) * np.clip(arr, 0, INSCRIBED - 1).astype(np.float64)
    return passable, penalty


#: What :func:`prepared` computed for a read-only costmap: (id, allow_unknown, cost_weight) ->
#: (weak reference to the costmap, passable, penalty); an entry goes when its costmap does.
_PREPARED: dict[tuple, tuple] = {}


def prepared(
    grid: np.ndarray, allow_unknown: bool = False, cost_weight: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """(passable bool (H, W), penalty float64 (H, W)) of a bool grid or an integer costmap, as
    :func:`astar` searches them; ``passable`` of a costmap is its :func:`traversable_mask`.

    For an integer costmap that owns its values and is read-only (the navigator's costmap, kept
    with its map: ``GridMap.derived``), both are computed once and kept while the costmap
    lives: a navigator plans on one costmap many times (every robot sharing the map, every
    replanning), and these grid-wide steps cost more than a short A* search. Both are then
    read-only; do not modify them. Any other grid gets them computed afresh.

    Examples
    --------
    >>> costs = np.array([[0, 50, 99, -1]], dtype=np.int8); costs.flags.writeable = False
    >>> passable, penalty = prepared(costs, allow_unknown=True)
    >>> passable.tolist(), penalty.round(3).tolist()
    ([[True, True, False, True]], [[0.0, 0.51, 1.0, 0.0]])
    >>> prepared(costs, allow_unknown=True)[0] is passable
    True
    """
    arr = grid if isinstance(grid, np.ndarray) else None
    if arr is None or arr.flags.writeable or arr.base is not None or arr.dtype == np.bool_:
        return _prepare(grid, allow_unknown, cost_weight)
    key = (id(arr), bool(allow_unknown), float(cost_weight))
    kept = _PREPARED.get(key)
    if kept is not None and kept[0]() is arr:
        return kept[1], kept[2]
    passable, penalty = _prepare(arr, allow_unknown, cost_weight)
    passable.flags.writeable = penalty.flags.writeable = False
    ref = weakref.ref(arr, lambda _ref, key=key: _PREPARED.pop(key, None))
    _PREPARED[key] = (ref, passable, penalty)
    return passable, penalty


def _check_cell(name: str, cell: Sequence[int], shape: tuple[int, int]) -> Cell:
    try:
        ix, iy = (int(v) for v in cell)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an (ix, iy) pair of ints, got {cell!r}") from None
    if not (0 <= ix < shape[1] and 0 <= iy < shape[0]):
        raise ValueError(f"{name} {(ix, iy)} is outside the grid of shape (H, W) = {shape}")
    return ix, iy


def astar(
    grid: np.ndarray,
    start: Sequence[int],
    goal: Sequence[int],
    *,
    allow_unknown: bool = False,
    cost_weight: float = 1.0,
) -> list[Cell] | None:
    """Shortest 8-connected path of cells from ``start`` to ``goal`` (A*, octile heuristic).

    Parameters
    ----------
    grid : bool (H, W) or int (H, W)
        Traversable mask or Nav2 costmap (see the module docstring).
    start, goal : (ix, iy)
        Cells inside the grid. Use :func:`nearest_traversable` first for a start or goal that
        lies in an inflated cell.
    allow_unknown : bool
        Costmap only: unknown cells are traversable (at zero cost). No effect on a bool grid.
    cost_weight : float
        Costmap only: how strongly costs lengthen steps (0 ignores them).

    Returns
    -------
    list of (ix, iy) or None
        From ``start`` to ``goal`` inclusive; ``None`` when start or goal is not traversable or
        no path exists. Deterministic: the same input always gives the same path.

    Examples
    --------
    >>> free = np.ones((3, 4), dtype=bool); free[0:2, 1] = False
    >>> astar(free, (0, 0), (2, 0))
    [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0)]
    """
    passable, penalty = prepared(grid, allow_unknown, cost_weight)
    return astar_prepared(passable, penalty, start, goal)


def astar_prepared(
    passable: np.ndarray, penalty: np.ndarray, start: Sequence[int], goal: Sequence[int]
) -> list[Cell] | None:
    """:func:`astar` on a grid already :func:`prepared` (``passable``, ``penalty``): for a
    caller that reads the passable cells too (:func:`~.global_planner.plan_route`).

    Examples
    --------
    >>> free = np.ones((3, 4), dtype=bool); free[0:2, 1] = False
    >>> astar_prepared(*prepared(free), (0, 0), (2, 0)) == astar(free, (0, 0), (2, 0))
    True
    """
    sx, sy = _check_cell("start", start, passable.shape)
    gx, gy = _check_cell("goal", goal, passable.shape)
    if not (passable[sy, sx] and passable[gy, gx]):
        return None
    cost, parent = search(passable, penalty, sx, sy, gx, gy)
    w = passable.shape[1]
    t = gy * w + gx
    if not math.isfinite(cost[t]):
        return None
    return [divmod(node, w)[::-1] for node in walk_back(parent, t).tolist()]


def distance_field(
    grid: np.ndarray,
    start: Sequence[int],
    *,
    allow_unknown: bool = False,
    cost_weight: float = 1.0,
) -> np.ndarray:
    """Path cost from ``start`` to every cell (Dijkstra, same moves and costs as :func:`astar`).

    Returns
    -------
    float64 (H, W)
        ``inf`` where unreachable (and everywhere if ``start`` is not traversable).

    Examples
    --------
    >>> free = np.ones((2, 3), dtype=bool); free[0, 1] = False
    >>> distance_field(free, (0, 0))
    array([[ 0., inf,  4.],
           [ 1.,  2.,  3.]])
    """
    passable, penalty = _prepare(grid, allow_unknown, cost_weight)
    sx, sy = _check_cell("start", start, passable.shape)
    if not passable[sy, sx]:
        return np.full(passable.shape, np.inf)
    cost, _ = search(passable, penalty, sx, sy, -1, -1)
    return cost.reshape(passable.shape)


def nearest_traversable(
    traversable: np.ndarray, cell: Sequence[int], max_distance: float = math.inf
) -> Cell | None:
    """The traversable cell nearest (Euclidean, centre to centre) to ``cell``.

    For a start or goal that fell into an inflated cell. Ties go to the lowest ``iy``, then
    ``ix``. ``cell`` itself is returned when it is traversable.

    Parameters
    ----------
    traversable : bool (H, W)
    cell : (ix, iy)
        May lie outside the grid.
    max_distance : float
        Only cells this close (in cells) count.

    Returns
    -------
    (ix, iy) or None
        ``None`` when no traversable cell lies within ``max_distance``.

    Examples
    --------
    >>> t = np.zeros((3, 3), dtype=bool); t[2, 1] = t[0, 2] = True
    >>> nearest_traversable(t, (1, 1)), nearest_traversable(t, (0, 0), max_distance=1.5)
    ((1, 2), None)
    """
    t = check_bool_grid("traversable", traversable)
    ix, iy = (int(v) for v in cell)
    h, w = t.shape
    if 0 <= ix < w and 0 <= iy < h and t[iy, ix]:
        return ix, iy  # at distance 0: no other cell is as near
    x0, y0 = 0, 0
    if math.isfinite(max_distance):
        # only the box of cells within max_distance on both axes can count (a cell outside it
        # is farther); its raster order is the grid's, so the same cell wins the same ties
        r = math.floor(abs(max_distance))  # (the test below squares it)
        x0, y0 = max(ix - r, 0), max(iy - r, 0)
        t = t[y0 : max(iy + r + 1, y0), x0 : max(ix + r + 1, x0)]
    ys, xs = np.nonzero(t)  # raster order, so argmin's first minimum is the documented tie-break
    if xs.size == 0:
        return None
    xs, ys = xs + x0, ys + y0
    d2 = (xs - ix) ** 2 + (ys - iy) ** 2
    k = int(np.argmin(d2))
    if d2[k] > max_distance * max_distance:
        return None
    return int(xs[k]), int(ys[k])


def _check_clearance(clearance: float) -> float:
    if isinstance(clearance, bool) or not (
        isinstance(clearance, (int, float)) and 0.0 <= clearance < 0.5
    ):
        raise ValueError(f"clearance must be a number in [0, 0.5) cells, got {clearance!r}")
    return float(clearance)


def _clear(traversable: np.ndarray, a: Cell, b: Cell, clearance: float) -> bool:
    """:func:`line_of_sight` on already checked arguments (cell centres to grid coordinates)."""
    return bool(
        segment_clear(traversable, a[0] + 0.5, a[1] + 0.5, b[0] + 0.5, b[1] + 0.5, clearance)
    )


def line_of_sight(
    traversable: np.ndarray, a: Sequence[int], b: Sequence[int], clearance: float = 0.0
) -> bool:
    """Whether the straight segment between the centres of cells ``a`` and ``b`` stays clear.

    Clear means the segment touches no non-traversable cell (supercover: corners count) and,
    with ``clearance > 0``, passes no closer than ``clearance`` cells to one. Use a clearance of
    the robot radius in cells when the grid is too coarse for :func:`inflate` to show it (a
    radius below one cell).

    Parameters
    ----------
    traversable : bool (H, W)
    a, b : (ix, iy)
        Cells inside the grid.
    clearance : float
        In cells, 0 <= clearance < 0.5 (larger robots need an inflated grid).

    Examples
    --------
    >>> t = np.ones((3, 3), dtype=bool); t[1, 1] = False
    >>> line_of_sight(t, (0, 0), (2, 0)), line_of_sight(t, (0, 0), (2, 2))
    (True, False)
    >>> t = np.ones((3, 3), dtype=bool); t[1, 0] = False
    >>> line_of_sight(t, (0, 0), (2, 1)), line_of_sight(t, (0, 0), (2, 1), clearance=0.3)
    (True, False)
    """
    t = check_bool_grid("traversable", traversable)
    clearance = _check_clearance(clearance)
    return _clear(t, _check_cell("a", a, t.shape), _check_cell("b", b, t.shape), clearance)


def prune_path(
    path: Sequence[Sequence[int]], traversable: np.ndarray, clearance: float = 0.0
) -> list[Cell]:
    """Keep only the waypoints needed to go from start to goal in straight, clear segments.

    Greedy string pulling: from the last kept waypoint, skip ahead to the farthest path cell in
    :func:`line_of_sight`. Consecutive cells of the input path are always kept connected, even if
    their segment is not clear (e.g. a start inside an inflated cell), so the result follows the
    input wherever a shortcut is not clear.

    Parameters
    ----------
    path : sequence of (ix, iy)
        A connected path, e.g. from :func:`astar`.
    traversable : bool (H, W)
    clearance : float
        As in :func:`line_of_sight`.

    Returns
    -------
    list of (ix, iy)
        First and last cells of ``path`` included; empty for an empty path.

    Examples
    --------
    >>> t = np.ones((3, 4), dtype=bool); t[0:2, 1] = False
    >>> prune_path(astar(t, (0, 0), (2, 0)), t)
    [(0, 0), (0, 2), (2, 2), (2, 0)]
    """
    t = check_bool_grid("traversable", traversable)
    clearance = _check_clearance(clearance)
    xy = np.asarray(path) if isinstance(path, list) else None
    if (
        xy is not None
        and xy.ndim == 2
        and xy.shape[1] == 2
        and xy.dtype.kind in "iu"
        and bool(((xy >= 0) & (xy < (t.shape[1], t.shape[0]))).all())
    ):  # integer pairs inside the grid (an A* path): checked in one pass
        return pruned_cells(list(map(tuple, xy.tolist())), t, clearance)
    cells = [_check_cell(f"path[{k}]", c, t.shape) for k, c in enumerate(path)]
    return pruned_cells(cells, t, clearance)


def pruned_cells(cells: list[Cell], traversable: np.ndarray, clearance: float) -> list[Cell]:
    """:func:`prune_path` of ``cells``, a list of ``(ix, iy)`` tuples of ints inside the
    bool grid ``traversable``, with a checked ``clearance``, without checking them again (an
    A* path: :func:`~.global_planner.plan_route`). The string pulling is compiled
    (:func:`~._segment.prune_indices`: the same segment tests in the same order).

    Examples
    --------
    >>> t = np.ones((3, 4), dtype=bool); t[0:2, 1] = False
    >>> pruned_cells(astar(t, (0, 0), (2, 0)), t, 0.0)
    [(0, 0), (0, 2), (2, 2), (2, 0)]
    """
    if len(cells) <= 2:
        return list(cells)
    xy = np.array(cells, dtype=np.int64)
    kept = prune_indices(xy[:, 0], xy[:, 1], traversable, clearance)
    return [cells[k] for k in kept.tolist()]


def path_length(path: Sequence[Sequence[float]]) -> float:
    """Sum of the Euclidean lengths of a polyline's segments (cells or world points).

    Examples
    --------
    >>> path_length([(0, 0), (3, 4), (3, 5)])
    6.0
    """
    pts = np.asarray(path, dtype=np.float64).reshape(-1, 2)
    if pts.shape[0] < 2:
        return 0.0
    d = pts[1:] - pts[:-1]  # np.diff's subtraction, without its overhead
    return float(np.hypot(d[:, 0], d[:, 1]).sum())
