"""maes-batch on a Dask distributed cluster of separate worker processes gives the local results."""

from __future__ import annotations

import logging

import pytest

from maes_bringup.experiments import batch
from maes_bringup.experiments.batch import main, read_rows, run_experiment
from maes_bringup.experiments.experiment import ExperimentError

distributed = pytest.importorskip("distributed")

BASE = """\
number_of_robots: 1
end_criteria: {tick: 40}
robot_constraints: {slam_position_inaccuracy: 0.3, slam_raytrace_range: 4.0}
motion: {odometry_noise: 0.01}
map: {width_in_tiles: 30, height_in_tiles: 30, cave_config: {}}
"""

CONTROLLER = """\
def wander(robot):
    if robot.tick % 10 == 0:
        robot.broadcast_msg(f"{robot.namespace} at {robot.tick}")
    if robot.is_nav_complete():
        x, y = robot.robot_position
        dx, dy = robot.rng.uniform(-3.0, 3.0, 2)
        robot.nav_to_pos(x + dx, y + dy)
"""

EXPERIMENT = """\
base_config: base.yaml
parameters:
  number_of_robots: [1, 3]
  robot_constraints.slam_raytrace_range: {lhs: {low: 3.0, high: 6.0}}
lhs_samples: 2
seeds: [0, 1]
controllers: [ctrl.py:wander, ctrl.py:broken]
max_ticks: 40
"""


@pytest.fixture(scope="module")
def cluster():
    # separate worker processes, loopback only, no dashboard
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as c:
        yield c


def test_a_dask_cluster_gives_the_same_files_as_local_workers(tmp_path, cluster):
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "ctrl.py").write_text(
        CONTROLLER + "\n\ndef broken(robot):\n"
        "    if robot.tick == 7:\n"
        "        raise ValueError('broken on purpose')\n"
        "    wander(robot)\n"
    )
    exp = tmp_path / "exp.yaml"
    exp.write_text(EXPERIMENT)
    local = run_experiment(exp, tmp_path / "local", workers=1, show_progress=False)
    assert (local.completed, local.failed) == (16, 8)

    out = tmp_path / "dask"
    assert (
        main([str(exp), "--scheduler", cluster.scheduler_address, "--out", str(out), "--quiet"])
        == 1
    )  # 1: some runs failed (the broken controller), on purpose
    for name in ("results.csv", "timeseries.csv", "aggregate.csv"):
        assert (out / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    rows = read_rows(out / "results.csv")
    assert sum(r["status"] == "failed" for r in rows) == 8
    assert all(
        "ValueError: broken on purpose" in r["error"] for r in rows if r["status"] == "failed"
    )
    # the runs really ran in the cluster's worker processes, not here
    workers = {r["worker"].rsplit(":", 1)[1] for r in read_rows(out / "timing.csv")}
    local_pid = {
        r["worker"].rsplit(":", 1)[1] for r in read_rows(tmp_path / "local" / "timing.csv")
    }
    assert workers and not workers & local_pid and len(workers) <= 2


def test_an_unreachable_scheduler_is_an_error_before_anything_is_written(tmp_path, monkeypatch):
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "ctrl.py").write_text(CONTROLLER)
    exp = tmp_path / "exp.yaml"
    exp.write_text("base_config: base.yaml\ncontrollers: [ctrl.py:wander]\nmax_ticks: 5\n")
    monkeypatch.setattr(batch, "DASK_CONNECT_TIMEOUT", "1s")
    with pytest.raises(
        ExperimentError, match="cannot reach the Dask scheduler 'tcp://127.0.0.1:9'"
    ):
        run_experiment(exp, tmp_path / "out", scheduler="tcp://127.0.0.1:9", show_progress=False)
    assert not (tmp_path / "out").exists()
