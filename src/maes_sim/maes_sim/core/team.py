"""A run's robots by type, as the arrays and groups the simulation's passes need.

The simulation keeps one :class:`Team`. Every per-robot setting of the robots' types
(:mod:`maes_sim.core.robot_types`) is an array here (radius, ranges), and the lidar is cast
once per group of robots that share a lidar (rays, field of view, range). A uniform team (every
MAES 2.0 config) is one group with scalar settings, so the simulation makes exactly the calls
it made before robot types existed and its results are bit-identical.

Ranges per robot (sensing, broadcast, tag reading) are applied by :func:`Team.within_range`:
the pairs are found with the largest range of the team, then a pair whose first robot has a
shorter range is kept only within that range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .robot_types import RobotType

__all__ = ["LidarGroup", "Team"]


@dataclass(frozen=True)
class LidarGroup:
    """Robots ``robots`` (sorted indices) sharing one lidar.

    Attributes
    ----------
    robots : ndarray of int64
    rays : int
    fov : float or None
        Field of view, rad; None for the full circle (MAES 2.0's).
    range : float
        Tiles.
    """

    robots: np.ndarray
    rays: int
    fov: float | None
    range: float


class Team:
    """Per-robot settings of ``types`` (one :class:`RobotType` per robot, robot 0 first).

    Examples
    --------
    >>> from maes_sim.core.config import config_from_dict
    >>> team = [{"type": "s", "count": 1}, {"type": "default", "count": 2}]
    >>> cfg = config_from_dict({"robot_types": {"s": {"lidar": {"rays": 8}}}, "team": team})
    >>> team = Team(cfg.robot_type_per_robot())
    >>> [(g.robots.tolist(), g.rays) for g in team.lidar_groups], team.uniform
    ([([0], 8), ([1, 2], 180)], False)
    """

    def __init__(self, types: tuple[RobotType, ...]) -> None:
        self.types = tuple(types)
        self.n = len(self.types)
        self.names = [t.name for t in self.types]
        self.uniform = len(set(self.types)) <= 1
        self.radii = np.array([t.radius for t in self.types], dtype=np.float64)
        self.radii.flags.writeable = False
        #: The largest radius (the one radius of a uniform team).
        self.radius = float(self.radii.max()) if self.n else 0.3
        self.sense_ranges = self._ranges("sense_nearby_agents_range")
        self.broadcast_ranges = self._ranges("broadcast_range")
        self.tag_ranges = self._ranges("environment_tag_read_range")
        #: Noise per robot: lidar range std (metres) and dropout probability, odometry and
        #: heading drift, SLAM position inaccuracy (tiles).
        self.lidar_noise_std = self._ranges("lidar_range_noise_std")
        self.lidar_dropout = self._ranges("lidar_dropout_probability")
        self.odometry_noise = self._ranges("odometry_noise")
        self.heading_noise = self._ranges("heading_noise")
        self.slam_inaccuracy = self._ranges("slam_position_inaccuracy")
        self.top_sense_range = float(self.sense_ranges.max()) if self.n else 0.0
        groups: dict[tuple, list[int]] = {}
        for i, t in enumerate(self.types):
            fov = None if t.full_circle else t.lidar_fov
            groups.setdefault((t.lidar_rays, fov, t.lidar_range), []).append(i)
        self.lidar_groups = [
            LidarGroup(np.array(idx, dtype=np.int64), rays, fov, rng)
            for (rays, fov, rng), idx in groups.items()
        ]
        self._group_of = np.zeros(self.n, dtype=np.int64)
        self._row_of = np.zeros(self.n, dtype=np.int64)
        for g, group in enumerate(self.lidar_groups):
            self._group_of[group.robots] = g
            self._row_of[group.robots] = np.arange(len(group.robots))
        by_radius: dict[float, list[int]] = {}
        for i, r in enumerate(self.radii.tolist()):
            by_radius.setdefault(r, []).append(i)
        #: (radius, robot indices) for every body size in the team.
        self.body_groups = [(r, np.array(idx, dtype=np.int64)) for r, idx in by_radius.items()]

    def _ranges(self, key: str) -> np.ndarray:
        out = np.array([getattr(t, key) for t in self.types], dtype=np.float64)
        out.flags.writeable = False
        return out

    def per_robot(self, values: np.ndarray) -> float | np.ndarray:
        """``values`` (one per robot) as one float when every robot has the same (a uniform
        team computes as before robot types existed), else the array."""
        if self.n and (values == values[0]).all():
            return float(values[0])
        return values

    def lidar_slot(self, robot: int) -> tuple[int, int]:
        """``(group, row)``: where robot ``robot``'s scan is in the per-group scans."""
        return int(self._group_of[robot]), int(self._row_of[robot])

    def same_rays(self) -> bool:
        """Whether every robot's scan has the same ray count."""
        return len({g.rays for g in self.lidar_groups}) <= 1

    def within_range(
        self,
        first: np.ndarray,
        second: np.ndarray,
        pos_first: np.ndarray,
        pos_second: np.ndarray,
        ranges: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Keep the pairs ``(first[k], second[k])`` within ``ranges[first[k]]`` of each other.

        The pairs come from a search with the largest of ``ranges``; a pair whose first robot has
        that largest range is kept as found (no second distance computation that could round
        the other way), the others only if ``|p_first - p_second| <= ranges[first]``.

        Examples
        --------
        >>> from maes_sim.core.robot_types import RobotType
        >>> kinds = [RobotType(str(r), 0.6, 1.0, "maes", 180, 360.0, 7.0, 15.0, r, 4.0)
        ...          for r in (1.0, 5.0)]
        >>> team = Team(tuple(kinds))
        >>> pos = np.array([[0.0, 0.0], [2.0, 0.0]])
        >>> team.within_range(np.array([0, 1]), np.array([1, 0]), pos, pos, np.array([1.0, 5.0]))
        (array([1]), array([0]))
        """
        if self.uniform or len(first) == 0:
            return first, second
        top = ranges.max() if len(ranges) else math.inf
        if (ranges == top).all():
            return first, second
        r = ranges[first]
        d = pos_first[first] - pos_second[second]
        keep = (r == top) | (np.sqrt((d * d).sum(axis=1)) <= r)
        return first[keep], second[keep]
