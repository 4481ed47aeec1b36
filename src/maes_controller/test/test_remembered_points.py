"""The one store of "the last N points heard and their cells"
(``maes_controller.algorithms._common``: remember_point, remembered_points, remembered_cells),
shared by the trails heard (the frontier explorer's and TRS's) and the frontier explorer's goals
announced by others ("visited").

It keeps what a dict used as an ordered set kept (a point heard again keeps its first place, the
oldest forgotten past the limit), as rows of a ring, and the cells of those rows for the map's
origin and resolution, computed for the new rows only.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_controller.algorithms._common import (
    cells_of,
    remember_point,
    remembered_cells,
    remembered_points,
)
from maes_controller.navigation import GridMap

GRIDS = [
    GridMap(40, 40, 0.5, -10.0, -10.0),
    GridMap(40, 40, 0.5, -9.7, -10.0),
    GridMap(40, 40, 0.25, -9.7, -10.0),
]


def _as_before(points: dict, point: tuple, limit: int) -> None:
    """The ordered set the trails and the visited goals each kept before they shared a store."""
    if point in points:
        return  # (a point heard again keeps its place)
    points[point] = None
    if len(points) > limit:
        del points[next(iter(points))]


def _check(memory: dict, expected: dict, grid: GridMap) -> None:
    points = list(expected)
    assert list(memory["seen"]["order"]) == points
    assert remembered_points(memory, "seen").tolist() == [list(p) for p in points]
    cells = remembered_cells(memory, "seen", grid)
    assert cells.dtype == np.int64 and cells.shape == (len(points), 2)
    assert list(map(tuple, cells.tolist())) == cells_of(grid, points)
    assert not cells.flags.writeable


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(1, 6),
    heard=st.lists(
        st.tuples(st.integers(-30, 30), st.integers(-30, 30), st.booleans(), st.integers(0, 2)),
        min_size=1,
        max_size=60,
    ),
)
def test_the_store_keeps_the_last_points_and_their_cells(limit, heard):
    """Random points, with repeats, well past a small limit; the points and cells asked for
    after any of them, on maps whose origin or resolution changes now and then."""
    memory, expected = {}, {}
    for x10, y10, ask, grid in heard:
        point = (x10 / 10, y10 / 10)
        remember_point(memory, "seen", point, limit)
        _as_before(expected, point, limit)
        if ask:
            _check(memory, expected, GRIDS[grid])
    _check(memory, expected, GRIDS[heard[-1][3]])
    assert len(memory["seen"]["order"]) == min(limit, len({(x, y) for x, y, *_ in heard}))


def test_the_oldest_point_is_forgotten_past_the_limit_and_its_cell_with_it():
    memory, grid = {}, GRIDS[0]
    for x in range(3):
        remember_point(memory, "seen", (float(x), 0.0), 3)
    assert remembered_cells(memory, "seen", grid).tolist() == [[20, 20], [22, 20], [24, 20]]
    remember_point(memory, "seen", (0.0, 0.0), 3)  # heard again: keeps its (first) place
    remember_point(memory, "seen", (5.0, 1.0), 3)  # a fourth: (0, 0) is the oldest, forgotten
    assert remembered_points(memory, "seen").tolist() == [[1.0, 0.0], [2.0, 0.0], [5.0, 1.0]]
    assert remembered_cells(memory, "seen", grid).tolist() == [[22, 20], [24, 20], [30, 22]]
    remember_point(memory, "seen", (0.0, 0.0), 3)  # forgotten, so new again: the newest
    assert remembered_points(memory, "seen").tolist() == [[2.0, 0.0], [5.0, 1.0], [0.0, 0.0]]
    assert remembered_cells(memory, "seen", grid).tolist() == [[24, 20], [30, 22], [20, 20]]


class _CountingGrid(GridMap):
    """A map that counts the points whose cells it computes."""

    converted = 0

    def pos_to_cells(self, positions):
        self.converted += len(positions)
        return super().pos_to_cells(positions)


def test_the_cells_are_computed_for_new_points_only_until_the_map_moves():
    memory = {}
    grid = _CountingGrid(40, 40, 0.5, -10.0, -10.0)
    rng = np.random.default_rng(5)
    points = [tuple(p) for p in np.round(rng.uniform(-9, 9, (700, 2)), 1).tolist()]
    for point in points[:500]:
        remember_point(memory, "seen", point, 400)
    remembered_cells(memory, "seen", grid)
    assert grid.converted == 400  # (the 100 forgotten before any cell was asked for: not)
    for point in points[500:503]:
        remember_point(memory, "seen", point, 400)
    cells = remembered_cells(memory, "seen", grid)
    assert grid.converted == 403  # the three new points only
    remembered_cells(memory, "seen", grid)
    assert grid.converted == 403  # nothing heard since: nothing computed
    assert list(map(tuple, cells.tolist())) == cells_of(grid, memory["seen"]["order"])
    moved = _CountingGrid(40, 40, 0.5, -10.0, -9.9)
    cells = remembered_cells(memory, "seen", moved)
    assert moved.converted == 400  # another origin: every cell anew
    assert list(map(tuple, cells.tolist())) == cells_of(moved, memory["seen"]["order"])


def test_many_stores_in_one_memory_and_none_yet():
    memory = {}
    assert remembered_points(memory, "a").shape == (0, 2)
    assert remembered_cells(memory, "a", GRIDS[0]).shape == (0, 2)
    remember_point(memory, "a", (1.0, 1.0), 2)
    remember_point(memory, "b", (2.0, 2.0), 2)
    assert remembered_points(memory, "a").tolist() == [[1.0, 1.0]]
    assert remembered_points(memory, "b").tolist() == [[2.0, 2.0]]


def test_the_store_is_plain_data_a_checkpoint_resumes_it():
    """A run's checkpoint pickles the robots' memory: a copied or unpickled store goes on
    exactly as the original does."""
    rng = np.random.default_rng(11)
    memory, grid = {}, GRIDS[2]
    for point in np.round(rng.uniform(-9, 9, (40, 2)), 1).tolist():
        remember_point(memory, "seen", tuple(point), 16)
    remembered_cells(memory, "seen", grid)
    copies = [copy.deepcopy(memory), pickle.loads(pickle.dumps(memory))]
    for point in np.round(rng.uniform(-9, 9, (10, 2)), 1).tolist():
        for m in [memory, *copies]:
            remember_point(m, "seen", tuple(point), 16)
    for m in copies:
        assert list(m["seen"]["order"]) == list(memory["seen"]["order"])
        assert np.array_equal(remembered_points(m, "seen"), remembered_points(memory, "seen"))
        assert np.array_equal(
            remembered_cells(m, "seen", grid), remembered_cells(memory, "seen", grid)
        )
