"""Per-robot observation objects, with the field names of the ``maes_interfaces`` messages.

A controller written against the ROS messages reads these the same way (``state.tick``,
``state.nearby_robots[0].pos.x``, ...), which is what lets one controller run on the ROS stack
and in direct mode unchanged. Positions are world coordinates in tiles here; the ROS layer
scales them by ``tile_size`` into metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

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
    """``maes_interfaces/NearbyRobot``: another robot's id (``"3"``, as MAES 2.0) and position."""

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
        MAES 2.0's ``RobotStatus`` name: "Idle", "Moving" (driving or turning) or "Stopping"
        (braking with no command).
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
    robot_type : str
        The robot's type (``robot_types`` / ``team`` in the config; ``"default"`` without).
    bumper : bool
        Touching a wall at the end of the tick (``colliding`` also counts robots):
        :mod:`maes_sim.core.sensors.bumper`. Direct mode only; not in ``maes_state``.
    """

    tick: int
    status: str
    colliding: bool
    incoming_broadcast_msgs: list[Broadcast] = field(default_factory=list)
    tags_nearby: list[TagView] = field(default_factory=list)
    nearby_robots: list[NearbyRobot] = field(default_factory=list)
    position: Vector2D = Vector2D(0.0, 0.0)
    heading: float = 0.0
    robot_type: str = "default"
    bumper: bool = False


def _scaled(v: Vector2D, factor: float) -> Vector2D:
    return Vector2D(v.x * factor, v.y * factor)


def _has_pos(item: object) -> bool:
    return isinstance(getattr(item, "pos", None), Vector2D)


def state_to_metres(state: RobotState, tile_size: float) -> RobotState:
    """The state with every position in metres (world frame), as ``maes_state`` carries it.

    Every :class:`Vector2D` field, and the ``pos`` of every item of a list field, is multiplied
    by ``tile_size``; every other value is kept. So a sensor's new position field needs no edit
    here (``docs/architecture.md``, "How to add a sensor"). Direct mode hands a logic this state;
    the ROS stack's twin is ``maes_sim.ros.conversions.state_to_msg``.

    Parameters
    ----------
    state : RobotState
        A state in tiles, as :meth:`Simulation.robot_state` gives it.
    tile_size : float
        Metres per tile (``world.tile_size``).

    Returns
    -------
    RobotState
        ``state`` itself when ``tile_size`` is 1, else a scaled copy.

    Examples
    --------
    >>> s = RobotState(tick=3, status="Idle", colliding=False, position=Vector2D(1.0, -2.0),
    ...                nearby_robots=[NearbyRobot("1", Vector2D(4.0, 0.0))])
    >>> m = state_to_metres(s, 0.5)
    >>> m.position, m.nearby_robots[0].pos
    (Vector2D(x=0.5, y=-1.0), Vector2D(x=2.0, y=0.0))
    """
    if tile_size == 1.0:
        return state
    changes = {}
    for f in fields(state):
        value = getattr(state, f.name)
        if isinstance(value, Vector2D):
            changes[f.name] = _scaled(value, tile_size)
        elif isinstance(value, list) and any(_has_pos(item) for item in value):
            changes[f.name] = [
                replace(item, pos=_scaled(item.pos, tile_size)) if _has_pos(item) else item
                for item in value
            ]
    return replace(state, **changes)
