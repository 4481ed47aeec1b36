"""Robot types and teams: the config form, its named errors, and each per-type property in the
core (size in collisions, speeds, motion model, lidar rays / field of view / range, ranges)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from maes_sim.core import ConfigError, Simulation, WorldMap, config_from_dict, config_to_dict
from maes_sim.core.kernels import ray_angle_offsets

ISSUE_FORM = """
robot_types:
  scout:
    agent_relative_size: 0.4
    relative_move_speed: 1.5
    motion: {model: omnidirectional}        # maes | differential_drive | omnidirectional
    lidar: {rays: 90, field_of_view_deg: 120, range: 5.0}
    broadcast_range: 10.0
    sense_nearby_agents_range: 3.0
team:
  - {type: scout, count: 2}
  - {type: default, count: 1}
"""


def open_room(h=20, w=30):
    walls = np.zeros((h, w), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    return WorldMap(walls=walls, name="room")


def sim_of(data: dict, world=None) -> Simulation:
    return Simulation(config_from_dict(data), world=world or open_room())


def place(sim, grid_xy, headings=None):
    xy = np.asarray(grid_xy, dtype=float) - np.array([sim.shape[1], sim.shape[0]]) / 2
    head = np.zeros(len(xy)) if headings is None else np.asarray(headings, dtype=float)
    sim.place_robots(np.column_stack([xy, head]))


# ------------------------------------------------------------------------------- the config


def test_the_issue_form_loads_and_round_trips():
    cfg = config_from_dict(yaml.safe_load(ISSUE_FORM))
    assert cfg.number_of_robots == 3  # the team sets the count
    scout, _, default = cfg.robot_type_per_robot()
    assert (scout.name, scout.radius, scout.relative_move_speed) == ("scout", 0.2, 1.5)
    assert (scout.motion_model, scout.lidar_rays, scout.lidar_fov_deg) == (
        "omnidirectional",
        90,
        120.0,
    )
    assert (scout.lidar_range, scout.broadcast_range, scout.sense_nearby_agents_range) == (
        5.0,
        10.0,
        3.0,
    )
    # what the scout leaves out comes from robot_constraints; default is robot_constraints
    assert scout.environment_tag_read_range == 4.0
    assert (default.name, default.radius, default.motion_model, default.lidar_rays) == (
        "default",
        0.3,
        "maes",
        180,
    )
    assert config_from_dict(config_to_dict(cfg)) == cfg


@pytest.mark.parametrize(
    ("data", "key", "fragment"),
    [
        (
            {"robot_types": {"scout": {}}, "team": [{"type": "scot", "count": 1}]},
            "team[0].type",
            "unknown robot type 'scot'; did you mean 'scout'?",
        ),
        (
            {"number_of_robots": 4, "team": [{"type": "default", "count": 3}]},
            "number_of_robots",
            "the team's counts add up to 3",
        ),
        (
            {"robot_types": {"scout": {"agent_relative_sise": 0.3}}},
            "robot_types.scout.agent_relative_sise",
            "did you mean 'agent_relative_size'?",
        ),
        (
            {"robot_types": {"scout": {"lidar": {"rayz": 4}}}},
            "robot_types.scout.lidar.rayz",
            "did you mean 'rays'?",
        ),
        (
            {"robot_types": {"scout": {"lidar": {"field_of_view_deg": 400}}}},
            "robot_types.scout.lidar.field_of_view_deg",
            "<= 360",
        ),
        (
            {"robot_types": {"scout": {"lidar": {"rays": 0}}}},
            "robot_types.scout.lidar.rays",
            "from 1 to 10000",
        ),
        (
            {"robot_types": {"scout": {"agent_relative_size": 2.0}}},
            "robot_types.scout.agent_relative_size",
            "from 0.01 to 1",
        ),
        (
            {"robot_types": {"scout": {"motion": {"model": "holonomic"}}}},
            "robot_types.scout.motion.model",
            "'omnidirectional'",
        ),
        (
            {"robot_types": {"s": {"agent_relative_size": 0.01, "relative_move_speed": 100}}},
            "robot_types.s.agent_relative_size",
            "collision sub-steps",
        ),
        (
            {"robot_types": {"s": {"slam_raytrace_range": 3, "lidar": {"range": 4}}}},
            "robot_types.s.lidar.range",
            "give the lidar range once",
        ),
        ({"team": [{"type": "default"}]}, "team[0].count", "missing 'count'"),
        ({"team": [{"type": "default", "count": 0}]}, "team[0].count", "from 1 to 5000"),
        ({"team": [{"type": "default", "n": 2}]}, "team[0].n", "unknown key 'n'"),
        ({"robot_types": {"a b": {}}}, "robot_types", "expected letters, digits"),
    ],
)
def test_bad_types_and_teams_get_named_errors(data, key, fragment):
    with pytest.raises(ConfigError) as err:
        config_from_dict(data)
    assert err.value.key == key
    assert fragment in err.value.problem


def test_a_team_of_the_default_type_is_the_run_without_a_team():
    plain = sim_of({"number_of_robots": 3})
    team = sim_of({"team": [{"type": "default", "count": 3}]})
    rng = np.random.default_rng(3)
    for t in range(40):
        if t % 5 == 0:
            lin, ang = rng.uniform(-3, 3, 3), rng.uniform(-3, 3, 3)
            plain.set_velocities(lin, ang)
            team.set_velocities(lin, ang)
        plain.step()
        team.step()
    assert np.array_equal(plain.poses, team.poses)
    assert np.array_equal(plain.lidar_ranges, team.lidar_ranges)
    assert np.array_equal(plain.slam_maps, team.slam_maps)


# --------------------------------------------------------------------------------- the core


MIXED = {
    "robot_types": {
        "small": {"agent_relative_size": 0.4, "relative_move_speed": 2.0},
        "big": {"agent_relative_size": 0.8},
    },
    "team": [{"type": "small", "count": 1}, {"type": "big", "count": 1}],
}


def test_sizes_in_collisions_robots_touch_at_the_sum_of_their_radii():
    sim = sim_of(MIXED)
    place(sim, [[10.5, 10.0], [13.5, 10.0]], [0.0, math.pi])
    np.testing.assert_array_equal(sim.team.radii, [0.2, 0.4])
    for _ in range(40):  # drive into each other
        sim.set_velocities(np.array([1.0, 1.0]), np.zeros(2))
        sim.step()
    gap = float(np.hypot(*(sim.poses[0, :2] - sim.poses[1, :2])))
    assert sim.collided.any() or sim.colliding.all()
    assert gap == pytest.approx(0.6, abs=0.01)  # 0.2 + 0.4, not 2 x either radius


def test_sizes_against_walls():
    sim = sim_of(MIXED)
    place(sim, [[3.0, 10.0], [3.0, 14.0]], [math.pi, math.pi])
    for _ in range(40):  # both drive into the left wall (its face at x = 1)
        sim.set_velocities(np.array([1.0, 1.0]), np.zeros(2))
        sim.step()
    grid_x = sim.poses[:, 0] + sim.shape[1] / 2
    np.testing.assert_allclose(grid_x, [1.2, 1.4], atol=1e-6)


def test_speeds_follow_the_type():
    sim = sim_of(MIXED)
    place(sim, [[3.0, 5.0], [3.0, 15.0]])
    sim.set_velocities(np.array([100.0, 100.0]), np.zeros(2))
    for _ in range(40):
        sim.step()
    np.testing.assert_allclose(sim.velocities[:, 0], [6.0, 3.0], rtol=1e-3)


OMNI = {
    "robot_types": {"omni": {"motion": {"model": "omnidirectional"}}},
    "team": [{"type": "omni", "count": 1}, {"type": "default", "count": 1}],
}


def test_an_omnidirectional_robot_moves_sideways_and_the_others_do_not():
    sim = sim_of(OMNI)
    place(sim, [[10.0, 6.0], [20.0, 6.0]], [0.0, 0.0])
    start = sim.poses
    for i in range(2):
        sim.set_velocity(i, 0.0, 0.0, 1.0)  # 1 tile/s to the left: +y at heading 0
    for _ in range(30):
        sim.step()
    moved = sim.poses - start
    assert moved[0, 1] > 1.5 and abs(moved[0, 0]) < 1e-9 and moved[0, 2] == 0.0
    assert np.array_equal(moved[1], np.zeros(3))  # the MAES robot drops the sideways part
    assert sim.statuses[0] == "Moving"


def test_the_omnidirectional_planar_speed_is_capped():
    sim = sim_of(OMNI)
    place(sim, [[10.0, 6.0], [20.0, 6.0]])
    sim.set_velocity(0, 30.0, 0.0, 40.0)
    start = sim.poses[0, :2]
    for _ in range(50):
        sim.step()
    d = sim.poses[0, :2] - start
    assert d[1] / d[0] == pytest.approx(4.0 / 3.0, rel=1e-6)  # the direction kept
    before = sim.poses[0, :2]
    sim.step()
    assert float(np.hypot(*(sim.poses[0, :2] - before))) == pytest.approx(0.3, rel=1e-3)


LIDARS = {
    "robot_types": {
        "narrow": {"lidar": {"rays": 31, "field_of_view_deg": 90, "range": 4.0}},
        "wide": {"lidar": {"rays": 72}},
    },
    "team": [{"type": "narrow", "count": 1}, {"type": "wide", "count": 1}],
}


def test_each_robot_scans_with_its_own_lidar():
    sim = sim_of(LIDARS)
    place(sim, [[15.0, 10.0], [10.0, 10.0]])
    narrow, narrow_hit = sim.lidar_of(0)
    wide, _ = sim.lidar_of(1)
    assert (narrow.shape, wide.shape) == ((31,), (72,))
    assert narrow.max() <= 4.0 and not narrow_hit.all()  # its range; open ahead
    rays, fov = sim.lidar_geometry(0)
    assert rays == 31 and fov == pytest.approx(math.pi / 2)
    offsets = ray_angle_offsets(rays, fov)
    assert offsets[0] == pytest.approx(-math.pi / 4) and offsets[-1] == pytest.approx(math.pi / 4)
    assert offsets[15] == 0.0
    # robot 1 (5 tiles behind robot 0) is out of the narrow lidar's view; the wide lidar's
    # ray 36 (straight ahead) stops at robot 0's body, 5 tiles ahead less its radius
    assert wide[36] == pytest.approx(5.0 - 0.3)
    with pytest.raises(ValueError, match="lidar_of"):
        sim.lidar_ranges  # noqa: B018


def test_a_narrow_lidar_explores_only_what_it_sees():
    sim = sim_of(
        {
            "robot_types": {"n": {"lidar": {"rays": 9, "field_of_view_deg": 20}}},
            "team": [{"type": "n", "count": 1}],
        }
    )
    seen = sim.slam_maps[0] != 0
    ys, xs = np.nonzero(seen)
    start = sim.poses[0] + np.array([sim.shape[1] / 2, sim.shape[0] / 2, 0.0])
    bearing = np.arctan2(ys + 0.5 - start[1], xs + 0.5 - start[0]) - start[2]
    bearing = (bearing + math.pi) % (2 * math.pi) - math.pi
    far = np.hypot(ys + 0.5 - start[1], xs + 0.5 - start[0]) > 1.5
    assert seen.sum() > 5
    assert (np.abs(bearing[far]) < math.radians(10) + 0.2).all()


def test_sensing_and_broadcast_ranges_follow_the_type():
    sim = sim_of(
        {
            "robot_types": {
                "shortsighted": {"sense_nearby_agents_range": 2.0, "broadcast_range": 2.0}
            },
            "team": [{"type": "shortsighted", "count": 1}, {"type": "default", "count": 1}],
        }
    )
    place(sim, [[10.0, 10.0], [14.0, 10.0]])  # 4 tiles apart
    observer, observed = sim.nearby_pairs()
    assert list(zip(observer.tolist(), observed.tolist(), strict=True)) == [(1, 0)]
    sim.broadcast(0, "from the short one")
    sim.broadcast(1, "from the default one")
    sim.step()
    assert len(sim.robot_state(0).incoming_broadcast_msgs) == 1  # the default robot reaches it
    assert sim.robot_state(1).incoming_broadcast_msgs == []


def test_results_name_each_robots_type_and_draw_robots_at_their_size(tmp_path):
    import json

    from maes_sim.core import marker_areas, write_run_results

    sim = sim_of(MIXED)
    for _ in range(3):
        sim.step()
    out = write_run_results(sim, tmp_path, "run")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["robot_types"] == ["small", "big"]
    assert summary["config"]["team"] == [{"type": "small", "count": 1}, {"type": "big", "count": 1}]
    # the pictures' markers: the small robot at half the big one's diameter
    np.testing.assert_allclose(marker_areas(8.0, sim.team.radii), [16.0, 64.0])
