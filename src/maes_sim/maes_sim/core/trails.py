"""Robot paths for pictures: positions every few ticks, in bounded memory.

A :class:`Trail` keeps every robot's position at every ``stride``-th tick. When its buffer is
full it keeps every other sample and doubles the stride, so a run of any length costs at most
``capacity`` samples per robot (a one-minute run keeps every tick; a run of 100 000 ticks keeps
one sample in 64). What is kept depends only on the ticks, never on timing: deterministic.
"""

from __future__ import annotations

import numpy as np

#: Samples kept per robot before the stride doubles.
TRAIL_CAPACITY = 2048


class Trail:
    """Positions of ``n_robots`` robots over time (grid coordinates, tiles).

    Parameters
    ----------
    n_robots : int
        Number of robots.
    capacity : int
        Samples per robot before the stride doubles (even, at least 2).

    Examples
    --------
    >>> t = Trail(1, capacity=4)
    >>> for tick in range(9):
    ...     t.record(tick, np.array([[float(tick), 0.0]]))
    >>> t.ticks.tolist(), t.stride
    ([0, 4, 8], 4)
    >>> t.positions[0, :, 0].tolist()
    [0.0, 4.0, 8.0]
    """

    def __init__(self, n_robots: int, capacity: int = TRAIL_CAPACITY) -> None:
        if capacity < 2 or capacity % 2:
            raise ValueError(f"capacity must be an even number >= 2, got {capacity}")
        self.stride = 1
        self._ticks = np.empty(capacity, dtype=np.int64)
        self._xy = np.empty((n_robots, capacity, 2), dtype=np.float32)
        self._size = 0

    def record(self, tick: int, positions: np.ndarray) -> None:
        """Keep ``positions`` (N, 2) for ``tick`` if it falls on the stride.

        A second record for the tick last kept (robots placed by hand) replaces it.
        """
        if self._size and self._ticks[self._size - 1] == tick:
            self._xy[:, self._size - 1] = positions
            return
        if tick % self.stride:
            return
        if self._size == self._ticks.size:  # full: keep the samples on the doubled stride
            self.stride *= 2
            keep = np.flatnonzero(self._ticks % self.stride == 0)
            self._ticks[: keep.size] = self._ticks[keep]
            self._xy[:, : keep.size] = self._xy[:, keep]
            self._size = keep.size
            if tick % self.stride:
                return
        self._ticks[self._size] = tick
        self._xy[:, self._size] = positions
        self._size += 1

    @property
    def ticks(self) -> np.ndarray:
        """The ticks kept, shape (T,), ascending (a copy)."""
        return self._ticks[: self._size].copy()

    @property
    def positions(self) -> np.ndarray:
        """Positions (N, T, 2) in grid coordinates at :attr:`ticks` (a copy)."""
        return self._xy[:, : self._size].copy()

    def since(self, tick: int) -> tuple[np.ndarray, np.ndarray]:
        """The samples kept after ``tick``: ticks (K,) and positions (N, K, 2), copies of the
        tail only (a watcher following a run takes what is new, not the whole trail).

        Examples
        --------
        >>> t = Trail(1)
        >>> for tick in range(4):
        ...     t.record(tick, np.array([[float(tick), 1.0]]))
        >>> ticks, xy = t.since(1)
        >>> ticks.tolist(), xy[0, :, 0].tolist()
        ([2, 3], [2.0, 3.0])
        """
        start = int(np.searchsorted(self._ticks[: self._size], tick, side="right"))
        return self._ticks[start : self._size].copy(), self._xy[:, start : self._size].copy()
