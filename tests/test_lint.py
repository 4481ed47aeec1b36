"""`make lint` as part of `make test`: ruff's rules (pyproject.toml) and ruff's formatting."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


pytestmark = pytest.mark.skipif(RUFF is None, reason="ruff is not installed (make setup does)")


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([RUFF, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check_is_clean():
    result = _ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


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
