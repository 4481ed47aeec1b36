"""A robot's state in tiles becomes the state in metres a logic reads (direct mode)."""

from __future__ import annotations

from dataclasses import dataclass, field

from maes_sim.core import Broadcast, NearbyRobot, RobotState, TagView, Vector2D, state_to_metres


def test_every_position_is_scaled_and_nothing_else():
    s = RobotState(
        tick=1,
        status="Idle",
        colliding=False,
        incoming_broadcast_msgs=[Broadcast("hi", "robot1")],
        tags_nearby=[TagView("t", Vector2D(2.0, 4.0), "robot1", 7)],
        nearby_robots=[NearbyRobot("1", Vector2D(-2.0, 6.0))],
        position=Vector2D(1.0, 1.0),
        heading=0.3,
    )
    m = state_to_metres(s, 0.25)
    assert m.tags_nearby == [TagView("t", Vector2D(0.5, 1.0), "robot1", 7)]
    assert m.nearby_robots == [NearbyRobot("1", Vector2D(-0.5, 1.5))]
    assert m.position == Vector2D(0.25, 0.25) and m.heading == 0.3
    assert (m.tick, m.status, m.colliding) == (1, "Idle", False)
    assert m.incoming_broadcast_msgs == s.incoming_broadcast_msgs
    assert s.position == Vector2D(1.0, 1.0)  # the input is left as it was
    assert state_to_metres(s, 1.0) is s


@dataclass(frozen=True)
class _StateWithASensor(RobotState):
    """A state as a new sensor would extend it: one position and one list of positions."""

    nearest_wall: Vector2D = Vector2D(0.0, 0.0)
    beacons: list[NearbyRobot] = field(default_factory=list)


def test_a_new_position_field_is_scaled_without_an_edit():
    s = _StateWithASensor(
        tick=0,
        status="Idle",
        colliding=False,
        nearest_wall=Vector2D(3.0, -1.0),
        beacons=[NearbyRobot("b0", Vector2D(0.0, 8.0))],
    )
    m = state_to_metres(s, 2.0)
    assert isinstance(m, _StateWithASensor)
    assert m.nearest_wall == Vector2D(6.0, -2.0)
    assert m.beacons == [NearbyRobot("b0", Vector2D(0.0, 16.0))]
