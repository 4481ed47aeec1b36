"""Per-robot observation objects, with the field names of the ``maes_interfaces`` messages.

A controller written against the ROS messages reads these the same way (``state.tick``,
``state.nearby_robots[0].pos.x``, ...), which is what lets one controller run on the ROS stack
and in direct mode unchanged. Positions are world coordinates in tiles here; the ROS layer
scales them by ``tile_size`` into metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .comms import Broadcast


@dataclass(frozen=True)
class Vector2D:
    """``maes_interfaces/Vector2D``."""

    x: float
    y: float


@dataclass(frozen=True)
class TagView:
    """``maes_interfaces/EnvironmentTag`` as a robot reads it."""

    msg: str
    pos: Vector2D
    sender: str = ""
    tick: int = 0


@dataclass(frozen=True)
class NearbyRobot:
    """``maes_interfaces/NearbyRobot``: another robot's id and world position."""

    id: str
    pos: Vector2D


@dataclass(frozen=True)
class RobotState:
    """``maes_interfaces/State`` of one robot at one logic tick.

    Attributes
    ----------
    tick : int
        Logic tick the state belongs to.
    status : str
        "idle", "moving", "rotating" or "stopping".
    colliding : bool
        Touching a wall or robot at the end of the tick.
    incoming_broadcast_msgs : list of Broadcast
        Broadcasts delivered this tick (sent during the previous one).
    tags_nearby : list of TagView
        Tags within ``environment_tag_read_range``.
    nearby_robots : list of NearbyRobot
        Robots within ``sense_nearby_agents_range`` (and in sight when blocked by walls).
    position : Vector2D
        The robot's believed position (world, tiles), as its SLAM places it.
    heading : float
        The robot's heading, radians.
    """

    tick: int
    status: str
    colliding: bool
    incoming_broadcast_msgs: list[Broadcast] = field(default_factory=list)
    tags_nearby: list[TagView] = field(default_factory=list)
    nearby_robots: list[NearbyRobot] = field(default_factory=list)
    position: Vector2D = Vector2D(0.0, 0.0)
    heading: float = 0.0
