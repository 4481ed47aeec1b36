"""The robot-facing contract in one place: namespaces, frames, topic names, wire formats.

Every node, direct mode and the launch import these names instead of restating them (the
robot-facing interface of docs/architecture.md). Pure Python: no rclpy, no message packages, so
direct mode and the core's users can import it anywhere.

The *wire* functions give the values a receiver reads after a trip through ROS messages
(``builtin_interfaces/Time``, a yaw as a quaternion, ``float32`` scan ranges and map
resolution). Direct mode passes its values through the same functions, so the navigator and the
logic see the same bits on either stack.
"""

from __future__ import annotations

import math

import numpy as np

from .pose import quaternion_from_yaw, yaw_from_quaternion

__all__ = [
    "BASE_FRAME",
    "BASE_LINK_FRAME",
    "DEFAULT_LOGIC",
    "MAP_FRAME",
    "MAX_MESSAGE_BYTES",
    "NAVIGATION_DONE_TOPIC",
    "ODOM_FRAME",
    "SCAN_FRAME",
    "TICK_DONE_TOPIC",
    "TICK_TOPIC",
    "WORLD_FRAME",
    "maes_robot_id",
    "map_origin",
    "robot_namespace",
    "scan_angles",
    "wire_resolution",
    "wire_scan_geometry",
    "wire_scan_ranges",
    "wire_time",
    "wire_yaw",
]

#: Frames inside a robot namespace (REP-105, no prefixes); ``world`` is the global frame.
MAP_FRAME, ODOM_FRAME, BASE_FRAME = "map", "odom", "base_footprint"
BASE_LINK_FRAME, SCAN_FRAME, WORLD_FRAME = "base_link", "base_scan", "world"

#: The lockstep manifest the simulator publishes after every tick (``maes_interfaces/Tick``).
TICK_TOPIC = "/maes/tick"
#: Where lockstep participants report handled ticks (``maes_interfaces/TickDone``).
TICK_DONE_TOPIC = "/maes/tick_done"
#: Where navigators report them: apart, so that each controller hears only the navigators'
#: reports, not every other controller's (N instead of N^2 messages a tick).
NAVIGATION_DONE_TOPIC = "/maes/tick_done/navigation"

#: Key of a recording's rosbag2 ``custom_data`` holding every robot's radius in metres (a
#: JSON list, robot 0 first): replays draw the robots at their sizes.
RECORDING_RADII_KEY = "maes.robot_radii_m"

#: Longest broadcast or environment-tag text the simulator accepts, in UTF-8 bytes (a longer
#: one is refused, said so, and not sent).
MAX_MESSAGE_BYTES = 1024

#: The logic callback a controller runs when none is named (the shipped frontier explorer).
DEFAULT_LOGIC = "maes_controller.algorithms.frontier_explorer:logic"

_PREFIX = "robot"


def robot_namespace(index: int) -> str:
    """Namespace (and name) of robot ``index``: ``robot<index>``, as MAES 2.0's ROS mode.

    Examples
    --------
    >>> robot_namespace(3)
    'robot3'
    """
    return f"{_PREFIX}{int(index)}"


def maes_robot_id(index: int) -> str:
    """Id of robot ``index`` in ``NearbyRobot.id``: its number as text, as MAES 2.0 writes it.

    MAES 2.0's ``Ros2Algorithm.PublishState`` fills ``NearbyRobot.id`` with the sensed robot's
    integer id (``e.item.ToString()``), not its namespace; ``Broadcast.sender`` is the namespace
    (:func:`robot_namespace`). See docs/maes2_fidelity.md.

    Examples
    --------
    >>> maes_robot_id(3)
    '3'
    """
    return str(int(index))


def robot_index_of_id(robot_id: str) -> int | None:
    """The index of the robot whose ``NearbyRobot.id`` is ``robot_id`` (the inverse of
    :func:`maes_robot_id`), None for an id that is not a robot number.

    Examples
    --------
    >>> robot_index_of_id("3"), robot_index_of_id("robot3"), robot_index_of_id("")
    (3, None, None)
    """
    return int(robot_id) if robot_id.isdigit() and robot_id.isascii() else None


def wire_time(seconds: float) -> float:
    """``seconds`` as a receiver reads it back from a ``builtin_interfaces/Time`` stamp.

    Examples
    --------
    >>> wire_time(0.7)  # sec + nanosec * 1e-9 is not always the float one started from
    0.7000000000000001
    """
    ns = int(round(seconds * 1e9))
    return ns // 1_000_000_000 + (ns % 1_000_000_000) * 1e-9


def wire_yaw(yaw: float) -> float:
    """A yaw as read back from the planar quaternion ``(0, 0, sin(yaw/2), cos(yaw/2))``.

    Examples
    --------
    >>> abs(wire_yaw(1.0) - 1.0) < 1e-15
    True
    """
    return yaw_from_quaternion(0.0, 0.0, *quaternion_from_yaw(yaw))  # as the receiver


def map_origin(width_tiles: int, height_tiles: int, tile_size: float) -> tuple[float, float]:
    """The world position (m) of a map's corner cell (0, 0), the origin of its
    ``OccupancyGrid``: the world frame's origin is the map's centre, on every stack.

    Examples
    --------
    >>> map_origin(60, 40, 0.5)
    (-15.0, -10.0)
    """
    return (-width_tiles / 2.0 * tile_size, -height_tiles / 2.0 * tile_size)


def wire_resolution(tile_size: float) -> float:
    """A map resolution as ``nav_msgs/MapMetaData`` carries it (``float32``).

    Examples
    --------
    >>> wire_resolution(0.05) == 0.05
    False
    """
    return float(np.float32(tile_size))


def wire_scan_ranges(ranges_tiles: np.ndarray, hit: np.ndarray, tile_size: float) -> np.ndarray:
    """Lidar ranges as ``sensor_msgs/LaserScan`` carries them: metres, ``float32``.

    Rays that hit nothing within range are ``+inf`` (REP-117: no return), so Nav2 and
    slam_toolbox can clear along them. Works on one robot's rays (R,) or all robots' (N, R).

    Examples
    --------
    >>> wire_scan_ranges(np.array([2.0, 40.0]), np.array([True, False]), 0.5)
    array([ 1., inf], dtype=float32)
    """
    out = np.asarray(ranges_tiles, dtype=np.float64) * tile_size
    return np.where(hit, out, np.inf).astype(np.float32)


def wire_scan_geometry(n_rays: int, fov: float | None = None) -> tuple[float, float]:
    """``(angle_min, angle_increment)`` of an ``n_rays`` scan, as ``LaserScan``'s ``float32``
    fields carry them. Full circle (``fov`` None or >= 2 pi): ray k points at
    ``-pi + k * 2 pi / n_rays`` in the sensor frame (the core's convention); a field of view
    ``fov`` (rad, a robot type's lidar) spans ``-fov / 2`` to ``+fov / 2``, both included (one
    ray: straight ahead).

    Examples
    --------
    >>> [round(a, 4) for a in wire_scan_geometry(3, math.pi / 2)]
    [-0.7854, 0.7854]
    """
    if fov is None or fov >= 2.0 * math.pi:
        return float(np.float32(-math.pi)), float(np.float32(2.0 * math.pi / n_rays))
    if n_rays == 1:
        return 0.0, 0.0
    return float(np.float32(-fov / 2.0)), float(np.float32(fov / (n_rays - 1)))


def scan_angles(angle_min: float, angle_increment: float, n_rays: int) -> np.ndarray:
    """The angle (rad, robot frame) of each ray of a scan: ``angle_min + k * angle_increment``.

    The one formula of both stacks: the controller applies it to a received ``LaserScan``,
    direct mode to :func:`wire_scan_geometry`.

    Examples
    --------
    >>> a = scan_angles(*wire_scan_geometry(4), 4)
    >>> [round(float(x), 4) for x in a]
    [-3.1416, -1.5708, 0.0, 1.5708]
    """
    return float(angle_min) + np.arange(int(n_rays), dtype=np.float64) * float(angle_increment)
