"""The controller node over real DDS: the logic callback, the robot API, errors in user code."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from rclpy.context import Context  # noqa: E402

from maes_controller.nodes.controller_node import (  # noqa: E402
    SIMULATOR_CHECK_PERIOD,
    SIMULATOR_GONE_S,
    ControllerNode,
)
from maes_controller.robot_api import NavStatus, Robot  # noqa: E402
from maes_sim.core import Simulation  # noqa: E402


def test_callback_runs_once_per_tick_with_that_ticks_state(stack, tools):
    seen = []

    def logic(robot):
        seen.append((robot.tick, robot.state.tick, robot.namespace))

    sim = Simulation(tools.config(2))
    s = stack(sim, navigator=False, logic={1: logic})
    s.wait_ready()
    first = sim.tick
    s.step(40)
    ticks = [t for t, _, _ in seen]
    assert ticks[-1] == sim.tick and ticks[-41:] == list(range(first, sim.tick + 1))
    assert all(t == st and ns == "robot1" for t, st, ns in seen)
    assert s.controllers[1].calls == len(seen) and s.controllers[1].errors == 0


@pytest.mark.slow
def test_a_simulator_gone_without_a_word_ends_the_run_for_the_controller(stack, tools):
    """The backstop for an end announcement that never arrives (a lost last manifest, a killed
    simulator): once ``/maes/tick`` has had no publisher for a while, the run is over."""
    sim = Simulation(tools.config(1))
    s = stack(sim, navigator=False, logic=lambda robot: None)
    s.wait_ready()
    s.step(3)
    ctl = s.controllers[0]
    s.spin_for(3 * SIMULATOR_CHECK_PERIOD)  # the simulator is there: nothing ends
    assert ctl.run.over is None and ctl.run.joined
    s.executor.remove_node(s.sim_node)
    s.nodes.remove(s.sim_node)
    s.sim_node.destroy_node()  # no end manifest: gone without a word
    assert s.spin_until(lambda: ctl.run.over is not None, timeout=SIMULATOR_GONE_S + 20)
    assert ctl.run.over == (
        f"run {ctl.run.run_id} ended: its simulator left the ROS graph (its end announcement, "
        "if any, did not arrive)"
    )


def test_robot_api_pose_costmap_and_protocol(stack, tools):
    snapshots = []

    def logic(robot):
        snapshots.append(
            (
                robot.tick,
                robot.robot_position,
                robot.robot_heading,
                robot.global_costmap.costmap is not None,
            )
        )

    cfg = tools.config(
        1, world={"tile_size": 0.5}, robot_constraints={"slam_position_inaccuracy": 0.0}
    )
    sim = Simulation(cfg)
    s = stack(sim, logic=logic)
    s.wait_ready()
    s.step(15)  # past a SLAM update: the navigator has published a costmap
    robot = s.controllers[0].robot
    assert isinstance(robot, Robot)
    tick, position, heading, has_costmap = snapshots[-1]
    true = sim.poses[0]
    assert position == pytest.approx((true[0] * 0.5, true[1] * 0.5), abs=1e-6)
    assert math.cos(heading - true[2]) == pytest.approx(1.0)
    assert has_costmap and robot.global_costmap.resolution == 0.5
    cell = robot.global_costmap.pos_to_cell(*position)
    assert robot.global_costmap.is_free(*cell)
    assert robot.nav_status is NavStatus.IDLE and robot.is_nav_complete()


def test_navigation_from_the_callback_succeeds_cancels_and_fails(stack, tools):
    log = []

    def logic(robot):
        m = robot.memory
        phase = m.setdefault("phase", 0)
        log.append((robot.tick, robot.nav_status, robot.nav_feedback is not None))
        if phase == 0:
            robot.nav_to_pos(3.0, 0.0)
        elif phase == 2:
            if robot.tick < m["sent_at"] + 10:
                return
            robot.cancel_nav()
        elif robot.is_nav_complete() and phase < 5:
            m.setdefault("outcomes", []).append((robot.nav_status, robot.nav_error))
            m["sent_at"] = robot.tick
            if phase == 1:
                robot.nav_to_pos(-3.0, 1.0)
            elif phase == 3:
                robot.nav_to_pos(50.0, 0.0)  # outside the map
        else:
            return
        m["phase"] = phase + 1

    sim = Simulation(
        tools.config(1, robot_constraints={"slam_position_inaccuracy": 0.0}),
        world=tools.room(8, 12),
    )
    tools.place(sim, [(2.5, 4.5)])
    s = stack(sim, logic=logic)
    s.wait_ready()
    robot = s.controllers[0].robot
    s.step_until(lambda: len(robot.memory.get("outcomes", [])) == 3, max_ticks=400)
    (ok, _), (canceled, _), (failed, error) = robot.memory["outcomes"]
    assert (ok, canceled, failed) == (NavStatus.SUCCEEDED, NavStatus.CANCELED, NavStatus.ABORTED)
    assert "204" in error and "outside" in error
    statuses = [st for _, st, _ in log]
    # Lockstep: a goal's acceptance arrives before the next tick's callback, every time.
    assert NavStatus.ACTIVE in statuses and NavStatus.PENDING not in statuses
    assert any(fb for _, st, fb in log if st is NavStatus.ACTIVE)  # feedback while driving
    assert not any(st is NavStatus.REJECTED for st in statuses)


def test_broadcasts_and_tags_from_the_callback_reach_the_simulator(stack, tools):
    heard, sent = [], []

    def talker(robot):
        if robot.tick % 5 == 0:
            sent.append(robot.tick)
            robot.broadcast_msg(f"hello {robot.tick}")
            robot.deposit_tag(f"tag {robot.tick}")

    def listener(robot):
        heard.extend((robot.tick, m.sender, m.msg) for m in robot.state.incoming_broadcast_msgs)

    sim = Simulation(tools.config(2), world=tools.room(8, 12))
    tools.place(sim, [(2.5, 4.5), (5.5, 4.5)])
    s = stack(sim, navigator=False, logic={0: talker, 1: listener})
    s.wait_ready()
    s.step(22)
    s.spin_for(0.5)  # the last requests reach the simulator
    assert len(sent) >= 4
    # Every tag the callback deposited is in the simulator's store, with its sender.
    assert [t.msg for t in sim.tags.tags] == [f"tag {t}" for t in sent]
    assert {t.sender for t in sim.tags.tags} == {"robot0"}
    # Every broadcast but the last reached the other robot within two ticks of being sent.
    got = {m: t for t, sender, m in heard if sender == "robot0"}
    assert [f"hello {t}" for t in sent[:-1]] == sorted(got, key=lambda m: int(m.split()[1]))[
        : len(sent) - 1
    ]
    assert all(0 < got[f"hello {t}"] - t <= 2 for t in sent[:-1])
    near = s.controllers[1].robot.state.tags_nearby
    assert any(tag.msg.startswith("tag ") and tag.sender == "robot0" for tag in near)


def test_a_raising_callback_is_logged_and_the_node_keeps_running(stack, tools, capfd):
    def broken(robot):
        robot.memory["n"] = robot.memory.get("n", 0) + 1
        raise ZeroDivisionError(f"boom at tick {robot.tick}")

    healthy = []
    sim = Simulation(tools.config(2))
    s = stack(sim, logic={0: broken, 1: lambda robot: healthy.append(robot.tick)})
    s.wait_ready()
    before = sim.tick
    s.step(30)
    node = s.controllers[0]
    assert node.calls == node.errors == node.robot.memory["n"] >= 31
    assert healthy[-31:] == list(range(before, sim.tick + 1))
    assert sim.tick == before + 30 and not s.sim_node.done
    err = capfd.readouterr().err
    assert "logic callback raised" in err and "ZeroDivisionError: boom at tick" in err
    assert "Traceback" in err and "in broken" in err
    assert err.count("logic callback raised") < node.errors  # throttled


def test_requests_left_unanswered_are_named_and_the_tick_waits_for_them(stack, tools, capfd):
    """A lost answer holds lockstep at its tick: the controller says which requests it waits
    for, and reports the tick once they are answered."""
    armed = []

    def logic(robot):
        if armed and not robot.memory.get("sent"):
            robot.memory["sent"] = robot.tick
            robot.broadcast_msg("hello")
            robot.deposit_tag("here")

    sim = Simulation(tools.config(1))
    s = stack(sim, navigator=False, logic=logic)
    s.wait_ready()
    ctl = s.controllers[0]
    ctl.input_timeout = 0.5
    s.executor.remove_node(s.sim_node)  # the simulator answers nothing for now
    armed.append(True)
    s.sim_node.step_once()
    assert s.spin_until(lambda: ctl.robot.memory.get("sent") == sim.tick)
    s.spin_for(1.5)
    assert ctl.reported_tick == sim.tick - 1 and ctl.robot.unanswered() == ["1 broadcast", "1 tag"]
    err = capfd.readouterr().err
    assert (
        f"tick {sim.tick}: requests unanswered 0.5 s after the logic sent them (1 broadcast, "
        "1 tag); the tick is reported once they are answered"
    ) in err
    s.executor.add_node(s.sim_node)  # the answers come: the tick is reported, the run goes on
    assert s.spin_until(s.settled)
    assert ctl.reported_tick == sim.tick and ctl.robot.unanswered() == []
    s.step(3)
    assert "requests unanswered" not in capfd.readouterr().err


def test_a_controller_joining_after_its_logic_ran_reports_that_tick(stack, tools):
    """A simulator that does not wait for controllers steps on while a controller has not
    joined (its navigator not found yet) and the controller's logic already runs on each tick.
    When it joins, the simulator waits for its report of the current tick: the controller
    sends it at once (CI: without it, a console-script run stalled at the tick of the join)."""
    from maes_common.lockstep import JOIN

    ran = []
    sim = Simulation(tools.config(1))
    s = stack(sim, navigator=False)  # a simulator alone: nobody to wait for
    s.wait_ready()
    # wait_for_navigator with no navigator: runs the logic, cannot join (the late navigator)
    ctl = ControllerNode(0, lambda robot: ran.append(robot.tick), context=s.ctx)
    s.add_node(ctl)
    assert s.spin_until(lambda: s.sim_node.count_subscribers("/robot0/maes_state") >= 1)
    for _ in range(3):
        s.sim_node.step_once()
        assert s.spin_until(lambda: ran and ran[-1] == sim.tick), "the logic did not run"
    assert ctl.reported_tick < JOIN and ran[-1] == sim.tick
    ctl.wait_for_navigator = False  # the navigator is found: the controller joins
    assert s.spin_until(lambda: ctl.reported_tick == sim.tick), "the tick was never reported"
    s.caught_up.append(lambda: ctl.reported_tick >= sim.tick)
    before = sim.tick
    s.step(3)  # the simulator now waits for the controller, which keeps up
    assert ran[-4:] == list(range(before, before + 4)) and ctl.reported_tick == before + 3


def test_calls_without_a_navigator_or_services_do_not_block(tools):
    from rclpy import init, shutdown

    ctx = Context()
    init(context=ctx)
    try:
        node = ControllerNode(0, lambda robot: None, context=ctx)
        robot = node.robot
        robot.nav_to_pos(1.0, 2.0)
        assert robot.nav_status is NavStatus.REJECTED and "not available" in robot.nav_error
        assert robot.is_nav_complete()
        robot.broadcast_msg("nobody listens")
        robot.deposit_tag("nobody serves")
        robot.cancel_nav()
        assert robot.robot_position is None and robot.global_costmap.costmap is None
        assert node.get_namespace() == "/robot0"
        assert node.get_parameter("use_sim_time").value is True
        node.destroy_node()
    finally:
        shutdown(context=ctx)


@pytest.mark.parametrize(
    "robot_id, logic, match",
    [
        (-1, lambda r: None, "robot_id must be an int >= 0"),
        (True, lambda r: None, "robot_id must be an int >= 0"),
        (0, "no_such_module:logic", "cannot import logic module 'no_such_module'"),
        (
            0,
            "maes_controller.algorithms.frontier_explorer:nothing",
            "'nothing' in 'maes_controller.algorithms.frontier_explorer'",
        ),
        (0, 42, "logic must be callable"),
    ],
)
def test_bad_arguments_raise_naming_the_value(robot_id, logic, match):
    with pytest.raises(ValueError, match=match):
        ControllerNode(robot_id, logic, context=Context())


def test_shipped_logic_is_the_default(tools):
    from rclpy import init, shutdown

    from maes_controller.algorithms import frontier_explorer as shipped

    ctx = Context()
    init(context=ctx)
    try:
        node = ControllerNode(3, context=ctx)
        assert node.logic is shipped.logic and node.get_namespace() == "/robot3"
        node.destroy_node()
    finally:
        shutdown(context=ctx)


@pytest.mark.slow
def test_console_scripts_run_the_stack_as_processes(tmp_path):
    """maes_sim_node + navigator_node + controller_node (shipped logic) as separate processes."""
    import subprocess
    import time
    from pathlib import Path

    from rclpy import init, shutdown
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from maes_interfaces.msg import Stats

    prefix = Path(__file__).resolve().parents[3] / "install"
    exe = {
        name: prefix / pkg / "lib" / pkg / name
        for pkg, name in (
            ("maes_sim", "maes_sim_node"),
            ("maes_bringup", "navigator_node"),
            ("maes_controller", "controller_node"),
        )
    }
    if not all(p.exists() for p in exe.values()):
        pytest.skip("console scripts not installed (make build)")
    config = tmp_path / "run.yaml"
    config.write_text(
        "number_of_robots: 1\nrandom_seeds: [3]\nend_criteria:\n  tick: null\n"
        "  exploration_percent: null\nglobal_settings:\n"
        "  should_write_csv_results: false\n"
    )
    cfg = f"config_file:={config}"
    procs = [
        subprocess.Popen(
            [str(exe["maes_sim_node"]), "--ros-args", "-p", cfg, "-p", "real_time_factor:=1.0"]
        ),
        subprocess.Popen([str(exe["navigator_node"]), "--ros-args", "-p", cfg]),
        subprocess.Popen([str(exe["controller_node"]), "--ros-args", "-p", "robot_id:=0"]),
    ]
    ctx = Context()
    init(context=ctx)
    node = Node("stats_reader", context=ctx)
    stats: list = []
    node.create_subscription(Stats, "/maes/stats", stats.append, 10)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    try:
        end = time.monotonic() + 90.0
        while time.monotonic() < end and not (stats and stats[-1].distance_travelled[0] > 2.0):
            executor.spin_once(timeout_sec=0.1)
            assert all(p.poll() is None for p in procs), "a node exited"
        assert stats and stats[-1].distance_travelled[0] > 2.0, "the robot did not drive"
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        executor.shutdown()
        node.destroy_node()
        shutdown(context=ctx)


def test_console_scripts_report_bad_parameters_clearly(tmp_path):
    import os
    import subprocess
    from pathlib import Path

    install = Path(__file__).resolve().parents[3] / "install"
    # The navigator's process reads the simulator's config, so it is maes_bringup's script.
    scripts = {
        name: install / pkg / "lib" / pkg / name
        for pkg, name in (
            ("maes_bringup", "navigator_node"),
            ("maes_controller", "controller_node"),
        )
    }
    if not all(p.exists() for p in scripts.values()):
        pytest.skip("console scripts not installed (make build)")
    bad = tmp_path / "bad.yaml"
    bad.write_text("number_of_robots: 2\nrobot_constraints:\n  agent_relative_sise: 0.5\n")
    runs = {
        "navigator_node": (["-p", f"config_file:={bad}"], "agent_relative_size"),
        "controller_node": (
            ["-p", "robot_id:=1", "-p", "logic:=no_such_pkg.mod:logic"],
            "cannot import logic module 'no_such_pkg.mod'",
        ),
    }
    for name, (args, expected) in runs.items():
        out = subprocess.run(
            [str(scripts[name]), "--ros-args", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=os.environ.copy(),
        )
        assert out.returncode == 2, (name, out.stderr)
        assert expected in out.stderr, (name, out.stderr)
