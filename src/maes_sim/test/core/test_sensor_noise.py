"""Sensor noise per robot type (issue 25 item 1): the lidar's Gaussian range error and dropouts,
odometry / heading drift and the SLAM position inaccuracy, all from the simulation's one
generator. Measured on a known map against the exact scan; validated with named errors."""

from __future__ import annotations

import numpy as np
import pytest

from maes_sim.core import Simulation, config_from_dict
from maes_sim.core.config_checks import ConfigError
from maes_sim.core.world import WorldMap

TILE = 0.5
POSES = [[-2.0, -2.0, 0.0], [2.0, -2.0, 1.0], [-2.0, 2.0, 2.0], [2.0, 2.0, -2.5]]


def _room_sim(lidar: dict) -> Simulation:
    """Four idle robots in a closed 12 x 12 room (every ray of a 15-tile lidar hits a wall)."""
    walls = np.zeros((12, 12), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    cfg = config_from_dict(
        {
            "number_of_robots": 4,
            "world": {"tile_size": TILE},
            "robot_types": {"default": {"lidar": {"range": 15.0, **lidar}}},
        }
    )
    sim = Simulation(cfg, world=WorldMap(walls=walls, name="room"))
    sim.place_robots(np.array(POSES))
    return sim


def _scans(sim: Simulation, ticks: int) -> tuple[np.ndarray, np.ndarray]:
    ranges, hits = [], []
    for _ in range(ticks):
        sim.step()
        ranges.append(sim.lidar_ranges.copy())
        hits.append(sim.lidar_hits.copy())
    return np.array(ranges), np.array(hits)


def test_range_noise_has_the_configured_std_in_metres():
    std_m = 0.05
    exact_r, exact_h = _scans(_room_sim({}), 30)
    noisy_r, noisy_h = _scans(_room_sim({"range_noise_std": std_m}), 30)
    assert exact_h.all() and noisy_h.all()  # a closed room: every ray returns
    # errors in metres, away from the clip at 0 and at the range
    keep = (exact_r > 1.0) & (exact_r < 14.0)
    errors = (noisy_r - exact_r)[keep] * TILE
    assert errors.size > 20_000
    assert abs(errors.std() / std_m - 1.0) < 0.03
    assert abs(errors.mean()) < 3 * std_m / np.sqrt(errors.size)
    # fresh draws every tick: the robots stand still, their scans change
    assert not np.array_equal(noisy_r[0], noisy_r[1])


def test_dropout_share_is_within_three_standard_errors():
    p = 0.1
    ranges, hits = _scans(_room_sim({"dropout_probability": p}), 30)
    n = hits.size
    dropped = int((~hits).sum())
    assert abs(dropped / n - p) < 3 * np.sqrt(p * (1 - p) / n)
    assert (ranges[~hits] == 15.0).all()  # a dropout is a no return (inf on the wire)
    exact_r, _ = _scans(_room_sim({}), 30)
    assert np.array_equal(ranges[hits], exact_r[hits])  # the rest are exact


NOISY = {
    "random_seeds": [4],
    "map": {"width_in_tiles": 30, "height_in_tiles": 30, "cave_config": {}},
    "world": {"tile_size": 0.4},
    "robot_types": {
        "scout": {
            "lidar": {"rays": 60, "range_noise_std": 0.03, "dropout_probability": 0.05},
            "motion": {"odometry_noise": 0.05, "heading_noise": 0.02},
            "slam_position_inaccuracy": 0.4,
        },
        "quiet": {"slam_position_inaccuracy": 0.0},
    },
    "team": [{"type": "scout", "count": 3}, {"type": "quiet", "count": 2}],
}


def _run(seed: int, ticks: int = 40) -> dict[str, np.ndarray]:
    sim = Simulation(config_from_dict({**NOISY, "random_seeds": [seed]}))
    rng = np.random.default_rng(0)
    out: dict[str, list] = {"poses": [], "odom": [], "est": [], "scan": []}
    for k in range(ticks):
        if k % 5 == 0:
            sim.set_velocities(rng.uniform(-1, 2, 5), rng.uniform(-1, 1, 5))
        sim.step()
        out["poses"].append(sim.poses)
        out["odom"].append(sim.odometry_poses)
        out["est"].append(sim.estimated_poses)
        out["scan"].append(np.concatenate([sim.lidar_of(i)[0] for i in range(5)]))
    arrays = {k: np.array(v) for k, v in out.items()}
    arrays["slam"] = sim.slam_maps.copy()
    return arrays


def test_same_seed_same_noisy_run_and_each_type_keeps_its_own_noise():
    a, b, c = _run(4), _run(4), _run(5)
    for key in a:
        assert np.array_equal(a[key], b[key]), key  # bit-identical
    assert not np.array_equal(a["scan"], c["scan"])  # another seed, other noise
    # per type: scouts drift and believe offset positions, the quiet type is exact
    drift = np.abs(a["odom"][-1] - a["poses"][-1])[:, :2].max(axis=1)
    offset = np.abs(a["est"] - a["poses"])[:, :, :2].max(axis=(0, 2))
    assert (drift[:3] > 0).all() and (drift[3:] < 1e-9).all()
    assert (offset[:3] > 0).all() and (offset[3:] == 0).all()


def test_the_old_global_keys_mean_the_default_type_and_a_type_overrides_them():
    cfg = config_from_dict(
        {
            "motion": {"odometry_noise": 0.1, "heading_noise": 0.2},
            "robot_constraints": {"slam_position_inaccuracy": 0.3},
            "robot_types": {"q": {"motion": {"odometry_noise": 0.0}}},
            "team": [{"type": "default", "count": 1}, {"type": "q", "count": 1}],
        }
    )
    d, q = cfg.robot_type_per_robot()
    assert (d.odometry_noise, d.heading_noise, d.slam_position_inaccuracy) == (0.1, 0.2, 0.3)
    assert (q.odometry_noise, q.heading_noise, q.slam_position_inaccuracy) == (0.0, 0.2, 0.3)
    assert (d.lidar_range_noise_std, d.lidar_dropout_probability) == (0.0, 0.0)
    # the form loads
    cfg = config_from_dict(
        {
            "robot_types": {
                "default": {"lidar": {"range_noise_std": 0.02, "dropout_probability": 0.01}}
            }
        }
    )
    (t,) = cfg.robot_type_per_robot()[:1]
    assert (t.lidar_range_noise_std, t.lidar_dropout_probability) == (0.02, 0.01)


@pytest.mark.parametrize(
    ("section", "value", "key"),
    [
        ({"lidar": {"range_noise_std": -0.1}}, -0.1, "robot_types.s.lidar.range_noise_std"),
        ({"lidar": {"dropout_probability": 1.5}}, 1.5, "robot_types.s.lidar.dropout_probability"),
        (
            {"lidar": {"dropout_probability": -0.01}},
            -0.01,
            "robot_types.s.lidar.dropout_probability",
        ),
        ({"motion": {"odometry_noise": -1}}, -1, "robot_types.s.motion.odometry_noise"),
        ({"motion": {"heading_noise": "x"}}, "x", "robot_types.s.motion.heading_noise"),
        ({"slam_position_inaccuracy": -2}, -2, "robot_types.s.slam_position_inaccuracy"),
    ],
)
def test_bad_noise_settings_get_named_errors(section, value, key):
    with pytest.raises(ConfigError) as err:
        config_from_dict({"robot_types": {"s": section}})
    assert key in str(err.value)


@pytest.mark.parametrize("seed", [0, 7, 2024])
def test_the_compiled_range_errors_are_numpys_draws_value_for_value(seed):
    """``scaled_normals`` draws on the simulation's generator with numpy's own algorithm: the
    same numbers as ``standard_normal(shape) * scale``, and the same generator state after."""
    from maes_sim.core.kernels.noise import scaled_normals

    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    for n, rays, zeros in ((1, 1, False), (120, 180, True), (7, 361, True), (0, 5, False)):
        scale = np.abs(theirs.standard_normal(n)) * 0.05
        ours.standard_normal(n)
        if zeros:
            scale[::3] = 0.0
        got = scaled_normals(ours, scale, rays)
        want = theirs.standard_normal((n, rays)) * scale[:, None]
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want)
    assert ours.bit_generator.state == theirs.bit_generator.state
    assert ours.random() == theirs.random()
