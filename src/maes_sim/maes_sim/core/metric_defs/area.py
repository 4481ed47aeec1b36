"""Explored and covered area (definitions: :mod:`maes_sim.core.metrics`)."""

from ..metric_registry import MetricInputs, metric


@metric("exploration_percent", "%", "reachable open area seen by any robot's lidar")
def exploration_percent(m: MetricInputs) -> float:
    return round(m.metrics.exploration_percent, 4)


@metric("coverage_percent", "%", "MAES 2.0's coverage of the reachable area (mini-tiles)")
def coverage_percent(m: MetricInputs) -> float:
    return round(m.metrics.coverage_percent, 4)


@metric("explored_tiles", "tiles", "reachable tiles seen by any robot's lidar")
def explored_tiles(m: MetricInputs) -> int:
    return m.metrics.explored_count


@metric("covered_tiles", "tiles", "covered area: covered mini-tiles / 4")
def covered_tiles(m: MetricInputs) -> float:
    return m.metrics.mini_covered_count / 4.0


@metric("reachable_tiles", "tiles", "open tiles reachable from the spawn points")
def reachable_tiles(m: MetricInputs) -> int:
    return m.metrics.reachable_count
