"""Robot paths kept for the result pictures: bounded, deterministic, from the real simulation."""

from __future__ import annotations

import numpy as np
import pytest

from maes_sim.core import SimConfig, Simulation, Trail, config_from_dict


def test_a_full_trail_doubles_its_stride_and_keeps_the_multiples():
    trail = Trail(2, capacity=8)
    for tick in range(100):
        trail.record(tick, np.array([[tick, -tick], [2 * tick, 0.5]], dtype=float))
    ticks = trail.ticks
    assert trail.stride == 16 and ticks.tolist() == list(range(0, 100, 16))
    assert ticks.size <= 8  # bounded whatever the run length
    pos = trail.positions
    assert pos.shape == (2, ticks.size, 2)
    np.testing.assert_array_equal(pos[0, :, 0], ticks)
    np.testing.assert_array_equal(pos[1, :, 0], 2 * ticks)


def test_a_second_record_for_the_same_tick_replaces_it():
    trail = Trail(1, capacity=4)
    trail.record(0, np.array([[1.0, 1.0]]))
    trail.record(0, np.array([[3.0, 4.0]]))  # robots placed by hand at tick 0
    assert trail.ticks.tolist() == [0] and trail.positions[0, 0].tolist() == [3.0, 4.0]


@pytest.mark.parametrize("capacity", [0, 3, -2])
def test_a_bad_capacity_is_refused(capacity):
    with pytest.raises(ValueError, match="capacity"):
        Trail(1, capacity=capacity)


def test_the_simulation_keeps_every_robot_path_from_spawn_to_now():
    sim = Simulation(SimConfig(number_of_robots=3))
    start = sim.grid_positions
    for _ in range(40):
        sim.set_velocities(np.full(3, 1.5), np.array([0.0, 0.3, -0.3]))
        sim.step()
    trail = sim.trail
    assert trail.ticks.tolist() == list(range(41))  # a short run: every tick
    np.testing.assert_allclose(trail.positions[:, 0], start, atol=1e-5)
    np.testing.assert_allclose(trail.positions[:, -1], sim.grid_positions, atol=1e-5)
    steps = np.linalg.norm(np.diff(trail.positions, axis=1), axis=2)
    # the recorded path is as long as the distance the metrics measured
    np.testing.assert_allclose(steps.sum(axis=1), sim.metrics.distance, rtol=0.05, atol=0.05)


def test_the_same_seed_gives_the_same_trail():
    cfg = config_from_dict(
        {"number_of_robots": 2, "map": {"width_in_tiles": 30, "height_in_tiles": 30}}
    )
    trails = []
    for _ in range(2):
        sim = Simulation(cfg)
        for t in range(30):
            sim.set_velocity(t % 2, 1.0, 0.2)
            sim.step()
        trails.append(sim.trail.positions)
    np.testing.assert_array_equal(trails[0], trails[1])


def test_the_docstring_examples_hold():
    import doctest

    from maes_sim.core import trails

    result = doctest.testmod(trails)
    assert result.attempted > 0 and result.failed == 0
