"""``Simulation.robot_states`` (all states in one pass) equals ``robot_state`` robot by robot."""

from __future__ import annotations

import numpy as np

from maes_sim.core import Simulation, config_from_dict


def test_robot_states_equal_robot_state_every_tick():
    cfg = config_from_dict(
        {
            "number_of_robots": 12,
            "random_seeds": [5],
            "map": {"width_in_tiles": 40, "height_in_tiles": 40, "cave_config": {}},
            "robot_constraints": {
                "slam_position_inaccuracy": 0.7,
                "sense_nearby_agents_range": 6.0,
                "environment_tag_read_range": 5.0,
            },
            "stack": {"max_tags_per_state": 3},
        }
    )
    sim = Simulation(cfg)
    rng = np.random.default_rng(1)
    seen_nearby = seen_tags = seen_msgs = 0
    for k in range(60):
        if k % 7 == 0:
            sim.set_velocities(rng.uniform(-2, 2, 12), rng.uniform(-1, 1, 12))
        for i in rng.choice(12, 4, replace=False).tolist():
            sim.broadcast(i, f"hello from {i} at {k}")
            sim.deposit_tag(i, f"tag {i} {k}")
        states = sim.robot_states()
        assert states == [sim.robot_state(i) for i in range(12)]
        seen_nearby += sum(len(s.nearby_robots) for s in states)
        seen_tags += sum(len(s.tags_nearby) for s in states)
        seen_msgs += sum(len(s.incoming_broadcast_msgs) for s in states)
        sim.step()
    # the comparison covered every kind of content
    assert seen_nearby and seen_tags and seen_msgs
