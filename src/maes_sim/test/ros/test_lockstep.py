"""The simulator node's side of lockstep: start barrier, reports, deadline (real DDS)."""

from __future__ import annotations

import gc
import time

import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from maes_common.lockstep import JOIN  # noqa: E402
from maes_common.qos import LOCKSTEP_READER_QOS, LOCKSTEP_WRITER_QOS, STATE_QOS  # noqa: E402
from maes_interfaces.msg import State, Tick, TickDone  # noqa: E402
from maes_sim.core import Simulation, config_from_dict  # noqa: E402
from maes_sim.ros.sim_node import SimNode  # noqa: E402


def _sim(n=2):
    return Simulation(
        config_from_dict(
            {
                "number_of_robots": n,
                "random_seeds": [1],
                "map": {"width_in_tiles": 20, "height_in_tiles": 20},
                "end_criteria": {"exploration_percent": None, "tick": None},
                "global_settings": {"should_write_csv_results": False},
            }
        )
    )


@pytest.fixture
def ros():
    # These tests read the ROS graph (who reads a robot's topics). A node an earlier test in
    # this process left to the garbage collector is still announced by its DDS participant
    # until collected: collect it now, so that only this test's nodes are seen.
    gc.collect()
    ctx = Context()
    rclpy.init(context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    nodes = []

    def add(node):
        nodes.append(node)
        ex.add_node(node)
        return node

    def spin(seconds=None, until=None, timeout=20.0):
        end = time.monotonic() + (seconds if seconds is not None else timeout)
        while time.monotonic() < end:
            if until is not None and until():
                return True
            ex.spin_once(timeout_sec=0.01)
        return until() if until is not None else True

    yield ctx, add, spin
    ex.shutdown()
    for node in nodes:
        node.destroy_node()
    rclpy.shutdown(context=ctx)


def test_start_barrier_waits_for_a_controller_on_every_robot(ros):
    ctx, add, spin = ros
    sim = _sim(2)
    node = add(
        SimNode(
            sim,
            real_time_factor=0,
            wait_for_controllers="connected",
            start_timeout=None,
            context=ctx,
        )
    )
    spin(1.5)
    assert not node.started and sim.tick == 0
    assert "robot0" in " ".join(node.start_missing())
    client = add(rclpy.create_node("external_controller", context=ctx))
    client.create_subscription(State, "/robot0/maes_state", lambda m: None, STATE_QOS)
    spin(1.0)
    assert not node.started, "robot1 has no controller yet"
    client.create_subscription(State, "/robot1/maes_state", lambda m: None, STATE_QOS)
    assert spin(until=lambda: node.started and sim.tick > 5)


def test_start_barrier_times_out_only_after_a_quiet_start_timeout(ros):
    """``start_timeout`` counts from the last thing the barrier waited for that arrived: a
    controller that arrives restarts it (a slow machine bringing up many controllers is
    waited for), and with nothing more arriving the run starts, with a warning naming what it
    starts without. Only lower bounds on wall time are asserted: a loaded machine delays."""
    ctx, add, spin = ros
    sim = _sim(2)
    timeout = 2.0
    node = add(
        SimNode(
            sim,
            real_time_factor=0,
            wait_for_controllers="connected",
            start_timeout=timeout,
            context=ctx,
        )
    )
    spin(1.5)
    assert not node.started
    client = add(rclpy.create_node("slow_controller", context=ctx))
    client.create_subscription(State, "/robot0/maes_state", lambda m: None, STATE_QOS)
    arrived = time.monotonic()
    assert spin(until=lambda: "robot0" not in " ".join(node.start_missing()))
    assert spin(until=lambda: node.started, timeout=30.0)
    # (after the node's creation the barrier would have timed out at 2.0 s; it waited on)
    assert time.monotonic() - arrived >= timeout - 0.05
    assert node.start_missing() == ["a controller subscribed to maes_state (robot1)"]


def test_a_joined_participant_holds_each_tick_until_it_reports(ros):
    ctx, add, spin = ros
    sim = _sim(1)
    node = add(SimNode(sim, real_time_factor=0, sync_timeout=0, context=ctx))
    part = add(rclpy.create_node("participant", context=ctx))
    pub = part.create_publisher(TickDone, "/maes/tick_done", LOCKSTEP_WRITER_QOS)
    manifests = []
    part.create_subscription(Tick, "/maes/tick", manifests.append, LOCKSTEP_READER_QOS)

    def report(tick):
        pub.publish(
            TickDone(
                run_id=node.admission.run_id,
                participant="/participant",
                role="controller",
                tick=tick,
                robots=[0],
                cmd_vel_sent=[0],
                results_sent=[0],
                feedback_sent=[0],
            )
        )

    report(JOIN)
    assert spin(until=lambda: node.admission.barrier.participants)  # joined before the run starts
    assert spin(until=lambda: node.started and manifests)
    start = sim.tick
    spin(1.0)
    assert sim.tick == start, "stepped without the participant's report"
    assert manifests[-1].lockstep and list(manifests[-1].lockstep_robots) == [0]
    for _ in range(5):
        report(sim.tick)
        tick = sim.tick
        assert spin(until=lambda tick=tick: sim.tick == tick + 1)
    assert sim.tick == start + 5
    assert node.admission.deadline_misses == 0


def _join(pub, name, run_id):
    pub.publish(
        TickDone(
            run_id=run_id,
            participant=name,
            role="controller",
            tick=JOIN,
            robots=[0],
            cmd_vel_sent=[0],
            results_sent=[0],
            feedback_sent=[0],
        )
    )


def test_a_slow_participant_still_running_is_waited_for_past_the_deadline(ros):
    """A loaded machine makes ticks slower, never different: a participant whose node is on
    the graph is not dropped however late it reports."""
    ctx, add, spin = ros
    sim = _sim(1)
    node = add(SimNode(sim, real_time_factor=0, sync_timeout=0.3, context=ctx))
    part = add(rclpy.create_node("slow", context=ctx))
    pub = part.create_publisher(TickDone, "/maes/tick_done", LOCKSTEP_WRITER_QOS)
    _join(pub, "/slow", node.admission.run_id)
    assert spin(until=lambda: node.admission.barrier.participants)
    assert spin(until=lambda: node.started)
    for _ in range(3):
        tick = sim.tick
        spin(1.0)  # more than three deadlines long
        assert sim.tick == tick, "stepped without the slow participant's report"
        pub.publish(
            TickDone(
                run_id=node.admission.run_id,
                participant="/slow",
                role="controller",
                tick=tick,
                robots=[0],
                cmd_vel_sent=[0],
                results_sent=[0],
                feedback_sent=[0],
            )
        )
        assert spin(until=lambda tick=tick: sim.tick == tick + 1)
    assert node.admission.deadline_misses == 0
    assert not node.admission.barrier.participants["/slow"].dropped


def test_deadline_steps_on_without_a_participant_that_left_the_graph(ros):
    """A participant whose node is gone (its process crashed) is dropped once, and the run
    goes on without it."""
    ctx, add, spin = ros
    sim = _sim(1)
    node = add(SimNode(sim, real_time_factor=0, sync_timeout=0.5, context=ctx))
    part = rclpy.create_node("silent", context=ctx)
    pub = part.create_publisher(TickDone, "/maes/tick_done", LOCKSTEP_WRITER_QOS)
    _join(pub, "/silent", node.admission.run_id)
    assert spin(until=lambda: node.admission.barrier.participants)
    assert spin(until=lambda: node.started)
    spin(1.5)
    assert sim.tick == 0, "stepped past a participant still on the graph"
    part.destroy_node()  # as if its process had died
    assert spin(until=lambda: sim.tick >= 20, timeout=30.0)
    assert node.admission.deadline_misses == 1  # dropped after one miss, not waited for every tick
    assert node.admission.barrier.participants["/silent"].dropped


def test_a_tick_a_participant_missed_is_published_again(ros):
    """A reader that matched late (a discovery race between processes) missed the tick's
    outputs: after ``sync_timeout`` the simulator publishes them again, so the run goes on
    instead of waiting for ever."""
    ctx, add, spin = ros
    sim = _sim(1)
    node = add(SimNode(sim, real_time_factor=0, sync_timeout=0.5, context=ctx))
    part = add(rclpy.create_node("late_reader", context=ctx))
    pub = part.create_publisher(TickDone, "/maes/tick_done", LOCKSTEP_WRITER_QOS)
    _join(pub, "/late_reader", node.admission.run_id)
    assert spin(until=lambda: node.started)
    spin(0.2)  # tick 0's outputs are out, and nobody heard them
    states = []
    part.create_subscription(State, "/robot0/maes_state", states.append, STATE_QOS)
    assert spin(until=lambda: states, timeout=10.0), "tick 0's state was not published again"
    assert states[0].tick == 0 and sim.tick == 0 and node.republishes >= 1
    pub.publish(
        TickDone(
            run_id=node.admission.run_id,
            participant="/late_reader",
            role="controller",
            tick=0,
            robots=[0],
            cmd_vel_sent=[0],
            results_sent=[0],
            feedback_sent=[0],
        )
    )
    assert spin(until=lambda: sim.tick == 1)
    assert node.admission.deadline_misses == 0


def test_the_run_is_announced_before_the_start_and_its_end_after_it(ros):
    """Participants join with the run id of the manifest published before tick 0, and hear
    the end of the run (a manifest with an end reason)."""
    ctx, add, spin = ros
    node = add(SimNode(_sim(1), real_time_factor=0, wait_for_controllers="lockstep", context=ctx))
    part = add(rclpy.create_node("listener", context=ctx))
    manifests = []
    part.create_subscription(Tick, "/maes/tick", manifests.append, LOCKSTEP_READER_QOS)
    assert spin(until=lambda: manifests)
    first = manifests[0]
    assert first.tick == Tick.NOT_STARTED and first.run_id == node.admission.run_id != ""
    assert first.end_reason == "" and not node.started
    node.announce_end("stopped by the test")
    assert spin(until=lambda: manifests[-1].end_reason == "stopped by the test")
    assert manifests[-1].run_id == node.admission.run_id


def test_reports_of_another_run_are_refused_and_never_waited_for(ros):
    """A participant left over from an earlier run cannot join this one: its reports are
    ignored, its name remembered, and the run steps on without it."""
    ctx, add, spin = ros
    sim = _sim(1)
    node = add(SimNode(sim, real_time_factor=0, sync_timeout=0, context=ctx))
    part = add(rclpy.create_node("old", context=ctx))
    pub = part.create_publisher(TickDone, "/maes/tick_done", LOCKSTEP_WRITER_QOS)
    _join(pub, "/old", "an_earlier_run")
    assert spin(until=lambda: node.admission.barrier.stale)
    assert node.admission.barrier.stale == {"/old": "an_earlier_run"}
    assert "/old" not in node.admission.barrier.participants
    assert spin(until=lambda: sim.tick >= 10), "waited for a participant of another run"


def test_external_controllers_barrier_takes_a_plain_reader_only_after_the_grace(ros):
    """``--controllers none``: a robot waits for a lockstep controller; a node that only reads
    its maes_state (a MAES 2.0 controller) is taken as its controller after the grace."""
    ctx, add, spin = ros
    sim = _sim(1)
    node = add(
        SimNode(
            sim,
            real_time_factor=0,
            wait_for_controllers="external",
            join_grace=2.0,
            start_timeout=None,
            context=ctx,
        )
    )
    client = add(rclpy.create_node("maes2_controller", context=ctx))
    client.create_subscription(State, "/robot0/maes_state", lambda m: None, STATE_QOS)
    assert spin(until=lambda: 0 in node.admission._plain_since)
    seen = time.monotonic()
    assert "maes2_controller" in " ".join(node.start_missing())
    assert spin(until=lambda: node.started, timeout=30.0)
    assert time.monotonic() - seen >= 1.5, "started before the grace was over"
    assert node.admission.free_controllers == {0: ["/maes2_controller"]}
    assert spin(until=lambda: sim.tick > 5)


def test_external_controllers_barrier_takes_a_nav2_action_client_after_the_grace(ros):
    """A Nav2 script (an action client of the robot's navigate_to_pose, as BasicNavigator
    creates) reads no maes_state: it is taken as the robot's controller after the grace too."""
    from nav2_msgs.action import NavigateToPose
    from rclpy.action import ActionClient

    ctx, add, spin = ros
    sim = _sim(1)
    node = add(
        SimNode(
            sim,
            real_time_factor=0,
            wait_for_controllers="external",
            join_grace=2.0,
            start_timeout=None,
            context=ctx,
        )
    )
    script = add(rclpy.create_node("basic_navigator", context=ctx))
    client = ActionClient(script, NavigateToPose, "/robot0/navigate_to_pose")
    assert spin(until=lambda: 0 in node.admission._plain_since)
    assert not node.started
    assert spin(until=lambda: node.started, timeout=30.0)
    assert node.admission.free_controllers == {0: ["/basic_navigator"]}
    client.destroy()


def test_an_exclusive_simulator_never_starts_beside_another(ros):
    """The embedded runner's backstop: a second /maes/tick publisher before the start ends the
    run before tick 0, saying why."""
    ctx, add, spin = ros
    sim = _sim(1)
    node = add(SimNode(sim, real_time_factor=0, exclusive=True, start_timeout=None, context=ctx))
    other = add(rclpy.create_node("other_simulator", context=ctx))
    other.create_publisher(Tick, "/maes/tick", LOCKSTEP_WRITER_QOS)
    assert spin(until=lambda: node.done)
    assert not node.started and sim.tick == 0
    assert "another MAES-ROS simulator" in node.conflict
