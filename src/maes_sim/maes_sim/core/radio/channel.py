"""The radio channel of a simulation: each robot's model, latency and send budget, the
messages in flight, and the counters (per robot, as sender and as receiver).

A broadcast posted during tick ``t`` by robot ``s`` becomes one *attempt* per robot the range
rule (or the signal function) links ``s`` to at sending time. Over-budget messages (``s``'s
``max_messages_per_tick`` already used this tick) lose all their attempts; the others go
through ``s``'s model (:mod:`maes_sim.core.radio.registry`). A surviving attempt arrives with
the state of tick ``t + 1 + latency_ticks`` (the sender's). Counters:

* ``sent``: broadcasts posted (accepted: within :data:`MAX_BROADCASTS_PER_TICK`);
* ``delivered``: copies that arrived (one per receiving robot);
* ``dropped``: attempts lost (by the model, or because over budget), one per robot in range;
* ``over_budget``: broadcasts over the budget (each also counts its attempts as dropped);
* ``latency_sum``: ticks from sending to receipt, summed over the delivered copies (a copy's
  latency is ``1 + latency_ticks``: MAES 2.0 delivers at the next tick).

Copies in flight when a run ends are neither delivered nor dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from maes_sim.core.kernels.radio import keep_group

from .registry import RADIO_MODELS, RadioModel
from .settings import RadioSettings

_NO_POSITIONS = np.zeros((0, 2))


class Radio:
    """Models, budgets, latencies and counters of ``len(settings)`` robots.

    Parameters
    ----------
    settings : sequence of RadioSettings
        Each robot's (its type's) radio settings, robot 0 first.
    broadcast_ranges : ndarray (N,), optional
        Each robot's broadcast range, tiles (the ``distance`` model's scale; default 1).
    """

    #: Built-in models decide in their compiled twin (False: every model's Python ``keep``,
    #: the reference; the tests compare the two). This and the two caches below are class
    #: defaults, so that a radio pickled in a snapshot file before they existed still works.
    compiled: bool = True
    _params: list[np.ndarray] | None = None  # each model's kernel_params()
    _zero: np.ndarray = np.zeros(0, dtype=np.int64)  # grown by _zeros

    def __init__(
        self, settings: Sequence[RadioSettings], broadcast_ranges: np.ndarray | None = None
    ) -> None:
        n = self.n = len(settings)
        distinct: dict[RadioSettings, int] = {}
        self.model_of = np.array(
            [distinct.setdefault(s, len(distinct)) for s in settings], dtype=np.int64
        )
        self.models: list[RadioModel] = [RADIO_MODELS[s.model](s, n) for s in distinct]
        self._all_range = all(m.name == "range" for m in self.models)
        self.latency = np.array([s.latency_ticks for s in settings], dtype=np.int64)
        #: The latency when every robot has the same (most runs), else None.
        self.uniform_latency: int | None = (
            int(self.latency[0]) if n and (self.latency == self.latency[0]).all() else None
        )
        self.budget = np.array(
            [-1 if s.max_messages_per_tick is None else s.max_messages_per_tick for s in settings],
            dtype=np.int64,
        )
        #: MAES 2.0's radio: lossless, no latency, no budget (the mailbox's fast path).
        self.simple = bool(self._all_range and not self.latency.any() and (self.budget < 0).all())
        self.ranges = (
            np.ones(n) if broadcast_ranges is None else np.asarray(broadcast_ranges, np.float64)
        )
        self.sent = np.zeros(n, dtype=np.int64)
        self.delivered = np.zeros(n, dtype=np.int64)
        self.dropped = np.zeros(n, dtype=np.int64)
        self.over_budget = np.zeros(n, dtype=np.int64)
        self.received = np.zeros(n, dtype=np.int64)
        self.latency_sum = np.zeros(n, dtype=np.int64)
        #: SLAM map exchanges attempted and lost (one per pair of robots in range at a sync).
        self.map_exchanges = 0
        self.map_exchanges_dropped = 0

    @classmethod
    def lossless(cls, n_robots: int) -> Radio:
        """MAES 2.0's radio for ``n_robots``: the range rule, no latency, no budget."""
        return cls([RadioSettings()] * n_robots)

    def keep(
        self,
        senders: np.ndarray,
        receivers: np.ndarray,
        positions: np.ndarray | None,
        rng: np.random.Generator | None,
    ) -> np.ndarray:
        """Which attempts (sender, receiver) arrive, each by its sender's model: bool (K,).

        Models are asked in the order of their first robot, each over its attempts in the
        given order, so the draws from ``rng`` follow from the attempts alone.
        """
        out = np.ones(len(senders), dtype=bool)
        if not len(senders) or self._all_range:
            return out
        senders = np.asarray(senders, dtype=np.int64)
        receivers = np.asarray(receivers, dtype=np.int64)
        if positions is not None:
            positions = np.asarray(positions, dtype=np.float64)
        groups = self.model_of[senders] if len(self.models) > 1 else None
        counts = None  # attempts per model, when a compiled model needs them
        for g, model in enumerate(self.models):
            if model.name == "range":
                continue  # the range rule keeps everything and draws nothing
            if model.kernel is not None and self.compiled:
                if self._params is None:
                    self._params = [m.kernel_params() for m in self.models]
                if counts is None:
                    counts = (
                        np.array([len(senders)])
                        if groups is None
                        else np.bincount(groups, minlength=len(self.models))
                    )
                if not counts[g]:
                    continue
                if model.uses_distance and positions is None:
                    raise ValueError(f"radio model {model.name!r} needs the robots' positions")
                if rng is None:
                    raise ValueError(f"radio model {model.name!r} needs a random generator")
                keep_group(
                    model.kernel,
                    self._params[g],
                    senders,
                    receivers,
                    self._zeros(len(senders)) if groups is None else groups,
                    g,
                    _NO_POSITIONS if positions is None else positions,
                    self.ranges,
                    model.kernel_state(),
                    rng.random(int(counts[g]) * model.draws_per_attempt),
                    out,
                )
                continue
            idx = np.arange(len(senders)) if groups is None else np.flatnonzero(groups == g)
            if not idx.size:
                continue
            a, b = senders[idx], receivers[idx]
            if model.uses_distance:
                if positions is None:
                    raise ValueError(f"radio model {model.name!r} needs the robots' positions")
                d = np.hypot(*(positions[b] - positions[a]).T)
            else:
                d = np.zeros(idx.size)
            if rng is None:
                raise ValueError(f"radio model {model.name!r} needs a random generator")
            out[idx] = model.keep(a, b, d, self.ranges[a], rng)
        return out

    def _zeros(self, k: int) -> np.ndarray:
        """``k`` zeros (int64), one array reused while ``k`` does not grow."""
        if self._zero.size < k:
            self._zero = np.zeros(k, dtype=np.int64)
        return self._zero[:k]

    def exchange_links(
        self,
        ia: np.ndarray,
        ib: np.ndarray,
        positions: np.ndarray | None,
        rng: np.random.Generator | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The SLAM map exchanges of a sync that get through: one exchange per pair of linked
        robots, no budget, no latency. It goes over a link that exists: from the lower index to
        the higher (that robot's model) when the lower reaches the higher, else from the higher
        (robots of different ranges: only the one with the longer range may reach the other).
        Returns the kept pairs (lower, higher), sorted.

        Examples
        --------
        >>> radio = Radio([RadioSettings("distance")] * 2, np.array([5.0, 15.0]))
        >>> rng = np.random.default_rng(0)
        >>> pos = np.array([[0.0, 0.0], [10.0, 0.0]])  # 10 apart: only robot 1 reaches robot 0
        >>> kept = [radio.exchange_links([1], [0], pos, rng)[0].size for _ in range(100)]
        >>> 30 < sum(kept) < 80  # robot 1's loss at 10 of its 15: (10 / 15) ** 2 = 0.44
        True
        """
        ia = np.asarray(ia, dtype=np.int64)
        ib = np.asarray(ib, dtype=np.int64)
        lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
        senders, receivers = lo, hi
        if lo.size:
            n = max(self.n, 1)
            key = lo * n + hi
            pairs = np.unique(key)
            lo, hi = pairs // n, pairs % n
            forward = np.isin(pairs, key[ia < ib])  # the lower index reaches the higher
            senders, receivers = np.where(forward, lo, hi), np.where(forward, hi, lo)
        ok = self.keep(senders, receivers, positions, rng)
        self.map_exchanges += int(lo.size)
        self.map_exchanges_dropped += int((~ok).sum())
        return lo[ok], hi[ok]

    def summary(self) -> dict[str, object]:
        """Per-robot counters (as sender; ``received`` as receiver) for ``summary.json``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(self.delivered > 0, self.latency_sum / self.delivered, 0.0)
        return {
            "broadcasts_sent": self.sent.tolist(),
            "broadcasts_delivered": self.delivered.tolist(),
            "broadcasts_dropped": self.dropped.tolist(),
            "broadcasts_over_budget": self.over_budget.tolist(),
            "broadcasts_received": self.received.tolist(),
            "broadcast_latency_mean_ticks": np.round(mean, 6).tolist(),
            "map_exchanges": self.map_exchanges,
            "map_exchanges_dropped": self.map_exchanges_dropped,
        }

    def mean_latency(self) -> float:
        """Mean ticks from sending to receipt over every delivered copy (0 when none)."""
        total = int(self.delivered.sum())
        return float(self.latency_sum.sum()) / total if total else 0.0
