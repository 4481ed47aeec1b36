"""Compiled hot-path kernels of the simulator core (numba, with pure-numpy references).

All inputs and outputs are in grid coordinates (see :mod:`maes_sim.core.grid`):
``walls[iy, ix]`` bool (H, W), tile ``(ix, iy)`` covers ``[ix, ix+1) x [iy, iy+1)``, and anything
outside the array counts as wall.

* :func:`cast_rays` / :func:`trace_rays`: lidar ranges by exact grid traversal, marking explored
  tiles and SLAM maps in the same pass; :func:`stop_rays_at_bodies`: the robots' bodies.
* :func:`line_of_sight` / :func:`wall_distance`: per-segment visibility and length through walls.

The kernels are compiled on first use and cached on disk (numba ``cache=True``) through
:mod:`~maes_common.jit`, the project's only import of numba (``njit`` and ``prange``
are exported here for the other packages' kernels). numba is required; the numpy references in
:mod:`~maes_sim.core.kernels.reference` define the results the kernels must reproduce bit for
bit and are used by the tests.
"""

from maes_common.jit import compile_seconds, njit, prange, use_threads
from maes_sim.core.kernels.los import line_of_sight, visible_pairs, wall_distance, wall_sums
from maes_sim.core.kernels.raycast import (
    cast_rays,
    ray_angle_offsets,
    ray_directions,
    stop_rays_at_bodies,
    trace_rays,
)

__all__ = [
    "cast_rays",
    "compile_seconds",
    "line_of_sight",
    "njit",
    "prange",
    "ray_angle_offsets",
    "ray_directions",
    "stop_rays_at_bodies",
    "trace_rays",
    "use_threads",
    "visible_pairs",
    "wall_distance",
    "wall_sums",
]
