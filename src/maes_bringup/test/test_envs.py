"""The learning environments against PettingZoo's and Gymnasium's own checkers, their
reproducibility, and their equality with direct mode replaying the same actions."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

from maes_bringup.envs import (
    GYM_ID,
    EnvOptionError,
    env,
    gym_env,
    parallel_env,
)
from maes_bringup.runners.direct import run

ROOT = Path(__file__).resolve().parents[3]
SMALL = {"number_of_robots": 3, "map": {"width_in_tiles": 30, "height_in_tiles": 30}}
CAVE = {
    "number_of_robots": 4,
    "map": {"width_in_tiles": 36, "height_in_tiles": 36, "cave_config": {}},
    "robot_constraints": {"distribute_slam": True},
}

# (config, options): several robots, both observation forms, all three action kinds, a
# shipped config file, a cave, the own-area reward
CASES = [
    (SMALL, {}),
    (SMALL, {"observation_form": "box", "actions": "discrete", "time_penalty": 0.1}),
    (CAVE, {"actions": "goal", "own_reward": 0.5, "map_size": 15}),
    (str(ROOT / "configs" / "maes2_example.yaml"), {"observations": ["scan", "pose"]}),
    (SMALL, {"observations": ["pose", "broadcasts"], "broadcast_every": 3}),
]
IDS = ["dict-velocity", "box-discrete", "cave-goal", "maes2_example-file", "broadcasts"]


@pytest.mark.parametrize(("config", "options"), CASES, ids=IDS)
def test_pettingzoo_parallel_api(config, options):
    parallel_api_test(parallel_env(config, max_ticks=40, **options), num_cycles=50)


@pytest.mark.parametrize(("config", "options"), CASES, ids=IDS)
def test_pettingzoo_parallel_seed(config, options):
    parallel_seed_test(lambda: parallel_env(config, max_ticks=30, **options), num_cycles=30)


@pytest.mark.parametrize(("config", "options"), CASES[:3], ids=IDS[:3])
def test_pettingzoo_aec_api_through_the_conversion(config, options):
    api_test(env(config, max_ticks=20, **options), num_cycles=25)


@pytest.mark.parametrize(("config", "options"), CASES, ids=IDS)
def test_gymnasium_check_env(config, options):
    check_env(gym_env(config, max_ticks=30, render_mode="rgb_array", **options))


def test_gymnasium_id_is_registered():
    e = gymnasium.make(GYM_ID, config=SMALL, max_ticks=5, actions="discrete")
    obs, _ = e.reset(seed=4)
    assert e.observation_space.contains(obs)
    assert e.unwrapped.sim.n_robots == 1


def rollout(environment, seed, steps):
    obs, _ = environment.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = [repr(obs)]
    for _ in range(steps):
        actions = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in environment.agents}
        obs, rewards, terms, truncs, _ = environment.step(actions)
        trace.append(repr((obs, rewards, terms, truncs, environment.unwrapped.sim.poses)))
        if not environment.agents:
            break
    return trace


def test_reset_with_a_seed_gives_bit_identical_episodes():
    e = parallel_env(CAVE, max_ticks=30)
    first = rollout(e, 11, 30)
    rollout(e, 12, 30)  # another map in between
    assert rollout(e, 11, 30) == first  # a cached start, restored from its snapshot
    assert rollout(parallel_env(CAVE, max_ticks=30), 11, 30) == first  # a fresh env
    assert rollout(e, 12, 30) != first


def test_reset_without_a_seed_goes_back_to_the_start_when_asked():
    e = parallel_env(SMALL, max_ticks=10, new_map_each_episode=False)
    e.reset()
    walls = e.sim.walls.copy()
    e.reset()
    assert (e.sim.walls == walls).all() and e.sim.tick == 0
    f = parallel_env(SMALL, max_ticks=10)
    f.reset()
    walls = f.sim.walls.copy()
    f.reset()
    assert not (f.sim.walls == walls).all()  # a new map


@pytest.mark.parametrize("kind", ["velocity", "goal"])
def test_same_actions_give_the_same_trajectories_as_direct_mode(kind):
    """A direct-mode run whose logic replays the env's actions through the robot API (the
    calls a logic makes) gives the same poses, every tick, and the same statistics."""
    ticks = 60
    e = parallel_env(CAVE, max_ticks=ticks, actions=kind, goal_range=4.0)
    obs, _ = e.reset(seed=5)
    rng = np.random.default_rng(0)
    actions, env_poses = [], []
    while e.agents:
        act = {a: rng.uniform(-1, 1, 2) for a in e.agents}
        actions.append(act)
        e.step(act)
        env_poses.append(e.sim.poses.tobytes())
    assert len(actions) == ticks

    speed = e.sim.motion_params.max_speed * float(e.sim.config.world.tile_size)
    turn = e.sim.motion_params.max_angular_speed

    def replay(robot):
        a = actions[robot.tick][robot.namespace]
        if kind == "velocity":
            robot.set_velocity(float(a[0]) * speed, float(a[1]) * turn)
        elif robot.is_nav_complete():
            x, y = robot.robot_position
            robot.nav_to_pos(x + float(a[0]) * 4.0, y + float(a[1]) * 4.0)

    direct_poses = []
    result = run(
        e.config,
        replay,
        seed=5,
        max_ticks=ticks,
        progress=lambda sim: direct_poses.append(sim.poses.tobytes()),
    )
    assert direct_poses == env_poses
    assert result.stats == e.sim.stats()
    assert e.sim.metrics.distance.sum() > 0  # the robots did move


def test_rewards_follow_the_weights():
    e = parallel_env(SMALL, max_ticks=20, team_reward=2.0, time_penalty=0.5, collision_penalty=0)
    e.reset(seed=2)
    before = e.sim.metrics.explored_count
    _, rewards, *_ = e.step({a: np.array([1.0, 0.0], np.float32) for a in e.agents})
    gained = e.sim.metrics.explored_count - before
    assert set(rewards.values()) == {2.0 * gained - 0.5}


def test_box_observation_is_the_parts_concatenated():
    d = parallel_env(SMALL, max_ticks=5, observations=["scan", "pose"])
    b = parallel_env(SMALL, max_ticks=5, observations=["scan", "pose"], observation_form="box")
    od, _ = d.reset(seed=3)
    ob, _ = b.reset(seed=3)
    np.testing.assert_array_equal(
        ob["robot1"], np.concatenate([od["robot1"]["scan"], od["robot1"]["pose"]])
    )


def test_map_crop_is_the_robots_slam_map_around_it():
    e = parallel_env(SMALL, max_ticks=5, observations=["map"], map_size=9)
    obs, _ = e.reset(seed=1)
    sim = e.sim
    est = sim.estimated_poses[0]
    cx, cy = (np.floor(est[:2] + np.array(sim.shape[::-1]) / 2)).astype(int)
    np.testing.assert_array_equal(
        obs["robot0"]["map"], sim.slam_maps[0, cy - 4 : cy + 5, cx - 4 : cx + 5]
    )
    assert (obs["robot0"]["map"] == 1).any()  # open cells seen at the start


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"actions": "jump"}, "actions must be one of"),
        ({"observations": ["smell"]}, "observations must be"),
        ({"map_size": 0}, "map_size must be an integer >= 1"),
        ({"max_tick": 3}, r"unknown option\(s\) \['max_tick'\]"),
        ({"render_mode": "video"}, "render_mode must be one of"),
    ],
)
def test_bad_options_are_named(options, match):
    with pytest.raises(EnvOptionError, match=match):
        parallel_env(SMALL, **options)


def test_a_bad_action_is_named():
    e = parallel_env(SMALL, max_ticks=5, actions="discrete")
    e.reset(seed=0)
    with pytest.raises(ValueError, match="action 9 of robot0 is not in Discrete"):
        e.step({"robot0": 9})


def test_rgb_array_is_the_replay_frame():
    e = gym_env(SMALL, max_ticks=5, render_mode="rgb_array")
    e.reset(seed=0)
    frame = e.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 4  # a picture, not a blank


def test_broadcast_positions_arrive_through_the_comms_rule():
    e = parallel_env(SMALL, max_ticks=20, observations=["pose", "broadcasts"], broadcast_every=4)
    obs, _ = e.reset(seed=6)
    assert not any(o["broadcasts"].any() for o in obs.values())
    stop = {a: np.zeros(2, np.float32) for a in e.agents}
    e.step(stop)  # tick 0's broadcasts are delivered at tick 1
    obs, *_ = e.step(stop)
    assert e.sim.mailbox.total_sent == 3
    heard = 0
    for i, agent in enumerate(e.possible_agents):
        b = obs[agent]["broadcasts"]
        assert not b[i].any()  # never itself
        for j in np.flatnonzero(b[:, 3]):
            heard += 1
            own = obs[agent]["pose"][:2]
            other = obs[e.possible_agents[j]]["pose"][:2]  # robots stood still since
            np.testing.assert_allclose(b[j, :2], other - own, atol=2e-3)
            assert b[j, 2] == 1  # arrived one tick ago
    assert heard == e.sim.mailbox.total_delivered > 0


@pytest.mark.parametrize("kind", ["velocity", "goal"])
def test_an_env_snapshot_continues_bit_identically(kind):
    e = parallel_env(CAVE, max_ticks=80, actions=kind, own_reward=1.0, broadcast_every=5)
    e.reset(seed=9)
    rng = np.random.default_rng(1)
    plan = [{a: rng.uniform(-1, 1, 2) for a in e.possible_agents} for _ in range(60)]

    def play(steps):
        out = []
        for act in steps:
            obs, rewards, *_ = e.step(act)
            out.append(repr((obs, rewards, e.sim.poses)))
        return out

    play(plan[:25])
    saved = e.snapshot()
    first = play(plan[25:])
    e.restore(saved)
    assert play(plan[25:]) == first
    e.restore(saved)
    assert e.sim.tick == 25 and play(plan[25:40]) == first[:15]


def test_human_rendering_without_a_display_is_refused(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(EnvOptionError, match="needs a display"):
        gym_env(SMALL, render_mode="human")
