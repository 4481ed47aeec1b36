"""Simulation.snapshot() / restore(): a continuation equals the uninterrupted run to the bit."""

import numpy as np
import pytest

from maes_sim.core import (
    SimSnapshot,
    Simulation,
    SnapshotError,
    config_from_dict,
    load_snapshot,
    save_snapshot,
)

CONFIG = {
    "number_of_robots": 4,
    "map": {"width_in_tiles": 40, "height_in_tiles": 40},
    "robot_constraints": {
        "distribute_slam": True,
        "slam_sync_interval_in_ticks": 5,
        "slam_update_interval_in_ticks": 3,
        "slam_position_inaccuracy": 0.5,
    },
    "motion": {"model": "differential_drive", "odometry_noise": 0.05, "heading_noise": 0.05},
    "global_settings": {"ticks_per_stats_snapshot": 4},
    "end_criteria": {"tick": 400},
}


def drive(sim: Simulation, ticks: int) -> list[bytes]:
    """Step ``ticks`` ticks with commands, broadcasts and tags drawn from the tick (so the same
    tick gets the same commands whether or not the run was interrupted); returns per-tick
    fingerprints of everything observable."""
    out = []
    for _ in range(ticks):
        t = sim.tick
        rng = np.random.default_rng(t)
        if t % 5 == 0:
            sim.set_velocities(rng.uniform(-2, 2, sim.n_robots), rng.uniform(-2, 2, sim.n_robots))
        if t % 3 == 0:
            sim.broadcast(t % sim.n_robots, f"hello {t}")
        if t % 7 == 0:
            sim.deposit_tag((t + 1) % sim.n_robots, f"tag {t}")
        sim.step()
        states = sim.robot_states()
        out.append(
            b"".join(
                [
                    sim.poses.tobytes(),
                    sim.odometry_poses.tobytes(),
                    sim.estimated_poses.tobytes(),
                    sim.lidar_ranges.tobytes(),
                    repr(states).encode(),
                ]
            )
        )
    return out


def final_state(sim: Simulation) -> dict:
    return {
        "slam": sim.slam_maps.tobytes(),
        "exploration": sim.exploration_heatmap().tobytes(),
        "coverage": sim.coverage_heatmap().tobytes(),
        "snapshots": repr(sim.snapshots),
        "stats": repr(sim.stats()),
        "explore_bench": repr(sim.explore_bench_summary()),
        "trail": repr([sim.trail.ticks.tolist(), sim.trail.positions.tobytes()]),
        "rng": repr(sim.rng.bit_generator.state),
        "end": sim.end_reason,
    }


@pytest.fixture(scope="module")
def config():
    return config_from_dict(CONFIG)


@pytest.fixture(scope="module")
def reference(config):
    sim = Simulation(config)
    ticks = drive(sim, 60)
    return ticks, final_state(sim)


@pytest.mark.parametrize("at", [0, 1, 13, 30])
def test_continuation_equals_uninterrupted_run(config, reference, at):
    ticks, final = reference
    sim = Simulation(config)
    before = drive(sim, at)
    saved = sim.snapshot()
    drive(sim, 17)  # wander off, then come back
    sim.restore(saved)
    assert sim.tick == at
    after = drive(sim, 60 - at)
    assert before + after == ticks  # poses, odometry, SLAM poses, scans, states every tick
    assert final_state(sim) == final  # maps, heatmaps, statistics, trails, rng


def test_snapshot_restores_into_a_new_simulation_through_a_file(config, reference, tmp_path):
    ticks, final = reference
    sim = Simulation(config)
    drive(sim, 25)
    path = save_snapshot(sim.snapshot(), tmp_path / "sim.snap")
    del sim
    fresh = Simulation(config)
    snap = load_snapshot(path)
    assert isinstance(snap, SimSnapshot) and snap.tick == 25
    fresh.restore(snap)
    assert drive(fresh, 35) == ticks[25:]
    assert final_state(fresh) == final


def test_a_snapshot_can_be_restored_many_times(config):
    sim = Simulation(config)
    drive(sim, 10)
    saved = sim.snapshot()
    runs = []
    for _ in range(3):
        sim.restore(saved)
        runs.append(drive(sim, 8))
    assert runs[0] == runs[1] == runs[2]
    assert saved.tick == 10


def test_snapshot_does_not_alias_the_running_state(config):
    sim = Simulation(config)
    drive(sim, 5)
    saved = sim.snapshot()
    maps = saved.state["slam"].maps.copy()
    drive(sim, 20)
    assert (saved.state["slam"].maps == maps).all()
    assert not np.shares_memory(saved.state["slam"].maps, sim.slam_maps)


def test_restore_into_another_simulation_is_refused(config):
    sim = Simulation(config)
    other = Simulation(config, seed=config.random_seeds[0] + 1)  # another map
    tick_before = other.tick
    drive(other, 3)
    poses = other.poses
    with pytest.raises(SnapshotError, match="another simulation"):
        other.restore(sim.snapshot())
    assert (other.poses == poses).all() and other.tick == tick_before + 3


def test_load_refuses_a_file_that_is_not_a_snapshot(tmp_path):
    bad = tmp_path / "bad.snap"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        load_snapshot(bad)
