"""``set_velocity`` under the motion model: what the model drops is said once per robot and run.

The rule the note states is checked against the simulator's own (``map_velocity``, the code that
moves the robots); the line itself in direct mode (Python logging) and on ROS (``maes_run``'s
controller nodes over DDS, a subprocess), for a logic that asks for ``(0.4, -0.6)`` every tick.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

from maes_bringup.runners.direct import run
from maes_controller.velocity import motion_model_note
from maes_sim.core import config_from_dict
from maes_sim.core.motion import MotionParams, map_velocity

NOTE = "maes motion model: rotate or move, never both; forward speed 0.4 m/s dropped while turning"

LOGIC = """\
def logic(robot):
    robot.set_velocity(0.4, -0.6)
"""


def _config(model: str = "maes"):
    return config_from_dict(
        {
            "number_of_robots": 2,
            "random_seeds": [2],
            "map": {"width_in_tiles": 20, "height_in_tiles": 20},
            "end_criteria": {"tick": 30},
            "motion": {"model": model},
        }
    )


def test_the_note_states_the_simulators_rule():
    params = MotionParams(max_speed=3.0, max_angular_speed=np.pi)
    rng = np.random.default_rng(0)
    linear = np.concatenate([rng.uniform(-5, 5, 400), [3.0, 1.5, 0.4, 9.0]])
    angular = np.concatenate([rng.uniform(-5, 5, 400), [np.pi, np.pi / 2, -0.6, -9.0]])
    kept_lin, kept_ang = map_velocity(linear, angular, params)
    for v, w, kv, kw in zip(linear, angular, kept_lin, kept_ang, strict=True):
        note = motion_model_note(float(v), float(w), "maes", 3.0, np.pi)
        if kv == 0.0:
            assert note is not None and "forward speed" in note and "dropped while turn" in note
        else:
            assert kw == 0.0 and note is not None and "turn rate" in note, (v, w, note)
        assert motion_model_note(float(v), float(w), "differential_drive", 3.0, np.pi) is None


def test_direct_mode_says_it_once_per_robot(tmp_path, caplog):
    (tmp_path / "spin.py").write_text(LOGIC)
    with caplog.at_level(logging.INFO, logger="maes.direct"):
        run(_config(), f"{tmp_path / 'spin.py'}:logic")
    notes = [r for r in caplog.records if NOTE in r.getMessage()]
    assert sorted(r.name for r in notes) == ["maes.direct.robot0", "maes.direct.robot1"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="maes.direct"):
        run(_config("differential_drive"), f"{tmp_path / 'spin.py'}:logic")
    assert not [r for r in caplog.records if "motion model" in r.getMessage()]


def test_ros_says_it_once_per_robot(tmp_path):
    pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")
    (tmp_path / "spin.py").write_text(LOGIC)
    (tmp_path / "c.yaml").write_text(
        "number_of_robots: 2\nrandom_seeds: [2]\nmap: {width_in_tiles: 20, height_in_tiles: 20}\n"
        f"end_criteria: {{tick: 30}}\nglobal_settings: {{statistics_result_path: {tmp_path}/r}}\n"
        "results: {pictures: false}\n"  # not looked at here
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "maes_bringup.runners.embedded",
            *("--config", str(tmp_path / "c.yaml"), "--real-time-factor", "0"),
            *("--logic", f"{tmp_path / 'spin.py'}:logic"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # once per robot, from that robot's controller (in maes_run's process: its rclpy logger)
    for robot in ("robot0", "robot1"):
        assert done.stderr.count(f"[{robot}.maes_controller]: {robot}: {NOTE}") == 1, done.stderr[
            -3000:
        ]


@pytest.mark.launch_stack
def test_direct_mode_logs_reach_the_root_once_launch_was_imported(caplog):
    """Importing ROS 2's launch package makes every logger created afterwards a LaunchLogger
    that does not propagate; direct mode's robot loggers still reach the root's handlers (the
    cause of a flaky failure above: in a pytest worker that had imported launch, the record
    went to logging's last resort instead of caplog)."""
    pytest.importorskip("launch.logging")
    from maes_bringup.runners.direct_robot import propagating_logger

    name = "maes.direct_test_after_launch.robot0"
    caplog.set_level(logging.INFO, logger="maes.direct_test_after_launch")
    assert not logging.getLogger("maes.direct_test_after_launch").propagate  # launch's class
    propagating_logger(name).warning("heard")
    assert [r.name for r in caplog.records if r.getMessage() == "heard"] == [name]
