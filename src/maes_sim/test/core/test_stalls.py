"""Stalls (issue 36): a robot driven but staying in one place, with area left to explore, is
counted once in the statistics and ``summary.json`` (the progress line:
``maes_bringup/test/test_progress_stalls.py``)."""

from __future__ import annotations

import json

from maes_sim.core import Simulation, config_from_dict, write_run_results


def spinning_robot() -> Simulation:
    """Two robots on a 30x30 building for 61 s: robot 0 turns in place every tick (asked to
    move, never leaves its spot), robot 1 is never driven."""
    cfg = config_from_dict(
        {
            "number_of_robots": 2,
            "end_criteria": {"tick": 700, "exploration_percent": None},
            "map": {"width_in_tiles": 30, "height_in_tiles": 30},
            "results": {"pictures": False},
        }
    )
    sim = Simulation(cfg)
    for _ in range(610):
        sim.set_velocity(0, 0.0, 0.5)
        sim.step()
    return sim


def test_a_robot_driven_in_place_stalls_once_and_it_is_reported(tmp_path):
    sim = spinning_robot()
    assert sim.exploration_percent < 100.0  # area left: this is a stall, not the end
    stats = sim.stats()
    assert stats["stalls"] == 1 and stats["robots_stalled"] == 1
    assert sim.stalls.per_robot.tolist() == [1, 0]  # the undriven robot does not stall
    summary = json.loads((write_run_results(sim, tmp_path) / "summary.json").read_text())
    assert summary["stalls"] == [1, 0]
    assert summary["final"]["stalls"] == 1
    # it lasts until the robot moves: one stall, however long
    for _ in range(50):
        sim.set_velocity(0, 0.0, 0.5)
        sim.step()
    assert sim.stalls.count == 1
