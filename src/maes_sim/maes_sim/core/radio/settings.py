"""The radio settings: the keys of ``communication`` (and ``robot_types.<t>.communication``).

The one home of the keys, their checks and defaults; the config schema and the robot types
build their sections from :data:`RADIO_CHECKS` and :data:`RADIO_DEFAULTS`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from maes_sim.core.config_checks import Choice, Float, Int, Nullable

#: Broadcasts one robot may post per logic tick; later ones in the same tick are refused
#: (a command error). ``max_messages_per_tick`` is a budget below it: over-budget sends are
#: accepted and dropped.
MAX_BROADCASTS_PER_TICK = 20
#: Longest accepted latency, ticks (a message waits in memory until it arrives).
MAX_LATENCY_TICKS = 10_000


@dataclass(frozen=True)
class RadioSettings:
    """One robot type's resolved radio settings (every key of ``communication``).

    Attributes
    ----------
    model : str
        A registered radio model (:data:`maes_sim.core.radio.RADIO_MODELS`).
    loss_probability : float
        ``bernoulli``: the loss probability of each delivery; ``distance``: the loss at
        distance 0.
    latency_ticks : int
        A broadcast sent during tick ``t`` arrives with the state of tick ``t + 1 + k``
        (0: MAES 2.0's next tick).
    max_messages_per_tick : int or None
        Per-robot send budget; a robot's later sends in the same tick are dropped and counted.
    good_to_bad_probability, bad_to_good_probability : float
        ``gilbert_elliott``: a link's state transitions per transmission.
    loss_probability_good, loss_probability_bad : float
        ``gilbert_elliott``: the loss probability in each state.
    distance_exponent : float
        ``distance``: the exponent of the loss curve.
    """

    model: str = "range"
    loss_probability: float = 0.0
    latency_ticks: int = 0
    max_messages_per_tick: int | None = None
    good_to_bad_probability: float = 0.0
    bad_to_good_probability: float = 1.0
    loss_probability_good: float = 0.0
    loss_probability_bad: float = 1.0
    distance_exponent: float = 2.0


#: Defaults of every key (MAES 2.0's radio: the range rule, no loss, no latency, no budget).
RADIO_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(RadioSettings)}


def radio_checks(model_names: tuple[str, ...]) -> dict[str, Any]:
    """The check of every key (``model`` among ``model_names``)."""
    probability = Float(lo=0.0, hi=1.0)
    return {
        "model": Choice(*model_names),
        "loss_probability": probability,
        "latency_ticks": Int(lo=0, hi=MAX_LATENCY_TICKS),
        "max_messages_per_tick": Nullable(Int(lo=0, hi=MAX_BROADCASTS_PER_TICK)),
        "good_to_bad_probability": probability,
        "bad_to_good_probability": probability,
        "loss_probability_good": probability,
        "loss_probability_bad": probability,
        "distance_exponent": Float(lo=0.0, hi=100.0, lo_open=True),
    }


def resolve_radio(base: Any, override: Any = None) -> RadioSettings:
    """The :class:`RadioSettings` of section ``base`` (the global ``communication``, or None
    for the defaults) with the keys ``override`` sets (a type's section; None = inherit)."""
    values = dict(RADIO_DEFAULTS)
    for source in (base, override):
        if source is None:
            continue
        for name in RADIO_DEFAULTS:
            value = getattr(source, name, None)
            # the global section states every key (null budget: none); a type's None inherits
            if value is not None or source is base:
                values[name] = value
    return RadioSettings(**values)
