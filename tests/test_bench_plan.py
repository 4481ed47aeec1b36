"""`make bench` / `make bench-full` (bench/run_all.py): every planned benchmark exists and its
arguments are ones its parser accepts (checked with --help output, nothing is timed here)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
run_all = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_all)

PLANNED = sorted(
    {(script, tuple(args)) for plan in run_all.PLANS.values() for _, script, args in plan}
)


def test_list_prints_the_plan_with_progress_numbers(capsys):
    assert run_all.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(run_all.PLANS["quick"])
    assert lines[0].startswith(f"[1/{len(lines)}] core: python bench/bench_core.py")


@pytest.mark.parametrize("script,args", PLANNED, ids=lambda x: str(x))
def test_planned_options_exist(script, args):
    assert (BENCH / script).is_file()
    helptext = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert helptext.returncode == 0, helptext.stderr
    for option in (a for a in args if a.startswith("--")):
        assert re.search(rf"(^|\s|\[){re.escape(option)}\b", helptext.stdout), option
    for path in (a for a in args if a.endswith(".yaml")):
        assert Path(path).is_file()
