"""Message conversions of the controller and navigator nodes, in one place (``*_to_msg``).

The nodes stay thin: everything that builds or reads a message lives here, and every decision
lives in the pure modules (:mod:`.navigation`, :mod:`.tf_pose`, :mod:`.frontier`, ...).
"""

from __future__ import annotations

import array
import math
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import PoseStamped, Twist, TwistStamped
from nav2_msgs.action import NavigateToPose
from nav_msgs.msg import OccupancyGrid, Path
from rclpy.serialization import deserialize_message

from maes_common import read_state_head
from maes_common.pose import quaternion_from_yaw
from maes_interfaces.msg import Broadcast, State

from ..navigation import NavStep


def time_to_msg(seconds: float) -> Time:
    """``builtin_interfaces/Time`` of ``seconds`` (>= 0).

    Examples
    --------
    >>> t = time_to_msg(12.3)
    >>> t.sec, t.nanosec
    (12, 300000000)
    """
    ns = int(round(seconds * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def duration_to_msg(seconds: float) -> Duration:
    """``builtin_interfaces/Duration`` of ``seconds`` (negative and nan count as 0).

    Examples
    --------
    >>> d = duration_to_msg(1.5)
    >>> d.sec, d.nanosec, duration_to_msg(float("nan")).sec
    (1, 500000000, 0)
    """
    ns = int(round(seconds * 1e9)) if math.isfinite(seconds) and seconds > 0 else 0
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def pose_to_msg(x: float, y: float, yaw: float, stamp: Time, frame_id: str = "map") -> PoseStamped:
    """A planar ``geometry_msgs/PoseStamped``.

    Examples
    --------
    >>> p = pose_to_msg(1.0, 2.0, math.pi, time_to_msg(0.0))
    >>> p.header.frame_id, p.pose.position.x, round(p.pose.orientation.z, 6)
    ('map', 1.0, 1.0)
    """
    msg = PoseStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.pose.position.x = float(x)
    msg.pose.position.y = float(y)
    msg.pose.orientation.z, msg.pose.orientation.w = quaternion_from_yaw(float(yaw))
    return msg


def goal_to_msg(x: float, y: float, stamp: Time, frame_id: str = "map") -> NavigateToPose.Goal:
    """A ``NavigateToPose`` goal at ``(x, y)`` (identity orientation, as MAES 2.0 sent).

    Examples
    --------
    >>> goal_from_msg(goal_to_msg(1.0, -2.0, time_to_msg(0.0), "/map"))
    ('map', 1.0, -2.0)
    """
    goal = NavigateToPose.Goal()
    goal.pose = pose_to_msg(x, y, 0.0, stamp, frame_id)
    return goal


def goal_from_msg(goal: NavigateToPose.Goal) -> tuple[str, float, float]:
    """``(frame_id without a leading '/', x, y)`` of a ``NavigateToPose`` goal."""
    frame = goal.pose.header.frame_id
    frame = frame[1:] if frame.startswith("/") else frame
    return frame, float(goal.pose.pose.position.x), float(goal.pose.pose.position.y)


def feedback_to_msg(
    step: NavStep, pose: Sequence[float] | None, stamp: Time, fb=None
) -> NavigateToPose.Feedback:
    """``NavigateToPose`` feedback of a navigation step at the robot's pose (filled into
    ``fb``, e.g. a ``NavigateThroughPoses.Feedback``, when given).

    Examples
    --------
    >>> fb = feedback_to_msg(NavStep(distance_remaining=3.0, navigation_time=2.5),
    ...                      (1.0, 0.0, 0.0), time_to_msg(2.5))
    >>> fb.distance_remaining, fb.navigation_time.sec, fb.current_pose.pose.position.x
    (3.0, 2, 1.0)
    """
    fb = NavigateToPose.Feedback() if fb is None else fb
    if pose is not None:
        fb.current_pose = pose_to_msg(pose[0], pose[1], pose[2], stamp)
    fb.navigation_time = duration_to_msg(step.navigation_time)
    fb.estimated_time_remaining = duration_to_msg(step.estimated_time_remaining)
    fb.number_of_recoveries = int(min(step.number_of_recoveries, 32767))
    remaining = step.distance_remaining
    fb.distance_remaining = float(remaining) if math.isfinite(remaining) else 0.0
    return fb


def result_to_msg(step: NavStep) -> NavigateToPose.Result:
    """``NavigateToPose`` result: the step's error code and message.

    Examples
    --------
    >>> result_to_msg(NavStep(error_code=208, error_msg="no path")).error_code
    208
    """
    return NavigateToPose.Result(error_code=int(step.error_code), error_msg=step.error_msg)


def twist_to_msg(
    linear: float,
    angular: float,
    stamped: bool = False,
    stamp: Time | None = None,
    frame_id: str = "base_footprint",
    lateral: float = 0.0,
):
    """``Twist`` (or ``TwistStamped``) with forward and yaw speeds, and the sideways speed
    ``lateral`` (``linear.y``, to the robot's left: an omnidirectional robot).

    Examples
    --------
    >>> twist_to_msg(0.5, 0.0).linear.x, twist_to_msg(0.0, 1.0, stamped=True).twist.angular.z
    (0.5, 1.0)
    >>> twist_to_msg(0.0, 0.0, lateral=0.2).linear.y
    0.2
    """
    twist = Twist()
    twist.linear.x = float(linear)
    twist.linear.y = float(lateral)
    twist.angular.z = float(angular)
    if not stamped:
        return twist
    msg = TwistStamped(twist=twist)
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


def costmap_to_msg(map_msg: OccupancyGrid, costs: np.ndarray) -> OccupancyGrid:
    """A costmap with the header and geometry of the map it was computed from.

    Examples
    --------
    >>> m = OccupancyGrid(); m.info.width, m.info.height = 2, 1
    >>> list(costmap_to_msg(m, np.array([[0, 100]])).data)
    [0, 100]
    """
    msg = OccupancyGrid()
    msg.header = map_msg.header
    msg.info = map_msg.info
    msg.data = array.array("b", np.ascontiguousarray(costs, dtype=np.int8).tobytes())
    return msg


def path_to_msg(points: Sequence[Sequence[float]], stamp: Time, frame_id: str = "map") -> Path:
    """``nav_msgs/Path`` through ``points``, each pose facing the next point.

    Examples
    --------
    >>> path = path_to_msg([(0.0, 0.0), (0.0, 1.0)], time_to_msg(0.0))
    >>> len(path.poses), round(path.poses[0].pose.orientation.z, 6)
    (2, 0.707107)
    """
    msg = Path()
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    poses = []
    for k, (x, y) in enumerate(points):
        nx, ny = points[min(k + 1, len(points) - 1)]
        yaw = math.atan2(ny - y, nx - x) if (nx, ny) != (x, y) else 0.0
        poses.append(pose_to_msg(x, y, yaw, stamp, frame_id))
    msg.poses = poses
    return msg


class WireState:
    """A ``maes_interfaces/State`` read from its serialized bytes, field by field as needed.

    ``tick``, ``status``, ``colliding`` and ``incoming_broadcast_msgs`` (``Broadcast``
    messages) are read at once (:func:`maes_common.read_state_head`); reading any other field
    (``tags_nearby``, ``nearby_robots``, ``position``, ...) deserializes the whole message once.
    A logic that reads only the broadcasts thus never builds the tags and neighbours.

    Parameters
    ----------
    data : bytes
        The message as a ``raw=True`` subscription receives it.

    Raises
    ------
    ValueError
        When ``data`` is not a serialized State.
    """

    __slots__ = ("_data", "_msg", "colliding", "incoming_broadcast_msgs", "status", "tick")

    def __init__(self, data: bytes) -> None:
        head = read_state_head(data)
        self._data = data
        self._msg: State | None = None
        self.tick = head.tick
        self.status = head.status
        self.colliding = head.colliding
        self.incoming_broadcast_msgs = [
            Broadcast(msg=text, sender=sender) for text, sender in head.broadcasts
        ]

    def message(self) -> State:
        """The whole ``State`` message (deserialized on the first call)."""
        if self._msg is None:
            self._msg = deserialize_message(self._data, State)
        return self._msg

    def __getattr__(self, name: str):
        # called only for names that are not slots: State's other fields
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.message(), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WireState):
            return self._data == other._data
        return self.message() == other

    __hash__ = None  # type: ignore[assignment]  # as State's

    def __repr__(self) -> str:
        return repr(self.message())
