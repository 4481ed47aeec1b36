"""``make setup``'s launch-stack and nav2_simple_commander steps where the wheels are absent.

Where the wheels folders exist, the steps install from them and the launch tests
(src/maes_bringup/test/test_launch.py) prove it works; without them (a user's machine) setup tries
the upstream sources pinned in requirements/launch-sources.txt. Here: with neither wheels nor
network (the sources' host refuses connections) setup goes on, says so once naming the URLs it
tried, and make then considers the step done; and make picks the step by whether the folder holds
wheels, whatever this work tree's own setup recorded.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: A port nothing listens on: connecting is refused at once, as without network.
REFUSED = "http://127.0.0.1:9"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return {**env, **extra}


@pytest.fixture
def venv_ready() -> None:
    if not (ROOT / ".venv" / ".maes-venv-ok").is_file():
        pytest.skip("the work tree is not set up (no .venv); run make setup")


def _run_offline(script: str, tmp_path: Path, **env: str) -> list[str]:
    out = subprocess.run(
        [str(ROOT / "scripts" / script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=_env(MAES_UPSTREAM_BASE=REFUSED, MAES_LAUNCH_PREFIX=str(tmp_path / "prefix"), **env),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return (out.stdout + out.stderr).strip().splitlines()


def test_without_wheels_or_network_launch_setup_goes_on_and_says_so_once(
    tmp_path: Path, venv_ready
) -> None:
    absent = tmp_path / "no" / "ros-jazzy-launch"
    lines = _run_offline("setup_launch.sh", tmp_path, MAES_LAUNCH_WHEELS=str(absent))
    assert len(lines) == 1, lines
    assert f"no ROS 2 launch wheels at {absent}" in lines[0]
    assert "requirements/launch-sources.txt" in lines[0]
    assert f"{REFUSED}/ros2/launch/archive/refs/tags/3.4.3.tar.gz" in lines[0]
    assert f"{REFUSED}/ros2/rcl_interfaces/archive/refs/tags/2.0.2.tar.gz" in lines[0]
    assert "Docker image" in lines[0] and "apt install of ROS 2 Jazzy" in lines[0]
    prefix = tmp_path / "prefix"
    assert (prefix / ".maes-launch-sources").is_file()  # the Makefile's stamp: not again
    assert "ros2/launch_ros" in (prefix / ".maes-launch-absent").read_text()  # the tests quote it
    assert not (prefix / "install").exists()


def test_without_wheel_or_network_commander_setup_goes_on_and_says_so_once(
    tmp_path: Path, venv_ready
) -> None:
    absent = tmp_path / "no" / "nav2-simple-commander"
    lines = _run_offline("setup_commander.sh", tmp_path, MAES_NAV2_COMMANDER_WHEELS=str(absent))
    assert len(lines) == 1, lines
    assert f"no nav2_simple_commander wheel at {absent}" in lines[0]
    assert f"{REFUSED}/ros-navigation/navigation2/archive/refs/tags/1.3.13.tar.gz" in lines[0]
    prefix = tmp_path / "prefix"
    assert (prefix / ".maes-commander-sources").is_file()
    assert (prefix / ".maes-commander-absent").is_file()
    # scripts/env.sh reads that note: MAES_NAV2_COMMANDER_ABSENT=1 there, and only there.
    flags = []
    for prefix_dir in (prefix, tmp_path / "elsewhere"):
        shell = subprocess.run(
            ["bash", "-c", 'source scripts/env.sh && echo "${MAES_NAV2_COMMANDER_ABSENT:-unset}"'],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env=_env(MAES_LAUNCH_PREFIX=str(prefix_dir), MAES_NAV2_COMMANDER_ABSENT="1"),
        )
        flags.append(shell.stdout.strip())
    assert flags == ["1", "unset"]


def _make(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(**env),
    )


@pytest.mark.parametrize(
    ("variable", "stamp", "script", "from_wheels", "from_sources"),
    [
        (
            "MAES_LAUNCH_WHEELS",
            "LAUNCH_STAMP",
            "scripts/setup_launch.sh",
            ".ros-launch/install/.maes-launch-ok",
            ".ros-launch/.maes-launch-sources",
        ),
        (
            "MAES_NAV2_COMMANDER_WHEELS",
            "COMMANDER_STAMP",
            "scripts/setup_commander.sh",
            ".ros-launch/.maes-commander-wheel",
            ".ros-launch/.maes-commander-sources",
        ),
    ],
)
def test_make_picks_the_step_by_whether_the_folder_holds_wheels(
    tmp_path: Path, variable: str, stamp: str, script: str, from_wheels: str, from_sources: str
) -> None:
    # Make's own answer, whatever stamps this work tree's setup wrote (a clone without the
    # wheels has the sources stamp, a developer's tree the wheels one).
    (tmp_path / "empty").mkdir()
    full = tmp_path / "full"
    full.mkdir()
    (full / "nav2_simple_commander-1.0.0-py3-none-any.whl").write_bytes(b"")
    (full / "launch-3.4.3-py3-none-any.whl").write_bytes(b"")
    for folder, expected in (
        (tmp_path / "none", from_sources),  # absent
        (tmp_path / "empty", from_sources),  # without wheels
        (full, from_wheels),
    ):
        chosen = _make("-s", f"print-{stamp}", **{variable: str(folder)})
        assert chosen.stdout.strip() == expected, (folder, chosen.stdout, chosen.stderr)
        # -n: print what would run, run nothing; -B: as if nothing were built yet.
        setup = _make("-n", "-B", "_setup", **{variable: str(folder)})
        assert setup.returncode == 0 and script in setup.stdout, setup.stdout + setup.stderr
