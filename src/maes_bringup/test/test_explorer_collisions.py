"""The shipped explorer with the built-in navigator avoids robots: collisions in direct mode.

Five robots on a 20x20 building (``configs/maes2_example.yaml`` otherwise) explore for 600 ticks.
Before the navigator yielded to robots (issue 13) they collided 167, 64 and 205 times on seeds 0,
1 and 2 (new contacts, summed over the robots, as ``summary.json`` counts them); with yielding,
0 each. Since issue 36 (the explorer spreads the robots over the frontiers, the navigator plans
around robots and yields by a bounded order) the three seeds give 114 collisions in all without
yielding and 6 with it. The test runs both ways and asserts the yielding runs collide at least
ten times less and explore as much.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from maes_bringup.runners import direct
from maes_controller.navigation import NavParams
from maes_sim.core import load_config

ROOT = Path(__file__).resolve().parents[3]
SEEDS = (0, 1, 2)


def config():
    base = load_config(ROOT / "configs" / "maes2_example.yaml")
    return replace(
        base,
        number_of_robots=5,
        map=replace(base.map, width_in_tiles=20, height_in_tiles=20),
        end_criteria=replace(base.end_criteria, coverage_percent=None, tick=600),
    )


def explore(monkeypatch, yielding: bool) -> tuple[int, list[float]]:
    plain = NavParams.from_config.__func__

    def from_config(cls, cfg, **overrides):
        return plain(cls, cfg, **{"yield_to_robots": yielding, **overrides})

    monkeypatch.setattr(NavParams, "from_config", classmethod(from_config))
    total, explored = 0, []
    for seed in SEEDS:
        result = direct.run(
            config(), "maes_controller.algorithms.frontier_explorer:logic", seed=seed
        )
        assert result.ticks == 600
        total += int(result.collisions.sum())
        explored.append(float(result.exploration[-1]))
    return total, explored


def test_yielding_explorer_collides_ten_times_less_and_explores_as_much(monkeypatch):
    with_yield, explored_yield = explore(monkeypatch, True)
    without, explored_plain = explore(monkeypatch, False)
    print(f"collisions over seeds {SEEDS}: {without} without yielding, {with_yield} with")
    assert without >= 50  # the scenario does provoke collisions
    assert 10 * with_yield <= without
    assert min(explored_yield) >= 99.0 and min(explored_plain) >= 99.0


def test_nav_params_from_a_config_yield_by_default():
    params = NavParams.from_config(config())
    assert params.yield_to_robots
    # the corridor's margin covers the navigator's pose error (slam_position_inaccuracy 0.2)
    assert params.yield_margin == pytest.approx(0.1 + 0.5 * 0.2)
