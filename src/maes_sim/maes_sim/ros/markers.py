"""RViz markers of the whole simulation (``/maes/markers``): robots, tags, communication links
and moving obstacles (these also alone on ``/maes/obstacles``: :func:`obstacle_markers`).

The markers are written as the bytes a DDS writer sends (:func:`simulation_markers_wire`,
``visualization_msgs/MarkerArray`` in CDR), straight from the arrays: at 120 robots a tick
draws some 15,000 link ends, and one ``geometry_msgs/Point`` object per end cost more than the
rest of a recorded tick. The simulator publishes and records these bytes; the message objects
(:func:`simulation_markers`) are the same bytes read back, for a caller that wants them.

Wire format: CDR, written by :class:`maes_sim.ros.wire.CdrWriter`.
"""

from __future__ import annotations

import struct

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message
from visualization_msgs.msg import Marker, MarkerArray

from .wire import CdrWriter

__all__ = [
    "NS_HEADINGS",
    "NS_LINKS",
    "NS_OBSTACLES",
    "NS_ROBOTS",
    "NS_TAGS",
    "OBSTACLE_HEIGHT",
    "obstacle_markers",
    "obstacle_markers_wire",
    "simulation_markers",
    "simulation_markers_wire",
]

#: Marker namespaces, so an RViz user can toggle each family.
NS_ROBOTS, NS_HEADINGS, NS_TAGS, NS_LINKS = "robots", "headings", "tags", "comm_links"
NS_OBSTACLES = "obstacles"
#: Height (m) of the drawn obstacles.
OBSTACLE_HEIGHT = 0.5

#: Colours (r, g, b, a) of each family (a sphere list's own colour is unset: each robot has one).
_FREE, _HIT = (0.1, 0.5, 0.9, 1.0), (0.9, 0.1, 0.1, 1.0)
_NONE, _HEADING = (0.0, 0.0, 0.0, 0.0), (1.0, 1.0, 1.0, 1.0)
_TAG, _LINK = (1.0, 0.8, 0.0, 0.9), (0.2, 0.9, 0.3, 0.6)
_OBSTACLE = (0.85, 0.45, 0.1, 0.9)

_U32, _STAMP = struct.Struct("<I"), struct.Struct("<iI")
_ID_TYPE_ACTION, _LIFETIME_LOCKED = struct.Struct("<3i"), struct.Struct("<iI?")
_F64_3, _F64_4, _F32_4 = struct.Struct("<3d"), struct.Struct("<4d"), struct.Struct("<4f")


def _marker(
    cdr: CdrWriter,
    ns: str,
    mid: int,
    kind: int,
    stamp: Time,
    frame: str,
    scale: tuple[float, float, float],
    color: tuple[float, float, float, float],
    *,
    position: tuple[float, float, float] = (0.0, 0.0, 0.0),
    points: np.ndarray | None = None,
    colors: np.ndarray | None = None,
) -> None:
    """One ``visualization_msgs/Marker`` (action ADD, identity orientation, no lifetime)."""
    cdr.put(_STAMP, 4, stamp.sec, stamp.nanosec)
    cdr.string(frame)
    cdr.string(ns)
    cdr.put(_ID_TYPE_ACTION, 4, mid, kind, Marker.ADD)
    cdr.put(_F64_3, 8, *position)
    cdr.put(_F64_4, 8, 0.0, 0.0, 0.0, 1.0)
    cdr.put(_F64_3, 8, *scale)
    cdr.put(_F32_4, 4, *color)
    cdr.put(_LIFETIME_LOCKED, 4, 0, 0, False)  # lifetime 0 (forever), frame_locked
    cdr.array(np.empty((0, 3)) if points is None else points, 8)
    cdr.array(np.empty((0, 4)) if colors is None else colors, 4)
    cdr.string("")  # texture_resource
    cdr.put(_STAMP, 4, 0, 0)  # texture.header.stamp
    cdr.string("")  # texture.header.frame_id
    cdr.string("")  # texture.format
    cdr.put(_U32, 4, 0)  # texture.data
    cdr.put(_U32, 4, 0)  # uv_coordinates
    cdr.string("")  # text
    cdr.string("")  # mesh_resource
    cdr.string("")  # mesh_file: filename, data
    cdr.put(_U32, 4, 0)
    cdr.out += b"\x00"  # mesh_use_embedded_materials


def simulation_markers_wire(
    poses_m: np.ndarray,
    radius_m: float | np.ndarray,
    colliding: np.ndarray,
    tags_m: np.ndarray,
    links: tuple[np.ndarray, np.ndarray] | None,
    stamp: Time,
    frame: str = "world",
    obstacles_m: np.ndarray | None = None,
) -> bytes:
    """All markers of one tick, as the bytes of a ``visualization_msgs/MarkerArray``.

    Parameters
    ----------
    poses_m : ndarray, shape (N, 3)
        Robot poses (x, y metres, yaw rad) in ``frame``.
    radius_m : float or ndarray, shape (N,)
        Robot radius, metres (one per robot for a team of types: one sphere list per size).
    colliding : ndarray of bool, shape (N,)
        Colliding robots are drawn red.
    tags_m : ndarray, shape (T, 2)
        Tag positions, metres.
    links : (ndarray, ndarray) or None
        Directed communication links (sender, receiver) to draw, or None to draw none.
    obstacles_m : ndarray, shape (K, 5), optional
        Moving obstacles (``Obstacles.in_metres``), drawn as in :func:`obstacle_markers`.
    """
    poses_m = np.asarray(poses_m, dtype=np.float64).reshape(-1, 3)
    n = len(poses_m)
    radii = np.broadcast_to(np.asarray(radius_m, dtype=np.float64), (n,))
    sizes = sorted(set(radii.tolist()))
    radius_m = max(sizes) if sizes else float(np.asarray(radius_m).max(initial=0.0))
    tags = np.asarray(tags_m, dtype=np.float64).reshape(-1, 2)
    obstacles = None if obstacles_m is None else np.asarray(obstacles_m).reshape(-1, 5)
    count = len(sizes or [radius_m]) + 3 + (0 if obstacles is None else len(obstacles))
    cdr = CdrWriter()
    cdr.put(_U32, 4, count)

    on_floor = np.zeros((n, 3))
    on_floor[:, :2] = poses_m[:, :2]
    hit = np.asarray(colliding, dtype=bool).reshape(n)
    paint = np.where(hit[:, None], np.array(_HIT), np.array(_FREE))
    for mid, size in enumerate(sizes or [radius_m]):  # one sphere list per robot size
        mine = radii == size
        diameter = 2.0 * size
        _marker(
            cdr,
            NS_ROBOTS,
            mid,
            Marker.SPHERE_LIST,
            stamp,
            frame,
            (diameter, diameter, 0.2 * size),
            _NONE,
            points=on_floor[mine],
            colors=paint[mine],
        )

    heads = np.empty((n, 2, 3))
    heads[:, :, 2] = 0.1 * radius_m
    heads[:, 0, :2] = poses_m[:, :2]
    heads[:, 1, 0] = poses_m[:, 0] + 1.2 * radii * np.cos(poses_m[:, 2])
    heads[:, 1, 1] = poses_m[:, 1] + 1.2 * radii * np.sin(poses_m[:, 2])
    _marker(
        cdr,
        NS_HEADINGS,
        0,
        Marker.LINE_LIST,
        stamp,
        frame,
        (0.25 * radius_m, 0.0, 0.0),
        _HEADING,
        points=heads.reshape(-1, 3),
    )

    cube = 0.5 * radius_m
    tag_points = np.zeros((len(tags), 3))
    tag_points[:, :2] = tags
    _marker(
        cdr,
        NS_TAGS,
        0,
        Marker.CUBE_LIST,
        stamp,
        frame,
        (cube, cube, cube),
        _TAG,
        points=tag_points,
    )

    ends = np.empty((0, 2, 3))
    if links is not None:
        ia, ib = (np.asarray(side, dtype=np.int64) for side in links)
        once = ia < ib  # draw each undirected pair once
        ends = np.full((int(once.sum()), 2, 3), 0.05)
        ends[:, 0, :2] = poses_m[ia[once], :2]
        ends[:, 1, :2] = poses_m[ib[once], :2]
    _marker(
        cdr,
        NS_LINKS,
        0,
        Marker.LINE_LIST,
        stamp,
        frame,
        (0.05 * radius_m * 2, 0.0, 0.0),
        _LINK,
        points=ends.reshape(-1, 3),
    )
    if obstacles is not None:
        _obstacles(cdr, obstacles, stamp, frame)
    return bytes(cdr.out)


def _obstacles(cdr: CdrWriter, obstacles_m: np.ndarray, stamp: Time, frame: str) -> None:
    for k, (kind, x, y, a, b) in enumerate(obstacles_m.tolist()):
        _marker(
            cdr,
            NS_OBSTACLES,
            k,
            Marker.CYLINDER if kind == 0 else Marker.CUBE,
            stamp,
            frame,
            (2.0 * a, 2.0 * b, OBSTACLE_HEIGHT),
            _OBSTACLE,
            position=(x, y, 0.5 * OBSTACLE_HEIGHT),
        )


def obstacle_markers_wire(obstacles_m: np.ndarray, stamp: Time, frame: str = "world") -> bytes:
    """:func:`obstacle_markers` as the bytes of a ``visualization_msgs/MarkerArray``."""
    obstacles = np.asarray(obstacles_m).reshape(-1, 5)
    cdr = CdrWriter()
    cdr.put(_U32, 4, len(obstacles))
    _obstacles(cdr, obstacles, stamp, frame)
    return bytes(cdr.out)


def simulation_markers(
    poses_m: np.ndarray,
    radius_m: float | np.ndarray,
    colliding: np.ndarray,
    tags_m: np.ndarray,
    links: tuple[np.ndarray, np.ndarray] | None,
    stamp: Time,
    frame: str = "world",
    obstacles_m: np.ndarray | None = None,
) -> MarkerArray:
    """:func:`simulation_markers_wire`'s markers as message objects (the same arguments)."""
    wire = simulation_markers_wire(
        poses_m, radius_m, colliding, tags_m, links, stamp, frame=frame, obstacles_m=obstacles_m
    )
    return deserialize_message(wire, MarkerArray)


def obstacle_markers(obstacles_m: np.ndarray, stamp: Time, frame: str = "world") -> MarkerArray:
    """One marker per moving obstacle (namespace ``obstacles``, id = its row): a cylinder for a
    disc, a cube for a box, at its place this tick.

    ``obstacles_m`` (K, 5): rows ``kind (0 disc, 1 box), x, y, a, b`` in metres in ``frame``
    (``a``, ``b``: a disc's radius twice, or a box's half sides). The recording and the replay
    read the obstacles back from these markers (``pose.position``, ``scale``, ``type``).

    Examples
    --------
    >>> m = obstacle_markers(np.array([[0.0, 1.0, 2.0, 0.5, 0.5], [1.0, 0, 0, 1.0, 0.25]]),
    ...                      Time()).markers
    >>> [(k.type == Marker.CYLINDER, k.scale.x, k.scale.y) for k in m]
    [(True, 1.0, 1.0), (False, 2.0, 0.5)]
    """
    return deserialize_message(obstacle_markers_wire(obstacles_m, stamp, frame), MarkerArray)
