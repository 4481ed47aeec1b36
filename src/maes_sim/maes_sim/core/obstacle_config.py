"""The ``obstacles`` config key: moving discs and boxes on paths, and random walkers.

Two entry forms (lengths in metres, positions in the map frame: world coordinates times
``world.tile_size``, origin at the map centre; speeds in m/s)::

    obstacles:
      - {shape: disc, radius: 0.5, path: [[2.0, 0.0], [2.0, 4.0]], speed: 0.8, mode: bounce}
      - {shape: box, size: [1.0, 0.5], path: [[0, 0], [3, 0], [3, 3]], speed: 0.5, mode: loop}
      - {random_walkers: 3, radius: 0.4, speed: 0.5}

This module checks the form (every problem a :class:`ConfigError` naming the entry's key path);
whether a path fits the map (points on the map and off the walls, segments clear of walls) is
checked when the map is known (:func:`maes_sim.core.obstacles.check_paths`). The moving obstacles
themselves are :class:`maes_sim.core.obstacles.Obstacles`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from maes_sim.core.config_checks import Choice, ConfigError, Float, Int, show, unknown_key_error

#: Shapes a path obstacle may have.
SHAPES = ("disc", "box")
#: How a path obstacle runs along its waypoints: ``loop`` goes back from the last waypoint to the
#: first and round again; ``bounce`` turns at either end.
MODES = ("loop", "bounce")
#: Largest obstacle radius / box side and path coordinate, metres (MAX_RANGE tiles of 1 m).
MAX_EXTENT = 7072.0
#: Most random walkers of one entry, and most obstacle entries / path waypoints.
MAX_WALKERS = 1000
MAX_ENTRIES = 1000
MAX_WAYPOINTS = 10_000
#: Fastest obstacle, m/s.
MAX_SPEED = 1000.0

_PATH_KEYS = ("shape", "radius", "size", "path", "speed", "mode")
_WALKER_KEYS = ("random_walkers", "radius", "speed")
_extent = Float(lo=0.0, hi=MAX_EXTENT, lo_open=True)
_speed = Float(lo=0.0, hi=MAX_SPEED)
_coord = Float(lo=-MAX_EXTENT, hi=MAX_EXTENT)


@dataclass(frozen=True)
class PathObstacle:
    """A disc (``radius``) or an axis-aligned box (``size`` = width, height) moving along
    ``path`` at ``speed``; metres, map frame, m/s. One waypoint (or speed 0): it stands still."""

    shape: str
    path: tuple[tuple[float, float], ...]
    speed: float
    mode: str = "loop"
    radius: float | None = None
    size: tuple[float, float] | None = None

    def to_plain(self) -> dict[str, Any]:
        """The entry as written in a config file (YAML-safe)."""
        out: dict[str, Any] = {"shape": self.shape}
        if self.shape == "disc":
            out["radius"] = self.radius
        else:
            out["size"] = list(self.size or ())
        out.update(path=[list(p) for p in self.path], speed=self.speed, mode=self.mode)
        return out


@dataclass(frozen=True)
class RandomWalkers:
    """``count`` discs of ``radius`` (m) wandering at ``speed`` (m/s) through the open space
    the robots can reach, placed and steered by the simulation's random generator."""

    count: int
    radius: float
    speed: float

    def to_plain(self) -> dict[str, Any]:
        """The entry as written in a config file (YAML-safe)."""
        return {"random_walkers": self.count, "radius": self.radius, "speed": self.speed}


ObstacleSpec = PathObstacle | RandomWalkers


class ObstaclesCheck:
    """``obstacles``: a list of path obstacles and random-walker groups (see the module)."""

    def expected(self) -> str:
        return (
            "a list of {shape: disc|box, radius | size, path: [[x, y], ...], speed, mode: "
            "loop|bounce} or {random_walkers: N, radius, speed} entries"
        )

    def __call__(self, value: Any, key: str) -> tuple[ObstacleSpec, ...]:
        if value is None or (isinstance(value, list | tuple) and not value):
            return ()
        if isinstance(value, tuple) and all(
            isinstance(v, PathObstacle | RandomWalkers) for v in value
        ):
            return value
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        if len(value) > MAX_ENTRIES:
            raise ConfigError(
                f"got {len(value)} entries, at most {MAX_ENTRIES} allowed", key=key, value=value
            )
        return tuple(_entry(entry, f"{key}[{i}]") for i, entry in enumerate(value))


def _entry(entry: Any, where: str) -> ObstacleSpec:
    if isinstance(entry, PathObstacle | RandomWalkers):
        return entry
    if not isinstance(entry, Mapping):
        raise ConfigError(
            f"got {show(entry)}, expected a mapping such as {{shape: disc, radius: 0.5, path: "
            "[[0, 0], [2, 0]], speed: 0.5, mode: bounce}",
            key=where,
            value=entry,
        )
    walkers = "random_walkers" in entry
    allowed = _WALKER_KEYS if walkers else _PATH_KEYS
    for k in entry:
        if k not in allowed:
            raise unknown_key_error(k, where, list(allowed), ())
    need = ("radius", "speed") if walkers else ("shape", "path", "speed")
    for k in need:
        if k not in entry:
            raise ConfigError(f"missing {k!r}", key=f"{where}.{k}", value=None)
    speed = _speed(entry["speed"], f"{where}.speed")
    if walkers:
        count = Int(lo=1, hi=MAX_WALKERS)(entry["random_walkers"], f"{where}.random_walkers")
        return RandomWalkers(count, _extent(entry["radius"], f"{where}.radius"), speed)
    shape = Choice(*SHAPES)(entry["shape"], f"{where}.shape")
    mode = Choice(*MODES)(entry.get("mode", "loop"), f"{where}.mode")
    path = _path(entry["path"], f"{where}.path")
    if shape == "disc":
        if "size" in entry:
            raise ConfigError(
                "a disc has a radius, not a size (size [width, height] is for shape: box)",
                key=f"{where}.size",
                value=entry["size"],
            )
        if "radius" not in entry:
            raise ConfigError("missing 'radius' (metres)", key=f"{where}.radius", value=None)
        radius = _extent(entry["radius"], f"{where}.radius")
        return PathObstacle(shape, path, speed, mode, radius=radius)
    if "radius" in entry:
        raise ConfigError(
            "a box has a size [width, height], not a radius (radius is for shape: disc)",
            key=f"{where}.radius",
            value=entry["radius"],
        )
    if "size" not in entry:
        raise ConfigError(
            "missing 'size' ([width, height] in metres)", key=f"{where}.size", value=None
        )
    return PathObstacle(shape, path, speed, mode, size=_size(entry["size"], f"{where}.size"))


def _size(value: Any, key: str) -> tuple[float, float]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        side = _extent(value, key)
        return (side, side)
    if isinstance(value, list | tuple) and len(value) == 2:
        return (_extent(value[0], f"{key}[0]"), _extent(value[1], f"{key}[1]"))
    raise ConfigError(
        f"got {show(value)}, expected [width, height] in metres (or one number: a square)",
        key=key,
        value=value,
    )


def _path(value: Any, key: str) -> tuple[tuple[float, float], ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
        raise ConfigError(
            f"got {show(value)}, expected a list of waypoints [[x, y], ...] (metres, map frame)",
            key=key,
            value=value,
        )
    if len(value) > MAX_WAYPOINTS:
        raise ConfigError(
            f"got {len(value)} waypoints, at most {MAX_WAYPOINTS} allowed", key=key, value=value
        )
    out = []
    for j, point in enumerate(value):
        if isinstance(point, str | bytes) or not isinstance(point, Sequence) or len(point) != 2:
            raise ConfigError(
                f"got {show(point)}, expected a waypoint [x, y] (metres, map frame)",
                key=f"{key}[{j}]",
                value=point,
            )
        x, y = (_coord(c, f"{key}[{j}]") for c in point)
        out.append((x, y))
    return tuple(out)
