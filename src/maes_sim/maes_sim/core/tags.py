"""Environment tags: short texts robots leave at their position for others to read (MAES 3.2).

Each tag is a :class:`~maes_sim.core.state.TagView` (message text, world position in tiles, the
sender's namespace, the deposit tick), created once and shared by every state that shows it.

A tag is placed at the depositing robot's true position and can be read by any robot within
``environment_tag_read_range`` tiles (no line of sight needed, as in MAES).
"""

from __future__ import annotations

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit

from .comms import check_message, robot_name
from .neighbors import pairs_within_finite
from .state import TagView, Vector2D

#: Tags one robot may deposit per logic tick.
MAX_TAGS_PER_TICK = 5
#: Tags the whole simulation keeps; deposits beyond it are refused (memory stays bounded).
MAX_TAGS_TOTAL = 1_000_000


class TagStore:
    """All tags of a simulation, with positions kept as an array for range queries."""

    def __init__(self, n_robots: int) -> None:
        self._grid_pos = np.empty((0, 2), dtype=np.float64)
        self._chunks: list[np.ndarray] = []
        self.tags: list[TagView] = []  # immutable: shared by every state that shows them
        self.deposited_this_tick = np.zeros(n_robots, dtype=np.int64)
        self._senders: list[int] = []  # robot index of every tag, in deposit order
        self._tick_start = 0  # index of the first tag deposited since the last new_tick()
        self._objects: np.ndarray | None = None  # self.tags as an object array, for nearby()

    def __len__(self) -> int:
        return len(self.tags)

    @property
    def grid_positions(self) -> np.ndarray:
        """Grid coordinates (T, 2) of every tag, in deposit order."""
        if self._chunks:
            self._grid_pos = np.concatenate([self._grid_pos, *self._chunks])
            self._chunks = []
        return self._grid_pos

    def deposit(
        self, robot: int, text: str, grid_xy: np.ndarray, world_xy: np.ndarray, tick: int
    ) -> str | None:
        """Add a tag; returns why it was refused, or None when it was placed."""
        problem = check_message(text)
        if problem is not None:
            return problem
        if self.deposited_this_tick[robot] >= MAX_TAGS_PER_TICK:
            return f"robot {robot} already deposited {MAX_TAGS_PER_TICK} tags this tick"
        if len(self.tags) >= MAX_TAGS_TOTAL:
            return f"the simulation already holds the maximum of {MAX_TAGS_TOTAL} tags"
        self.deposited_this_tick[robot] += 1
        self._senders.append(int(robot))
        # a copy: the caller's array may be a view of positions that move on
        self._chunks.append(np.array(grid_xy, dtype=np.float64).reshape(1, 2))
        self.tags.append(
            TagView(
                msg=text,
                pos=Vector2D(float(world_xy[0]), float(world_xy[1])),
                sender=robot_name(robot),
                tick=int(tick),
            )
        )
        return None

    def settle_tick(self) -> None:
        """Put the tags deposited since the last :meth:`new_tick` in robot order (stable).

        Deposits of one tick may arrive in any order (over ROS, each robot's request travels
        on its own); ordering them by robot makes every later read the same whatever that
        order was. The simulation calls this before it steps.
        """
        start, end = self._tick_start, len(self.tags)
        if end - start < 2:
            return
        order = sorted(range(start, end), key=self._senders.__getitem__)
        if order == list(range(start, end)):
            return
        pos = self.grid_positions
        self._grid_pos = np.concatenate([pos[:start], pos[order]])
        self.tags[start:] = [self.tags[k] for k in order]
        self._objects = None
        self._senders[start:] = [self._senders[k] for k in order]

    def new_tick(self) -> None:
        """Reset the per-tick deposit counters."""
        if self._tick_start != len(self.tags):  # else none was raised: every deposit adds a tag
            self.deposited_this_tick[:] = 0
            self._tick_start = len(self.tags)

    def nearby(
        self, positions: np.ndarray, read_range: float, limit: int | None = None
    ) -> list[list[TagView]]:
        """Tags within ``read_range`` of each robot at ``positions`` (N, 2) grid coords.

        Each robot's list is in deposit order. With ``limit``, a robot with more tags in range
        gets the ``limit`` nearest (ties: the earlier deposited), still in deposit order.

        Examples
        --------
        >>> store = TagStore(2)
        >>> store.deposit(0, "here", np.array([1.0, 1.0]), np.array([-2.0, -2.0]), 5)
        >>> [[t.msg for t in ts] for ts in store.nearby(np.array([[1.5, 1], [9, 9]]), 2.0)]
        [['here'], []]
        >>> store.new_tick()
        >>> store.deposit(0, "there", np.array([3.0, 1.0]), np.array([0.0, -2.0]), 6)
        >>> [[t.msg for t in ts] for ts in store.nearby(np.array([[2.8, 1]]), 5.0, limit=1)]
        [['there']]
        """
        if not self.tags:
            return [[] for _ in range(len(positions))]
        # the robots' and the tags' positions are the simulation's own: finite
        ia, ib, dist = pairs_within_finite(positions, self.grid_positions, read_range)
        bounds = np.searchsorted(ia, np.arange(len(positions) + 1))
        # (no robot has more than ``limit`` when all the pairs together are not more)
        many = len(ia) and limit is not None and len(ia) > limit
        if many and int(np.diff(bounds).max()) > limit:
            keep = _nearest_of_each(bounds, dist, int(limit))
            ia, ib = ia[keep], ib[keep]
            bounds = np.searchsorted(ia, np.arange(len(positions) + 1))
        # ia is sorted: each robot's tags are one run of the pairs, cut out by slicing
        if self._objects is None or len(self._objects) != len(self.tags):
            self._objects = np.empty(len(self.tags), dtype=object)
            self._objects[:] = self.tags
        picked = self._objects[ib].tolist()
        cuts = bounds.tolist()
        return [picked[lo:hi] for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]


@njit(**JIT_OPTIONS)
def _nearest_of_each(bounds, dist, limit):
    # The pairs of query i are bounds[i]:bounds[i + 1], in deposit order. Of a query with more
    # than ``limit`` of them, keep the ``limit`` nearest, ties to the earlier deposited (what
    # the first ``limit`` of a stable sort of its distances would be), in their own order: all
    # nearer than the limit-th smallest distance, then the earliest at exactly that distance.
    keep = np.ones(dist.shape[0], dtype=np.bool_)
    for i in range(bounds.shape[0] - 1):
        lo = bounds[i]
        hi = bounds[i + 1]
        if hi - lo > limit:
            if limit <= 0:
                keep[lo:hi] = False
                continue
            cut = np.partition(dist[lo:hi], limit - 1)[limit - 1]
            below = 0
            for k in range(lo, hi):
                if dist[k] < cut:
                    below += 1
            room = limit - below  # >= 1: the places left for pairs at exactly ``cut``
            for k in range(lo, hi):
                d = dist[k]
                if d > cut:
                    keep[k] = False
                elif d == cut:
                    if room > 0:
                        room -= 1
                    else:
                        keep[k] = False
    return keep
