"""Compiled inner loops (numba, single-threaded) of :mod:`maes_sim.core.motion` and
:mod:`maes_sim.core.collision`; those modules are the documented faces, this one is private.

Everything works on plain arrays in place. Each sub-step of :func:`advance_kernel`: every robot
updates its speeds from its command and integrates (midpoint heading), then
:func:`resolve_contacts` removes penetrations (the contact model is described in
:mod:`maes_sim.core.collision`), then progress, path length and collision flags are booked.
Robots, tiles and robot pairs are processed in a fixed order, so equal inputs give bit-identical
outputs.

The robot grid is the core's one cell list, :func:`maes_sim.core.kernels.cells.build_cells`
(called from compiled code here: :mod:`~maes_common.jit` keys the on-disk cache on
the source of every compiled module, so editing ``cells.py`` recompiles these kernels too).
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit
from maes_sim.core.commands import MOVE, MOVE_CONT, NONE, ROTATE, ROTATE_CONT, VELOCITY
from maes_sim.core.kernels.cells import build_cells

#: Penetration deeper than this (tiles) counts as a contact.
CONTACT_EPS = 1e-9
#: A robot whose disc is within this gap (tiles) of a wall or another robot is "colliding".
TOUCH_TOL = 1e-6
#: Largest travel of a robot in one collision sub-step, as a fraction of its radius.
MAX_STEP_FRACTION = 0.25
#: Passes of the wall projection per sub-step (concave corners need two; four is ample).
_WALL_PASSES = 4

# No fastmath (bit-identical results), disk cache, no GIL, numpy error model (no zero-division
# checks: every division here has a non-zero divisor by construction).
_JIT = dict(JIT_OPTIONS)


# ---------------------------------------------------------------------------------- contacts


@njit(inline="always", **_JIT)
def _is_wall(walls, ix, iy):
    if ix < 0 or iy < 0 or iy >= walls.shape[0] or ix >= walls.shape[1]:
        return True
    return walls[iy, ix]


@njit(**_JIT)
def _wall_depth(walls, x, y, r):
    """Deepest penetration of a disc into wall tiles (0.0 when clear, >= r if centre inside)."""
    best = 0.0
    for iy in range(math.floor(y - r), math.floor(y + r) + 1):
        for ix in range(math.floor(x - r), math.floor(x + r) + 1):
            if not _is_wall(walls, ix, iy):
                continue
            dx = x - min(max(x, float(ix)), ix + 1.0)
            dy = y - min(max(y, float(iy)), iy + 1.0)
            d2 = dx * dx + dy * dy
            if d2 < r * r:
                best = max(best, r - math.sqrt(d2))
    return best


@njit(inline="always", **_JIT)
def _reduce_speed(v, dx, dy, nx, ny):
    """Cut the drive speed ``v`` by the part of this sub-step's motion ``(dx, dy)`` that points
    into the contact normal ``n`` (the motion, not the heading: a robot sliding along a wall
    into another one is heading elsewhere)."""
    d = math.sqrt(dx * dx + dy * dy)
    if d == 0.0:
        return v
    c = (dx * nx + dy * ny) / d
    if c < 0.0:
        return v * (1.0 - c * c)
    return v


@njit(**_JIT)
def _push_out_of_walls(walls, x, y, r):
    """Project one disc out of the wall tiles around it.

    Returns ``(x, y, hit, clear)``; ``hit``: a penetration deeper than CONTACT_EPS was
    removed; ``clear``: a full pass found no penetration (else the caller must check).
    """
    hit = False
    for _ in range(_WALL_PASSES):
        moved = False
        for iy in range(math.floor(y - r), math.floor(y + r) + 1):
            for ix in range(math.floor(x - r), math.floor(x + r) + 1):
                if not _is_wall(walls, ix, iy):
                    continue
                qx = min(max(x, float(ix)), ix + 1.0)
                qy = min(max(y, float(iy)), iy + 1.0)
                dx = x - qx
                dy = y - qy
                d2 = dx * dx + dy * dy
                if d2 >= r * r:
                    continue
                if d2 > 0.0:
                    d = math.sqrt(d2)
                    nx = dx / d
                    ny = dy / d
                    depth = r - d
                else:
                    # Centre inside the tile (only from a bad start): leave by the nearest face.
                    faces = (x - ix, ix + 1.0 - x, y - iy, iy + 1.0 - y)
                    k = 0
                    for m in range(1, 4):
                        if faces[m] < faces[k]:
                            k = m
                    nx = (-1.0, 1.0, 0.0, 0.0)[k]
                    ny = (0.0, 0.0, -1.0, 1.0)[k]
                    depth = faces[k] + r
                x += nx * depth
                y += ny * depth
                moved = True
                if depth > CONTACT_EPS:
                    hit = True
        if not moved:
            return x, y, hit, True
    return x, y, hit, False


@njit(**_JIT)
def _walls_pass(walls, pos, prev, r, lin, lat, hit, only):
    """Push robots out of walls (all, or those with ``only[i]`` when ``only`` is non-empty).

    A robot the projection cannot clear (wedged between robots and walls) goes back to its
    position at the start of the sub-step, which was clear, and its drive speed is zeroed: the
    hard no-tunnelling guarantee.
    """
    for i in range(pos.shape[0]):
        if only.shape[0] and not only[i]:
            continue
        ri = r[i]
        x, y, h, clear = _push_out_of_walls(walls, pos[i, 0], pos[i, 1], ri)
        if not clear and _wall_depth(walls, x, y, ri) > CONTACT_EPS:
            if _wall_depth(walls, prev[i, 0], prev[i, 1], ri) < _wall_depth(walls, x, y, ri):
                x = prev[i, 0]
                y = prev[i, 1]
                lin[i] = 0.0
                lat[i] = 0.0
            h = True
        pos[i, 0] = x
        pos[i, 1] = y
        if h:
            hit[i] = True


@njit(**_JIT)
def _robots_pass(pos, prev, r, lin, lat, hit, pushed, cell_min, per_axis, starts, order, cxy):
    """Separate overlapping robot pairs (Gauss-Seidel, fixed order); flag moved robots.

    ``r`` (N,) are the radii; ``cell_min`` must be at least the largest diameter. A pair's
    correction is bounded by the smaller robot's step (``MAX_STEP_FRACTION * min(r_i, r_j)``)."""
    gw, gh, _, _, _ = build_cells(pos, cell_min, per_axis, starts, order, cxy)
    for i in range(pos.shape[0]):
        ri = r[i]
        cx = cxy[i, 0]
        cy = cxy[i, 1]
        for yy in range(max(cy - 1, 0), min(cy + 2, gh)):
            for xx in range(max(cx - 1, 0), min(cx + 2, gw)):
                c = yy * gw + xx
                for s in range(starts[c], starts[c + 1]):
                    j = order[s]
                    if j <= i:
                        continue
                    dx = pos[i, 0] - pos[j, 0]
                    dy = pos[i, 1] - pos[j, 1]
                    d2 = dx * dx + dy * dy
                    two_r = ri + r[j]
                    if d2 >= two_r * two_r:
                        continue
                    if d2 > 0.0:
                        d = math.sqrt(d2)
                        nx = dx / d
                        ny = dy / d
                    else:  # coincident centres (bad start): split along x, lower index to the right
                        d = 0.0
                        nx = 1.0
                        ny = 0.0
                    overlap = two_r - d
                    lin[i] = _reduce_speed(
                        lin[i], pos[i, 0] - prev[i, 0], pos[i, 1] - prev[i, 1], nx, ny
                    )
                    lin[j] = _reduce_speed(
                        lin[j], pos[j, 0] - prev[j, 0], pos[j, 1] - prev[j, 1], -nx, -ny
                    )
                    if lat[i] != 0.0:  # sideways drive (omnidirectional robots)
                        lat[i] = _reduce_speed(
                            lat[i], pos[i, 0] - prev[i, 0], pos[i, 1] - prev[i, 1], nx, ny
                        )
                    if lat[j] != 0.0:
                        lat[j] = _reduce_speed(
                            lat[j], pos[j, 0] - prev[j, 0], pos[j, 1] - prev[j, 1], -nx, -ny
                        )
                    shift_i = min(0.5 * overlap, MAX_STEP_FRACTION * min(ri, r[j]))
                    shift_j = shift_i
                    pos[i, 0] += nx * shift_i
                    pos[i, 1] += ny * shift_i
                    pos[j, 0] -= nx * shift_j
                    pos[j, 1] -= ny * shift_j
                    pushed[i] = pushed[i] or shift_i > 0.0
                    pushed[j] = pushed[j] or shift_j > 0.0
                    if overlap > CONTACT_EPS:
                        hit[i] = True
                        hit[j] = True


@njit(**_JIT)
def _obstacle_push(x, y, r, kind, cx, cy, a, b):
    """``(nx, ny, depth)`` pushing a disc (centre x, y, radius r) out of one obstacle: a disc
    (``kind`` 0, radius ``a``) or an axis-aligned box (``kind`` 1, half sides ``a``, ``b``);
    depth 0.0 when clear."""
    if kind == 0:
        dx = x - cx
        dy = y - cy
        d2 = dx * dx + dy * dy
        lim = r + a
        if d2 >= lim * lim:
            return 0.0, 0.0, 0.0
        if d2 > 0.0:
            d = math.sqrt(d2)
            return dx / d, dy / d, lim - d
        return 1.0, 0.0, lim  # coincident centres: out along +x
    qx = min(max(x, cx - a), cx + a)
    qy = min(max(y, cy - b), cy + b)
    dx = x - qx
    dy = y - qy
    d2 = dx * dx + dy * dy
    if d2 >= r * r:
        return 0.0, 0.0, 0.0
    if d2 > 0.0:
        d = math.sqrt(d2)
        return dx / d, dy / d, r - d
    faces = (x - (cx - a), cx + a - x, y - (cy - b), cy + b - y)  # centre inside the box
    k = 0
    for m in range(1, 4):
        if faces[m] < faces[k]:
            k = m
    return (-1.0, 1.0, 0.0, 0.0)[k], (0.0, 0.0, -1.0, 1.0)[k], faces[k] + r


@njit(**_JIT)
def _obstacles_pass(pos, r, obst, hit, pushed):
    """Push every robot out of the moving obstacles ``obst`` (K, 5): rows ``kind, x, y, a, b``
    (see :func:`_obstacle_push`); obstacles do not yield. Robots and obstacles in fixed order."""
    for i in range(pos.shape[0]):
        for k in range(obst.shape[0]):
            nx, ny, depth = _obstacle_push(
                pos[i, 0],
                pos[i, 1],
                r[i],
                obst[k, 0],
                obst[k, 1],
                obst[k, 2],
                obst[k, 3],
                obst[k, 4],
            )
            if depth > 0.0:
                pos[i, 0] += nx * depth
                pos[i, 1] += ny * depth
                pushed[i] = True
                if depth > CONTACT_EPS:
                    hit[i] = True


@njit(**_JIT)
def resolve_contacts(
    walls, pos, prev, r, lin, lat, hit, cell_min, per_axis, starts, order, cxy, obst
):
    """One sub-step of contact resolution for all robots, in place.

    ``pos`` (N, 2) are the positions after integration, ``prev`` (N, 2) those at the start of the
    sub-step (wall-free), ``r`` (N,) the radii, ``lin`` and ``lat`` (N,) the forward and sideways
    drive speeds (cut by robot contacts);
    ``hit`` (N,) is set True for every robot that had a real contact. ``cell_min``,
    ``per_axis`` and the scratch arrays ``starts``/``order``/``cxy`` are the robot grid's (see
    :class:`maes_sim.core.collision.RobotGrid`). ``obst`` (K, 5) are the moving obstacles
    (:func:`_obstacles_pass`; K = 0: none). Robot overlaps left when robots are wedged are
    removed in the following sub-steps; walls win over obstacles (a robot wedged between the
    two may overlap the obstacle, never the wall).
    """
    n = pos.shape[0]
    everyone = np.zeros(0, dtype=np.bool_)
    _walls_pass(walls, pos, prev, r, lin, lat, hit, everyone)
    if n > 1 or obst.shape[0]:
        pushed = np.zeros(n, dtype=np.bool_)
        if n > 1:
            _robots_pass(
                pos, prev, r, lin, lat, hit, pushed, cell_min, per_axis, starts, order, cxy
            )
        if obst.shape[0]:
            _obstacles_pass(pos, r, obst, hit, pushed)
        _walls_pass(walls, pos, prev, r, lin, lat, hit, pushed)


@njit(**_JIT)
def touching_obstacles_kernel(pos, r, obst, tol, out):
    """Set ``out[i]`` for every robot within ``tol`` of a moving obstacle (``obst`` as in
    :func:`_obstacles_pass`)."""
    for i in range(pos.shape[0]):
        for k in range(obst.shape[0]):
            _, _, depth = _obstacle_push(
                pos[i, 0],
                pos[i, 1],
                r[i] + tol,
                obst[k, 0],
                obst[k, 1],
                obst[k, 2],
                obst[k, 3],
                obst[k, 4],
            )
            if depth > 0.0:
                out[i] = True


@njit(**_JIT)
def wall_depth_kernel(walls, pos, r, out):
    """``out[i]`` = penetration depth of robot i's disc (radius ``r[i]``) into wall tiles."""
    for i in range(pos.shape[0]):
        out[i] = _wall_depth(walls, pos[i, 0], pos[i, 1], r[i])


@njit(**_JIT)
def touching_kernel(walls, pos, r, tol, cell_min, per_axis, starts, order, cxy, out):
    """Set ``out[i]`` for every robot within ``tol`` of a wall tile or another robot (radii
    ``r`` (N,); ``cell_min`` at least the largest diameter)."""
    n = pos.shape[0]
    r_max = 0.0
    for i in range(n):
        r_max = max(r_max, r[i])
    for i in range(n):
        reach = r[i] + tol
        x = pos[i, 0]
        y = pos[i, 1]
        for iy in range(math.floor(y - reach), math.floor(y + reach) + 1):
            for ix in range(math.floor(x - reach), math.floor(x + reach) + 1):
                if out[i] or not _is_wall(walls, ix, iy):
                    continue
                dx = x - min(max(x, float(ix)), ix + 1.0)
                dy = y - min(max(y, float(iy)), iy + 1.0)
                if dx * dx + dy * dy <= reach * reach:
                    out[i] = True
    if n < 2:
        return
    gw, gh, _, _, _ = build_cells(
        pos, max(cell_min, 2.0 * r_max + tol), per_axis, starts, order, cxy
    )
    for i in range(n):
        cx = cxy[i, 0]
        cy = cxy[i, 1]
        for yy in range(max(cy - 1, 0), min(cy + 2, gh)):
            for xx in range(max(cx - 1, 0), min(cx + 2, gw)):
                c = yy * gw + xx
                for s in range(starts[c], starts[c + 1]):
                    j = order[s]
                    if j <= i:
                        continue
                    dx = pos[i, 0] - pos[j, 0]
                    dy = pos[i, 1] - pos[j, 1]
                    lim = r[i] + r[j] + tol
                    if dx * dx + dy * dy <= lim * lim:
                        out[i] = True
                        out[j] = True


# ------------------------------------------------------------------------------------ motion

# Motion-model codes: maes_common.motion_models is their home (plain ints here for numba).
MAES = 0
DIFFERENTIAL_DRIVE = 1
OMNIDIRECTIONAL = 2
# Status codes (mirror commands.Status; plain ints for numba).
_IDLE, _MOVING, _ROTATING, _STOPPING = 0, 1, 2, 3
_TWO_PI = 2.0 * math.pi


@njit(**_JIT)
def _lag(v, goal, p, q, snap):
    """One step of the speed response towards ``goal``: drive with factor p, brake with q."""
    if goal == 0.0 or v * goal < 0.0 or abs(v) > abs(goal):
        g = goal if v * goal > 0.0 else 0.0  # reversing brakes to zero first
        out = g + (v - g) * q
        if abs(out - g) < snap:
            out = g
        return out
    return goal + (v - goal) * p


@njit(**_JIT)
def _track(v, remaining, sign, vmax, p, q, snap, dt):
    """Speed of a finite command on its axis for this step: ``(v_new, braking, done)``.

    ``done`` means the robot reaches the target in this step and must be still after it.

    Braking from speed ``u`` for ever (``u <- u q`` per step, position ``+= u dt``) covers
    ``u dt q / (1 - q)`` more, so the speed that still lands exactly on the target after this
    step is ``remaining (1 - q) / dt``. Take it, bounded by full drive above and full braking
    below; once it is the binding bound the robot is braking onto the target.
    """
    u = v * sign
    u_full = _lag(u, vmax, p, q, snap)
    if u > 0.0:
        u_lo = u * q
    elif u < 0.0:
        u_lo = u_full  # moving the wrong way: the only option is to brake
    else:
        u_lo = 0.0
    u_need = sign * remaining * (1.0 - q) / dt
    if u_need >= u_full:
        return u_full * sign, False, False
    u_new = max(u_lo, u_need)
    if abs(u_new) < snap:
        # Settle: cover what is left in this last step (it lies between full braking and full
        # drive, so it is a speed the robot can have), then stand still.
        u_last = sign * remaining / dt
        if u_last < u_lo or u_last > u_full:
            u_last = 0.0
        return u_last * sign, True, True
    return u_new * sign, True, False


@njit(**_JIT)
def _map_velocity(tv, tw, ty, vmax, wmax, model):
    """What a velocity request ``(forward, turn, sideways)`` becomes under ``model``: the one
    place a motion model's velocity rule lives (finite commands share one code path)."""
    tw = min(max(tw, -wmax), wmax)
    if model == OMNIDIRECTIONAL:
        planar = math.sqrt(tv * tv + ty * ty)
        if planar > vmax:  # the planar speed is capped at the top speed, its direction kept
            tv = tv * (vmax / planar)
            ty = ty * (vmax / planar)
        return tv, tw, ty
    tv = min(max(tv, -vmax), vmax)
    if model == MAES:
        if abs(tv) / vmax > abs(tw) / wmax:
            tw = 0.0
        else:
            tv = 0.0
    return tv, tw, 0.0


@njit(**_JIT)
def map_velocity_kernel(lin, ang, lat, vmax, wmax, model):
    """In place: clamp and reduce velocity requests per the model, arrays (N,) (the limits and
    model codes per robot)."""
    for i in range(lin.shape[0]):
        lin[i], ang[i], lat[i] = _map_velocity(lin[i], ang[i], lat[i], vmax[i], wmax[i], model[i])


@njit(**_JIT)
def _wrap(a):
    return a - _TWO_PI * math.floor((a + math.pi) / _TWO_PI)


@njit(inline="always", **_JIT)
def _command_speeds(
    v,
    w,
    y,
    k,
    target,
    progress,
    req_lin,
    req_ang,
    req_lat,
    vmax,
    wmax,
    dt,
    model,
    p,
    q_lin,
    q_ang,
    snap_lin,
    snap_ang,
):
    """Speeds of one robot for one sub-step from its command (scalars only: no array refcounts).

    Returns ``(v, w, y, braking, settle)``: ``y`` the sideways speed (omnidirectional robots;
    every other command brakes it to zero); ``braking`` - a finite command is braking onto its
    target; ``settle`` - the finite command ends with this step (1 = zero the linear speed after
    it, 2 = the angular speed), 0 otherwise.
    """
    if y != 0.0:
        ty = 0.0
        if k == VELOCITY:
            ty = _map_velocity(req_lin, req_ang, req_lat, vmax, wmax, model)[2]
        y = _lag(y, ty, p, q_lin, snap_lin)
    elif k == VELOCITY and req_lat != 0.0:
        y = _lag(
            y, _map_velocity(req_lin, req_ang, req_lat, vmax, wmax, model)[2], p, q_lin, snap_lin
        )
    if k == MOVE or k == ROTATE:
        linear_axis = k == MOVE
        other = w if linear_axis else v
        if model == MAES and other != 0.0:  # rotate xor move: the other axis stops first
            return _lag(v, 0.0, p, q_lin, snap_lin), _lag(w, 0.0, p, q_ang, snap_ang), y, False, 0
        sign = -1.0 if target < 0.0 else 1.0
        rem = target - progress
        if linear_axis:
            v, braking, done = _track(v, rem, sign, vmax, p, q_lin, snap_lin, dt)
            w = _lag(w, 0.0, p, q_ang, snap_ang)
            other = w
        else:
            w, braking, done = _track(w, rem, sign, wmax, p, q_ang, snap_ang, dt)
            v = _lag(v, 0.0, p, q_lin, snap_lin)
            other = v
        settle = 0
        if done and other == 0.0:
            settle = 1 if linear_axis else 2
        return v, w, y, braking, settle
    tv = 0.0
    tw = 0.0
    if k == MOVE_CONT:
        tv = target * vmax
    elif k == ROTATE_CONT:
        tw = target * wmax
    elif k == VELOCITY:
        tv, tw, _ = _map_velocity(req_lin, req_ang, req_lat, vmax, wmax, model)
    if model == MAES and ((tv != 0.0 and w != 0.0) or (tw != 0.0 and v != 0.0)):
        tv = 0.0
        tw = 0.0
    return _lag(v, tv, p, q_lin, snap_lin), _lag(w, tw, p, q_ang, snap_ang), y, False, 0


@njit(**_JIT)
def advance_kernel(
    pos,
    head,
    lin,
    ang,
    lat,
    kind,
    target,
    progress,
    req_lin,
    req_ang,
    req_lat,
    stopping,
    walls,
    obst,
    r,
    vmax,
    wmax,
    dt,
    n_steps,
    model,
    p,
    q_lin,
    q_ang,
    snap_fraction,
    stop_on_collision,
    cell_min,
    per_axis,
    starts,
    order,
    cxy,
    pressing,
    out_dist,
    out_dtheta,
    collided,
    completed,
    aborted,
):
    """Advance all robots by ``n_steps`` sub-steps of ``dt`` seconds, in place (see module).

    ``r``, ``vmax``, ``wmax`` and ``model`` are per robot (N,) (its type's radius, top speeds and
    motion-model code); speeds below ``snap_fraction`` of a robot's top speeds snap to zero.
    ``pressing`` (N,) carries which robots pressed into an obstacle in the previous sub-step; a
    contact is a new collision only when the robot was not pressing before. ``obst`` (K, 5): the
    moving obstacles, fixed during the tick (see :func:`resolve_contacts`).
    """
    n = pos.shape[0]
    prev = pos.copy()
    hx = head.copy()
    hy = head.copy()
    # cos/sin of the last angle each robot's direction was computed for: a robot not turning
    # keeps its heading, and the trigonometry is the costliest part of a sub-step's update.
    angle = np.full(n, np.nan)
    hit = collided.copy()
    for _ in range(n_steps):
        for i in range(n):
            vmax_i = vmax[i]
            wmax_i = wmax[i]
            v, w, y, braking, settle = _command_speeds(
                lin[i],
                ang[i],
                lat[i],
                kind[i],
                target[i],
                progress[i],
                req_lin[i],
                req_ang[i],
                req_lat[i],
                vmax_i,
                wmax_i,
                dt,
                model[i],
                p,
                q_lin,
                q_ang,
                snap_fraction * vmax_i,
                snap_fraction * wmax_i,
            )
            if braking:
                stopping[i] = True
            if settle:
                kind[i] = NONE
                stopping[i] = False
                completed[i] = True
            lin[i] = v
            ang[i] = w
            lat[i] = y
            prev[i, 0] = pos[i, 0]
            prev[i, 1] = pos[i, 1]
            mid = head[i] + 0.5 * w * dt
            if mid != angle[i]:
                angle[i] = mid
                hx[i] = math.cos(mid)
                hy[i] = math.sin(mid)
            pos[i, 0] += v * dt * hx[i]
            pos[i, 1] += v * dt * hy[i]
            if y != 0.0:  # sideways: to the robot's left (+y in its frame)
                pos[i, 0] -= y * dt * hy[i]
                pos[i, 1] += y * dt * hx[i]
            head[i] = _wrap(head[i] + w * dt)
            out_dtheta[i] += w * dt
            if kind[i] == ROTATE:
                progress[i] += w * dt
            if settle == 1:
                lin[i] = 0.0
            elif settle == 2:
                ang[i] = 0.0
            hit[i] = False
        resolve_contacts(
            walls, pos, prev, r, lin, lat, hit, cell_min, per_axis, starts, order, cxy, obst
        )
        for i in range(n):
            dx = pos[i, 0] - prev[i, 0]
            dy = pos[i, 1] - prev[i, 1]
            out_dist[i] += math.sqrt(dx * dx + dy * dy)
            if kind[i] == MOVE:
                progress[i] += dx * hx[i] + dy * hy[i]
            if hit[i] and not pressing[i]:
                collided[i] = True
                k = kind[i]
                if stop_on_collision and k != NONE and k != VELOCITY:
                    kind[i] = NONE
                    stopping[i] = False
                    aborted[i] = True
            pressing[i] = hit[i]


@njit(**_JIT)
def status_kernel(lin, ang, lat, kind, req_lin, req_ang, req_lat, stopping, vmax, wmax, model, out):
    """Status code of every robot into ``out`` (N,) int8 (see ``motion.robot_status``); the
    limits and model codes per robot (N,)."""
    for i in range(lin.shape[0]):
        k = kind[i]
        axis = -1
        if k == MOVE or k == MOVE_CONT:
            axis = 0
        elif k == ROTATE or k == ROTATE_CONT:
            axis = 1
        elif k == VELOCITY:
            tv, tw, ty = _map_velocity(
                req_lin[i], req_ang[i], req_lat[i], vmax[i], wmax[i], model[i]
            )
            if tv != 0.0 or ty != 0.0:
                axis = 0
            elif tw != 0.0:
                axis = 1
        if axis >= 0 and not stopping[i]:
            out[i] = _MOVING if axis == 0 else _ROTATING
        elif stopping[i] or lin[i] != 0.0 or ang[i] != 0.0 or lat[i] != 0.0:
            out[i] = _STOPPING
        else:
            out[i] = _IDLE


@njit(**_JIT)
def odom_delta_kernel(pos, pos0, c0, s0, dtheta, out):
    """The true pose increment of every robot into ``out`` (N, 3) (``motion.advance_tick``'s
    ``odom_delta``): the translation ``pos - pos0`` in the frame of the start heading, whose
    cosine and sine ``c0``, ``s0`` (N,) the caller computes, and ``dtheta`` (N,). The same
    operations in the same order as the numpy form ``c0 * dx + s0 * dy``,
    ``-s0 * dx + c0 * dy``: the same bits."""
    for i in range(pos.shape[0]):
        dx = pos[i, 0] - pos0[i, 0]
        dy = pos[i, 1] - pos0[i, 1]
        out[i, 0] = c0[i] * dx + s0[i] * dy
        out[i, 1] = -s0[i] * dx + c0[i] * dy
        out[i, 2] = dtheta[i]


@njit(**_JIT)
def finish_tick_kernel(
    walls, pos, pos0, radii, obst, tol, cell_min, per_axis, starts, order, cxy,
    c0, s0, dtheta, lin, ang, lat, kind, req_lin, req_ang, req_lat, stopping, vmax, wmax, model,
    colliding, odom, status,
):  # fmt: skip
    """The end of ``motion.advance_tick`` in one call: :func:`touching_kernel` then
    :func:`touching_obstacles_kernel` into ``colliding``, :func:`odom_delta_kernel` into
    ``odom``, :func:`status_kernel` into ``status`` (each as called on its own)."""
    touching_kernel(walls, pos, radii, tol, cell_min, per_axis, starts, order, cxy, colliding)
    if obst.shape[0]:
        touching_obstacles_kernel(pos, radii, obst, tol, colliding)
    odom_delta_kernel(pos, pos0, c0, s0, dtheta, odom)
    status_kernel(
        lin, ang, lat, kind, req_lin, req_ang, req_lat, stopping, vmax, wmax, model, status
    )


@njit(**_JIT)
def tick_kernel(
    walls, obst,
    limits, model, dt, n_steps, p, q_lin, q_ang, snap_fraction, stop_on_collision, tol,
    cell_min, per_axis, starts, order, cxy,
    pos0, c0, s0,
    pos, head, lin, ang, lat, pressing,
    kind, target, progress, req_lin, req_ang, req_lat, stopping,
    out_dist, out_dtheta, collided, completed, aborted, colliding, odom, status,
):  # fmt: skip
    """A whole logic tick of ``motion.advance_tick`` in one call, in place: the outputs
    ``out_dist`` ... ``aborted`` and ``colliding`` (N,) are cleared, then
    :func:`advance_kernel` and :func:`finish_tick_kernel` run as they did as two calls.

    The arguments from ``limits`` to ``cxy`` are the same from tick to tick
    (``motion.MotionStepper.constants``): ``limits`` (3, N) holds the radii, top speeds and
    top turn rates (``MotionParams.limits``), then the model codes, the sub-step's constants
    and the robot grid's. ``pos0`` (N, 2) are the positions at the start of the tick (a copy:
    ``pos`` changes) and ``c0``, ``s0`` (N,) the cosine and sine of the headings then. One call
    instead of two halves the arrays numba unboxes per tick (each costs about 0.1 us: at one
    robot the dispatch was most of the motion's time).
    """
    out_dist[:] = 0.0
    out_dtheta[:] = 0.0
    collided[:] = False
    completed[:] = False
    aborted[:] = False
    colliding[:] = False
    r = limits[0]
    vmax = limits[1]
    wmax = limits[2]
    advance_kernel(
        pos, head, lin, ang, lat, kind, target, progress, req_lin, req_ang, req_lat, stopping,
        walls, obst, r, vmax, wmax, dt, n_steps, model, p, q_lin, q_ang, snap_fraction,
        stop_on_collision, cell_min, per_axis, starts, order, cxy, pressing,
        out_dist, out_dtheta, collided, completed, aborted,
    )  # fmt: skip
    finish_tick_kernel(
        walls, pos, pos0, r, obst, tol, cell_min, per_axis, starts, order, cxy,
        c0, s0, out_dtheta, lin, ang, lat, kind, req_lin, req_ang, req_lat, stopping,
        vmax, wmax, model, colliding, odom, status,
    )  # fmt: skip
