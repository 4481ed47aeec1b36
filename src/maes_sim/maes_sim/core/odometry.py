"""Odometry: the pose a robot believes, dead-reckoned from its true motion with optional noise.

Off by default (both noises 0: the estimate follows the truth exactly and nothing is drawn from
the random generator). Noises are the config keys ``motion.odometry_noise`` (std dev, tiles per
tile travelled) and ``motion.heading_noise`` (rad per rad turned), per robot type
``robot_types.<name>.motion.odometry_noise`` / ``heading_noise``.
"""

from __future__ import annotations

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit


def advance_odometry(
    estimate: np.ndarray,
    odom_delta: np.ndarray,
    odometry_noise: float | np.ndarray,
    heading_noise: float | np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Dead-reckon the pose a robot believes from its true motion increments (pure).

    The measured increment is the true one with a scale error per increment:
    translation ``(dx, dy) * (1 + e_s)``, ``e_s ~ N(0, odometry_noise)`` (so the error's std dev
    is ``odometry_noise`` tiles per tile travelled), rotation ``dtheta * (1 + e_r)``,
    ``e_r ~ N(0, heading_noise)`` (rad per rad turned). It is applied in the estimate's own
    frame, so heading errors bend later translations (drift grows like real odometry). When both
    noises are 0 nothing is drawn from ``rng`` and the estimate follows the truth exactly;
    otherwise exactly 2N normals are drawn per call.

    Parameters
    ----------
    estimate : ndarray, shape (N, 3)
        Believed poses ``(x, y, heading)``.
    odom_delta : ndarray, shape (N, 3)
        :attr:`TickResult.odom_delta`.
    odometry_noise, heading_noise : float or ndarray, shape (N,)
        Standard deviations (>= 0): one for every robot, or one per robot (robot types).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (N, 3)
        New believed poses, heading wrapped to [-pi, pi).

    Examples
    --------
    >>> est = advance_odometry(np.zeros((1, 3)), np.array([[1.0, 0.0, 0.5]]), 0.0, 0.0,
    ...                        np.random.default_rng(0))
    >>> est.round(3).tolist()
    [[1.0, 0.0, 0.5]]
    """
    est = np.array(estimate, dtype=np.float64)
    delta = np.asarray(odom_delta, dtype=np.float64)
    if est.ndim != 2 or est.shape[1] != 3 or delta.shape != est.shape:
        raise ValueError(
            f"estimate and odom_delta must both be (N, 3), got {est.shape}, {delta.shape}"
        )
    noisy = check_noises(len(est), odometry_noise, heading_noise)
    return dead_reckon(est, delta, odometry_noise, heading_noise, noisy, rng)


def check_noises(
    n: int, odometry_noise: float | np.ndarray, heading_noise: float | np.ndarray
) -> bool:
    """Raise unless both noises are finite and >= 0, one or one per robot of ``n``; return
    whether any is > 0 (the ``noisy`` of :func:`dead_reckon`)."""
    for name, val in (("odometry_noise", odometry_noise), ("heading_noise", heading_noise)):
        arr = np.asarray(val, dtype=np.float64)
        if not np.isfinite(arr).all() or (arr < 0.0).any() or arr.shape not in ((), (n,)):
            raise ValueError(f"{name} must be finite and >= 0 (one or one per robot), got {val!r}")
    return bool(np.any(np.asarray(odometry_noise) > 0.0) or np.any(np.asarray(heading_noise) > 0.0))


def dead_reckon(
    est: np.ndarray,
    delta: np.ndarray,
    odometry_noise: float | np.ndarray,
    heading_noise: float | np.ndarray,
    noisy: bool,
    rng: np.random.Generator,
) -> np.ndarray:
    """:func:`advance_odometry` on checked arguments, updating ``est`` (a float64 (N, 3) array
    the caller owns) in place and returning it; ``noisy``: whether any noise is > 0. The
    simulator checks its noises once, when it is built, and calls this every tick."""
    scale_t, scale_r = draw_scales(len(est), odometry_noise, heading_noise, noisy, rng)
    # the trigonometry stays numpy's (the same bits as ever), the arithmetic is compiled
    heading = est[:, 2]
    _reckon_kernel(est, delta, np.cos(heading), np.sin(heading), scale_t, scale_r, noisy)
    return est


def draw_scales(
    n: int,
    odometry_noise: float | np.ndarray,
    heading_noise: float | np.ndarray,
    noisy: bool,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """The scale errors ``(1 + e_s, 1 + e_r)`` (N,) of one :func:`dead_reckon` step: 2N normals
    drawn from ``rng`` when ``noisy``, else nothing drawn and two empty arrays (not read: the
    scales are 1, exact as is)."""
    if not noisy:
        return _NO_SCALE, _NO_SCALE
    e = rng.standard_normal((n, 2))
    return 1.0 + odometry_noise * e[:, 0], 1.0 + heading_noise * e[:, 1]


_NO_SCALE = np.ones(0)


@njit(**JIT_OPTIONS)
def _reckon_kernel(est, delta, c, s, scale_t, scale_r, noisy):
    """:func:`dead_reckon`'s update of ``est`` in place, the operations in the order of its
    numpy form (``c * dx - s * dy`` ..., the heading wrapped by ``(h + dtheta + pi) % 2 pi -
    pi`` with Python's modulo, which is numpy's): the same bits."""
    two_pi = 2.0 * np.pi
    for i in range(est.shape[0]):
        dx = delta[i, 0]
        dy = delta[i, 1]
        dtheta = delta[i, 2]
        if noisy:
            dx = dx * scale_t[i]
            dy = dy * scale_t[i]
            dtheta = dtheta * scale_r[i]
        est[i, 0] += c[i] * dx - s[i] * dy
        est[i, 1] += s[i] * dx + c[i] * dy
        est[i, 2] = (est[i, 2] + dtheta + np.pi) % two_pi - np.pi
