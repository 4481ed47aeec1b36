"""MAES 2.0's ``global_costmap`` object, with its names, on top of :class:`~.costmap.GridMap`.

MAES 2.0's controller kept the latest ``global_costmap/costmap`` message in a ``MaesCostmap``
(attribute ``costmap``, callback ``update_costmap``) with the methods ``costmap_index_to_pos``,
``cost_map_tiles_to_pos``, ``pos_to_costmap_index``, ``pos_to_costmap_tile``,
``get_costmap_coord_status``, ``distance_to_costmap_index``, ``get_number_of_unknown_neighbors``
and ``has_at_least_n_unknown_neighbors``, and positions as ``Coord2D``. All are kept here. Every
:class:`~.costmap.GridMap` method (``is_free``, ``neighbours``, ``array``, ...) is also available
on the same object, answering for the latest message.

Deliberate differences from MAES 2.0
    Positions are cell *centres* measured from the message's origin (MAES 2.0 returned the cell's
    lower-left corner measured from the map centre: half a cell off, and wrong for a map whose
    origin is not at minus half its size). World to cell uses floor (MAES 2.0 truncated towards
    zero, wrong left of or below the origin). Neighbour counts never wrap around a row end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .navigation import GridMap


@dataclass
class Coord2D:
    """A world position, as in MAES 2.0's controller (same name and fields).

    Examples
    --------
    >>> Coord2D(1.5, -2.0).x
    1.5
    """

    x: float
    y: float


def _xy(pos: Any) -> tuple[float, float]:
    """Read a position given as ``Coord2D``/anything with ``.x``/``.y``, or an (x, y) pair."""
    if hasattr(pos, "x") and hasattr(pos, "y"):
        return float(pos.x), float(pos.y)
    try:
        x, y = pos
    except (TypeError, ValueError):
        msg = f"a position must have .x and .y or be an (x, y) pair, got {pos!r}"
        raise TypeError(msg) from None
    return float(x), float(y)


class MaesCostmap:
    """MAES 2.0's ``global_costmap`` object: holds the latest costmap message.

    ``costmap`` is the last message given to :meth:`update_costmap` (``None`` before the
    first). Every public :class:`~.costmap.GridMap` attribute and method is also available on
    this object and answers for the latest message; the grid is rebuilt on first use after each
    update. Before the first message, any grid query raises ``LookupError``.

    Parameters
    ----------
    logger : object, optional
        Kept as ``self.logger`` for MAES 2.0 signature compatibility; not used here.

    Examples
    --------
    >>> cm = MaesCostmap()
    >>> cm.update_costmap(GridMap(2, 2, 1.0, -1.0, -1.0, [0, 100, -1, 0]).to_msg_like())
    >>> cm.costmap.info.width, cm.is_occupied(1, 0), cm.costmap_index_to_pos(2)
    (2, True, Coord2D(x=-0.5, y=0.5))
    """

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger
        self.costmap: Any = None
        self._grid: GridMap | None = None
        self._grid_source: Any = None

    def update_costmap(self, costmap: Any, *, grid: GridMap | None = None) -> None:
        """Store a new costmap message (MAES 2.0's subscription callback).

        ``grid``, when given, is the :class:`~.costmap.GridMap` of ``costmap`` (direct mode
        hands robots with the same map one grid, so what is computed from it is shared).
        """
        self.costmap = costmap
        if grid is not None:
            self._grid, self._grid_source = grid, costmap

    @property
    def grid(self) -> GridMap:
        """The :class:`~.costmap.GridMap` of the latest message."""
        if self.costmap is None:
            raise LookupError("no costmap received yet (global_costmap.costmap is None)")
        if self._grid is None or self._grid_source is not self.costmap:
            self._grid = GridMap.from_msg(self.costmap)
            self._grid_source = self.costmap
        return self._grid

    def __getattr__(self, name: str) -> Any:
        # Called only for names not found on this class: forward GridMap's public API.
        if name.startswith("_") or not hasattr(GridMap, name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.grid, name)

    def __dir__(self) -> list[str]:
        public = [n for n in dir(GridMap) if not n.startswith("_")]
        return sorted(set(super().__dir__()) | set(public))

    # -- MAES 2.0 names -------------------------------------------------------------------------

    def costmap_index_to_pos(self, index: int) -> Coord2D:
        """World position (cell centre) of a flat ``data`` index.

        Examples
        --------
        >>> cm = MaesCostmap(); cm.update_costmap(GridMap(2, 2, 1.0, -1.0, -1.0).to_msg_like())
        >>> cm.costmap_index_to_pos(0)
        Coord2D(x=-0.5, y=-0.5)
        """
        return Coord2D(*self.grid.index_to_pos(index))

    def cost_map_tiles_to_pos(self, x_tile: int, y_tile: int) -> Coord2D:
        """World position (cell centre) of cell ``(x_tile, y_tile)``.

        Examples
        --------
        >>> cm = MaesCostmap(); cm.update_costmap(GridMap(2, 2, 1.0, -1.0, -1.0).to_msg_like())
        >>> cm.cost_map_tiles_to_pos(1, 0)
        Coord2D(x=0.5, y=-0.5)
        """
        return Coord2D(*self.grid.cell_to_pos(x_tile, y_tile))

    def pos_to_costmap_tile(self, pos: Any) -> tuple[int, int]:
        """Cell ``(x_tile, y_tile)`` containing ``pos`` (``Coord2D``, ``.x``/``.y`` or a pair).

        Examples
        --------
        >>> cm = MaesCostmap(); cm.update_costmap(GridMap(2, 2, 1.0, -1.0, -1.0).to_msg_like())
        >>> cm.pos_to_costmap_tile(Coord2D(0.2, -0.2))
        (1, 0)
        """
        return self.grid.pos_to_cell(*_xy(pos))

    def pos_to_costmap_index(self, pos: Any) -> int:
        """Flat index of the cell containing ``pos``; ``IndexError`` outside the grid.

        Examples
        --------
        >>> cm = MaesCostmap(); cm.update_costmap(GridMap(2, 2, 1.0, -1.0, -1.0).to_msg_like())
        >>> cm.pos_to_costmap_index(Coord2D(0.2, 0.2))
        3
        """
        return self.grid.pos_to_index(*_xy(pos))

    def get_costmap_coord_status(self, x: int, y: int) -> int:
        """Raw value (-1 or 0..100) of cell ``(x, y)``.

        Examples
        --------
        >>> cm = MaesCostmap(); cm.update_costmap(GridMap(2, 1, 1.0, data=[0, 99]).to_msg_like())
        >>> cm.get_costmap_coord_status(1, 0)
        99
        """
        return self.grid.value(x, y)

    def distance_to_costmap_index(self, from_coord: Any, index: int) -> float:
        """Euclidean distance from ``from_coord`` to the centre of cell ``index``.

        Examples
        --------
        >>> cm = MaesCostmap(); cm.update_costmap(GridMap(2, 2, 1.0, -1.0, -1.0).to_msg_like())
        >>> cm.distance_to_costmap_index(Coord2D(0.5, -1.5), 3)
        2.0
        """
        x, y = _xy(from_coord)
        cx, cy = self.grid.index_to_pos(index)
        return math.hypot(x - cx, y - cy)

    def get_number_of_unknown_neighbors(self, index: int) -> int:
        """How many of the (up to 8) in-grid neighbours of cell ``index`` are unknown.

        Examples
        --------
        >>> cm = MaesCostmap(); cm.update_costmap(GridMap(3, 1, 1, data=[-1, 0, -1]).to_msg_like())
        >>> cm.get_number_of_unknown_neighbors(1)
        2
        """
        grid = self.grid
        return sum(
            grid.is_unknown(nx, ny) for nx, ny in grid.neighbours(*grid.index_to_cell(index))
        )

    def has_at_least_n_unknown_neighbors(self, index: int, n: int) -> bool:
        """Whether at least ``n`` neighbours of cell ``index`` are unknown.

        Examples
        --------
        >>> cm = MaesCostmap(); cm.update_costmap(GridMap(3, 1, 1, data=[-1, 0, -1]).to_msg_like())
        >>> cm.has_at_least_n_unknown_neighbors(1, 2)
        True
        """
        return self.get_number_of_unknown_neighbors(index) >= n
