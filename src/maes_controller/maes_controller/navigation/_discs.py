"""Lethal discs around robots on a costmap, every robot at once (numba, ``maes_common.jit``).

The kernel behind :func:`~.navigator.robots_as_obstacles`: the same per-cell test the numpy
version made robot by robot (a cell is marked when its nearest point lies within the radius of a
position), in one compiled pass over every position's window of cells.
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import njit


@njit(cache=True)
def mark_discs(
    out: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
    positions: np.ndarray,
    origin_x: float,
    origin_y: float,
    res: float,
    radius: float,
) -> None:
    """Set to 100 every cell of ``out`` (H, W) any part of which lies within ``radius`` of a
    row of ``positions`` (P, 2); ``xs`` (W,) and ``ys`` (H,) are the cell centres.
    """
    height, width = out.shape
    half = 0.5 * res
    r2 = radius * radius
    reach = int(math.ceil(radius / res)) + 1  # cells beyond it are farther than radius
    for k in range(positions.shape[0]):
        px = positions[k, 0]
        py = positions[k, 1]
        cx = int(math.floor((px - origin_x) / res))
        cy = int(math.floor((py - origin_y) / res))
        x0, x1 = max(cx - reach, 0), min(cx + reach + 1, width)
        y0, y1 = max(cy - reach, 0), min(cy + reach + 1, height)
        for iy in range(y0, y1):
            gy = max(abs(ys[iy] - py) - half, 0.0)
            gy2 = gy * gy
            for ix in range(x0, x1):
                gx = max(abs(xs[ix] - px) - half, 0.0)
                if gx * gx + gy2 <= r2:
                    out[iy, ix] = 100
