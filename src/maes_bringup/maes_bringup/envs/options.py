"""The options of the learning environments (observations, actions, rewards, limits)."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any

from maes_sim.core import SimConfig, config_from_dict, load_config

#: The observation parts, in the order a flat ``Box`` concatenates them.
OBSERVATION_PARTS = ("scan", "pose", "map", "nearby", "broadcasts")
ACTION_KINDS = ("velocity", "discrete", "goal")
OBSERVATION_FORMS = ("dict", "box")

#: The discrete actions: (linear, angular) as fractions of the top speeds.
DISCRETE_ACTIONS = ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.0, -1.0), (-1.0, 0.0))


class EnvOptionError(ValueError):
    """An environment option is wrong; the message names it."""


@dataclass(frozen=True)
class EnvOptions:
    """What an environment observes, does and is rewarded for.

    Parameters
    ----------
    observations : tuple of str
        Parts of an observation, from :data:`OBSERVATION_PARTS`: ``scan`` (lidar ranges, m),
        ``pose`` (believed x, y in m, heading in rad, linear m/s and angular rad/s velocity),
        ``map`` (an egocentric, north-up crop of the robot's SLAM map, ``map_size`` cells a
        side: 0 unknown, 1 open, 2 wall), ``nearby`` (the ``max_nearby`` nearest robots the
        robot senses: dx, dy in m and 1, or zeros), ``broadcasts`` (per robot of the team, the
        latest position it broadcast that reached this robot: dx, dy in m from this robot's
        believed position, ticks since it arrived, and 1; zeros for never and for itself).
    observation_form : str
        ``"dict"`` (a ``Dict`` space of the parts) or ``"box"`` (one flat float32 ``Box``).
    map_size : int
        Side of the map crop, in cells (odd sizes centre the robot's cell).
    max_nearby : int
        Robots listed in ``nearby``.
    actions : str
        ``"velocity"``: ``Box(-1, 1, (2,))`` scaled to the top linear and angular speeds;
        ``"discrete"``: stop, forward, turn left, turn right, reverse; ``"goal"``:
        ``Box(-1, 1, (2,))`` scaled to ``goal_range`` metres around the robot's believed
        position, handed to the built-in navigator when the robot has no goal in progress.
    goal_range : float
        Metres a goal action reaches at most (``goal`` actions).
    team_reward, own_reward : float
        Weights of the newly explored area (m²) of the team, and of what the robot's own lidar
        saw for the first time (its Explore-Bench seen map).
    collision_penalty, time_penalty : float
        Subtracted per collision started and per tick.
    broadcast_every : int
        Every robot broadcasts its believed position (``pose <x> <y>``, metres) every this many
        ticks through the simulation's comms rule (range, walls); 0: no broadcasts.
    max_ticks : int
        Truncation: episodes stop after this many ticks (termination is the config's end
        criteria).
    new_map_each_episode : bool
        ``reset()`` without a seed draws a new seed (a new map and start) when True; when
        False it goes back to the first episode's start (cheaply, from a snapshot).
    """

    observations: tuple[str, ...] = ("scan", "pose", "map", "nearby")
    observation_form: str = "dict"
    map_size: int = 21
    max_nearby: int = 3
    actions: str = "velocity"
    goal_range: float = 5.0
    team_reward: float = 1.0
    own_reward: float = 0.0
    collision_penalty: float = 1.0
    time_penalty: float = 0.0
    broadcast_every: int = 0
    max_ticks: int = 1000
    new_map_each_episode: bool = True

    def __post_init__(self) -> None:
        parts = self.observations
        if isinstance(parts, str) or not all(p in OBSERVATION_PARTS for p in parts) or not parts:
            raise EnvOptionError(
                f"observations must be a non-empty list of {list(OBSERVATION_PARTS)}, got {parts!r}"
            )
        object.__setattr__(self, "observations", tuple(p for p in OBSERVATION_PARTS if p in parts))
        _choice("observation_form", self.observation_form, OBSERVATION_FORMS)
        _choice("actions", self.actions, ACTION_KINDS)
        _int("map_size", self.map_size, 1)
        _int("max_nearby", self.max_nearby, 0)
        _int("max_ticks", self.max_ticks, 1)
        _int("broadcast_every", self.broadcast_every, 0)
        for name in (
            "goal_range",
            "team_reward",
            "own_reward",
            "collision_penalty",
            "time_penalty",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
                raise EnvOptionError(f"{name} must be a number, got {value!r}")
        if self.goal_range <= 0:
            raise EnvOptionError(f"goal_range must be > 0, got {self.goal_range!r}")
        if not isinstance(self.new_map_each_episode, bool):
            raise EnvOptionError(
                f"new_map_each_episode must be true or false, got {self.new_map_each_episode!r}"
            )

    @classmethod
    def from_kwargs(cls, **options: Any) -> EnvOptions:
        """The options from keyword arguments; an unknown one is named with the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise EnvOptionError(f"unknown option(s) {unknown}; known: {sorted(known)}")
        return cls(**options)


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise EnvOptionError(f"{name} must be one of {list(allowed)}, got {value!r}")


def _int(name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise EnvOptionError(f"{name} must be an integer >= {low}, got {value!r}")


def as_config(
    config: SimConfig | dict | str | os.PathLike[str], robots: int | None = None
) -> SimConfig:
    """A :class:`SimConfig` from a config, a dict of config keys or a YAML path; with ``robots``
    the robot count is replaced."""
    if isinstance(config, dict):
        config = config_from_dict(config)
    elif not isinstance(config, SimConfig):
        config = load_config(config)
    if robots is not None and config.number_of_robots != robots:
        config = replace(config, number_of_robots=robots)
    return config
