"""A logic that raises is counted and shown, over real DDS (issue 22, item 5).

Each run is the user's command: ``maes_run`` as a subprocess (the embedded stack: simulator,
navigator and controller nodes on DDS), or ``maes_run --controllers none`` with one
``controller_node`` process per robot, whose counts reach the simulator in their lockstep reports
(``TickDone.logic_failures`` / ``logic_calls``). What is checked is what a user reads: the exit
code, the lines on stderr, the progress line, ``summary.json``.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from maes_bringup.runners.embedded import ALL_FAILED_TICKS, LOGIC_FAILED_EXIT  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
MAES_RUN = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
CONTROLLER_NODE = (
    REPO / "install" / "maes_controller" / "lib" / "maes_controller" / "controller_node"
)

CONFIG = """\
number_of_robots: 2
random_seeds: [3]
map: {width_in_tiles: 20, height_in_tiles: 20}
results: {pictures: false}  # no result pictures: this test does not look at them
end_criteria: {tick: 300}
"""

BROKEN = """\
def logic(robot):
    raise RuntimeError("my logic is broken")
"""

#: Robot 1 raises on every third tick; otherwise both run the shipped explorer.
SOMETIMES = """\
from maes_controller.algorithms.frontier_explorer import logic as explorer


def logic(robot):
    if robot.robot_id == 1 and robot.tick % 3 == 0:
        raise ValueError(f"tick {robot.tick} is a multiple of three")
    explorer(robot)
"""


def _setup(tmp_path: Path, name: str, text: str) -> tuple[Path, Path]:
    (tmp_path / f"{name}.py").write_text(text)
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG + f"global_settings: {{statistics_result_path: {tmp_path / 'r'}}}\n")
    return config, tmp_path / f"{name}.py"


def _summary(tmp_path: Path) -> dict:
    (folder,) = (tmp_path / "r").iterdir()
    return json.loads((folder / "summary.json").read_text())


def _maes_run(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(MAES_RUN), "--config", str(config), "--real-time-factor", "0", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_logic_failing_on_every_tick_stops_the_run_and_exits_non_zero(tmp_path):
    config, logic = _setup(tmp_path, "broken", BROKEN)
    run = _maes_run(config, "--logic", f"{logic}:logic")
    assert run.returncode == LOGIC_FAILED_EXIT, run.stderr[-3000:]
    assert "maes_run: the logic failed on every call:" in run.stderr, run.stderr[-3000:]
    assert "RuntimeError: my logic is broken" in run.stderr  # the traceback, logged once at least
    assert "logic failures" in run.stderr  # the progress line
    summary = _summary(tmp_path)
    assert ALL_FAILED_TICKS <= summary["ticks"] < 300, summary["ticks"]
    assert "--keep-going" in summary["stopped_because"], summary["stopped_because"]
    calls, failures = summary["logic_calls"], summary["logic_failures"]
    assert len(failures) == 2 and min(failures) >= ALL_FAILED_TICKS - 1
    assert failures == calls


def test_keep_going_runs_to_the_end_and_still_says_so(tmp_path):
    config, logic = _setup(tmp_path, "broken", BROKEN)
    run = _maes_run(config, "--logic", f"{logic}:logic", "--keep-going", "--max-ticks", "60")
    assert run.returncode == LOGIC_FAILED_EXIT, run.stderr[-3000:]
    assert "the logic failed on every call" in run.stderr
    summary = _summary(tmp_path)
    assert summary["ticks"] == 60 and summary["stopped_because"] == "stopped at --max-ticks 60"
    assert summary["logic_failures"] == summary["logic_calls"]
    assert min(summary["logic_failures"]) >= 58


@pytest.mark.slow
def test_failures_of_separate_controller_processes_reach_the_summary(tmp_path):
    """``--controllers none`` + two ``controller_node`` processes: counts travel in TickDone."""
    config, logic = _setup(tmp_path, "sometimes", SOMETIMES)
    sim = subprocess.Popen(
        [
            str(MAES_RUN),
            *("--config", str(config), "--controllers", "none", "--real-time-factor", "0"),
            *("--max-ticks", "90"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    controllers = [
        subprocess.Popen(
            [
                str(CONTROLLER_NODE),
                "--ros-args",
                "-p",
                f"robot_id:={i}",
                "-p",
                f"logic:={logic}:logic",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    try:
        _, err = sim.communicate(timeout=600)
    finally:
        logs = []
        for proc in controllers:
            proc.send_signal(signal.SIGINT)
            logs.append(proc.communicate(timeout=60)[0])
    assert sim.returncode == 0, err[-3000:]  # not every call failed: a normal end
    assert "ValueError: tick 0 is a multiple of three" in logs[1], logs[1][-3000:]
    assert "logic callback raised" not in logs[0]
    summary = _summary(tmp_path)
    assert summary["ticks"] == 90
    calls, failures = summary["logic_calls"], summary["logic_failures"]
    assert failures[0] == 0 and calls[0] >= 89
    # every third tick's call raised: a third of the calls, give or take the first and last
    assert calls[1] >= 89 and abs(failures[1] - calls[1] / 3) <= 1, (calls, failures)
    assert f"logic failures {failures[1]}" in err  # the final progress line
    assert "maes_run: logic failures:" in err and "robot1" in err
