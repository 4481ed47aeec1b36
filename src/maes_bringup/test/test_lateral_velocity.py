"""Sideways velocity from the logic API in direct mode: ``robot.set_velocity(linear, angular,
lateral=...)`` moves an omnidirectional robot to its left or right, and is dropped (with a note)
for a differential-drive robot. (The same command over ROS, ``cmd_vel.linear.y``, is checked
against direct mode in ``test_robot_types_runs.py``.)"""

from __future__ import annotations

import math
import os

import numpy as np

CONFIG = """\
random_seeds: [2]
map: {width_in_tiles: 24, height_in_tiles: 24}
end_criteria: {tick: 40}
world: {tile_size: 0.5}
robot_constraints: {slam_position_inaccuracy: 0.0}
robot_types:
  omni: {motion: {model: omnidirectional}}
  diff: {motion: {model: differential_drive}}
team:
  - {type: omni, count: 1}
  - {type: diff, count: 1}
"""

LOGIC = """\
import os


def logic(robot):
    x, y = robot.robot_position
    with open(os.environ["MAES_TEST_RECORD"] + f".{robot.robot_id}", "a") as out:
        out.write(f"{robot.tick} {x!r} {y!r} {robot.robot_heading!r}\\n")
    robot.set_velocity(0.0, 0.0, lateral=0.4)
"""


def _track(tmp, i):
    rows = [line.split() for line in (tmp / f"record.{i}").read_text().splitlines()]
    return np.array([[float(v) for v in row[1:]] for row in rows])


def test_an_omnidirectional_robot_strafes_a_differential_one_does_not(tmp_path, caplog):
    from maes_bringup.runners.direct import run

    (tmp_path / "c.yaml").write_text(CONFIG)
    (tmp_path / "logic.py").write_text(LOGIC)
    os.environ["MAES_TEST_RECORD"] = str(tmp_path / "record")
    try:
        run(str(tmp_path / "c.yaml"), f"{tmp_path / 'logic.py'}:logic")
    finally:
        del os.environ["MAES_TEST_RECORD"]
    omni, diff = _track(tmp_path, 0), _track(tmp_path, 1)
    # the omni robot moved to its left (perpendicular to its unchanged heading)
    heading = omni[0, 2]
    assert np.allclose(omni[:, 2], heading)
    step = omni[-1, :2] - omni[0, :2]
    left = np.array([-math.sin(heading), math.cos(heading)])
    assert step @ left > 1.0  # metres, 40 ticks at up to 0.4 m/s
    assert abs(step @ np.array([math.cos(heading), math.sin(heading)])) < 0.05 * (step @ left)
    # the differential-drive robot ignores the sideways part
    assert np.allclose(diff[-1], diff[0])
