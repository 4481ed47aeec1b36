"""Lidar noise: a Gaussian range error and dropouts, per robot type, from the one generator.

The rays are cast by :func:`~maes_sim.core.kernels.cast_rays` once per lidar group
(:class:`~maes_sim.core.team.Team`); exploration and the simulated SLAM maps are marked by that
exact cast. What a robot *reads* (``Simulation.lidar_of``, the ``scan`` topic, direct mode's
scans) is the cast with other robots' bodies applied and then this noise:

- a ray that hit something returns ``range + e``, ``e ~ N(0, std)``, clipped to
  ``[0, range_max]`` (``robot_types.<t>.lidar.range_noise_std``, metres);
- with probability ``dropout_probability`` a ray returns nothing: not a hit, as a ray that
  reached no wall (in the core its range is the lidar's range and its ``hit`` False; on the
  wire, the ``scan`` topic and direct mode's scans, ``inf``: REP-117's no return).

The noise is drawn every tick in ``Simulation._observe`` whether or not anybody reads a scan, so
a seed gives the same runs in direct mode and on ROS. With both settings 0 (the default) nothing
is drawn and the scans are exact, bit for bit as without this module.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from maes_sim.core.kernels.noise import scaled_normals

#: Per lidar group: (range errors (n, R) in tiles or None, dropped rays (n, R) or None).
GroupNoise = tuple[np.ndarray | None, np.ndarray | None]


def lidar_noisy(std: np.ndarray, dropout: np.ndarray) -> bool:
    """True when a robot has a range error std or a dropout probability (else nothing is
    drawn: the scans are exact).

    Examples
    --------
    >>> lidar_noisy(np.zeros(3), np.zeros(3)), lidar_noisy(np.zeros(3), np.array([0, 0.1, 0]))
    (False, True)
    """
    return bool((std > 0.0).any() or (dropout > 0.0).any())


def draw_noise(
    groups: Sequence,
    std: np.ndarray,
    dropout: np.ndarray,
    rng: np.random.Generator,
) -> list[GroupNoise] | None:
    """Draw one tick's lidar noise for every lidar group (None when the team has none).

    Per group, in group order: the range errors (``n x R`` standard normals times each robot's
    std) when a robot of the group has a std, then the dropouts (``n x R`` uniforms below each
    robot's probability) when one has a probability.

    Parameters
    ----------
    groups : sequence of LidarGroup
        ``Team.lidar_groups`` (robots and ray count of each).
    std : ndarray, shape (N,)
        Each robot's range error std, tiles.
    dropout : ndarray, shape (N,)
        Each robot's dropout probability.
    rng : numpy.random.Generator
        The simulation's generator.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> g = [NS(robots=np.array([0, 1]), rays=4)]
    >>> draw_noise(g, np.zeros(2), np.zeros(2), np.random.default_rng(0)) is None
    True
    >>> (err, drop), = draw_noise(g, np.array([0.1, 0.0]), np.zeros(2), np.random.default_rng(0))
    >>> err.shape, bool((err[1] == 0).all()), drop
    ((2, 4), True, None)
    """
    if not lidar_noisy(std, dropout):
        return None
    out: list[GroupNoise] = []
    for group in groups:
        s, p = std[group.robots], dropout[group.robots]
        shape = (len(group.robots), group.rays)
        # rng.standard_normal(shape) * s[:, None], value for value, in a third of the time
        errors = scaled_normals(rng, s, group.rays) if (s > 0.0).any() else None
        dropped = rng.random(shape) < p[:, None] if (p > 0.0).any() else None
        out.append((errors, dropped))
    return out


def apply_noise(
    ranges: np.ndarray,
    hits: np.ndarray,
    max_range: float,
    noise: GroupNoise,
) -> tuple[np.ndarray, np.ndarray]:
    """A group's scan with its noise applied (new arrays; the inputs are not changed).

    Examples
    --------
    >>> r, h = np.array([[1.0, 5.0, 2.0]]), np.array([[True, False, True]])
    >>> apply_noise(r, h, 5.0, (np.array([[0.5, 0.5, -3.0]]), np.array([[False, False, True]])))
    (array([[1.5, 5. , 5. ]]), array([[ True, False, False]]))
    """
    errors, dropped = noise
    if errors is not None:
        ranges = np.where(hits, np.clip(ranges + errors, 0.0, max_range), ranges)
    if dropped is not None:
        ranges = np.where(dropped, max_range, ranges)
        hits = hits & ~dropped
    return ranges, hits
