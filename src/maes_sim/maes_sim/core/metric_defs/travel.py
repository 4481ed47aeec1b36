"""How far the robots drove and how often they collided."""

from ..metric_registry import MetricInputs, int_total, metric


@metric("distance_travelled_m", "m", "path lengths of all robots, summed")
def distance_travelled_m(m: MetricInputs) -> float:
    return round(float(m.metrics.distance.sum()) * m.tile_size, 6)


@metric("collisions", "count", "collisions started (new contacts), all robots")
def collisions(m: MetricInputs) -> int:
    return int_total(m.metrics.collisions)
