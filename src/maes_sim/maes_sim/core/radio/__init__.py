"""Radio models: which broadcasts and SLAM map exchanges arrive, and when.

The ``communication`` section (global, overridable per robot type in
``robot_types.<t>.communication``) names a model of :data:`RADIO_MODELS` (one module each:
``range`` MAES 2.0's rule and the default, ``bernoulli``, ``gilbert_elliott``, ``distance``),
a latency and a per-robot send budget (:mod:`.channel`). A new model is a module here that
registers a :class:`RadioModel` subclass with :func:`radio_model` and is imported below.
"""

from . import bernoulli, distance, gilbert_elliott, range  # noqa: F401  (registers the models)
from .channel import Radio
from .registry import RADIO_MODELS, RadioModel, radio_model
from .settings import (
    MAX_BROADCASTS_PER_TICK,
    MAX_LATENCY_TICKS,
    RADIO_DEFAULTS,
    RadioSettings,
    radio_checks,
    resolve_radio,
)

#: The registered model names (the choices of ``communication.model``).
RADIO_MODEL_NAMES = tuple(RADIO_MODELS)

__all__ = [
    "MAX_BROADCASTS_PER_TICK",
    "MAX_LATENCY_TICKS",
    "RADIO_DEFAULTS",
    "RADIO_MODELS",
    "RADIO_MODEL_NAMES",
    "Radio",
    "RadioModel",
    "RadioSettings",
    "radio_checks",
    "radio_model",
    "resolve_radio",
]
