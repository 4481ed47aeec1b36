"""experiments/scaling_report.py: the scaling study's tables from a maes-batch results CSV."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "scaling_report", ROOT / "experiments" / "scaling_report.py"
)
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

COLUMNS = ["number_of_robots", "map", "controller", "seed", "status"]
COLUMNS += ["exploration_at_60s", "exploration_at_120s", "stalls", "time_to_exploration_90"]
BUILDING = "{'width_in_tiles': 60, 'height_in_tiles': 60, 'building_config': {}}"
CAVE = "{'width_in_tiles': 60, 'height_in_tiles': 60, 'cave_config': {}}"
TRS = "maes_controller.algorithms.trs:logic"


def write(path: Path, rows: list[tuple]) -> Path:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        out.writerows(rows)
    return path


def test_means_lowest_stalls_misses_and_where_gains_stop(tmp_path, capsys):
    rows = [
        # robots, map, controller, seed, status, 60 s, 120 s, stalls, time to 90 % (s)
        (5, BUILDING, TRS, 0, "ok", 40.0, 80.0, 0, ""),
        (5, BUILDING, TRS, 1, "ok", 50.0, 90.0, 0, "118.5"),
        (10, BUILDING, TRS, 0, "ok", 60.0, 95.0, 2, "100.0"),
        (10, BUILDING, TRS, 1, "ok", 55.0, 87.9, 0, ""),  # 90.0 -> 87.9: a miss (2.1 points)
        (20, BUILDING, TRS, 0, "ok", 70.0, 93.5, 0, "90.0"),  # 95.0 -> 93.5: within 2 points
        (20, BUILDING, TRS, 1, "ok", 65.0, 97.0, 0, "80.0"),
        (20, BUILDING, TRS, 2, "error", 0.0, 0.0, 0, ""),  # a failed run counts nowhere
        (5, CAVE, TRS, 0, "ok", 90.0, 100.0, 0, "40.0"),
    ]
    path = write(tmp_path / "results.csv", rows)
    png = tmp_path / "f.png"
    assert report.main([str(path), "--out", str(tmp_path / "t.md"), "--figure", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    text = (tmp_path / "t.md").read_text()
    printed = capsys.readouterr().out
    assert printed.startswith(text.strip()) and printed.strip().endswith(f"wrote {png}")
    assert "| trs | 85.0 (80.0) | 91.5 (87.9) | 95.2 (93.5) |" in text  # 2 minutes
    assert "| trs | 45.0 (40.0) | 57.5 (55.0) | 67.5 (65.0) |" in text  # 1 minute
    assert "| trs | 0/2, 0 | 1/2, 2 | 0/2, 0 |" in text
    assert "| trs | 118.5 (1/2) | 100.0 (1/2) | 85.0 (2/2) |" in text  # time to 90 %
    misses = [line for line in text.splitlines() if line.startswith("- trs: ") and "->" in line]
    assert misses == ["- trs: 5 -> 10 robots, seed 1: 90.0 -> 87.9 %"]
    # 85.0 -> 91.5 -> 95.2: 10 robots still gain 3.7 points with 20; 20 is the last size
    assert "- trs: stops gaining from 20 robots (95.2 %)" in text
    assert "#### 60x60 cave: explored after 2 minutes" in text
    assert "| trs | 100.0 (100.0) |" in text


def test_a_missing_results_file_is_named(tmp_path, capsys):
    with pytest.raises(SystemExit) as end:
        report.main([str(tmp_path / "none.csv")])
    assert end.value.code == 2
    assert "no such results file" in capsys.readouterr().err


def test_a_larger_map_s_runs_join_their_kind_s_tables_from_a_second_file(tmp_path):
    # scaling.yaml's 1..50 robots on 60x60 and scaling_120.yaml's 120 on 75x75: one table per
    # map kind, the 75x75 columns named, and 50 -> 120 robots checked on the 75x75 map
    big = "{'width_in_tiles': 75, 'height_in_tiles': 75, 'building_config': {}}"
    small = write(
        tmp_path / "small.csv",
        [
            (20, BUILDING, TRS, 0, "ok", 70.0, 95.0, 0, "90.0"),
            (50, BUILDING, TRS, 0, "ok", 80.0, 99.0, 0, "70.0"),
            (50, BUILDING, TRS, 1, "ok", 80.0, 97.0, 0, "75.0"),
        ],
    )
    large = write(
        tmp_path / "large.csv",
        [
            (50, big, TRS, 0, "ok", 70.0, 90.0, 0, "100.0"),
            (50, big, TRS, 1, "ok", 70.0, 92.0, 0, "110.0"),
            (120, big, TRS, 0, "ok", 85.0, 99.5, 1, "60.0"),
            (120, big, TRS, 1, "ok", 60.0, 88.0, 0, ""),  # 92.0 -> 88.0: a miss
        ],
    )
    png = tmp_path / "f.png"
    out = tmp_path / "t.md"
    assert report.main([str(small), str(large), "--out", str(out), "--figure", str(png)]) == 0
    text = out.read_text()
    assert "#### 60x60 building (75x75 where the column says): explored after 2 minutes" in text
    assert "| algorithm | 20 | 50 | 50 (75x75) | 120 (75x75) |" in text
    assert "| trs | 95.0 (95.0) | 98.0 (97.0) | 91.0 (90.0) | 93.8 (88.0) |" in text
    assert "| trs | 0/1, 0 | 0/2, 0 | 0/2, 0 | 1/2, 1 |" in text
    # a team is compared with the next larger one on a map of the same size: 50 robots on
    # 60x60 (97.0 % on seed 1) are not the measure of 120 on 75x75
    misses = [line for line in text.splitlines() if line.startswith("- trs: ") and "->" in line]
    assert misses == ["- trs: 50 (75x75) -> 120 robots (75x75), seed 1: 92.0 -> 88.0 %"]
    assert "- trs: stops gaining from 50 robots (98.0 %); on 75x75 from 120 robots (93.8 %)" in text
    assert "75x75 building:" not in text  # no table of its own
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
