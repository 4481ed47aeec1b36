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
    #: A built-in model's kind in :func:`maes_sim.core.kernels.radio.keep_group`, which
    #: :class:`~maes_sim.core.radio.Radio` calls instead of :meth:`keep` (the same decisions
    #: and draws, compiled); None (a model of one's own): :meth:`keep` is called.
    kernel: ClassVar[int | None] = None
    #: Uniforms the model draws per attempt (the kernel's are drawn before its call).
    draws_per_attempt: ClassVar[int] = 1

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

    def kernel_params(self) -> np.ndarray:
        """The model's parameters as :func:`~maes_sim.core.kernels.radio.keep_group` takes
        them (a model with a :attr:`kernel`)."""
        return np.zeros(5)

    def kernel_state(self) -> np.ndarray:
        """The per-link state the kernel updates in place, (N, N) bool (an empty array for a
        model without one)."""
        return np.zeros((0, 0), dtype=bool)


def radio_model(name: str) -> Callable[[type[RadioModel]], type[RadioModel]]:
    """Register the decorated :class:`RadioModel` subclass as model ``name``."""

    def register(cls: type[RadioModel]) -> type[RadioModel]:
        if name in RADIO_MODELS:
            raise ValueError(f"radio model {name!r} is registered twice")
        cls.name = name
        RADIO_MODELS[name] = cls
        return cls

    return register
