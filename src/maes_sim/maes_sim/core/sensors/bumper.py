"""Bumper: whether each robot touches a wall (``RobotState.bumper``).

``colliding`` says a robot touches a wall *or another robot*; the bumper tells the two apart. A
robot's bumper is pressed when its disc is within the physics' contact gap
(:data:`~maes_sim.core.kernels.physics.TOUCH_TOL`) of a wall tile, the same gap that makes it
``colliding``. The worked example of ``docs/architecture.md`` ("How to add a sensor").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..collision import wall_penetration
from ..kernels.physics import TOUCH_TOL


def pressed(walls: np.ndarray, positions: np.ndarray, radii: np.ndarray | float) -> np.ndarray:
    """Whether each disc (grid coordinates, radius in tiles) touches a wall, shape (N,).

    Examples
    --------
    >>> walls = np.zeros((3, 3), dtype=bool); walls[1, 2] = True
    >>> pressed(walls, np.array([[1.5, 1.5], [1.7, 1.5]]), 0.3).tolist()
    [False, True]
    """
    return wall_penetration(walls, positions, np.asarray(radii, dtype=np.float64) + TOUCH_TOL) > 0.0


def read(sim: Any) -> np.ndarray:
    """Every robot's bumper at the simulation's current tick."""
    return pressed(sim.walls, sim.grid_positions, sim.team.radii)
