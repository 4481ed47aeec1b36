"""The shipped explorer (maes_controller.algorithms.frontier_explorer) on three robots, with the
built-in navigator."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from maes_controller.algorithms.frontier_explorer import CLAIM_PREFIX, logic, parse_claim  # noqa: E402
from maes_sim.core import Simulation  # noqa: E402

#: Sim seconds for three robots to see 95 % of a 30x30 building (default config otherwise).
#: Measured in lockstep (deterministic): seeds 0..9 took 33.2, 40.1, 83.1, 35.7, 63.0, 68.2,
#: 64.3, 49.9, 40.6 and 85.2 s (mean 56 s); the test runs seed 2 (83.1 s). The bound is 1.8
#: times that, and 1.76 times the slowest seed measured.
EXPLORATION_BOUND = 150.0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2])
def test_three_robots_explore_a_30x30_building(stack, tools, seed):
    sim = Simulation(tools.config(3, seed=seed))
    s = stack(sim, logic=logic)
    s.wait_ready()
    start = sim.sim_time
    s.step_until(
        lambda: sim.exploration_percent >= 95.0,
        max_ticks=int(EXPLORATION_BOUND / sim.tick_duration),
    )
    elapsed = sim.sim_time - start
    print(
        f"seed {seed}: 95 % explored after {elapsed:.1f} s of sim time; "
        f"tags {len(sim.tags)}, collisions {sim.stats().get('collisions')}"
    )
    assert sim.exploration_percent >= 95.0 and elapsed <= EXPLORATION_BOUND
    # The robots announced their goals and left a tag at each one.
    robots = [c.robot for c in s.controllers.values()]
    assert all(r.memory.get("claims") for r in robots)
    assert {t.sender for t in sim.tags.tags} == {"robot0", "robot1", "robot2"}
    assert all(t.msg.startswith(f"{t.sender} goal ") for t in sim.tags.tags)


def test_claims_round_trip():
    assert parse_claim(f"{CLAIM_PREFIX} 1.25 -3.00") == (1.25, -3.0)
    assert parse_claim(f"{CLAIM_PREFIX} x 1") is None
    assert parse_claim("frontier-goal 1") is None
