"""Direct mode's checkpoints: a run resumed after a crash equals the uninterrupted run, bit for
bit, with the shipped explorer (navigators, robot memories and rngs in the checkpoint)."""

from __future__ import annotations

import pytest

from maes_bringup.runners.direct import LogicError, run
from maes_controller.robot_api import load_logic
from maes_sim.contract import DEFAULT_LOGIC
from maes_sim.core import SnapshotError, config_from_dict

CONFIG = {
    "number_of_robots": 3,
    "end_criteria": {"tick": 90},
    "map": {"width_in_tiles": 30, "height_in_tiles": 30},
    "robot_constraints": {"distribute_slam": True},
}


def recorder(rows):
    def progress(sim):
        rows.append((sim.tick, sim.poses.tobytes(), sim.lidar_ranges.tobytes()))

    return progress


def outcome(result):
    sim = result.sim
    return {
        "slam": sim.slam_maps.tobytes(),
        "heatmap": sim.exploration_heatmap().tobytes(),
        "snapshots": repr(result.snapshots),
        "stats": repr(result.stats),
        "exploration": result.exploration.tobytes(),
        "coverage": result.coverage.tobytes(),
        "trail": sim.trail.positions.tobytes(),
        "end": result.end_reason,
    }


def crashing(after_tick: int):
    explorer = load_logic(DEFAULT_LOGIC)

    def logic(robot):
        if robot.tick >= after_tick:
            raise RuntimeError("the machine went down")
        explorer(robot)

    return logic


@pytest.fixture(scope="module")
def config():
    return config_from_dict(CONFIG)


@pytest.fixture(scope="module")
def uninterrupted(config):
    rows = []
    result = run(config, DEFAULT_LOGIC, progress=recorder(rows))
    return rows, outcome(result)


def test_resume_after_a_crash_equals_the_uninterrupted_run(config, uninterrupted, tmp_path):
    rows, final = uninterrupted
    snap = tmp_path / "run.ckpt"
    before = []
    with pytest.raises(LogicError, match="went down"):
        run(
            config,
            crashing(57),
            progress=recorder(before),
            checkpoint=snap,
            checkpoint_every=25,
        )
    assert snap.exists() and before[-1][0] == 57  # crashed in tick 57's logic
    after = []
    result = run(config, DEFAULT_LOGIC, progress=recorder(after), resume=snap)
    assert after[0][0] == 51  # continued from the checkpoint of tick 50
    assert before[:50] + after == rows  # poses and scans every tick
    assert outcome(result) == final  # maps, heatmap, statistics, series, trails
    assert result.ticks == 90


def test_checkpoints_do_not_change_the_run(config, uninterrupted, tmp_path):
    rows, final = uninterrupted
    seen = []
    result = run(
        config,
        DEFAULT_LOGIC,
        progress=recorder(seen),
        checkpoint=tmp_path / "c",
        checkpoint_every=7,
    )
    assert seen == rows and outcome(result) == final


def test_resume_refuses_a_checkpoint_of_another_run(config, tmp_path):
    snap = tmp_path / "run.ckpt"
    run(config, DEFAULT_LOGIC, max_ticks=10, checkpoint=snap, checkpoint_every=5)
    with pytest.raises(SnapshotError, match="another config or seed"):
        run(config, DEFAULT_LOGIC, seed=config.random_seeds[0] + 1, resume=snap)


@pytest.mark.parametrize("every", [0, -3, 2.5, True])
def test_checkpoint_every_must_be_a_positive_int(config, every, tmp_path):
    with pytest.raises(ValueError, match="checkpoint_every"):
        run(config, DEFAULT_LOGIC, checkpoint=tmp_path / "c", checkpoint_every=every)


def test_unpicklable_memory_is_named(config, tmp_path):
    def logic(robot):
        robot.memory["handle"] = lambda: None

    with pytest.raises(ValueError, match="checkpoint at tick 1: the run state cannot be pickled"):
        run(config, logic, max_ticks=3, checkpoint=tmp_path / "c", checkpoint_every=1)
