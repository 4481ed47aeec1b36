"""Yielding to robots: hold a straight move while another robot stands in the way.

The MAES motion model drives straight or turns in place, so two discs can only touch while one
of them drives. Before a drive command is sent, :func:`robot_in_the_way` looks at the other
robots the robot senses (``State.nearby_robots``) and holds the command (linear speed 0) while
one of them is inside the corridor the drive sweeps next: ahead (behind, when reversing) within
``lookahead``, and closer to the line of travel than two radii plus ``margin``. The margin
absorbs the difference between the robot's believed pose (its SLAM estimate) and the sensed
robots' positions. A robot held long enough makes no progress, so the navigator's recovery
replans around the robots (:func:`~.navigator.robots_as_obstacles`), as Nav2 does when its
local costmap shows an obstacle on the path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["robot_in_the_way"]


def robot_in_the_way(
    pose: Sequence[float],
    direction: float,
    robots: Sequence[Sequence[float]],
    radius: float,
    margin: float,
    lookahead: float,
) -> bool:
    """Whether a robot lies in the corridor a straight drive from ``pose`` sweeps next.

    Parameters
    ----------
    pose : (x, y, yaw)
        The driving robot (metres, rad).
    direction : float
        Sign of the linear command: > 0 forwards, < 0 reversing, 0 never in the way.
    robots : sequence of (x, y)
        Other robots' centres (same frame).
    radius : float
        Robot radius (metres); two discs touch at ``2 * radius``.
    margin : float
        Extra sideways and forward clearance (metres).
    lookahead : float
        How far ahead of the robot's centre (metres) a robot may be and still count, measured
        to the other robot's centre, plus ``2 * radius``.

    Returns
    -------
    bool

    Examples
    --------
    >>> robot_in_the_way((0.0, 0.0, 0.0), 1.0, [(1.0, 0.2)], 0.3, 0.2, 0.5)
    True
    >>> robot_in_the_way((0.0, 0.0, 0.0), 1.0, [(-1.0, 0.0)], 0.3, 0.2, 0.5)  # behind
    False
    >>> robot_in_the_way((0.0, 0.0, 0.0), -1.0, [(-1.0, 0.0)], 0.3, 0.2, 0.5)  # reversing
    True
    >>> robot_in_the_way((0.0, 0.0, 0.0), 1.0, [(1.0, 0.9)], 0.3, 0.2, 0.5)  # beside the path
    False
    """
    if direction == 0.0 or len(robots) == 0:
        return False
    heading = float(pose[2]) if direction > 0 else float(pose[2]) + math.pi
    c, s = math.cos(heading), math.sin(heading)
    px, py = float(pose[0]), float(pose[1])
    contact = 2.0 * radius
    ahead, beside = contact + lookahead, contact + margin
    # a plain loop over the few robots sensed (float arithmetic as numpy's, in the same order)
    for x, y in robots:
        dx = float(x) - px
        dy = float(y) - py
        along = c * dx + s * dy
        if 0.0 < along <= ahead and abs(-s * dx + c * dy) < beside:
            return True
    return False
