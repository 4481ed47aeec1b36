import numpy as np
import pytest

from maes_sim.core.kernels import cells
from maes_sim.core.neighbors import _pairs_within_reference, pairs_within


def test_hand_computed_pairs_exclude_self_and_sort():
    pts = np.array([[0.0, 0.0], [3.0, 0.0], [1.0, 0.0]])
    ia, ib, d = pairs_within(pts, None, 2.0)
    assert list(zip(ia.tolist(), ib.tolist(), strict=True)) == [(0, 2), (1, 2), (2, 0), (2, 1)]
    np.testing.assert_array_equal(d, [1.0, 2.0, 1.0, 2.0])


def test_radius_is_inclusive_and_bipartite():
    a = np.array([[0.0, 0.0]])
    b = np.array([[0.0, 5.0], [0.0, 5.0000001], [4.0, 3.0]])
    ia, ib, d = pairs_within(a, b, 5.0)
    assert ib.tolist() == [0, 2]
    np.testing.assert_allclose(d, [5.0, 5.0])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("radius", [0.0, 0.7, 3.0, 50.0])
@pytest.mark.parametrize("path", ["all pairs", "cell list"])
def test_matches_brute_force_on_random_points(seed, radius, path, monkeypatch):
    # cross_pairs tests every pair of small sets and uses its cell list above a size: both ways
    if path == "cell list":
        monkeypatch.setattr(cells, "BRUTE_FORCE_PAIRS", 0)
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 40, size=(int(rng.integers(1, 200)), 2))
    b = rng.uniform(-5, 45, size=(int(rng.integers(1, 200)), 2))
    for bb, excl in ((b, False), (None, True)):
        got = pairs_within(a, bb, radius)
        ref = _pairs_within_reference(a, a if bb is None else bb, radius, excl)
        for g, r in zip(got, ref, strict=True):
            np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("radius", [0.0, 0.5, 4.0])
def test_one_set_against_itself_matches_brute_force_in_a_crowd(radius):
    # The symmetric fast path: a crowd with exact duplicates and points on a lattice.
    rng = np.random.default_rng(3)
    a = np.round(rng.uniform(0, 6, size=(400, 2)) * 2) / 2
    got = pairs_within(a, None, radius)
    ref = _pairs_within_reference(a, a, radius, True)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, r)
    assert got[0].size > 0


def test_empty_inputs_give_empty_pairs():
    ia, ib, d = pairs_within(np.empty((0, 2)), None, 3.0)
    assert ia.shape == ib.shape == d.shape == (0,)
    ia, ib, d = pairs_within(np.zeros((3, 2)), np.empty((0, 2)), 3.0)
    assert ia.size == 0


def test_tiny_radius_over_large_extent_stays_cheap():
    pts = np.array([[0.0, 0.0], [1e6, 1e6], [1e6, 1e6 + 1e-7]])
    ia, ib, _ = pairs_within(pts, None, 1e-6)
    assert list(zip(ia.tolist(), ib.tolist(), strict=True)) == [(1, 2), (2, 1)]


@pytest.mark.parametrize("seed", range(4))
def test_mirror_symmetric_matches_a_dictionary_lookup(seed):
    from maes_sim.core.neighbors import mirror_symmetric

    rng = np.random.default_rng(seed)
    pts = rng.uniform(0, 10, size=(50, 2))
    ia, ib, _ = pairs_within(pts, None, 2.5)
    upper = ia < ib
    pairs = list(zip(ia[upper].tolist(), ib[upper].tolist(), strict=True))
    truth = {p: bool(rng.random() < 0.5) for p in pairs}
    ok = mirror_symmetric(ia, ib, np.array([truth[p] for p in pairs]), 50)
    expected = [
        truth[(min(a, b), max(a, b))] for a, b in zip(ia.tolist(), ib.tolist(), strict=True)
    ]
    assert ok.tolist() == expected
