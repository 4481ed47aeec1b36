"""Every script in bench/ still runs: `bench/run_all.py --smoke`'s plan, one test per script.

The benchmarks are run by hand (`make bench`, `make bench-full`, a paired comparison before a
redesign), so one that calls or patches code that has since moved breaks unnoticed until
someone needs its figures (``bench_direct.py`` patched ``direct.step_navigation`` after
it had moved to ``runners.team``). Here each runs once on a tiny case; its figures mean
nothing and are not read, its exit status must be 0 (a case still running after 540 s is killed
with whatever it started). Marker ``slow`` (188 s in all, one after another, on a 2-core
machine) and ``bench_smoke`` (`make test-stress` leaves these out: they test the benchmarks,
not the product under load).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
run_all = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_all)

SMOKE = run_all.PLANS["smoke"]


def test_every_script_is_smoked_or_said_why_not():
    scripts = {p.name for p in BENCH.glob("*.py")}
    smoked = {script for _, script, _ in SMOKE}
    assert smoked <= scripts, f"planned but missing: {sorted(smoked - scripts)}"
    assert set(run_all.SMOKE_LEFT_OUT) <= scripts, sorted(set(run_all.SMOKE_LEFT_OUT) - scripts)
    unplanned = scripts - smoked - set(run_all.SMOKE_LEFT_OUT)
    assert not unplanned, f"add these to run_all.PLANS['smoke'] or SMOKE_LEFT_OUT: {unplanned}"
    assert len(smoked) == len(SMOKE), "a script is in the smoke plan twice"


@pytest.mark.slow
@pytest.mark.bench_smoke
@pytest.mark.timeout(600)  # a loaded 2-core machine: some start a simulator process 3 times
@pytest.mark.parametrize("name,script,args", SMOKE, ids=[name for name, _, _ in SMOKE])
def test_bench_runs(name, script, args, tmp_path):
    # A session of its own: on a timeout the whole group goes, the benchmark's own children too
    # (a `maes_run` it started survived when only the benchmark was killed).
    proc = subprocess.Popen(
        [sys.executable, str(BENCH / script), *args],
        cwd=tmp_path,  # whatever a benchmark leaves behind stays out of the tree
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=540)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{name}: still running after 540 s\n{stderr[-3000:]}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left running
    assert proc.returncode == 0, (
        f"{name}: python bench/{script} {' '.join(args)} exited {proc.returncode}\n"
        f"--- stdout (end) ---\n{stdout[-3000:]}\n--- stderr (end) ---\n{stderr[-3000:]}"
    )
