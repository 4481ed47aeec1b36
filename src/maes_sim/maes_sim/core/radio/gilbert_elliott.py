"""``gilbert_elliott``: bursty losses, a two-state Markov chain per directed link.

Each ordered pair (sender, receiver) has a state, *good* or *bad* (all links start good). At
every transmission over the link (a broadcast delivery or a SLAM map exchange) the state first
moves (good -> bad with ``good_to_bad_probability``, bad -> good with
``bad_to_good_probability``), then the attempt is lost with ``loss_probability_good`` or
``loss_probability_bad`` of the new state. The four parameters (E. N. Gilbert, "Capacity of a
burst-noise channel", 1960; E. O. Elliott, "Estimates of error rates for codes on burst-noise
channels", 1963):

* a stay in the bad state lasts ``1 / bad_to_good_probability`` transmissions on average (with
  ``loss_probability_bad = 1`` and ``loss_probability_good = 0``: the mean burst of losses);
* the long-run share of bad transmissions is ``g / (g + b)`` (g, b the two transition
  probabilities), so the mean loss is ``(g * loss_bad + b * loss_good) / (g + b)``.

Two uniform draws per attempt, as one ``rng.random((2, k))`` per round of ``k`` attempts: the
``k`` transition draws, then the ``k`` loss draws. A round holds each link's next use, in
attempt order (the first use of every link, then the second, ...).
"""

from __future__ import annotations

import numpy as np

from maes_sim.core.kernels.radio import GILBERT_ELLIOTT

from .registry import RadioModel, radio_model


@radio_model("gilbert_elliott")
class GilbertElliottModel(RadioModel):
    """Per-link good/bad states; ``bad`` (N, N) bool, allocated on first use."""

    def __init__(self, settings, n_robots: int) -> None:
        super().__init__(settings, n_robots)
        self.bad: np.ndarray | None = None

    kernel = GILBERT_ELLIOTT
    draws_per_attempt = 2

    def kernel_params(self) -> np.ndarray:
        s = self.settings
        return np.array(
            [
                s.good_to_bad_probability,
                s.bad_to_good_probability,
                s.loss_probability_good,
                s.loss_probability_bad,
                0.0,
            ]
        )

    def kernel_state(self) -> np.ndarray:
        if self.bad is None:
            self.bad = np.zeros((self.n_robots, self.n_robots), dtype=bool)
        return self.bad

    def keep(self, senders, receivers, distance, max_range, rng) -> np.ndarray:
        k = len(senders)
        out = np.zeros(k, dtype=bool)
        if k == 0:
            return out
        if self.bad is None:
            self.bad = np.zeros((self.n_robots, self.n_robots), dtype=bool)
        # a link used by several attempts of one batch moves once per attempt, in order:
        # take the attempts in rounds (first use of each link, second use, ...)
        key = np.asarray(senders, np.int64) * self.n_robots + np.asarray(receivers, np.int64)
        if k == 1 or (np.diff(key) > 0).all():  # every link once (one message per sender)
            return self._transmit(np.arange(k), senders, receivers, rng, out)
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        first = np.searchsorted(sorted_key, sorted_key, side="left")
        occurrence = np.empty(k, dtype=np.int64)
        occurrence[order] = np.arange(k) - first
        for r in range(int(occurrence.max()) + 1):
            self._transmit(np.flatnonzero(occurrence == r), senders, receivers, rng, out)
        return out

    def _transmit(self, idx, senders, receivers, rng, out) -> np.ndarray:
        """One transmission over each of the distinct links of attempts ``idx``: move their
        states, then draw their losses into ``out``."""
        s = self.settings
        a, b = senders[idx], receivers[idx]
        u = rng.random((2, idx.size))
        was_bad = self.bad[a, b]
        move = np.where(was_bad, s.bad_to_good_probability, s.good_to_bad_probability)
        now_bad = was_bad ^ (u[0] < move)
        self.bad[a, b] = now_bad
        loss = np.where(now_bad, s.loss_probability_bad, s.loss_probability_good)
        out[idx] = u[1] >= loss
        return out
