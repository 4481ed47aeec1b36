"""The motion-model registry: the one home of each model's name, kernel code and capabilities.

A model is one :class:`MotionModel` entry here plus its branch in the compiled kernel
(:func:`maes_sim.core.kernels.physics._map_velocity`, which maps a velocity request onto what the
model can do; finite commands share one code path). The config's choices (``motion.model``,
``robot_types.<name>.motion.model``), the simulator's per-robot model codes, the docs' list,
the navigator's "may it drive sideways" and the controller's notes on what a model drops all
read this table: a model's capabilities are data here, never a comparison of names elsewhere.
Pure Python (no numba, no ROS), in ``maes_common`` so that the controller, which does not
depend on the simulator, reads it too.

Adding a model (worked example in ``docs/architecture.md``): an entry in :data:`MODELS`, a
branch for its code in ``_map_velocity``, a row in ``docs/config_reference.md``, and a test.

Examples
--------
>>> MODEL_NAMES
('maes', 'differential_drive', 'omnidirectional')
>>> MODELS["omnidirectional"].code, MODELS["omnidirectional"].lateral
(2, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "MODELS",
    "MODEL_NAMES",
    "TOP_ANGULAR_SPEED",
    "TOP_SPEED",
    "MotionModel",
    "model_code",
    "top_speeds",
]

#: Top linear speed per unit of ``relative_move_speed``, tiles/s (MAES). The one home of the
#: speed limits: the motion model, the robot types, the navigator and the Nav2 parameters read it.
TOP_SPEED = 3.0
#: Top angular speed per unit of ``relative_move_speed``, rad/s (see :mod:`maes_sim.core.motion`).
TOP_ANGULAR_SPEED = math.pi


def top_speeds(relative_move_speed: float) -> tuple[float, float]:
    """A robot's top linear (tiles/s) and angular (rad/s) speeds from its
    ``relative_move_speed``: the one place they are derived (the motion model, the robot
    types, the navigator and the Nav2 parameters all read them from here).

    Examples
    --------
    >>> v, w = top_speeds(0.5)
    >>> v, round(w, 4)
    (1.5, 1.5708)
    """
    return TOP_SPEED * relative_move_speed, TOP_ANGULAR_SPEED * relative_move_speed


@dataclass(frozen=True)
class MotionModel:
    """One motion model.

    Attributes
    ----------
    name : str
        Its config name.
    code : int
        The integer the compiled kernel branches on (its position in :data:`MODELS`).
    simultaneous : bool
        Drives and turns at once (False: MAES's rotate-xor-move rule).
    lateral : bool
        Takes a sideways velocity (``cmd_vel.linear.y``); the others drop it.
    summary : str
        One line for the docs.
    """

    name: str
    code: int
    simultaneous: bool
    lateral: bool
    summary: str


_ENTRIES = (
    MotionModel(
        "maes",
        0,
        simultaneous=False,
        lateral=False,
        summary="MAES 2.0: a robot rotates in place or moves straight, never both; a velocity "
        "command keeps the component with the larger share of its limit",
    ),
    MotionModel(
        "differential_drive",
        1,
        simultaneous=True,
        lateral=False,
        summary="linear and angular velocity at once (arcs, as a Nav2 controller drives)",
    ),
    MotionModel(
        "omnidirectional",
        2,
        simultaneous=True,
        lateral=True,
        summary="as differential_drive plus a sideways velocity (cmd_vel.linear.y); the planar "
        "speed is capped at the top speed, its direction kept",
    ),
)
#: Every model by name, in code order.
MODELS: dict[str, MotionModel] = {m.name: m for m in _ENTRIES}
MODEL_NAMES: tuple[str, ...] = tuple(MODELS)
assert [m.code for m in _ENTRIES] == list(range(len(_ENTRIES)))


def model_code(name: str) -> int:
    """The kernel code of model ``name`` (ValueError naming the models if unknown).

    Examples
    --------
    >>> model_code("differential_drive")
    1
    """
    try:
        return MODELS[name].code
    except KeyError:
        raise ValueError(
            f"unknown motion model {name!r}; known: {', '.join(MODEL_NAMES)}"
        ) from None
