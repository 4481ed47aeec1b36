"""MAES 2.0's own ROS controller, and one written as its README shows, run against ``maes_run``.

Each controller is a separate process talking to the real embedded stack (``maes_run
--controllers none``, the ``make run CONTROLLERS=none`` workflow) over DDS. MAES 2.0's controller
is upstream's file (``fixtures/maes2``, GPL-3.0, see its README) with only ``maes_msgs`` renamed
to ``maes_interfaces``, the one change the README promises; it runs as MAES's ``setup.py``
entry point runs it (import the module, call ``main()``).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

REPO = Path(__file__).resolve().parents[3]
MAES_RUN = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
ORIGINAL = FIXTURES / "maes2" / "maes_robot_controller" / "maes_robot_controller.py"


def renamed_copy(dest: Path) -> Path:
    """Upstream's controller package with ``maes_msgs`` renamed, in ``dest``; its folder."""
    source = ORIGINAL.read_text()
    renamed = re.sub(r"\bmaes_msgs\b", "maes_interfaces", source)
    changed = [
        (a, b) for a, b in zip(source.splitlines(), renamed.splitlines(), strict=True) if a != b
    ]
    # The rename touches exactly the two import lines of the message package, nothing else.
    assert [b for _, b in changed] == [
        "from maes_interfaces.msg import State",
        "from maes_interfaces.srv import BroadcastToAll, DepositTag",
    ], changed
    package = dest / "maes_robot_controller"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "maes_robot_controller.py").write_text(renamed)
    return dest


def write_config(path: Path, results: Path, *, robots: int, ticks: int) -> Path:
    path.write_text(
        f"number_of_robots: {robots}\n"
        "random_seeds: [4]\n"
        "global_settings:\n"
        f"  statistics_result_path: {results}\n"
        "  should_write_csv_results: true\n"
        "robot_spawn_config:\n  spawn_together: {}\n"
        "end_criteria:\n"
        "  exploration_percent: null\n"
        f"  tick: {ticks}\n"
        "map:\n  width_in_tiles: 20\n  height_in_tiles: 20\n"
        "  building_config: {}\n"
        "results:\n  pictures: false\n"  # the result pictures are not looked at here
    )
    return path


def ros_process(argv: list[str], namespace: str, pythonpath: Path, log: Path) -> subprocess.Popen:
    """Start ``python argv`` in ``namespace``; its stderr (ROS's log lines) goes to ``log``."""
    env = os.environ.copy()
    env["PYTHONPATH"] = f"{pythonpath}{os.pathsep}{env.get('PYTHONPATH', '')}"
    # As MAES 2.0's maes_ros2_multi_robot_launch.py starts its controller: the namespace and a
    # robot_id parameter, no use_sim_time.
    args = ["--ros-args", "-r", f"__ns:=/{namespace}", "-p", f"robot_id:={namespace}"]
    return subprocess.Popen(
        [sys.executable, *argv, *args],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        env=env,
    )


def run_stack(
    cfg: Path, controllers: list[subprocess.Popen], logs: list[Path], timeout: float = 240.0
) -> tuple[str, list[str]]:
    """Run ``maes_run --controllers none`` to its end, then stop the controllers.

    Returns maes_run's stderr and each controller's log up to the run's end (before the
    controllers are interrupted, which rclpy reports with a traceback of its own).
    """
    assert MAES_RUN.exists(), f"workspace not built: {MAES_RUN} missing (make build)"
    sim = subprocess.Popen(
        [str(MAES_RUN), "--config", str(cfg), "--controllers", "none"]
        + ["--real-time-factor", "2", "--start-timeout", "120"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _, err = sim.communicate(timeout=timeout)
        texts = [log.read_text() for log in logs]
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.communicate()
        for proc in controllers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in controllers:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert sim.returncode == 0, err
    return err, texts


def results_of(results: Path) -> tuple[dict, list[dict]]:
    (run,) = results.iterdir()
    with open(run / "statistics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return json.loads((run / "summary.json").read_text()), rows


@pytest.mark.slow
def test_maes2_own_controller_runs_with_only_the_rename_and_explores(tmp_path):
    path = renamed_copy(tmp_path / "pkg")
    results = tmp_path / "results"
    cfg = write_config(tmp_path / "run.yaml", results, robots=1, ticks=600)
    main = "from maes_robot_controller.maes_robot_controller import main; main()"
    log = tmp_path / "robot0.log"
    controller = ros_process(["-c", main], "robot0", path, log)
    err, (controller_err,) = run_stack(cfg, [controller], [log])
    # It imported everything (nav2_msgs' NavigateThroughPoses, nav2_msgs.msg, ...), waited for
    # the simulation and sent goals; the stack never refused one.
    assert "Traceback" not in controller_err, controller_err
    assert "Navigating to goal" in controller_err, controller_err
    assert "rejected" not in controller_err
    summary, rows = results_of(results)
    assert summary["controllers"] == "none" and summary["ticks"] == 600, err
    first, last = rows[0], rows[-1]
    # The robot drove and explored: frontier after frontier, one tag deposited per new goal.
    assert summary["distance_travelled_m"][0] > 5.0, summary
    assert float(last["exploration_percent"]) > float(first["exploration_percent"]) + 20.0
    assert int(last["tags_deposited"]) >= 3, last


@pytest.mark.slow
def test_a_controller_written_as_maes_readme_shows_sees_maes_values(tmp_path):
    path = renamed_copy(tmp_path / "pkg")  # not imported here; keeps PYTHONPATH alike
    results = tmp_path / "results"
    # 1000 ticks (50 s at RTF 2): this controller is no lockstep participant, so on a loaded
    # machine its goal reaches the navigator many ticks late; it waits for the goal's result up
    # to 800 ticks after its start (MAX_TICKS), and the run must outlast that
    cfg = write_config(tmp_path / "run.yaml", results, robots=2, ticks=1000)
    script = FIXTURES / "readme_style_controller.py"
    outs = [tmp_path / f"robot{i}.json" for i in range(2)]
    logs = [tmp_path / f"robot{i}.log" for i in range(2)]
    procs = [ros_process([str(script), str(outs[i])], f"robot{i}", path, logs[i]) for i in range(2)]
    _, texts = run_stack(cfg, procs, logs)
    statuses = []
    for i, (out, text) in enumerate(zip(outs, texts, strict=True)):
        assert out.exists(), text
        seen = json.loads(out.read_text())
        other = 1 - i
        # MAES 2.0's values (its Ros2Algorithm.cs): RobotStatus names, NearbyRobot.id the
        # robot's number, Broadcast.sender its namespace.
        assert set(seen["statuses"]) <= {"Idle", "Moving", "Stopping"}, seen["statuses"]
        assert {"Idle", "Moving"} <= set(seen["statuses"]), seen["statuses"]
        assert seen["nearby_ids"] == [str(other)], seen
        assert seen["senders"] == [f"robot{other}"], seen
        assert any(m.startswith(f"/robot{other} ") for m in seen["tag_msgs"]), seen
        # Jazzy's nav2_msgs, in the pip environment too.
        assert seen["nav2"]["through_poses_goal_fields"] == ["behavior_tree", "poses"]
        assert "error_code" in seen["nav2"]["to_pose_result_fields"]
        assert seen["nav2"]["speed_limit"] == 50.0
        # It sent a goal on navigate_to_pose and drove towards it. Both robots start side by
        # side facing the same way and drive 1.5 m ahead, so the rear robot's goal is where the
        # front one parks: the navigator yields to robots and aborts a goal it cannot reach
        # without a collision, so only the front robot must succeed (below).
        assert seen["goal_accepted"] and seen["goal_status"] in (4, 6), seen  # SUCCEEDED/ABORTED
        assert math.dist(seen["start"], seen["end"]) > 0.5, seen
        statuses.append(seen["goal_status"])
    assert 4 in statuses, statuses
