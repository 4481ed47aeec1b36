"""Occupancy-grid mapping kernels: log-odds updates from scans, and map merging by poses.

Used by :mod:`maes_sim.core.occupancy` (``stack.slam: occupancy``). Grid coordinates as every
kernel's (:mod:`maes_sim.core.grid`): tile ``(ix, iy)`` covers ``[ix, ix + 1) x [iy, iy + 1)``.
Each map is a pair: log-odds (M, H, W) float32 and codes (M, H, W) uint8 (UNKNOWN, OPEN, SOLID:
the simulated SLAM's codes, which every reader of a SLAM map takes). A cell never updated stays
UNKNOWN; an updated one is SOLID when its log-odds is above 0 (occupied more likely than not),
else OPEN. Robots that merge maps keep a third array, their *own* evidence (M, H, W) float32: the
log-odds of their own scans alone, which is what they hand over when merging.

Scan update (:func:`integrate_scans`), per robot, ray by ray in order:

* the ray starts at the robot's *estimated* position and points at its estimated heading plus
  the ray's offset (the same fan and the same rotation as the lidar kernel,
  :func:`maes_sim.core.kernels.cast_rays`);
* a dropped ray (``use`` False) changes nothing;
* a ray that returned (``hit``) lowers every cell it crosses before its end point and raises the
  cell holding the end point pushed ``hit_depth`` tiles further along the ray (a lidar measures
  an obstacle's near surface; the obstacle is behind it, so a range exactly on a tile boundary
  marks the tile beyond, and a small range error does not mark the tile in front);
* a ray that returned nothing lowers every cell up to its range, the last one included;
* each update adds ``l_hit`` or ``l_miss`` and clamps to ``[l_min, l_max]``, so a cell can change
  its mind; cells outside the map are skipped. The own evidence, when kept, takes the same
  update (clamped on its own).

Merge (:func:`merge_maps`): the members' own evidence and maps are resampled into one common
frame by a rigid transform each (nearest cell centre). Where some member has observed a cell
itself, the common value is the clamped sum of their own evidence (independent observations:
log-odds add); elsewhere, where some member's map knows the cell from an earlier merge, the mean
of those maps (knowledge relayed from robots not in the group, counted once however often it
is merged). The common map is resampled back into each member's frame and replaces its map
where it knows the cell (a member keeps its map elsewhere). Each merge starts again from the
own evidence, so merging the same maps twice counts nothing twice.
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit
from maes_sim.core.grid import OPEN, SOLID, UNKNOWN
from maes_sim.core.kernels.reference import AXIS_SNAP

__all__ = ["integrate_scans", "merge_maps"]

_UNKNOWN = int(UNKNOWN)
_OPEN = int(OPEN)
_SOLID = int(SOLID)


@njit(**JIT_OPTIONS)
def _clamp(value, l_min, l_max):  # pragma: no cover - compiled
    if value < l_min:
        return l_min
    if value > l_max:
        return l_max
    return value


@njit(**JIT_OPTIONS)
def _update(lf, cf, of, has_own, cell, delta, l_min, l_max):  # pragma: no cover - compiled
    value = _clamp(lf[cell] + delta, l_min, l_max)
    lf[cell] = value
    cf[cell] = _SOLID if value > 0.0 else _OPEN
    if has_own:
        of[cell] = _clamp(of[cell] + delta, l_min, l_max)


@njit(**JIT_OPTIONS)
def integrate_scans(
    logodds,
    codes,
    own,
    index,
    origins,
    rot,
    base,
    ranges,
    hits,
    use,
    hit_depth,
    l_hit,
    l_miss,
    l_min,
    l_max,
):  # pragma: no cover - compiled
    """Add one scan per robot to its map (the rules: the module docstring). In place.

    Parameters
    ----------
    logodds : float32 ndarray (M, H, W)
    codes : uint8 ndarray (M, H, W)
    own : float32 ndarray (M, H, W) or (0, 0, 0)
        The own evidence, updated alike (an empty array: none kept).
    index : int64 ndarray (n,)
        Map of each scan's robot.
    origins : float64 ndarray (n, 2)
        Estimated positions, grid coordinates.
    rot : float64 ndarray (n, 2)
        ``(cos, sin)`` of each estimated heading.
    base : float64 ndarray (1 or n, R, 2)
        Unit ray directions at heading 0 (the lidar's fan).
    ranges : float64 ndarray (n, R)
        Tiles.
    hits, use : bool ndarray (n, R)
        Whether a ray returned; whether it counts (False: dropped).
    hit_depth : float
        Tiles the end point of a returned ray is pushed along it.
    l_hit, l_miss, l_min, l_max : float32
        Log-odds of a hit and of a miss, and the clamp.
    """
    h = codes.shape[1]
    w = codes.shape[2]
    hw = h * w
    lf = logodds.reshape(logodds.size)
    cf = codes.reshape(codes.size)
    of = own.reshape(own.size)
    has_own = own.size > 0
    for i in range(origins.shape[0]):
        so = index[i] * hw
        ox = origins[i, 0]
        oy = origins[i, 1]
        x0 = math.floor(ox)
        y0 = math.floor(oy)
        c = rot[i, 0]
        s = rot[i, 1]
        b = i * (base.shape[0] > 1)
        for k in range(base.shape[1]):
            if not use[i, k]:
                continue
            bx = base[b, k, 0]
            by = base[b, k, 1]
            dx = c * bx - s * by
            dy = s * bx + c * by
            if abs(dx) < AXIS_SNAP:
                dx = 0.0
            if abs(dy) < AXIS_SNAP:
                dy = 0.0
            is_hit = hits[i, k]
            end = ranges[i, k] + hit_depth if is_hit else ranges[i, k]
            sx = 0
            tx = math.inf
            rx = 0.0
            if dx > 0.0:
                sx = 1
                rx = 1.0 / dx
                tx = (x0 + 1 - ox) * rx
            elif dx < 0.0:
                sx = -1
                rx = 1.0 / -dx
                tx = (ox - x0) * rx
            sy = 0
            ty = math.inf
            ry = 0.0
            if dy > 0.0:
                sy = 1
                ry = 1.0 / dy
                ty = (y0 + 1 - oy) * ry
            elif dy < 0.0:
                sy = -1
                ry = 1.0 / -dy
                ty = (oy - y0) * ry
            ix = x0
            iy = y0
            while True:
                t = min(tx, ty)
                if t > end:
                    break
                # the ray leaves this cell before its end: crossed, so free
                if 0 <= ix < w and 0 <= iy < h:
                    _update(lf, cf, of, has_own, so + iy * w + ix, l_miss, l_min, l_max)
                if tx == ty:  # through a corner: on diagonally
                    ix += sx
                    iy += sy
                    tx += rx
                    ty += ry
                elif tx < ty:
                    ix += sx
                    tx += rx
                else:
                    iy += sy
                    ty += ry
            if 0 <= ix < w and 0 <= iy < h:
                delta = l_hit if is_hit else l_miss
                _update(lf, cf, of, has_own, so + iy * w + ix, delta, l_min, l_max)


@njit(**JIT_OPTIONS)
def merge_maps(
    logodds, codes, own, members, to_common, l_min, l_max, total, count
):  # pragma: no cover - compiled
    """Merge the maps ``members`` (g,) in place (the rules: the module docstring).

    ``logodds``, ``own`` (M, H, W) float32 and ``codes`` (M, H, W) uint8: the maps, the own
    evidence (read) and the codes. ``to_common`` (g, 4) holds each member's transform from its
    map's grid coordinates into the common frame's: ``(cos, sin, tx, ty)``, ``q = R p + t``.
    ``total`` (2, H, W) float64 and ``count`` (2, H, W) int32 are scratch arrays (own evidence,
    maps). Own evidence of exactly 0 counts as no observation.
    """
    h = codes.shape[1]
    w = codes.shape[2]
    hw = h * w
    lf = logodds.reshape(logodds.size)
    cf = codes.reshape(codes.size)
    of = own.reshape(own.size)
    tf = total.reshape(2 * hw)  # own evidence summed: [0, hw); maps summed: [hw, 2 hw)
    nf = count.reshape(2 * hw)
    tf[:] = 0.0
    nf[:] = 0
    fw = float(w)
    fh = float(h)
    for q in range(members.shape[0]):
        so = members[q] * hw
        c = to_common[q, 0]
        s = to_common[q, 1]
        tx = to_common[q, 2]
        ty = to_common[q, 3]
        # R^T (centre - t): where a common cell's centre lies in the member's map, stepped
        # along each row (one add per cell instead of the products)
        cx0 = 0.5 - tx
        for iy in range(h):
            cy = iy + 0.5 - ty
            px = c * cx0 + s * cy
            py = c * cy - s * cx0
            row = iy * w
            for ix in range(w):
                if px >= 0.0 and py >= 0.0 and px < fw and py < fh:
                    cell = so + int(py) * w + int(px)  # int() is floor here: both >= 0
                    value = of[cell]
                    k = row + ix
                    tf[k] += value  # an unobserved cell's evidence is 0
                    nf[k] += value != 0.0
                    if cf[cell] != _UNKNOWN:
                        tf[hw + k] += lf[cell]
                        nf[hw + k] += 1
                px += c
                py -= s
    common = np.empty(hw, dtype=np.float32)
    verdict = np.zeros(hw, dtype=np.uint8)
    for k in range(hw):
        if nf[k] > 0:
            value = _clamp(np.float32(tf[k]), l_min, l_max)
        elif nf[hw + k] > 0:
            value = np.float32(tf[hw + k] / nf[hw + k])
        else:
            continue
        common[k] = value
        verdict[k] = _SOLID if value > 0.0 else _OPEN
    for q in range(members.shape[0]):
        so = members[q] * hw
        c = to_common[q, 0]
        s = to_common[q, 1]
        tx = to_common[q, 2]
        ty = to_common[q, 3]
        for iy in range(h):
            cy = iy + 0.5
            px = c * 0.5 - s * cy + tx  # R centre + t, stepped along the row
            py = s * 0.5 + c * cy + ty
            row = so + iy * w
            for ix in range(w):
                if px >= 0.0 and py >= 0.0 and px < fw and py < fh:
                    k = int(py) * w + int(px)
                    if verdict[k] != _UNKNOWN:
                        lf[row + ix] = common[k]
                        cf[row + ix] = verdict[k]
                px += c
                py += s
