"""The occupancy grids' log-odds update and merge (``stack.slam: occupancy``), on hand-made
scans and maps whose result is known by hand: which cells a ray lowers and raises, a dropped ray,
the clamp that lets a cell change its mind, and maps merged by the robots' poses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from maes_sim.core.config_schema import OccupancyConfig
from maes_sim.core.grid import OPEN, SOLID, UNKNOWN
from maes_sim.core.occupancy import HIT_DEPTH, OccupancyGrids, log_odds

PARAMS = OccupancyConfig()


def _grids(n=1, shape=(1, 10)):
    return OccupancyGrids(n, shape, PARAMS), np.zeros((n, *shape), dtype=np.uint8)


def _ray(grids, codes, x, rng, hit, dropped=None, heading=0.0, y=0.5, robot=0):
    """One robot's one ray straight ahead (a 1-ray lidar with a narrow field of view)."""
    grids.integrate(
        codes,
        np.array([robot]),
        np.array([[x, y]]),
        np.array([heading]),
        np.array([[rng]]),
        np.array([[hit]]),
        None if dropped is None else np.array([[dropped]]),
        1,
        math.pi / 2,
    )


def test_a_returned_ray_lowers_the_cells_it_crosses_and_raises_its_end():
    grids, codes = _grids()
    _ray(grids, codes, 0.5, 4.2, True)  # ends at x = 4.7 (+ 0.1): tile 4
    assert codes[0, 0].tolist() == [OPEN] * 4 + [SOLID] + [UNKNOWN] * 5
    lo = grids.logodds[0, 0]
    assert lo[:4].tolist() == [grids.l_miss] * 4 and lo[4] == grids.l_hit and lo[5] == 0.0
    assert grids.l_hit == log_odds(0.7) and grids.l_miss == log_odds(0.4)


def test_a_range_on_a_tile_boundary_marks_the_tile_beyond_and_a_small_error_does_not_matter():
    # A wall's near face at x = 5: the exact range from x = 0.5 is 4.5. A lidar measures the
    # surface, so the tile behind it (5) is the occupied one, also with an error below
    # HIT_DEPTH either way; an error larger than that marks the free tile in front (a blurred wall).
    for error, occupied in [(0.0, 5), (-0.09, 5), (0.05, 5), (-0.2, 4)]:
        grids, codes = _grids()
        _ray(grids, codes, 0.5, 4.5 + error, True)
        assert int(np.flatnonzero(codes[0, 0] == SOLID)[0]) == occupied, error
        assert (codes[0, 0, :occupied] == OPEN).all()
    assert 0.0 < HIT_DEPTH < 0.5


def test_a_ray_that_returned_nothing_clears_up_to_its_range_and_a_dropped_ray_changes_nothing():
    grids, codes = _grids()
    _ray(grids, codes, 0.5, 6.0, False)  # no return within 6 tiles: up to x = 6.5, tile 6
    assert codes[0, 0].tolist() == [OPEN] * 7 + [UNKNOWN] * 3
    before = grids.logodds.copy(), codes.copy()
    _ray(grids, codes, 0.5, 2.0, True, dropped=True)
    _ray(grids, codes, 0.5, 9.0, False, dropped=True)
    assert (grids.logodds == before[0]).all() and (codes == before[1]).all()


def test_the_clamp_lets_an_occupied_cell_change_its_mind():
    grids, codes = _grids()
    for _ in range(50):  # a long stay: the cell saturates at the clamp
        _ray(grids, codes, 0.5, 2.0, True)
    assert grids.logodds[0, 0, 2] == grids.l_max == log_odds(0.97)
    # then rays pass through it: free after ceil(l_max / -l_miss) misses, not 50
    needed = math.ceil(float(grids.l_max) / -float(grids.l_miss))
    for k in range(1, needed + 1):
        _ray(grids, codes, 0.5, 6.0, True)
        assert codes[0, 0, 2] == (OPEN if k == needed else SOLID), k
    for _ in range(50):
        _ray(grids, codes, 0.5, 6.0, True)
    assert grids.logodds[0, 0, 2] == grids.l_min == log_odds(0.12)


def test_rays_follow_the_heading_and_skip_cells_off_the_map():
    grids, codes = _grids(shape=(6, 6))
    # from (0.5, 0.5) heading +y: a wall at y = 3.5 (range 3.0) in column 0
    _ray(grids, codes, 0.5, 3.0, True, heading=math.pi / 2)
    assert codes[0, :, 0].tolist() == [OPEN] * 3 + [SOLID] + [UNKNOWN] * 2
    assert (codes[0, :, 1:] == UNKNOWN).all()
    # a robot that believes it is off the map marks only the cells on it
    _ray(grids, codes, -2.5, 4.0, True, y=5.5)  # crosses x = -2.5 .. 1.5: tiles 0, 1 on the map
    assert codes[0, 5].tolist() == [OPEN, SOLID] + [UNKNOWN] * 4


def test_a_scan_goes_to_the_robots_own_map():
    grids, codes = _grids(n=3, shape=(1, 6))
    _ray(grids, codes, 0.5, 2.0, True, robot=2)
    assert (codes[:2] == UNKNOWN).all() and codes[2, 0].tolist() == [1, 1, 2, 0, 0, 0]


def _seen(shape, known: dict[tuple[int, int], float], relayed: dict | None = None):
    """One robot's map holding the given cells: its own evidence (``known``, also in its map)
    and what an earlier merge put in its map alone (``relayed``)."""
    own = np.zeros(shape, dtype=np.float32)
    lo = np.zeros(shape, dtype=np.float32)
    codes = np.zeros(shape, dtype=np.uint8)
    for cells, target in ((known, own), (relayed or {}, None)):
        for (ix, iy), value in cells.items():
            if target is not None:
                target[iy, ix] = value
            lo[iy, ix] = value
            codes[iy, ix] = SOLID if value > 0 else OPEN
    return lo, codes, own


def _merge(maps, true_poses, believed_poses, labels=None):
    shape = maps[0][0].shape
    grids = OccupancyGrids(len(maps), shape, PARAMS, merging=True)
    codes = np.zeros((len(maps), *shape), dtype=np.uint8)
    for i, (lo, c, own) in enumerate(maps):
        grids.logodds[i], codes[i], grids.own[i] = lo, c, own
    labels = np.zeros(len(maps), dtype=np.int64) if labels is None else np.asarray(labels)
    merged = grids.merge_groups(
        codes, labels, np.asarray(true_poses, float), np.asarray(believed_poses, float)
    )
    return grids, codes, merged


def test_robots_with_exact_poses_end_with_one_map_adding_up_what_they_saw():
    a = _seen((4, 4), {(0, 0): -1.0, (1, 1): 2.0})
    b = _seen((4, 4), {(1, 1): -0.5, (3, 3): 1.0})
    poses = [[1.5, 1.5, 0.3], [2.5, 0.5, -1.0]]
    grids, codes, merged = _merge([a, b], poses, poses)
    assert merged == 1
    assert (codes[0] == codes[1]).all() and (grids.logodds[0] == grids.logodds[1]).all()
    lo = grids.logodds[0]
    assert lo[0, 0] == -1.0 and lo[3, 3] == 1.0 and lo[1, 1] == np.float32(1.5)
    assert codes[0, 1, 1] == SOLID and (codes[0] != UNKNOWN).sum() == 3
    # the own evidence is left as it was: merging again changes nothing
    assert grids.own[0, 1, 1] == 2.0 and grids.own[1, 1, 1] == -0.5
    again = (grids.logodds.copy(), codes.copy())
    grids.merge_groups(codes, np.zeros(2, dtype=np.int64), np.array(poses), np.array(poses))
    assert (grids.logodds == again[0]).all() and (codes == again[1]).all()


def test_the_sum_is_clamped():
    a = _seen((1, 2), {(0, 0): 3.0})
    b = _seen((1, 2), {(0, 0): 3.0})
    poses = [[0.5, 0.5, 0.0], [1.5, 0.5, 0.0]]
    grids, _, _ = _merge([a, b], poses, poses)
    assert grids.logodds[0, 0, 0] == grids.l_max


def test_what_a_robot_learnt_from_others_is_relayed_once_and_yields_to_observations():
    # Robot 0's map knows two cells from an earlier merge with a robot not here: one nobody
    # here has seen (relayed to robot 1 as it is), one robot 1 has seen itself (its own
    # observation decides, not a sum with the relayed value).
    a = _seen((1, 4), {(0, 0): -1.0}, relayed={(2, 0): 3.0, (3, 0): 3.0})
    b = _seen((1, 4), {(3, 0): -1.5})
    poses = [[0.5, 0.5, 0.0], [1.5, 0.5, 0.0]]
    grids, codes, _ = _merge([a, b], poses, poses)
    assert grids.logodds[1, 0].tolist() == [-1.0, 0.0, 3.0, -1.5]
    assert codes[1, 0].tolist() == [OPEN, UNKNOWN, SOLID, OPEN]
    assert (grids.logodds[0] == grids.logodds[1]).all()
    assert grids.own[1, 0, 2] == 0.0  # relayed knowledge is not robot 1's own


def test_merging_needs_the_own_evidence():
    grids = OccupancyGrids(2, (2, 2), PARAMS)
    with pytest.raises(ValueError, match="own evidence"):
        grids.merge_groups(
            np.zeros((2, 2, 2), dtype=np.uint8), np.zeros(2, dtype=np.int64), np.zeros((2, 3)),
            np.zeros((2, 3)),
        )  # fmt: skip


def test_scans_update_the_own_evidence_too_when_it_is_kept():
    grids = OccupancyGrids(1, (1, 6), PARAMS, merging=True)
    codes = np.zeros((1, 1, 6), dtype=np.uint8)
    _ray(grids, codes, 0.5, 2.0, True)
    assert (grids.own == grids.logodds).all() and grids.own[0, 0, 2] == grids.l_hit


def test_a_robot_that_believes_itself_elsewhere_hands_over_a_shifted_map():
    # Robot 1 believes it is 2 tiles east of where it is, so what it mapped sits 2 tiles east
    # in its map: its wall at tile (6, 3) is truly at (4, 3), where robot 0 (exact) gets it.
    a = _seen((7, 9), {(1, 1): -1.0})
    b = _seen((7, 9), {(6, 3): 3.0})
    true = [[1.5, 1.5, 0.0], [4.5, 3.5, 0.0]]
    believed = [[1.5, 1.5, 0.0], [6.5, 3.5, 0.0]]
    _, codes, _ = _merge([a, b], true, believed)
    assert codes[0, 3, 4] == SOLID and codes[0, 3, 6] == UNKNOWN
    # and robot 1 gets robot 0's free cell 2 tiles east, where its own frame has it
    assert codes[1, 1, 3] == OPEN and codes[1, 3, 6] == SOLID


def test_a_heading_error_turns_the_map_handed_over():
    # Robot 1 believes it faces 90 degrees left of its true heading: its map is turned by
    # +90 degrees about its position. A cell 2 tiles ahead of it in truth (east: (6, 4)) is
    # north in its map, (4, 6); robot 0 gets it back east.
    b = _seen((9, 9), {(4, 6): 2.0})
    a = _seen((9, 9), {})
    true = [[1.5, 1.5, 0.0], [4.5, 4.5, 0.0]]
    believed = [[1.5, 1.5, 0.0], [4.5, 4.5, math.pi / 2]]
    _, codes, _ = _merge([a, b], true, believed)
    assert codes[0, 4, 6] == SOLID and (codes[0] != UNKNOWN).sum() == 1


def test_only_robots_sharing_a_label_merge():
    maps = [_seen((2, 2), {(0, 0): 1.0}), _seen((2, 2), {(1, 1): -1.0}), _seen((2, 2), {})]
    poses = [[0.5, 0.5, 0.0]] * 3
    _, codes, merged = _merge(maps, poses, poses, labels=[0, 1, 1])
    assert merged == 1
    assert codes[0].tolist() == [[SOLID, UNKNOWN], [UNKNOWN, UNKNOWN]]
    assert codes[1].tolist() == codes[2].tolist() == [[UNKNOWN, UNKNOWN], [UNKNOWN, OPEN]]


@pytest.mark.parametrize("p", [0.12, 0.4, 0.7, 0.97])
def test_log_odds_of_the_settings(p):
    assert float(log_odds(p)) == pytest.approx(math.log(p / (1 - p)), rel=1e-6)
