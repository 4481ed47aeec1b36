"""The trail points heard (``maes_controller.algorithms._common``: hear_trail, trail_points,
trail_cells), shared by the frontier explorer and TRS: the broadcasts they are read from, kept in
the shared store of points (``memory["trails"]``, the last TRAIL_LIMIT; the store itself is
tested in test_remembered_points.py), and the frontier cells they leave for later."""

from __future__ import annotations

import numpy as np

from maes_controller.algorithms._common import (
    TRAIL_LIMIT,
    TRAIL_PREFIX,
    MapView,
    cells_of,
    hear_trail,
    remembered_cells,
    remembered_points,
    trail_cells,
    trail_points,
    without_trails,
)
from maes_controller.navigation import GridMap

GRID = GridMap(40, 40, 0.5, -10.0, -10.0)


def test_trails_heard_are_the_last_trail_limit_points_in_the_trails_store():
    """TRAIL_LIMIT + 5 distinct trails and a repeat: the first five are forgotten, the repeat
    keeps its place."""
    memory = {}
    points = [(float(i % 100) / 10, float(i // 100) / 10) for i in range(TRAIL_LIMIT + 5)]
    for count, point in enumerate(points):
        assert hear_trail(memory, f"{TRAIL_PREFIX} {point[0]:.1f} {point[1]:.1f}")
        if count == 10:
            assert hear_trail(memory, f"{TRAIL_PREFIX} {points[7][0]:.1f} {points[7][1]:.1f}")
    assert list(memory["trails"]["order"]) == points[5:]
    assert trail_points(memory).tolist() == [list(p) for p in points[5:]]
    assert np.array_equal(trail_points(memory), remembered_points(memory, "trails"))
    cells = trail_cells(memory, GRID)
    assert list(map(tuple, cells.tolist())) == cells_of(GRID, points[5:])
    assert np.array_equal(cells, remembered_cells(memory, "trails", GRID))


def test_a_trail_s_point_is_read_from_its_text():
    memory = {}
    assert hear_trail(memory, f"{TRAIL_PREFIX} 1.3 -2.6")
    assert hear_trail(memory, f"{TRAIL_PREFIX} -0.0 7")
    assert trail_points(memory).tolist() == [[1.3, -2.6], [0.0, 7.0]]


def test_other_messages_are_not_trails():
    memory = {}
    for text in ["frontier-goal 1 2 3", f"{TRAIL_PREFIX} 1.0", f"{TRAIL_PREFIX} 1 nan", ""]:
        assert not hear_trail(memory, text)
    assert memory == {}
    assert trail_points(memory).shape == (0, 2) and trail_cells(memory, GRID).shape == (0, 2)


def test_without_trails_leaves_allowed_alone_when_no_trail_was_heard():
    grid = GridMap.from_array(np.array([[0, 0, -1], [0, 0, 0]], dtype=np.int8), 1.0)
    view = MapView(grid, (0.5, 0.5))
    allowed = np.ones(view.array.shape, dtype=bool)
    assert without_trails(view, allowed, trail_cells({}, grid), 1.0) is allowed
