"""The compiled work of one :meth:`~maes_sim.core.Simulation.step` in one call.

At one robot a tick was mostly the cost of calling compiled code, not of the code: numba's
dispatch takes about 0.3 us per call plus 0.1 us per array argument (it unboxes each one), and
Python worked between the calls. The step made nine compiled calls taking 93 arrays; now:

* :func:`move_kernel`: which robots' commands ask for motion (the stall clock's
  :func:`~maes_sim.core.stalls.asks_motion`), the motion tick
  (:func:`~maes_sim.core.kernels.physics.tick_kernel`), the distance and collision counters
  (``Metrics.add_motion``) and dead reckoning (:func:`~maes_sim.core.odometry.dead_reckon`);
* :func:`sense_kernel`: the lidar's wall traversal with its exploration marks
  (:func:`~maes_sim.core.kernels.raycast.cast_rays_checked`'s kernel), then the coverage marks
  and the counts (``Metrics.mark_covered_and_refresh``);
* :func:`step_kernel`: both, then the stall clock's update (``StallWatch.update``): a tick's
  whole compiled work in one call, for a team with one lidar and one body size. Other teams
  call :func:`move_kernel`, then the lidar kernels per lidar group.

Each composite calls the kernels of the modules that own the rules, in the order the step
called them one by one, on the same arrays: the same bits. The cosines and sines the step took
from numpy are computed here (:func:`cos_sin`): numpy's float64 ``cos`` and ``sin`` are the C
library's, as numba's are, so they are the same numbers (``test_tick_kernels`` holds them equal;
a numba built with Intel's SVML could vectorize them otherwise, and that test would say so).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit
from maes_sim.core.kernels.physics import tick_kernel
from maes_sim.core.kernels.raycast import _trace_serial
from maes_sim.core.metrics import _add_motion, _mark_and_count, _mark_and_count_near
from maes_sim.core.odometry import _reckon_kernel
from maes_sim.core.stalls import _asks_motion_kernel, _update_kernel


@njit(**JIT_OPTIONS)
def cos_sin(angles, c, s):
    """``c[i] = cos(angles[i])``, ``s[i] = sin(angles[i])`` (N,): numpy's values (see the
    module docstring)."""
    for i in range(angles.shape[0]):
        c[i] = math.cos(angles[i])
        s[i] = math.sin(angles[i])


@njit(**JIT_OPTIONS)
def move_kernel(
    walls, obst,
    limits, model, dt, n_steps, p, q_lin, q_ang, snap_fraction, stop_on_collision, tol,
    cell_min, per_axis, starts, order, cxy,
    pos, head, lin, ang, lat, pressing,
    kind, target, progress, req_lin, req_ang, req_lat, stopping,
    colliding, collided, status, distance, collisions, est, scale_t, scale_r, noisy,
    asked,
):  # fmt: skip
    """One tick of motion and its bookkeeping, in place.

    ``asked`` (N,) gets :func:`~maes_sim.core.stalls.asks_motion` of the commands as they are
    before the tick; then :func:`~maes_sim.core.kernels.physics.tick_kernel` runs with the
    arguments from ``walls`` to ``stopping`` and the outputs ``colliding``, ``collided``,
    ``status`` (see there; the start positions, the cosine and sine of the start headings and
    its other outputs are this kernel's own); then the path lengths and new collisions are
    added to ``distance`` and ``collisions`` (N,) (``Metrics.add_motion``) and the believed
    poses ``est`` (N, 3) are dead-reckoned from the tick's odometry delta
    (``odometry.dead_reckon``, ``scale_t`` and ``scale_r`` its drawn scales, read when
    ``noisy``).
    """
    n = pos.shape[0]
    c0 = np.empty(n)
    s0 = np.empty(n)
    cos_sin(head, c0, s0)
    travelled = np.empty(n)
    odom = np.empty((n, 3))
    asked[:] = _asks_motion_kernel(kind, req_lin, req_ang, target, req_lat, True)
    tick_kernel(
        walls, obst,
        limits, model, dt, n_steps, p, q_lin, q_ang, snap_fraction, stop_on_collision, tol,
        cell_min, per_axis, starts, order, cxy,
        pos.copy(), c0, s0,
        pos, head, lin, ang, lat, pressing,
        kind, target, progress, req_lin, req_ang, req_lat, stopping,
        travelled, np.empty(n), collided, np.empty(n, dtype=np.bool_),
        np.empty(n, dtype=np.bool_), colliding, odom, status,
    )  # fmt: skip
    _add_motion(distance, travelled, collisions, collided)
    c_est = np.empty(n)
    s_est = np.empty(n)
    cos_sin(est[:, 2], c_est, s_est)
    _reckon_kernel(est, odom, c_est, s_est, scale_t, scale_r, noisy)


@njit(**JIT_OPTIONS)
def sense_kernel(
    walls, pos, head, base, max_range, explored, tick, slam, slam_index, robots, ranges, hit,
    seen, seen_too, covered_tick, mini_tick, reachable, radius, first_tick, counts,
):  # fmt: skip
    """The lidar of every robot (one lidar and one body size), then coverage, in one call.

    The wall traversal of ``cast_rays_checked`` (rays of ``base`` (1, R, 2) rotated by the
    headings ``head`` (N,), from the positions ``pos`` (N, 2) as ``pos + 0.0`` like its
    origins; ranges and hits into ``ranges``, ``hit`` (N, R); ``explored`` and the maps
    ``slam[slam_index[i]]`` of the robots ``robots`` marked at ``tick``); with ``seen_too``
    the same traversal again marking the maps ``seen`` (its other marks and outputs are the
    first's again); then ``Metrics.mark_covered_and_refresh``'s marks and counts. Returns
    ``(explored, covered, mini-tiles covered)`` reachable tiles, brought up to date from
    ``counts`` (the last ones) near the robots when that looks at fewer tiles than the map
    has (``metrics._mark_and_count_near``), else counted afresh.
    """
    n = pos.shape[0]
    rot = np.empty((n, 2))
    cos_sin(head, rot[:, 0], rot[:, 1])
    t = np.int32(tick)
    origins = pos + 0.0
    _trace_serial(
        walls, origins, rot, base, max_range, explored, t, slam, slam_index, robots, ranges, hit
    )
    if seen_too:
        _trace_serial(
            walls, origins, rot, base, max_range, explored, t, seen, slam_index, robots, ranges,
            hit,
        )  # fmt: skip
    side = 2.0 * max_range + 5.0
    if n * side * side < explored.size:
        return _mark_and_count_near(
            covered_tick, mini_tick, reachable, pos, radius, t, explored, first_tick,
            max_range, counts[0], counts[1], counts[2],
        )  # fmt: skip
    return _mark_and_count(covered_tick, mini_tick, reachable, pos, radius, t, explored, first_tick)


@njit(**JIT_OPTIONS)
def step_kernel(
    walls,
    limits, model, dt, n_steps, p, q_lin, q_ang, snap_fraction, stop_on_collision, tol,
    cell_min, per_axis, starts, order, cxy,
    pos, head, lin, ang, lat, pressing,
    kind, target, progress, req_lin, req_ang, req_lat, stopping,
    distance, collisions, est, noisy,
    base, max_range, explored, slam_index, robots, seen, covered_tick, mini_tick, reachable,
    radius, first_tick,
    reachable_count, stall_radius, stall_ticks, pause, idle, anchor, since, asked_since,
    commanded, stalled, per_robot,
    obst, colliding, collided, status, scale_t, scale_r, tick, slam, ranges, hit, seen_too,
    counts,
):  # fmt: skip
    """A tick of the simulator with one lidar and one body size, in one call.

    :func:`move_kernel`, then :func:`sense_kernel` at the new poses, then the stall clock
    (``StallWatch.update``'s kernel, exploring while fewer than ``reachable_count`` tiles are
    explored), with their arguments of the same names. Those the simulation keeps from tick to
    tick come first (up to ``per_robot``), this tick's last (from ``obst``), so a caller can
    keep the first part (:func:`compiled_entry`). Returns the explored, covered and mini-tile
    counts and the stalls begun.
    """
    asked = np.empty(pos.shape[0], dtype=np.bool_)
    move_kernel(
        walls, obst,
        limits, model, dt, n_steps, p, q_lin, q_ang, snap_fraction, stop_on_collision, tol,
        cell_min, per_axis, starts, order, cxy,
        pos, head, lin, ang, lat, pressing,
        kind, target, progress, req_lin, req_ang, req_lat, stopping,
        colliding, collided, status, distance, collisions, est, scale_t, scale_r, noisy,
        asked,
    )  # fmt: skip
    n_explored, n_covered, n_minis = sense_kernel(
        walls, pos, head, base, max_range, explored, tick, slam, slam_index, robots, ranges,
        hit, seen, seen_too, covered_tick, mini_tick, reachable, radius, first_tick, counts,
    )  # fmt: skip
    started = _update_kernel(
        tick, pos, asked, n_explored < reachable_count, stall_radius, stall_ticks, pause, idle,
        anchor, since, asked_since, commanded, stalled, per_robot,
    )  # fmt: skip
    return n_explored, n_covered, n_minis, started


def compiled_entry(kernel: Callable, args: tuple) -> Callable:
    """``kernel``'s compiled code for the types of ``args``, to call without numba's dispatch
    (compiled, or loaded from the on-disk cache, for those types now).

    numba's dispatcher works out the type of every argument at every call, about 30 ns each:
    2 us of the one-call tick's 67 arguments, 5 % of a one-robot tick. The entry does not look:
    it reads what it is handed as the types it was compiled for, so a caller must hand it
    arguments of exactly these types every time (as the simulator does: its own arrays, and
    this tick's arrays and numbers made the same way every tick).
    """
    return kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
