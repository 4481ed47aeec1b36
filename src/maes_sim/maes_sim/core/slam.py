"""Simulated SLAM (MAES 2.0, section 3.2.3).

Each robot keeps an occupancy map of the tile grid (codes from :mod:`grid`: UNKNOWN, OPEN,
SOLID) built from its own lidar rays by the ray-casting kernel: a tile with a hit is SOLID; a
tile a ray crossed without a hit is OPEN unless already SOLID. Maps are marked every
``slam_update_interval_in_ticks`` ticks when ``automatically_update_slam``.

When ``distribute_slam``, every ``slam_sync_interval_in_ticks`` ticks the robots that can
communicate (the broadcast rule, links taken as undirected, transitively) merge their maps: the
merged code of a tile is the largest of the group's codes (SOLID > OPEN > UNKNOWN), the same
precedence the marking uses.

``slam_position_inaccuracy`` (tiles) perturbs the pose a robot *believes* it has in its map:
at every SLAM update each robot draws a new offset uniformly from the square
[-a, a] x [-a, a] (MAES's approximate position). The map itself is marked from the true pose.

With ``stack.slam: occupancy`` the same codes are instead the verdicts of log-odds grids built
from the robots' own scans at their believed poses (:mod:`maes_sim.core.occupancy`, held in
:attr:`SlamState.grids`), and merging goes by the robots' poses.
"""

from __future__ import annotations

import numpy as np

from .config_schema import OccupancyConfig
from .grid import SOLID, UNKNOWN
from .occupancy import OccupancyGrids


class SlamState:
    """SLAM maps (N, H, W) uint8 and believed-position offsets (N, 2) of N robots.

    ``occupancy`` (``config.stack.occupancy``) makes the maps occupancy grids
    (:attr:`grids`; ``merging``: the robots merge them, so each keeps its own evidence too);
    None keeps the simulated SLAM.
    """

    #: The log-odds grids of ``stack.slam: occupancy`` (None: the simulated SLAM). A class
    #: default, so a SlamState pickled before it existed still restores.
    grids: OccupancyGrids | None = None

    def __init__(
        self,
        n_robots: int,
        shape: tuple[int, int],
        inaccuracy: float | np.ndarray,
        occupancy: OccupancyConfig | None = None,
        merging: bool = False,
    ) -> None:
        self.maps = np.full((n_robots, *shape), UNKNOWN, dtype=np.uint8)
        self.offsets = np.zeros((n_robots, 2), dtype=np.float64)
        #: Tiles: one value for every robot, or one per robot (robot types), shape (N,).
        self.inaccuracy = (
            float(inaccuracy) if np.ndim(inaccuracy) == 0 else np.asarray(inaccuracy, float)
        )
        if occupancy is not None:
            self.grids = OccupancyGrids(n_robots, shape, occupancy, merging)

    def redraw_offsets(self, rng: np.random.Generator) -> None:
        """Draw each robot's believed-position error for the coming SLAM interval (2N
        uniforms when any robot has an inaccuracy, else nothing)."""
        a = self.inaccuracy
        if isinstance(a, float):  # one for every robot (np.ndim costs 1.6 us every SLAM tick)
            if a > 0.0:
                self.offsets = rng.uniform(-a, a, self.offsets.shape)
        elif (a > 0.0).any():
            half = a[:, None]
            self.offsets = rng.uniform(-half, half, self.offsets.shape)

    def merge_groups(self, labels: np.ndarray) -> int:
        """Merge the simulated SLAM's maps of robots sharing a label (N,); returns the number of
        groups merged (occupancy grids merge by the robots' poses: :attr:`grids`).

        Examples
        --------
        >>> s = SlamState(3, (1, 2), 0.0)
        >>> s.maps[0, 0] = [1, 0]; s.maps[1, 0] = [2, 1]
        >>> s.merge_groups(np.array([0, 0, 2]))
        1
        >>> s.maps[:, 0].tolist()
        [[2, 1], [2, 1], [0, 0]]
        """
        merged = 0
        for label in np.unique(labels):
            members = np.flatnonzero(labels == label)
            if members.size < 2:
                continue
            combined = np.max(self.maps[members], axis=0)
            self.maps[members] = combined
            merged += 1
        return merged

    def known_fraction(self) -> np.ndarray:
        """Share (N,) of each robot's map that is not UNKNOWN."""
        flat = self.maps.reshape(len(self.maps), -1)
        return np.count_nonzero(flat != UNKNOWN, axis=1) / max(flat.shape[1], 1)


def to_occupancy(slam_map: np.ndarray) -> np.ndarray:
    """Convert a SLAM map (H, W) to OccupancyGrid values int8: -1 unknown, 0 open, 100 solid.

    Examples
    --------
    >>> to_occupancy(np.array([[0, 1, 2]], dtype=np.uint8)).tolist()
    [[-1, 0, 100]]
    """
    lut = np.array([-1, 0, 100], dtype=np.int8)
    return lut[np.minimum(slam_map, SOLID)]
