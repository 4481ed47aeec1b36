"""maes-batch --checkpoint-every: a resumed batch continues interrupted runs from their
checkpoints, and its files equal an uninterrupted batch's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from maes_bringup.experiments.batch import main, read_rows, run_experiment
from maes_bringup.experiments.experiment import ExperimentError

from .test_batch import BASE, EXPERIMENT, assert_same_files

CONTROLLER = '''\
import os

_first = {}


def wander(robot):
    """Random nearby goals; crashes at MAES_TEST_CRASH_AT; logs the first tick each robot
    object sees (a resumed run's robots start at the checkpoint's tick)."""
    if id(robot) not in _first:
        _first[id(robot)] = robot.tick
        with open(os.environ["MAES_TEST_FIRST_TICKS"], "a") as f:
            f.write(f"{robot.tick}\\n")
    crash = os.environ.get("MAES_TEST_CRASH_AT")
    if crash is not None and robot.tick == int(crash):
        raise RuntimeError("the machine went down")
    if robot.is_nav_complete():
        x, y = robot.robot_position
        dx, dy = robot.rng.uniform(-3.0, 3.0, 2)
        robot.nav_to_pos(x + dx, y + dy)
'''


def experiment_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "base.yaml").write_text(BASE)
    (folder / "ctrl.py").write_text(CONTROLLER)
    path = folder / "exp.yaml"
    text = EXPERIMENT.format(controller="wander").replace("repetitions: 4", "repetitions: 1")
    path.write_text(text)
    return path


def test_interrupted_runs_resume_from_their_checkpoints(tmp_path, monkeypatch):
    exp = experiment_file(tmp_path / "exp")
    ticks = tmp_path / "first_ticks.txt"
    monkeypatch.setenv("MAES_TEST_FIRST_TICKS", str(ticks))
    reference = tmp_path / "reference"
    run_experiment(exp, reference, workers=1, show_progress=False)

    out = tmp_path / "out"
    monkeypatch.setenv("MAES_TEST_CRASH_AT", "37")
    crashed = run_experiment(exp, out, workers=1, checkpoint_every=20, show_progress=False)
    assert crashed.failed == 3
    assert len(list((out / "checkpoints").glob("*.ckpt"))) == 3
    monkeypatch.delenv("MAES_TEST_CRASH_AT")
    ticks.write_text("")
    args = [str(exp), "--workers", "1", "--out", str(out), "--resume", "--quiet"]
    assert main([*args, "--checkpoint-every", "20"]) == 0
    assert set(ticks.read_text().split()) == {"20"}  # every robot started at the checkpoint
    assert_same_files(reference, out)
    assert not list((out / "checkpoints").glob("*"))  # finished runs leave none
    assert {r["status"] for r in read_rows(out / "results.csv")} == {"ok"}


def test_checkpoint_every_is_checked(tmp_path):
    exp = experiment_file(tmp_path / "exp")
    with pytest.raises(ExperimentError, match="checkpoint_every must be an integer >= 0"):
        run_experiment(exp, tmp_path / "o", checkpoint_every=-1, show_progress=False)
    assert os.path.exists(exp)
