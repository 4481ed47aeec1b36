"""Inflation, costmaps, A*, distance fields, line of sight and path pruning (no ROS)."""

from __future__ import annotations

import doctest
import math
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_controller.navigation import _search, _segment, global_planner, inflation, planning
from maes_controller.navigation.costmap import GridMap
from maes_controller.navigation.global_planner import plan_route
from maes_controller.navigation.inflation import (
    costmap_from_occupancy,
    disc_offsets,
    obstacle_distance,
)
from maes_controller.navigation.planning import (
    astar,
    distance_field,
    inflate,
    line_of_sight,
    nearest_traversable,
    path_length,
    prune_path,
    traversable_mask,
)

MOVES = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)]


def grid_from(rows: list[str]) -> np.ndarray:
    """Traversable mask from text, top row first as drawn ('#' blocked); row 0 = bottom."""
    return np.array([[ch != "#" for ch in row] for row in reversed(rows)])


def legal_step(free: np.ndarray, a, b) -> bool:
    """The move rule, written independently: 8-neighbours, no corner cutting."""
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    if max(abs(dx), abs(dy)) != 1 or not free[by, bx]:
        return False
    return dx == 0 or dy == 0 or (free[ay, bx] and free[by, ax])


def brute_force_costs(free: np.ndarray, start, penalty=None) -> np.ndarray:
    """Bellman-Ford relaxation until nothing changes: the optimal path cost to every cell."""
    h, w = free.shape
    penalty = np.zeros(free.shape) if penalty is None else penalty
    dist = np.full((h, w), np.inf)
    dist[start[1], start[0]] = 0.0
    changed = True
    while changed:
        changed = False
        for y in range(h):
            for x in range(w):
                if not math.isfinite(dist[y, x]):
                    continue
                for dx, dy in MOVES:
                    nx, ny = x + dx, y + dy
                    if 0 <= nx < w and 0 <= ny < h and legal_step(free, (x, y), (nx, ny)):
                        c = dist[y, x] + math.hypot(dx, dy) * (1.0 + penalty[ny, nx])
                        if c < dist[ny, nx] - 1e-12:
                            dist[ny, nx] = c
                            changed = True
    return dist


def path_cost(path, penalty=None) -> float:
    total = 0.0
    for (ax, ay), (bx, by) in pairwise(path):
        extra = 0.0 if penalty is None else penalty[by, bx]
        total += math.hypot(bx - ax, by - ay) * (1.0 + extra)
    return total


def random_free(rng: np.random.Generator, h: int, w: int, p_wall: float) -> np.ndarray:
    return rng.random((h, w)) >= p_wall


# -- inflation ------------------------------------------------------------------------------


def test_inflate_by_hand():
    occ = np.zeros((5, 5), dtype=bool)
    occ[2, 2] = True
    assert inflate(occ, 0.4).sum() == 1
    assert inflate(occ, 1.0).sum() == 5  # plus sign
    assert inflate(occ, 1.5).sum() == 9  # 3x3: diagonal centres are sqrt(2) away
    assert inflate(occ, 2.0).sum() == 13


def test_inflate_does_not_wrap_around_edges():
    occ = np.zeros((4, 6), dtype=bool)
    occ[0, 0] = True
    out = inflate(occ, 1.5)
    assert out[:2, :2].all() and out.sum() == 4
    assert not out[:, -1].any() and not out[-1, :].any()


@pytest.mark.parametrize("radius", [0.0, 1.0, 1.5, 2.3, 3.0])
def test_inflate_and_distance_match_brute_force(radius):
    rng = np.random.default_rng(1)
    occ = rng.random((9, 11)) < 0.08
    ys, xs = np.nonzero(occ)
    expect_dist = np.full(occ.shape, np.inf)
    for y in range(occ.shape[0]):
        for x in range(occ.shape[1]):
            if xs.size:
                d = np.hypot(xs - x, ys - y).min()
                expect_dist[y, x] = d if d <= radius else np.inf
    assert np.array_equal(inflate(occ, radius), np.isfinite(expect_dist))
    assert np.allclose(obstacle_distance(occ, radius), expect_dist)


def test_disc_offsets_radius():
    offsets = disc_offsets(2.0)
    assert len(offsets) == 13 and (np.hypot(*offsets.T) <= 2.0).all()
    with pytest.raises(ValueError, match="radius must be a finite number >= 0, got -1"):
        disc_offsets(-1)


def test_inflate_rejects_non_bool():
    with pytest.raises(TypeError, match="occupied must be a bool"):
        inflate(np.zeros((2, 2), dtype=int), 1.0)


def nav2_translated(distance: float, robot_radius: float, k: float) -> int:
    """Nav2's decayed cost for a distance, translated to 0..100, computed by hand."""
    c = int(252 * math.exp(-k * (distance - robot_radius)))
    return 0 if c == 0 else 1 + (97 * (c - 1)) // 251


def test_costmap_values_follow_nav2():
    occ = np.zeros((1, 9), dtype=np.int8)
    occ[0, 0] = 100
    occ[0, 7:] = -1
    cost = costmap_from_occupancy(
        occ, robot_radius=1.0, inflation_radius=4.0, cost_scaling_factor=1.0
    )
    assert cost[0, 0] == 100 and cost[0, 1] == 99
    for ix in (2, 3, 4):
        assert cost[0, ix] == nav2_translated(ix, 1.0, 1.0)
    assert nav2_translated(2, 1.0, 1.0) == 36  # 252 * e^-1 = 92.7 -> 92 -> 1 + 97 * 91 // 251
    assert cost[0, 5] == 0 and cost[0, 6] == 0  # beyond inflation_radius
    assert (cost[0, 7:] == -1).all()  # unknown stays unknown outside the inscribed radius


def test_costmap_unknown_cells():
    occ = np.array([[100, -1, -1, -1, 0]], dtype=np.int8)
    plain = costmap_from_occupancy(occ, robot_radius=1.0, inflation_radius=3.0)
    assert plain.tolist() == [[100, 99, -1, -1, 0]]  # inscribed overrides unknown, as in Nav2
    inflated = costmap_from_occupancy(occ, 1.0, 3.0, inflate_unknown=True)
    assert inflated[0, 2] == nav2_translated(2, 1.0, 3.0) > 0
    assert nav2_translated(3, 1.0, 3.0) == 0
    assert inflated[0, 3] == -1  # a cost of 0 leaves an unknown cell unknown (Nav2 too)


def test_costmap_default_has_no_decay_and_uses_threshold():
    occ = np.array([[0, 64, 65, 0, 0, 0]], dtype=np.int8)
    cost = costmap_from_occupancy(occ, robot_radius=1.0)
    assert cost.tolist() == [[0, 99, 100, 99, 0, 0]]


def test_costmap_bad_input():
    occ = np.zeros((2, 2), dtype=np.int8)
    with pytest.raises(
        ValueError, match=r"inflation_radius \(1.0\) must be >= robot_radius \(2.0\)"
    ):
        costmap_from_occupancy(occ, robot_radius=2.0, inflation_radius=1.0)
    with pytest.raises(ValueError, match="robot_radius must be a finite number >= 0, got nan"):
        costmap_from_occupancy(occ, robot_radius=math.nan)
    with pytest.raises(TypeError, match="occupancy must be an integer"):
        costmap_from_occupancy(occ.astype(float), robot_radius=1.0)


def test_traversable_mask():
    costs = np.array([[0, 50, 98, 99, 100, -1]], dtype=np.int8)
    assert traversable_mask(costs).tolist() == [[True, True, True, False, False, False]]
    assert traversable_mask(costs, allow_unknown=True)[0, 5]


# -- A* and distance fields -------------------------------------------------------------------


def test_astar_straight_and_diagonal_on_open_grid():
    free = np.ones((5, 7), dtype=bool)
    assert astar(free, (0, 2), (6, 2)) == [(x, 2) for x in range(7)]
    path = astar(free, (0, 0), (4, 4))
    assert path == [(i, i) for i in range(5)]
    assert astar(free, (3, 3), (3, 3)) == [(3, 3)]


def test_astar_never_cuts_corners():
    free = grid_from([
        ".#",
        "#.",
    ])  # fmt: skip
    assert astar(free, (0, 0), (1, 1)) is None  # the only link is a diagonal squeeze
    free = grid_from([
        "..",
        "#.",
    ])  # fmt: skip
    assert astar(free, (0, 1), (1, 0)) == [(0, 1), (1, 1), (1, 0)]


def test_astar_goes_around_a_wall():
    free = grid_from([
        ".....",
        ".###.",
        "..#..",
    ])  # fmt: skip
    path = astar(free, (0, 0), (4, 0))
    assert path[0] == (0, 0) and path[-1] == (4, 0)
    assert all(legal_step(free, a, b) for a, b in pairwise(path))
    assert path_cost(path) == pytest.approx(brute_force_costs(free, (0, 0))[0, 4])


def test_astar_returns_none_when_blocked_or_unreachable():
    free = grid_from([
        "..#..",
        "..#..",
    ])  # fmt: skip
    assert astar(free, (0, 0), (4, 0)) is None
    assert astar(free, (2, 0), (0, 0)) is None  # start in a wall
    assert astar(free, (0, 0), (2, 1)) is None  # goal in a wall


def test_astar_rejects_cells_outside_the_grid():
    free = np.ones((3, 3), dtype=bool)
    with pytest.raises(ValueError, match=r"goal \(3, 0\) is outside the grid"):
        astar(free, (0, 0), (3, 0))
    with pytest.raises(ValueError, match="start must be an"):
        astar(free, (0,), (1, 1))
    with pytest.raises(TypeError, match="grid must be bool or an integer costmap"):
        astar(free.astype(float), (0, 0), (1, 1))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), p_wall=st.floats(0.0, 0.45))
def test_astar_is_optimal_against_brute_force(seed, p_wall):
    rng = np.random.default_rng(seed)
    h, w = rng.integers(2, 9, size=2)
    free = random_free(rng, h, w, p_wall)
    cells = np.argwhere(free)
    if len(cells) < 2:
        return
    (sy, sx), (gy, gx) = cells[rng.choice(len(cells), 2, replace=False)]
    best = brute_force_costs(free, (sx, sy))
    path = astar(free, (sx, sy), (gx, gy))
    if not math.isfinite(best[gy, gx]):
        assert path is None
        return
    assert path[0] == (sx, sy) and path[-1] == (gx, gy)
    assert all(legal_step(free, a, b) for a, b in pairwise(path))
    assert path_cost(path) == pytest.approx(best[gy, gx])
    assert np.allclose(distance_field(free, (sx, sy)), best)


def test_costmap_costs_push_the_path_away():
    # Two equally short rows around a wall; without costs the (deterministic) tie goes to row 2.
    costs = np.zeros((3, 7), dtype=np.int8)
    costs[1, 1:6] = 100
    assert (3, 2) in astar(costs, (0, 1), (6, 1))
    costs[2, 3] = 90  # now the middle of row 2 is expensive: row 0 wins unless costs are ignored
    assert (3, 2) in astar(costs, (0, 1), (6, 1), cost_weight=0.0)
    weighted = astar(costs, (0, 1), (6, 1))
    assert all(c[1] == 0 or c in [(0, 1), (6, 1)] for c in weighted)
    penalty = (1.0 / 98) * np.clip(costs, 0, 98).astype(float)
    best = brute_force_costs(traversable_mask(costs), (0, 1), penalty)
    assert path_cost(weighted, penalty) == pytest.approx(best[1, 6])


def test_unknown_cells_only_with_allow_unknown():
    costs = np.full((3, 5), -1, dtype=np.int8)
    costs[:, 0] = costs[:, 4] = 0
    assert astar(costs, (0, 1), (4, 1)) is None
    path = astar(costs, (0, 1), (4, 1), allow_unknown=True)
    assert path == [(x, 1) for x in range(5)]
    assert math.isinf(distance_field(costs, (0, 1))[1, 4])
    assert distance_field(costs, (0, 1), allow_unknown=True)[1, 4] == 4.0


def test_search_is_deterministic_and_compiled_matches_python():
    rng = np.random.default_rng(7)
    free = random_free(rng, 20, 20, 0.25)
    free[0, 0] = free[19, 19] = True
    first = astar(free, (0, 0), (19, 19))
    assert first == astar(free, (0, 0), (19, 19))
    penalty = np.zeros(free.shape)
    compiled = _search.search(free, penalty, 0, 0, 19, 19)
    python = _search.search.py_func(free, penalty, 0, 0, 19, 19)
    assert np.array_equal(compiled[0], python[0]) and np.array_equal(compiled[1], python[1])
    field_c = _search.search(free, penalty, 0, 0, -1, -1)[0]
    field_p = _search.search.py_func(free, penalty, 0, 0, -1, -1)[0]
    assert np.array_equal(field_c, field_p)


def _path_by_parents(parent: np.ndarray, t: int, w: int) -> list[tuple[int, int]]:
    """astar's path as it was read before walk_back: each parent looked up in turn."""
    path = []
    node = t
    while node >= 0:
        iy, ix = divmod(int(node), w)
        path.append((ix, iy))
        node = parent[node]
    path.reverse()
    return path


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    p_wall=st.floats(0.0, 0.45),
    allow_unknown=st.booleans(),
    cost_weight=st.sampled_from([0.0, 1.0, 2.5]),
)
def test_kept_preparation_and_walk_back_give_the_same_paths(
    seed, p_wall, allow_unknown, cost_weight
):
    # a read-only costmap's passable cells and penalties are kept (prepared), the path is read
    # back by a compiled walk: the same arrays, to the bit, and the same path as before
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(2, 12, size=2))
    costs = rng.choice(np.array([-1, 0, 0, 0, 10, 50, 98, 99, 100], dtype=np.int8), size=(h, w))
    costs[rng.random((h, w)) < p_wall] = 100
    fresh = planning._prepare(costs, allow_unknown, cost_weight)
    kept_costs = costs.copy()
    kept_costs.flags.writeable = False
    kept = planning.prepared(kept_costs, allow_unknown, cost_weight)
    assert planning.prepared(kept_costs, allow_unknown, cost_weight)[0] is kept[0]
    for a, b in zip(fresh, kept, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b) and not b.flags.writeable
    assert np.array_equal(traversable_mask(costs, allow_unknown), kept[0])
    passable = fresh[0]
    cells = np.argwhere(passable)
    if len(cells) < 2:
        return
    (sy, sx), (gy, gx) = cells[rng.choice(len(cells), 2, replace=False)]
    cost, parent = _search.search(passable, fresh[1], sx, sy, gx, gy)
    t = int(gy * w + gx)
    expected = _path_by_parents(parent, t, w) if math.isfinite(cost[t]) else None
    for grid in (costs, kept_costs):
        kw = {"allow_unknown": allow_unknown, "cost_weight": cost_weight}
        assert astar(grid, (sx, sy), (gx, gy), **kw) == expected


def test_distance_field_from_a_blocked_start_is_all_inf():
    free = np.ones((2, 2), dtype=bool)
    free[0, 0] = False
    assert np.isinf(distance_field(free, (0, 0))).all()


# -- nearest traversable cell -----------------------------------------------------------------


def test_nearest_traversable():
    free = np.zeros((5, 5), dtype=bool)
    free[4, 2] = free[0, 4] = True
    assert nearest_traversable(free, (2, 3)) == (2, 4)
    assert nearest_traversable(free, (4, 0)) == (4, 0)  # itself
    assert nearest_traversable(free, (9, -3)) == (4, 0)  # from outside the grid
    assert nearest_traversable(free, (0, 0), max_distance=2.0) is None
    free[2, 2] = free[2, 0] = True
    assert nearest_traversable(free, (1, 2)) == (0, 2)  # tie: lowest iy, then ix
    assert nearest_traversable(np.zeros((2, 2), dtype=bool), (0, 0)) is None


# -- line of sight and pruning ------------------------------------------------------------------


def test_line_of_sight_by_hand():
    free = grid_from([
        "....",
        ".#..",
        "....",
    ])  # fmt: skip
    assert line_of_sight(free, (0, 0), (3, 0))
    assert not line_of_sight(free, (0, 1), (3, 1))
    assert not line_of_sight(free, (0, 0), (2, 2))  # through the blocked cell's centre
    assert line_of_sight(free, (0, 0), (0, 2))


def test_line_of_sight_counts_corner_touches():
    free = grid_from([
        "...",
        "#..",
        "...",
    ])  # fmt: skip
    # (1.5, 0.5) -> (0.5, 2.5) is at x = 1.25 .. 0.75 in row 1: through blocked cell (0, 1)
    assert not line_of_sight(free, (1, 0), (0, 2))
    free = np.ones((2, 4), dtype=bool)
    free[1, 1] = False
    # (0.5, 0.5) -> (3.5, 1.5) passes exactly through (2, 1), a corner of blocked cell (1, 1)
    assert not line_of_sight(free, (0, 0), (3, 1))
    free = np.ones((2, 4), dtype=bool)
    free[1, 0] = False
    assert line_of_sight(free, (0, 0), (3, 1))  # cell (0, 1) is 0.33 cells above the segment


def test_line_of_sight_clearance():
    free = np.ones((3, 3), dtype=bool)
    free[1, 0] = False
    # segment (0.5, 0.5) -> (2.5, 1.5) passes 1 / (2 * sqrt 5) = 0.2236 from corner (1, 1)
    assert line_of_sight(free, (0, 0), (2, 1))
    assert line_of_sight(free, (0, 0), (2, 1), clearance=0.22)
    assert not line_of_sight(free, (0, 0), (2, 1), clearance=0.23)
    with pytest.raises(ValueError, match=r"clearance must be a number in \[0, 0.5\) cells"):
        line_of_sight(free, (0, 0), (2, 1), clearance=0.5)


@pytest.mark.parametrize("clearance", [0.0, 0.25, 0.49])
def test_segment_window_misses_no_cell(clearance):
    # segment_clear only tests cells near the segment; testing every blocked cell must agree.
    rng = np.random.default_rng(3)
    for _ in range(300):
        h, w = rng.integers(2, 12, size=2)
        free = random_free(rng, h, w, 0.3)
        (ax, bx), (ay, by) = rng.integers(0, w, size=2), rng.integers(0, h, size=2)
        a = (ax + 0.5, ay + 0.5)
        b = (bx + 0.5, by + 0.5)
        every = not any(
            _segment._touches(*a, *b, int(x), int(y), clearance)
            for y, x in zip(*np.nonzero(~free), strict=True)
        )
        assert _segment.segment_clear(free, *a, *b, clearance) == every
        assert _segment.segment_clear.py_func(free, *a, *b, clearance) == every


def test_prune_path_by_hand():
    free = grid_from([
        "......",
        ".####.",
        "......",
    ])  # fmt: skip
    path = astar(free, (0, 1), (5, 1))
    pruned = prune_path(path, free)
    assert pruned[0] == (0, 1) and pruned[-1] == (5, 1)
    assert len(pruned) == 4  # start, the two corners of the detour, goal
    open_grid = np.ones((4, 9), dtype=bool)
    assert prune_path(astar(open_grid, (0, 0), (8, 3)), open_grid) == [(0, 0), (8, 3)]
    assert prune_path([], free) == [] and prune_path([(1, 1)], free) == [(1, 1)]


def blocked_squares_hit(free: np.ndarray, a, b, clearance: float, samples_per_cell: int = 400):
    """Dense-sampling oracle: is a sample of a->b nearer than ``clearance`` to a blocked cell?"""
    pa = np.array(a, dtype=float) + 0.5
    pb = np.array(b, dtype=float) + 0.5
    n = max(2, int(np.hypot(*(pb - pa)) * samples_per_cell))
    pts = pa + np.linspace(0.0, 1.0, n)[:, None] * (pb - pa)
    ys, xs = np.nonzero(~free)
    for x, y in zip(xs, ys, strict=True):
        gap_x = np.maximum(np.maximum(x - pts[:, 0], pts[:, 0] - (x + 1)), 0.0)
        gap_y = np.maximum(np.maximum(y - pts[:, 1], pts[:, 1] - (y + 1)), 0.0)
        dist = np.hypot(gap_x, gap_y)
        # strictly inside (not on the boundary) when clearance is 0, else nearer than clearance
        inside = (
            dist < clearance
            if clearance > 0
            else (
                (pts[:, 0] > x + 1e-9)
                & (pts[:, 0] < x + 1 - 1e-9)
                & (pts[:, 1] > y + 1e-9)
                & (pts[:, 1] < y + 1 - 1e-9)
            )
        )
        if inside.any():
            return True
    return False


def _random_path(rng, size_below: int, p_wall: float):
    """A random grid (3 to ``size_below`` - 1 cells a side) and A*'s path between two of its
    free cells: ``(free, path)``, path None when there is none (or fewer than 2 free cells)."""
    h, w = (int(v) for v in rng.integers(3, size_below, size=2))
    free = random_free(rng, h, w, p_wall)
    cells = np.argwhere(free)
    if len(cells) < 2:
        return free, None
    (sy, sx), (gy, gx) = cells[rng.choice(len(cells), 2, replace=False)]
    return free, astar(free, (sx, sy), (gx, gy))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    p_wall=st.floats(0.0, 0.4),
    clearance=st.sampled_from([0.0, 0.3, 0.45]),
)
def test_pruned_path_never_crosses_blocked_cells(seed, p_wall, clearance):
    free, path = _random_path(np.random.default_rng(seed), 14, p_wall)
    if path is None:
        return
    pruned = prune_path(path, free, clearance)
    assert pruned[0] == path[0] and pruned[-1] == path[-1]
    positions = [path.index(c) for c in pruned]
    assert positions == sorted(positions)  # a subsequence of the path, in order
    assert path_length(pruned) <= path_length(path) + 1e-9
    for a, b in pairwise(pruned):
        adjacent = max(abs(a[0] - b[0]), abs(a[1] - b[1])) == 1
        # A* steps always clear a clearance < 0.5; every shortcut was checked.
        assert adjacent or not blocked_squares_hit(free, a, b, clearance)
        assert not blocked_squares_hit(free, a, b, 0.0)


def _pruned_in_python(path, free, clearance):
    """prune_path's former Python loop: the reference of the compiled string pulling."""
    cells = [tuple(int(v) for v in c) for c in path]
    if len(cells) <= 2:
        return cells
    out, anchor, i = [cells[0]], 0, 1
    while i < len(cells) - 1:
        if planning._clear(free, cells[anchor], cells[i + 1], clearance):
            i += 1
        else:
            out.append(cells[i])
            anchor, i = i, i + 1
    out.append(cells[-1])
    return out


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    p_wall=st.floats(0.0, 0.4),
    clearance=st.sampled_from([0.0, 0.2, 0.3, 0.45]),
)
def test_compiled_pruning_keeps_the_python_loop_s_waypoints(seed, p_wall, clearance):
    free, path = _random_path(np.random.default_rng(seed), 30, p_wall)
    if path is None:
        return
    want = _pruned_in_python(path, free, clearance)
    assert prune_path(path, free, clearance) == want
    # a path given otherwise (arrays, lists) is checked cell by cell: the same waypoints
    assert prune_path([list(c) for c in path], free, clearance) == want
    assert prune_path(np.array(path), free, clearance) == want


def test_prune_path_names_a_bad_cell():
    free = np.ones((3, 3), dtype=bool)
    with pytest.raises(ValueError, match=r"path\[1\] \(3, 0\) is outside the grid"):
        prune_path([(0, 0), (3, 0), (2, 2)], free)


def test_path_length():
    assert path_length([]) == 0.0 and path_length([(1, 1)]) == 0.0
    assert path_length([(0, 0), (1, 1), (1, 2)]) == pytest.approx(math.sqrt(2) + 1)


# -- plan_route: the navigator's planner in world coordinates ---------------------------------


def occupancy(rows: list[str]) -> np.ndarray:
    """Occupancy values from text, top row first ('#' wall 100, '?' unknown -1, '.' free 0)."""
    table = {".": 0, "#": 100, "?": -1}
    return np.array([[table[ch] for ch in row] for row in reversed(rows)], dtype=np.int8)


ROOMS = [
    "#########",
    "#...#...#",
    "#...#...#",
    "#.......#",
    "#########",
]  # fmt: skip


def test_plan_route_goes_around_walls_and_ends_at_the_goal():
    grid = GridMap.from_array(occupancy(ROOMS), 1.0, -4.5, -2.5)
    route = plan_route(grid, (-2.5, 1.0), (2.6, 1.2), robot_radius=0.3)
    assert route.cells[0] == grid.pos_to_cell(-2.5, 1.0)
    assert route.cells[-1] == grid.pos_to_cell(2.6, 1.2)
    assert route.waypoints[-1] == (2.6, 1.2)  # the exact goal, not its cell centre
    assert len(route.waypoints) >= 2  # must turn at the door in the bottom row
    assert route.length == pytest.approx(path_length([(-2.5, 1.0), *route.waypoints]))
    free = grid.free_mask()
    assert all(free[iy, ix] for ix, iy in route.cells)


def test_plan_route_snaps_a_goal_in_a_wall_and_rejects_far_ones():
    grid = GridMap.from_array(occupancy(ROOMS), 1.0, -4.5, -2.5)
    route = plan_route(grid, (-2.5, 1.0), (0.0, 1.0), robot_radius=0.3)  # inside the middle wall
    assert route is not None and route.cells[-1] in {(3, 3), (5, 3), (3, 4), (5, 4)}
    assert route.waypoints[-1] == grid.cell_to_pos(*route.cells[-1])
    thick = occupancy(["#######", "#.#####", "#######"])
    g2 = GridMap.from_array(thick, 1.0)
    assert plan_route(g2, (1.5, 1.5), (5.5, 1.5), robot_radius=0.3) is None


def test_plan_route_unreachable_and_unknown():
    rows = [
        "#######",
        "#..#..#",
        "#..?..#",
        "#######",
    ]  # fmt: skip
    grid = GridMap.from_array(occupancy(rows), 1.0)
    start, goal = grid.cell_to_pos(1, 1), grid.cell_to_pos(5, 1)
    assert plan_route(grid, start, goal, 0.3, allow_unknown=False) is None
    route = plan_route(grid, start, goal, 0.3)  # through the unknown gap, as Nav2 by default
    assert (3, 1) in route.cells


def test_plan_route_inflates_for_a_large_robot():
    # 0.05 m cells: a 0.3 m robot does not fit a 0.4 m gap but fits a 0.8 m one.
    walls = np.zeros((40, 40), dtype=np.int8)
    walls[:, 20] = 100
    walls[18:26, 20] = 0  # 0.4 m door
    grid = GridMap.from_array(walls, 0.05)
    start, goal = (0.5, 1.0), (1.5, 1.0)
    assert plan_route(grid, start, goal, robot_radius=0.3) is None
    walls[14:30, 20] = 0  # 0.8 m door
    grid = GridMap.from_array(walls, 0.05)
    route = plan_route(grid, start, goal, robot_radius=0.3)
    costs = costmap_from_occupancy(walls, 0.3 / 0.05)
    assert all(costs[iy, ix] < 99 for ix, iy in route.cells)
    same = plan_route(grid, start, goal, robot_radius=0.3, costs=costs)
    assert same == route


def test_plan_route_bad_input():
    grid = GridMap.from_array(occupancy(ROOMS), 1.0)
    with pytest.raises(TypeError, match="grid must be a GridMap"):
        plan_route(occupancy(ROOMS), (1, 1), (2, 1), 0.3)
    with pytest.raises(ValueError, match="costs must have the grid's shape"):
        plan_route(grid, (1.5, 1.5), (2.5, 1.5), 0.3, costs=np.zeros((2, 2), dtype=np.int8))
    with pytest.raises(ValueError, match="start and goal must be finite"):
        plan_route(grid, (math.nan, 1.5), (2.5, 1.5), 0.3)
    with pytest.raises(ValueError, match="robot_radius must be a finite number >= 0, got -0.1"):
        plan_route(grid, (1.5, 1.5), (2.5, 1.5), -0.1)


@pytest.mark.parametrize("module", [planning, inflation, global_planner])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(-1e4, 1e4, allow_nan=False), st.floats(-1e4, 1e4, allow_nan=False)),
        max_size=200,
    )
)
def test_path_length_is_the_sum_of_its_diff_segments_to_the_bit(points):
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    expected = float(np.hypot(*np.diff(pts, axis=0).T).sum()) if len(pts) >= 2 else 0.0
    assert path_length(points) == expected


def _nearest_by_scanning_every_cell(t, cell, max_distance):
    """nearest_traversable as it was: every traversable cell of the grid measured."""
    ix, iy = cell
    h, w = t.shape
    if 0 <= ix < w and 0 <= iy < h and t[iy, ix]:
        return ix, iy
    ys, xs = np.nonzero(t)
    if xs.size == 0:
        return None
    d2 = (xs - ix) ** 2 + (ys - iy) ** 2
    k = int(np.argmin(d2))
    return None if d2[k] > max_distance * max_distance else (int(xs[k]), int(ys[k]))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 12),
    st.integers(1, 12),
    st.integers(0, 2**32 - 1),
    st.integers(-5, 16),
    st.integers(-5, 16),
    st.one_of(st.floats(-8.0, 8.0), st.just(math.inf), st.just(0.0), st.integers(0, 6)),
)
def test_nearest_traversable_looks_only_within_max_distance_same_cell(h, w, seed, ix, iy, limit):
    # the search window of a finite max_distance finds the cell (and tie) the whole grid does
    t = np.random.default_rng(seed).random((h, w)) < 0.15
    got = nearest_traversable(t, (ix, iy), max_distance=limit)
    assert got == _nearest_by_scanning_every_cell(t, (ix, iy), limit)
