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
