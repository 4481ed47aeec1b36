"""Two runs on one ROS domain (issue 23): the second stops at once, the first is untouched.

Real processes over DDS, in the test run's own ROS domain: a ``maes_run`` (``make run``) runs;
a second ``maes_run`` on the same domain must stop before starting anything, with one line
naming the domain and how to choose another, and a non-zero exit; ``--domain auto`` picks a
free domain instead and says which; and the first run's ``statistics.csv`` equals a lone run's.
A ``controller_node`` facing two simulators on its domain refuses to guess which to join.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

REPO = Path(__file__).resolve().parents[3]
MAES_RUN = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
SIM_NODE = REPO / "install" / "maes_sim" / "lib" / "maes_sim" / "maes_sim_node"
CONTROLLER = REPO / "install" / "maes_controller" / "lib" / "maes_controller" / "controller_node"
TICKS = 250
CONFIG = f"""\
number_of_robots: 2
random_seeds: [5]
map: {{width_in_tiles: 20, height_in_tiles: 20}}
results: {{pictures: false}}  # no result pictures: this test does not look at them
end_criteria: {{exploration_percent: null, tick: {TICKS}}}
global_settings: {{ticks_per_stats_snapshot: 5, should_write_csv_results: true}}
"""
BOUND_S = 240.0


def _maes_run(config: Path, results: Path, log: Path, *args: str) -> subprocess.Popen:
    with open(log, "w") as stream:
        return subprocess.Popen(
            [str(MAES_RUN), "--config", str(config), "--results", str(results), *args],
            stdout=subprocess.DEVNULL,
            stderr=stream,
        )


def _stepping(proc: subprocess.Popen, log: Path) -> None:
    """Wait until the run has stepped (its progress line shows a tick > 0)."""
    end = time.monotonic() + BOUND_S
    while not re.search(r"^tick +[1-9]\d* ", log.read_text(), re.M):
        assert proc.poll() is None and time.monotonic() < end, log.read_text()[-3000:]
        time.sleep(0.2)


def _trigger(service: str) -> None:
    """Call the ``std_srvs/Trigger`` service ``service`` (the simulator's pause or resume) from
    a node of its own, as ``ros2 service call`` would; fails unless it answers success."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import Trigger

    context = Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("one_run_per_domain_test", context=context)
        client = node.create_client(Trigger, service)
        assert client.wait_for_service(timeout_sec=BOUND_S), f"no {service}"
        future = client.call_async(Trigger.Request())
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        executor.spin_until_future_complete(future, timeout_sec=BOUND_S)
        assert future.done() and future.result().success, f"{service}: {future.result()}"
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


@pytest.fixture(autouse=True)
def full_probe_window(monkeypatch):
    """The probe's own default window (the root conftest shortens it for the other tests)."""
    monkeypatch.delenv("MAES_DOMAIN_PROBE_S", raising=False)


@pytest.fixture
def started():
    procs: list[subprocess.Popen] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_a_second_run_on_a_busy_domain_stops_and_the_first_is_untouched(tmp_path, started):
    assert MAES_RUN.exists(), "workspace not built (make setup)"
    config = tmp_path / "run.yaml"
    config.write_text(CONFIG)
    lone = subprocess.run(
        [str(MAES_RUN), "--config", str(config), "--results", str(tmp_path / "lone")]
        + ["--real-time-factor", "0"],
        capture_output=True,
        text=True,
        timeout=BOUND_S,
    )
    assert lone.returncode == 0, lone.stderr[-3000:]
    # The first run, paused once it steps (its pause service), so that it is still running
    # while the others start, however long they take; capped at real time until then.
    first_log = tmp_path / "first.log"
    first = _maes_run(config, tmp_path / "first", first_log, "--real-time-factor", "1")
    started.append(first)
    _stepping(first, first_log)
    _trigger("/maes/pause")

    second = subprocess.run(
        [str(MAES_RUN), "--config", str(config), "--results", str(tmp_path / "second")],
        capture_output=True,
        text=True,
        timeout=BOUND_S,
    )
    domain = os.environ["ROS_DOMAIN_ID"]
    assert second.returncode == 4, second.stderr[-3000:]
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr  # one line, and nothing started
    assert lines[0].startswith(f"maes_run: ROS domain {domain} is in use by another MAES-ROS run")
    assert "simulator /maes_sim" in lines[0] and "ROS_DOMAIN_ID=<n> make run" in lines[0]
    assert not (tmp_path / "second").exists()

    auto_log = tmp_path / "auto.log"
    auto = _maes_run(
        config, tmp_path / "auto", auto_log, "--domain", "auto", "--real-time-factor", "0"
    )
    started.append(auto)
    assert auto.wait(timeout=BOUND_S) == 0, auto_log.read_text()[-3000:]
    said = re.search(
        rf"maes_run: ROS domain {domain} is in use by another MAES-ROS run \(.*\); this run "
        r"uses ROS domain (\d+)",
        auto_log.read_text(),
    )
    # It found the first run (so both ran at once, on two domains) and went elsewhere.
    assert said and said.group(1) != domain, auto_log.read_text()[-3000:]
    _trigger("/maes/resume")

    assert first.wait(timeout=BOUND_S) == 0, first_log.read_text()[-3000:]
    (lone_folder,) = (tmp_path / "lone").iterdir()
    expected = (lone_folder / "statistics.csv").read_bytes()
    assert expected.count(b"\n") > TICKS // 10
    for name in ("first", "auto"):
        (folder,) = (tmp_path / name).iterdir()
        assert (folder / "statistics.csv").read_bytes() == expected, name


def test_a_controller_facing_two_simulators_refuses_to_pick_one(tmp_path, started):
    assert SIM_NODE.exists() and CONTROLLER.exists(), "workspace not built (make setup)"
    config = tmp_path / "run.yaml"
    config.write_text(CONFIG.replace(f"tick: {TICKS}", "tick: null"))
    for k in range(2):  # maes_sim_node alone does not look at the domain; the launch does
        sim = subprocess.Popen(
            [str(SIM_NODE), "--ros-args", "-p", f"config_file:={config}"]
            + ["-p", f"results_dir:={tmp_path / f'sim{k}'}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(sim)
    import rclpy  # both simulators up (a controller started earlier would wait for them)
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("two_sims_watcher", context=context)
        end = time.monotonic() + BOUND_S
        while node.count_publishers("/maes/tick") < 2:
            assert time.monotonic() < end and all(p.poll() is None for p in started)
            time.sleep(0.2)
        node.destroy_node()
    finally:
        context.try_shutdown()
    controller = subprocess.run(
        [str(CONTROLLER), "--ros-args", "-p", "robot_id:=0"],
        capture_output=True,
        text=True,
        timeout=BOUND_S,
    )
    assert controller.returncode == 3, controller.stderr[-3000:]
    assert re.search(
        rf"controller_node: ROS domain {os.environ['ROS_DOMAIN_ID']} holds 2 MAES-ROS "
        r"simulators \(simulator /maes_sim, simulator /maes_sim\).*ROS_DOMAIN_ID=<n> make run",
        controller.stderr,
    ), controller.stderr
    for sim in started:
        sim.send_signal(signal.SIGINT)


@pytest.mark.parametrize("program", ["maes_run", "controller_node"])
def test_a_bad_probe_window_is_one_line_naming_the_variable(tmp_path, program):
    config = tmp_path / "run.yaml"
    config.write_text(CONFIG)
    argv = (
        [str(MAES_RUN), "--config", str(config), "--results", str(tmp_path / "out")]
        if program == "maes_run"
        else [str(CONTROLLER), "--ros-args", "-p", "robot_id:=0"]
    )
    out = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
        env={**os.environ, "MAES_DOMAIN_PROBE_S": "soon"},
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        f"{program}: MAES_DOMAIN_PROBE_S must be a number of seconds > 0, got 'soon'"
    ), out.stderr
    assert not (tmp_path / "out").exists()  # nothing ran
