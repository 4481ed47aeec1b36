"""The yielding corridor test on a crowd, compiled (numba, ``maes_common.jit``).

The kernels behind :func:`~.yielding.robots_in_the_way` and :func:`~.yielding.free_heading`
when a robot senses a crowd: the per-robot test of the plain loop there, with the same IEEE
operations in the same order (no fused multiply-adds: numba compiles without ``fastmath``), so
the same robots to the bit, without a dozen numpy passes over a few dozen robots per check.
"""

from __future__ import annotations

import numpy as np

from maes_common.jit import njit


@njit(cache=True)
def _hit(
    x: float,
    y: float,
    px: float,
    py: float,
    c: float,
    s: float,
    ahead: float,
    beside: float,
    close: float,
) -> bool:
    dx = x - px
    dy = y - py
    along = c * dx + s * dy
    if not (along > 0.0 and along <= ahead):
        return False
    side = abs(-s * dx + c * dy)
    limit = close if dx * dx + dy * dy < beside * beside else beside
    return side < limit


@njit(cache=True)
def corridor_hits(
    xy: np.ndarray,
    px: float,
    py: float,
    c: float,
    s: float,
    ahead: float,
    beside: float,
    close: float,
) -> np.ndarray:
    """Indices (int64) of the robots ``xy`` (K, 2) in the corridor of a drive from
    ``(px, py)`` along the heading of cosine ``c`` and sine ``s``, ascending."""
    out = np.empty(xy.shape[0], dtype=np.int64)
    n = 0
    for k in range(xy.shape[0]):
        if _hit(xy[k, 0], xy[k, 1], px, py, c, s, ahead, beside, close):
            out[n] = k
            n += 1
    return out[:n]


@njit(cache=True)
def headings_blocked(
    xy: np.ndarray,
    px: float,
    py: float,
    cs: np.ndarray,
    ss: np.ndarray,
    ahead: float,
    beside: float,
    close: float,
) -> np.ndarray:
    """For each heading (cosines ``cs``, sines ``ss``), whether a robot of ``xy`` (K, 2) is in
    the corridor of a drive from ``(px, py)`` along it."""
    out = np.zeros(cs.shape[0], dtype=np.bool_)
    for h in range(cs.shape[0]):
        for k in range(xy.shape[0]):
            if _hit(xy[k, 0], xy[k, 1], px, py, cs[h], ss[h], ahead, beside, close):
                out[h] = True
                break
    return out
