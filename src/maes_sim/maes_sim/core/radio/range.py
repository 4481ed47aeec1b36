"""``range``: MAES 2.0's rule, the default. Every attempt the range/walls rule (or the user's
signal function) allows arrives; nothing is drawn from the generator."""

from __future__ import annotations

import numpy as np

from .registry import RadioModel, radio_model


@radio_model("range")
class RangeModel(RadioModel):
    """Lossless within range: results as MAES 2.0's (and MAES-ROS's before the radio models)."""

    def keep(self, senders, receivers, distance, max_range, rng) -> np.ndarray:
        return np.ones(len(senders), dtype=bool)
