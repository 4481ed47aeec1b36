"""Nearby robots: which robots each robot senses (``State.nearby_robots``).

A robot senses another within its type's ``sense_nearby_agents_range`` (the observer's range
decides), and only in sight when ``sense_nearby_agents_blocked_by_walls``. The pairs are found
with the team's largest range, then :meth:`~maes_sim.core.team.Team.within_range` keeps each
pair within its observer's own range (a uniform team keeps them as found).
"""

from __future__ import annotations

import numpy as np

from ..kernels import visible_pairs
from ..neighbors import pairs_within
from ..team import Team


def sense_pairs(
    walls: np.ndarray,
    positions: np.ndarray,
    team: Team,
    blocked_by_walls: bool,
    wall_sums: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(observer, observed)`` index pairs of the robots sensing each other.

    Parameters
    ----------
    walls : ndarray of bool, shape (H, W)
    positions : ndarray, shape (N, 2)
        True positions, grid coordinates.
    team : Team
        The robots' ranges (``team.sense_ranges``).
    blocked_by_walls : bool
        ``sense_nearby_agents_blocked_by_walls``.
    wall_sums : ndarray, optional
        :func:`~maes_sim.core.kernels.wall_sums` of ``walls`` (speeds up the sight test).

    Examples
    --------
    >>> from maes_sim.core import config_from_dict
    >>> team = Team(config_from_dict({"number_of_robots": 3}).robot_type_per_robot())
    >>> walls = np.zeros((8, 8), dtype=bool)
    >>> pos = np.array([[1.5, 1.5], [2.5, 1.5], [7.5, 7.5]])
    >>> a, b = sense_pairs(walls, pos, team, blocked_by_walls=False)
    >>> sorted(zip(a.tolist(), b.tolist()))
    [(0, 1), (1, 0)]
    """
    if len(positions) < 2:  # nobody to sense (what the searches below return, without them)
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy()
    top = team.top_sense_range
    if blocked_by_walls:
        ia, ib = visible_pairs(walls, positions, top, sums=wall_sums)
    else:
        ia, ib, _ = pairs_within(positions, None, top)
    return team.within_range(ia, ib, positions, positions, team.sense_ranges)
