"""Setup fails early and clearly: missing system needs are named, a failed step is named with
what to do, and a half-built venv is never taken for a good one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"


def run(cmd: list[str], **env_overrides: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_overrides}
    return subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_check_system_passes_on_this_machine() -> None:
    result = run([str(SCRIPTS / "check_system.sh")])
    assert result.returncode == 0, result.stderr
    assert "system check passed: Python 3.11" in result.stdout


def test_check_system_names_every_missing_piece(tmp_path: Path) -> None:
    result = run(
        [str(SCRIPTS / "check_system.sh")],
        PYTHON=str(tmp_path / "python3.11"),
        CC="no-such-cc",
        CXX="no-such-c++",
    )
    assert result.returncode == 1
    assert "missing Python 3.11: '" + str(tmp_path / "python3.11") in result.stderr
    assert "missing C compiler: 'no-such-cc' not found" in result.stderr
    assert "missing C++ compiler: 'no-such-c++' not found" in result.stderr


def test_check_system_rejects_a_python_that_is_not_3_11(tmp_path: Path) -> None:
    fake = tmp_path / "python3.11"
    fake.write_text("#!/bin/sh\necho 3.12\n")
    fake.chmod(0o755)
    result = run([str(SCRIPTS / "check_system.sh")], PYTHON=str(fake))
    assert result.returncode == 1
    assert "is Python 3.12; the ROS 2 Jazzy wheels need exactly 3.11" in result.stderr


@pytest.mark.slow
def test_failed_install_is_named_and_the_half_built_venv_is_discarded(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("maes-ros-no-such-package==1.0\n")
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    env = {
        "MAES_VENV": str(venv),
        "MAES_REQUIREMENTS": str(requirements),
        "MAES_LOG_DIR": str(tmp_path / "log"),
        # No network and no local wheels: the install step must fail, fast.
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(empty),
    }
    first = run([str(SCRIPTS / "setup_venv.sh")], **env)
    assert first.returncode == 1
    assert "step 'download and install the Python packages" in first.stderr
    assert "What to do:" in first.stderr
    assert (tmp_path / "log" / "pip.log").is_file()
    assert (venv / "pyvenv.cfg").is_file()  # the venv was half built...
    assert not (venv / ".maes-venv-ok").exists()  # ...and is not marked good

    # The environment helper refuses it rather than running in a broken venv.
    refused = run([str(SCRIPTS / "with_env"), "true"], MAES_VENV=str(venv))
    assert refused.returncode == 1
    assert "no complete pip environment" in refused.stderr

    # The next setup starts over instead of reusing it.
    marker = venv / "left-over"
    marker.write_text("from the failed run")
    second = run([str(SCRIPTS / "setup_venv.sh")], **env)
    assert second.returncode == 1
    assert "discarding the incomplete or outdated venv" in second.stdout
    assert not marker.exists()


def test_setup_refuses_to_delete_a_directory_that_is_not_a_venv(tmp_path: Path) -> None:
    precious = tmp_path / "not-a-venv"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    result = run(
        [str(SCRIPTS / "setup_venv.sh")],
        MAES_VENV=str(precious),
        MAES_LOG_DIR=str(tmp_path / "log"),
    )
    assert result.returncode == 1
    assert "exists but is not a venv" in result.stderr
    assert (precious / "notes.txt").read_text() == "keep me"
