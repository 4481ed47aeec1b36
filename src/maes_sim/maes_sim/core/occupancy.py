"""Occupancy-grid SLAM (``stack.slam: occupancy``): maps built from the robots' own scans.

Each robot keeps a log-odds grid of the tile grid beside the codes every reader of a SLAM map
takes (``Simulation.slam_maps``: UNKNOWN, OPEN, SOLID). On every SLAM update tick (the schedule
of :meth:`~maes_sim.core.Simulation.slam_published_at`) it adds the scan it publishes that tick
(``Simulation.lidar_of``: other robots' bodies, moving obstacles, range noise; a dropped ray
changes nothing), placed at the pose it *believes* it has: its dead-reckoned odometry pose
(with the odometry and heading drift) plus the SLAM position error drawn for that update. There
is no scan matching, so drift accumulates in the map: it bends. The update is the log-odds one
of :mod:`maes_sim.core.kernels.occupancy` with the probabilities of ``stack.occupancy``: a
returned ray raises the cell it ends in, every cell a ray crosses is lowered, and the clamp lets
a cell change its mind, so a robot or moving obstacle that walked through leaves a trace that
fades once rays cross its cells again.

Merging (``distribute_slam``): the robots of one communication group (links through the radio
model) merge by their believed poses. Robot ``j``'s map frame sits at ``T_j = P_j *
E_j^-1`` in the world (``P_j`` its true pose, ``E_j`` the pose it believes, grid frame), so
``j``'s map reaches ``i``'s frame through ``T_i^-1 T_j = E_i (P_i^-1 P_j) E_j^-1``: each robot's
own belief and their true relative pose, as robots that meet and measure each other would align
their maps. Errors in the believed poses therefore show as misaligned merged maps: a wall one
robot placed wrongly stands beside the others' copy of it. What the robots hand over is their
*own* evidence (the log-odds of their own scans alone, kept beside the map they use while
merging is on): the group's own evidence is added up in the world frame (independent
observations; clamped). Where no member has observed a cell itself but some member's map knows
it from an earlier merge (knowledge relayed from a robot not in the group), the mean of those
maps stands in. The result is resampled into each member's frame (nearest cell) and replaces the
member's map wherever it knows the cell. Merged knowledge is never added as one's own, so
merging again counts nothing twice; and a moving obstacle's trace leaves the merged maps once
the robots that saw it have seen its cells free again.

Nothing here draws from the random generator: the scans' noise and the pose errors are drawn
where they always are, so a seed gives the same run in direct mode and on ROS.
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.pose import compose_many, inverse_many

from .kernels.occupancy import integrate_scans, merge_maps
from .kernels.raycast import ray_fan

#: Tiles a returned ray's end point is pushed along the ray before its cell is raised: the
#: lidar measures an obstacle's near surface, so a range on a tile boundary marks the tile
#: beyond, and a range error smaller than this does not mark the free tile in front.
HIT_DEPTH = 0.1


def log_odds(probability: float) -> np.float32:
    """``log(p / (1 - p))`` as the grids store it (float32).

    Examples
    --------
    >>> float(log_odds(0.5)), round(float(log_odds(0.7)), 4)
    (0.0, 0.8473)
    """
    return np.float32(math.log(probability / (1.0 - probability)))


class OccupancyGrids:
    """Every robot's log-odds grid (N, H, W) float32, updated with the SLAM codes it mirrors.

    Parameters
    ----------
    n_robots : int
    shape : tuple of int
        ``(H, W)``, the tile grid's.
    params : OccupancyConfig
        ``config.stack.occupancy``: the update's probabilities.
    merging : bool
        Keep each robot's own evidence beside its map (:attr:`own`), which merging needs.

    Examples
    --------
    >>> from maes_sim.core.config_schema import OccupancyConfig
    >>> from maes_sim.core.grid import OPEN, SOLID, UNKNOWN
    >>> grids = OccupancyGrids(1, (1, 6), OccupancyConfig())
    >>> codes = np.zeros((1, 1, 6), dtype=np.uint8)
    >>> grids.integrate(codes, np.array([0]), np.array([[0.5, 0.5]]), np.zeros(1),
    ...                 np.array([[3.5]]), np.array([[True]]), None, 1, np.pi / 2)
    >>> codes[0, 0].tolist()  # tiles 0..3 crossed; the end point x = 4.0 (+ 0.1) in tile 4
    [1, 1, 1, 1, 2, 0]
    """

    def __init__(
        self, n_robots: int, shape: tuple[int, int], params, merging: bool = False
    ) -> None:
        #: The log-odds of the map each robot uses (N, H, W); ``codes`` are its verdicts.
        self.logodds = np.zeros((n_robots, *shape), dtype=np.float32)
        #: Each robot's own evidence (N, H, W): its own scans only (empty without merging).
        self.own = np.zeros((n_robots, *shape) if merging else (0, 0, 0), dtype=np.float32)
        self.l_hit = log_odds(params.hit_probability)
        self.l_miss = log_odds(params.miss_probability)
        self.l_min = log_odds(params.clamp_min_probability)
        self.l_max = log_odds(params.clamp_max_probability)
        self._total = np.zeros((2, *shape), dtype=np.float64)  # the merge's scratch arrays
        self._count = np.zeros((2, *shape), dtype=np.int32)

    def integrate(
        self,
        codes: np.ndarray,
        robots: np.ndarray,
        origins: np.ndarray,
        headings: np.ndarray,
        ranges: np.ndarray,
        hits: np.ndarray,
        dropped: np.ndarray | None,
        n_rays: int,
        fov: float | None,
    ) -> None:
        """Add one scan per robot of a lidar group to its map (and ``codes``), in place.

        Parameters
        ----------
        codes : uint8 ndarray (N, H, W)
            The SLAM maps (``SlamState.maps``), kept equal to the grids' verdicts.
        robots : int ndarray (n,)
            The robots whose scans these are (their maps).
        origins : float ndarray (n, 2)
            Their believed positions, grid coordinates.
        headings : float ndarray (n,)
            Their believed headings, rad.
        ranges : float ndarray (n, R)
            The scans as published, tiles.
        hits : bool ndarray (n, R)
        dropped : bool ndarray (n, R) or None
            The lidar's dropped rays (they change nothing); None: none dropped.
        n_rays : int
        fov : float or None
            The group's lidar field of view (rad; None: the full circle).
        """
        n = len(robots)
        use = np.ones((n, n_rays), dtype=np.bool_) if dropped is None else ~dropped
        rot = np.empty((n, 2))
        np.cos(headings, out=rot[:, 0])
        np.sin(headings, out=rot[:, 1])
        integrate_scans(
            self.logodds,
            codes,
            self.own,
            np.asarray(robots, dtype=np.int64),
            np.ascontiguousarray(origins, dtype=np.float64),
            rot,
            ray_fan(n_rays, fov),
            np.ascontiguousarray(ranges, dtype=np.float64),
            np.ascontiguousarray(hits, dtype=np.bool_),
            use,
            HIT_DEPTH,
            self.l_hit,
            self.l_miss,
            self.l_min,
            self.l_max,
        )

    def merge_groups(
        self,
        codes: np.ndarray,
        labels: np.ndarray,
        true_poses: np.ndarray,
        believed_poses: np.ndarray,
    ) -> int:
        """Merge the maps of the robots sharing a label (N,) by their poses (module docstring).

        ``true_poses`` and ``believed_poses`` are (N, 3) in grid coordinates (x, y, heading).
        Returns the number of groups merged.

        Examples
        --------
        >>> from maes_sim.core.config_schema import OccupancyConfig
        >>> grids = OccupancyGrids(2, (1, 3), OccupancyConfig(), merging=True)
        >>> codes = np.zeros((2, 1, 3), dtype=np.uint8)
        >>> grids.own[0, 0, 0] = -1.0  # robot 0 saw tile 0 free
        >>> grids.own[1, 0, 2] = 2.0  # robot 1 saw tile 2 occupied
        >>> poses = np.array([[0.5, 0.5, 0.0], [2.5, 0.5, 0.0]])
        >>> grids.merge_groups(codes, np.array([0, 0]), poses, poses)
        1
        >>> codes.tolist()
        [[[1, 0, 2]], [[1, 0, 2]]]
        """
        if self.own.size == 0:
            raise ValueError("these grids keep no own evidence: build them with merging=True")
        # map frame -> world, per robot: T = P * E^-1
        to_world = compose_many(true_poses, inverse_many(believed_poses))
        merged = 0
        for label in np.unique(labels):
            members = np.flatnonzero(labels == label)
            if members.size < 2:
                continue
            t = to_world[members]
            rigid = np.column_stack((np.cos(t[:, 2]), np.sin(t[:, 2]), t[:, 0], t[:, 1]))
            merge_maps(
                self.logodds,
                codes,
                self.own,
                members,
                rigid,
                self.l_min,
                self.l_max,
                self._total,
                self._count,
            )
            merged += 1
        return merged
