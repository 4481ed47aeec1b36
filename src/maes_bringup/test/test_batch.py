"""maes-batch: tidy rows, aggregate, resume after an interruption or a kill, failures recorded."""

from __future__ import annotations

import csv
import doctest
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from maes_bringup.experiments import aggregate
from maes_bringup.experiments.batch import Progress, main, read_rows, run_experiment
from maes_bringup.experiments.experiment import load_experiment

ROOT = Path(__file__).resolve().parents[3]

BASE = """\
number_of_robots: 1
end_criteria: {exploration_percent: 99.0, tick: 60}
global_settings: {ticks_per_stats_snapshot: 10}
robot_constraints: {slam_position_inaccuracy: 0.3, slam_raytrace_range: 4.0}
map: {width_in_tiles: 30, height_in_tiles: 30, cave_config: {}}
"""

CONTROLLERS = '''\
def wander(robot):
    """Random nearby goals from the robot's own generator, and a broadcast every 10 ticks."""
    if robot.tick % 10 == 0:
        robot.broadcast_msg(f"{robot.namespace} at {robot.tick}")
    if robot.is_nav_complete():
        x, y = robot.robot_position
        dx, dy = robot.rng.uniform(-3.0, 3.0, 2)
        robot.nav_to_pos(x + dx, y + dy)


def breaks_with_three(robot):
    if robot.robot_id == 2 and robot.tick == 5:
        raise RuntimeError("robot 2 broke")
    wander(robot)
'''

EXPERIMENT = """\
name: tiny
base_config: base.yaml
parameters:
  number_of_robots: [1, 2, 3]
repetitions: 4
controllers: [ctrl.py:{controller}]
metrics: [ticks_to_end, time_to_exploration_10, time_to_exploration_20, final_exploration,
          final_coverage, distance, collisions, messages_sent]
max_ticks: 60
"""

COMPARED = ("results.csv", "timeseries.csv", "aggregate.csv", "cases.csv", "experiment.json")


def experiment_file(folder: Path, controller: str = "wander") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "base.yaml").write_text(BASE)
    (folder / "ctrl.py").write_text(CONTROLLERS)
    path = folder / "exp.yaml"
    path.write_text(EXPERIMENT.format(controller=controller))
    return path


def sorted_rows(path: Path) -> list[list[str]]:
    rows = list(csv.reader(path.open()))
    return [rows[0]] + sorted(rows[1:])


def assert_same_files(a: Path, b: Path) -> None:
    for name in COMPARED:
        # row order may differ while a batch runs; compare as sorted rows, then as bytes (the
        # finished batch rewrites its files in case order)
        if name.endswith(".csv"):
            assert sorted_rows(a / name) == sorted_rows(b / name), name
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_three_values_by_four_seeds_give_twelve_rows_and_the_aggregate(tmp_path, capsys):
    exp = experiment_file(tmp_path)
    out = tmp_path / "out"
    assert main([str(exp), "--workers", "2", "--out", str(out)]) == 0
    rows = read_rows(out / "results.csv")
    assert len(rows) == 12 and all(r["status"] == "ok" for r in rows)
    assert sorted((r["number_of_robots"], r["seed"]) for r in rows) == sorted(
        (str(n), str(s)) for n in (1, 2, 3) for s in range(4)
    )
    assert all(r["end_reason"] for r in rows) and all(int(r["ticks"]) <= 60 for r in rows)
    # the metrics are the runs' own: more robots drive further and talk more
    dist = {
        n: np.mean([float(r["distance"]) for r in rows if r["number_of_robots"] == n])
        for n in ("1", "2", "3")
    }
    assert 0 < dist["1"] < dist["3"]
    # the experiment lists the former name messages_sent: read as broadcasts_sent, the one name
    assert "messages_sent" not in rows[0]
    assert all(int(r["broadcasts_sent"]) >= 6 * int(r["number_of_robots"]) for r in rows)

    series = read_rows(out / "timeseries.csv")
    for r in rows:
        mine = [s for s in series if s["case_id"] == r["case_id"]]
        end = int(r["ticks"])
        expected = list(range(0, end + 1, 10)) + ([end] if end % 10 else [])
        assert [int(s["tick"]) for s in mine] == expected  # every 10 ticks, and the last one
        assert float(mine[-1]["exploration_percent"]) == float(r["final_exploration"])

    table = read_rows(out / "aggregate.csv")
    assert len(table) == 3 * 8
    for t in table:
        values = [
            float(r[t["metric"]])
            for r in rows
            if r["condition_id"] == t["condition_id"] and r[t["metric"]] != ""
        ]
        assert int(t["runs"]) == 4 and int(t["failed"]) == 0 and int(t["n"]) == len(values)
        if values:
            assert float(t["mean"]) == pytest.approx(np.mean(values))
            assert float(t["median"]) == pytest.approx(np.median(values))
        if len(values) > 1:
            assert float(t["std"]) == pytest.approx(np.std(values, ddof=1))
        else:
            assert t["std"] == ""  # undefined for fewer than two runs
    some = [t for t in table if t["metric"] == "time_to_exploration_20"]
    assert sum(int(t["missing"]) for t in some) > 0 and sum(int(t["n"]) for t in some) > 0
    for png in ("exploration_vs_time.png", "time_to_exploration_20_vs_number_of_robots.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    timing = read_rows(out / "timing.csv")
    assert {t["case_id"] for t in timing} == {r["case_id"] for r in rows}
    assert "12/12" in capsys.readouterr().err


def test_interrupting_and_resuming_gives_the_same_files(tmp_path):
    exp = load_experiment(experiment_file(tmp_path))
    reference = tmp_path / "reference"
    done = run_experiment(exp, reference, workers=1, show_progress=False)
    assert (done.completed, done.failed, done.interrupted) == (12, 0, False)

    out = tmp_path / "out"
    first = run_experiment(exp, out, workers=1, stop_after=5, show_progress=False)
    assert first.interrupted and first.completed == 5
    assert len(read_rows(out / "results.csv")) == 5 and not (out / "aggregate.csv").exists()
    with pytest.raises(Exception, match="pass --resume"):
        run_experiment(exp, out, workers=1, show_progress=False)
    second = run_experiment(exp, out, workers=1, resume=True, show_progress=False)
    assert (second.skipped, second.completed, second.interrupted) == (5, 7, False)
    assert_same_files(reference, out)


def test_a_killed_batch_resumes_where_it_stopped(tmp_path):
    exp = experiment_file(tmp_path)
    reference = tmp_path / "reference"
    run_experiment(exp, reference, workers=1, show_progress=False)

    out = tmp_path / "out"
    env = dict(os.environ)
    paths = [str(ROOT / "src" / p) for p in ("maes_sim", "maes_controller", "maes_bringup")]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "maes_bringup.experiments.batch",
            str(exp),
            "--workers",
            "1",
            "--out",
            str(out),
            "--quiet",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    try:
        while len(read_rows(out / "results.csv")) < 3:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the batch made no progress"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    kept = read_rows(out / "results.csv")
    assert 3 <= len(kept) < 12
    with (out / "results.csv").open("a") as fh:
        fh.write("deadbeef0000,half a ro")  # as if killed in the middle of writing a row
    assert main([str(exp), "--workers", "1", "--out", str(out), "--resume", "--quiet"]) == 0
    assert_same_files(reference, out)


def test_a_failing_run_is_recorded_and_the_others_continue(tmp_path, capsys):
    exp = experiment_file(tmp_path, controller="breaks_with_three")
    out = tmp_path / "out"
    assert main([str(exp), "--workers", "1", "--out", str(out)]) == 1
    rows = read_rows(out / "results.csv")
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(rows) == 12 and len(failed) == 4
    assert {r["number_of_robots"] for r in failed} == {"3"}
    assert failed[0]["error"] == (
        "LogicError: logic of robot2 raised at tick 5: RuntimeError: robot 2 broke"
    )
    assert failed[0]["distance"] == "" and failed[0]["ticks"] == ""
    # the failure count: direct mode stops at the logic's first failure
    assert {r["logic_failures"] for r in failed} == {"1"}
    assert {r["logic_failures"] for r in rows if r["status"] == "ok"} == {"0"}
    log = (out / "errors.log").read_text()
    assert log.count("=== case") == 4 and "RuntimeError: robot 2 broke" in log
    table = read_rows(out / "aggregate.csv")
    three = [t for t in table if t["number_of_robots"] == "3"]
    assert three and all((t["failed"], t["n"], t["mean"]) == ("4", "0", "") for t in three)
    assert "4 failed" in capsys.readouterr().err
    # a resumed batch retries the failed runs (they fail again here) and keeps one row each
    assert main([str(exp), "--workers", "1", "--out", str(out), "--resume"]) == 1
    again = read_rows(out / "results.csv")
    assert sorted(r["case_id"] for r in again) == sorted(r["case_id"] for r in rows)


def test_bad_input_fails_before_any_run(tmp_path, capsys):
    exp = experiment_file(tmp_path)
    exp.write_text(
        exp.read_text().replace("number_of_robots: [1, 2, 3]", "number_of_robot: [1, 2, 3]")
    )
    out = tmp_path / "out"
    assert main([str(exp), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "unknown config key path 'number_of_robot'; did you mean 'number_of_robots'?" in err
    assert not out.exists()
    with pytest.raises(SystemExit):
        main([str(exp), "--workers", "0"])


def test_progress_line_per_run_when_not_a_terminal():
    stream = io.StringIO()
    p = Progress(4, 1, stream=stream)
    p.update(True, "aaa")
    p.update(False, "bbb")
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("maes-batch [") and "2/4" in lines[0] and lines[0].endswith("aaa")
    assert "3/4 (1 failed)" in lines[1] and lines[1].endswith("bbb FAILED")


def test_read_rows_drops_a_torn_last_row(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(
        textwrap.dedent("""\
        a,b
        1,2
        3,4
        5""")
    )
    assert read_rows(path) == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}]
    with pytest.raises(Exception, match="written by another experiment"):
        read_rows(path, ["a", "c"])


def test_resuming_an_edited_experiment_keeps_what_still_belongs_to_it(tmp_path, capsys):
    exp = experiment_file(tmp_path)
    out = tmp_path / "out"
    run_experiment(exp, out, workers=1, show_progress=False)
    first = {r["case_id"] for r in read_rows(out / "results.csv")}
    # one more team size: the 12 finished runs stay, 4 new ones run
    exp.write_text(exp.read_text().replace("[1, 2, 3]", "[1, 2, 3, 4]"))
    more = run_experiment(exp, out, workers=1, resume=True, show_progress=False)
    assert (more.skipped, more.completed) == (12, 4)
    rows = read_rows(out / "results.csv")
    assert len(rows) == 16 and first < {r["case_id"] for r in rows}
    # a changed base config makes every case new: the old rows move aside, never mixed in
    (tmp_path / "base.yaml").write_text(BASE.replace("tick: 60", "tick: 50"))
    again = run_experiment(exp, out, workers=1, resume=True, show_progress=False)
    assert (again.skipped, again.completed) == (0, 16)
    assert (
        "16 rows of results.csv belong to cases this experiment no longer has"
        in capsys.readouterr().err
    )
    assert {r["case_id"] for r in read_rows(out / "stale_results.csv")} == {
        r["case_id"] for r in rows
    }
    assert all(r["ticks"] == "50" for r in read_rows(out / "results.csv"))


def test_docstring_examples():
    result = doctest.testmod(aggregate, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_csv_cells_drop_float_noise():
    from maes_bringup.experiments import batch_files

    result = doctest.testmod(batch_files)
    assert result.attempted > 0 and result.failed == 0
    assert batch_files.cell(52.925000000000004) == 52.925
    assert batch_files.cell(1234567.891234567) == 1234567.891  # 10 significant digits


def test_a_results_file_with_former_metric_names_reads_under_the_current_ones(tmp_path):
    # results.csv written before the metric registry: messages_sent / messages_delivered
    old = tmp_path / "results.csv"
    old.write_text("case_id,messages_sent,messages_delivered,distance\nc0,7,12,3.5\n")
    current = ["case_id", "broadcasts_sent", "broadcasts_delivered", "distance"]
    assert read_rows(old, current) == [
        {"case_id": "c0", "broadcasts_sent": "7", "broadcasts_delivered": "12", "distance": "3.5"}
    ]
    # a file of another experiment is still refused
    with pytest.raises(ValueError, match="written by another experiment"):
        read_rows(old, ["case_id", "broadcasts_sent", "distance"])


def test_plots_of_many_conditions_name_what_differs_and_draw_a_panel_per_controller(
    tmp_path, monkeypatch
):
    """A batch of 2 controllers x 9 conditions (more lines than one picture tells apart): the
    exploration plot draws a panel per controller with one legend; the legend names only what
    differs (a parameter with one value is left out, a mapping shows its differing leaves); a
    parameter with one value gets no trend plot."""
    from maes_bringup.experiments.batch_files import SERIES_COLUMNS, write_rows

    specs = ["pkg.a:logic", "pkg.b:logic"]
    walkers = [
        "[]",
        "[{'random_walkers': 4, 'speed': 0.5}]",
        "[{'random_walkers': 8, 'speed': 0.5}]",
    ]
    rows, series = [], []
    for spec in specs:
        for n in (1, 2, 3):
            for obstacles in walkers:
                cid = f"{spec}{n}{obstacles}"
                for seed in (0, 1):
                    case = f"{cid}-{seed}"
                    rows.append(
                        {
                            "case_id": case,
                            "condition_id": cid,
                            "status": "ok",
                            "controller": spec,
                            "seed": str(seed),
                            "number_of_robots": str(n),
                            "robot_constraints.broadcast_range": "8.0",
                            "obstacles": obstacles,
                            "ticks_to_end": str(100 + 10 * n + seed),
                        }
                    )
                    series += [
                        {
                            "case_id": case,
                            "tick": t,
                            "sim_time": t / 10,
                            "exploration_percent": min(100, t / n),
                            "coverage_percent": 0,
                        }
                        for t in (0, 50, 100)
                    ]
    params = ["number_of_robots", "robot_constraints.broadcast_range", "obstacles"]
    write_rows(tmp_path / "results.csv", [*rows[0]], rows)
    write_rows(tmp_path / "timeseries.csv", list(SERIES_COLUMNS), series)
    (tmp_path / "experiment.json").write_text(
        json.dumps(
            {
                "name": "many",
                "parameters": params,
                "metrics": ["ticks_to_end"],
                "controllers": specs,
            }
        )
    )
    figures = {}
    save = aggregate._save

    def keep(fig, path, whole=True):
        axes = [ax for ax in fig.axes if ax.get_visible()]
        legends = list(fig.legends) + [ax.get_legend() for ax in axes if ax.get_legend()]
        figures[Path(path).name] = (
            [ax.get_title() for ax in axes],
            [t.get_text() for legend in legends for t in legend.get_texts()],
        )
        save(fig, path, whole)

    monkeypatch.setattr(aggregate, "_save", keep)
    written = {p.name for p in aggregate.aggregate(tmp_path)}
    assert written == {
        "aggregate.csv",
        "exploration_vs_time.png",
        "ticks_to_end_vs_number_of_robots.png",
    }
    titles, entries = figures["exploration_vs_time.png"]
    assert titles == ["a:logic", "b:logic"]
    assert len(entries) == 9 and len(set(entries)) == 9
    assert "number_of_robots: 2; obstacles: random_walkers 8, speed 0.5" in entries
    assert "number_of_robots: 1; obstacles: none" in entries
    assert not any("broadcast_range" in e for e in entries)
    _, trend = figures["ticks_to_end_vs_number_of_robots.png"]
    assert "obstacles: none; a:logic" in trend and len(trend) == 6
