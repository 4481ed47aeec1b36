"""Frontier detection and the explorer's goal choice (no ROS)."""

from __future__ import annotations

import doctest
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_controller import frontier
from maes_controller._frontier_kernel import crowding_sums, cut_out, has_candidate
from maes_controller.frontier import (
    choose_frontier_goal,
    find_frontiers,
    frontier_goal,
    frontier_mask,
    is_near_frontier,
)
from maes_controller.navigation.costmap import GridMap
from maes_controller.navigation.planning import distance_field

CHARS = {".": 0, "#": 100, "?": -1}


def occ(rows: list[str]) -> np.ndarray:
    """Occupancy grid from text, top row first as drawn ('.' free, '#' wall, '?' unknown)."""
    return np.array([[CHARS[ch] for ch in row] for row in reversed(rows)], dtype=np.int8)


def cells(mask: np.ndarray) -> set[tuple[int, int]]:
    return {(int(x), int(y)) for y, x in zip(*np.nonzero(mask), strict=True)}


def test_frontier_cells_need_an_unknown_edge_neighbour():
    grid = occ([
        "??#..",
        "?.#..",
        "#..#?",
        "....?",
    ])  # fmt: skip
    # (1, 2) touches unknown (0, 2) and (1, 3); (4, 2) touches (4, 1); (3, 0) touches (4, 0).
    # (2, 1) and (1, 1) only border free cells and walls.
    assert cells(frontier_mask(grid)) == {(1, 2), (4, 2), (3, 0)}


def test_diagonal_unknown_is_not_a_frontier():
    # The unknown corner cell can never be seen past the two walls: counting it would leave a
    # frontier that never closes.
    grid = occ([
        "?#.",
        "#..",
        "...",
    ])  # fmt: skip
    assert not frontier_mask(grid).any()
    assert choose_frontier_goal(grid, (2, 0)) is None


def test_thresholds_decide_what_is_free():
    grid = np.array([[64, -1, 65]], dtype=np.int8)
    assert cells(frontier_mask(grid)) == {(0, 0)}
    assert cells(frontier_mask(grid, occupied_threshold=50)) == set()
    g = GridMap.from_array(grid, occupied_threshold=50)
    assert cells(frontier_mask(g)) == set()  # the GridMap's threshold is used


def test_clusters_are_8_connected_and_ordered():
    grid = occ([
        "?...?",
        "?....",
        ".....",
        "??...",
    ])  # fmt: skip
    clusters = find_frontiers(grid)
    # (2, 0)-(1, 1) and (3, 3)-(4, 2) are diagonal neighbours: they join their clusters.
    assert [c.tolist() for c in clusters] == [
        [[2, 0], [0, 1], [1, 1], [1, 2], [1, 3]],
        [[4, 2], [3, 3]],
    ]
    assert all(c.dtype == np.int64 for c in clusters)
    assert [len(c) for c in find_frontiers(grid, min_cluster_size=3)] == [5]


def test_find_frontiers_bad_input():
    with pytest.raises(ValueError, match="min_cluster_size must be an int >= 1, got 0"):
        find_frontiers(np.zeros((2, 2), dtype=np.int8), min_cluster_size=0)
    with pytest.raises(TypeError, match="grid must be an integer"):
        find_frontiers(np.zeros((2, 2)))


def test_path_nearest_beats_euclidean_nearest_behind_a_wall():
    grid = occ([
        "?..........",
        "?.########.",
        "?.#........",
        "..#........",
        "###........",
        "..........?",
    ])  # fmt: skip
    robot = (4, 2)
    # Frontier (1, 3) is 3.2 cells from the robot as the crow flies, but the wall makes the way
    # round by the top right long; frontier (9, 0) is 5.4 cells away and nearly straight.
    assert choose_frontier_goal(grid, robot) == (9, 0)
    dist = distance_field(grid == 0, robot)
    assert np.isfinite(dist[3, 1]) and dist[3, 1] > 15 > dist[0, 9]
    assert np.hypot(1 - 4, 3 - 2) < np.hypot(9 - 4, 0 - 2)


def test_unreachable_frontiers_are_ignored_and_completion_is_none():
    grid = occ([
        "#####",
        "#.#?#",
        "#.###",
        "#####",
    ])  # fmt: skip
    # the only frontier-adjacent unknown cell is walled off from the robot's free cells
    assert not frontier_mask(grid).any()
    assert choose_frontier_goal(grid, (1, 1)) is None
    pocket = occ([
        "#######",
        "#..#.?#",
        "#..####",
        "#######",
    ])  # fmt: skip
    assert cells(frontier_mask(pocket)) == {(4, 2)}
    assert choose_frontier_goal(pocket, (1, 1)) is None  # a frontier, but not reachable
    explored = occ(["#####", "#...#", "#####"])
    assert choose_frontier_goal(explored, (2, 1)) is None


def test_claimed_goals_spread_robots_and_fall_back_when_all_claimed():
    grid = occ([
        "?.......?",
        ".........",
    ])  # fmt: skip
    robot = (3, 0)
    # frontier cells (1, 1), (0, 0), (7, 1), (8, 0) at path lengths 2.4, 3, 4.4, 5
    assert choose_frontier_goal(grid, robot) == (1, 1)
    assert choose_frontier_goal(grid, robot, claimed=[(1, 1)], claim_radius=2.0) == (7, 1)
    assert choose_frontier_goal(grid, robot, claimed=[(1, 1)], claim_radius=1.0) == (0, 0)
    # every candidate claimed: still return the nearest rather than stopping early
    claimed = [(1, 1), (7, 1)]
    assert choose_frontier_goal(grid, robot, claimed=claimed, claim_radius=2.0) == (1, 1)


def test_frontier_others_passed_goes_after_unclaimed_ones_and_before_claimed_ones():
    grid = occ([
        "?.......?",
        ".........",
    ])  # fmt: skip
    robot = (3, 0)
    # frontier cells (1, 1), (0, 0), (7, 1), (8, 0) at path lengths 2.4, 3, 4.4, 5
    assert choose_frontier_goal(grid, robot, seen=[(1, 1)], claim_radius=2.0) == (7, 1)
    assert choose_frontier_goal(grid, robot, seen=[(1, 1)], claim_radius=1.0) == (0, 0)
    # every unclaimed frontier passed by others: the nearest of them still
    assert choose_frontier_goal(grid, robot, seen=[(1, 1), (7, 1)], claim_radius=2.0) == (1, 1)
    # a claimed frontier is left even for one others passed
    claimed_seen = {"claimed": [(7, 1)], "seen": [(1, 1)], "claim_radius": 2.0}
    assert choose_frontier_goal(grid, robot, **claimed_seen) == (1, 1)
    # every frontier claimed: the trails change nothing (the claims' shares decide)
    both = {"claimed": [(1, 1), (7, 1)], "claim_radius": 2.0, "share_cost": 10.0}
    assert choose_frontier_goal(grid, robot, **both, seen=[(1, 1)]) == choose_frontier_goal(
        grid, robot, **both
    )


def test_goal_next_to_a_frontier_that_is_not_traversable():
    grid = occ([
        "#######",
        "#.....?",
        "#######",
    ])  # fmt: skip
    trav = grid == 0
    trav[1, 5] = False  # e.g. inflated: the frontier cell (5, 1) itself is not traversable
    assert cells(frontier_mask(grid)) == {(5, 1)}
    assert choose_frontier_goal(grid, (1, 1), trav) == (4, 1)
    assert is_near_frontier(grid, (4, 1)) and not is_near_frontier(grid, (3, 1))


def test_robot_in_a_non_traversable_cell_starts_from_the_nearest_traversable():
    grid = occ([
        "?....",
        ".....",
        ".....",
    ])  # fmt: skip
    trav = grid == 0
    trav[0, 4] = False
    # from (3, 0) (nearest traversable, tie with (4, 1) broken by lower iy): (1, 2) is 2.8 away
    # and (0, 1) 3.4
    assert choose_frontier_goal(grid, (4, 0), trav) == (1, 2)
    assert choose_frontier_goal(grid, (4, 0), np.zeros(grid.shape, dtype=bool)) is None


def test_choose_bad_input():
    grid = occ(["..?"])
    with pytest.raises(ValueError, match=r"traversable must be a bool array of the grid's shape"):
        choose_frontier_goal(grid, (0, 0), np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="claim_radius must be a finite number >= 0, got -1"):
        choose_frontier_goal(grid, (0, 0), claim_radius=-1)


def test_accepts_a_gridmap():
    grid = occ([
        "..?",
        "...",
    ])  # fmt: skip
    g = GridMap.from_array(grid)
    assert choose_frontier_goal(g, (0, 0)) == choose_frontier_goal(grid, (0, 0)) == (1, 1)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_goal_is_the_path_nearest_reachable_frontier(seed):
    rng = np.random.default_rng(seed)
    h, w = rng.integers(3, 12, size=2)
    grid = rng.choice(np.array([0, 100, -1], dtype=np.int8), size=(h, w), p=[0.6, 0.2, 0.2])
    free = grid == 0
    if not free.any():
        return
    ys, xs = np.nonzero(free)
    k = rng.integers(len(xs))
    robot = (int(xs[k]), int(ys[k]))
    goal = choose_frontier_goal(grid, robot)
    dist = distance_field(free, robot)
    reachable_frontier = frontier_mask(grid) & np.isfinite(dist)
    if not reachable_frontier.any():
        assert goal is None
        return
    assert goal is not None and reachable_frontier[goal[1], goal[0]]
    assert dist[goal[1], goal[0]] == dist[reachable_frontier].min()


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_claims=st.integers(0, 60))
def test_claims_given_as_an_array_choose_as_the_list_does(seed, n_claims):
    """The frontier explorer hands its claimed cells on as a float (K, 2) array: the same goal
    and path length as the list of the same cells, in the same order (the claims' shares too)."""
    rng = np.random.default_rng(seed)
    h, w = rng.integers(3, 20, size=2)
    grid = rng.choice(np.array([0, 100, -1], dtype=np.int8), size=(h, w), p=[0.6, 0.2, 0.2])
    free = np.argwhere(grid == 0)
    if free.size == 0:
        return
    iy, ix = free[rng.integers(len(free))]
    claimed = [(int(x), int(y)) for x, y in rng.integers(-2, 22, size=(n_claims, 2))]
    for share_cost in (None, 10.0):
        args = {"claim_radius": 2.0, "share_cost": share_cost}
        expected = frontier_goal(grid, (int(ix), int(iy)), claimed=claimed, **args)
        for array in (np.array(claimed, dtype=np.float64), np.array(claimed, dtype=np.int64)):
            got = frontier_goal(grid, (int(ix), int(iy)), claimed=array.reshape(-1, 2), **args)
            assert got == expected


def clusters_by_python_search(mask):
    """The breadth-first search frontier._clusters was before it was compiled: the reference
    its clusters must equal, cell for cell and in order."""
    h, w = mask.shape
    seen = np.zeros_like(mask)
    clusters = []
    for iy, ix in zip(*np.nonzero(mask), strict=True):
        if seen[iy, ix]:
            continue
        seen[iy, ix] = True
        members, queue = [], deque([(int(ix), int(iy))])
        while queue:
            cx, cy = queue.popleft()
            members.append((cx, cy))
            for dx, dy in frontier._OFFSETS_8:
                nx, ny = cx + dx, cy + dy
                if 0 <= nx < w and 0 <= ny < h and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    queue.append((nx, ny))
        members.sort(key=lambda c: (c[1], c[0]))
        clusters.append(np.array(members, dtype=np.int64))
    return clusters


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_compiled_clusters_equal_the_python_search(seed):
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(1, 40, size=2))
    mask = rng.random((h, w)) < rng.uniform(0.0, 0.7)
    got = frontier._clusters(mask)
    want = clusters_by_python_search(mask)
    assert [c.tolist() for c in got] == [c.tolist() for c in want]
    assert all(c.dtype == np.int64 and c.shape[1:] == (2,) and not c.flags.writeable for c in got)


def goal_candidates_one_cluster_at_a_time(clusters, dist, trav):
    """The per-cluster computation that frontier._goal_candidates does for all clusters at once
    (what it was before): the reference it must equal, cell for cell and in order."""
    parts = []
    h, w = dist.shape
    for cluster in clusters:
        reach = np.isfinite(dist[cluster[:, 1], cluster[:, 0]])
        if reach.any():
            parts.append(cluster[reach])
            continue
        blocked = cluster[~trav[cluster[:, 1], cluster[:, 0]]]
        around = (blocked[:, None, :] + np.array(frontier._OFFSETS_8)[None, :, :]).reshape(-1, 2)
        inside = (around[:, 0] >= 0) & (around[:, 0] < w) & (around[:, 1] >= 0) & (around[:, 1] < h)
        around = np.unique(around[inside], axis=0)
        parts.append(around[np.isfinite(dist[around[:, 1], around[:, 0]])])
    parts = [p for p in parts if p.shape[0]]
    return np.concatenate(parts) if parts else np.empty((0, 2), dtype=np.int64)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_candidates_of_all_clusters_at_once_equal_the_per_cluster_reference(seed):
    # Random maps with walls, unknown space and robots' cells cut out of the traversable mask:
    # clusters reachable, unreachable, and unreachable behind untraversable frontier cells.
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(2, 30, size=2))
    grid = rng.choice(np.array([0, 100, -1], dtype=np.int8), size=(h, w), p=[0.55, 0.2, 0.25])
    trav = (grid == 0) & (rng.random((h, w)) > 0.15)
    ys, xs = np.nonzero(trav)
    if xs.size == 0:
        return
    k = int(rng.integers(xs.size))
    dist = distance_field(trav, (int(xs[k]), int(ys[k])))
    clusters = find_frontiers(grid)
    got = frontier._goal_candidates(clusters, dist, trav)
    want = goal_candidates_one_cluster_at_a_time(clusters, dist, trav)
    assert got.dtype == want.dtype == np.int64
    assert got.tolist() == want.tolist()
    # the compiled question frontier_goal asks first: is there any candidate at all?
    cells = np.concatenate(clusters) if clusters else np.empty((0, 2), dtype=np.int64)
    assert has_candidate(cells, dist, trav) == (want.shape[0] > 0)


def avoid_cells_cut_out_by_numpy(trav, avoid, start):
    """How frontier._candidates took the avoid cells out of the mask before it was compiled:
    the reference cut_out must equal (the mask, and whether any cell was cut)."""
    h, w = trav.shape
    stand = np.asarray(avoid, dtype=np.int64).reshape(-1, 2)
    xs, ys = stand[:, 0], stand[:, 1]
    keep = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h) & ((xs != start[0]) | (ys != start[1]))
    around = trav.copy()
    around[ys[keep], xs[keep]] = False
    return around, bool(keep.any())


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 40), fortran=st.booleans())
def test_compiled_cut_out_equals_numpy_s(seed, n, fortran):
    # cells inside and outside the grid, repeated, and on the start (never cut)
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(1, 20, size=2))
    trav = rng.random((h, w)) < 0.7
    if fortran:
        trav = np.asfortranarray(trav)
    start = (int(rng.integers(0, w)), int(rng.integers(0, h)))
    avoid = np.stack([rng.integers(-3, w + 3, n), rng.integers(-3, h + 3, n)], axis=1)
    if n and rng.random() < 0.3:
        avoid[0] = start
    before = trav.copy()
    got, cut = cut_out(trav, np.ascontiguousarray(avoid, dtype=np.int64), *start)
    want, want_cut = avoid_cells_cut_out_by_numpy(trav, avoid, start)
    assert got.dtype == np.bool_ and got.flags.c_contiguous and np.array_equal(trav, before)
    assert np.array_equal(got, want) and cut is want_cut


def test_has_candidate_sees_a_hemmed_robot_and_a_frontier_it_may_not_stand_on():
    # a corridor: the robot at (0, 0), the frontier cell (3, 0) next to unknown (4, 0)
    grid = np.array([[0, 0, 0, 0, -1]], dtype=np.int8)
    cells = np.concatenate(find_frontiers(grid))
    assert cells.tolist() == [[3, 0]]
    trav = grid == 0
    assert has_candidate(cells, distance_field(trav, (0, 0)), trav)
    hemmed = trav.copy()
    hemmed[0, 1] = False  # a robot stands in the way
    assert not has_candidate(cells, distance_field(hemmed, (0, 0)), hemmed)
    # the frontier cell itself untraversable (inflated): its reachable neighbour stands in
    inflated = trav.copy()
    inflated[0, 3] = False
    assert has_candidate(cells, distance_field(inflated, (0, 0)), inflated)
    inflated[0, 2] = False
    assert not has_candidate(cells, distance_field(inflated, (0, 0)), inflated)
    # what frontier_goal makes of it: no goal around the robot, one through it
    assert frontier_goal(grid, (0, 0), avoid=np.array([[1, 0]]), through=False) is None
    assert frontier_goal(grid, (0, 0), avoid=np.array([[1, 0]])) == ((3, 0), 3.0)


@pytest.mark.parametrize("module", [frontier])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), radius=st.integers(0, 4))
def test_kept_near_frontier_answers_equal_the_window_s(seed, radius):
    # is_near_frontier on a GridMap looks at the window's rows in the mask's bytes (kept with
    # the map): the same as the numpy window around the cell (a plain array's way)
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(1, 14, 2))
    values = rng.choice(np.array([-1, 0, 0, 100], dtype=np.int8), size=(h, w))
    grid = GridMap.from_array(values, 0.5, -1.0, 2.0)
    for iy in range(-1, h + 1):
        for ix in range(-1, w + 1):
            want = is_near_frontier(values, (ix, iy), radius)
            assert is_near_frontier(grid, (ix, iy), radius) == want


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_claims=st.one_of(
        st.integers(1, 20), st.sampled_from([64, 127, 128, 129, 136, 255, 256, 257, 700, 2100])
    ),
    radius=st.one_of(st.sampled_from([1.0, 4.0, 2**0.5, 6.5]), st.floats(1.0, 30.0)),
    whole=st.booleans(),
)
def test_compiled_crowding_sums_equal_numpy_s_to_the_bit(seed, n_claims, radius, whole):
    # frontier_goal's cost when every candidate is claimed: the compiled sums, which skip the
    # far claims and sum each row as NumPy does, equal the NumPy expression they replace
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 40))
    cand = rng.integers(0, 60, size=(k, 2)).astype(np.int64)
    claimed = rng.integers(-5, 65, size=(n_claims, 2)).astype(np.float64)
    if not whole:
        claimed += rng.random(claimed.shape) * rng.choice([1.0, 1e-9], size=claimed.shape)
    claimed[: n_claims // 2] = cand[rng.integers(0, k, n_claims // 2)] + rng.integers(-3, 4, 2)
    want = np.clip(1.0 - frontier._gaps(cand, claimed) / radius, 0.0, None).sum(axis=1)
    got = crowding_sums(cand, claimed, radius)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    radius=st.one_of(
        st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 2**0.5, 8**0.5, 4.0, 5.0]),
        st.floats(0.0, 40.0),
    ),
)
def test_claims_stamped_on_the_grid_equal_every_pair_s_distance(seed, radius):
    # frontier_goal's "is a candidate near a claim": stamping each claim's disc on the grid
    # answers as comparing every candidate with every claim, claims off the map included
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(1, 50, 2))
    k, c = (int(v) for v in rng.integers(1, 300, 2))
    cand = np.stack([rng.integers(0, w, k), rng.integers(0, h, k)], axis=1)
    claimed = np.stack([rng.integers(-12, w + 12, c), rng.integers(-12, h + 12, c)], axis=1).astype(
        np.float64
    )
    want = (frontier._gaps(cand, claimed) <= radius).any(axis=1)
    assert np.array_equal(frontier.near_points(cand, claimed, radius, (h, w)), want)
    # claims between cells (not from a grid) take the pairwise way, with the same answer
    off = claimed + 0.25
    want = (frontier._gaps(cand, off) <= radius).any(axis=1)
    assert np.array_equal(frontier.near_points(cand, off, radius, (h, w)), want)
