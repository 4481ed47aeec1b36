"""`make lint` as part of `make test`: ruff's rules (pyproject.toml) and ruff's formatting.

Two parts wait for a one-time clean-up after the branches of issue 16 are merged (running them
earlier would conflict with work in progress in those files):

* ``PENDING_CHECK``: files with findings under the wider rule set, all in modules being
  edited in parallel. ``ruff check --fix .`` fixes most; the rest are two ``zip`` calls needing
  ``strict=``, one ``dict()`` call and one ``open`` without a context manager.
* the format check: ``ruff format .`` once over the whole repository.

Both are ``xfail(strict=True)``: once clean they pass, the strict xfail turns that into a
failure, and the marker (and the list) must go, so the ratchet cannot be forgotten.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")

PENDING_CHECK = [
    "conftest.py",
    "src/maes_bringup/maes_bringup/direct.py",
    "src/maes_bringup/maes_bringup/direct_robot.py",
    "src/maes_controller/maes_controller/controller_node.py",
    "src/maes_controller/maes_controller/navigation.py",
    "src/maes_controller/maes_controller/navigator_node.py",
    "src/maes_controller/test/conftest.py",
    "src/maes_controller/test/test_controller_node.py",
    "src/maes_controller/test/test_navigation.py",
    "src/maes_controller/test/test_navigator_node.py",
    "src/maes_controller/test/test_tf_pose.py",
    "src/maes_sim/maes_sim/ros/sim_node.py",
    "src/maes_sim/test/core/test_building.py",
    "src/maes_sim/test/core/test_config.py",
    "src/maes_sim/test/ros/test_sim_node.py",
]

pytestmark = pytest.mark.skipif(RUFF is None, reason="ruff is not installed (make setup does)")


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([RUFF, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check_is_clean_outside_the_pending_files():
    result = _ruff("check", "--no-cache", "--output-format", "concise", ".",
                   "--extend-exclude", ",".join(PENDING_CHECK))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.xfail(strict=True, reason="wider rules not yet applied to files edited in parallel")
def test_ruff_check_is_clean_in_the_pending_files():
    result = _ruff("check", "--no-cache", "--output-format", "concise", *PENDING_CHECK)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.xfail(strict=True, reason="`ruff format .` not yet run over the repository")
def test_ruff_format_leaves_every_file_unchanged():
    result = _ruff("format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_finds_a_real_finding(tmp_path):
    # The configuration is in force: an unsorted import block and a zip without strict= are
    # findings under it (they were not under the old E/W/F set).
    bad = ROOT / "tests" / f"_lint_probe_{tmp_path.name}.py"
    bad.write_text("import sys\nimport os\n\nprint(list(zip(os.sep, sys.argv)))\n")
    try:
        result = _ruff("check", "--no-cache", "--output-format", "concise", str(bad))
    finally:
        bad.unlink()
    assert result.returncode == 1
    assert "I001" in result.stdout and "B905" in result.stdout
