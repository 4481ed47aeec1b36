"""Compiled hot-path kernels of the simulator core (numba, with pure-numpy references).

All inputs and outputs are in grid coordinates (see :mod:`maes_sim.core.grid`):
``walls[iy, ix]`` bool (H, W), tile ``(ix, iy)`` covers ``[ix, ix+1) x [iy, iy+1)``, and anything
outside the array counts as wall.

* :func:`cast_rays` / :func:`trace_rays`: lidar ranges by exact grid traversal, marking explored
  tiles and SLAM maps in the same pass.
* :func:`line_of_sight` / :func:`wall_distance`: per-segment visibility and length through walls.

The kernels are compiled on first use and cached on disk (numba ``cache=True``). Without numba the
same functions run the numpy references in :mod:`~maes_sim.core.kernels.reference` (a warning is
issued once at import).
"""

from maes_sim.core.kernels._compat import HAVE_NUMBA
from maes_sim.core.kernels.los import line_of_sight, visible_pairs, wall_distance, wall_sums
from maes_sim.core.kernels.raycast import cast_rays, ray_angle_offsets, ray_directions, trace_rays

__all__ = [
    "HAVE_NUMBA",
    "cast_rays",
    "line_of_sight",
    "ray_angle_offsets",
    "ray_directions",
    "trace_rays",
    "visible_pairs",
    "wall_distance",
    "wall_sums",
]
