"""Compiled ray cut of the moving obstacles (:func:`maes_sim.core.obstacles.stop_rays_at_obstacles`
is the documented face; this module is private).

For each robot, only the obstacles whose bounding circle is within the lidar's range of it are
tested, ray by ray: a disc by the ray-circle intersection, a box (sides along the axes) by the
slab method. Robots, obstacles and rays are processed in a fixed order, so equal inputs give
bit-identical outputs.
"""

from __future__ import annotations

import math

from maes_common.jit import JIT_OPTIONS, njit


@njit(inline="always", **JIT_OPTIONS)
def _slab(o, u, lo, hi, t_near, t_far):
    """Narrow ``[t_near, t_far]`` to where the ray ``o + t u`` (one axis) is in ``[lo, hi]``."""
    if u == 0.0:
        if o < lo or o > hi:
            return math.inf, -math.inf
        return t_near, t_far
    t1 = (lo - o) / u
    t2 = (hi - o) / u
    return max(t_near, min(t1, t2)), min(t_far, max(t1, t2))


@njit(inline="always", **JIT_OPTIONS)
def _ray_hit(ox, oy, ux, uy, kind, cx, cy, a, b):
    """Distance along the unit ray ``(ox, oy) + t (ux, uy)`` to the obstacle (0.0 when the origin
    is inside; ``inf`` when the ray misses it)."""
    if kind == 0.0:
        rx = ox - cx
        ry = oy - cy
        inside = rx * rx + ry * ry - a * a
        if inside <= 0.0:
            return 0.0
        proj = rx * ux + ry * uy
        if proj >= 0.0:
            return math.inf
        disc = proj * proj - inside
        if disc < 0.0:
            return math.inf
        return -proj - math.sqrt(disc)
    t_near, t_far = _slab(ox, ux, cx - a, cx + a, -math.inf, math.inf)
    t_near, t_far = _slab(oy, uy, cy - b, cy + b, t_near, t_far)
    if t_near > t_far or t_far < 0.0:
        return math.inf
    return max(t_near, 0.0)


@njit(**JIT_OPTIONS)
def cut_rays_at_obstacles(origins, headings, base, max_range, shapes, ranges, hits):
    """Shorten ``ranges`` (N, R) in place (and set ``hits``) where a ray meets an obstacle of
    ``shapes`` (K, 5: ``kind, x, y, a, b``) first; ``base`` (R, 2) are the ray directions at
    heading 0, rotated by each robot's heading."""
    for i in range(origins.shape[0]):
        ox = origins[i, 0]
        oy = origins[i, 1]
        c = math.cos(headings[i])
        s = math.sin(headings[i])
        for k in range(shapes.shape[0]):
            kind = shapes[k, 0]
            cx = shapes[k, 1]
            cy = shapes[k, 2]
            a = shapes[k, 3]
            b = shapes[k, 4]
            bound = a if kind == 0.0 else math.sqrt(a * a + b * b)
            dx = cx - ox
            dy = cy - oy
            reach = max_range + bound
            if dx * dx + dy * dy > reach * reach:
                continue  # out of this robot's lidar range
            for j in range(base.shape[0]):
                ux = c * base[j, 0] - s * base[j, 1]
                uy = s * base[j, 0] + c * base[j, 1]
                t = _ray_hit(ox, oy, ux, uy, kind, cx, cy, a, b)
                if t < ranges[i, j]:
                    ranges[i, j] = t
                    hits[i, j] = True
