"""Stalls (issue 36): a robot driven but staying in one place, with area left to explore, is
counted once in the statistics and ``summary.json`` (the progress line:
``maes_bringup/test/test_progress_stalls.py``)."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_sim.core import Simulation, config_from_dict, write_run_results
from maes_sim.core import commands as C
from maes_sim.core.stalls import STOP_SECONDS, StallWatch, asks_motion, asks_motion_reference


def two_robots(ticks: int) -> Simulation:
    """Two robots on a 30x30 building, ending after ``ticks`` only."""
    cfg = config_from_dict(
        {
            "number_of_robots": 2,
            "end_criteria": {"tick": ticks, "exploration_percent": None},
            "map": {"width_in_tiles": 30, "height_in_tiles": 30},
            "results": {"pictures": False},
        }
    )
    return Simulation(cfg)


def spinning_robot() -> Simulation:
    """Two robots on a 30x30 building for 61 s: robot 0 turns in place every tick (asked to
    move, never leaves its spot), robot 1 is never driven."""
    sim = two_robots(700)
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


def test_a_robot_that_pauses_between_tries_stalls_and_one_stopped_for_long_does_not():
    # two robots on a 30x30 building, each turning in place (asked to move, never leaving its
    # spot): robot 0 pauses 5 s (no command) after every 5 s of turning, as a logic that waits
    # and tries again; robot 1 stands without a command for STOP_SECONDS after every 50 s of
    # turning, as a logic that stopped it. Only robot 0 stalls.
    sim = two_robots(1500)
    stop = round(STOP_SECONDS / sim.tick_duration)
    assert stop == 100
    for tick in range(1200):
        if tick % 100 < 50:
            sim.set_velocity(0, 0.0, 0.5)
        if tick % (500 + stop) < 500:
            sim.set_velocity(1, 0.0, 0.5)
        sim.step()
    assert sim.exploration_percent < 100.0
    assert sim.stalls.per_robot.tolist() == [1, 0]
    assert sim.stats()["robots_stalled"] == 1


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), lateral=st.booleans())
def test_the_compiled_stall_clock_and_motion_check_equal_their_numpy_definitions(seed, lateral):
    # random commands of every kind (zero and non-zero values, NaN too) and random walks
    # through 40 ticks: the compiled asks_motion and StallWatch.update give the references'
    # answers and clocks, to the bit
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    pick = rng.choice([0.0, 0.0, 0.5, -1.0, np.nan], size=(4, n))
    cmds = C.Commands(
        kind=rng.integers(0, 6, n).astype(np.int8),
        target=pick[0],
        progress=np.zeros(n),
        linear=pick[1],
        angular=pick[2],
        stopping=np.zeros(n, dtype=bool),
        lateral=pick[3] if lateral else None,
    )
    assert np.array_equal(asks_motion(cmds), asks_motion_reference(cmds))
    start = rng.uniform(0, 20, (n, 2))
    pause = int(rng.integers(1, 5))
    fast, ref = (StallWatch(start, radius=1.0, ticks=5, pause=pause) for _ in range(2))
    positions = start.copy()
    for tick in range(1, 41):
        positions += rng.choice([0.0, 0.0, 0.3, 1.2], size=(n, 1)) * rng.normal(size=(n, 2))
        driven = np.flatnonzero(rng.random(n) < 0.8)
        fast.driven(driven)
        ref.driven(driven)
        asked = rng.random(n) < 0.7
        exploring = bool(rng.random() < 0.9)
        assert fast.update(tick, positions, asked, exploring) == ref.update_reference(
            tick, positions, asked, exploring
        )
        names = ("anchor", "since", "asked", "commanded", "idle", "stalled", "per_robot", "count")
        for name in names:
            assert np.array_equal(getattr(fast, name), getattr(ref, name)), name


def test_docstring_examples():
    import doctest

    from maes_sim.core import stalls

    assert doctest.testmod(stalls).failed == 0
