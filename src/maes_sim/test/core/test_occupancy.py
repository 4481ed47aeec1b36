"""``stack.slam: occupancy`` in the simulation: maps from the robots' own scans at their believed
poses. Exact sensing agrees with the simulated SLAM, drift bends the maps, a walker's trace
fades, maps merge by the robots' poses and through the radio, and nothing new is drawn from the
run's generator.

The robots wander by a rule that reads only their scans (drive ahead; turn while a wall is near
ahead), so runs that differ only in ``stack.slam`` drive the same paths and compare like for
like.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from maes_sim.core import Simulation, WorldMap, config_from_dict
from maes_sim.core.grid import OPEN, SOLID, UNKNOWN

NOISE = {
    "lidar": {"range_noise_std": 0.05, "dropout_probability": 0.05},
    "motion": {"odometry_noise": 0.05, "heading_noise": 0.05},
    "slam_position_inaccuracy": 0.5,
}


def _config(slam: str, seed: int = 0, robots: int = 3, **more):
    data = {
        "number_of_robots": robots,
        "random_seeds": [seed],
        "map": {"width_in_tiles": 30, "height_in_tiles": 30, "cave_config": {}},
        "robot_constraints": {"slam_position_inaccuracy": 0.0},
        "stack": {"slam": slam},
    }
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return config_from_dict(data)


def _wander(sim: Simulation) -> None:
    """Drive ahead; turn in place while the scan's rays within 20 degrees ahead end nearer
    than 1.5 tiles."""
    ranges = sim.lidar_ranges
    mid = ranges.shape[1] // 2
    blocked = ranges[:, mid - 10 : mid + 11].min(axis=1) < 1.5
    sim.set_velocities(np.where(blocked, 0.0, 1.0), np.where(blocked, 1.5, 0.0))


def _run(config, ticks: int) -> Simulation:
    sim = Simulation(config)
    for _ in range(ticks):
        _wander(sim)
        sim.step()
    return sim


def _truth_agreement(sim: Simulation) -> tuple[float, int]:
    """Share of the cells the robots' maps know whose verdict is the ground truth's, and how
    many cells they know (all robots)."""
    maps = sim.slam_maps
    truth = np.broadcast_to(np.where(sim.walls, SOLID, OPEN), maps.shape)
    known = maps != UNKNOWN
    return float((maps[known] == truth[known]).mean()), int(known.sum())


@pytest.mark.parametrize("seed", [0, 3])
def test_with_exact_sensing_and_poses_the_maps_agree_with_the_simulated_slam(seed):
    simulated = _run(_config("simulated", seed), 400)
    occupancy = _run(_config("occupancy", seed), 400)
    # the same paths (the rule reads scans only) and the same exploration: what any lidar
    # truly saw, whatever builds the maps
    assert np.array_equal(simulated.poses, occupancy.poses)
    assert simulated.exploration_percent == occupancy.exploration_percent
    assert np.array_equal(simulated.metrics.explored_tick, occupancy.metrics.explored_tick)
    a, b = simulated.slam_maps, occupancy.slam_maps
    both = (a != UNKNOWN) & (b != UNKNOWN)
    assert both.sum() > 600  # the robots mapped a good part of the cave
    agreement = (a[both] == b[both]).mean()
    assert agreement >= 0.98, agreement
    # and the occupancy maps are their own: built from the scans, not copied
    assert not np.array_equal(a, b)


def test_odometry_drift_bends_the_maps_away_from_the_ground_truth():
    for seed in (0, 1):
        agreement = []
        for drift in (0.0, 0.05, 0.1):
            motion = {"odometry_noise": drift, "heading_noise": drift}
            sim = _run(_config("occupancy", seed, robots=2, motion=motion), 600)
            share, known = _truth_agreement(sim)
            assert known > 500
            agreement.append(share)
        assert agreement[0] > 0.99, (seed, agreement)
        assert agreement[0] > agreement[1] > agreement[2], (seed, agreement)


def test_the_simulated_slam_keeps_ignoring_drift_and_lidar_noise():
    noisy = dict(NOISE, slam_position_inaccuracy=0.0)
    sim = _run(_config("simulated", 0, robots=2, robot_types={"default": noisy}), 500)
    assert _truth_agreement(sim)[0] == 1.0
    occupancy = _run(_config("occupancy", 0, robots=2, robot_types={"default": noisy}), 500)
    exact = _run(_config("occupancy", 0, robots=2), 500)
    # the noise reaches these maps
    assert _truth_agreement(occupancy)[0] < _truth_agreement(exact)[0] - 0.005


def test_range_noise_blurs_the_walls():
    exact = _run(_config("occupancy", 1, robots=2), 300)
    lidar = {"range_noise_std": 0.3}  # metres, tiles of 1 m
    noisy = _run(_config("occupancy", 1, robots=2, robot_types={"default": {"lidar": lidar}}), 300)
    assert _truth_agreement(noisy)[0] < _truth_agreement(exact)[0] - 0.005
    # blurred, not lost: most of what the noisy maps know is still right
    assert _truth_agreement(noisy)[0] > 0.8


# ---------------------------------------------------------------------------------------------
# a random walker crossing a corridor


def _corridor_world() -> WorldMap:
    """Two rooms joined by a corridor 3 tiles wide (rows 5-7); below its middle a booth one
    tile wide (column 10) opens onto it: a robot in the booth watches the corridor, and a walker
    wider than a tile cannot come in."""
    walls = np.ones((12, 22), dtype=bool)
    walls[1:11, 1:7] = walls[1:11, 15:21] = False  # the rooms
    walls[5:8, 7:15] = False  # the corridor
    walls[1:5, 10] = False  # the booth and its opening
    return WorldMap(walls=walls, name="corridor")


def test_a_random_walker_crossing_a_corridor_leaves_no_occupied_cell_there_5_s_after_it_left():
    config = _config(
        "occupancy",
        2,  # a seed whose walker crosses the corridor within the 700 ticks (asserted below)
        robots=1,
        obstacles=[{"random_walkers": 1, "radius": 0.6, "speed": 0.5}],  # m, m/s; 1 m tiles
    )
    world = _corridor_world()
    sim = Simulation(config, world=world)
    sim.place_robots(np.array([[10.5 - 11.0, 3.5 - 6.0, np.pi / 2]]))  # in the booth
    sim.step()
    # the corridor cells the robot sees from the booth (its exact rays' exploration marks of
    # this tick; those of tick 0 are from where it was spawned)
    view = (sim.metrics.explored_tick == sim.tick) & ~world.walls
    view[:5] = False
    ys, xs = np.nonzero(view)
    assert len(xs) >= 6
    five_s = round(5.0 / sim.tick_duration)

    def walker_there() -> bool:  # its disc, widened by 0.2 tiles, overlaps a corridor cell seen
        _, x, y, r, _ = sim.obstacles.shapes[0]
        dx = np.maximum(np.abs(x - (xs + 0.5)) - 0.5, 0.0)
        dy = np.maximum(np.abs(y - (ys + 0.5)) - 0.5, 0.0)
        return bool((dx * dx + dy * dy < (r + 0.2) ** 2).any())

    crossings = []  # (tick it left, whether it left a trace while there, occupied 5 s later)
    there, traced, left = False, False, None
    for _ in range(700):
        sim.step()
        occupied = bool((sim.slam_maps[0][view] == SOLID).any())
        if walker_there():
            if not there:
                traced = False
            there, left = True, None
            traced |= occupied
        elif there:
            there, left = False, sim.tick
        if left is not None and sim.tick == left + five_s:
            crossings.append((left, traced, occupied))
            left = None
    assert len(crossings) >= 1, crossings
    assert any(traced for _, traced, _ in crossings), crossings  # the walker was mapped
    assert not any(occupied for *_, occupied in crossings), crossings  # and faded


# ---------------------------------------------------------------------------------------------
# merging


def _open_room() -> WorldMap:
    walls = np.zeros((20, 30), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    walls[8:12, 14:16] = True  # a pillar, so that two robots' views differ
    return WorldMap(walls=walls, name="room")


def _merge_run(seed: int, radio: dict, ticks: int = 60) -> tuple[Simulation, list[int]]:
    """Robots 0 and 1 a few tiles apart on one side of the pillar, robot 2 far away; every
    robot stands still. Returns the simulation and the ticks at which maps 0 and 1 were equal."""
    config = _config(
        "occupancy",
        seed,
        robots=3,
        robot_constraints={"distribute_slam": True, "broadcast_range": 6.0},
        communication=radio,
    )
    sim = Simulation(config, world=_open_room())
    sim.place_robots(np.array([[-11.0, -2.0, 0.0], [-8.0, 2.0, 1.0], [11.0, 0.0, 2.0]]))
    equal = []
    for _ in range(ticks):
        sim.step()
        if np.array_equal(sim.slam_maps[0], sim.slam_maps[1]):
            equal.append(sim.tick)
    return sim, equal


def test_robots_in_range_end_with_merged_maps():
    sim, equal = _merge_run(0, {"model": "range"})
    # different maps until the first sync (tick 10), one map from then on: each sync merges
    # what the SLAM update of the same tick added
    assert equal == list(range(10, 61))
    maps = sim.slam_maps
    assert np.array_equal(maps[0], maps[1]) and not np.array_equal(maps[0], maps[2])
    assert np.array_equal(sim.slam.grids.logodds[0], sim.slam.grids.logodds[1])
    # the merged map holds what only one of them saw: against the same run without merging
    rc = dataclasses.replace(sim.config.robot_constraints, distribute_slam=False)
    alone = Simulation(dataclasses.replace(sim.config, robot_constraints=rc), world=_open_room())
    alone.place_robots(sim.poses)
    alone.run(max_ticks=60)
    own = alone.slam_maps
    assert ((own[0] == UNKNOWN) & (maps[0] != UNKNOWN)).any()
    assert ((own[1] == UNKNOWN) & (maps[1] != UNKNOWN)).any()
    # robot 2 merged with nobody
    assert np.array_equal(own[2], maps[2])
    assert np.array_equal(alone.slam.grids.logodds[2], sim.slam.grids.logodds[2])


def test_a_lossy_radio_delays_the_merge():
    lossy = {"model": "bernoulli", "loss_probability": 0.7}
    first_perfect, first_lossy = [], []
    for seed in range(6):
        first_perfect.append(_merge_run(seed, {"model": "range"})[1][0])
        sim, equal = _merge_run(seed, lossy, ticks=200)
        assert equal, seed  # they merge in the end
        first_lossy.append(equal[0])
        assert sim.mailbox.radio.map_exchanges_dropped > 0
    assert first_perfect == [10] * 6
    assert all(lossy_tick >= 10 for lossy_tick in first_lossy)
    assert sum(first_lossy) > sum(first_perfect), first_lossy


# ---------------------------------------------------------------------------------------------
# the believed pose, determinism, snapshots


def test_the_believed_pose_is_the_odometry_pose_plus_the_slam_error():
    config = _config("occupancy", 0, robot_types={"default": NOISE})
    sim = _run(config, 60)
    believed = sim.estimated_poses
    expected = sim.odometry_poses
    expected[:, :2] += sim.slam.offsets
    assert np.array_equal(believed, expected)
    assert not np.allclose(believed[:, :2], sim.poses[:, :2], atol=0.01)  # drifted, offset
    obs = sim.observation()
    assert np.array_equal(obs.positions, believed[:, :2])
    assert np.array_equal(obs.headings, believed[:, 2])
    # the simulated SLAM's belief stays the true pose plus its error, as before
    sim = _run(_config("simulated", 0, robot_types={"default": NOISE}), 60)
    expected = sim.poses
    expected[:, :2] += sim.slam.offsets
    assert np.array_equal(sim.estimated_poses, expected)


def test_occupancy_maps_draw_nothing_from_the_generator():
    """Every noise model on: the same draws, the same paths and exploration in either mode."""
    more = {
        "robot_types": {"default": NOISE},
        "obstacles": [{"random_walkers": 2, "radius": 0.4, "speed": 0.5}],
        "robot_constraints": {"distribute_slam": True},
        "communication": {"model": "bernoulli", "loss_probability": 0.3},
    }
    simulated = _run(_config("simulated", 4, **more), 150)
    occupancy = _run(_config("occupancy", 4, **more), 150)
    assert simulated.rng.bit_generator.state == occupancy.rng.bit_generator.state
    assert np.array_equal(simulated.poses, occupancy.poses)
    assert np.array_equal(simulated.odometry_poses, occupancy.odometry_poses)
    assert simulated.exploration_percent == occupancy.exploration_percent


def test_the_same_seed_gives_the_same_maps_and_a_snapshot_continues_them():
    config = _config("occupancy", 5, robot_types={"default": NOISE})
    a = _run(config, 80)
    saved = a.snapshot()
    for _ in range(40):
        _wander(a)
        a.step()
    b = _run(config, 120)
    assert np.array_equal(a.slam_maps, b.slam_maps)
    assert np.array_equal(a.slam.grids.logodds, b.slam.grids.logodds)
    a.restore(saved)
    for _ in range(40):
        _wander(a)
        a.step()
    assert np.array_equal(a.slam.grids.logodds, b.slam.grids.logodds)
    assert np.array_equal(a.slam_maps, b.slam_maps)
