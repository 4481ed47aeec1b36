"""Learning environments: PettingZoo (multi-robot) and Gymnasium (one robot), batched.

>>> from maes_bringup.envs import parallel_env, gym_env  # doctest: +SKIP
>>> env = parallel_env("maes_config.yaml", actions="discrete")  # doctest: +SKIP

See docs/learning.md. Importing this package registers :data:`GYM_ID` with Gymnasium.
"""

from __future__ import annotations

import gymnasium

from .episode import Episode, agent_names
from .gym_env import GYM_ID, MaesGymEnv, gym_env
from .options import ACTION_KINDS, OBSERVATION_PARTS, EnvOptionError, EnvOptions
from .parallel import MaesParallelEnv, env, parallel_env
from .vector import MaesVectorEnv, vector_env

if GYM_ID not in gymnasium.registry:
    gymnasium.register(id=GYM_ID, entry_point="maes_bringup.envs:gym_env")

__all__ = [
    "ACTION_KINDS",
    "GYM_ID",
    "OBSERVATION_PARTS",
    "EnvOptionError",
    "EnvOptions",
    "Episode",
    "MaesGymEnv",
    "MaesParallelEnv",
    "MaesVectorEnv",
    "agent_names",
    "env",
    "gym_env",
    "parallel_env",
    "vector_env",
]
