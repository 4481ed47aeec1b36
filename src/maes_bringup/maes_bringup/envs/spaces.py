"""Observation and action spaces of one robot, and the flat form of an observation."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .episode import Episode
from .options import DISCRETE_ACTIONS


def observation_space(episode: Episode) -> spaces.Space:
    """The observation space of one robot of ``episode`` (a ``Dict`` or a flat ``Box``)."""
    bounds = episode.bounds()
    parts = {}
    for name, (low, high) in bounds.items():
        dtype = np.uint8 if name == "map" else np.float32
        parts[name] = spaces.Box(low.astype(dtype), high.astype(dtype), dtype=dtype)
    if episode.options.observation_form == "dict":
        return spaces.Dict(parts)
    low = np.concatenate([b[0].ravel() for b in bounds.values()]).astype(np.float32)
    high = np.concatenate([b[1].ravel() for b in bounds.values()]).astype(np.float32)
    return spaces.Box(low, high, dtype=np.float32)


def action_space(episode: Episode) -> spaces.Space:
    """The action space of one robot (see :class:`~.options.EnvOptions` ``actions``)."""
    if episode.options.actions == "discrete":
        return spaces.Discrete(len(DISCRETE_ACTIONS))
    return spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)


def shape_observation(episode: Episode, parts: dict[str, np.ndarray]) -> dict | np.ndarray:
    """``parts`` as the space wants it: the dict itself, or its values concatenated."""
    if episode.options.observation_form == "dict":
        return parts
    return np.concatenate([parts[k].ravel().astype(np.float32) for k in parts])
