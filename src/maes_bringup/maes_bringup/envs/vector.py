"""A Gymnasium ``VectorEnv`` of many exploration environments stepped together.

Each sub-environment is a team of ``N`` robots controlled as one agent (an observation and an
action row per robot); all of them run in one :class:`~maes_sim.core.BatchedSimulation`, so a
step of the batch is one call of the compiled core, not a loop over environments. Sub-envs
reset themselves in the same step (Gymnasium's ``SAME_STEP`` autoreset: the last observation
of an episode is in ``infos["final_obs"]``), with new spawn positions on their map.

>>> from maes_bringup.envs import vector_env
>>> venv = vector_env({"number_of_robots": 4, "map": {"width_in_tiles": 30,
...                    "height_in_tiles": 30}}, num_envs=8, max_ticks=50)
>>> obs, infos = venv.reset(seed=0)
>>> obs["scan"].shape, obs["pose"].shape
((8, 4, 180), (8, 4, 5))
>>> obs, reward, terminated, truncated, infos = venv.step(venv.action_space.sample())
>>> reward.shape
(8,)
"""

from __future__ import annotations

import copy
import math
import os
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from maes_sim.core import BatchedSimulation, SimConfig

from .options import EnvOptionError, as_config


class MaesVectorEnv(VectorEnv):
    """``num_envs`` teams exploring, stepped together (see the module docstring).

    Parameters
    ----------
    config : SimConfig, dict or path
    num_envs : int
    max_ticks : int
        Truncation of each episode.
    team_reward, collision_penalty, time_penalty : float
        Reward per newly explored m² of the team, per collision started, per tick.

    Observations: ``scan`` (E, N, 180) metres and ``pose`` (E, N, 5): true x, y (m), heading,
    linear (m/s) and angular (rad/s) velocity. Actions: (E, N, 2) in [-1, 1], the fractions of
    the top linear and angular speeds. Termination: the config's ``exploration_percent`` end
    criterion, when it has one.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        config: SimConfig | dict | str | os.PathLike[str],
        num_envs: int = 16,
        *,
        max_ticks: int = 1000,
        team_reward: float = 1.0,
        collision_penalty: float = 1.0,
        time_penalty: float = 0.0,
    ) -> None:
        for name, value in (("num_envs", num_envs), ("max_ticks", max_ticks)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise EnvOptionError(f"{name} must be an integer >= 1, got {value!r}")
        self.config = as_config(config)
        self.num_envs = num_envs
        self.max_ticks = max_ticks
        self.weights = (float(team_reward), float(collision_penalty), float(time_penalty))
        self.batch: BatchedSimulation | None = None
        self._build(list(range(num_envs)))
        n = self.config.number_of_robots
        tile = float(self.config.world.tile_size)
        self._tile = tile
        p = self.batch.params
        self._top = np.array([p.max_speed, p.max_angular_speed])
        rng_m = self.batch.range * tile
        h, w = self.batch.shape
        extent = (max(h, w) / 2.0 + 1) * tile
        vmax, wmax = 2 * p.max_speed * tile, 2 * p.max_angular_speed
        low = np.tile(np.array([-extent, -extent, -math.pi, -vmax, -wmax], np.float32), (n, 1))
        self.single_observation_space = spaces.Dict(
            {
                "scan": spaces.Box(0.0, rng_m, (n, 180), np.float32),
                "pose": spaces.Box(low, -low, dtype=np.float32),
            }
        )
        self.single_action_space = spaces.Box(-1.0, 1.0, (n, 2), np.float32)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._end = self.config.end_criteria.exploration_percent

    def _build(self, seeds: list[int]) -> None:
        self.batch = BatchedSimulation(self.config, seeds)
        self._explored = self.batch.explored_counts()

    def _obs(self) -> dict[str, np.ndarray]:
        b, tile = self.batch, self._tile
        pose = np.empty((self.num_envs, b.n_robots, 5), dtype=np.float32)
        p = b.poses
        pose[..., :2] = p[..., :2] * tile
        pose[..., 2] = p[..., 2]
        v = b.velocities
        pose[..., 3] = v[..., 0] * tile
        pose[..., 4] = v[..., 1]
        return {"scan": (b.scans() * tile).astype(np.float32), "pose": pose}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start every sub-env; ``seed`` gives sub-env ``k`` the map and start of seed
        ``seed + k`` (the same as ``Simulation(config, seed=seed + k)``), or
        ``options={"seeds": [...]}`` names each sub-env's seed."""
        super().reset(seed=seed)
        seeds = (options or {}).get("seeds")
        if seeds is not None:
            if len(seeds) != self.num_envs:
                raise EnvOptionError(f"options['seeds'] needs {self.num_envs} seeds, got {seeds!r}")
            self._build([int(s) for s in seeds])
            return self._obs(), {}
        base = int(self.np_random.integers(0, 2**31 - self.num_envs)) if seed is None else seed
        self._build([base + k for k in range(self.num_envs)])
        return self._obs(), {}

    def snapshot(self) -> Any:
        """Every sub-env now (a deep copy of the batch and the reward counters)."""
        return copy.deepcopy((self.batch, self._explored))

    def restore(self, snapshot: Any) -> None:
        """Go back to a :meth:`snapshot`; the sub-envs continue bit-identically."""
        batch, explored = copy.deepcopy(snapshot)
        if not isinstance(batch, BatchedSimulation) or batch.n_envs != self.num_envs:
            raise EnvOptionError("not a snapshot of this vector env")
        self.batch, self._explored = batch, explored

    def step(self, actions: np.ndarray):
        """One tick of every sub-env with ``actions`` (E, N, 2)."""
        a = np.clip(np.asarray(actions, dtype=np.float64), -1.0, 1.0)
        if a.shape != self.action_space.shape:
            raise ValueError(f"actions must have shape {self.action_space.shape}, got {a.shape}")
        b = self.batch
        b.step(a[..., 0] * self._top[0], a[..., 1] * self._top[1])
        explored = b.explored_counts()
        team, collision, time = self.weights
        reward = team * (explored - self._explored) * self._tile**2
        reward -= collision * b.collided.sum(axis=1) + time
        self._explored = explored
        terminated = (
            b.exploration_percent() >= self._end
            if self._end is not None
            else np.zeros(self.num_envs, dtype=bool)
        )
        truncated = ~terminated & (b.ticks >= self.max_ticks)
        obs = self._obs()
        infos: dict[str, Any] = {}
        done = np.flatnonzero(terminated | truncated)
        if done.size:
            infos["final_obs"] = {k: v.copy() for k, v in obs.items()}
            infos["_final_obs"] = terminated | truncated
            b.reset_envs(done)
            self._explored[done] = b.explored_counts()[done]
            obs = self._obs()
        return obs, reward.astype(np.float64), terminated, truncated, infos


def vector_env(
    config: SimConfig | dict | str | os.PathLike[str], num_envs: int = 16, **options: Any
) -> MaesVectorEnv:
    """The batched env of ``config`` (see :class:`MaesVectorEnv`)."""
    return MaesVectorEnv(config, num_envs, **options)
