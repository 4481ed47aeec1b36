"""Planar pose algebra, the one home of it: ``(x, y, yaw)`` poses, one at a time or row-wise.

A pose ``a`` read as a transform maps coordinates of its child frame into its parent frame;
``compose(a, b)`` is ``a * b`` (``b`` given in ``a``'s frame, expressed in ``a``'s parent) and
``inverse(a)`` its inverse. :func:`compose` wraps the yaw into ``(-pi, pi]`` (the controller's
and navigator's frame chains read angles); the row-wise :func:`compose_many` leaves it unwrapped
(the simulator's tick transforms, which a quaternion carries anyway). Pure Python and numpy: no
ROS, so the core, the nodes and direct mode all use it.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "Pose2D",
    "compose",
    "compose_many",
    "inverse",
    "inverse_many",
    "quaternion_from_yaw",
    "yaw_from_quaternion",
]

#: A planar pose: x, y (metres or tiles) and yaw (rad).
Pose2D = tuple[float, float, float]


def quaternion_from_yaw(yaw: float) -> tuple[float, float]:
    """The ``(z, w)`` of the planar quaternion ``(0, 0, z, w)``: a rotation of ``yaw`` rad
    about +z. Every message the project sends computes it here, so a yaw read back from any
    of them (``maes_common.contract.wire_yaw``) is the same to the bit.

    Examples
    --------
    >>> z, w = quaternion_from_yaw(math.pi)
    >>> round(z, 6), round(w, 6)
    (1.0, 0.0)
    >>> yaw_from_quaternion(0.0, 0.0, *quaternion_from_yaw(0.25)) == 0.25
    True
    """
    half = 0.5 * yaw
    return math.sin(half), math.cos(half)


def yaw_from_quaternion(x: float, y: float, z: float, w: float) -> float:
    """Yaw (rotation about z, rad) of a quaternion (roll and pitch ignored).

    Examples
    --------
    >>> round(yaw_from_quaternion(0.0, 0.0, math.sin(0.5), math.cos(0.5)), 6)
    1.0
    """
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def compose(a: Pose2D, b: Pose2D) -> Pose2D:
    """``a * b``: pose ``b`` given in frame ``a``, expressed in ``a``'s parent frame.

    Examples
    --------
    >>> x, y, yaw = compose((1.0, 0.0, math.pi / 2), (2.0, 0.0, 0.0))
    >>> round(x, 6), round(y, 6), round(yaw, 6)
    (1.0, 2.0, 1.570796)
    >>> round(compose((0.0, 0.0, 3.0), (0.0, 0.0, 1.0))[2], 6)  # wrapped into (-pi, pi]
    -2.283185
    """
    ax, ay, ath = a
    bx, by, bth = b
    c, s = math.cos(ath), math.sin(ath)
    yaw = math.atan2(math.sin(ath + bth), math.cos(ath + bth))
    return ax + c * bx - s * by, ay + s * bx + c * by, yaw


def inverse(a: Pose2D) -> Pose2D:
    """The inverse transform: ``compose(a, inverse(a))`` is the identity.

    Examples
    --------
    >>> [round(v, 6) + 0.0 for v in compose((1.0, 2.0, 0.5), inverse((1.0, 2.0, 0.5)))]
    [0.0, 0.0, 0.0]
    """
    ax, ay, ath = a
    c, s = math.cos(ath), math.sin(ath)
    return -c * ax - s * ay, s * ax - c * ay, -ath


def compose_many(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise 2-D pose composition ``a[k] * b[k]`` of (N, 3) arrays (x, y, yaw); the yaw is
    the plain sum (not wrapped).

    Examples
    --------
    >>> compose_many(np.array([[1.0, 0.0, np.pi / 2]]), np.array([[2.0, 0.0, 0.0]])).round(6)
    array([[1.      , 2.      , 1.570796]])
    """
    c, s = np.cos(a[:, 2]), np.sin(a[:, 2])
    out = np.empty((a.shape[0], 3))  # filled column by column: cheaper than column_stack
    out[:, 0] = a[:, 0] + c * b[:, 0] - s * b[:, 1]
    out[:, 1] = a[:, 1] + s * b[:, 0] + c * b[:, 1]
    out[:, 2] = a[:, 2] + b[:, 2]
    return out


def inverse_many(a: np.ndarray) -> np.ndarray:
    """Row-wise inverse of (N, 3) poses (x, y, yaw).

    Examples
    --------
    >>> p = np.array([[1.0, 2.0, 0.5]])
    >>> np.allclose(compose_many(p, inverse_many(p)), 0.0)
    True
    """
    c, s = np.cos(a[:, 2]), np.sin(a[:, 2])
    out = np.empty((a.shape[0], 3))
    out[:, 0] = -c * a[:, 0] - s * a[:, 1]
    out[:, 1] = s * a[:, 0] - c * a[:, 1]
    out[:, 2] = -a[:, 2]
    return out
