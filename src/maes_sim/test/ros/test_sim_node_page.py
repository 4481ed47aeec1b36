"""The web page's hold on the simulator node (maes_sim.ros.watching): the page's pause, resume
and speed reach the node on its own thread, every sample carries the run's state, and a clicked
robot's navigation is heard from its navigate_to_pose action's status topic (published here by
a real client node, as an action server publishes it)."""

from __future__ import annotations

import json
import urllib.request

import pytest

pytest.importorskip("foxglove", reason="needs foxglove-sdk (requirements/venv.txt)")

from action_msgs.msg import GoalStatus, GoalStatusArray  # noqa: E402
from rclpy.qos import qos_profile_action_status_default  # noqa: E402

from maes_sim.core import Simulation, config_from_dict  # noqa: E402
from maes_sim.ros.outputs import build_tap  # noqa: E402


def frame(tap, robot: int = -1) -> dict:
    url = f"{tap.page.url}api/frame?robot={robot}"
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


def control(tap, command: dict) -> dict:
    request = urllib.request.Request(
        f"{tap.page.url}api/control",
        json.dumps(command).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


@pytest.fixture
def tap():
    made = build_tap(live=True, port=0)
    yield made
    made.close()


def test_the_page_pauses_resumes_and_sets_the_speed(harness, tap):
    sim = Simulation(config_from_dict({"number_of_robots": 2, "end_criteria": {"tick": None}}))
    h = harness(sim, real_time_factor=1.0, tap=tap)
    assert h.spin_until(lambda: h.node.started)
    assert frame(tap)["started"] is False  # sampled when the node was built; a page asks now
    assert h.spin_until(lambda: frame(tap)["started"] is True, 5)  # sampled after a tick
    first = frame(tap)
    assert first["paused"] is False and first["rtf_cap"] == 1.0
    assert control(tap, {"op": "pause"}) == {"ok": True, "queued": "pause"}
    assert h.spin_until(lambda: h.node.paused, 5), "the page's pause never reached the node"
    tick = sim.tick
    h.spin_for(0.5)
    assert sim.tick == tick
    assert h.spin_until(lambda: frame(tap)["paused"] is True, 5)  # sampled again while paused
    control(tap, {"op": "speed", "rtf": 4})
    control(tap, {"op": "resume"})
    assert h.spin_until(lambda: not h.node.paused and h.node.real_time_factor == 4.0, 5)
    assert h.spin_until(lambda: sim.tick > tick + 3, 10), "the run did not go on"
    assert h.spin_until(lambda: frame(tap)["rtf_cap"] == 4.0, 5)


def test_a_clicked_robot_s_navigation_is_heard(harness, tap):
    sim = Simulation(config_from_dict({"number_of_robots": 2, "end_criteria": {"tick": None}}))
    h = harness(sim, real_time_factor=0.0, tap=tap, start_paused=True)
    topic = "/robot1/navigate_to_pose/_action/status"
    status = h.client.create_publisher(GoalStatusArray, topic, qos_profile_action_status_default)
    frame(tap, robot=1)  # the page clicked robot1
    assert h.spin_until(lambda: frame(tap, robot=1)["nav"].get("1") == "no goal heard yet", 10)
    goal = GoalStatus(status=GoalStatus.STATUS_EXECUTING)
    goal.goal_info.goal_id.uuid = list(range(16))
    status.publish(GoalStatusArray(status_list=[goal]))
    h.spin_for(0.2)
    h.step(1)  # a tick's sample carries it
    assert h.spin_until(
        lambda: frame(tap, robot=1)["nav"].get("1") == "navigating (1 goal so far)", 10
    )
    assert frame(tap, robot=1)["states"]["1"]["tick"] == sim.tick
