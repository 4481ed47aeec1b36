"""The Gymnasium single-robot environment (registered as :data:`GYM_ID`).

>>> import gymnasium as gym
>>> import maes_bringup.envs  # registers the id
>>> env = gym.make("maes/Exploration-v0", config={"map": {"width_in_tiles": 30,
...                "height_in_tiles": 30}}, max_ticks=5)
>>> obs, info = env.reset(seed=3)
>>> sorted(obs)
['map', 'nearby', 'pose', 'scan']
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np

from maes_sim.core import SimConfig

from .options import as_config
from .parallel import MaesParallelEnv

GYM_ID = "maes/Exploration-v0"


class MaesGymEnv(gym.Env):
    """One robot exploring: the :class:`MaesParallelEnv` of the config with one robot.

    Parameters
    ----------
    config : SimConfig, dict or path
        The config; its ``number_of_robots`` is replaced by 1.
    render_mode : str, optional
        ``"rgb_array"`` or ``"human"``.
    **options
        :class:`~.options.EnvOptions`.
    """

    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 10}

    def __init__(
        self,
        config: SimConfig | dict | str | os.PathLike[str],
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        self._env = MaesParallelEnv(as_config(config, robots=1), render_mode=render_mode, **options)
        self.render_mode = render_mode
        self._agent = self._env.possible_agents[0]
        self.observation_space = self._env.observation_space(self._agent)
        self.action_space = self._env.action_space(self._agent)

    @property
    def sim(self):
        """The running :class:`~maes_sim.core.Simulation`."""
        return self._env.sim

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode (``seed``: the map and start; bit-identical episodes)."""
        super().reset(seed=seed)
        obs, infos = self._env.reset(seed=seed, options=options)
        return obs[self._agent], infos[self._agent]

    def step(self, action: Any):
        """One tick with ``action``."""
        obs, rewards, terms, truncs, infos = self._env.step({self._agent: action})
        a = self._agent
        return obs[a], rewards[a], terms[a], truncs[a], infos[a]

    def snapshot(self) -> Any:
        """The episode now (see :meth:`MaesParallelEnv.snapshot`)."""
        return self._env.snapshot()

    def restore(self, snapshot: Any) -> None:
        """Go back to a :meth:`snapshot`; the episode continues bit-identically."""
        self._env.restore(snapshot)

    def render(self) -> np.ndarray | None:
        """The current frame (``rgb_array``) or draw it (``human``)."""
        return self._env.render()

    def close(self) -> None:
        """Close the render window, if any."""
        self._env.close()


def gym_env(config: SimConfig | dict | str | os.PathLike[str], **options: Any) -> MaesGymEnv:
    """The Gymnasium single-robot env of ``config`` (see :class:`MaesGymEnv`)."""
    return MaesGymEnv(config, **options)
