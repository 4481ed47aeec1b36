"""The observation pass: ``robot_state``/``robot_states`` are views of one per-tick
``Observation``, equal to what the simulation's own arrays say, in tiles and in metres."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from maes_sim.core import RobotState, Simulation, config_from_dict, state_to_metres

TILE = 0.25


def _sim() -> Simulation:
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
    return Simulation(cfg)


def test_states_are_views_of_the_observation_and_agree_with_the_arrays():
    sim = _sim()
    rng = np.random.default_rng(1)
    seen_nearby = seen_tags = seen_msgs = 0
    for k in range(60):
        if k % 7 == 0:
            sim.set_velocities(rng.uniform(-2, 2, 12), rng.uniform(-1, 1, 12))
        for i in rng.choice(12, 4, replace=False).tolist():
            sim.broadcast(i, f"hello from {i} at {k}")
            sim.deposit_tag(i, f"tag {i} {k}")
        obs = sim.observation()
        assert sim.observation() is obs  # built once per tick
        states = sim.robot_states()
        assert states == [sim.robot_state(i) for i in range(12)]
        # Against the simulation's own arrays (not through the observation).
        est = sim.estimated_poses
        observer, observed = sim.nearby_pairs()
        for i, s in enumerate(states):
            assert (s.position.x, s.position.y, s.heading) == tuple(est[i].tolist())
            assert s.status == sim.statuses[i] and s.colliding == bool(sim.colliding[i])
            seen = observed[observer == i]
            assert [r.id for r in s.nearby_robots] == [str(j) for j in seen.tolist()]
            assert [(r.pos.x, r.pos.y) for r in s.nearby_robots] == [
                tuple(p) for p in sim.poses[seen, :2].tolist()
            ]
        # In metres: the same states, each length multiplied by the tile size exactly once,
        # equal to the per-state reference conversion (state_to_metres).
        metres = sim.observation(TILE)
        assert metres.states() == [state_to_metres(s, TILE) for s in states]
        assert np.array_equal(metres.velocities[:, 0], sim.velocities[:, 0] * TILE)
        assert np.array_equal(metres.velocities[:, 1], sim.velocities[:, 1])
        seen_nearby += sum(len(s.nearby_robots) for s in states)
        seen_tags += sum(len(s.tags_nearby) for s in states)
        seen_msgs += sum(len(s.incoming_broadcast_msgs) for s in states)
        sim.step()
        assert sim.observation() is not obs  # a new tick, a new pass
    # the comparison covered every kind of content
    assert seen_nearby and seen_tags and seen_msgs


def test_a_tag_deposited_after_the_pass_shows_and_keeps_one_copy_per_unit():
    sim = _sim()
    before = sim.observation(TILE).state(0).tags_nearby
    sim.deposit_tag(0, "here")
    after = sim.observation(TILE).state(0).tags_nearby
    assert [t.msg for t in after] == [t.msg for t in before] + ["here"]
    # the tag's metre copy is made once for the run: readers may cache by identity
    assert sim.observation(TILE).state(0).tags_nearby[-1] is after[-1]
    assert after[-1].pos.x == sim.robot_state(0).tags_nearby[-1].pos.x * TILE


def test_states_are_whole_frozen_robot_states():
    # The observation makes states without RobotState's __init__: each must be what the
    # constructor makes of the same values (every field set, the sensors' too; still frozen).
    sim = _sim()
    sim.step()
    names = [f.name for f in dataclasses.fields(RobotState)]
    for state in sim.observation(TILE).states():
        assert sorted(vars(state)) == sorted(names)
        assert state == RobotState(**{name: getattr(state, name) for name in names})
        with pytest.raises(dataclasses.FrozenInstanceError):
            state.tick = 0
