"""The batched Gymnasium VectorEnv: spaces, rewards, same-step autoreset, seeded resets."""

import numpy as np
import pytest

from maes_bringup.envs import EnvOptionError, vector_env

CONFIG = {"number_of_robots": 4, "map": {"width_in_tiles": 30, "height_in_tiles": 30}}


def test_observations_are_in_the_spaces_and_rewards_count_explored_area():
    venv = vector_env(CONFIG, num_envs=6, max_ticks=50, collision_penalty=0.0)
    obs, _ = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    venv.action_space.seed(0)
    for _ in range(10):
        before = venv.batch.explored_counts()
        obs, reward, term, trunc, _ = venv.step(venv.action_space.sample())
        assert venv.observation_space.contains(obs)
        np.testing.assert_array_equal(reward, venv.batch.explored_counts() - before)
        assert not term.any() and not trunc.any()


def test_same_step_autoreset_on_truncation():
    venv = vector_env(CONFIG, num_envs=3, max_ticks=5)
    venv.reset(seed=1)
    stop = np.zeros(venv.action_space.shape, np.float32)
    for _ in range(4):
        *_, trunc, infos = venv.step(stop)
        assert not trunc.any() and "final_obs" not in infos
    obs, _, _, trunc, infos = venv.step(stop)
    assert trunc.all() and infos["_final_obs"].all()
    assert (venv.batch.ticks == 0).all()  # already started again
    assert infos["final_obs"]["scan"].shape == obs["scan"].shape


def test_termination_by_the_configs_exploration_criterion():
    cfg = {**CONFIG, "end_criteria": {"exploration_percent": 1.0}}
    venv = vector_env(cfg, num_envs=2, max_ticks=50)
    venv.reset(seed=2)
    _, _, term, trunc, _ = venv.step(np.zeros(venv.action_space.shape))
    assert term.all() and not trunc.any()


def test_seeded_resets_repeat():
    def roll(seed):
        venv = vector_env(CONFIG, num_envs=4, max_ticks=30)
        obs, _ = venv.reset(seed=seed)
        rng = np.random.default_rng(seed)
        out = [obs["pose"].tobytes()]
        for _ in range(40):  # across an autoreset
            obs, reward, *_ = venv.step(rng.uniform(-1, 1, venv.action_space.shape))
            out.append(obs["pose"].tobytes() + obs["scan"].tobytes() + reward.tobytes())
        return out

    assert roll(7) == roll(7)
    assert roll(7) != roll(8)


@pytest.mark.parametrize(
    ("kw", "match"), [({"num_envs": 0}, "num_envs"), ({"max_ticks": 0}, "max_ticks")]
)
def test_bad_options_are_named(kw, match):
    with pytest.raises(EnvOptionError, match=match):
        vector_env(CONFIG, **{"num_envs": 2, **kw})


def test_actions_of_the_wrong_shape_are_named():
    venv = vector_env(CONFIG, num_envs=2)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must have shape \(2, 4, 2\)"):
        venv.step(np.zeros((2, 2)))


def test_reset_with_named_seeds_gives_those_maps():
    from maes_sim.core import Simulation, config_from_dict

    venv = vector_env(CONFIG, num_envs=2)
    venv.reset(options={"seeds": [9, 4]})
    assert (venv.batch.worlds[1].walls == Simulation(config_from_dict(CONFIG), seed=4).walls).all()
    with pytest.raises(EnvOptionError, match="needs 2 seeds"):
        venv.reset(options={"seeds": [1]})


def test_a_vector_env_snapshot_continues_bit_identically():
    venv = vector_env(CONFIG, num_envs=3, max_ticks=30)
    venv.reset(seed=3)
    rng = np.random.default_rng(2)
    plan = [rng.uniform(-1, 1, venv.action_space.shape) for _ in range(50)]
    for a in plan[:10]:
        venv.step(a)
    saved = venv.snapshot()

    def play():
        return [repr(venv.step(a)[:4]) for a in plan[10:]]  # across an autoreset

    first = play()
    venv.restore(saved)
    assert play() == first
