"""What the MAES-ROS simulator, controller and navigator share, and nothing of either.

A controller deployed on a robot installs this package, not the simulator:

* :mod:`~maes_common.contract`: namespaces, frame and topic names, wire formats;
* :mod:`~maes_common.pose`: planar pose algebra (the one home of ``compose``/``inverse``);
* :mod:`~maes_common.state_wire`: a serialized ``maes_state``'s fields read in place;
* :mod:`~maes_common.frames`: the transforms a tick publishes, for every robot at once;
* :mod:`~maes_common.lockstep`: the lockstep protocol (the simulator's barrier and the
  participants' report counters);
* :mod:`~maes_common.qos` and :mod:`~maes_common.process`: QoS profiles and the node-process
  lifecycle (these import rclpy, so they are imported as modules, not re-exported here);
* :mod:`~maes_common.jit`: the project's one numba entry point (``njit``, ``prange``).

Everything exported here is pure Python and numpy (no rclpy, no numba), so the simulator's core
imports it too.
"""

from .contract import (
    BASE_FRAME,
    BASE_LINK_FRAME,
    DEFAULT_LOGIC,
    MAP_FRAME,
    NAVIGATION_DONE_TOPIC,
    ODOM_FRAME,
    SCAN_FRAME,
    TICK_DONE_TOPIC,
    TICK_TOPIC,
    WORLD_FRAME,
    maes_robot_id,
    robot_index_of_id,
    robot_namespace,
    scan_angles,
    wire_resolution,
    wire_scan_geometry,
    wire_scan_ranges,
    wire_time,
    wire_yaw,
)
from .frames import OdomFrames, TickTransforms, tick_transforms, wire_poses
from .lockstep import JOIN, LEAVE, Barrier, Participant
from .pose import Pose2D, compose, compose_many, inverse, inverse_many, yaw_from_quaternion
from .state_wire import (
    StateHead,
    WirePiece,
    broadcast_wire,
    encode_state,
    nearby_wire,
    read_state_head,
    read_state_nearby,
    read_state_neighbours,
    tag_wire,
)

__all__ = [
    "BASE_FRAME",
    "BASE_LINK_FRAME",
    "DEFAULT_LOGIC",
    "JOIN",
    "LEAVE",
    "MAP_FRAME",
    "NAVIGATION_DONE_TOPIC",
    "ODOM_FRAME",
    "SCAN_FRAME",
    "TICK_DONE_TOPIC",
    "TICK_TOPIC",
    "WORLD_FRAME",
    "Barrier",
    "OdomFrames",
    "Participant",
    "Pose2D",
    "StateHead",
    "WirePiece",
    "TickTransforms",
    "broadcast_wire",
    "compose",
    "compose_many",
    "encode_state",
    "inverse",
    "inverse_many",
    "maes_robot_id",
    "robot_index_of_id",
    "nearby_wire",
    "read_state_head",
    "read_state_nearby",
    "read_state_neighbours",
    "robot_namespace",
    "scan_angles",
    "tag_wire",
    "tick_transforms",
    "wire_poses",
    "wire_resolution",
    "wire_scan_geometry",
    "wire_scan_ranges",
    "wire_time",
    "wire_yaw",
    "yaw_from_quaternion",
]
