"""The launch's per-robot parameter files follow each robot's type (size, speeds, lidar range,
motion model), as does the built-in navigator's NavParams; a uniform team's files are those of
before (every robot's the same)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from maes_bringup.stack import launch_plan as L
from maes_controller.navigation import NavParams
from maes_sim.core import config_from_dict

PARAMS_DIR = Path(__file__).resolve().parents[1] / "params"
TEAM = {
    "world": {"tile_size": 0.5},
    "robot_types": {
        "scout": {
            "agent_relative_size": 0.4,
            "relative_move_speed": 1.5,
            "motion": {"model": "omnidirectional"},
            "lidar": {"range": 5.0},
        },
        "diff": {"agent_relative_size": 0.8, "motion": {"model": "differential_drive"}},
    },
    "team": [
        {"type": "scout", "count": 1},
        {"type": "diff", "count": 1},
        {"type": "default", "count": 1},
    ],
}


def _nav2_files(cfg):
    plan = L.plan_launch(
        cfg, params_dir=PARAMS_DIR, rviz_config="/r.rviz", out_dir="/tmp/p", nav="nav2",
        config_path="/cfg/run.yaml",
    )  # fmt: skip
    files = [f for f in plan.files if f.path.endswith("nav2_params.yaml")]
    assert len(files) == cfg.number_of_robots
    return [yaml.safe_load(f.text) for f in files]


def _find(tree, key):
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k == key:
                yield v
            yield from _find(v, key)
    elif isinstance(tree, list):
        for v in tree:
            yield from _find(v, key)


def test_each_robots_nav2_file_follows_its_type():
    files = _nav2_files(config_from_dict(TEAM))
    radii = [set(_find(f, "robot_radius")) for f in files]
    assert radii == [{0.1}, {0.2}, {0.15}]  # size / 2 x 0.5 m per tile
    speeds = [set(_find(f, "desired_linear_vel")) for f in files]
    assert speeds == [{2.25}, {1.5}, {1.5}]  # 3 tiles/s x speed factor x 0.5
    turn = [set(_find(f, "rotate_to_heading_min_angle")) for f in files]
    assert turn[2] == {0.1} and turn[0] == turn[1] != turn[2]  # only the MAES model's is 0.1


def test_a_uniform_team_writes_the_same_files_as_no_team():
    plain = _nav2_files(config_from_dict({"number_of_robots": 2}))
    team = _nav2_files(config_from_dict({"team": [{"type": "default", "count": 2}]}))
    assert plain == team


@pytest.mark.parametrize(
    ("robot", "radius", "speed"), [(0, 0.1, 2.25), (1, 0.2, 1.5), (2, 0.15, 1.5)]
)
def test_the_builtin_navigator_follows_the_type(robot, radius, speed):
    p = NavParams.from_config(config_from_dict(TEAM), robot=robot)
    assert (p.robot_radius, p.max_linear_speed) == pytest.approx((radius, speed))
