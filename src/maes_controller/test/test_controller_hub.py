"""The controllers of one process reporting through one hub (``controller_container``), over real
DDS: one lockstep report per tick for all of them, the same run as controllers on their own, and
a controller that leaves is not waited for."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from maes_common.contract import TICK_DONE_TOPIC  # noqa: E402
from maes_common.lockstep import LEAVE  # noqa: E402
from maes_common.qos import LOCKSTEP_READER_QOS  # noqa: E402
from maes_controller.robot_api import load_logic  # noqa: E402
from maes_interfaces.msg import TickDone  # noqa: E402
from maes_sim.core import Simulation  # noqa: E402

EXPLORER = "maes_controller.algorithms.frontier_explorer:logic"
ROBOTS = 3


def _run(stack, tools, hub, ticks: int = 60):
    """A 3-robot frontier-explorer run in lockstep; the stack, the simulation and every
    controller report heard on /maes/tick_done."""
    sim = Simulation(tools.config(ROBOTS, seed=4, size=20))
    s = stack(sim, logic=load_logic(EXPLORER), hub=hub)
    reports: list[TickDone] = []
    s.client.create_subscription(
        TickDone,
        TICK_DONE_TOPIC,
        lambda msg: reports.append(msg) if msg.role == "controller" else None,
        LOCKSTEP_READER_QOS,
    )
    s.wait_ready()
    s.start = sim.poses.copy()
    s.step(ticks)
    return s, sim, reports


def test_a_hub_reports_each_tick_once_for_all_its_controllers_and_the_run_is_the_same(stack, tools):
    s, sim, reports = _run(stack, tools, hub=True)
    assert s.hub is not None and all(c.hub is s.hub for c in s.controllers.values())
    # every controller report is the hub's: it joined for each controller as it joined, and
    # reports each tick for all three robots
    assert {r.participant for r in reports} == {"/controllers"}
    assert all(r.tick == -1 for r in reports[:-1] if len(r.robots) < ROBOTS)
    assert all(list(r.robots) == [0, 1, 2] for r in reports if r.tick >= 0)
    # one report per tick: after joining, each tick once, in order, up to the current one
    ticks = [r.tick for r in reports if r.tick >= 0]
    assert ticks == sorted(set(ticks)) and ticks[-1] == sim.tick
    assert ticks == list(range(ticks[0], sim.tick + 1))
    # with the robots' counts: the logic ran every tick, and the robots were driven
    last = reports[-1]
    assert list(last.logic_calls) == [c.calls for c in s.controllers.values()]
    assert all(n >= len(ticks) for n in last.logic_calls)
    assert list(last.logic_failures) == [0, 0, 0]
    assert list(last.cmd_vel_sent) == [c.robot.cmd_vel_sent for c in s.controllers.values()]
    moved = sim.poses.copy()
    calls = [c.calls for c in s.controllers.values()]
    s.close()

    s2, sim2, reports2 = _run(stack, tools, hub=False)
    # on their own, each controller reports for itself ...
    assert {r.participant for r in reports2} == {f"/robot{i}/maes_controller" for i in range(3)}
    # ... and the run is the same to the bit (the robots explored: they moved)
    assert sim2.tick == sim.tick
    assert sim2.poses.tobytes() == moved.tobytes()
    assert [c.calls for c in s2.controllers.values()] == calls
    assert abs(moved[:, :2] - s2.start[:, :2]).max() > 0.5


def test_a_controller_that_leaves_the_hub_is_not_waited_for_and_the_last_leaves_it(stack, tools):
    s, sim, reports = _run(stack, tools, hub=True, ticks=10)
    gone = s.controllers.pop(1)
    s.executor.remove_node(gone)
    s.nodes.remove(gone)
    gone.destroy_node()
    s.step(10)  # the navigator and the simulator no longer wait for robot 1's controller
    after = [r for r in reports if r.tick >= 0 and list(r.robots) == [0, 2]]
    assert after and after[-1].tick == sim.tick
    assert s.navigator.robots[1].controller_tick >= 2**62
    assert s.sim_node.admission.barrier.controlled_robots() == [0, 2]
    for i in (0, 2):
        node = s.controllers.pop(i)
        s.executor.remove_node(node)
        s.nodes.remove(node)
        node.destroy_node()
    s.spin_until(lambda: reports[-1].tick == LEAVE, timeout=10.0)
    # robot 0's controller left first, then the last one: the hub left with it
    assert [(r.tick, list(r.robots)) for r in reports[-2:]] == [(sim.tick, [2]), (LEAVE, [2])]
    assert s.spin_until(lambda: s.sim_node.admission.barrier.controlled_robots() == [])
    assert s.spin_until(lambda: all(ns.controller_tick >= 2**62 for ns in s.navigator.robots))


def test_two_hubs_of_other_robots_run_side_by_side(stack, tools):
    """Two containers of disjoint robots (``/controllers_0`` for robot 0, ``/controllers_1`` for
    robots 1 and 2): two participants, each reporting every tick once for its own robots; the run
    is the one of a single hub."""
    s, sim, reports = _run(stack, tools, hub=[[0], [1, 2]])
    by_hub = {
        name: [r for r in reports if r.participant == name and r.tick >= 0]
        for name in ("/controllers_0", "/controllers_1")
    }
    assert {r.participant for r in reports} == set(by_hub)
    assert {tuple(r.robots) for r in by_hub["/controllers_0"]} == {(0,)}
    assert {tuple(r.robots) for r in by_hub["/controllers_1"]} == {(1, 2)}
    for rows in by_hub.values():
        ticks = [r.tick for r in rows]
        assert ticks == list(range(ticks[0], sim.tick + 1))
    two = sim.poses.copy()
    s.close()
    _, sim1, _ = _run(stack, tools, hub=True)
    assert sim1.tick == sim.tick and sim1.poses.tobytes() == two.tobytes()


def test_a_hub_held_back_says_which_controllers_hold_it_and_why(stack, tools):
    """A controller that no longer runs the logic (here: its run over for it, as when it took
    the simulator for gone) holds the hub's report, and so the run, back without a word of its
    own: the hub names it and says why (controller_container logs this every input timeout)."""
    s, sim, reports = _run(stack, tools, hub=True, ticks=5)
    assert s.hub.late() == [] and s.hub.check_late(0.01) is None  # all caught up
    held = s.controllers[1]
    held.run.joined = True
    held.run.simulator_gone()
    assert held.run.over is not None
    s.sim_node.step_once()
    assert not s.spin_until(s.settled, timeout=2.0), "robot1's controller held nothing back"
    assert [i for i, _ in s.hub.late()] == [1]
    line = s.hub.check_late(0.01)
    assert line is not None and line.startswith(f"tick {sim.tick}: 1 of 3 controllers")
    assert "robot1: it runs no more ticks: run" in line and "simulator left the ROS graph" in line
    assert s.hub.check_late(60.0) is None  # said once per timeout
