"""Communication: broadcasts and environment tags."""

from ..metric_registry import MetricInputs, metric


@metric(
    "broadcasts_sent",
    "count",
    "broadcasts sent, all robots",
    aliases=("messages_sent", "messages_broadcast"),
)
def broadcasts_sent(m: MetricInputs) -> int:
    return int(m.broadcasts_sent)


@metric(
    "broadcasts_delivered",
    "count",
    "broadcasts received (one per receiving robot)",
    aliases=("messages_delivered",),
)
def broadcasts_delivered(m: MetricInputs) -> int:
    return int(m.broadcasts_delivered)


@metric("tags_deposited", "count", "environment tags deposited, all robots")
def tags_deposited(m: MetricInputs) -> int:
    return int(m.tags_deposited)
