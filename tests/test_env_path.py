"""`source scripts/env.sh` puts the documented command-line tools on PATH (maes-batch, maes_run)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("tool", ["maes-batch", "maes_run"])
def test_tool_is_on_path_after_sourcing_env(tool):
    if not (ROOT / "install/maes_bringup/lib/maes_bringup").is_dir():
        if os.environ.get("MAES_ROS_ENV") == "1":
            pytest.fail("inside the pip environment but the workspace is not built")
        pytest.skip("the workspace is not built (make setup)")
    # A clean shell: PATH without the workspace, so only env.sh can have put the tool there.
    env = {"HOME": os.environ.get("HOME", "/tmp"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        ["bash", "-c", f"source scripts/env.sh && command -v {tool} && {tool} --help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].endswith(f"/{tool}")
    assert "usage:" in result.stdout
