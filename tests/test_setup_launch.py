"""``make setup``'s launch-stack step where the wheels folder is absent (a user's machine).

Where the folder exists, the step installs the launch stack and the launch tests
(src/maes_bringup/test/test_launch.py) prove it works; here the other branch: setup goes on,
says so once, and make then considers the step done.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return {**env, **extra}


@pytest.fixture
def venv_ready() -> None:
    if not (ROOT / ".venv" / ".maes-venv-ok").is_file():
        pytest.skip("the work tree is not set up (no .venv); run make setup")


def test_without_the_wheels_setup_goes_on_and_says_so_once(tmp_path: Path, venv_ready) -> None:
    absent = tmp_path / "no" / "ros-jazzy-launch"
    prefix = tmp_path / "prefix"
    out = subprocess.run(
        [str(ROOT / "scripts" / "setup_launch.sh")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(MAES_LAUNCH_WHEELS=str(absent), MAES_LAUNCH_PREFIX=str(prefix)),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert f"no ROS 2 launch wheels at {absent}" in lines[0]
    assert "Docker image" in lines[0] and "apt install of ROS 2 Jazzy" in lines[0]
    assert (prefix / ".maes-launch-absent").is_file()
    assert not (prefix / "install").exists()


def test_make_picks_the_step_by_whether_the_folder_holds_wheels(tmp_path: Path, venv_ready) -> None:
    # Dry runs (-n): make prints what it would do and does nothing.
    absent = subprocess.run(
        ["make", "--no-print-directory", "-n", "_setup"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(MAES_LAUNCH_WHEELS=str(tmp_path / "none")),
    )
    assert "scripts/setup_launch.sh" in absent.stdout, absent.stdout + absent.stderr
    (tmp_path / "empty").mkdir()
    empty = subprocess.run(
        ["make", "--no-print-directory", "-n", ".ros-launch/.maes-launch-ok"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(MAES_LAUNCH_WHEELS=str(tmp_path / "empty")),
    )
    # A folder without wheels is "absent": there is no rule for the installed stamp then.
    assert empty.returncode != 0 and "No rule to make target" in empty.stderr
