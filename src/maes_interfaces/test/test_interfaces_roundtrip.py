"""Real rclpy round trips over the built interfaces (maes_interfaces and the stand-ins).

Every message travels through the RMW (Fast DDS) between two nodes of one context: it is
serialized by the generated typesupport and deserialized on the other side, so these tests fail
if a field is missing, mistyped or not carried. They need the pip environment
(``make test`` or ``scripts/with_env pytest <this file>``); outside it they skip.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

import pytest

if os.environ.get("MAES_ROS_ENV") != "1":
    # Bare interpreter (e.g. the core developers' venv): nothing ROS to test. Inside the project's
    # environment an import error below must fail loudly instead.
    pytest.importorskip("rclpy", reason="needs the pip environment: scripts/with_env pytest ...")

import rclpy  # noqa: E402
from action_msgs.msg import GoalStatus  # noqa: E402
from builtin_interfaces.msg import Duration, Time  # noqa: E402
from geometry_msgs.msg import PoseStamped, TransformStamped  # noqa: E402
from nav2_msgs.action import ComputePathToPose, FollowPath, NavigateToPose  # noqa: E402
from rclpy.action import ActionClient, ActionServer  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from maes_interfaces.msg import (  # noqa: E402
    Broadcast,
    EnvironmentTag,
    NearbyRobot,
    State,
    Stats,
    Vector2D,
)
from maes_interfaces.srv import BroadcastToAll, DepositTag  # noqa: E402

TIMEOUT_S = 15.0
RELIABLE = QoSProfile(
    depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
)


class Ros:
    """A private rclpy context with a server node, a client node and an executor spinning both."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.server = Node("roundtrip_server", context=self.context)
        self.client = Node("roundtrip_client", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.server)
        self.executor.add_node(self.client)

    def spin_until(self, done: Callable[[], bool], what: str) -> None:
        """Spin until ``done()`` is true; fail naming ``what`` after TIMEOUT_S seconds."""
        deadline = time.monotonic() + TIMEOUT_S
        while not done():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {TIMEOUT_S} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self.executor.shutdown()
        self.server.destroy_node()
        self.client.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def ros() -> Iterator[Ros]:
    env = Ros()
    try:
        yield env
    finally:
        env.close()


def publish_and_receive(ros: Ros, msg_type: type, topic: str, message: object) -> object:
    """Publish ``message`` from the client node and return what the server node received."""
    received = []
    ros.server.create_subscription(msg_type, topic, received.append, RELIABLE)
    publisher = ros.client.create_publisher(msg_type, topic, RELIABLE)
    ros.spin_until(lambda: publisher.get_subscription_count() > 0, f"a subscriber on {topic}")
    publisher.publish(message)
    ros.spin_until(lambda: len(received) > 0, f"the message on {topic}")
    assert len(received) == 1
    return received[0]


def make_state() -> State:
    return State(
        tick=123456789012,
        status="exploring: frontier 3",
        colliding=True,
        incoming_broadcast_msgs=[
            Broadcast(msg="hello", sender="robot1"),
            Broadcast(msg='{"frontier": [1.5, -2.25]}', sender="robot2"),
        ],
        tags_nearby=[
            EnvironmentTag(msg="dead end", pos=Vector2D(x=-3.5, y=4.25), sender="robot0", tick=17),
            EnvironmentTag(msg="", pos=Vector2D(x=0.0, y=-0.5), sender="robot3", tick=0),
        ],
        nearby_robots=[
            NearbyRobot(id="1", pos=Vector2D(x=1.0, y=2.0)),
            NearbyRobot(id="7", pos=Vector2D(x=-10.125, y=0.75)),
            NearbyRobot(id="9", pos=Vector2D(x=1e-9, y=-1e9)),
        ],
        position=Vector2D(x=12.5, y=-7.75),
        heading=-2.5,
    )


def test_state_with_nested_lists_arrives_intact(ros: Ros) -> None:
    sent = make_state()
    got = publish_and_receive(ros, State, "robot0/maes_state", sent)
    assert got == sent
    # Spot-check nested values, so a broken __eq__ could not hide a loss.
    assert [b.sender for b in got.incoming_broadcast_msgs] == ["robot1", "robot2"]
    assert got.tags_nearby[0].pos.y == 4.25 and got.tags_nearby[0].tick == 17
    assert [r.id for r in got.nearby_robots] == ["1", "7", "9"]
    assert got.nearby_robots[2].pos.y == -1e9
    assert (got.tick, got.colliding, got.heading) == (123456789012, True, -2.5)


def test_stats_arrive_intact(ros: Ros) -> None:
    sent = Stats(
        tick=4200,
        sim_time=Time(sec=210, nanosec=500_000_000),
        exploration_percent=87.5,
        coverage_percent=42.25,
        explored_tiles=3500,
        covered_tiles=1690,
        reachable_tiles=4000,
        real_time_factor=19.75,
        number_of_robots=3,
        collisions=11,
        distance_travelled=[10.5, 0.0, 123.25],
        broadcasts_sent=77,
        tags_deposited=5,
        finished=True,
    )
    got = publish_and_receive(ros, Stats, "maes/stats", sent)
    assert got == sent
    assert list(got.distance_travelled) == [10.5, 0.0, 123.25]
    assert got.sim_time.nanosec == 500_000_000


def test_tf_message_arrives_intact(ros: Ros) -> None:
    transforms = []
    for i, (parent, child) in enumerate([("map", "odom"), ("odom", "base_footprint")]):
        t = TransformStamped()
        t.header.stamp = Time(sec=5 + i, nanosec=25)
        t.header.frame_id = parent
        t.child_frame_id = child
        t.transform.translation.x = 1.5 * (i + 1)
        t.transform.translation.y = -0.25
        t.transform.rotation.z = 0.6
        t.transform.rotation.w = 0.8
        transforms.append(t)
    sent = TFMessage(transforms=transforms)
    got = publish_and_receive(ros, TFMessage, "robot0/tf", sent)
    assert got == sent
    assert [t.child_frame_id for t in got.transforms] == ["odom", "base_footprint"]


def call(ros: Ros, client, request) -> object:
    future = client.call_async(request)
    ros.spin_until(future.done, f"the response of {client.srv_name}")
    return future.result()


def test_both_services_carry_request_and_response(ros: Ros) -> None:
    broadcasts: list[str] = []
    tags: list[str] = []

    def broadcast_callback(request, response):
        broadcasts.append(request.msg)
        response.result = request.msg != "refuse me"
        return response

    def deposit_callback(request, response):
        tags.append(request.msg)
        response.result = len(request.msg) <= 8
        return response

    ros.server.create_service(BroadcastToAll, "robot0/maes_broadcast", broadcast_callback)
    ros.server.create_service(DepositTag, "robot0/maes_deposit_tag", deposit_callback)
    broadcast = ros.client.create_client(BroadcastToAll, "robot0/maes_broadcast")
    deposit = ros.client.create_client(DepositTag, "robot0/maes_deposit_tag")
    ros.spin_until(
        lambda: broadcast.service_is_ready() and deposit.service_is_ready(), "both services"
    )

    assert call(ros, broadcast, BroadcastToAll.Request(msg="hello all")).result is True
    assert call(ros, broadcast, BroadcastToAll.Request(msg="refuse me")).result is False
    assert call(ros, deposit, DepositTag.Request(msg="short")).result is True
    assert call(ros, deposit, DepositTag.Request(msg="much too long")).result is False
    assert broadcasts == ["hello all", "refuse me"]
    assert tags == ["short", "much too long"]


def test_navigate_to_pose_goal_feedback_and_result(ros: Ros) -> None:
    goals: list[NavigateToPose.Goal] = []

    def execute_callback(goal_handle):
        goal = goal_handle.request
        goals.append(goal)
        feedback = NavigateToPose.Feedback()
        feedback.current_pose.header.frame_id = "map"
        feedback.current_pose.pose.position.x = goal.pose.pose.position.x / 2
        feedback.navigation_time = Duration(sec=3, nanosec=0)
        feedback.estimated_time_remaining = Duration(sec=4, nanosec=250)
        feedback.number_of_recoveries = 2
        feedback.distance_remaining = 1.5
        goal_handle.publish_feedback(feedback)
        result = NavigateToPose.Result()
        if goal.behavior_tree == "unreachable.xml":
            result.error_code = ComputePathToPose.Result.GOAL_OUTSIDE_MAP
            result.error_msg = "goal outside the map"
            goal_handle.abort()
        else:
            result.error_code = NavigateToPose.Result.NONE
            goal_handle.succeed()
        return result

    ActionServer(ros.server, NavigateToPose, "robot0/navigate_to_pose", execute_callback)
    client = ActionClient(ros.client, NavigateToPose, "robot0/navigate_to_pose")
    ros.spin_until(client.server_is_ready, "the navigate_to_pose action server")

    def navigate(x: float, behavior_tree: str):
        goal = NavigateToPose.Goal(behavior_tree=behavior_tree)
        goal.pose = PoseStamped()
        goal.pose.header.frame_id = "map"
        goal.pose.pose.position.x = x
        goal.pose.pose.orientation.w = 1.0
        feedback = []
        sent = client.send_goal_async(goal, feedback_callback=lambda f: feedback.append(f))
        ros.spin_until(sent.done, "the goal to be accepted")
        handle = sent.result()
        assert handle.accepted
        result_future = handle.get_result_async()
        ros.spin_until(result_future.done, "the goal result")
        return result_future.result(), feedback

    outcome, feedback = navigate(4.0, "")
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED
    assert outcome.result.error_code == NavigateToPose.Result.NONE == 0
    assert len(feedback) == 1
    fb = feedback[0].feedback
    assert fb.current_pose.pose.position.x == 2.0 and fb.current_pose.header.frame_id == "map"
    assert (fb.number_of_recoveries, fb.distance_remaining) == (2, 1.5)
    assert (fb.estimated_time_remaining.sec, fb.estimated_time_remaining.nanosec) == (4, 250)

    outcome, _ = navigate(-1.0, "unreachable.xml")
    assert outcome.status == GoalStatus.STATUS_ABORTED
    assert outcome.result.error_code == 204
    assert outcome.result.error_msg == "goal outside the map"
    assert [g.pose.pose.position.x for g in goals] == [4.0, -1.0]
    assert goals[1].behavior_tree == "unreachable.xml"


def test_nav2_result_codes_match_jazzy() -> None:
    # Jazzy's NavigateToPose names no error codes but NONE (Kilted added UNKNOWN=9000, ...); a
    # failed goal carries the planner's (200+) or the controller's (100+) code.
    assert NavigateToPose.Result.NONE == 0
    assert not hasattr(NavigateToPose.Result, "UNKNOWN")
    planner, follow = ComputePathToPose.Result, FollowPath.Result
    assert (planner.UNKNOWN, planner.GOAL_OUTSIDE_MAP, planner.NO_VALID_PATH) == (200, 204, 208)
    assert (follow.UNKNOWN, follow.FAILED_TO_MAKE_PROGRESS, follow.CONTROLLER_TIMED_OUT) == (
        100,
        105,
        107,
    )
