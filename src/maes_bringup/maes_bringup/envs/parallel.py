"""The PettingZoo ``ParallelEnv`` of multi-robot exploration, and the shared episode handling.

>>> from maes_bringup.envs import parallel_env
>>> env = parallel_env({"number_of_robots": 2, "map": {"width_in_tiles": 30,
...                     "height_in_tiles": 30}}, max_ticks=5)
>>> obs, infos = env.reset(seed=1)
>>> sorted(obs), sorted(obs["robot0"])
(['robot0', 'robot1'], ['map', 'nearby', 'pose', 'scan'])
>>> actions = {a: env.action_space(a).sample() for a in env.agents}
>>> obs, rewards, terms, truncs, infos = env.step(actions)
>>> env.unwrapped.sim.tick
1
"""

from __future__ import annotations

import copy
import functools
import os
from collections import OrderedDict
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from maes_sim.core import SimConfig, SimSnapshot, Simulation

from .episode import Episode, agent_names
from .options import EnvOptionError, EnvOptions, as_config
from .render import Renderer
from .spaces import action_space, observation_space, shape_observation

#: Starts (snapshots at tick 0) kept per env, by seed: a reset to a known seed restores one.
START_CACHE = 8


class EpisodeSource:
    """Builds episodes by seed, restoring cached starts (:meth:`Simulation.snapshot`)."""

    def __init__(self, config: SimConfig, options: EnvOptions) -> None:
        self.config = config
        self.options = options
        self._starts: OrderedDict[int, tuple[Simulation, SimSnapshot]] = OrderedDict()
        self.first_seed: int | None = None

    def episode(self, seed: int) -> Episode:
        """A new episode of ``seed`` at its first tick."""
        start = self._starts.get(seed)
        if start is None:
            episode = Episode(self.config, seed, self.options)
            self._starts[seed] = (episode.sim, episode.sim.snapshot())
            while len(self._starts) > START_CACHE:
                self._starts.popitem(last=False)
            return episode
        self._starts.move_to_end(seed)
        # a cached start: the simulation goes back to its first tick (no new map to build),
        # the robots' objects are built anew
        sim, snapshot = start
        sim.restore(snapshot)
        return Episode(self.config, seed, self.options, sim=sim)

    def next_seed(self, seed: int | None, np_random: np.random.Generator) -> int:
        """The seed of the next episode: ``seed``, the config's first seed at the first reset,
        then a new one drawn from ``np_random`` (or the first again without new maps)."""
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
                raise EnvOptionError(f"seed must be an integer >= 0, got {seed!r}")
            chosen = int(seed)
        elif self.first_seed is None:
            chosen = int(self.config.random_seeds[0])
        elif self.options.new_map_each_episode:
            chosen = int(np_random.integers(0, 2**31 - 1))
        else:
            chosen = self.first_seed
        if self.first_seed is None:
            self.first_seed = chosen
        return chosen


class MaesParallelEnv(ParallelEnv):
    """Multi-robot exploration as a PettingZoo ``ParallelEnv``: one agent per robot.

    Parameters
    ----------
    config : SimConfig, dict or path
        The simulation config (a dict of config keys, or a YAML file).
    render_mode : str, optional
        ``"rgb_array"`` (the replay renderer's frame) or ``"human"`` (a matplotlib window;
        needs a display).
    **options
        :class:`~.options.EnvOptions`.
    """

    metadata = {"render_modes": ["rgb_array", "human"], "name": "maes_exploration_v0"}

    def __init__(
        self,
        config: SimConfig | dict | str | os.PathLike[str],
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        self.options = EnvOptions.from_kwargs(**options)
        self.config = as_config(config)
        self.render_mode = render_mode
        self._renderer = Renderer(render_mode)
        self._source = EpisodeSource(self.config, self.options)
        self._np_random = np.random.default_rng()
        self.episode = self._source.episode(int(self.config.random_seeds[0]))
        self.possible_agents = agent_names(self.episode.sim.n_robots)
        self.agents: list[str] = []
        self._obs_space = observation_space(self.episode)
        self._act_space = action_space(self.episode)
        self._index = {a: i for i, a in enumerate(self.possible_agents)}

    @property
    def sim(self):
        """The running :class:`~maes_sim.core.Simulation`."""
        return self.episode.sim

    @functools.cache  # noqa: B019 - PettingZoo wants the same object back
    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (all robots share one)."""
        self._check_agent(agent)
        return self._obs_space

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``."""
        self._check_agent(agent)
        return self._act_space

    def _check_agent(self, agent: str) -> None:
        if agent not in self._index:
            raise KeyError(f"no agent {agent!r}; the agents are {self.possible_agents}")

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start an episode; ``seed`` chooses the map and the start (bit-identical episodes)."""
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        chosen = self._source.next_seed(seed, self._np_random)
        self.episode = self._source.episode(chosen)
        self.agents = list(self.possible_agents)
        obs = self._observations()
        infos = {a: {"tick": self.sim.tick, "seed": chosen} for a in self.agents}
        self._renderer.reset()
        if self.render_mode == "human":
            self.render()
        return obs, infos

    def _observations(self) -> dict[str, Any]:
        parts = self.episode.observe()
        return {a: shape_observation(self.episode, parts[self._index[a]]) for a in self.agents}

    def step(self, actions: dict[str, Any]):
        """Apply every live agent's action, step one tick; agents leave when the episode ends."""
        if not self.agents:
            raise RuntimeError("step() after the episode ended: call reset()")
        unknown = sorted(set(actions) - set(self.agents))
        if unknown:
            raise KeyError(f"actions for unknown or finished agents {unknown}")
        for agent, action in actions.items():
            space = self._act_space
            if not space.contains(np.asarray(action, dtype=space.dtype)):
                raise ValueError(f"action {action!r} of {agent} is not in {space}")
            self.episode.apply(self._index[agent], action)
        self.episode.step()
        reward = self.episode.rewards()
        terminated, truncated = self.episode.terminated, self.episode.truncated
        obs = self._observations()
        rewards = {a: float(reward[self._index[a]]) for a in self.agents}
        terms = dict.fromkeys(self.agents, terminated)
        truncs = dict.fromkeys(self.agents, truncated)
        tick = self.sim.tick
        infos = {
            a: {"tick": tick, "explored_percent": self.sim.exploration_percent} for a in self.agents
        }
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terms, truncs, infos

    def snapshot(self) -> Any:
        """The episode now (simulation, robots' navigators and memories, rewards' counters,
        the live agents), a deep copy: :meth:`restore` continues from it bit-identically."""
        return copy.deepcopy((self.episode, self.agents))

    def restore(self, snapshot: Any) -> None:
        """Go back to a :meth:`snapshot` of this env (it stays usable for more restores)."""
        episode, agents = copy.deepcopy(snapshot)
        if not isinstance(episode, Episode) or episode.sim.n_robots != len(self.possible_agents):
            raise EnvOptionError("not a snapshot of this environment")
        self.episode, self.agents = episode, list(agents)

    def render(self) -> np.ndarray | None:
        """The current frame (``rgb_array``), or draw it in a window (``human``)."""
        return self._renderer.render(self.sim)

    def close(self) -> None:
        """Close the render window, if any."""
        self._renderer.close()

    def state(self) -> np.ndarray:
        """The global state: the true map's explored mask and the robots' true poses."""
        sim = self.sim
        explored = (sim.metrics.explored_tick >= 0).astype(np.float32).ravel()
        return np.concatenate([explored, sim.poses.astype(np.float32).ravel()])


def parallel_env(
    config: SimConfig | dict | str | os.PathLike[str], **options: Any
) -> MaesParallelEnv:
    """The PettingZoo ``ParallelEnv`` of ``config`` (see :class:`MaesParallelEnv`)."""
    return MaesParallelEnv(config, **options)


def env(config: SimConfig | dict | str | os.PathLike[str], **options: Any):
    """The AEC form, through PettingZoo's own conversion (``parallel_to_aec``)."""
    from pettingzoo.utils.conversions import parallel_to_aec

    return parallel_to_aec(parallel_env(config, **options))
