"""Map generators by kind: the registry, the config's choice of one, and a new one plugged in."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace as NS

import numpy as np
import pytest

from maes_sim.core import ConfigError, MapError, config_from_dict, world_from_config
from maes_sim.core.config_schema import MapConfig
from maes_sim.core.world import build_map, generate_cave, map_generators


def test_every_map_key_of_the_config_has_a_registered_generator():
    registered = {g.name: g.config_key for g in map_generators()}
    builtin = {
        "building": "building_config",
        "cave": "cave_config",
        "custom": "custom_map_filename",
    }
    assert builtin.items() <= registered.items()
    assert sorted(MapConfig.kind_keys()) == sorted(registered.values())


def test_the_config_picks_the_generator_and_the_map_is_the_generators_own():
    cfg = config_from_dict(
        {"map": {"width_in_tiles": 30, "height_in_tiles": 30, "cave_config": {}}}
    )
    assert cfg.map.kind == "cave"
    m = cfg.map
    direct = generate_cave(30, 30, m.border_size, m.cave_config, np.random.default_rng(4))
    via = world_from_config(cfg, np.random.default_rng(4))
    assert np.array_equal(via.walls, direct.walls)
    assert config_from_dict({}).map.kind == "building"  # none given: MAES-ROS's default


def test_two_map_kinds_are_refused_by_name():
    with pytest.raises(ConfigError, match="give only one of building_config, cave_config or"):
        config_from_dict({"map": {"cave_config": {}, "building_config": {}}})


def test_an_unknown_kind_names_the_registered_ones():
    with pytest.raises(MapError, match=r"no map generator for map kind 'maze' \(registered: "):
        build_map(NS(map=NS(kind="maze")), np.random.default_rng(0))


_NEW_GENERATOR = """
import numpy as np
from types import SimpleNamespace as NS
from maes_sim.core.world import WorldMap, build_map, map_generator

@map_generator("hall", "hall_config")
def hall(config, rng):
    walls = np.zeros((config.map.height_in_tiles, config.map.width_in_tiles), dtype=bool)
    walls[[0, -1], :] = walls[:, [0, -1]] = True
    return WorldMap(walls)

config = NS(map=NS(kind="hall", width_in_tiles=12, height_in_tiles=9))
m = build_map(config, np.random.default_rng(0))
print(m.walls.shape, int(m.walls.sum()))
"""


def test_a_registered_generator_is_found_by_its_kind():
    # In a subprocess: registering changes the process's registry for good.
    done = subprocess.run(
        [sys.executable, "-c", _NEW_GENERATOR], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(9, 12) 38"
