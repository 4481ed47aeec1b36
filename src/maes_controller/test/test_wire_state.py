"""The controller's ``robot.state`` read from the wire (nodes.ros_conversions.WireState) shows
every State field as rclpy's deserializer gives it, building the tags only when read."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402

from maes_controller.nodes.ros_conversions import WireState  # noqa: E402
from maes_interfaces.msg import (  # noqa: E402
    Broadcast,
    EnvironmentTag,
    NearbyRobot,
    State,
    Vector2D,
)


def test_every_field_reads_as_the_deserialized_message():
    sent = State(
        tick=41,
        status="Moving",
        colliding=True,
        incoming_broadcast_msgs=[Broadcast(msg="frontier 3 4", sender="robot2")],
        tags_nearby=[EnvironmentTag(msg="x", pos=Vector2D(x=1.5, y=-2.0), sender="robot1", tick=7)],
        nearby_robots=[NearbyRobot(id="1", pos=Vector2D(x=0.25, y=3.0))],
        position=Vector2D(x=-1.0, y=2.0),
        heading=0.5,
        robot_type="scout",
    )
    data = serialize_message(sent)
    state = WireState(data)
    assert (state.tick, state.status, state.colliding) == (41, "Moving", True)
    assert state.incoming_broadcast_msgs == sent.incoming_broadcast_msgs
    assert state._msg is None  # the head alone built nothing else
    reference = deserialize_message(data, State)
    for field in ("tags_nearby", "nearby_robots", "position", "heading", "robot_type"):
        assert getattr(state, field) == getattr(reference, field), field
    assert state.message() == reference and state == reference
    with pytest.raises(AttributeError):
        state.no_such_field  # noqa: B018
    with pytest.raises(ValueError, match="too short"):
        WireState(b"\x00\x01\x00\x00")
