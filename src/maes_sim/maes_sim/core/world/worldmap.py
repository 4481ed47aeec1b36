"""The ``WorldMap`` value type shared by the generators, the importers and spawning.

Conventions follow :mod:`maes_sim.core.grid`: ``walls[iy, ix]`` is a bool (H, W) array with row 0 at
the bottom of the map.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from maes_common.jit import njit


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


def _label_dtype(count: int) -> np.dtype:
    for dtype in (np.uint8, np.uint16, np.uint32):
        if count <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


class Regions(Sequence):
    """Disjoint regions of a map (rooms or hallways) held as one label array.

    Region ``k`` is the bool (H, W) mask ``labels == k + 1`` (0: no region), made when indexed,
    so a map with thousands of rooms takes memory for one array, not one mask per room. It
    behaves as a read-only sequence of masks (``len``, indexing, iteration, ``+`` gives a tuple,
    ``==`` compares with a tuple or list of masks).

    Parameters
    ----------
    labels : np.ndarray
        Integer (H, W), 0 = none, 1..K = region. Stored as a read-only copy in the smallest
        unsigned type that holds K.
    count : int
        K, the number of regions (every label in 1..K must be used).

    Examples
    --------
    >>> rooms = Regions(np.array([[1, 0, 2], [1, 0, 2]]), 2)
    >>> len(rooms), rooms[1].tolist(), rooms.sizes.tolist()
    (2, [[False, False, True], [False, False, True]], [2, 2])
    """

    def __init__(self, labels: np.ndarray, count: int) -> None:
        labels = np.asarray(labels)
        if labels.ndim != 2 or labels.dtype.kind not in "iu":
            raise MapError(f"region labels must be a 2-D integer array, got {labels.dtype}")
        count = int(count)
        store = np.array(labels, dtype=_label_dtype(count), copy=True)
        sizes = np.bincount(store.ravel(), minlength=count + 1)
        if sizes.size != count + 1 or (count and not sizes[1:].all()) or labels.min(initial=0) < 0:
            raise MapError(f"region labels must use exactly the values 0..{count}")
        store.flags.writeable = False
        self._labels, self._count, self._sizes = store, count, sizes[1:].astype(np.int64)

    @classmethod
    def from_masks(cls, masks: Sequence[np.ndarray], shape: tuple[int, int], what: str) -> Regions:
        """Regions from bool (H, W) masks, which must not overlap (``what`` names them)."""
        if isinstance(masks, Regions):
            if masks.shape != shape:
                raise MapError(f"{what} has shape {masks.shape}, expected {shape} like the walls")
            return masks
        labels = np.zeros(shape, dtype=_label_dtype(len(masks)))
        for k, mask in enumerate(masks):
            m = _readonly_mask(mask, shape, f"{what}[{k}]")
            if (labels[m] != 0).any():
                raise MapError(f"{what}[{k}] overlaps an earlier one; regions must be disjoint")
            labels[m] = k + 1
        regions = cls.__new__(cls)  # an empty mask is kept as a region of size 0
        labels.flags.writeable = False
        sizes = np.bincount(labels.ravel(), minlength=len(masks) + 1)[1:].astype(np.int64)
        regions._labels, regions._count, regions._sizes = labels, len(masks), sizes
        return regions

    @property
    def labels(self) -> np.ndarray:
        """Read-only (H, W) labels: 0 none, k + 1 for region k."""
        return self._labels

    @property
    def sizes(self) -> np.ndarray:
        """int64 (K,): tiles of each region."""
        return self._sizes

    @property
    def shape(self) -> tuple[int, int]:
        """``(H, W)`` of the map."""
        return (int(self._labels.shape[0]), int(self._labels.shape[1]))

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self[i] for i in range(*k.indices(self._count)))
        k = int(k)
        if k < 0:
            k += self._count
        if not 0 <= k < self._count:
            raise IndexError(f"region index {k} out of range (0..{self._count - 1})")
        mask = self._labels == k + 1
        mask.flags.writeable = False
        return mask

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[k] for k in range(self._count))

    def __add__(self, other):
        return tuple(self) + tuple(other)

    def __radd__(self, other):
        return tuple(other) + tuple(self)

    def __eq__(self, other) -> bool:
        if isinstance(other, Regions):
            return self._count == other._count and np.array_equal(self._labels, other._labels)
        if isinstance(other, tuple | list):
            return len(other) == self._count and all(
                np.array_equal(a, b) for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Regions({self._count} regions on a {self.shape[0]}x{self.shape[1]} map)"

    def padded(self, border: int) -> Regions:
        """The same regions on the map grown by ``border`` tiles on every side."""
        regions = Regions.__new__(Regions)
        labels = np.pad(self._labels, border, mode="constant", constant_values=0)
        labels.flags.writeable = False
        regions._labels, regions._count, regions._sizes = labels, self._count, self._sizes
        return regions


@njit(cache=True)
def _relabel(ids: np.ndarray, lut: np.ndarray, border: int) -> tuple[np.ndarray, np.ndarray]:
    # lut[ids + 1] on a map grown by ``border`` zeros on every side, and how many tiles take
    # each value: one pass over the map instead of numpy's index, copy, bincount and pad.
    h, w = ids.shape
    out = np.zeros((h + 2 * border, w + 2 * border), dtype=lut.dtype)
    counts = np.zeros(lut.shape[0] + 1, dtype=np.int64)
    for y in range(h):
        for x in range(w):
            v = lut[ids[y, x] + 1]
            out[y + border, x + border] = v
            counts[v] += 1
    return out, counts


def ranked_regions(ids: np.ndarray, order: Sequence[int] | np.ndarray, border: int = 0) -> Regions:
    """Regions from an id array (-1 none, 0..M-1 ids), keeping ids ``order`` in that order.

    Region ``j`` of the result is the tiles whose id is ``order[j]``; ids not in ``order`` are
    dropped. ``border`` grows the map by that many tiles on every side (as ``.padded``).

    Examples
    --------
    >>> ids = np.array([[0, -1, 1, 2]])
    >>> ranked_regions(ids, [2, 0]).labels.tolist()
    [[2, 0, 0, 1]]
    >>> ranked_regions(ids, [2, 0], border=1).shape
    (3, 6)
    """
    ids = np.ascontiguousarray(ids)
    order = np.asarray(order, dtype=np.int64)
    top = int(ids.max(initial=-1))
    # One lut type (uint32) for every count, so the kernel has one compiled version (the
    # ones compile_kernels.py makes on small maps), then the smallest type that holds them.
    lut = np.zeros(max(top, int(order.max(initial=-1))) + 2, dtype=np.uint32)
    lut[order + 1] = np.arange(1, order.size + 1)
    labels, counts = _relabel(ids, lut, int(border))
    labels = labels.astype(_label_dtype(order.size), copy=False)
    sizes = counts[: order.size + 1]
    if order.size and not sizes[1:].all():
        raise MapError(f"region labels must use exactly the values 0..{order.size}")
    regions = Regions.__new__(Regions)  # labels are fresh and checked: no copy as __init__
    labels.flags.writeable = False
    regions._labels, regions._count, regions._sizes = labels, int(order.size), sizes[1:].copy()
    return regions


@dataclass(frozen=True, eq=False)
class WorldMap:
    """A tile map with the rooms and hallways the generator knows about.

    Parameters
    ----------
    walls : np.ndarray
        bool (H, W), ``walls[iy, ix]``, row 0 = bottom. True = wall.
    rooms : Regions or sequence of np.ndarray
        Disjoint bool (H, W) masks, largest first, stored as :class:`Regions` (one label array;
        a mask is made when indexed). Caves: the open regions that survived clean-up (before the
        connecting passages were cut). Buildings: the rooms (not the hallways). Imported maps:
        the largest 4-connected open region.
    hallways : Regions or sequence of np.ndarray
        Disjoint masks of the hallways (buildings only; empty otherwise), largest first.
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
        rooms = Regions.from_masks(self.rooms, walls.shape, "rooms")
        halls = Regions.from_masks(self.hallways, walls.shape, "hallways")
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
