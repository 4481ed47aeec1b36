"""The registry of run metrics: one name per metric, everywhere.

A metric registered here is a column of ``statistics.csv``, a key of every statistics snapshot
and of ``summary.json``'s ``final``, and a metric a batch experiment can list (its final value);
the ``maes_interfaces/Stats`` message carries the counts under the same names. Each metric is
defined once, with :func:`metric`, in a module of :mod:`maes_sim.core.metric_defs` (any module
put there is found; no list to edit).

A metric's former names stay readable: :func:`canonical_metric_name` maps them to the current
one (experiment files listing them, old batch CSV headers, see docs/experiments.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "MetricInputs",
    "MetricSpec",
    "canonical_metric_name",
    "int_total",
    "metric",
    "metric_aliases",
    "registered_metrics",
]

#: Up to this many values :func:`int_total` adds them in Python (numpy's sum is slower there).
_SHORT = 64


def int_total(values: Any) -> int:
    """The sum of an integer or bool array (N,) as a Python int, for metric definitions.

    The same integer as ``int(values.sum())``; for up to 64 values it adds them in Python, as
    numpy's sum costs over 1 us however short the array (a statistics snapshot of a small team
    made several).

    Examples
    --------
    >>> import numpy as np
    >>> int_total(np.array([2, 3], dtype=np.int64)), int_total(np.ones(100, dtype=bool))
    (5, 100)
    """
    return sum(values.tolist()) if len(values) <= _SHORT else int(values.sum())


class MetricInputs(NamedTuple):
    """What a metric is computed from at a snapshot."""

    metrics: Any  # maes_sim.core.metrics.Metrics: explored/covered tiles, distances, collisions
    tick: int
    sim_time: float
    broadcasts_sent: int
    broadcasts_delivered: int
    tags_deposited: int
    tile_size: float  # metres per tile
    sim: Any = None  # the Simulation, for a metric that needs more (None in unit tests)


@dataclass(frozen=True)
class MetricSpec:
    """One registered metric."""

    name: str
    unit: str
    description: str
    compute: Callable[[MetricInputs], float | int]
    aliases: tuple[str, ...] = ()


_METRICS: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}


def metric(
    name: str, unit: str, description: str, aliases: tuple[str, ...] = ()
) -> Callable[[Callable[[MetricInputs], float | int]], Callable[[MetricInputs], float | int]]:
    """Register the decorated function as metric ``name`` (snapshot order: registration order).

    Examples
    --------
    >>> import maes_sim.core  # loads maes_sim.core.metric_defs
    >>> spec = {s.name: s for s in registered_metrics()}["broadcasts_sent"]
    >>> spec.unit, spec.aliases
    ('count', ('messages_sent', 'messages_broadcast'))
    """

    def register(compute: Callable[[MetricInputs], float | int]):
        taken = name in _METRICS or name in _ALIASES
        for alias in aliases:
            taken = taken or alias in _METRICS or alias in _ALIASES
        if taken:
            raise ValueError(
                f"metric {name!r} (or one of its aliases {aliases}) is registered twice"
            )
        _METRICS[name] = MetricSpec(name, unit, description, compute, tuple(aliases))
        for alias in aliases:
            _ALIASES[alias] = name
        return compute

    return register


def registered_metrics() -> tuple[MetricSpec, ...]:
    """Every registered metric, in snapshot (CSV column) order (``maes_sim.core`` loads
    :mod:`maes_sim.core.metric_defs` when imported)."""
    return tuple(_METRICS.values())


def metric_aliases() -> dict[str, str]:
    """Former metric names -> current ones."""
    return dict(_ALIASES)


def canonical_metric_name(name: str) -> str:
    """The current name of a metric given by a current or former name (else ``name`` itself).

    Examples
    --------
    >>> import maes_sim.core  # loads maes_sim.core.metric_defs
    >>> canonical_metric_name("messages_sent"), canonical_metric_name("collisions")
    ('broadcasts_sent', 'collisions')
    """
    return _ALIASES.get(name, name)
