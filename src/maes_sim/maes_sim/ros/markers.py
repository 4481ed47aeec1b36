"""RViz markers of the whole simulation (``/maes/markers``): robots, tags, communication links
and moving obstacles (these also alone on ``/maes/obstacles``: :func:`obstacle_markers`)."""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

#: Marker namespaces, so an RViz user can toggle each family.
NS_ROBOTS, NS_HEADINGS, NS_TAGS, NS_LINKS = "robots", "headings", "tags", "comm_links"
NS_OBSTACLES = "obstacles"
#: Height (m) of the drawn obstacles.
OBSTACLE_HEIGHT = 0.5


def _marker(ns: str, mid: int, kind: int, stamp: Time, frame: str) -> Marker:
    m = Marker()
    m.header.stamp = stamp
    m.header.frame_id = frame
    m.ns = ns
    m.id = mid
    m.type = kind
    m.action = Marker.ADD
    m.pose.orientation.w = 1.0
    m.lifetime = Duration(sec=0, nanosec=0)
    return m


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
    """All markers of one tick.

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
        Moving obstacles (``Obstacles.in_metres``), drawn by :func:`obstacle_markers`.
    """
    out = MarkerArray()
    radii = np.broadcast_to(np.asarray(radius_m, dtype=np.float64), (len(poses_m),))
    sizes = sorted(set(radii.tolist()))
    radius_m = max(sizes) if sizes else float(np.asarray(radius_m).max(initial=0.0))
    for mid, size in enumerate(sizes or [radius_m]):  # one sphere list per robot size
        robots = _marker(NS_ROBOTS, mid, Marker.SPHERE_LIST, stamp, frame)
        robots.scale.x = robots.scale.y = 2.0 * size
        robots.scale.z = 0.2 * size
        for (x, y, _), hit, r in zip(
            poses_m.tolist(), colliding.tolist(), radii.tolist(), strict=True
        ):
            if r != size:
                continue
            robots.points.append(Point(x=x, y=y, z=0.0))
            robots.colors.append(
                ColorRGBA(r=0.9, g=0.1, b=0.1, a=1.0)
                if hit
                else ColorRGBA(r=0.1, g=0.5, b=0.9, a=1.0)
            )
        out.markers.append(robots)

    heads = _marker(NS_HEADINGS, 0, Marker.LINE_LIST, stamp, frame)
    heads.scale.x = 0.25 * radius_m
    heads.color = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)
    for (x, y, yaw), r in zip(poses_m.tolist(), radii.tolist(), strict=True):
        heads.points.append(Point(x=x, y=y, z=0.1 * radius_m))
        heads.points.append(
            Point(
                x=x + 1.2 * r * np.cos(yaw),
                y=y + 1.2 * r * np.sin(yaw),
                z=0.1 * radius_m,
            )
        )
    out.markers.append(heads)

    tags = _marker(NS_TAGS, 0, Marker.CUBE_LIST, stamp, frame)
    tags.scale.x = tags.scale.y = tags.scale.z = 0.5 * radius_m
    tags.color = ColorRGBA(r=1.0, g=0.8, b=0.0, a=0.9)
    for x, y in np.asarray(tags_m).reshape(-1, 2).tolist():
        tags.points.append(Point(x=x, y=y, z=0.0))
    out.markers.append(tags)

    link_marker = _marker(NS_LINKS, 0, Marker.LINE_LIST, stamp, frame)
    link_marker.scale.x = 0.05 * radius_m * 2
    link_marker.color = ColorRGBA(r=0.2, g=0.9, b=0.3, a=0.6)
    if links is not None:
        ia, ib = links
        once = ia < ib  # draw each undirected pair once
        for a, b in zip(ia[once].tolist(), ib[once].tolist(), strict=True):
            link_marker.points.append(Point(x=poses_m[a, 0], y=poses_m[a, 1], z=0.05))
            link_marker.points.append(Point(x=poses_m[b, 0], y=poses_m[b, 1], z=0.05))
    out.markers.append(link_marker)
    if obstacles_m is not None:
        out.markers.extend(obstacle_markers(obstacles_m, stamp, frame).markers)
    return out


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
    out = MarkerArray()
    for k, (kind, x, y, a, b) in enumerate(np.asarray(obstacles_m).reshape(-1, 5).tolist()):
        m = _marker(NS_OBSTACLES, k, Marker.CYLINDER if kind == 0 else Marker.CUBE, stamp, frame)
        m.pose.position = Point(x=x, y=y, z=0.5 * OBSTACLE_HEIGHT)
        m.scale.x, m.scale.y, m.scale.z = 2.0 * a, 2.0 * b, OBSTACLE_HEIGHT
        m.color = ColorRGBA(r=0.85, g=0.45, b=0.1, a=0.9)
        out.markers.append(m)
    return out
