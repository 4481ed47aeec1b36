"""Moving obstacles: discs and boxes on paths, and random walkers (config: ``obstacles``).

The forms and their checks are in :mod:`maes_sim.core.obstacle_config`. Here:

* :func:`check_paths` refuses, once the map is known, a waypoint off the map or inside a wall
  and a path segment through a wall (a :class:`ConfigError` naming ``obstacles[i].path[j]``);
* :class:`Obstacles` keeps where every obstacle is. A path obstacle's place is a function of the
  tick (``speed * t`` along the path: ``loop`` wraps from the last waypoint to the first,
  ``bounce`` turns at either end), so it never drifts. A random walker turns by a Gaussian angle
  each tick and steps ``speed * tick`` ahead; a step that would touch a wall (or cross one) is
  not taken and the walker faces a new uniform direction instead. Every draw comes from the
  simulation's one generator, and only when there are walkers: no obstacles, no draws.
* :func:`stop_rays_at_obstacles`: the obstacles shorten the lidar rays that cross them.

What obstacles do in a run (:class:`~maes_sim.core.Simulation`): they move once per tick,
before the robots; the robots' physics pushes robots out of them (they do not yield) and a
contact counts as a collision like one with a wall or a robot; the robots' scans stop at them;
the exploration marking and the simulated SLAM's ray cast ignore them (both are the wall-only
traversal, as for the robots' bodies), so no obstacle is ever drawn into a SLAM map and the
exploration denominator (the open tiles the robots can reach) is the static map's. They do
not block the radio or the sensing of other robots.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from .collision import CONTACT_EPS, wall_penetration
from .config_checks import ConfigError
from .kernels import line_of_sight, ray_angle_offsets
from .kernels.occluders import cut_rays_at_obstacles
from .kernels.physics import touching_obstacles_kernel
from .obstacle_config import ObstacleSpec, PathObstacle, RandomWalkers

__all__ = ["Obstacles", "check_paths", "stop_rays_at_obstacles"]

#: Codes of the first column of :attr:`Obstacles.shapes`.
DISC, BOX = 0.0, 1.0
#: Standard deviation of a random walker's turn per second of simulated time, rad.
WANDER_TURN_STD = 1.0
#: Tries to place one random walker before giving up.
PLACE_TRIES = 10_000


def check_paths(
    specs: Sequence[ObstacleSpec], walls: np.ndarray, offset: np.ndarray, tile_size: float
) -> None:
    """Raise :class:`ConfigError` for a path waypoint off the map or inside a wall tile, or a
    path segment (the closing one of a ``loop`` included) crossing a wall tile.

    ``offset``: grid coordinates of the world origin; ``tile_size``: metres per tile.
    """
    h, w = walls.shape
    for i, spec in enumerate(specs):
        if not isinstance(spec, PathObstacle):
            continue
        key = f"obstacles[{i}].path"
        pts = np.asarray(spec.path, dtype=np.float64) / tile_size + offset
        for j, (gx, gy) in enumerate(pts.tolist()):
            if not (0.0 <= gx < w and 0.0 <= gy < h):
                x0, y0 = -offset * tile_size
                raise ConfigError(
                    f"waypoint {list(spec.path[j])} is off the map (x from {x0:g} to "
                    f"{x0 + w * tile_size:g} m, y from {y0:g} to {y0 + h * tile_size:g} m)",
                    key=f"{key}[{j}]",
                    value=list(spec.path[j]),
                )
            if walls[int(gy), int(gx)]:
                raise ConfigError(
                    f"waypoint {list(spec.path[j])} is inside a wall",
                    key=f"{key}[{j}]",
                    value=list(spec.path[j]),
                )
        if len(pts) < 2:
            continue
        ends = np.roll(pts, -1, axis=0)
        n_seg = len(pts) if spec.mode == "loop" else len(pts) - 1
        clear = line_of_sight(walls, pts[:n_seg], ends[:n_seg])
        if not clear.all():
            j = int(np.argmin(clear))
            a, b = spec.path[j], spec.path[(j + 1) % len(pts)]
            closing = " (the loop's way back to the first waypoint)" if j == len(pts) - 1 else ""
            raise ConfigError(
                f"the segment from {list(a)} to {list(b)}{closing} crosses a wall",
                key=f"{key}[{j}]",
                value=[list(a), list(b)],
            )


class Obstacles:
    """Every moving obstacle of a run and where it is (grid coordinates, tiles).

    Parameters
    ----------
    specs : sequence of PathObstacle or RandomWalkers
        The config's ``obstacles`` (checked against the map with :func:`check_paths` here).
    walls : ndarray of bool, shape (H, W)
    reachable : ndarray of bool, shape (H, W)
        The open tiles the robots can reach: random walkers are placed there.
    offset : ndarray, shape (2,)
        Grid coordinates of the world origin.
    tile_size, tick_seconds : float
        Metres per tile; seconds per logic tick.
    rng : numpy.random.Generator
        The simulation's generator (drawn from only when there are random walkers).
    robots : ndarray, shape (N, 2)
        The robots' start positions (grid): walkers are placed clear of them.
    robot_radius : float
        The largest robot's radius, tiles.

    Attributes
    ----------
    shapes : ndarray, shape (K, 5)
        One row per obstacle, path obstacles first in config order, then the walkers: ``kind``
        (:data:`DISC` or :data:`BOX`), centre ``x, y`` (grid), ``a, b``: a disc's radius (twice)
        or a box's half width and half height.
    """

    def __init__(
        self,
        specs: Sequence[ObstacleSpec],
        walls: np.ndarray,
        reachable: np.ndarray,
        offset: np.ndarray,
        tile_size: float,
        tick_seconds: float,
        rng: np.random.Generator,
        robots: np.ndarray,
        robot_radius: float,
    ) -> None:
        check_paths(specs, walls, offset, tile_size)
        self._walls = walls
        self._offset = np.asarray(offset, dtype=np.float64)
        self._dt = float(tick_seconds)
        paths = [s for s in specs if isinstance(s, PathObstacle)]
        self._paths = []
        rows = []
        for spec in paths:
            pts = np.asarray(spec.path, dtype=np.float64) / tile_size + offset
            if spec.mode == "loop" and len(pts) > 1:
                pts = np.vstack([pts, pts[:1]])
            cum = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(pts, axis=0).T))])
            self._paths.append((pts, cum, spec.speed / tile_size, spec.mode == "bounce"))
            if spec.shape == "disc":
                a = b = spec.radius / tile_size
                rows.append((DISC, pts[0, 0], pts[0, 1], a, b))
            else:
                a, b = (s / tile_size / 2.0 for s in spec.size)
                rows.append((BOX, pts[0, 0], pts[0, 1], a, b))
        _check_starts(specs, rows, robots, robot_radius, self._offset, tile_size)
        walkers = [(i, s) for i, s in enumerate(specs) if isinstance(s, RandomWalkers)]
        radii, steps, places = [], [], []
        for i, spec in walkers:
            r = spec.radius / tile_size
            for _ in range(spec.count):
                places.append(
                    _place(walls, reachable, rng, r, robots, robot_radius, places, radii, i)
                )
                radii.append(r)
                steps.append(spec.speed / tile_size * self._dt)
                rows.append((DISC, places[-1][0], places[-1][1], r, r))
        self._n_paths = len(paths)
        self._walker_radii = np.asarray(radii, dtype=np.float64)
        self._walker_steps = np.asarray(steps, dtype=np.float64)
        self._walker_headings = rng.uniform(-math.pi, math.pi, len(radii)) if radii else np.zeros(0)
        self.shapes = np.asarray(rows, dtype=np.float64).reshape(-1, 5)

    def __len__(self) -> int:
        return len(self.shapes)

    @property
    def positions(self) -> np.ndarray:
        """Centres (K, 2), grid coordinates (a copy)."""
        return self.shapes[:, 1:3].copy()

    def overlapping(self, positions: np.ndarray, radii: np.ndarray) -> np.ndarray:
        """Which discs (centres (N, 2) grid, radii (N,) tiles) overlap an obstacle now (N,)."""
        out = np.zeros(len(positions), dtype=np.bool_)
        touching_obstacles_kernel(
            np.ascontiguousarray(positions, dtype=np.float64),
            np.ascontiguousarray(radii, dtype=np.float64),
            self.shapes,
            -CONTACT_EPS,
            out,
        )
        return out

    def in_metres(self, tile_size: float) -> np.ndarray:
        """:attr:`shapes` in the world (map) frame in metres: ``kind, x, y, a, b`` (K, 5), the
        centre in world coordinates and the extents (radius, or half sides) times
        ``tile_size`` (the RViz markers, the live view and recordings draw these)."""
        out = self.shapes.copy()
        out[:, 1:3] -= self._offset
        out[:, 1:] *= tile_size
        return out

    def path_position(self, index: int, tick: int) -> np.ndarray:
        """Where path obstacle ``index`` stands at ``tick`` (grid, (2,)).

        Examples
        --------
        >>> from maes_sim.core.obstacle_config import PathObstacle
        >>> spec = PathObstacle("disc", ((0.0, 0.0), (4.0, 0.0)), 1.0, "bounce", radius=0.5)
        >>> walls = np.zeros((10, 10), dtype=bool)
        >>> obs = Obstacles([spec], walls, ~walls, np.array([5.0, 5.0]), 1.0, 1.0,
        ...                 np.random.default_rng(0), np.zeros((0, 2)), 0.5)
        >>> [obs.path_position(0, t).tolist() for t in (0, 3, 5, 9)]
        [[5.0, 5.0], [8.0, 5.0], [8.0, 5.0], [6.0, 5.0]]
        """
        pts, cum, speed, bounce = self._paths[index]
        length = cum[-1]
        if length == 0.0 or speed == 0.0:
            return pts[0].copy()
        s = speed * (tick * self._dt)
        if bounce:
            s = math.fmod(s, 2.0 * length)
            if s > length:
                s = 2.0 * length - s
        else:
            s = math.fmod(s, length)
        return np.array([np.interp(s, cum, pts[:, 0]), np.interp(s, cum, pts[:, 1])])

    def advance(self, tick: int, rng: np.random.Generator) -> None:
        """Move every obstacle to where it is at ``tick`` (walkers: one step from where they
        are; call once per tick, in order)."""
        for k in range(self._n_paths):
            self.shapes[k, 1:3] = self.path_position(k, tick)
        if not len(self._walker_radii):
            return
        walk = self.shapes[self._n_paths :, 1:3]
        heads = self._walker_headings + rng.normal(
            0.0, WANDER_TURN_STD * math.sqrt(self._dt), len(walk)
        )
        ahead = walk + self._walker_steps[:, None] * np.stack((np.cos(heads), np.sin(heads)), 1)
        blocked = (wall_penetration(self._walls, ahead, self._walker_radii) > 0.0) | ~line_of_sight(
            self._walls, walk, ahead
        )
        if blocked.any():
            heads[blocked] = rng.uniform(-math.pi, math.pi, int(blocked.sum()))
            ahead[blocked] = walk[blocked]
        self._walker_headings = heads
        self.shapes[self._n_paths :, 1:3] = ahead


def _place(walls, reachable, rng, r, robots, robot_radius, placed, placed_radii, entry):
    """A random walker's start (grid): on a reachable open tile, clear of walls, of the robots
    and of the walkers placed before it."""
    h, w = walls.shape
    others = np.asarray(placed, dtype=np.float64).reshape(-1, 2)
    other_r = np.asarray(placed_radii, dtype=np.float64)
    for _ in range(PLACE_TRIES):
        p = rng.uniform((0.0, 0.0), (w, h))
        if not reachable[int(p[1]), int(p[0])]:
            continue
        if wall_penetration(walls, p[None], r)[0] > 0.0:
            continue
        if len(robots) and (np.hypot(*(robots - p).T) < r + robot_radius).any():
            continue
        if len(others) and (np.hypot(*(others - p).T) < r + other_r).any():
            continue
        return (float(p[0]), float(p[1]))
    raise ConfigError(
        f"found no free place for a random walker of radius {r:g} tiles in {PLACE_TRIES} tries "
        "(clear of walls, robots and the other walkers); use fewer or smaller walkers",
        key=f"obstacles[{entry}].random_walkers",
        value=None,
    )


def stop_rays_at_obstacles(
    ranges: np.ndarray,
    hits: np.ndarray,
    origins: np.ndarray,
    headings: np.ndarray,
    shapes: np.ndarray,
    fov: float | None = None,
    max_range: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The scan ``ranges``/``hits`` (N, R) with every ray that meets an obstacle of ``shapes``
    (:attr:`Obstacles.shapes`) before its end cut there (a hit); new arrays are returned.

    A ray starting inside an obstacle has range 0. ``max_range``: the lidar's range (obstacles
    farther from a robot are skipped; default the longest of ``ranges``).

    Examples
    --------
    >>> shapes = np.array([[DISC, 5.0, 2.0, 1.0, 1.0], [BOX, 2.0, 6.0, 0.5, 1.0]])
    >>> r, h = stop_rays_at_obstacles(np.full((1, 4), 7.0), np.zeros((1, 4), bool),
    ...                              np.array([[2.0, 2.0]]), np.zeros(1), shapes)
    >>> r.tolist(), h.tolist()  # rays west, south, east (the disc), north (the box)
    ([[7.0, 7.0, 2.0, 3.0]], [[False, False, True, True]])
    """
    out_r = np.array(ranges, dtype=np.float64, copy=True)
    out_h = np.array(hits, dtype=np.bool_, copy=True)
    if not len(shapes) or not out_r.size:
        return out_r, out_h
    if max_range is None:
        max_range = float(out_r.max())
    cut_rays_at_obstacles(
        np.ascontiguousarray(origins, dtype=np.float64),
        np.ascontiguousarray(headings, dtype=np.float64),
        _fan(out_r.shape[1], fov),
        float(max_range),
        np.ascontiguousarray(shapes, dtype=np.float64),
        out_r,
        out_h,
    )
    return out_r, out_h


@functools.lru_cache(maxsize=32)
def _fan(n_rays: int, fov: float | None) -> np.ndarray:
    """Ray directions (R, 2) at heading 0 (the lidar's: :func:`ray_angle_offsets`)."""
    offsets = ray_angle_offsets(n_rays, fov)
    fan = np.ascontiguousarray(np.stack((np.cos(offsets), np.sin(offsets)), axis=-1))
    fan.flags.writeable = False
    return fan


def _check_starts(specs, rows, robots, robot_radius, offset, tile_size) -> None:
    """ConfigError naming ``obstacles[i].path[0]`` when a path obstacle starts on a robot's
    spawn position (the robots spawn first; random walkers are placed clear of them)."""
    robots = np.ascontiguousarray(robots, dtype=np.float64).reshape(-1, 2)
    if not rows or not len(robots):
        return
    radii = np.ascontiguousarray(
        np.broadcast_to(np.asarray(robot_radius, dtype=np.float64), (len(robots),))
    )
    shapes = np.asarray(rows, dtype=np.float64).reshape(-1, 5)
    index = [i for i, spec in enumerate(specs) if isinstance(spec, PathObstacle)]
    for k, i in enumerate(index):
        hit = np.zeros(len(robots), dtype=np.bool_)
        touching_obstacles_kernel(robots, radii, shapes[k : k + 1], -CONTACT_EPS, hit)
        if hit.any():
            j = int(np.flatnonzero(hit)[0])
            x, y = ((robots[j] - offset) * tile_size).tolist()
            raise ConfigError(
                f"the obstacle starts on robot {j}'s spawn position ({x:.2f}, {y:.2f}) m: start "
                "its path elsewhere, or spawn the robots elsewhere (robot_spawn_config)",
                key=f"obstacles[{i}].path[0]",
                value=specs[i].path[0],
            )
