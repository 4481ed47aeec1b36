"""The ``WorldMap`` value type shared by the generators, the importers and spawning.

Conventions follow :mod:`maes_sim.core.grid`: ``walls[iy, ix]`` is a bool (H, W) array with row 0 at
the bottom of the map.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class MapError(ValueError):
    """A map cannot be generated, read or used (bad file, bad parameter, no room for robots)."""


def _readonly_mask(mask: object, shape: tuple[int, ...] | None, what: str) -> np.ndarray:
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise MapError(f"{what} must be a bool array, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise MapError(f"{what} must be 2-D (H, W), got shape {arr.shape}")
    if shape is not None and arr.shape != shape:
        raise MapError(f"{what} has shape {arr.shape}, expected {shape} like the walls")
    # A private read-only copy: a frozen map must not change under its users' feet.
    arr = np.array(arr, dtype=np.bool_, copy=True)
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class WorldMap:
    """A tile map with the rooms and hallways the generator knows about.

    Parameters
    ----------
    walls : np.ndarray
        bool (H, W), ``walls[iy, ix]``, row 0 = bottom. True = wall.
    rooms : tuple of np.ndarray
        bool (H, W) masks, largest first. Caves: the open regions that survived clean-up (before
        the connecting passages were cut). Buildings: the rooms (not the hallways). Imported maps:
        the largest 4-connected open region.
    hallways : tuple of np.ndarray
        bool (H, W) masks of the hallways (buildings only; empty otherwise), largest first.
    name : str
        Short human-readable name (e.g. ``"cave"`` or the file stem).
    source : str or None
        Path of the file an imported map was read from.
    origin_m : tuple of float or None
        ``(x, y, yaw)`` of the lower-left corner of tile (0, 0) in the source's metric frame
        (Nav2 YAML ``origin``), for reference only: the simulator centres every map on world (0, 0).
    tile_size_m : float or None
        Metres per tile the map was resampled to on import (Nav2 YAML maps only).

    All arrays are stored as read-only copies; copy ``walls`` before editing it.

    Examples
    --------
    >>> walls = np.ones((3, 4), dtype=bool)
    >>> walls[1, 1:3] = False
    >>> world = WorldMap(walls=walls, name="tiny")
    >>> world.shape, world.open_count
    ((3, 4), 2)
    """

    walls: np.ndarray
    rooms: tuple[np.ndarray, ...] = ()
    hallways: tuple[np.ndarray, ...] = ()
    name: str = "map"
    source: str | None = None
    origin_m: tuple[float, float, float] | None = None
    tile_size_m: float | None = None
    _open: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        walls = _readonly_mask(self.walls, None, "walls")
        if walls.shape[0] < 1 or walls.shape[1] < 1:
            raise MapError(f"walls must have at least one tile, got shape {walls.shape}")
        rooms = tuple(
            _readonly_mask(m, walls.shape, f"rooms[{i}]") for i, m in enumerate(self.rooms)
        )
        halls = tuple(
            _readonly_mask(m, walls.shape, f"hallways[{i}]") for i, m in enumerate(self.hallways)
        )
        open_tiles = ~walls
        open_tiles.flags.writeable = False
        object.__setattr__(self, "walls", walls)
        object.__setattr__(self, "rooms", rooms)
        object.__setattr__(self, "hallways", halls)
        object.__setattr__(self, "_open", open_tiles)

    @property
    def shape(self) -> tuple[int, int]:
        """``(H, W)`` of the map in tiles."""
        return (int(self.walls.shape[0]), int(self.walls.shape[1]))

    @property
    def width(self) -> int:
        """Number of tile columns W."""
        return int(self.walls.shape[1])

    @property
    def height(self) -> int:
        """Number of tile rows H."""
        return int(self.walls.shape[0])

    @property
    def open_tiles(self) -> np.ndarray:
        """bool (H, W): True where there is no wall (read-only)."""
        return self._open

    @property
    def open_count(self) -> int:
        """Number of open tiles."""
        return int(self._open.sum())
