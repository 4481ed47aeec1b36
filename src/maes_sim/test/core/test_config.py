"""Tests for maes_sim.core.config: MAES 2.0 defaults, strict validation, loading and export."""

from __future__ import annotations

import dataclasses
import glob
import math
import os
import pickle
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maes_sim.core.config import (
    BuildingConfig,
    CaveConfig,
    ConfigError,
    EndCriteria,
    GlobalSettings,
    MapConfig,
    MotionConfig,
    OccupancyConfig,
    RobotConstraints,
    RobotSpawnConfig,
    SimConfig,
    SpawnTogether,
    StackConfig,
    WorldConfig,
    config_from_dict,
    config_to_dict,
    key_paths,
    load_config,
)
from maes_sim.core.config_checks import Bool, Choice, Float, Int, Nullable, OpenInterval

REPO = Path(__file__).resolve().parents[4]

# MAES 2.0's defaults (its C# YAML loader and its ROS maes_config.yaml) and MAES-ROS's additions.
EXPECTED_DEFAULTS = {
    "random_seeds": [0],
    "number_of_robots": 1,
    "global_settings.logic_ticks_delta_millis": 100,
    "global_settings.physics_ticks_per_logic_update": 10,
    "global_settings.draw_communication": True,
    "global_settings.show_environment_tags": True,
    "global_settings.should_write_csv_results": False,
    "global_settings.statistics_result_path": "results",
    "global_settings.ticks_per_stats_snapshot": 10,
    "global_settings.populate_adjacency_and_comm_groups_every_tick": False,
    "global_settings.ticks_before_exploration_heatmap_cold": 2400,
    "global_settings.ticks_before_coverage_heatmap_cold": 2400,
    "robot_constraints.broadcast_range": 15.0,
    "robot_constraints.broadcast_blocked_by_walls": False,
    "robot_constraints.sense_nearby_agents_range": 5.0,
    "robot_constraints.sense_nearby_agents_blocked_by_walls": True,
    "robot_constraints.automatically_update_slam": True,
    "robot_constraints.slam_update_interval_in_ticks": 10,
    "robot_constraints.slam_sync_interval_in_ticks": 10,
    "robot_constraints.slam_position_inaccuracy": 0.5,
    "robot_constraints.distribute_slam": False,
    "robot_constraints.environment_tag_read_range": 4.0,
    "robot_constraints.slam_raytrace_range": 7.0,
    "robot_constraints.relative_move_speed": 1.0,
    "robot_constraints.agent_relative_size": 0.6,
    "end_criteria.coverage_percent": None,
    "end_criteria.exploration_percent": None,
    "end_criteria.tick": None,
    "robot_spawn_config.biggest_room": False,
    "robot_spawn_config.spawn_together.suggested_starting_point_x": None,
    "robot_spawn_config.spawn_together.suggested_starting_point_y": None,
    "robot_spawn_config.spawn_at_hallway_ends": False,
    "map.width_in_tiles": 50,
    "map.height_in_tiles": 50,
    "map.border_size": 1,
    "map.wall_height": 2.0,
    "map.cave_config": None,
    "map.building_config.hall_width": 4,
    "map.building_config.max_hall_in_percent": 20.0,
    "map.building_config.min_room_side_length": 6,
    "map.building_config.door_width": 2,
    "map.building_config.door_padding": 2,
    "map.building_config.room_split_chance": 85,
    "map.custom_map_filename": None,
    "world.tile_size": 1.0,
    "motion.model": "maes",
    "motion.odometry_noise": 0.0,
    "motion.heading_noise": 0.0,
    "lidar.robots_block_rays": True,
    # MAES 2.0's radio: the range rule, no loss, no latency, no budget
    "communication.model": "range",
    "communication.loss_probability": 0.0,
    "communication.latency_ticks": 0,
    "communication.max_messages_per_tick": None,
    "communication.good_to_bad_probability": 0.0,
    "communication.bad_to_good_probability": 1.0,
    "communication.loss_probability_good": 0.0,
    "communication.loss_probability_bad": 1.0,
    "communication.distance_exponent": 2.0,
    "stack.slam": "simulated",
    "stack.nav": "builtin",
    "stack.cmd_vel_timeout": 0.5,
    "stack.max_tags_per_state": 100,
    "stack.occupancy.hit_probability": 0.7,
    "stack.occupancy.miss_probability": 0.4,
    "stack.occupancy.clamp_min_probability": 0.12,
    "stack.occupancy.clamp_max_probability": 0.97,
    "performance.threads": 1,
    "results.pictures": True,
    "robot_types": {},
    "team": [],
    "obstacles": [],
}
CAVE_DEFAULTS = {
    "smoothing_runs": 4,
    "connection_passage_width": 4,
    "random_fill_percent": 40,
    "wall_threshold_size": 10,
    "room_threshold_size": 10,
}

# A config as MAES 2.0 writes it, with the null forms MAES accepts.
MAES2_TEXT = """\
random_seeds: [0]
number_of_robots: 2
global_settings:
  logic_ticks_delta_millis: 100\x20
  physics_ticks_per_logic_update: 10
  draw_communication: true
  show_environment_tags: true
  should_write_csv_results: false
  statistics_result_path: "ROS2-some-name" # a folder
  ticks_per_stats_snapshot: 10
  populate_adjacency_and_comm_groups_every_tick: false
  ticks_before_exploration_heatmap_cold: 2400 # 10 * 60 * 4
  ticks_before_coverage_heatmap_cold: 2400 # 10 * 60 * 4
robot_constraints:
  broadcast_range: 20
  broadcast_blocked_by_walls: true
  sense_nearby_agents_range: 6.0
  sense_nearby_agents_blocked_by_walls: true
  automatically_update_slam: true
  slam_update_interval_in_ticks: 10
  slam_sync_interval_in_ticks: 10
  slam_position_inaccuracy: 0.2
  distribute_slam: false
  environment_tag_read_range: 10.0
  slam_raytrace_range: 10.0
  relative_move_speed: 1.0
  agent_relative_size: 0.6
end_criteria:
  coverage_percent: null
  exploration_percent: 99.5
  tick: null
robot_spawn_config:
  biggest_room: null
  spawn_together:
    suggested_starting_point_x: 0
    suggested_starting_point_y: 0
  spawn_at_hallway_ends: null
map:
  wall_height: 2.0
  width_in_tiles: 30
  height_in_tiles: 30
  border_size: 1
# NOTE: Include either cave_config, building_config or custom map
  cave_config:
    smoothing_runs: 4
    connection_passage_width: 4
    random_fill_percent: 43
    wall_threshold_size: 10
    room_threshold_size: 10
#  custom_map_filename: 'map.pgm'
"""


def _flatten(data: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, path))
        else:
            flat[path] = value
    return flat


def _write(tmp_path: Path, text: str, name: str = "maes_config.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _error(data) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        config_from_dict(data)
    return info.value


# ---------------------------------------------------------------------------------------------
# Defaults


def test_every_default_is_maes2s():
    flat = _flatten(config_to_dict(SimConfig()))
    assert flat == EXPECTED_DEFAULTS


def test_default_tables_cover_every_key():
    paths = key_paths()
    sections = {p for p in paths if any(q.startswith(p + ".") for q in paths)}
    expected = set(EXPECTED_DEFAULTS) - {"map.cave_config"}
    expected |= {f"map.cave_config.{k}" for k in CAVE_DEFAULTS}
    assert set(paths) - sections == expected


def test_cave_config_defaults_are_maes2s():
    assert dataclasses.asdict(CaveConfig()) == CAVE_DEFAULTS
    cfg = config_from_dict({"map": {"cave_config": {}}})
    assert dataclasses.asdict(cfg.map.cave_config) == CAVE_DEFAULTS
    assert cfg.map.building_config is None


def test_empty_mapping_and_null_sections_give_defaults():
    nulls = {f.name: None for f in dataclasses.fields(SimConfig) if "section" in f.metadata}
    assert set(nulls) == {
        "global_settings",
        "robot_constraints",
        "end_criteria",
        "robot_spawn_config",
        "map",
        "world",
        "motion",
        "lidar",
        "communication",
        "stack",
        "performance",
        "results",
    }
    assert config_from_dict({}) == SimConfig()
    assert config_from_dict(nulls) == SimConfig()


def test_no_map_kind_means_building_with_defaults():
    cfg = config_from_dict({"map": {"width_in_tiles": 40}})
    assert cfg.map.kind == "building"
    assert cfg.map.building_config == BuildingConfig()


def test_no_spawn_mode_means_spawn_together_at_centre():
    cfg = config_from_dict({"robot_spawn_config": {"biggest_room": None, "spawn_together": None}})
    assert cfg.robot_spawn_config.mode == "spawn_together"
    assert cfg.robot_spawn_config.spawn_together.starting_point is None


@pytest.mark.parametrize("written", ["", "Default", "default", " DEFAULT ", None])
def test_statistics_path_default_spellings(written):
    cfg = config_from_dict({"global_settings": {"statistics_result_path": written}})
    assert cfg.global_settings.statistics_result_path == "results"


def test_statistics_path_kept_as_written():
    cfg = config_from_dict({"global_settings": {"statistics_result_path": "out/run 1"}})
    assert cfg.global_settings.statistics_result_path == "out/run 1"


def test_end_criteria_all_null_never_end():
    assert config_from_dict({"end_criteria": None}).end_criteria.never_ends
    assert config_from_dict({"end_criteria": {"tick": None}}).end_criteria.never_ends
    assert not config_from_dict({"end_criteria": {"tick": 10}}).end_criteria.never_ends


def test_tick_durations_follow_global_settings():
    gs = GlobalSettings()
    assert gs.logic_tick_seconds == pytest.approx(0.1)
    assert gs.physics_step_seconds == pytest.approx(0.01)
    gs = GlobalSettings(logic_ticks_delta_millis=50, physics_ticks_per_logic_update=5)
    assert gs.physics_step_seconds == pytest.approx(0.01)


# ---------------------------------------------------------------------------------------------
# MAES 2.0 files


def test_maes2_file_loads_unchanged(tmp_path):
    cfg = load_config(_write(tmp_path, MAES2_TEXT))
    assert cfg.number_of_robots == 2
    assert cfg.global_settings.statistics_result_path == "ROS2-some-name"
    assert cfg.robot_constraints.broadcast_range == 20.0
    assert isinstance(cfg.robot_constraints.broadcast_range, float)
    assert cfg.robot_constraints.slam_position_inaccuracy == 0.2
    assert cfg.end_criteria == EndCriteria(exploration_percent=99.5)
    assert cfg.robot_spawn_config.mode == "spawn_together"
    assert cfg.robot_spawn_config.spawn_together.starting_point == (0, 0)
    assert cfg.map.kind == "cave"
    assert cfg.map.cave_config.random_fill_percent == 43
    assert (cfg.world, cfg.motion, cfg.stack) == (WorldConfig(), MotionConfig(), StackConfig())


def test_shipped_maes2_example_has_only_maes_keys():
    data = yaml.safe_load((REPO / "configs" / "maes2_example.yaml").read_text())
    assert not {"world", "motion", "stack"} & set(data)
    assert load_config(REPO / "configs" / "maes2_example.yaml").map.kind == "building"


def test_csharp_spelling_of_a_key_gets_the_yaml_spelling_suggested():
    err = _error({"robot_constraints": {"BroadcastRange": 3}})
    assert err.key == "robot_constraints.BroadcastRange"
    assert "did you mean 'broadcast_range'?" in str(err)


# ---------------------------------------------------------------------------------------------
# Errors: message names key path, bad value, expectation (and suggestion)

BAD_VALUES = [
    # wrong types
    ({"number_of_robots": True}, "number_of_robots", ["True (a boolean)", "an integer"]),
    ({"number_of_robots": "5"}, "number_of_robots", ["'5' (a string)", "an integer"]),
    ({"end_criteria": {"tick": 10.5}}, "end_criteria.tick", ["10.5", "an integer from 1 to"]),
    (
        {"robot_constraints": {"broadcast_range": False}},
        "robot_constraints.broadcast_range",
        ["False (a boolean)", "a number from 0 to 7072"],
    ),
    (
        {"robot_constraints": {"distribute_slam": "true"}},
        "robot_constraints.distribute_slam",
        ["'true' (a string)", "true or false"],
    ),
    (
        {"robot_constraints": {"distribute_slam": None}},
        "robot_constraints.distribute_slam",
        ["None", "true or false"],
    ),
    (
        {"global_settings": {"statistics_result_path": 5}},
        "global_settings.statistics_result_path",
        ["5", "directory path"],
    ),
    ({"map": 5}, "map", ["5", "a mapping"]),
    ({"map": {"cave_config": [1]}}, "map.cave_config", ["[1] (a list)", "a mapping"]),
    # out of range
    (
        {"robot_constraints": {"sense_nearby_agents_range": -1}},
        "robot_constraints.sense_nearby_agents_range",
        ["-1", "a number from 0 to 7072"],
    ),
    (
        {"robot_constraints": {"slam_raytrace_range": 0}},
        "robot_constraints.slam_raytrace_range",
        ["got 0", "a number > 0"],
    ),
    (
        {"robot_constraints": {"slam_raytrace_range": float("inf")}},
        "robot_constraints.slam_raytrace_range",
        ["inf", "a number > 0"],
    ),
    (
        {"robot_constraints": {"slam_position_inaccuracy": float("nan")}},
        "robot_constraints.slam_position_inaccuracy",
        ["nan", "a number from 0 to 7072"],
    ),
    (
        {"robot_constraints": {"agent_relative_size": 1.5}},
        "robot_constraints.agent_relative_size",
        ["1.5", "a number from 0.01 to 1"],
    ),
    (
        {"map": {"cave_config": {"random_fill_percent": 150}}},
        "map.cave_config.random_fill_percent",
        ["150", "an integer from 0 to 99"],
    ),
    (
        {"map": {"building_config": {"room_split_chance": -5}}},
        "map.building_config.room_split_chance",
        ["-5", "an integer from 0 to 100"],
    ),
    (
        {"map": {"building_config": {"max_hall_in_percent": 100.5}}},
        "map.building_config.max_hall_in_percent",
        ["100.5", "a number from 0 to 100"],
    ),
    (
        {"end_criteria": {"exploration_percent": 101}},
        "end_criteria.exploration_percent",
        ["101", "a number > 0 and <= 100 or null"],
    ),
    (
        {"end_criteria": {"coverage_percent": 0}},
        "end_criteria.coverage_percent",
        ["got 0", "> 0"],
    ),
    ({"end_criteria": {"tick": 0}}, "end_criteria.tick", ["got 0", "an integer from 1 to"]),
    (
        {"global_settings": {"slam_update_interval_in_ticks": 1}},
        "global_settings.slam_update_interval_in_ticks",
        ["unknown key", "robot_constraints.slam_update_interval_in_ticks"],
    ),
    (
        {"robot_constraints": {"slam_update_interval_in_ticks": 0}},
        "robot_constraints.slam_update_interval_in_ticks",
        ["got 0", "an integer from 1 to 2147483647"],
    ),
    (
        {"global_settings": {"ticks_per_stats_snapshot": -3}},
        "global_settings.ticks_per_stats_snapshot",
        ["-3", "from 1 to"],
    ),
    (
        {"global_settings": {"logic_ticks_delta_millis": 0}},
        "global_settings.logic_ticks_delta_millis",
        ["got 0", "from 1 to 10000"],
    ),
    ({"map": {"width_in_tiles": 4}}, "map.width_in_tiles", ["got 4", "from 10 to 5000"]),
    ({"map": {"height_in_tiles": 9000}}, "map.height_in_tiles", ["9000", "from 10 to 5000"]),
    ({"map": {"border_size": 0}}, "map.border_size", ["got 0", "from 1 to 5000"]),
    (
        {"map": {"width_in_tiles": 12, "border_size": 4}},
        "map.border_size",
        ["got 4", "leaves 4 tiles", ">= 5"],
    ),
    ({"number_of_robots": 0}, "number_of_robots", ["got 0", "from 1 to 5000"]),
    ({"number_of_robots": 5001}, "number_of_robots", ["5001", "from 1 to 5000"]),
    ({"random_seeds": 5}, "random_seeds", ["got 5", "list of integers"]),
    ({"random_seeds": []}, "random_seeds", ["[]", "non-empty list"]),
    ({"random_seeds": [1, -2]}, "random_seeds[1]", ["-2", "an integer from 0"]),
    ({"random_seeds": [True]}, "random_seeds[0]", ["True (a boolean)"]),
    ({"world": {"tile_size": 0}}, "world.tile_size", ["got 0", "a number from 0.001 to 1000"]),
    ({"motion": {"odometry_noise": -0.1}}, "motion.odometry_noise", ["-0.1", "from 0 to 10"]),
    ({"stack": {"cmd_vel_timeout": 0.0}}, "stack.cmd_vel_timeout", ["0.0", "> 0"]),
    ({"lidar": {"robots_block_rays": "yes"}}, "lidar.robots_block_rays", ["'yes'"]),
    # the radio (issue 25): probabilities in [0, 1], no negative latency, known models
    ({"communication": {"loss_probability": 1.5}}, "communication.loss_probability", ["1.5"]),
    ({"communication": {"latency_ticks": -1}}, "communication.latency_ticks", ["-1", "from 0"]),
    ({"communication": {"model": "bernouli"}}, "communication.model", ["'bernoulli'"]),
    (
        {"robot_types": {"a": {"communication": {"loss_probability_bad": -0.1}}}},
        "robot_types.a.communication.loss_probability_bad",
        ["-0.1", "from 0 to 1"],
    ),
    ({"lidar": {"robots_block_ray": False}}, "lidar.robots_block_ray", ["robots_block_rays"]),
    ({"robots_block_rays": False}, "robots_block_rays", ["lidar.robots_block_rays"]),
    # names from a fixed set
    (
        {"motion": {"model": "diff_drive"}},
        "motion.model",
        ["'diff_drive'", "'maes', 'differential_drive'", "did you mean 'differential_drive'?"],
    ),
    (
        {"stack": {"slam": "slamtoolbox"}},
        "stack.slam",
        ["'slamtoolbox'", "did you mean 'slam_toolbox'?"],
    ),
    ({"stack": {"nav": "nav3"}}, "stack.nav", ["'nav3'", "did you mean 'nav2'?"]),
    (
        {"stack": {"slam": "ocupancy"}},
        "stack.slam",
        ["'ocupancy'", "'simulated', 'occupancy', 'slam_toolbox'", "did you mean 'occupancy'?"],
    ),
    # occupancy grids: a hit must raise, a miss lower, the clamp leave room to change its mind
    (
        {"stack": {"occupancy": {"miss_probability": 0.5}}},
        "stack.occupancy.miss_probability",
        ["got 0.5", "]0, 0.5[", "a miss lowers"],
    ),
    (
        {"stack": {"occupancy": {"hit_probability": 1}}},
        "stack.occupancy.hit_probability",
        ["got 1", "]0.5, 1[", "a hit raises"],
    ),
    (
        {"stack": {"occupancy": {"clamp_max_probability": "high"}}},
        "stack.occupancy.clamp_max_probability",
        ["'high'", "a number"],
    ),
    (
        {"stack": {"occupancy": {"hit_probabilty": 0.8}}},
        "stack.occupancy.hit_probabilty",
        ["unknown key", "did you mean 'hit_probability'?"],
    ),
    # unknown keys
    (
        {"map": {"cave_config": {"smothing_runs": 3}}},
        "map.cave_config.smothing_runs",
        ["unknown key 'smothing_runs'", "did you mean 'smoothing_runs'?"],
    ),
    (
        {"number_of_robot": 3},
        "number_of_robot",
        ["unknown key", "did you mean 'number_of_robots'?"],
    ),
    (
        {"tile_size": 0.5},
        "tile_size",
        ["unknown key", "did you mean 'world.tile_size'?"],
    ),
    (
        {"custom_map_filename": "map.pgm"},
        "custom_map_filename",
        ["did you mean 'map.custom_map_filename'?"],
    ),
    (
        {"stack": {"zzz": 1}},
        "stack.zzz",
        ["unknown key 'zzz'", "known keys here: slam, nav, cmd_vel_timeout"],
    ),
    ({7: 1}, "7", ["unknown key 7"]),
]


@pytest.mark.parametrize(("data", "key", "fragments"), BAD_VALUES, ids=lambda v: str(v)[:40])
def test_bad_value_error_names_key_value_and_expectation(data, key, fragments):
    err = _error(data)
    assert err.key == key
    assert str(err).startswith(f"<dict>: {key}: ")
    for fragment in fragments:
        assert fragment in str(err)


def test_int_accepted_where_float_expected_and_stored_as_float():
    cfg = config_from_dict(
        {"robot_constraints": {"slam_raytrace_range": 9}, "world": {"tile_size": 2}}
    )
    assert cfg.robot_constraints.slam_raytrace_range == 9.0
    assert type(cfg.robot_constraints.slam_raytrace_range) is float
    assert type(cfg.world.tile_size) is float


def test_unlimited_ranges_accept_inf_and_round_trip():
    cfg = config_from_dict(yaml.safe_load("robot_constraints: {broadcast_range: .inf}"))
    assert math.isinf(cfg.robot_constraints.broadcast_range)
    text = yaml.safe_dump(config_to_dict(cfg))
    assert config_from_dict(yaml.safe_load(text)) == cfg


def test_door_rule_names_all_three_keys():
    err = _error({"map": {"building_config": {"min_room_side_length": 7, "door_width": 4}}})
    assert err.key == "map.building_config.min_room_side_length"
    for key in ("min_room_side_length", "door_padding", "door_width"):
        assert f"map.building_config.{key}" in str(err)
    assert "got 7" in str(err) and "= 8" in str(err)


def test_door_rule_boundary_is_allowed():
    cfg = config_from_dict(
        {"map": {"building_config": {"min_room_side_length": 8, "door_width": 4}}}
    )
    assert cfg.map.building_config.min_room_side_length == 8


@pytest.mark.parametrize(
    "kinds",
    [
        {"building_config": {}, "cave_config": {}},
        {"cave_config": None, "building_config": {}, "custom_map_filename": "m.pgm"},
    ],
)
def test_two_map_kinds_at_once(kinds):
    err = _error({"map": kinds})
    assert err.key == "map"
    named = [k for k, v in kinds.items() if v is not None]
    assert " and ".join(named) in str(err)
    assert "only one of" in str(err)


def test_two_spawn_modes_at_once():
    err = _error({"robot_spawn_config": {"biggest_room": True, "spawn_at_hallway_ends": True}})
    assert err.key == "robot_spawn_config"
    assert "biggest_room and spawn_at_hallway_ends" in str(err)


def test_spawn_together_mapping_counts_as_selected():
    err = _error({"robot_spawn_config": {"biggest_room": True, "spawn_together": {}}})
    assert "biggest_room and spawn_together" in str(err)


def test_false_spawn_flags_are_not_selections():
    cfg = config_from_dict(
        {"robot_spawn_config": {"biggest_room": False, "spawn_at_hallway_ends": True}}
    )
    assert cfg.robot_spawn_config.mode == "spawn_at_hallway_ends"


def test_suggested_point_needs_both_coordinates():
    err = _error({"robot_spawn_config": {"spawn_together": {"suggested_starting_point_y": 3}}})
    assert err.key == "robot_spawn_config.spawn_together.suggested_starting_point_x"
    assert "suggested_starting_point_y is set" in str(err)


def test_suggested_point_must_lie_on_the_map():
    data = {
        "map": {"width_in_tiles": 30, "height_in_tiles": 20},
        "robot_spawn_config": {
            "spawn_together": {"suggested_starting_point_x": 14, "suggested_starting_point_y": 10}
        },
    }
    err = _error(data)
    assert err.key == "robot_spawn_config.spawn_together.suggested_starting_point_y"
    assert "got 10" in str(err) and "from -10 to 9" in str(err)
    data["robot_spawn_config"]["spawn_together"]["suggested_starting_point_y"] = -10
    assert config_from_dict(data).robot_spawn_config.spawn_together.starting_point == (14, -10)


def test_hallway_spawn_needs_a_building_map():
    err = _error(
        {"robot_spawn_config": {"spawn_at_hallway_ends": True}, "map": {"cave_config": {}}}
    )
    assert err.key == "robot_spawn_config.spawn_at_hallway_ends"
    assert "cave" in str(err)


@pytest.mark.parametrize("name", ["", "   "])
def test_empty_custom_map_filename(name):
    err = _error({"map": {"custom_map_filename": name}})
    assert err.key == "map.custom_map_filename"
    assert "non-empty string" in str(err)


def test_custom_map_needs_a_known_file_type(tmp_path):
    (tmp_path / "m.png").write_bytes(b"")
    err = _error({"map": {"custom_map_filename": str(tmp_path / "m.png")}})
    assert err.key == "map.custom_map_filename"
    assert "m.png" in str(err) and ".pgm" in str(err)


def test_first_error_in_file_order_is_reported():
    err = _error({"motion": {"model": "x"}, "map": {"width_in_tiles": 1}})
    assert err.key == "motion.model"


# ---------------------------------------------------------------------------------------------
# Files


def test_load_error_names_the_file(tmp_path):
    path = _write(tmp_path, "number_of_robots: -1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: number_of_robots: got -1")
    assert info.value.source == str(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found") as info:
        load_config(tmp_path / "nope.yaml")
    assert str(tmp_path / "nope.yaml") in str(info.value)


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(ConfigError, match="is a directory") as info:
        load_config(tmp_path)
    assert str(tmp_path) in str(info.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("map: [1, 2\n", "invalid YAML"),
        ("map:\n  width_in_tiles: 30\n   height: 3\n", "invalid YAML"),
        ("- 1\n- 2\n", "top level: got [1, 2] (a list), expected a mapping"),
        ("just text\n", "top level: got 'just text' (a string)"),
        ("", "empty"),
        ("# only a comment\n", "empty"),
        ("map: {}\nmap: {cave_config: {}}\n", "'map' appears twice"),
        ("map:\n  cave_config: {}\n  cave_config: {}\n", "'cave_config' appears twice"),
    ],
)
def test_unusable_file_content(tmp_path, text, fragment):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(str(path))
    assert fragment in str(info.value)


def test_merge_keys_and_overrides_are_not_duplicates(tmp_path):
    text = "map:\n  <<: {width_in_tiles: 20, height_in_tiles: 20}\n  width_in_tiles: 30\n"
    cfg = load_config(_write(tmp_path, text))
    assert (cfg.map.width_in_tiles, cfg.map.height_in_tiles) == (30, 20)


def test_unhashable_yaml_key(tmp_path):
    with pytest.raises(ConfigError, match="unhashable key"):
        load_config(_write(tmp_path, "? [1, 2]\n: x\n"))


def test_not_utf8(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"number_of_robots: \xff\xfe\n")
    with pytest.raises(ConfigError, match="cannot read") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_exponent_without_decimal_point_is_a_number(tmp_path):
    # YAML 1.2 (and users) read 1e3 as a number; PyYAML's YAML 1.1 rules read it as a string.
    cfg = load_config(_write(tmp_path, "robot_constraints:\n  broadcast_range: 1e3\n"))
    assert cfg.robot_constraints.broadcast_range == 1000.0
    cfg = load_config(_write(tmp_path, "robot_constraints:\n  broadcast_range: 1.0e3\n"))
    assert cfg.robot_constraints.broadcast_range == 1000.0
    with pytest.raises(ConfigError, match=r"end_criteria.tick: got 1000.0, expected an integer"):
        load_config(_write(tmp_path, "end_criteria:\n  tick: 1e3\n"))


# ---------------------------------------------------------------------------------------------
# Custom map paths


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("P2\n1 1\n255\n255\n")
    return path


def test_custom_map_is_relative_to_the_config_folder(tmp_path, monkeypatch):
    pgm = _touch(tmp_path / "maps" / "cave.pgm")
    cfg_path = _write(tmp_path, "map:\n  custom_map_filename: ../maps/cave.pgm\n", "cfg/a.yaml")
    monkeypatch.chdir(tmp_path / "maps")  # the working directory must not matter
    cfg = load_config(cfg_path)
    assert cfg.map.custom_map_filename == str(pgm)
    assert os.path.isabs(cfg.map.custom_map_filename)
    assert cfg.map.kind == "custom"


def test_absolute_custom_map_path_is_kept(tmp_path):
    pgm = _touch(tmp_path / "m.PGM")
    cfg = load_config(_write(tmp_path, f"map: {{custom_map_filename: '{pgm}'}}\n", "x/c.yaml"))
    assert cfg.map.custom_map_filename == str(pgm)


def test_missing_custom_map_names_written_and_tried_paths(tmp_path):
    cfg_path = _write(tmp_path, "map:\n  custom_map_filename: maps/none.yaml\n", "cfg/a.yaml")
    with pytest.raises(ConfigError) as info:
        load_config(cfg_path)
    err = info.value
    assert err.key == "map.custom_map_filename"
    assert err.value == "maps/none.yaml"
    assert "'maps/none.yaml'" in str(err)
    assert str(tmp_path / "cfg" / "maps" / "none.yaml") in str(err)
    assert str(err).startswith(str(cfg_path))


def test_custom_map_that_is_a_directory(tmp_path):
    (tmp_path / "d.pgm").mkdir()
    err = _error({"map": {"custom_map_filename": str(tmp_path / "d.pgm")}})
    assert "is a directory" in str(err)


def test_symlinked_config_resolves_beside_the_link(tmp_path):
    real = _write(tmp_path, "map: {custom_map_filename: m.pgm}\n", "real/c.yaml")
    _touch(tmp_path / "run" / "m.pgm")
    link = tmp_path / "run" / "c.yaml"
    link.symlink_to(real)
    assert load_config(link).map.custom_map_filename == str(tmp_path / "run" / "m.pgm")


def test_config_from_dict_resolves_against_base_dir(tmp_path):
    pgm = _touch(tmp_path / "m.pgm")
    cfg = config_from_dict({"map": {"custom_map_filename": "m.pgm"}}, base_dir=tmp_path)
    assert cfg.map.custom_map_filename == str(pgm)


def test_programmatic_custom_map_resolves_against_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    world_map = MapConfig(custom_map_filename="sub/m.yaml")
    assert world_map.custom_map_filename == str(tmp_path / "sub" / "m.yaml")
    assert world_map.building_config is None and world_map.kind == "custom"


# ---------------------------------------------------------------------------------------------
# Programmatic construction goes through the same rules


def test_dataclasses_validate_on_construction():
    with pytest.raises(ConfigError) as info:
        SimConfig(number_of_robots=0)
    assert info.value.key == "number_of_robots" and info.value.source is None
    with pytest.raises(ConfigError, match="map.cave_config.random_fill_percent: got 150"):
        CaveConfig(random_fill_percent=150)
    with pytest.raises(ConfigError, match="map.building_config.door_padding"):
        BuildingConfig(min_room_side_length=5)
    with pytest.raises(ConfigError, match="only one of"):
        MapConfig(cave_config=CaveConfig(), building_config=BuildingConfig())
    with pytest.raises(ConfigError, match="robot_spawn_config: select at most one"):
        RobotSpawnConfig(biggest_room=True, spawn_together=SpawnTogether())


def test_replace_validates():
    cfg = SimConfig()
    with pytest.raises(ConfigError, match="number_of_robots: got '3' \\(a string\\)"):
        dataclasses.replace(cfg, number_of_robots="3")
    with pytest.raises(ConfigError, match="robot_constraints.agent_relative_size"):
        dataclasses.replace(cfg.robot_constraints, agent_relative_size=0)
    ok = dataclasses.replace(cfg, map=MapConfig(cave_config=CaveConfig(smoothing_runs=2)))
    assert ok.map.kind == "cave" and ok.map.cave_config.smoothing_runs == 2


def test_sections_must_be_their_dataclass():
    with pytest.raises(ConfigError, match="map: got {'width_in_tiles': 30} .* a MapConfig"):
        SimConfig(map={"width_in_tiles": 30})
    with pytest.raises(ConfigError, match="expected a CaveConfig or None"):
        MapConfig(cave_config=BuildingConfig())


def test_cross_section_rules_apply_programmatically():
    with pytest.raises(ConfigError, match="only building maps have hallways"):
        SimConfig(
            robot_spawn_config=RobotSpawnConfig(spawn_at_hallway_ends=True),
            map=MapConfig(cave_config=CaveConfig()),
        )


def test_construction_normalises_values():
    cfg = SimConfig(random_seeds=[3, 4], robot_constraints=RobotConstraints(broadcast_range=20))
    assert cfg.random_seeds == (3, 4)
    assert type(cfg.robot_constraints.broadcast_range) is float
    assert hash(cfg) == hash(
        SimConfig(random_seeds=(3, 4), robot_constraints=RobotConstraints(broadcast_range=20.0))
    )


def test_configs_are_frozen():
    cfg = SimConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.number_of_robots = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.map.width_in_tiles = 5  # type: ignore[misc]


def test_config_error_pickles(tmp_path):
    err = _error({"number_of_robots": 0})
    copy = pickle.loads(pickle.dumps(err))
    assert (str(copy), copy.key, copy.value, copy.source) == (str(err), err.key, 0, "<dict>")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "missing.yaml")
    copy = pickle.loads(pickle.dumps(info.value))
    assert copy.value is info.value.value and copy.key is None  # "no value" survives pickling


# ---------------------------------------------------------------------------------------------
# Round trip


def _round_trip(cfg: SimConfig) -> SimConfig:
    text = yaml.safe_dump(config_to_dict(cfg), sort_keys=False)
    return config_from_dict(yaml.safe_load(text))


def test_round_trip_defaults_and_custom_values(tmp_path):
    pgm = _touch(tmp_path / "m.pgm")
    configs = [
        SimConfig(),
        config_from_dict(yaml.safe_load(MAES2_TEXT)),
        SimConfig(
            random_seeds=(5, 6, 7),
            number_of_robots=12,
            global_settings=GlobalSettings(
                statistics_result_path="out", ticks_per_stats_snapshot=3
            ),
            end_criteria=EndCriteria(coverage_percent=50, tick=100),
            robot_spawn_config=RobotSpawnConfig(biggest_room=True),
            map=MapConfig(custom_map_filename=str(pgm)),
            world=WorldConfig(tile_size=0.05),
            motion=MotionConfig(
                model="differential_drive", odometry_noise=0.01, heading_noise=0.02
            ),
            stack=StackConfig(slam="slam_toolbox", nav="nav2", cmd_vel_timeout=1),
        ),
    ]
    for cfg in configs:
        assert _round_trip(cfg) == cfg


def test_export_is_plain_yaml_data():
    data = config_to_dict(SimConfig())
    assert isinstance(data["random_seeds"], list)
    yaml.safe_dump(data)  # raises for anything that is not plain data
    with pytest.raises(TypeError):
        config_to_dict({"number_of_robots": 1})  # type: ignore[arg-type]


def _strategy(check):
    """Hypothesis values that the given field check accepts."""
    if isinstance(check, Nullable):
        return st.none() | _strategy(check.inner)
    if isinstance(check, Bool):
        return st.booleans()
    if isinstance(check, Choice):
        return st.sampled_from(check.options)
    if isinstance(check, Int):
        lo = -(10**6) if check.lo is None else check.lo
        return st.integers(lo, 10**6 if check.hi is None else check.hi)
    if isinstance(check, Float):
        lo = -1e6 if check.lo is None else check.lo
        return st.floats(lo, 1e6 if check.hi is None else check.hi, exclude_min=check.lo_open)
    if isinstance(check, OpenInterval):
        return st.floats(check.lo, check.hi, exclude_min=True, exclude_max=True)
    raise AssertionError(f"no strategy for {check!r}")


_LEAF_SECTIONS = [
    GlobalSettings,
    RobotConstraints,
    EndCriteria,
    CaveConfig,
    BuildingConfig,
    WorldConfig,
    MotionConfig,
    StackConfig,
    OccupancyConfig,
]


@st.composite
def _section_values(draw, cls):
    values = {}
    for f in dataclasses.fields(cls):
        if f.name == "statistics_result_path":
            values[f.name] = draw(st.sampled_from(["results", "a/b", "Default", ""]))
        elif "section" in f.metadata:
            continue  # a sub-section: drawn as a leaf section of its own
        else:
            values[f.name] = draw(_strategy(f.metadata["check"]))
    return values


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_valid_sections_round_trip(data):
    sections = {}
    for cls in _LEAF_SECTIONS:
        values = data.draw(_section_values(cls))
        try:
            sections[cls] = cls(**values)
        except ConfigError:
            sections[cls] = cls()  # a cross-key rule rejected this draw
    try:
        cfg = _sim_config(data, sections)
    except ConfigError as err:  # the tick-cost rule may refuse what every section allowed
        assert err.key == "robot_constraints.agent_relative_size", err
        cfg = _sim_config(data, {**sections, RobotConstraints: RobotConstraints()})
    assert _round_trip(cfg) == cfg


def _sim_config(data, sections):
    return SimConfig(
        global_settings=sections[GlobalSettings],
        robot_constraints=sections[RobotConstraints],
        end_criteria=sections[EndCriteria],
        map=MapConfig(cave_config=sections[CaveConfig])
        if data.draw(st.booleans())
        else MapConfig(building_config=sections[BuildingConfig]),
        world=sections[WorldConfig],
        motion=sections[MotionConfig],
        stack=dataclasses.replace(sections[StackConfig], occupancy=sections[OccupancyConfig]),
    )


_KEY_NAMES = sorted({p.rsplit(".", 1)[-1] for p in key_paths()} | {"junk"})
_ANY_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEY_NAMES), inner),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEY_NAMES), _ANY_DATA, max_size=4))
def test_arbitrary_data_gives_a_config_or_a_config_error(data):
    try:
        cfg = config_from_dict(data)
    except ConfigError as err:
        assert err.source == "<dict>" and err.key
    else:
        assert isinstance(cfg, SimConfig)


# ---------------------------------------------------------------------------------------------
# Shipped files


def test_shipped_default_config():
    cfg = load_config(REPO / "maes_config.yaml")
    assert cfg.number_of_robots == 3
    assert cfg.map.kind == "building"
    assert (cfg.map.width_in_tiles, cfg.map.height_in_tiles) == (30, 30)
    assert cfg.end_criteria.exploration_percent is not None
    assert cfg.end_criteria.tick is not None  # a safety stop so the demo always ends


@pytest.mark.parametrize(
    "path", sorted(glob.glob(str(REPO / "configs" / "*.yaml"))), ids=os.path.basename
)
def test_every_example_config_loads(path):
    cfg = load_config(path)
    assert _round_trip(cfg) == cfg
    if cfg.map.kind == "custom":
        assert os.path.isfile(cfg.map.custom_map_filename)


def _yaml_scalar(value) -> str:
    return yaml.safe_dump(value, default_flow_style=True).replace("...", "").strip()


def test_reference_documents_every_key_with_its_default():
    rows = {}
    for line in (REPO / "docs" / "config_reference.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.fullmatch(r"`[a-z_.]+`", cells[0]):
            rows[cells[0].strip("`")] = cells[1].strip("`")
    documented = dict(EXPECTED_DEFAULTS)
    documented.pop("map.cave_config")
    documented.update({f"map.cave_config.{k}": v for k, v in CAVE_DEFAULTS.items()})
    for path, default in documented.items():
        assert path in rows, f"{path} is not in docs/config_reference.md"
        assert rows[path] == _yaml_scalar(default), path


# ---------------------------------------------------------------------------------------------
# Bounds from what the physics and memory can do (issue 17)


@pytest.mark.parametrize(
    ("data", "key", "fragment"),
    [
        (
            {"global_settings": {"physics_ticks_per_logic_update": 10**9}},
            "global_settings.physics_ticks_per_logic_update",
            "from 1 to 100",
        ),
        (
            {"global_settings": {"logic_ticks_delta_millis": 10**9}},
            "global_settings.logic_ticks_delta_millis",
            "from 1 to 10000",
        ),
        (
            {"robot_constraints": {"agent_relative_size": 1e-9}},
            "robot_constraints.agent_relative_size",
            "from 0.01 to 1",
        ),
        (
            {"robot_constraints": {"relative_move_speed": 1e6}},
            "robot_constraints.relative_move_speed",
            "<= 100",
        ),
        (
            {"robot_constraints": {"relative_move_speed": 10**30}},
            "robot_constraints.relative_move_speed",
            "<= 100",
        ),
        (
            {"robot_constraints": {"relative_move_speed": 10**400}},
            "robot_constraints.relative_move_speed",
            "<= 100",
        ),
        (
            {"robot_constraints": {"broadcast_range": 10**400}},
            "robot_constraints.broadcast_range",
            "(or .inf for unlimited)",
        ),
        (
            {"robot_constraints": {"slam_position_inaccuracy": 1e308}},
            "robot_constraints.slam_position_inaccuracy",
            "from 0 to 7072",
        ),
        ({"world": {"tile_size": 1e300}}, "world.tile_size", "from 0.001 to 1000"),
        (
            {"map": {"cave_config": {"connection_passage_width": 10**9}}},
            "map.cave_config.connection_passage_width",
            "from 1 to 20",
        ),
        (
            {"map": {"cave_config": {"smoothing_runs": 10**9}}},
            "map.cave_config.smoothing_runs",
            "from 0 to 100",
        ),
        ({"end_criteria": {"tick": 2**63}}, "end_criteria.tick", "2147483647"),
        (
            {
                "robot_spawn_config": {
                    "spawn_together": {
                        "suggested_starting_point_x": 10**30,
                        "suggested_starting_point_y": 0,
                    }
                }
            },
            "robot_spawn_config.spawn_together.suggested_starting_point_x",
            "from -5000 to 5000",
        ),
    ],
)
def test_values_the_physics_cannot_run_are_refused(data, key, fragment):
    err = _error(data)
    assert err.key == key and fragment in str(err), str(err)


def test_tick_cost_combines_size_speed_and_tick_length():
    # Each setting alone is allowed; together one tick needs 1,200 collision sub-steps.
    data = {
        "robot_constraints": {"agent_relative_size": 0.02, "relative_move_speed": 10},
        "global_settings": {"logic_ticks_delta_millis": 100},
    }
    err = _error(data)
    assert err.key == "robot_constraints.agent_relative_size"
    assert "1200 collision sub-steps per tick" in str(err) and "1000 allowed" in str(err)
    data["robot_constraints"]["relative_move_speed"] = 1
    assert config_from_dict(data).robot_constraints.agent_relative_size == 0.02


def test_slam_memory_bound_for_generated_and_custom_maps(tmp_path):
    err = _error(
        {"number_of_robots": 100, "map": {"width_in_tiles": 5000, "height_in_tiles": 5000}}
    )
    assert err.key == "number_of_robots" and "GiB of SLAM maps" in str(err)
    assert config_from_dict(
        {"number_of_robots": 40, "map": {"width_in_tiles": 5000, "height_in_tiles": 5000}}
    )
    from maes_sim.core import Simulation

    pgm = tmp_path / "m.pgm"
    pgm.write_bytes(b"P5\n4000 300\n255\n" + bytes([254]) * 1_200_000)
    cfg = config_from_dict({"number_of_robots": 1000, "map": {"custom_map_filename": str(pgm)}})
    with pytest.raises(ConfigError, match="1000 robots on a 4000x300 map need 1.1 GiB"):
        Simulation(cfg)
