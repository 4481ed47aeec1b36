"""The reactive robot API (issue 15): ``scan_ranges`` / ``scan_angles``, ``robot_velocity`` and
``set_velocity`` give the same run on the ROS stack and in direct mode.

The ROS side is the user's command, ``maes_run`` (real simulator, navigator and controller nodes
over DDS), as a subprocess; a logic that mixes velocity commands, navigation goals, cancels and
refused commands records what it read every tick, and both runs must agree to the bit: the
record, ``statistics.csv`` and the per-robot distances.
"""

from __future__ import annotations

import json
import math
import os
import textwrap

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

CONFIG = """\
number_of_robots: 2
random_seeds: [7]
map: {width_in_tiles: 20, height_in_tiles: 20}
end_criteria: {tick: 260}
results: {pictures: false}  # no result pictures: this test does not look at them
global_settings: {ticks_per_stats_snapshot: 5, should_write_csv_results: true}
world: {tile_size: 0.3}
"""

MIXED_LOGIC = """\
import hashlib
import os

import numpy as np


def logic(robot):
    ranges, angles, vel = robot.scan_ranges, robot.scan_angles, robot.robot_velocity
    digest = hashlib.sha256(ranges.tobytes() + angles.tobytes()).hexdigest()[:16]
    with open(os.environ["MAES_TEST_RECORD"] + f".{robot.robot_id}", "a") as out:
        out.write(f"{robot.tick} {digest} {vel[0]!r} {vel[1]!r} {robot.nav_status.value}\\n")
    t = robot.tick % 60
    if t < 20:  # reactive: turn away from what is close ahead, else drive
        ahead = ranges[np.abs(angles) < 0.6]
        if ahead.min() < 0.9:
            robot.set_velocity(0.0, 1.2)
        else:
            robot.set_velocity(0.5, 0.1 * (robot.robot_id - 0.5))
    elif t == 20:  # a goal ends the velocity command
        x, y = robot.robot_position
        robot.nav_to_pos(x + 1.0, y - 0.5)
    elif t == 30:  # a velocity command cancels the goal (stop now, drive next tick)
        robot.set_velocity(-0.2, 0.4)
        robot.set_velocity(0.3, -0.4)
    elif t == 35:
        robot.set_velocity("fast", 0.0)  # refused: nothing changes
        robot.set_velocity(float("nan"), 0.0)
    elif t == 40:
        robot.nav_to_pos(float("nan"), 0.0)  # refused goal: ends the command, one stop
    elif t == 45:
        x, y = robot.robot_position
        robot.nav_to_pos(x - 1.0, y)
        robot.set_velocity(0.2, 0.0)  # same tick: the goal is cancelled at once
    elif t == 50:
        robot.cancel_nav()  # no goal: the velocity command goes on
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory, run_maes):
    tmp = tmp_path_factory.mktemp("reactive")
    (tmp / "c.yaml").write_text(CONFIG)
    (tmp / "mixed_logic.py").write_text(textwrap.dedent(MIXED_LOGIC))
    ros = run_maes(tmp, "--logic", "mixed_logic:logic")

    from maes_bringup.runners.direct import run

    os.environ["MAES_TEST_RECORD"] = str(tmp / "direct_record")
    try:
        result = run(str(tmp / "c.yaml"), f"{tmp / 'mixed_logic.py'}:logic")
    finally:
        del os.environ["MAES_TEST_RECORD"]
    direct = result.write(tmp / "direct")
    return tmp, ros, direct


def test_ros_and_direct_mode_read_and_drive_the_same(runs):
    tmp, ros, direct = runs
    ros_summary = json.loads((ros / "summary.json").read_text())
    assert ros_summary["lockstep_deadline_misses"] == 0  # else the run was not lockstep
    for i in range(2):
        ros_lines = (tmp / f"ros_record.{i}").read_text().splitlines()
        direct_lines = (tmp / f"direct_record.{i}").read_text().splitlines()
        assert len(direct_lines) == 260
        assert ros_lines == direct_lines
    ros_csv = (ros / "statistics.csv").read_bytes()
    assert ros_csv.count(b"\n") > 40
    assert (direct / "statistics.csv").read_bytes() == ros_csv
    direct_summary = json.loads((direct / "summary.json").read_text())
    for key in ("ticks", "final", "distance_travelled_m", "collisions", "exploration_metrics"):
        assert ros_summary[key] == direct_summary[key], key


def test_the_velocity_commands_take_effect(runs):
    """The record shows the rules: driving under set_velocity, goals active and cancelled."""
    tmp, _, _ = runs
    rows = [line.split() for line in (tmp / "direct_record.0").read_text().splitlines()]
    by_tick = {int(r[0]): (float(r[2]), float(r[3]), r[4]) for r in rows}
    # the velocity command of tick t shows in the odometry of tick t + 1
    assert any(abs(lin) > 0.05 for t, (lin, _, _) in by_tick.items() if t % 60 < 20)
    assert by_tick[21][2] == "active"  # the goal of tick 20 runs
    assert by_tick[31][2] == "canceled"  # set_velocity at tick 30 cancelled it
    # ... and then drives (0.3 m/s, -0.4 rad/s: under MAES's rotate-xor-move model the larger
    # share of its limit wins, here the forward speed)
    assert by_tick[31][0] == 0.0 or by_tick[31][0] < by_tick[32][0]
    assert by_tick[32][0] > 0 and by_tick[33][0] > 0
    assert by_tick[46][2] == "canceled"  # the goal of tick 45 was cancelled in the same tick
    # scans are metres with +inf for no return; the angles span the circle
    assert all(len(r[1]) == 16 for r in rows)


def test_direct_robot_scan_and_velocity_units():
    """Direct mode: the scan is the simulator's lidar in metres (+inf beyond range), the
    angles are -pi + k 2pi/R, the velocity is in m/s."""
    from maes_bringup.runners.direct import run
    from maes_sim.core import config_from_dict

    cfg = config_from_dict(
        {
            "number_of_robots": 1,
            "map": {"width_in_tiles": 20, "height_in_tiles": 20},
            "world": {"tile_size": 0.5},
            "end_criteria": {"tick": 30},
        }
    )
    seen = {}

    def logic(robot):
        sim = robot._sim
        tiles = sim.lidar_ranges[0]
        hit = sim.lidar_hits[0]
        r = robot.scan_ranges
        seen["scan"] = (r.copy(), tiles.copy(), hit.copy(), robot.scan_angles.copy())
        seen.setdefault("vel", []).append((robot.robot_velocity, sim.velocities[0].copy()))
        robot.set_velocity(0.4, 0.0)

    run(cfg, logic)
    r, tiles, hit, angles = seen["scan"]
    assert r.dtype == np.float64 and r.shape == tiles.shape == angles.shape
    assert np.all(np.isinf(r[~hit]))
    np.testing.assert_allclose(r[hit], tiles[hit] * 0.5, rtol=1e-6)
    exact = -math.pi + np.arange(r.size) * 2 * math.pi / r.size
    np.testing.assert_allclose(angles, exact, rtol=0, atol=1e-6)  # float32 on the wire
    (lin, ang), raw = seen["vel"][-1]
    assert lin == raw[0] * 0.5 and ang == raw[1]
    assert lin > 0.1  # it drives forward under set_velocity
