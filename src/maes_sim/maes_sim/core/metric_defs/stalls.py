"""Robots that stayed in one place while driven, with area left to explore (:mod:`..stalls`).
Metrics computed without a simulation (``MetricInputs.sim`` None, as in unit tests) have none."""

from ..metric_registry import MetricInputs, int_total, metric


@metric(
    "stalls",
    "count",
    "robots that stayed within 1 m of one place for 60 s while driven (pauses under 10 s "
    "included) and area was left unexplored (each stall counted once, when it began)",
)
def stalls(m: MetricInputs) -> int:
    return 0 if m.sim is None else int(m.sim.stalls.count)


@metric("robots_stalled", "count", "robots stalled now (see stalls)")
def robots_stalled(m: MetricInputs) -> int:
    return 0 if m.sim is None else int_total(m.sim.stalls.stalled)
