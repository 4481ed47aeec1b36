"""The direct-mode command line: a run that crashed resumes from its checkpoint and writes the
same results as an uninterrupted run (real processes, real files)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

CONFIG = """\
number_of_robots: 2
end_criteria: {tick: 80}
global_settings: {should_write_csv_results: true, ticks_per_stats_snapshot: 10}
map: {width_in_tiles: 30, height_in_tiles: 30}
results: {pictures: false}
"""

LOGIC = """\
import os

from maes_controller.robot_api import load_logic
from maes_common.contract import DEFAULT_LOGIC

explorer = load_logic(DEFAULT_LOGIC)


def logic(robot):
    if robot.tick == int(os.environ.get("MAES_TEST_CRASH_AT", "-1")):
        raise RuntimeError("the machine went down")
    explorer(robot)
"""


def cli(tmp: Path, *args: str, crash: int | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("MAES_TEST_CRASH_AT", None)
    if crash is not None:
        env["MAES_TEST_CRASH_AT"] = str(crash)
    cmd = [sys.executable, "-m", "maes_bringup.runners.direct_cli", "--config", "cfg.yaml"]
    cmd += ["--logic", "ctrl.py:logic", *args]
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=300)


def results(folder: Path) -> dict:
    (run,) = folder.iterdir()
    summary = json.loads((run / "summary.json").read_text())
    summary.pop("wall_time_s", None)
    files = {p.name: p.read_bytes() for p in run.iterdir() if p.suffix in (".csv", ".pgm")}
    return {"summary": summary, **files}


def test_a_crashed_run_resumes_and_writes_the_same_results(tmp_path):
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    (tmp_path / "ctrl.py").write_text(LOGIC)
    ref = cli(tmp_path, "--results", "ref")
    assert ref.returncode == 0, ref.stderr

    ckpt = ["--checkpoint", "run.ckpt", "--checkpoint-every", "25"]
    crashed = cli(tmp_path, "--results", "out", *ckpt, crash=61)
    assert crashed.returncode == 1
    assert "went down" in crashed.stderr and "--resume --checkpoint run.ckpt" in crashed.stderr
    assert not (tmp_path / "out").exists()
    resumed = cli(tmp_path, "--results", "out", *ckpt, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "tick 80" in resumed.stdout
    a, b = results(tmp_path / "ref"), results(tmp_path / "out")
    assert "statistics.csv" in a and "robot0_slam.pgm" in a
    assert a == b


def test_resume_without_a_checkpoint_is_refused(tmp_path):
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    (tmp_path / "ctrl.py").write_text(LOGIC)
    out = cli(tmp_path, "--resume", "--checkpoint", "missing.ckpt")
    assert out.returncode == 2 and "--resume needs --checkpoint" in out.stderr
