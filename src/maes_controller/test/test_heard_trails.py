"""The one store of trail points heard (``maes_controller.algorithms._common``: hear_trail,
trail_points, trail_cells), shared by the frontier explorer and TRS: the same points in the
same order as the dict both kept before (an ordered set: a point heard again keeps its first
place, the oldest forgotten past TRAIL_LIMIT), whenever its points are asked for."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import maes_controller.algorithms._common as common
from maes_controller.algorithms._common import (
    TRAIL_PREFIX,
    MapView,
    cells_of,
    hear_trail,
    trail_cells,
    trail_points,
    without_trails,
)
from maes_controller.navigation import GridMap

GRID = GridMap(40, 40, 0.5, -10.0, -10.0)


def _heard_as_before(trails: dict, point: tuple, limit: int) -> None:
    """The dict both algorithms kept before the store was shared (TRS's ``hear_trail``)."""
    trails[point] = None  # (a key already there keeps its place)
    if len(trails) > limit:
        del trails[next(iter(trails))]


def _check_against(memory: dict, expected: dict, heard: int) -> None:
    points = list(expected)
    assert list(memory.get("trails", {})) == points
    assert trail_points(memory).tolist() == [list(p) for p in points]
    cells = trail_cells(memory, GRID)
    assert cells.dtype == np.int64 and cells.shape == (len(points), 2)
    assert list(map(tuple, cells.tolist())) == cells_of(GRID, points)
    assert memory.get("trails_heard", 0) == heard


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(1, 6),
    heard=st.lists(
        st.tuples(st.integers(-30, 30), st.integers(-30, 30), st.booleans()), max_size=60
    ),
)
def test_the_store_keeps_the_points_of_the_dict_in_its_order(limit, heard):
    """Random trails heard, with repeats, well past a small limit; the points asked for after
    any of them (the ring made on first asking, then kept in step)."""
    memory, expected = {}, {}
    with mock.patch.object(common, "TRAIL_LIMIT", limit):
        for count, (x10, y10, ask) in enumerate(heard, start=1):
            point = (x10 / 10, y10 / 10)
            assert hear_trail(memory, f"{TRAIL_PREFIX} {point[0]:.1f} {point[1]:.1f}")
            _heard_as_before(expected, point, limit)
            if ask:
                _check_against(memory, expected, count)
        _check_against(memory, expected, len(heard))


def test_the_store_keeps_the_last_trail_limit_points_of_many_heard():
    """At the real TRAIL_LIMIT: 6000 trails from 3000 places (repeats, and the ring wrapping
    round several times), asked for every 7th."""
    rng = np.random.default_rng(3)
    memory, expected = {}, {}
    for count in range(1, 6001):
        x10, y10 = rng.integers(-60, 60), rng.integers(-25, 25)
        point = (float(x10) / 10, float(y10) / 10)
        assert hear_trail(memory, f"{TRAIL_PREFIX} {point[0]:.1f} {point[1]:.1f}")
        _heard_as_before(expected, point, common.TRAIL_LIMIT)
        if count % 7 == 0:
            _check_against(memory, expected, count)
    assert len(memory["trails"]) == common.TRAIL_LIMIT
    _check_against(memory, expected, 6000)


def test_other_messages_are_not_trails():
    memory = {}
    for text in ["frontier-goal 1 2 3", f"{TRAIL_PREFIX} 1.0", f"{TRAIL_PREFIX} 1 nan", ""]:
        assert not hear_trail(memory, text)
    assert memory == {}
    assert trail_points(memory).shape == (0, 2) and trail_cells(memory, GRID).shape == (0, 2)


def test_trails_changed_behind_the_store_s_back_are_read_anew():
    """``memory["trails"]`` written directly (another length than the ring's): the ring is
    made again from it, and the cells follow once a trail is heard."""
    memory = {}
    for x in range(5):
        hear_trail(memory, f"{TRAIL_PREFIX} {x}.0 1.0")
    assert trail_points(memory)[:, 0].tolist() == [0, 1, 2, 3, 4]
    del memory["trails"][(0.0, 1.0)]
    memory["trails"][(9.0, 9.0)] = None
    memory["trails"][(8.0, 8.0)] = None
    assert trail_points(memory).tolist() == [list(p) for p in memory["trails"]]
    hear_trail(memory, f"{TRAIL_PREFIX} 7.0 7.0")
    _check_against(memory, memory["trails"], 6)


def test_the_cells_follow_the_map_s_origin_and_resolution():
    memory = {}
    hear_trail(memory, f"{TRAIL_PREFIX} 1.3 -2.6")
    for grid in [GRID, GridMap(40, 40, 0.5, -9.7, -10.0), GridMap(40, 40, 0.25, -9.7, -10.0)]:
        cells = trail_cells(memory, grid)
        assert list(map(tuple, cells.tolist())) == [grid.pos_to_cell(1.3, -2.6)]
        assert not cells.flags.writeable


def test_without_trails_leaves_allowed_alone_when_no_trail_was_heard():
    grid = GridMap.from_array(np.array([[0, 0, -1], [0, 0, 0]], dtype=np.int8), 1.0)
    view = MapView(grid, (0.5, 0.5))
    allowed = np.ones(view.array.shape, dtype=bool)
    assert without_trails(view, allowed, trail_cells({}, grid), 1.0) is allowed
