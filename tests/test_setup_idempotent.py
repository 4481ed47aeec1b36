"""`make setup` is idempotent: once everything is built, running it again rebuilds nothing.

These tests run make in the real work tree, so they need a completed setup (``make test`` has
just done one). Outside the pip environment, where the tree may not be set up, they skip.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _make_variable(name: str) -> str:
    """A variable of the Makefile: which launch and commander stamps setup makes here (they
    depend on whether the optional wheels folders exist)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(
        ["make", "--no-print-directory", "-s", f"print-{name}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.strip()


LAUNCH_STAMP = _make_variable("LAUNCH_STAMP")
COMMANDER_STAMP = _make_variable("COMMANDER_STAMP")
STAMPS = (
    ".venv/.maes-venv-ok",
    ".standins/install/.maes-build-ok",
    "install/.maes-build-ok",
    "install/.maes-kernels-ok",
    LAUNCH_STAMP,
    COMMANDER_STAMP,
)


def run_make(*args: str) -> subprocess.CompletedProcess:
    # A fresh make, not a sub-make of the `make test` that may be running this test.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


@pytest.fixture
def set_up_tree() -> None:
    missing = [s for s in STAMPS if not (ROOT / s).is_file()]
    if missing and os.environ.get("MAES_ROS_ENV") == "1":
        pytest.fail(f"inside the pip environment but setup stamps are missing: {missing}")
    if missing:
        pytest.skip(f"the work tree is not set up (missing {missing}); run make setup")


def mtimes() -> dict[str, int]:
    paths = [
        *STAMPS,
        ".venv/pyvenv.cfg",
        ".venv/bin/python",
        "install/setup.bash",
        ".standins/install/setup.bash",
    ]
    return {p: (ROOT / p).stat().st_mtime_ns for p in paths}


@pytest.mark.slow
def test_second_setup_rebuilds_nothing(set_up_tree: None) -> None:
    # A first run absorbs any input edited since the last build (the work tree may be shared
    # with other engineers); the run after it must then find nothing to do.
    first = run_make("setup")
    assert first.returncode == 0, first.stdout + first.stderr
    before = mtimes()
    result = run_make("setup")
    assert result.returncode == 0, result.stdout + result.stderr
    assert mtimes() == before
    output = result.stdout + result.stderr
    for rebuild_command in (
        "setup_venv.sh",
        "build_ws.sh",
        "compile_kernels.sh",
        "setup_launch.sh",
        "setup_commander.sh",
        "colcon",
    ):
        assert rebuild_command not in output
    assert "environment up to date" in result.stdout


def test_make_question_mode_sees_every_stamp_up_to_date(set_up_tree: None) -> None:
    # `make -q TARGET` runs nothing and exits 0 only if TARGET and all it depends on are newer
    # than their inputs: the same decision `make setup` takes.
    for stamp in STAMPS:
        result = run_make("-q", stamp)
        assert result.returncode == 0, f"{stamp} would be rebuilt:\n{result.stdout}{result.stderr}"


def test_touching_an_interface_input_marks_only_the_workspace_out_of_date(
    set_up_tree: None,
) -> None:
    # Make's view after an input changes, asked with -q so nothing is rebuilt: proves the stamps
    # really depend on their inputs (a stamp that never went stale would also pass the tests above).
    msg = ROOT / "src/maes_interfaces/msg/Vector2D.msg"
    stamp = ROOT / "install/.maes-build-ok"
    original = msg.stat()
    try:
        newer = stamp.stat().st_mtime_ns + 1_000_000_000
        os.utime(msg, ns=(original.st_atime_ns, newer))
        assert run_make("-q", "install/.maes-build-ok").returncode == 1
        assert run_make("-q", ".venv/.maes-venv-ok").returncode == 0
        assert run_make("-q", ".standins/install/.maes-build-ok").returncode == 0
        assert run_make("-q", LAUNCH_STAMP).returncode == 0
        assert run_make("-q", COMMANDER_STAMP).returncode == 0
    finally:
        os.utime(msg, ns=(original.st_atime_ns, original.st_mtime_ns))
    assert run_make("-q", "install/.maes-build-ok").returncode == 0
