"""``bernoulli``: each delivery (one message to one receiver in range) is lost independently
with ``loss_probability``; one uniform draw per attempt, in attempt order."""

from __future__ import annotations

import numpy as np

from maes_sim.core.kernels.radio import BERNOULLI

from .registry import RadioModel, radio_model


@radio_model("bernoulli")
class BernoulliModel(RadioModel):
    """Independent losses: the delivered share tends to ``1 - loss_probability``."""

    kernel = BERNOULLI

    def kernel_params(self) -> np.ndarray:
        return np.array([self.settings.loss_probability, 0.0, 0.0, 0.0, 0.0])

    def keep(self, senders, receivers, distance, max_range, rng) -> np.ndarray:
        return rng.random(len(senders)) >= self.settings.loss_probability
