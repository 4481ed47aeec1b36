"""BatchedSimulation: environments stepped together in one mosaic, independent of each other,
following Simulation (same map and start, trajectories to rounding)."""

import numpy as np
import pytest

from maes_sim.core import BatchedSimulation, Simulation, config_from_dict

CONFIG = config_from_dict(
    {"number_of_robots": 4, "map": {"width_in_tiles": 30, "height_in_tiles": 30}}
)
SEEDS = [3, 4, 5, 6]


def commands(ticks, shape, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-3, 3, shape), rng.uniform(-3, 3, shape)) for _ in range(ticks)]


def test_each_environment_follows_its_simulation():
    batch = BatchedSimulation(CONFIG, SEEDS)
    sims = [Simulation(CONFIG, seed=s) for s in SEEDS]
    for k, sim in enumerate(sims):
        assert (batch.worlds[k].walls == sim.walls).all()
        np.testing.assert_allclose(batch.poses[k], sim.poses, atol=1e-12)
    for lin, ang in commands(60, (len(SEEDS), 4)):
        batch.step(lin, ang)
        for k, sim in enumerate(sims):
            sim.set_velocities(lin[k], ang[k])
            sim.step()
        for k, sim in enumerate(sims):
            np.testing.assert_allclose(batch.poses[k], sim.poses, atol=1e-3)
    explored = batch.exploration_percent()
    np.testing.assert_allclose(explored, [s.exploration_percent for s in sims], atol=0.5)
    ranges = batch.scans()
    for k, sim in enumerate(sims):
        assert np.mean(np.abs(ranges[k] - sim.lidar_ranges) < 1e-3) > 0.99


def test_an_environment_does_not_depend_on_the_others():
    """The first block has no offset: alone or in a batch, it is the same to the bit."""
    alone = BatchedSimulation(CONFIG, SEEDS[:1])
    batch = BatchedSimulation(CONFIG, SEEDS)
    for lin, ang in commands(80, (len(SEEDS), 4)):
        alone.step(lin[:1], ang[:1])
        batch.step(lin, ang)
        assert alone.poses[0].tobytes() == batch.poses[0].tobytes()
        assert alone.scans()[0].tobytes() == batch.scans()[0].tobytes()
    assert alone.explored_counts()[0] == batch.explored_counts()[0]


def test_robots_stay_in_their_own_map():
    batch = BatchedSimulation(CONFIG, SEEDS)
    h, w = batch.shape
    for lin, ang in commands(150, (len(SEEDS), 4), seed=1):
        batch.step(lin * 2, ang)
    p = batch.poses
    assert (np.abs(p[..., 0]) < w / 2).all() and (np.abs(p[..., 1]) < h / 2).all()
    assert (batch.scans() <= batch.range + 1e-9).all()


def test_reset_envs_starts_only_those_again():
    batch = BatchedSimulation(CONFIG, SEEDS)
    for lin, ang in commands(30, (len(SEEDS), 4)):
        batch.step(lin, ang)
    before = batch.explored_counts().copy()
    kept = batch.poses[1].copy()
    batch.reset_envs([0, 2])
    after = batch.explored_counts()
    assert (batch.ticks == [0, 30, 0, 30]).all()
    assert after[1] == before[1] and after[0] > 0
    h = batch.shape[0]
    first = batch.explored_tick[:h]
    assert (first[first >= 0] == 30).all()  # only what the new start sees, now
    second = batch.explored_tick[h + 1 : 2 * h + 1]
    assert (second[second >= 0] < 30).any()  # the untouched env keeps its history
    assert (batch.poses[1] == kept).all() and (batch.velocities[0] == 0).all()


def test_bad_commands_and_seeds_are_named():
    with pytest.raises(ValueError, match="at least one seed"):
        BatchedSimulation(CONFIG, [])
    batch = BatchedSimulation(CONFIG, SEEDS[:2])
    with pytest.raises(ValueError, match="finite|NaN|nan"):
        batch.step(np.full((2, 4), np.nan), np.zeros((2, 4)))
