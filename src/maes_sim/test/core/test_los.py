"""Line of sight and distance through walls: hand-computed cases, rules, numba == reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_sim.core.kernels import line_of_sight, wall_distance
from maes_sim.core.kernels.reference import line_of_sight_reference, wall_distance_reference


def column_map() -> np.ndarray:
    """5x5 open map with a wall column at ix = 3."""
    walls = np.zeros((5, 5), dtype=bool)
    walls[:, 3] = True
    return walls


def los1(walls, a, b) -> bool:
    return bool(line_of_sight(walls, np.array([a], float), np.array([b], float))[0])


def dist1(walls, a, b) -> float:
    return float(wall_distance(walls, np.array([a], float), np.array([b], float))[0])


# --- hand-computed ------------------------------------------------------------------------------


def test_column_blocks_and_its_thickness_is_measured():
    walls = column_map()
    assert los1(walls, (0.5, 0.5), (2.5, 4.5))
    assert dist1(walls, (0.5, 0.5), (2.5, 4.5)) == 0.0
    assert not los1(walls, (0.5, 0.5), (4.5, 0.5))
    assert dist1(walls, (0.5, 0.5), (4.5, 0.5)) == 1.0
    assert dist1(walls, (4.5, 0.5), (0.5, 0.5)) == 1.0


def test_oblique_distance_through_walls():
    # (0.5, 0.5) -> (4.5, 2.5): slope 1/2, the column x in [3, 4) is crossed over a length of
    # 1 * sqrt(1 + 1/4) = sqrt(5)/2
    assert dist1(column_map(), (0.5, 0.5), (4.5, 2.5)) == pytest.approx(math.sqrt(5) / 2, 1e-12)
    # the diagonal through tile (1, 1) from corner to corner is sqrt(2) long inside it
    walls = np.zeros((4, 4), dtype=bool)
    walls[1, 1] = True
    assert dist1(walls, (0.5, 0.5), (3.5, 3.5)) == pytest.approx(math.sqrt(2), 1e-12)
    assert not los1(walls, (0.5, 0.5), (3.5, 3.5))


def test_segment_ending_inside_a_wall():
    walls = column_map()
    assert dist1(walls, (1.5, 2.5), (3.25, 2.5)) == pytest.approx(0.25, rel=1e-12)
    assert not los1(walls, (1.5, 2.5), (3.25, 2.5))
    assert dist1(walls, (3.25, 2.5), (3.75, 2.5)) == 0.5  # exact: wholly inside one wall tile


def test_outside_the_map_counts_as_wall():
    walls = np.zeros((3, 3), dtype=bool)
    assert not los1(walls, (1.5, 1.5), (4.5, 1.5))
    assert dist1(walls, (1.5, 1.5), (4.5, 1.5)) == pytest.approx(1.5, rel=1e-12)
    assert dist1(walls, (-1.0, 0.5), (4.0, 0.5)) == pytest.approx(
        2.0, rel=1e-12
    )  # 1 before, 1 after the map


def test_end_points_touching_a_wall_boundary_do_not_block():
    walls = column_map()
    assert los1(walls, (1.5, 2.5), (3.0, 2.5))  # b on the column's face
    assert los1(walls, (3.0, 2.5), (1.5, 2.5))  # a on the face, moving away from it
    assert dist1(walls, (3.0, 2.5), (1.5, 2.5)) == 0.0
    assert not los1(walls, (3.0, 2.5), (3.5, 2.5))  # into the wall


def test_degenerate_segment_is_a_point():
    walls = column_map()
    assert los1(walls, (1.5, 1.5), (1.5, 1.5))
    assert not los1(walls, (3.5, 1.5), (3.5, 1.5))
    assert dist1(walls, (3.5, 1.5), (3.5, 1.5)) == 0.0


def test_segment_along_a_grid_line_uses_the_tiles_on_its_positive_side():
    walls = np.zeros((5, 5), dtype=bool)
    walls[2, 1] = True  # tile (1, 2): left of the line x = 2
    assert los1(walls, (2.0, 0.5), (2.0, 4.5)) and los1(walls, (2.0, 4.5), (2.0, 0.5))
    walls[2, 2] = True  # tile (2, 2): right of it
    assert not los1(walls, (2.0, 0.5), (2.0, 4.5)) and not los1(walls, (2.0, 4.5), (2.0, 0.5))
    assert dist1(walls, (2.0, 0.5), (2.0, 4.5)) == 1.0


def test_closed_seam_blocks_sight_but_adds_no_wall_distance():
    walls = np.zeros((4, 4), dtype=bool)
    walls[0, 1] = walls[1, 0] = True  # tiles (1, 0) and (0, 1) meet at corner (1, 1)
    for a, b in (((0.5, 0.5), (2.5, 2.5)), ((2.5, 2.5), (0.5, 0.5))):
        assert not los1(walls, a, b)
        assert dist1(walls, a, b) == 0.0
    walls[1, 0] = False  # one wall beside the corner: grazed
    assert los1(walls, (0.5, 0.5), (2.5, 2.5))
    # a seam at an end point does not block: the segment only touches it
    walls[1, 0] = True
    assert los1(walls, (1.0, 1.0), (2.5, 2.5)) and los1(walls, (2.5, 2.5), (1.0, 1.0))


def test_parallel_matches_serial():
    rng = np.random.default_rng(2)
    walls = rng.random((40, 40)) < 0.3
    a = rng.uniform(0, 40, (3000, 2))
    b = a + rng.uniform(-8, 8, (3000, 2))
    np.testing.assert_array_equal(
        line_of_sight(walls, a, b), line_of_sight(walls, a, b, parallel=True)
    )
    assert (
        wall_distance(walls, a, b).tobytes() == wall_distance(walls, a, b, parallel=True).tobytes()
    )


# --- numba == reference, invariants -------------------------------------------------------------


def random_segments(rng: np.random.Generator, m: int, size: int, fill: float = 0.3):
    h, w = rng.integers(1, size + 1, size=2)
    walls = rng.random((h, w)) < fill
    a = rng.uniform(-1.0, max(h, w) + 1.0, (m, 2))
    b = rng.uniform(-1.0, max(h, w) + 1.0, (m, 2))
    a[::2] = np.round(a[::2] * 2.0) / 2.0  # on tile corners, edges and centres
    b[::3] = np.round(b[::3] * 2.0) / 2.0
    b[::5] = a[::5] + rng.integers(-3, 4, (len(a[::5]), 1))  # exact diagonals and axes
    return walls, a, b


def check_against_reference(walls, a, b):
    los = line_of_sight(walls, a, b)
    dist = wall_distance(walls, a, b)
    np.testing.assert_array_equal(los, line_of_sight_reference(walls, a + 0.0, b + 0.0))
    assert dist.tobytes() == wall_distance_reference(walls, a + 0.0, b + 0.0).tobytes()
    # wall length implies no sight; no sight without wall length only at a closed seam
    assert not (los & (dist > 0)).any()
    return los, dist


@pytest.mark.parametrize("seed", range(5))
def test_kernels_match_reference_on_random_maps(seed):
    rng = np.random.default_rng(seed)
    for _ in range(10):
        check_against_reference(*random_segments(rng, 200, 15))


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), fill=st.floats(0.0, 0.9))
def test_kernels_match_reference_property(seed, fill):
    check_against_reference(*random_segments(np.random.default_rng(seed), 30, 10, fill))


def test_wall_distance_agrees_with_dense_sampling():
    """Independent check: the fraction of sample points inside walls approximates the length."""
    rng = np.random.default_rng(4)
    walls, a, b = random_segments(rng, 60, 12)
    h, w = walls.shape
    padded = np.ones((h + 2, w + 2), dtype=bool)
    padded[1:-1, 1:-1] = walls
    s = (np.arange(20000) + 0.5) / 20000
    pts = a[:, None, :] + s[:, None] * (b - a)[:, None, :]
    ix = np.clip(np.floor(pts[..., 0]).astype(int), -1, w) + 1
    iy = np.clip(np.floor(pts[..., 1]).astype(int), -1, h) + 1
    sampled = padded[iy, ix].mean(axis=1) * np.hypot(*(b - a).T)
    np.testing.assert_allclose(wall_distance(walls, a, b), sampled, atol=2e-3 * 20)


def test_line_of_sight_is_symmetric_on_random_maps():
    rng = np.random.default_rng(6)
    walls, a, b = random_segments(rng, 2000, 20)
    np.testing.assert_array_equal(line_of_sight(walls, a, b), line_of_sight(walls, b, a))


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("walls", "a", "b", "match"),
    [
        (np.zeros((3, 3), int), [[0.5, 0.5]], [[1.5, 1.5]], "walls must be a bool"),
        (np.zeros((3, 3), bool), [[0.5, np.nan]], [[1.5, 1.5]], "a must be finite"),
        (np.zeros((3, 3), bool), [[0.5, 0.5]], [[1.5, 1.5], [2.5, 2.5]], r"b must have shape"),
        (np.zeros((3, 3), bool), [0.5, 0.5], [1.5, 1.5], r"a must have shape \(N, 2\)"),
    ],
)
def test_bad_input_raises(walls, a, b, match):
    for func in (line_of_sight, wall_distance):
        with pytest.raises((TypeError, ValueError), match=match):
            func(walls, np.asarray(a, float), np.asarray(b, float))


def test_no_segments():
    assert line_of_sight(np.zeros((2, 2), bool), np.zeros((0, 2)), np.zeros((0, 2))).shape == (0,)
    assert wall_distance(np.zeros((2, 2), bool), np.zeros((0, 2)), np.zeros((0, 2))).shape == (0,)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("radius", [0.0, 1.5, 5.0, np.inf])
def test_visible_pairs_equals_range_then_line_of_sight(seed, radius):
    from maes_sim.core.comms import clear_pairs
    from maes_sim.core.kernels import visible_pairs
    from maes_sim.core.neighbors import pairs_within

    rng = np.random.default_rng(seed)
    walls = rng.random((20, 24)) < 0.2
    pos = rng.uniform(0, 24, size=(int(rng.integers(2, 80)), 2)) * [1, 20 / 24]
    ia, ib, _ = pairs_within(pos, None, radius)
    expected = clear_pairs(walls, pos, ia, ib)
    got = visible_pairs(walls, pos, radius)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    if radius == np.inf:
        assert got[0].size > 0


@pytest.mark.parametrize("fill", [0.0, 0.03])
@pytest.mark.parametrize("radius", [0.05, 4.0])
def test_visible_pairs_of_a_crowd_equals_range_then_line_of_sight(fill, radius):
    # Mostly open ground and a dense crowd: most pairs take the wall-free-rectangle shortcut,
    # points sit on tile edges and on the map border, and a tiny radius must not build a huge
    # cell table.
    from maes_sim.core.comms import clear_pairs
    from maes_sim.core.kernels import visible_pairs
    from maes_sim.core.neighbors import pairs_within

    rng = np.random.default_rng(7)
    walls = rng.random((40, 60)) < fill
    pos = rng.uniform(0, 12, size=(300, 2))
    pos[:40] = np.round(pos[:40])  # on grid lines and corners, some on the map border (0)
    ia, ib, _ = pairs_within(pos, None, radius)
    expected = clear_pairs(walls, pos, ia, ib)
    got = visible_pairs(walls, pos, radius)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert got[0].size > 0


def test_visible_pairs_with_a_kept_wall_table_gives_the_same_pairs():
    from maes_sim.core.kernels import visible_pairs, wall_sums

    rng = np.random.default_rng(11)
    walls = rng.random((30, 40)) < 0.25
    pos = rng.uniform(0, 30, size=(150, 2))
    sums = wall_sums(walls)
    assert sums[-1, -1] == walls.sum() and sums.shape == (31, 41)
    for radius in (2.0, 9.0):
        got = visible_pairs(walls, pos, radius, sums=sums)
        want = visible_pairs(walls, pos, radius)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    with pytest.raises(ValueError, match="sums must be wall_sums"):
        visible_pairs(walls, pos, 2.0, sums=wall_sums(walls[:, :-1]))


def test_visible_pairs_of_fewer_than_two_points_is_empty():
    from maes_sim.core.kernels import visible_pairs

    walls = np.zeros((4, 4), dtype=bool)
    for pts in (np.empty((0, 2)), np.array([[1.5, 1.5]])):
        ia, ib = visible_pairs(walls, pts, 3.0)
        assert ia.size == 0 and ib.size == 0
