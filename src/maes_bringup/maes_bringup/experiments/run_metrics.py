"""The metrics a batch experiment can collect from a run, by name.

========================== =========================================================== =======
name                       meaning                                                     unit
========================== =========================================================== =======
``ticks_to_end``           tick at which an end criterion was met (empty if            ticks
                           ``max_ticks`` stopped the run first)
``time_to_end``            the same in simulated seconds                               s
``time_to_exploration_P``  first simulated time at which exploration reached P %       s
                           (P any number in ]0, 100], e.g. 50, 90, 99; empty if never)
``time_to_coverage_P``     the same for coverage                                       s
``exploration_at_Ts``      exploration after T simulated seconds (T a number, e.g.     %
                           ``exploration_at_60s``; the final value when an end
                           criterion ended the run sooner; empty when ``max_ticks``
                           stopped it sooner)
``coverage_at_Ts``         the same for coverage                                       %
``final_exploration``      exploration at the end of the run                           %
``final_coverage``         coverage at the end of the run                              %
``distance``               distance travelled, all robots together                     m
``distance_per_robot``     mean distance travelled per robot                           m
``collisions``             collisions started, all robots together                     count
``broadcasts_sent``        broadcasts sent (formerly ``messages_sent``)                count
``broadcasts_delivered``   broadcasts received, one per receiving robot (formerly      count
                           ``messages_delivered``)
``tags_deposited``         environment tags deposited                                  count
``explored_area``          explored reachable area at the end (Explore-Bench)          m^2
``exploration_efficiency`` explored area per metre driven, all robots (empty if none)  m^2/m
``overlap``                sightings of explored tiles per tile, minus 1               ratio
``overlap_share``          share of the explored tiles two or more robots saw          0..1
``distance_max_robot``     the longest distance one robot travelled                    m
========================== =========================================================== =======

Besides these, every metric of the simulator's registry (the columns of ``statistics.csv``,
``maes_sim.core.metric_registry``; e.g. ``explored_tiles``, ``centre_coverage_percent``, or one
you added) can be listed: its value at the end of the run, under the same name. A former name
(``messages_sent``) is read as the current one. Every row also holds ``ticks``, ``sim_time`` and
``end_reason``. Exploration and coverage are
the simulator's (share of the reachable open area seen by a lidar / driven over).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

_FIXED = (
    "ticks_to_end",
    "time_to_end",
    "final_exploration",
    "final_coverage",
    "distance",
    "distance_per_robot",
    "collisions",
    "broadcasts_sent",
    "broadcasts_delivered",
    "tags_deposited",
    "explored_area",
    "exploration_efficiency",
    "overlap",
    "overlap_share",
    "distance_max_robot",
)
_BENCH = ("explored_area", "exploration_efficiency", "overlap", "overlap_share")
_THRESHOLD = re.compile(r"^time_to_(exploration|coverage)_(\d+(?:\.\d+)?)$")
_AT_TIME = re.compile(r"^(exploration|coverage)_at_(\d+(?:\.\d+)?)s$")


def _core_metrics() -> tuple[str, ...]:
    """Names of the simulator's registered metrics (each one's final value is a metric)."""
    from maes_sim.core import registered_metrics

    return tuple(spec.name for spec in registered_metrics())


def check_metric_names(names: Any) -> tuple[str, ...]:
    """Validate metric names; returns them as a tuple, former names replaced by current ones.

    Raises ValueError naming an unknown or repeated metric, with the closest known one.

    Examples
    --------
    >>> check_metric_names(["time_to_exploration_99", "distance", "messages_sent"])
    ('time_to_exploration_99', 'distance', 'broadcasts_sent')
    >>> check_metric_names(["distanse"])
    Traceback (most recent call last):
    ...
    ValueError: unknown metric 'distanse'; did you mean 'distance'? (see docs/experiments.md)
    """
    import difflib

    from maes_sim.core import canonical_metric_name

    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ValueError(f"got {names!r}, expected a non-empty list of metric names")
    names = [canonical_metric_name(n) for n in names]
    core = _core_metrics()
    for name in names:
        m = _THRESHOLD.match(name)
        if m is not None:
            if not 0 < float(m.group(2)) <= 100:
                raise ValueError(f"metric {name!r}: the percentage must be in ]0, 100]")
            continue
        if _AT_TIME.match(name) is not None:
            continue
        if name not in _FIXED and name not in core:
            known = list(_FIXED) + ["time_to_exploration_99", "time_to_coverage_99"]
            known += [c for c in core if c not in known]
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"
            raise ValueError(f"unknown metric {name!r}{hint} (see docs/experiments.md)")
    if len(set(names)) != len(names):
        raise ValueError(f"a metric is listed twice in {names!r}")
    return tuple(names)


def _none_if_missing(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _value_at(result: Any, kind: str, seconds: float) -> float | None:
    """Exploration or coverage (%) after ``seconds`` of simulated time: the value of the tick
    reached then, the final one when an end criterion ended the run sooner, else None."""
    series = result.exploration if kind == "exploration" else result.coverage
    tick = int(round(seconds / result.sim.tick_duration))
    if tick < len(series):
        return round(float(series[tick]), 4)
    return round(float(series[-1]), 4) if result.finished else None


def compute_metrics(result: Any, names: Sequence[str]) -> dict[str, float | int | None]:
    """The named metrics of a :class:`~maes_bringup.runners.direct.RunResult` (None = not reached).

    Examples
    --------
    >>> from maes_bringup.runners.direct import run
    >>> from maes_sim.core import config_from_dict
    >>> cfg = config_from_dict({"end_criteria": {"tick": 3},
    ...                         "map": {"width_in_tiles": 20, "height_in_tiles": 20}})
    >>> names = ["ticks_to_end", "distance", "exploration_at_0.2s", "exploration_at_9s"]
    >>> m = compute_metrics(run(cfg, lambda robot: None), names)
    >>> m["ticks_to_end"], m["distance"], m["exploration_at_0.2s"] == m["exploration_at_9s"]
    (3, 0.0, True)
    """
    out: dict[str, float | int | None] = {}
    n = max(len(result.distance), 1)
    fixed = {
        "ticks_to_end": result.ticks if result.finished else None,
        "time_to_end": round(result.sim_time, 6) if result.finished else None,
        "final_exploration": round(float(result.exploration[-1]), 4),
        "final_coverage": round(float(result.coverage[-1]), 4),
        "distance": round(float(result.distance.sum()), 6),
        "distance_per_robot": round(float(result.distance.sum()) / n, 6),
        "collisions": int(result.collisions.sum()),
        "broadcasts_sent": result.broadcasts_sent,
        "broadcasts_delivered": result.broadcasts_delivered,
        "tags_deposited": result.tags_deposited,
    }
    if any(name in _BENCH for name in names):  # definitions: maes_sim.core.explore_bench
        bench = result.sim.explore_bench_summary()
        fixed.update(
            explored_area=bench["explored_area_m2"],
            exploration_efficiency=bench["exploration_efficiency_m2_per_m"],
            overlap=bench["overlap"],
            overlap_share=bench["overlap_share"],
        )
    fixed["distance_max_robot"] = round(float(result.distance.max(initial=0.0)), 6)
    for name in names:
        at = _AT_TIME.match(name)
        if at is not None:
            out[name] = _value_at(result, at.group(1), float(at.group(2)))
            continue
        m = _THRESHOLD.match(name)
        if m is None:
            # a metric of the simulator's registry: its final value
            out[name] = fixed[name] if name in fixed else result.stats[name]
            continue
        kind, percent = m.group(1), float(m.group(2))
        t = (
            result.time_to_exploration(percent)
            if kind == "exploration"
            else result.time_to_coverage(percent)
        )
        out[name] = None if t is None else round(t, 6)
    return {k: _none_if_missing(v) for k, v in out.items()}
