"""Occupancy-grid helper: index <-> cell <-> world position, and cell state tests.

Pure Python + numpy: no rclpy, no message import. A :class:`GridMap` is built from the fields a
``nav_msgs/OccupancyGrid`` carries, either given one by one or read from any object shaped like
the message (:meth:`GridMap.from_msg`): a real ROS message, or a stand-in in direct mode.

Conventions (those of ``nav_msgs/OccupancyGrid``)
    ``data`` is row-major from the origin: ``index = iy * width + ix``; cell ``(ix, iy)`` covers
    ``[origin_x + ix * resolution, origin_x + (ix + 1) * resolution)`` in x, likewise in y
    (origin yaw is taken as 0). World positions of cells are their *centres*.
    Values: -1 unknown, 0..100 occupancy probability (map) or cost (Nav2 costmap: 0 free,
    1..98 inflated, 99 inscribed, 100 lethal).

Cell states (a partition of every cell)
    unknown: value < 0; occupied: value >= ``occupied_threshold`` (default 65, map_server's
    ``occupied_thresh: 0.65`` and MAES 2.0's frontier test); free: every other known cell. On a Nav2
    costmap "free" therefore includes inflated cells below 65; use
    :func:`maes_controller.navigation.planning.traversable_mask` for where a robot centre may go.

MAES 2.0 compatibility
    The controller's ``global_costmap`` is a :class:`maes_controller.maes_compat.MaesCostmap`: it
    holds the latest message, has MAES 2.0's method names and forwards every :class:`GridMap`
    method.
"""

from __future__ import annotations

import math
from array import array as _array
from collections.abc import Callable, Hashable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

#: Value of an unknown cell.
UNKNOWN = -1
#: Cost of a cell the robot centre may always occupy.
FREE = 0
#: Nav2's "inscribed inflated obstacle": the robot centre here makes it touch an obstacle.
INSCRIBED = 99
#: Nav2's "lethal obstacle": the cell itself is an obstacle.
LETHAL = 100
#: Default threshold of :meth:`GridMap.is_occupied` (map_server's ``occupied_thresh: 0.65``).
OCCUPIED_THRESHOLD = 65

# Neighbour offsets: the 4 edge neighbours first (E, N, W, S), then the diagonals (NE, NW, SW, SE).
_OFFSETS_8 = ((1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1))


class GridMap:
    """An immutable occupancy grid with coordinate conversions and cell tests.

    Parameters
    ----------
    width, height : int
        Size in cells (``info.width``, ``info.height``).
    resolution : float
        Metres (or tiles) per cell (``info.resolution``), > 0.
    origin_x, origin_y : float
        World position of the outer corner of cell (0, 0) (``info.origin.position``).
    data : sequence of int, optional
        ``width * height`` values, row-major from the origin, each -1 or 0..100. Default: all
        unknown. Copied.
    occupied_threshold : int, optional
        Values at or above it are occupied (1..100, default 65).

    Examples
    --------
    >>> g = GridMap(3, 2, 0.5, -0.75, -0.5, [0, 0, 100, -1, 0, 0])
    >>> g.array.shape
    (2, 3)
    >>> g.cell_to_pos(2, 0)
    (0.5, -0.25)
    >>> g.is_occupied(2, 0), g.is_unknown(0, 1), g.is_free(1, 1)
    (True, True, True)
    """

    def __init__(
        self,
        width: int,
        height: int,
        resolution: float,
        origin_x: float = 0.0,
        origin_y: float = 0.0,
        data: Sequence[int] | np.ndarray | None = None,
        *,
        occupied_threshold: int = OCCUPIED_THRESHOLD,
    ) -> None:
        for name, value in (("width", width), ("height", height)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not (isinstance(resolution, (int, float, np.number)) and 0 < resolution < math.inf):
            raise ValueError(f"resolution must be a finite number > 0, got {resolution!r}")
        for name, value in (("origin_x", origin_x), ("origin_y", origin_y)):
            if not (isinstance(value, (int, float, np.number)) and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if not (
            isinstance(occupied_threshold, (int, np.integer)) and 1 <= occupied_threshold <= 100
        ):
            raise ValueError(
                f"occupied_threshold must be an int in 1..100, got {occupied_threshold!r}"
            )
        self._width = int(width)
        self._height = int(height)
        self._resolution = float(resolution)
        self._origin_x = float(origin_x)
        self._origin_y = float(origin_y)
        self._threshold = int(occupied_threshold)
        n = self._width * self._height
        if data is None:
            flat = np.full(n, UNKNOWN, dtype=np.int8)
        else:
            raw = np.asarray(data)
            if raw.ndim != 1 or raw.size != n:
                raise ValueError(
                    f"data must hold width * height = {self._width} * {self._height} = {n} "
                    f"values, got shape {raw.shape}"
                )
            if raw.size and raw.dtype.kind not in "iu":
                raise TypeError(f"data must hold integers, got dtype {raw.dtype}")
            if raw.size and (raw.min() < -1 or raw.max() > 100):
                bad = int(np.flatnonzero((raw < -1) | (raw > 100))[0])
                raise ValueError(
                    f"data values must be -1 or 0..100, data[{bad}] = {raw[bad].item()}"
                )
            flat = raw.astype(np.int8)  # astype copies: later edits of the message don't leak in
        flat.flags.writeable = False
        self._data = flat
        self._derived: dict[Hashable, Any] = {}

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_msg(cls, msg: Any, *, occupied_threshold: int = OCCUPIED_THRESHOLD) -> GridMap:
        """Build from a ``nav_msgs/OccupancyGrid`` or any object with the same attributes.

        Only reads ``msg.info.width``, ``msg.info.height``, ``msg.info.resolution``,
        ``msg.info.origin.position.x``/``.y`` and ``msg.data``; never imports ROS.

        Examples
        --------
        >>> from types import SimpleNamespace as NS
        >>> info = NS(width=2, height=1, resolution=1.0, origin=NS(position=NS(x=-1.0, y=-0.5)))
        >>> GridMap.from_msg(NS(info=info, data=[0, -1])).is_unknown(1, 0)
        True
        """
        try:
            info = msg.info
            pos = info.origin.position
            fields = (info.width, info.height, info.resolution, pos.x, pos.y, msg.data)
        except AttributeError as err:
            raise TypeError(f"from_msg needs an OccupancyGrid-like object: {err}") from None
        width, height, resolution, ox, oy, data = fields
        return cls(width, height, resolution, ox, oy, data, occupied_threshold=occupied_threshold)

    @classmethod
    def from_array(
        cls,
        array: np.ndarray,
        resolution: float = 1.0,
        origin_x: float = 0.0,
        origin_y: float = 0.0,
        *,
        occupied_threshold: int = OCCUPIED_THRESHOLD,
    ) -> GridMap:
        """Build from an (H, W) array of values, ``array[iy, ix]``, row 0 at the origin.

        Examples
        --------
        >>> GridMap.from_array(np.array([[0, 100]])).is_occupied(1, 0)
        True
        """
        arr = np.asarray(array)
        if arr.ndim != 2:
            raise ValueError(f"array must have shape (H, W), got {arr.shape}")
        h, w = arr.shape
        return cls(
            w, h, resolution, origin_x, origin_y, arr.ravel(), occupied_threshold=occupied_threshold
        )

    # -- fields -------------------------------------------------------------------------------

    @property
    def width(self) -> int:
        """Number of columns (cells along x)."""
        return self._width

    @property
    def height(self) -> int:
        """Number of rows (cells along y)."""
        return self._height

    @property
    def resolution(self) -> float:
        """Cell side length in world units."""
        return self._resolution

    @property
    def origin_x(self) -> float:
        """World x of the outer corner of cell (0, 0)."""
        return self._origin_x

    @property
    def origin_y(self) -> float:
        """World y of the outer corner of cell (0, 0)."""
        return self._origin_y

    @property
    def occupied_threshold(self) -> int:
        """Values at or above this are occupied."""
        return self._threshold

    @property
    def shape(self) -> tuple[int, int]:
        """``(height, width)``, the shape of :attr:`array`."""
        return self._height, self._width

    @property
    def data(self) -> np.ndarray:
        """Read-only flat int8 values (``width * height``,), in message order."""
        return self._data

    @property
    def array(self) -> np.ndarray:
        """Read-only int8 (H, W) view of :attr:`data`, indexed ``array[iy, ix]``."""
        return self._data.reshape(self._height, self._width)

    def derived(self, key: Hashable, compute: Callable[[GridMap], Any]) -> Any:
        """``compute(self)``, computed once per ``key`` and kept with this grid.

        A grid never changes, so what is computed from it (a costmap, a frontier mask) holds as
        long as the grid does. Robots handed the same grid object (direct mode gives the robots
        that share a SLAM map one grid) compute it once between them. ``compute`` must be a
        pure function of the grid, the same for every caller using ``key``; do not modify what
        it returns.

        Examples
        --------
        >>> g = GridMap(2, 1, 1.0, data=[0, 100])
        >>> calls = []
        >>> def occupied(grid):
        ...     calls.append(1)
        ...     return int((grid.array >= 65).sum())
        >>> g.derived("occupied", occupied), g.derived("occupied", occupied), len(calls)
        (1, 1, 1)
        """
        try:
            return self._derived[key]
        except KeyError:
            value = self._derived[key] = compute(self)
            return value

    def __repr__(self) -> str:
        return (
            f"GridMap(width={self._width}, height={self._height}, resolution={self._resolution}, "
            f"origin=({self._origin_x}, {self._origin_y}))"
        )

    # -- conversions --------------------------------------------------------------------------

    def in_bounds(self, ix: int, iy: int) -> bool:
        """Whether cell ``(ix, iy)`` lies in the grid.

        Examples
        --------
        >>> g = GridMap(3, 2, 1.0)
        >>> g.in_bounds(2, 1), g.in_bounds(3, 0), g.in_bounds(0, -1)
        (True, False, False)
        """
        return 0 <= ix < self._width and 0 <= iy < self._height

    def _check_cell(self, ix: int, iy: int) -> None:
        if not self.in_bounds(ix, iy):
            raise IndexError(f"cell ({ix}, {iy}) is outside the {self._width}x{self._height} grid")

    def _check_index(self, index: int) -> None:
        if not 0 <= index < self._data.size:
            raise IndexError(f"index {index} is outside 0..{self._data.size - 1}")

    def cell_to_index(self, ix: int, iy: int) -> int:
        """Flat ``data`` index of cell ``(ix, iy)``.

        Examples
        --------
        >>> GridMap(3, 2, 1.0).cell_to_index(1, 1)
        4
        """
        self._check_cell(ix, iy)
        return iy * self._width + ix

    def index_to_cell(self, index: int) -> tuple[int, int]:
        """Cell ``(ix, iy)`` of a flat ``data`` index.

        Examples
        --------
        >>> GridMap(3, 2, 1.0).index_to_cell(4)
        (1, 1)
        """
        self._check_index(index)
        iy, ix = divmod(int(index), self._width)
        return ix, iy

    def cell_to_pos(self, ix: int, iy: int) -> tuple[float, float]:
        """World position of the centre of cell ``(ix, iy)`` (cells outside the grid allowed).

        Examples
        --------
        >>> GridMap(4, 4, 0.5, -1.0, -1.0).cell_to_pos(0, 3)
        (-0.75, 0.75)
        """
        return (
            self._origin_x + (ix + 0.5) * self._resolution,
            self._origin_y + (iy + 0.5) * self._resolution,
        )

    def pos_to_cell(self, x: float, y: float) -> tuple[int, int]:
        """Cell containing world position ``(x, y)``, possibly outside the grid (:meth:`in_bounds`).

        Examples
        --------
        >>> GridMap(4, 4, 0.5, -1.0, -1.0).pos_to_cell(-0.01, 0.0)
        (1, 2)
        """
        return (
            math.floor((x - self._origin_x) / self._resolution),
            math.floor((y - self._origin_y) / self._resolution),
        )

    def index_to_pos(self, index: int) -> tuple[float, float]:
        """World position of the centre of the cell at flat ``index``.

        Examples
        --------
        >>> GridMap(2, 2, 1.0, -1.0, -1.0).index_to_pos(3)
        (0.5, 0.5)
        """
        return self.cell_to_pos(*self.index_to_cell(index))

    def pos_to_index(self, x: float, y: float) -> int:
        """Flat index of the cell containing ``(x, y)``; raises ``IndexError`` outside the grid.

        Examples
        --------
        >>> GridMap(2, 2, 1.0, -1.0, -1.0).pos_to_index(0.2, -0.3)
        1
        """
        return self.cell_to_index(*self.pos_to_cell(x, y))

    def cells_to_pos(self, cells: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`cell_to_pos`: int (K, 2) ``(ix, iy)`` -> float (K, 2) ``(x, y)``.

        Examples
        --------
        >>> GridMap(2, 2, 1.0, -1.0, -1.0).cells_to_pos(np.array([[0, 0], [1, 1]]))
        array([[-0.5, -0.5],
               [ 0.5,  0.5]])
        """
        c = np.asarray(cells, dtype=np.float64)
        return np.array([self._origin_x, self._origin_y]) + (c + 0.5) * self._resolution

    def pos_to_cells(self, positions: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`pos_to_cell`: float (K, 2) -> int64 (K, 2), possibly out of bounds.

        Examples
        --------
        >>> GridMap(2, 2, 1.0, -1.0, -1.0).pos_to_cells(np.array([[-0.5, 0.9]]))
        array([[0, 1]])
        """
        p = np.asarray(positions, dtype=np.float64)
        origin = np.array([self._origin_x, self._origin_y])
        return np.floor((p - origin) / self._resolution).astype(np.int64)

    # -- cell states --------------------------------------------------------------------------

    def value(self, ix: int, iy: int) -> int:
        """Raw value of cell ``(ix, iy)``: -1 unknown or 0..100.

        Examples
        --------
        >>> GridMap(2, 1, 1.0, data=[7, -1]).value(0, 0)
        7
        """
        self._check_cell(ix, iy)
        return int(self._data[iy * self._width + ix])

    def is_unknown(self, ix: int, iy: int) -> bool:
        """Whether cell ``(ix, iy)`` is unknown (value -1).

        Examples
        --------
        >>> GridMap(2, 1, 1.0, data=[0, -1]).is_unknown(1, 0)
        True
        """
        return self.value(ix, iy) < 0

    def is_occupied(self, ix: int, iy: int) -> bool:
        """Whether cell ``(ix, iy)`` is occupied (value >= :attr:`occupied_threshold`).

        Examples
        --------
        >>> GridMap(2, 1, 1.0, data=[64, 65]).is_occupied(1, 0)
        True
        """
        return self.value(ix, iy) >= self._threshold

    def is_free(self, ix: int, iy: int) -> bool:
        """Whether cell ``(ix, iy)`` is known and not occupied.

        Examples
        --------
        >>> GridMap(2, 1, 1.0, data=[64, 65]).is_free(0, 0)
        True
        """
        return 0 <= self.value(ix, iy) < self._threshold

    def unknown_mask(self) -> np.ndarray:
        """Bool (H, W): unknown cells.

        Examples
        --------
        >>> GridMap(2, 1, 1.0, data=[0, -1]).unknown_mask()
        array([[False,  True]])
        """
        return self.array < 0

    def occupied_mask(self) -> np.ndarray:
        """Bool (H, W): occupied cells.

        Examples
        --------
        >>> GridMap(2, 1, 1.0, data=[0, 100]).occupied_mask()
        array([[False,  True]])
        """
        return self.array >= self._threshold

    def free_mask(self) -> np.ndarray:
        """Bool (H, W): known, unoccupied cells.

        Examples
        --------
        >>> GridMap(3, 1, 1.0, data=[0, 100, -1]).free_mask()
        array([[ True, False, False]])
        """
        arr = self.array
        return (arr >= 0) & (arr < self._threshold)

    def neighbours(self, ix: int, iy: int, connectivity: int = 8) -> list[tuple[int, int]]:
        """In-grid neighbour cells of ``(ix, iy)``.

        Order: east, north, west, south, then (8-connectivity) NE, NW, SW, SE.

        Examples
        --------
        >>> GridMap(3, 3, 1.0).neighbours(0, 0, connectivity=4)
        [(1, 0), (0, 1)]
        >>> len(GridMap(3, 3, 1.0).neighbours(1, 1))
        8
        """
        if connectivity not in (4, 8):
            raise ValueError(f"connectivity must be 4 or 8, got {connectivity!r}")
        self._check_cell(ix, iy)
        return [
            (ix + dx, iy + dy)
            for dx, dy in _OFFSETS_8[:connectivity]
            if self.in_bounds(ix + dx, iy + dy)
        ]

    def iter_cells(self) -> Iterator[tuple[int, int]]:
        """All cells ``(ix, iy)`` in ``data`` order.

        Examples
        --------
        >>> list(GridMap(2, 2, 1.0).iter_cells())[:3]
        [(0, 0), (1, 0), (0, 1)]
        """
        for iy in range(self._height):
            for ix in range(self._width):
                yield ix, iy

    def to_msg_like(self, frame_id: str = "map") -> SimpleNamespace:
        """An object with the attributes of a ``nav_msgs/OccupancyGrid`` holding this grid.

        For direct mode (no ROS): code written against the message (``msg.info.width``,
        ``msg.data``, ...) reads it unchanged. ``data`` is an ``array('b')``, as in rclpy;
        ``header.stamp`` and ``info.map_load_time`` are zero ``sec``/``nanosec`` pairs.

        Examples
        --------
        >>> msg = GridMap(2, 1, 0.5, -0.5, -0.25, [0, 100]).to_msg_like()
        >>> msg.info.width, msg.info.origin.position.x, list(msg.data)
        (2, -0.5, [0, 100])
        >>> GridMap.from_msg(msg).is_occupied(1, 0)
        True
        """
        ns = SimpleNamespace
        stamp = ns(sec=0, nanosec=0)
        origin = ns(
            position=ns(x=self._origin_x, y=self._origin_y, z=0.0),
            orientation=ns(x=0.0, y=0.0, z=0.0, w=1.0),
        )
        info = ns(
            map_load_time=stamp,
            resolution=self._resolution,
            width=self._width,
            height=self._height,
            origin=origin,
        )
        header = ns(stamp=ns(sec=0, nanosec=0), frame_id=frame_id)
        return ns(header=header, info=info, data=_array("b", self._data.tobytes()))
