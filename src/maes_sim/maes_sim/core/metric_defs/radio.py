"""The radio's counters (:mod:`maes_sim.core.radio.channel`): losses, budget, latency."""

from ..metric_registry import MetricInputs, int_total, metric


def _radio(m: MetricInputs):
    return None if m.sim is None else m.sim.mailbox.radio


@metric(
    "broadcasts_dropped",
    "count",
    "broadcast copies lost to robots in range (radio model or send budget), all robots",
)
def broadcasts_dropped(m: MetricInputs) -> int:
    radio = _radio(m)
    return 0 if radio is None else int_total(radio.dropped)


@metric(
    "broadcasts_over_budget",
    "count",
    "broadcasts dropped for exceeding max_messages_per_tick, all robots",
)
def broadcasts_over_budget(m: MetricInputs) -> int:
    radio = _radio(m)
    return 0 if radio is None else int_total(radio.over_budget)


@metric(
    "broadcast_latency_mean_ticks",
    "ticks",
    "mean ticks from sending to receipt over delivered copies (1 + latency_ticks; 0: none yet)",
)
def broadcast_latency_mean_ticks(m: MetricInputs) -> float:
    radio = _radio(m)
    return 0.0 if radio is None else round(radio.mean_latency(), 6)


@metric(
    "map_exchanges_dropped",
    "count",
    "SLAM map exchanges (one per pair of robots in range at a sync) lost by the radio model",
)
def map_exchanges_dropped(m: MetricInputs) -> int:
    radio = _radio(m)
    return 0 if radio is None else int(radio.map_exchanges_dropped)
