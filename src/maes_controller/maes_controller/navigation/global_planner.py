"""World-coordinate planning on an occupancy grid: the built-in navigator's planner in one call.

Both the ROS navigator and direct mode call :func:`plan_route`, so a goal gets the same path
either way. Steps: Nav2-style costmap (unless given) -> snap start and goal to traversable cells
-> A* -> prune to line-of-sight waypoints -> world positions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._checks import check_int_grid, check_non_negative
from .costmap import GridMap
from .inflation import costmap_from_occupancy
from .planning import Cell, astar_prepared, nearest_traversable, path_length, prepared, pruned_cells


@dataclass(frozen=True)
class Route:
    """A planned route.

    Attributes
    ----------
    cells : list of (ix, iy)
        The full A* path from the start cell to the goal cell (e.g. for a ``plan`` message).
    waypoints : list of (x, y)
        World positions to drive to after the start, for :func:`~.following.follow_path`: the
        pruned corners, then the goal itself (or the centre of the cell it was snapped to).
    length : float
        World length from the start position through the waypoints.
    """

    cells: list[Cell]
    waypoints: list[tuple[float, float]]
    length: float


def plan_route(
    grid: GridMap,
    start: Sequence[float],
    goal: Sequence[float],
    robot_radius: float,
    *,
    costs: np.ndarray | None = None,
    allow_unknown: bool = True,
    goal_snap: float | None = None,
) -> Route | None:
    """Plan from world position ``start`` to ``goal`` for a disc robot of ``robot_radius``.

    Parameters
    ----------
    grid : GridMap
        The robot's map (occupancy values).
    start, goal : (x, y)
        World positions.
    robot_radius : float
        World units. Obstacles are inflated by it; when it is under half a cell (coarse maps,
        e.g. 1 tile per cell), waypoint shortcuts keep that clearance from blocked cells instead.
    costs : int (H, W), optional
        A costmap already computed for ``grid`` (e.g. the published one); default
        ``costmap_from_occupancy(grid.array, robot_radius / grid.resolution)``.
    allow_unknown : bool
        Plan through unknown cells (Nav2's default for its global planner).
    goal_snap : float, optional
        A goal in a blocked cell moves to the nearest traversable cell this close (world
        units). Default ``robot_radius + grid.resolution``: just out of the inflation.

    Returns
    -------
    Route or None
        ``None`` when the start has no traversable cell nearby, the goal none within
        ``goal_snap``, or no path joins them. A start already within the goal's cell gives a
        route with the goal as the only waypoint.

    Examples
    --------
    >>> walls = np.zeros((5, 5), dtype=np.int8); walls[1:4, 2] = 100
    >>> g = GridMap.from_array(walls, 1.0, -2.5, -2.5)
    >>> r = plan_route(g, (-2.0, 0.0), (2.0, 0.0), robot_radius=0.3)
    >>> r.waypoints
    [(-1.0, 2.0), (1.0, 2.0), (2.0, 0.0)]
    >>> round(r.length, 3)
    6.472
    """
    if not isinstance(grid, GridMap):
        raise TypeError(f"grid must be a GridMap, got {type(grid).__name__}")
    radius = check_non_negative("robot_radius", robot_radius)
    res = grid.resolution
    radius_cells = radius / res
    if costs is None:
        costs = costmap_from_occupancy(grid.array, radius_cells)
    else:
        costs = check_int_grid("costs", costs)
        if costs.shape != grid.shape:
            raise ValueError(f"costs must have the grid's shape {grid.shape}, got {costs.shape}")
    snap = radius + res if goal_snap is None else check_non_negative("goal_snap", goal_snap)
    sx, sy = (float(v) for v in start)
    gx, gy = (float(v) for v in goal)
    if not all(math.isfinite(v) for v in (sx, sy, gx, gy)):
        raise ValueError(f"start and goal must be finite, got {(sx, sy)} and {(gx, gy)}")

    # traversable_mask(costs, allow_unknown), and the penalties astar steps with
    traversable, penalty = prepared(costs, allow_unknown)
    # A robot that does not touch an obstacle is within its radius (plus its cell) of free space.
    start_cell = nearest_traversable(
        traversable, grid.pos_to_cell(sx, sy), max_distance=radius_cells + 1.5
    )
    goal_in = grid.pos_to_cell(gx, gy)
    goal_cell = nearest_traversable(traversable, goal_in, max_distance=snap / res)
    if start_cell is None or goal_cell is None:
        return None
    cells = astar_prepared(traversable, penalty, start_cell, goal_cell)  # astar(costs, ...)
    if cells is None:
        return None
    clearance = radius_cells if radius_cells < 0.5 else 0.0
    corners = pruned_cells(cells, traversable, clearance)  # prune_path of an A* path
    waypoints = [grid.cell_to_pos(ix, iy) for ix, iy in corners[1:-1]]
    # Keep the exact goal when its own cell was usable; else the snapped cell's centre.
    waypoints.append((gx, gy) if goal_cell == goal_in else grid.cell_to_pos(*goal_cell))
    return Route(cells=cells, waypoints=waypoints, length=path_length([(sx, sy), *waypoints]))
