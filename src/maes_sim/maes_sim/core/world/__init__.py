"""Maps: MAES-style cave and building generators, PGM / Nav2 YAML import, connectivity, spawning.

All maps are :class:`WorldMap` values with ``walls[iy, ix]`` (row 0 = bottom), see
:mod:`maes_sim.core.grid`.
"""

from .building import BuildingParams, generate_building
from .cave import CaveParams, generate_cave
from .connectivity import (
    label_regions,
    largest_open_region,
    open_regions,
    path_steps,
    reachable_open,
)
from .map_io import load_custom_map, load_map_yaml, load_pgm, parse_pgm
from .spawn import SPAWN_MARGIN, spawn_positions
from .worldmap import MapError, WorldMap

__all__ = [
    "SPAWN_MARGIN",
    "BuildingParams",
    "CaveParams",
    "MapError",
    "WorldMap",
    "generate_building",
    "generate_cave",
    "label_regions",
    "largest_open_region",
    "load_custom_map",
    "load_map_yaml",
    "load_pgm",
    "open_regions",
    "parse_pgm",
    "path_steps",
    "reachable_open",
    "spawn_positions",
]
