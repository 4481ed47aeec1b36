"""The registry of map generators: ``map.kind`` -> the function that builds the map.

Each generator is registered once, with :func:`map_generator`, in its own module of
:mod:`maes_sim.core.world` (any module put there is found when the package is imported; no
list to edit). Its settings are the map section's key of the same name (``cave_config`` for
``cave``, ``custom_map_filename`` for ``custom``), a section of
``maes_sim.core.config_schema``; ``MapConfig.kind`` names the one the config chose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .worldmap import MapError, WorldMap

__all__ = ["MapGenerator", "build_map", "map_generator", "map_generators"]

#: ``build(config, rng) -> WorldMap``: the run's map from the whole config (a ``SimConfig``).
BuildMap = Callable[[Any, np.random.Generator], WorldMap]


@dataclass(frozen=True)
class MapGenerator:
    """One registered map generator."""

    name: str  # the map's kind: "cave", "building", "custom", ...
    config_key: str  # its key in the config's map section
    build: BuildMap


_GENERATORS: dict[str, MapGenerator] = {}


def map_generator(name: str, config_key: str) -> Callable[[BuildMap], BuildMap]:
    """Register the decorated ``build(config, rng)`` as the generator of maps of kind ``name``.

    Examples
    --------
    >>> import maes_sim.core.world  # registers the built-in generators
    >>> sorted((g.name, g.config_key) for g in map_generators())[:2]
    [('building', 'building_config'), ('cave', 'cave_config')]
    """

    def register(build: BuildMap) -> BuildMap:
        if name in _GENERATORS:
            raise ValueError(f"map generator {name!r} is registered twice")
        _GENERATORS[name] = MapGenerator(name, config_key, build)
        return build

    return register


def map_generators() -> tuple[MapGenerator, ...]:
    """Every registered map generator (``maes_sim.core.world`` registers its modules' when
    imported)."""
    return tuple(_GENERATORS.values())


def build_map(config: Any, rng: np.random.Generator) -> WorldMap:
    """The map of ``config`` (a ``SimConfig``) by the generator of ``config.map.kind``."""
    kind = config.map.kind
    generator = _GENERATORS.get(kind)
    if generator is None:
        known = ", ".join(sorted(_GENERATORS))
        raise MapError(f"no map generator for map kind {kind!r} (registered: {known})")
    return generator.build(config, rng)
