"""``make run``'s progress line names the robots' stalls once one happens (issue 36)."""

from __future__ import annotations

from maes_bringup.runners.embedded import Progress
from maes_sim.core import Simulation, config_from_dict


def test_the_progress_line_names_stalls_once_they_happen():
    cfg = config_from_dict(
        {
            "number_of_robots": 2,
            "end_criteria": {"tick": 700, "exploration_percent": None},
            "map": {"width_in_tiles": 30, "height_in_tiles": 30},
        }
    )
    sim = Simulation(cfg)
    assert "stalls" not in Progress.line(sim, 1.0)
    for _ in range(610):  # 61 s turning in place: asked to move, never leaving the spot
        sim.set_velocity(0, 0.0, 0.5)
        sim.step()
    assert Progress.line(sim, 1.0).endswith("| stalls 1 (1 now)")
