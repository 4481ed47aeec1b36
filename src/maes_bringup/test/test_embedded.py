"""The embedded stack behind `make run`: one process, real rclpy, results on end and on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from maes_bringup.runners.embedded import Progress, main  # noqa: E402
from maes_sim.core import SimConfig, Simulation  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


def write_config(path: Path, results: Path, *, ticks: int | None, robots: int = 2) -> Path:
    end = f"  tick: {ticks}\n" if ticks is not None else "  tick: null\n"
    path.write_text(
        f"number_of_robots: {robots}\n"
        "random_seeds: [3]\n"
        "global_settings:\n"
        f"  statistics_result_path: {results}\n"
        "  should_write_csv_results: true\n"
        "end_criteria:\n"
        "  exploration_percent: null\n"
        f"{end}"
        "map:\n  width_in_tiles: 20\n  height_in_tiles: 20\n"
        "  building_config: {}\n"
    )
    return path


def test_a_short_run_writes_every_result_file(tmp_path, capsys):
    cfg = write_config(tmp_path / "run.yaml", tmp_path / "results", ticks=40)
    code = main(["--config", str(cfg), "--real-time-factor", "0"])
    assert code == 0
    err = capsys.readouterr().err
    assert "2 robots" in err and "results in" in err
    assert "tick" in err and "explored" in err  # the progress line
    (run,) = (tmp_path / "results").iterdir()
    names = {p.name for p in run.iterdir()}
    assert {
        "statistics.csv",
        "summary.json",
        "ground_truth.pgm",
        "ground_truth.yaml",
        "robot0_slam.pgm",
        "robot1_slam.yaml",
        "exploration.png",
        "exploration_first_seen.png",
        "coverage.png",
        "progress.png",
    } <= names
    summary = json.loads((run / "summary.json").read_text())
    assert summary["logic_failures"] == [0, 0] and min(summary["logic_calls"]) >= 39
    summary = json.loads((run / "summary.json").read_text())
    assert summary["ticks"] == 40 and summary["stack"] == "embedded"
    assert summary["config"]["random_seeds"] == [3]
    assert summary["final"]["exploration_percent"] > 0


def test_max_ticks_stops_at_exactly_that_tick_as_direct_mode_does(tmp_path, capsys):
    """--max-ticks ends the unpaced run at that very tick (the loop looks after every step, not
    only every 0.05 s), and what it wrote equals direct mode's run of as many ticks."""
    from maes_bringup.runners.direct import run as run_direct
    from maes_common.contract import DEFAULT_LOGIC

    cfg = write_config(tmp_path / "run.yaml", tmp_path / "results", ticks=None, robots=3)
    code = main(["--config", str(cfg), "--real-time-factor", "0", "--max-ticks", "37"])
    assert code == 0
    assert "stopped at --max-ticks 37" in capsys.readouterr().err
    (run,) = (tmp_path / "results").iterdir()
    assert json.loads((run / "summary.json").read_text())["ticks"] == 37
    direct = run_direct(str(cfg), DEFAULT_LOGIC, max_ticks=37).write(tmp_path / "direct")
    assert (direct / "statistics.csv").read_bytes() == (run / "statistics.csv").read_bytes()


def test_a_bad_config_stops_before_any_node_with_the_loaders_message(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("number_of_robots: 2\nmap:\n  custom_map_filename: nowhere/map.pgm\n")
    assert main(["--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "custom_map_filename" in err and "nowhere/map.pgm" in err
    assert not (tmp_path / "results").exists()
    assert main(["--config", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml" in capsys.readouterr().err
    assert (
        main(
            [
                "--config",
                str(write_config(tmp_path / "ok.yaml", tmp_path / "r", ticks=5)),
                "--logic",
                "no_such_module:logic",
            ]
        )
        == 2
    )
    assert "no_such_module" in capsys.readouterr().err


def test_a_bad_teardown_limit_stops_before_any_node(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MAES_TEARDOWN_LIMIT_S", "-5")
    config = write_config(tmp_path / "ok.yaml", tmp_path / "r", ticks=5)
    assert main(["--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        "maes_run: MAES_TEARDOWN_LIMIT_S must be a number of seconds >= 0 (0: no limit), got '-5'\n"
    )
    assert not (tmp_path / "r").exists()


def test_ctrl_c_still_writes_results_and_leaves_no_process(tmp_path):
    cfg = write_config(tmp_path / "run.yaml", tmp_path / "results", ticks=None)
    exe = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
    assert exe.exists(), f"workspace not built: {exe} missing (make build)"
    proc = subprocess.Popen(
        [str(exe), "--config", str(cfg), "--real-time-factor", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    deadline = time.monotonic() + 60
    line = ""
    while time.monotonic() < deadline and "tick" not in line:  # wait until it is running
        line = proc.stderr.readline()
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "interrupted" in err and "results in" in err
    (run,) = (tmp_path / "results").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["stopped_because"].startswith("interrupted") and summary["ticks"] > 0


def test_progress_line_shows_tick_time_rate_and_percentages():
    sim = Simulation(SimConfig(number_of_robots=1))
    text = Progress.line(sim, 2.5)
    for part in ("tick", "sim", "2.50x", "explored", "covered"):
        assert part in text


def test_controllers_none_runs_the_stack_without_controllers(tmp_path, capsys):
    cfg = write_config(tmp_path / "run.yaml", tmp_path / "results", ticks=15)
    assert (
        main(
            [
                "--config",
                str(cfg),
                "--controllers",
                "none",
                "--real-time-factor",
                "0",
                "--start-timeout",
                "1",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "controllers: none" in err and "waiting for a controller on every robot" in err
    (run,) = (tmp_path / "results").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["controllers"] == "none" and summary["logic"] is None
    assert summary["ticks"] == 15
    assert sum(summary["distance_travelled_m"]) == 0.0  # nobody drove the robots


def test_ros_arguments_go_to_rclpy_and_the_rest_to_maes_run():
    """As any ROS executable: what follows --ros-args (up to a lone --) is rcl's, split as rcl
    splits it; the rest are maes_run's options. Without --ros-args rclpy reads nothing extra."""
    from maes_bringup.runners.embedded import parse_args

    args = parse_args(
        ["--slam", "occupancy", "--ros-args", "--log-level", "warn", "--", "--max-ticks", "5"]
    )
    assert (args.slam, args.max_ticks) == ("occupancy", 5)
    assert args.ros_argv[0] == "maes_run" and "--log-level" in args.ros_argv
    assert parse_args(["--max-ticks", "5"]).ros_argv is None
    with pytest.raises(SystemExit):  # a ROS argument outside --ros-args is maes_run's: unknown
        parse_args(["--log-level", "warn"])
