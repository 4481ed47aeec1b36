"""``distance``: loss growing with distance, up to certain loss at the sender's range.

For a receiver at distance ``d`` (tiles, at sending time) from a sender of broadcast range
``R``, a delivery is lost with probability

    p(d) = p0 + (1 - p0) * (d / R) ** a

with ``p0 = loss_probability`` (the loss next to the sender) and ``a = distance_exponent``
(2: loss grows with the square of the distance, as the received power falls). One uniform draw
per attempt. With a user signal function, ``R`` is still the sender's ``broadcast_range``
(``d / R`` is capped at 1).
"""

from __future__ import annotations

import numpy as np

from maes_sim.core.kernels.radio import DISTANCE

from .registry import RadioModel, radio_model


def distance_loss(distance, max_range, p0: float, exponent: float) -> np.ndarray:
    """The loss probability of each attempt (see the module docstring).

    Examples
    --------
    >>> distance_loss(np.array([0.0, 5.0, 10.0]), np.array([10.0] * 3), 0.1, 2.0).tolist()
    [0.1, 0.325, 1.0]
    """
    ratio = np.minimum(np.asarray(distance, float) / np.maximum(max_range, 1e-12), 1.0)
    return p0 + (1.0 - p0) * ratio**exponent


@radio_model("distance")
class DistanceModel(RadioModel):
    """Loss from ``loss_probability`` next to the sender to 1 at its range."""

    uses_distance = True
    kernel = DISTANCE

    def kernel_params(self) -> np.ndarray:
        s = self.settings
        return np.array([s.loss_probability, s.distance_exponent, 0.0, 0.0, 0.0])

    def keep(self, senders, receivers, distance, max_range, rng) -> np.ndarray:
        s = self.settings
        p = distance_loss(distance, max_range, s.loss_probability, s.distance_exponent)
        return rng.random(len(senders)) >= p
