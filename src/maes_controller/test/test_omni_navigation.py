"""The built-in navigator strafes an omnidirectional robot (``NavParams.omnidirectional``, set
from the robot's type): it drives at the goal at once, sideways at first, turning on the way,
where a differential-drive robot first turns in place. Driven on the simulator's own motion
model (odometry = the true pose here); the differential robot never gets a sideways command."""

from __future__ import annotations

import math

import numpy as np

from maes_controller.navigation import GridMap, Navigator, NavParams, NavSession
from maes_controller.robot_api import NavStatus
from maes_sim.core import Simulation, config_from_dict
from maes_sim.core.world import WorldMap

TILE = 0.5


def _sim(model: str) -> Simulation:
    walls = np.zeros((20, 20), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    cfg = config_from_dict(
        {
            "number_of_robots": 1,
            "world": {"tile_size": TILE},
            "robot_constraints": {"slam_position_inaccuracy": 0.0},
            "robot_types": {"default": {"motion": {"model": model}}},
        }
    )
    sim = Simulation(cfg, world=WorldMap(walls=walls, name="room"))
    sim.place_robots(np.array([[0.0, 0.0, 0.0]]))
    return sim


def _navigate(model: str, goal=(0.0, 2.0), ticks=200):
    sim = _sim(model)
    params = NavParams.from_config(sim.config, robot=0)
    assert params.omnidirectional is (model == "omnidirectional")
    grid = GridMap.from_array(
        np.where(sim.walls, 100, 0).astype(np.int8),
        TILE,
        origin_x=-10 * TILE,
        origin_y=-10 * TILE,
    )
    s = NavSession(Navigator(params))
    s.submit("g", goal, now=sim.sim_time)
    track, commands = [], []
    while s.token is not None and ticks > 0:
        x, y, yaw = (float(v) for v in sim.poses[0])
        pose = (x * TILE, y * TILE, yaw)
        track.append(pose)
        ev = s.step(pose, grid, sim.sim_time, odom_pose=pose)
        commands.append(ev.command)
        lin, ang, lat = ev.command
        sim.set_velocity(0, lin / TILE, ang, lat / TILE)
        sim.step()
        ticks -= 1
    return s.last_step, np.array(track), np.array(commands)


def test_an_omnidirectional_robot_strafes_to_a_goal_on_its_left():
    step, track, commands = _navigate("omnidirectional")
    assert step.status is NavStatus.SUCCEEDED
    end = track[-1]
    assert math.hypot(end[0] - 0.0, end[1] - 2.0) < 0.3
    # sideways from the first command: to the left, nothing forward
    assert commands[0][2] > 0 and abs(commands[0][0]) < 1e-9
    # it moved towards the goal while its heading was still far from facing it
    moving = np.flatnonzero(np.hypot(*(track[:, :2] - track[0, :2]).T) > 0.2)[0]
    assert abs(track[moving, 2]) < math.pi / 4


def test_a_differential_robot_turns_first_and_never_strafes():
    step, track, commands = _navigate("differential_drive")
    assert step.status is NavStatus.SUCCEEDED
    assert (commands[:, 2] == 0).all()
    moving = np.flatnonzero(np.hypot(*(track[:, :2] - track[0, :2]).T) > 0.2)[0]
    assert abs(track[moving, 2] - math.pi / 2) < 0.5  # faced the goal before it drove
