"""Coverage in MAES's own unit, and MAES-ROS's former centre coverage."""

from ..metric_registry import MetricInputs, metric


@metric("covered_minitiles", "mini-tiles", "covered half-tile mini-tiles (MAES's count)")
def covered_minitiles(m: MetricInputs) -> int:
    return m.metrics.mini_covered_count


@metric("centre_coverage_percent", "%", "reachable tiles under a robot's disc at some tick")
def centre_coverage_percent(m: MetricInputs) -> float:
    return round(m.metrics.centre_coverage_percent, 4)


@metric("centre_covered_tiles", "tiles", "tiles under a robot's disc at some tick")
def centre_covered_tiles(m: MetricInputs) -> int:
    return m.metrics.covered_count
