"""Sensors: one module each, and the registry of the sensors that fill a robot state field.

Every sensor has one home here:

- :mod:`.lidar`: the scan's noise (Gaussian range error, dropouts), drawn every tick from the
  simulation's generator; the rays are cast by the kernel
  :func:`~maes_sim.core.kernels.cast_rays`, once per lidar group of
  :class:`~maes_sim.core.team.Team`.
- :mod:`.nearby_robots`: the robots each robot senses (``State.nearby_robots``).
- :mod:`.bumper`: whether a robot touches a wall (``RobotState.bumper``), the worked example of
  ``docs/architecture.md`` ("How to add a sensor").
- tags (``State.tags_nearby``) live in :mod:`maes_sim.core.tags` (the store they are read from).

A *state sensor* is an entry of :data:`SENSORS`: its ``read(sim)`` returns one value per robot
(an array, robot axis first, in tiles) and the observation pass
(:class:`~maes_sim.core.observation.Observation`) puts robot ``i``'s value in the
:class:`~maes_sim.core.state.RobotState` field of the sensor's name, scaled to metres when the
sensor measures lengths (``length=True``). ``read`` must be a pure function of the simulation's
state: it runs when an observation is first asked for, so it must not draw from ``sim.rng``
(a noisy sensor draws its noise every tick in ``Simulation._observe``, as the lidar does).

Adding a sensor: its module here, its entry in :data:`SENSORS`, its field in ``RobotState``
(``core/state.py``), and a test.

Examples
--------
>>> from maes_sim.core import Simulation, config_from_dict
>>> [s.name for s in SENSORS]
['bumper']
>>> sim = Simulation(config_from_dict({"number_of_robots": 2}))
>>> sim.observation().sensors["bumper"].shape
(2,)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import bumper

__all__ = ["SENSORS", "Sensor", "sensor_value"]


@dataclass(frozen=True)
class Sensor:
    """A sensor that fills one field of every robot's state.

    Attributes
    ----------
    name : str
        The :class:`~maes_sim.core.state.RobotState` field it fills.
    read : callable
        ``read(sim) -> ndarray``: every robot's value, robot axis first, lengths in tiles.
    length : bool
        Whether the values are lengths or positions (multiplied by ``tile_size`` in metres).
    """

    name: str
    read: Callable[[Any], np.ndarray]
    length: bool = False


#: The state sensors, in the order their fields are filled.
SENSORS: tuple[Sensor, ...] = (Sensor("bumper", bumper.read),)


def sensor_value(row: Any) -> Any:
    """One robot's value as a state field holds it: a Python scalar, or a ``Vector2D`` for a
    position (a row of two numbers).

    Examples
    --------
    >>> sensor_value(np.bool_(True)), sensor_value(np.array([1.0, 2.0]))
    (True, Vector2D(x=1.0, y=2.0))
    """
    from ..state import Vector2D

    if isinstance(row, np.ndarray) and row.shape == (2,):
        return Vector2D(float(row[0]), float(row[1]))
    return row.item() if isinstance(row, np.generic | np.ndarray) else row
