"""Maps: MAES-style cave and building generators, PGM / Nav2 YAML import, connectivity, spawning.

Map generators are registered by kind (:mod:`.generators`); every module of this package is
imported here, so a generator module added to it is found without a list to edit.

All maps are :class:`WorldMap` values with ``walls[iy, ix]`` (row 0 = bottom), see
:mod:`maes_sim.core.grid`.
"""

import importlib
import pkgutil

from .building import BuildingParams, generate_building
from .cave import CaveParams, generate_cave
from .connectivity import (
    label_regions,
    largest_open_region,
    open_regions,
    path_steps,
    reachable_open,
)
from .generators import MapGenerator, build_map, map_generator, map_generators
from .map_io import load_custom_map, load_map_yaml, load_pgm, parse_pgm
from .spawn import SPAWN_MARGIN, spawn_positions
from .worldmap import MapError, WorldMap

__all__ = [
    "SPAWN_MARGIN",
    "BuildingParams",
    "CaveParams",
    "MapError",
    "MapGenerator",
    "WorldMap",
    "build_map",
    "generate_building",
    "generate_cave",
    "label_regions",
    "largest_open_region",
    "load_custom_map",
    "load_map_yaml",
    "load_pgm",
    "map_generator",
    "map_generators",
    "open_regions",
    "parse_pgm",
    "path_steps",
    "reachable_open",
    "spawn_positions",
]

# A generator in a module of its own registers itself when imported: import every module.
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
