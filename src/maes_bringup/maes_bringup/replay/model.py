"""What a replay shows, independent of where it came from: the map, frames, trails and tags.

Everything is in grid coordinates (tiles, origin at the corner of tile (0, 0), row 0 at the
bottom; see ``maes_sim.core.grid``), as the result pictures use, so the two share one drawing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from maes_sim.core import Simulation, robot_name

#: Frames a replay keeps by default; longer runs are subsampled (every 2nd, 4th, ... tick).
MAX_FRAMES = 150
#: Frames a replay served to the web page keeps at most (its slider's steps).
SERVE_FRAMES = 1500


@dataclass
class ReplayFrame:
    """One moment of a run.

    Attributes
    ----------
    tick : int
    sim_time : float
        Simulated seconds.
    positions : ndarray, shape (N, 2)
        Robots' true positions (grid coordinates); NaN where unknown.
    explored_bits : ndarray of uint8 or None
        ``np.packbits`` of the (H, W) explored mask (tiles any lidar has seen), None if unknown.
    links : ndarray of int, shape (K, 2)
        (sender, receiver) of the broadcasts delivered since the previous frame.
    exploration_percent : float or None
    obstacles : ndarray, shape (K, 5), or None
        Moving obstacles at this tick (``maes_sim.core.obstacles.Obstacles.shapes``: rows
        ``kind (0 disc, 1 box), x, y, a, b`` in grid coordinates); None: none, or unknown.
    headings : ndarray, shape (N,), or None
        Robots' true headings (radians, counter-clockwise from +x); NaN or None where unknown.
    coverage_percent : float or None
    """

    tick: int
    sim_time: float
    positions: np.ndarray
    explored_bits: np.ndarray | None = None
    links: np.ndarray = field(default_factory=lambda: np.empty((0, 2), dtype=np.int64))
    exploration_percent: float | None = None
    obstacles: np.ndarray | None = None
    headings: np.ndarray | None = None
    coverage_percent: float | None = None

    def explored(self, shape: tuple[int, int]) -> np.ndarray | None:
        """The (H, W) bool explored mask, or None when the source had none."""
        if self.explored_bits is None:
            return None
        return (
            np.unpackbits(self.explored_bits, count=shape[0] * shape[1]).astype(bool).reshape(shape)
        )


@dataclass
class Replay:
    """A run to animate.

    Attributes
    ----------
    walls : ndarray of bool, shape (H, W)
        Row 0 at the bottom.
    tile_size : float
        Metres per tile.
    title : str
        Map, robots and seed, for the picture's title.
    frames : list of ReplayFrame
        Ascending ticks.
    trail_ticks : ndarray, shape (T,)
    trail : ndarray, shape (N, T, 2)
        Robots' positions at ``trail_ticks`` (grid coordinates), finer than the frames.
    tags : ndarray, shape (G, 2)
        Environment tags' positions (grid coordinates).
    tag_ticks : ndarray, shape (G,)
        The tick each tag was deposited.
    radii : ndarray, shape (N,), optional
        Robot radii, tiles (robot types: robots drawn at their relative sizes); None: all alike.
    types : list of str, optional
        Each robot's type name (robot types); None: unknown.
    tick_duration : float or None
        Simulated seconds per tick, where known.
    """

    walls: np.ndarray
    tile_size: float
    title: str
    frames: list[ReplayFrame]
    trail_ticks: np.ndarray
    trail: np.ndarray
    tags: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))
    tag_ticks: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    radii: np.ndarray | None = None
    types: list[str] | None = None
    tick_duration: float | None = None

    @property
    def n_robots(self) -> int:
        """Number of robots."""
        return int(self.trail.shape[0])


def thin_frames(frames: list[ReplayFrame], max_frames: int) -> list[ReplayFrame]:
    """At most ``max_frames`` of ``frames``, evenly spread, first and last kept; the broadcasts
    of dropped frames move to the next kept one.

    Examples
    --------
    >>> fs = [ReplayFrame(t, t / 10, np.zeros((1, 2))) for t in range(10)]
    >>> [f.tick for f in thin_frames(fs, 4)]
    [0, 3, 6, 9]
    """
    if len(frames) <= max_frames:
        return list(frames)
    keep = set(np.round(np.linspace(0, len(frames) - 1, max(max_frames, 2))).astype(int).tolist())
    return _keep(frames, keep)[0]


def _keep(frames: list[ReplayFrame], keep: set[int]) -> tuple[list[ReplayFrame], list[np.ndarray]]:
    """The frames at indices ``keep``, each with the broadcasts of the dropped ones before it,
    and the broadcasts of dropped frames after the last kept one."""
    out: list[ReplayFrame] = []
    carry: list[np.ndarray] = []
    for k, frame in enumerate(frames):
        carry.append(frame.links)
        if k in keep:
            links = np.unique(np.concatenate(carry).reshape(-1, 2), axis=0)
            out.append(dataclasses.replace(frame, links=links))
            carry = []
    return out, [c for c in carry if c.size]


def run_title(map_name: str, n_robots: int, seed: object) -> str:
    """``<map> map, <N> robots, seed <S>`` (seed left out when unknown)."""
    robots = f"{n_robots} robot{'s' if n_robots != 1 else ''}"
    return f"{map_name} map, {robots}" + (f", seed {seed}" if seed is not None else "")


class ReplayRecorder:
    """Collects a direct-mode run's frames: pass it as ``run(..., progress=recorder)``.

    Called after every tick; keeps a frame every ``stride`` ticks, doubling the stride (and
    dropping every other frame) when ``max_frames`` are held, so memory stays bounded for any
    run length. Broadcasts between kept frames are gathered into the next one.

    Parameters
    ----------
    max_frames : int
        Frames held at most (at least 2).
    """

    def __init__(self, max_frames: int = MAX_FRAMES) -> None:
        if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 2:
            raise ValueError(f"max_frames must be an integer >= 2, got {max_frames!r}")
        self.max_frames = max_frames
        self.stride = 1
        self.frames: list[ReplayFrame] = []
        self._pending: list[np.ndarray] = []
        self._delivered = 0
        self._index: dict[str, int] = {}

    def __call__(self, sim: Simulation) -> None:
        """Look at ``sim`` after a tick."""
        delivered = int(sim.mailbox.total_delivered)
        if delivered != self._delivered:  # broadcasts arrived this tick: who heard whom
            self._delivered = delivered
            if not self._index:
                self._index = {robot_name(i): i for i in range(sim.n_robots)}
            pairs = [
                (self._index[b.sender], i)
                for i in range(sim.n_robots)
                for b in sim.robot_state(i).incoming_broadcast_msgs
            ]
            if pairs:
                self._pending.append(np.asarray(pairs, dtype=np.int64))
        if sim.tick % self.stride and not sim.finished:
            return
        if len(self.frames) >= self.max_frames:
            self.stride *= 2
            keep = {k for k, f in enumerate(self.frames) if f.tick % self.stride == 0}
            keep |= {0}  # the first frame stays, whatever its tick
            self.frames, rest = _keep(self.frames, keep)
            self._pending = rest + self._pending
            if sim.tick % self.stride and not sim.finished:
                return
        links = (
            np.unique(np.concatenate(self._pending), axis=0)
            if self._pending
            else np.empty((0, 2), dtype=np.int64)
        )
        self._pending = []
        self.frames.append(
            ReplayFrame(
                tick=sim.tick,
                sim_time=sim.sim_time,
                positions=sim.grid_positions,
                explored_bits=np.packbits(sim.metrics.explored_tick >= 0),
                links=links,
                exploration_percent=sim.exploration_percent,
                obstacles=None if sim.obstacles is None else sim.obstacles.shapes.copy(),
                headings=sim.poses[:, 2],
                coverage_percent=sim.coverage_percent,
            )
        )

    def replay(self, sim: Simulation) -> Replay:
        """The :class:`Replay` of the frames seen, with ``sim``'s map, paths and tags."""
        return Replay(
            walls=np.asarray(sim.walls, dtype=bool),
            tile_size=float(sim.config.world.tile_size),
            title=run_title(sim.world.name, sim.n_robots, sim.seed),
            frames=list(self.frames),
            trail_ticks=sim.trail.ticks,
            trail=sim.trail.positions,
            tags=np.asarray(sim.tags.grid_positions, dtype=np.float64).reshape(-1, 2),
            tag_ticks=np.array([t.tick for t in sim.tags.tags], dtype=np.int64),
            radii=np.array(sim.team.radii),
            types=list(sim.team.names),
            tick_duration=float(sim.tick_duration),
        )
