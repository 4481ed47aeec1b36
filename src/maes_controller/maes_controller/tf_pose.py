"""2-D poses from tf messages without tf2_ros: keep the latest transforms, compose a chain.

tf2_ros is not on PyPI, so the controller and the navigator read their namespace's ``tf`` topic
(``tf2_msgs/TFMessage``) themselves and compose ``map -> odom`` (the simulator's simulated SLAM,
or slam_toolbox) with ``odom -> base_footprint`` (the simulator). The world is planar: a pose is
``(x, y, yaw)``; z, roll and pitch are ignored.

Pure Python: messages are read by attribute (``transforms[i].header.frame_id``,
``.child_frame_id``, ``.transform.translation``/``.rotation``, ``.header.stamp``), so anything
shaped like a ``TFMessage`` works and nothing here imports ROS.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from maes_common.pose import Pose2D, compose, inverse, yaw_from_quaternion

__all__ = [
    "FrameTree",
    "Pose2D",
    "SmoothedTransform",
    "Transform",
    "compose",
    "inverse",
    "map_odom_jump_distance",
    "stamp_seconds",
    "transform_from_msg",
    "yaw_from_quaternion",
]


def stamp_seconds(stamp: Any) -> float:
    """Seconds of a ``builtin_interfaces/Time``-like object (``sec``, ``nanosec``).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> stamp_seconds(NS(sec=3, nanosec=500_000_000))
    3.5
    """
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


class Transform(NamedTuple):
    """One planar transform ``parent -> child`` at ``stamp`` seconds."""

    parent: str
    child: str
    pose: Pose2D
    stamp: float


def transform_from_msg(msg: Any) -> Transform:
    """A :class:`Transform` from a ``geometry_msgs/TransformStamped``-like object.

    Frame names lose a leading ``/`` (tf2 ignores it too).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> t = NS(header=NS(frame_id="odom", stamp=NS(sec=1, nanosec=0)),
    ...        child_frame_id="base_footprint",
    ...        transform=NS(translation=NS(x=1.0, y=2.0, z=0.0),
    ...                     rotation=NS(x=0.0, y=0.0, z=0.0, w=1.0)))
    >>> transform_from_msg(t)
    Transform(parent='odom', child='base_footprint', pose=(1.0, 2.0, 0.0), stamp=1.0)
    """
    tr = msg.transform.translation
    q = msg.transform.rotation
    pose = (float(tr.x), float(tr.y), yaw_from_quaternion(q.x, q.y, q.z, q.w))
    return Transform(
        _frame(msg.header.frame_id),
        _frame(msg.child_frame_id),
        pose,
        stamp_seconds(msg.header.stamp),
    )


def _frame(name: str) -> str:
    return name[1:] if name.startswith("/") else name


class FrameTree:
    """The latest transform of every child frame, and poses along parent chains.

    Examples
    --------
    >>> tree = FrameTree()
    >>> tree.set_transform("map", "odom", (1.0, 0.0, 0.0), stamp=0.5)
    >>> tree.set_transform("odom", "base_footprint", (2.0, 1.0, 0.0), stamp=0.5)
    >>> tree.lookup("map", "base_footprint")
    (3.0, 1.0, 0.0)
    >>> tree.lookup("base_footprint", "map") is None  # only down a parent chain
    True
    """

    #: Longest parent chain followed (guards against a cycle in bad data).
    MAX_DEPTH = 32

    def __init__(self) -> None:
        self._edges: dict[str, Transform] = {}

    def set_transform(self, parent: str, child: str, pose: Pose2D, stamp: float = 0.0) -> None:
        """Store ``parent -> child`` (replacing the child's previous parent and transform)."""
        parent, child = _frame(parent), _frame(child)
        if not parent or not child or parent == child:
            raise ValueError(
                f"a transform needs two different frame names, got {parent!r} -> {child!r}"
            )
        self._edges[child] = Transform(parent, child, tuple(float(v) for v in pose), float(stamp))

    def update(self, tf_msg: Any) -> int:
        """Store every transform of a ``tf2_msgs/TFMessage``-like object; returns how many."""
        count = 0
        for t in tf_msg.transforms:
            tr = transform_from_msg(t)
            self.set_transform(tr.parent, tr.child, tr.pose, tr.stamp)
            count += 1
        return count

    def get(self, child: str) -> Transform | None:
        """The stored transform into ``child``, or None."""
        return self._edges.get(_frame(child))

    def lookup(self, target: str, source: str) -> Pose2D | None:
        """Pose of frame ``source`` in frame ``target`` (``target`` an ancestor), else None."""
        target, source = _frame(target), _frame(source)
        pose: Pose2D = (0.0, 0.0, 0.0)
        frame = source
        for _ in range(self.MAX_DEPTH):
            if frame == target:
                return pose
            edge = self._edges.get(frame)
            if edge is None:
                return None
            pose = compose(edge.pose, pose)
            frame = edge.parent
        return None

    def stamp(self, target: str, source: str) -> float | None:
        """Oldest stamp along the chain of :meth:`lookup` (None when there is no chain)."""
        target, source = _frame(target), _frame(source)
        oldest = math.inf
        frame = source
        for _ in range(self.MAX_DEPTH):
            if frame == target:
                return oldest if math.isfinite(oldest) else None
            edge = self._edges.get(frame)
            if edge is None:
                return None
            oldest = min(oldest, edge.stamp)
            frame = edge.parent
        return None


def map_odom_jump_distance(config: Any, robot: int | None = None) -> float:
    """Metres by which ``map -> odom`` must change to count as a real jump, not SLAM noise.

    The one home of the rule the navigator node and direct mode both smooth with: twice a tile,
    or three times the SLAM's pose error, whichever is larger. With ``robot``, that robot's
    type's pose error (``robot_types.<name>.slam_position_inaccuracy``).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> map_odom_jump_distance(NS(world=NS(tile_size=0.5),
    ...                           robot_constraints=NS(slam_position_inaccuracy=2.0)))
    3.0
    """
    inaccuracy = config.robot_constraints.slam_position_inaccuracy
    if robot is not None and hasattr(config, "robot_type_per_robot"):
        kind = config.robot_type_per_robot()[robot]
        inaccuracy = getattr(kind, "slam_position_inaccuracy", inaccuracy)
    return 2.0 * config.world.tile_size * max(1.0, 1.5 * inaccuracy)


class SmoothedTransform:
    """Running average of a transform whose samples scatter around a slowly moving value.

    The navigator's estimate of ``map -> odom``: the simulated SLAM reports the robot's map pose
    with a fresh random error (``slam_position_inaccuracy``) at every SLAM update, while
    odometry is smooth. Averaging ``map -> odom`` (a plain mean over the first ``1 / min_alpha``
    samples, then an exponential average with weight ``min_alpha``) removes most of that error
    and still follows odometry drift. Yaw is averaged on the circle. A sample equal to the
    previous one is ignored: tf repeats the same estimate every tick between SLAM updates.

    Parameters
    ----------
    min_alpha : float
        Weight of a new sample once warmed up, in (0, 1]; 1 disables smoothing.
    reset_distance : float
        A sample this far (in x, y) from the average restarts it: a real jump (e.g. a loop
        closure), not noise.

    Examples
    --------
    >>> f = SmoothedTransform(min_alpha=0.5)
    >>> _ = f.add((1.0, 0.0, 0.0))
    >>> f.add((3.0, 2.0, 0.0))
    (2.0, 1.0, 0.0)
    >>> f.add((4.0, 1.0, 0.0))
    (3.0, 1.0, 0.0)
    """

    def __init__(self, min_alpha: float = 0.1, reset_distance: float = math.inf) -> None:
        if not (isinstance(min_alpha, (int, float)) and 0.0 < min_alpha <= 1.0):
            raise ValueError(f"min_alpha must be in (0, 1], got {min_alpha!r}")
        if not (isinstance(reset_distance, (int, float)) and reset_distance > 0.0):
            raise ValueError(f"reset_distance must be > 0, got {reset_distance!r}")
        self.min_alpha = float(min_alpha)
        self.reset_distance = float(reset_distance)
        self.samples = 0
        self._x = self._y = self._c = self._s = 0.0
        self._last: Pose2D | None = None

    @property
    def value(self) -> Pose2D | None:
        """The current average, None before the first sample."""
        if self.samples == 0:
            return None
        return self._x, self._y, math.atan2(self._s, self._c)

    def add(self, pose: Pose2D) -> Pose2D:
        """Fold in one sample; returns the new average."""
        x, y, yaw = (float(v) for v in pose)
        last = self._last
        if (
            last is not None
            and math.hypot(x - last[0], y - last[1]) < 1e-6
            and abs(math.sin(yaw - last[2])) < 1e-9
        ):
            return self.value  # a repeat (tf is republished every tick): not new evidence
        self._last = (x, y, yaw)
        if self.samples and math.hypot(x - self._x, y - self._y) > self.reset_distance:
            self.samples = 0
        self.samples += 1
        a = max(1.0 / self.samples, self.min_alpha)
        self._x += a * (x - self._x)
        self._y += a * (y - self._y)
        self._c += a * (math.cos(yaw) - self._c)
        self._s += a * (math.sin(yaw) - self._s)
        return self.value
