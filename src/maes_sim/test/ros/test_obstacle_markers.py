"""Moving obstacles in the RViz markers: where the config put them, in metres, at their sizes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from maes_sim.core import Simulation, WorldMap, config_from_dict  # noqa: E402
from maes_sim.ros.conversions import time_to_msg  # noqa: E402
from maes_sim.ros.markers import NS_OBSTACLES, simulation_markers  # noqa: E402


def test_obstacles_are_drawn_beside_the_robots_where_the_config_put_them():
    walls = np.zeros((20, 20), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    config = config_from_dict(
        {
            "number_of_robots": 2,
            "world": {"tile_size": 0.5},
            "obstacles": [
                {"shape": "disc", "radius": 0.4, "path": [[2.0, -1.0], [2.0, 3.0]], "speed": 0.5},
                {"shape": "box", "size": [1.0, 0.6], "path": [[-2.0, 1.5]], "speed": 0.0},
            ],
        }
    )
    sim = Simulation(config, world=WorldMap(walls=walls, name="room"))
    for _ in range(20):  # 2 s at 0.5 m/s: the disc is 1 m along its path
        sim.step()
    poses = sim.poses
    poses[:, :2] *= 0.5
    out = simulation_markers(
        poses,
        sim.team.radii * 0.5,
        sim.colliding,
        np.empty((0, 2)),
        None,
        time_to_msg(sim.sim_time),
        obstacles_m=sim.obstacles.in_metres(0.5),
    )
    drawn = [m for m in out.markers if m.ns == NS_OBSTACLES]
    assert [m.id for m in drawn] == [0, 1]
    disc, box = drawn
    assert disc.type == disc.CYLINDER and box.type == box.CUBE
    assert (disc.pose.position.x, disc.pose.position.y) == pytest.approx((2.0, 0.0))
    assert (disc.scale.x, disc.scale.y) == pytest.approx((0.8, 0.8))
    assert (box.pose.position.x, box.pose.position.y) == pytest.approx((-2.0, 1.5))
    assert (box.scale.x, box.scale.y) == pytest.approx((1.0, 0.6))
    assert any(m.ns == "robots" for m in out.markers)  # beside the robots
