"""A reactive baseline: MAES 2.0's random ballistic walk, driven by the lidar scan.

MAES 2.0's Unity example algorithm (``RandomExplorationAlgorithm``, what a
``SimulationScenario`` runs unless told otherwise, and what its ``ExampleProgram`` gets): move
straight ahead until the robot stops at a wall, then turn in place by a random 50-179 degrees,
then move again. Here the robot uses the reactive API
(``scan_ranges``/``scan_angles``, ``set_velocity``, ``robot_heading``) instead of MAES's
move/rotate commands:

* **moving**: ``set_velocity(SPEED, 0)`` while no scan ray within +-:data:`FRONT_HALF_ANGLE` of
  straight ahead is closer than :data:`STOP_DISTANCE` (and the robot is not colliding);
* **turning**: ``set_velocity(0, +-TURN_RATE)`` until the heading has turned by the drawn angle.

The turn direction is drawn too (MAES's ``Random.Next(0, 1)`` is always 0, so its robots always
turned clockwise; we take that for a bug). Random numbers come from a generator seeded with the
robot id and its first position, so a run is reproducible on both stacks and differs between
maps and seeds. No navigation, no costmap, no communication.
"""

from __future__ import annotations

import math

import numpy as np

#: Forward speed (m/s; the motion model caps it at the robot's top speed).
SPEED = 1.0
#: Turn rate (rad/s).
TURN_RATE = 1.5
#: An obstacle closer than this (m) in the front sector ends a straight run.
STOP_DISTANCE = 0.6
#: Half-width (rad) of the front sector watched while moving.
FRONT_HALF_ANGLE = math.radians(35.0)
#: The turn between two runs: uniform in [MIN_TURN, MAX_TURN) degrees, as MAES.
MIN_TURN, MAX_TURN = 50, 180


def front_clearance(ranges: np.ndarray, angles: np.ndarray, half_angle: float) -> float:
    """The shortest range (m) within ``half_angle`` of straight ahead (+inf if none).

    Examples
    --------
    >>> front_clearance(np.array([0.2, 3.0, np.inf]), np.array([-2.0, 0.1, 0.0]), 0.5)
    3.0
    """
    ahead = np.asarray(ranges)[np.abs(np.asarray(angles)) <= half_angle]
    return float(ahead.min()) if ahead.size else math.inf


def _angle_diff(a: float, b: float) -> float:
    return (a - b + math.pi) % (2.0 * math.pi) - math.pi


def logic(robot) -> None:
    """Random ballistic walk (see the module docstring)."""
    ranges, heading = robot.scan_ranges, robot.robot_heading
    if ranges is None or heading is None or robot.robot_position is None:
        return
    memory = robot.memory
    if "rng" not in memory:
        x, y = robot.robot_position
        seed = [
            robot.robot_id,
            int(round(x * 1000)) & 0xFFFFFFFF,
            int(round(y * 1000)) & 0xFFFFFFFF,
        ]
        memory["rng"] = np.random.default_rng(seed)
        memory["turn"] = None  # (target heading, direction) while turning
    rng = memory["rng"]
    turn = memory["turn"]
    if turn is None:
        blocked = front_clearance(ranges, robot.scan_angles, FRONT_HALF_ANGLE) < STOP_DISTANCE
        if not blocked and not robot.state.colliding:
            robot.set_velocity(SPEED, 0.0)
            return
        direction = 1.0 if rng.random() < 0.5 else -1.0
        degrees = int(rng.integers(MIN_TURN, MAX_TURN))
        turn = memory["turn"] = (heading + direction * math.radians(degrees), direction)
    target, direction = turn
    remaining = _angle_diff(target, heading) * direction
    if remaining <= 0.05:
        memory["turn"] = None
        robot.set_velocity(SPEED, 0.0)
    else:
        robot.set_velocity(0.0, direction * min(TURN_RATE, max(remaining / 0.1, 0.2)))
