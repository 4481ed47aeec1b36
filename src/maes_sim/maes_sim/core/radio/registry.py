"""The registry of radio models: one module per model, each registers itself by name.

A model decides, for a batch of transmission attempts (sender, receiver) that the range rule
(or the user's signal function) lets through, which arrive. It draws only from the
generator it is handed (the simulation's one), in attempt order, so a seed gives the same run
in direct mode and on ROS. It may keep state between ticks (the Gilbert-Elliott link states):
that state is part of the simulation's snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np

from .settings import RadioSettings

#: name -> model class, in registration order.
RADIO_MODELS: dict[str, type[RadioModel]] = {}


class RadioModel:
    """A radio model; subclasses override :meth:`keep`.

    Parameters
    ----------
    settings : RadioSettings
        The robot type's settings (the sender's type decides).
    n_robots : int
        Robots in the simulation (for per-link state).
    """

    name: ClassVar[str] = ""
    #: Whether :meth:`keep` reads ``distance`` (else the caller may pass zeros).
    uses_distance: ClassVar[bool] = False

    def __init__(self, settings: RadioSettings, n_robots: int) -> None:
        self.settings = settings
        self.n_robots = n_robots

    def keep(
        self,
        senders: np.ndarray,
        receivers: np.ndarray,
        distance: np.ndarray,
        max_range: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Which attempts (K,) arrive: bool (K,).

        ``distance`` (K,) is the sender-receiver distance in tiles at sending time,
        ``max_range`` (K,) the sender's broadcast range in tiles. Attempts come in delivery
        order (a link may appear several times: several messages in one tick).
        """
        raise NotImplementedError


def radio_model(name: str) -> Callable[[type[RadioModel]], type[RadioModel]]:
    """Register the decorated :class:`RadioModel` subclass as model ``name``."""

    def register(cls: type[RadioModel]) -> type[RadioModel]:
        if name in RADIO_MODELS:
            raise ValueError(f"radio model {name!r} is registered twice")
        cls.name = name
        RADIO_MODELS[name] = cls
        return cls

    return register
