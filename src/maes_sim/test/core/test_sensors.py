"""The sensor registry (``maes_sim.core.sensors``) and its worked example, the bumper: a robot
touching a wall has its bumper pressed, one touching only another robot is ``colliding`` with
the bumper released, in tiles and in metres, in ``robot_state`` and direct mode's states."""

from __future__ import annotations

import dataclasses

import numpy as np

from maes_sim.core import SimConfig, Simulation, state_to_metres
from maes_sim.core.sensors import SENSORS
from maes_sim.core.state import RobotState
from maes_sim.core.world import WorldMap


def _room() -> Simulation:
    walls = np.zeros((10, 10), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True  # open x, y in [-4, 4]
    return Simulation(SimConfig(number_of_robots=3), world=WorldMap(walls=walls, name="room"))


def test_every_registered_sensor_fills_a_robot_state_field():
    names = {f.name for f in dataclasses.fields(RobotState)}
    assert [s.name for s in SENSORS if s.name not in names] == []
    sim = _room()
    obs = sim.observation()
    for s in SENSORS:
        assert len(obs.sensors[s.name]) == sim.n_robots


def test_bumper_tells_a_wall_from_a_robot():
    sim = _room()
    r = sim.radius  # 0.3 tiles
    # robot 0 touches the left wall (x = -4); robots 1 and 2 touch each other in the open
    sim.place_robots([[-3.5, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0 + 2 * r + 1e-3, 1.0, 0.0]])
    assert [s.bumper for s in sim.robot_states()] == [False, False, False]
    # robot 0 drives into the wall, robot 1 into robot 2
    sim.set_velocities(np.array([-1.0, 1.0, 0.0]), np.zeros(3))
    for _ in range(60):
        sim.step()
        if sim.colliding[0]:
            break
    states = sim.robot_states()
    assert [s.bumper for s in states] == [True, False, False]
    assert sim.colliding.tolist() == [True, True, True]
    # away from the wall the bumper is released
    sim.set_velocities(np.array([1.0, 0.0, 0.0]), np.zeros(3))
    for _ in range(20):
        sim.step()
    assert sim.robot_state(0).bumper is False and not sim.colliding[0]
    # metres: not a length, kept as is; direct mode's conversion carries the field
    metres = sim.observation(0.5)
    assert metres.states() == [state_to_metres(s, 0.5) for s in sim.robot_states()]
    assert [s.bumper for s in metres.states()] == [False, False, False]
