"""Fixtures of maes_bringup's tests: a real headless Chromium for the web page's tests,
``maes_run`` as a user runs it (``run_maes``), and a logic that floods the services
(``burst_logic``), and the installed ``maes_run`` on a small map (``maes_run_small``).

Without a ``chromium`` on PATH those tests skip, saying how to install it
(``scripts/setup_browser.sh``); under CI (``CI`` set) they fail instead, since ``.ci/run``
installs it first. Without playwright they fail: ``make setup`` installs it
(requirements/venv.txt), so its absence is a broken environment, not a missing browser.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def browser_page():
    """A playwright page in Debian's headless Chromium (1280 x 800), closed after the test."""
    from maes_sim.watch import INSTALL_HINT, chromium_path, open_page

    if chromium_path() is None:
        why = f"the web page's tests drive a real Chromium: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(f"{why} (.ci/run runs it before the tests)")
        pytest.skip(why)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        why = f"playwright is missing ({exc}): make setup installs it (requirements/venv.txt)"
        pytest.fail(why)
    with open_page() as page:
        yield page


def _run_maes(tmp: Path, *args: str, timeout: float = 600.0) -> Path:
    """``maes_run`` (``make run``'s program) as a subprocess on ``tmp/c.yaml`` as fast as it
    goes, with ``args``; modules in ``tmp`` importable (a test's logic) and
    ``MAES_TEST_RECORD=tmp/ros_record`` (where a test's recording logic writes). Fails with the
    end of its output unless it exits 0 within ``timeout`` s; returns the run's results folder."""
    out = tmp / "ros"
    env = dict(
        os.environ,
        PYTHONPATH=f"{tmp}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        MAES_TEST_RECORD=str(tmp / "ros_record"),
    )
    argv = [sys.executable, "-m", "maes_bringup.runners.embedded", "--config", str(tmp / "c.yaml")]
    argv += ["--results", str(out), "--real-time-factor", "0", *args]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (folder,) = out.iterdir()
    return folder


@pytest.fixture(scope="session")
def run_maes() -> Callable[..., Path]:
    """``run_maes(tmp, *args, timeout=600)``: ``maes_run`` on ``tmp/c.yaml``, its results
    folder (:func:`_run_maes`)."""
    return _run_maes


REPO = Path(__file__).resolve().parents[3]


def _maes_run_small(
    tmp: Path, logic: str, *, ticks: int, spawn: str, size: int
) -> subprocess.CompletedProcess:
    """The installed ``maes_run`` (the embedded ROS stack: sim, navigator and controller nodes,
    DDS) as a user starts it, with ``--logic logic``, as fast as it goes: 3 robots, seed 1, a
    ``size`` x ``size`` cave, spawn key ``spawn`` (``spawn_together`` or ``biggest_room``),
    ``ticks`` ticks, no SLAM pose error, no pictures, results under ``tmp/results``. Returns
    the finished process (its output captured) for the test's own checks."""
    cfg = tmp / "run.yaml"
    spawn_value = "{}" if spawn == "spawn_together" else "true"
    cfg.write_text(
        "number_of_robots: 3\n"
        "random_seeds: [1]\n"
        f"global_settings:\n  statistics_result_path: {tmp / 'results'}\n"
        "robot_constraints:\n  slam_position_inaccuracy: 0.0\n"
        f"end_criteria:\n  tick: {ticks}\n"
        f"robot_spawn_config:\n  {spawn}: {spawn_value}\n"
        f"map:\n  width_in_tiles: {size}\n  height_in_tiles: {size}\n  cave_config: {{}}\n"
        "results: {pictures: false}\n"
    )
    exe = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
    return subprocess.run(
        [str(exe), "--config", str(cfg), "--logic", logic, "--real-time-factor", "0"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="session")
def maes_run_small() -> Callable[..., subprocess.CompletedProcess]:
    """``maes_run_small(tmp, logic, ticks=, spawn=, size=)``: the installed ``maes_run`` on a
    3-robot cave (:func:`_maes_run_small`)."""
    return _maes_run_small


#: A logic that asks for far more broadcasts and tags in one call than anyone would.
BURST_LOGIC = """
def logic(robot):
    if robot.tick == 3:
        for k in range(3000):
            robot.broadcast_msg(f"burst {k}")
        for k in range(1000):
            robot.deposit_tag(f"tag {k}")
"""


@pytest.fixture
def burst_logic(tmp_path: Path) -> str:
    """The spec (``file.py:logic``) of a logic that asks, at tick 3, for 3000 broadcasts and
    1000 tags in one call."""
    path = tmp_path / "burst.py"
    path.write_text(BURST_LOGIC)
    return f"{path}:logic"
