"""Every conversion between the core's arrays and ROS messages (``*_to_msg`` / ``*_from_msg``).

The core works in tiles; ROS in metres. ``tile_size`` (metres per tile) is the only scale, and
world tile (0, 0) (the map centre) is the origin of the ROS ``world``/``map`` frames.
"""

from __future__ import annotations

import array
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Quaternion, TransformStamped, Twist, TwistStamped
from nav_msgs.msg import OccupancyGrid, Odometry
from sensor_msgs.msg import LaserScan

from maes_common import broadcast_wire, encode_state, nearby_wire, pose, tag_wire
from maes_common.contract import wire_scan_geometry, wire_scan_ranges
from maes_common.pose import quaternion_from_yaw
from maes_interfaces.msg import Broadcast, EnvironmentTag, NearbyRobot, State, Stats, Vector2D
from maes_sim.core.state import RobotState


def time_to_msg(seconds: float) -> Time:
    """Simulated seconds as ``builtin_interfaces/Time`` (exact for whole nanoseconds)."""
    nanos = int(round(seconds * 1e9))
    return Time(sec=nanos // 1_000_000_000, nanosec=nanos % 1_000_000_000)


def time_from_msg(msg: Time) -> float:
    """``builtin_interfaces/Time`` as seconds."""
    return msg.sec + msg.nanosec * 1e-9


def yaw_to_quaternion(yaw: float) -> Quaternion:
    """A rotation of ``yaw`` radians about +z."""
    z, w = quaternion_from_yaw(float(yaw))
    return Quaternion(x=0.0, y=0.0, z=z, w=w)


def yaw_from_quaternion(q: Quaternion) -> float:
    """The yaw (rad) of a quaternion (roll and pitch ignored)."""
    return pose.yaw_from_quaternion(q.x, q.y, q.z, q.w)


def transform_to_msg(
    pose: tuple[float, float, float], parent: str, child: str, stamp: Time
) -> TransformStamped:
    """A planar transform ``parent -> child`` (x, y in metres, yaw in rad)."""
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = parent
    msg.child_frame_id = child
    msg.transform.translation.x = float(pose[0])
    msg.transform.translation.y = float(pose[1])
    msg.transform.rotation = yaw_to_quaternion(float(pose[2]))
    return msg


def transform_from_msg(msg: TransformStamped) -> tuple[float, float, float]:
    """(x, y, yaw) of a TransformStamped."""
    t = msg.transform
    return (t.translation.x, t.translation.y, yaw_from_quaternion(t.rotation))


def scan_ranges(ranges_tiles: np.ndarray, hit: np.ndarray, tile_size: float) -> array.array:
    """LaserScan ``ranges`` (float32, metres) of one robot: rays that hit nothing within range
    are ``+inf`` (REP-117: no return), so Nav2 and slam_toolbox can clear along them
    (:func:`maes_common.contract.wire_scan_ranges`)."""
    return array.array("f", wire_scan_ranges(ranges_tiles, hit, tile_size).tobytes())


def scan_to_msg(
    ranges_tiles: np.ndarray,
    stamp: Time,
    frame_id: str,
    tile_size: float,
    range_max_tiles: float,
    scan_time: float,
    hit: np.ndarray | None = None,
    fov: float | None = None,
) -> LaserScan:
    """A LaserScan from one robot's lidar ranges (R,) in tiles.

    Full circle (``fov`` None): ray k is at ``-pi + k * 2 pi / R`` in the sensor frame (the
    core's convention); a field of view ``fov`` (rad) spans ``-fov / 2`` to ``+fov / 2``
    (:func:`maes_common.contract.wire_scan_geometry`). Rays with ``hit`` False report ``+inf``
    (REP-117); without ``hit`` every ray counts as a return.
    """
    n = len(ranges_tiles)
    msg = LaserScan()
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.angle_min, msg.angle_increment = wire_scan_geometry(n, fov)
    msg.angle_max = msg.angle_min + (n - 1) * msg.angle_increment
    msg.time_increment = 0.0
    msg.scan_time = float(scan_time)
    msg.range_min = 0.0
    msg.range_max = float(range_max_tiles * tile_size)
    hits = np.ones(n, dtype=bool) if hit is None else hit
    msg.ranges = scan_ranges(ranges_tiles, hits, tile_size)
    return msg


def scan_from_msg(msg: LaserScan, tile_size: float) -> tuple[np.ndarray, np.ndarray]:
    """(ranges (R,) in tiles with no-return rays at ``range_max``, hit (R,) bool)."""
    r = np.asarray(msg.ranges, dtype=np.float64)
    hit = np.isfinite(r)
    return np.where(hit, r, msg.range_max) / tile_size, hit


def odometry_to_msg(
    pose_m: tuple[float, float, float],
    linear_mps: float,
    angular_rps: float,
    stamp: Time,
    odom_frame: str = "odom",
    base_frame: str = "base_footprint",
) -> Odometry:
    """nav_msgs/Odometry: pose in the odom frame, twist in the robot frame."""
    msg = Odometry()
    msg.header.stamp = stamp
    msg.header.frame_id = odom_frame
    msg.child_frame_id = base_frame
    msg.pose.pose.position.x = float(pose_m[0])
    msg.pose.pose.position.y = float(pose_m[1])
    msg.pose.pose.orientation = yaw_to_quaternion(float(pose_m[2]))
    msg.twist.twist.linear.x = float(linear_mps)
    msg.twist.twist.angular.z = float(angular_rps)
    return msg


def twist_from_msg(msg: Twist | TwistStamped, tile_size: float) -> tuple[float, float, float]:
    """(linear tiles/s, angular rad/s, lateral tiles/s) of a Twist or TwistStamped
    (``linear.x``, ``angular.z``, ``linear.y``; the other axes ignored)."""
    twist = msg.twist if isinstance(msg, TwistStamped) else msg
    return twist.linear.x / tile_size, twist.angular.z, twist.linear.y / tile_size


def occupancy_to_msg(
    values: np.ndarray,
    stamp: Time,
    frame_id: str,
    tile_size: float,
    origin_xy_m: tuple[float, float],
) -> OccupancyGrid:
    """OccupancyGrid from an (H, W) int8 array (row 0 at the bottom, -1 unknown, 0..100)."""
    values = np.asarray(values)
    h, w = values.shape
    msg = OccupancyGrid()
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.info.map_load_time = stamp
    msg.info.resolution = float(tile_size)
    msg.info.width = int(w)
    msg.info.height = int(h)
    msg.info.origin.position.x = float(origin_xy_m[0])
    msg.info.origin.position.y = float(origin_xy_m[1])
    msg.info.origin.orientation.w = 1.0
    msg.data = array.array("b", np.ascontiguousarray(values, dtype=np.int8).tobytes())
    return msg


def occupancy_from_msg(msg: OccupancyGrid) -> np.ndarray:
    """The (H, W) int8 array of an OccupancyGrid."""
    data = np.frombuffer(bytes(memoryview(msg.data).cast("B")), dtype=np.int8)
    return data.reshape(msg.info.height, msg.info.width)


def heatmap_to_values(heat: np.ndarray) -> np.ndarray:
    """Recency heatmap (1 hot .. 0 cold, -1 never) as OccupancyGrid values (100 hot, -1)."""
    vals = np.round(np.clip(heat, 0.0, 1.0) * 100.0).astype(np.int8)
    vals[heat < 0] = -1
    return vals


def tag_to_msg(tag) -> EnvironmentTag:
    """maes_interfaces/EnvironmentTag from a tag of an observation in metres."""
    return EnvironmentTag(
        msg=tag.msg,
        pos=Vector2D(x=tag.pos.x, y=tag.pos.y),
        sender=tag.sender,
        tick=int(tag.tick),
    )


def _cached(objects, cache: dict | None, convert) -> list:
    if cache is None:
        return [convert(o) for o in objects]
    out = []
    for o in objects:
        m = cache.get(id(o))
        if m is None:
            m = cache[id(o)] = convert(o)
        out.append(m)
    return out


def state_to_msg(
    state: RobotState,
    tag_cache: dict | None = None,
    robot_cache: dict | None = None,
) -> State:
    """maes_interfaces/State from a state of the core's observation in metres
    (``Simulation.observation(tile_size).state(i)``: the core converted the units once).

    The caches (dicts kept by the caller) map ``id(core object)`` to its message, so an object
    shown in many states is converted once: ``tag_cache`` for the run (the core keeps one copy
    of each tag per unit for the run), ``robot_cache`` for one tick (the observation shares one
    NearbyRobot per robot).
    """
    msg = State()
    msg.tick = int(state.tick)
    msg.status = state.status
    msg.colliding = bool(state.colliding)
    msg.incoming_broadcast_msgs = [
        Broadcast(msg=b.msg, sender=b.sender) for b in state.incoming_broadcast_msgs
    ]
    msg.tags_nearby = _cached(state.tags_nearby, tag_cache, tag_to_msg)
    msg.nearby_robots = _cached(
        state.nearby_robots,
        robot_cache,
        lambda r: NearbyRobot(id=r.id, pos=Vector2D(x=r.pos.x, y=r.pos.y)),
    )
    msg.position = Vector2D(x=state.position.x, y=state.position.y)
    msg.heading = float(state.heading)
    msg.robot_type = state.robot_type
    return msg


def _pieces(objects, cache: dict, encode) -> list:
    """``encode(o)`` of each object, from ``cache`` (``id(o)`` -> ``(o, bytes)``) or encoded
    and cached. The object is kept with its bytes, so its id cannot be reused while cached: an
    entry found under ``id(o)`` is ``o``'s."""
    try:  # the common case (each neighbour and message is shared by many states): all cached
        return [cache[id(o)][1] for o in objects]
    except KeyError:
        pass
    out = []
    for o in objects:
        entry = cache.get(id(o))
        if entry is None:
            entry = cache[id(o)] = (o, encode(o))
        out.append(entry[1])
    return out


def state_to_wire(state: RobotState, tag_cache: dict, robot_cache: dict) -> bytes:
    """``state_to_msg(state)`` serialized, written without building the message (the bytes
    ``rclpy.serialization.serialize_message`` gives; published as they are).

    The caches are :func:`state_to_msg`'s, holding each object's encoded bytes
    (:func:`maes_common.tag_wire`, :func:`maes_common.nearby_wire`): ``tag_cache`` for the
    run, ``robot_cache`` for one tick; it holds the tick's broadcasts too
    (:func:`maes_common.broadcast_wire`): the core shares one object per message among its
    receivers, so a message every robot hears is encoded once, not once per robot.
    """
    return encode_state(
        state.tick,
        state.status,
        state.colliding,
        _pieces(
            state.incoming_broadcast_msgs,
            robot_cache,
            lambda b: broadcast_wire(b.msg, b.sender),
        ),
        _pieces(
            state.tags_nearby,
            tag_cache,
            lambda t: tag_wire(t.msg, t.pos.x, t.pos.y, t.sender, t.tick),
        ),
        _pieces(state.nearby_robots, robot_cache, lambda r: nearby_wire(r.id, r.pos.x, r.pos.y)),
        (state.position.x, state.position.y),
        state.heading,
        state.robot_type,
    )


#: Python type of the numeric ``Stats`` fields a statistics row fills.
_STATS_CASTS = {"double": float, "float": float, "int64": int, "int32": int, "uint64": int}
#: ``Stats`` fields filled from the statistics row by name: every numeric field named as a
#: registered metric (one name everywhere; a metric shown live needs only its field).
_STATS_FROM_ROW = tuple(
    (name, _STATS_CASTS[kind])
    for name, kind in Stats.get_fields_and_field_types().items()
    if kind in _STATS_CASTS and name not in ("tick", "real_time_factor", "number_of_robots")
)


def stats_to_msg(
    stats: dict,
    sim_time: float,
    distance_tiles: np.ndarray,
    tile_size: float,
    real_time_factor: float,
    finished: bool,
    radio: Any = None,
) -> Stats:
    """maes_interfaces/Stats from a statistics row of the core: each numeric field of a
    registered metric's name is that metric's value (cast to the field's type); ``radio``
    (the core's ``Radio``) fills the per-robot radio counters."""
    msg = Stats()
    msg.tick = int(stats["tick"])
    msg.sim_time = time_to_msg(sim_time)
    for name, cast in _STATS_FROM_ROW:
        setattr(msg, name, cast(stats[name]))
    msg.real_time_factor = float(real_time_factor)
    msg.number_of_robots = int(len(distance_tiles))
    msg.distance_travelled = array.array(
        "d", (np.asarray(distance_tiles, dtype=np.float64) * tile_size).tobytes()
    )
    msg.finished = bool(finished)
    if radio is not None:
        for name, counts in (
            ("broadcasts_sent_per_robot", radio.sent),
            ("broadcasts_delivered_per_robot", radio.delivered),
            ("broadcasts_dropped_per_robot", radio.dropped),
            ("broadcasts_received_per_robot", radio.received),
        ):
            setattr(msg, name, array.array("q", np.asarray(counts, dtype=np.int64).tobytes()))
    return msg
