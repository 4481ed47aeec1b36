"""Tests for maes_sim.core.world.connectivity (4-connected labelling, reachability, BFS steps)."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from maes_sim.core.world import (
    MapError,
    label_regions,
    largest_open_region,
    open_regions,
    path_steps,
    reachable_open,
)


def draw(rows: list[str]) -> np.ndarray:
    """Walls from a picture: '#' wall, '.' open; the first string is the TOP row."""
    return np.array([[c == "#" for c in row] for row in rows[::-1]], dtype=bool)


def reference_labels(mask: np.ndarray) -> np.ndarray:
    """Plain-Python BFS labelling, numbered in raster order of first tiles."""
    h, w = mask.shape
    labels = np.full((h, w), -1)
    count = 0
    for y in range(h):
        for x in range(w):
            if mask[y, x] and labels[y, x] < 0:
                labels[y, x] = count
                queue = deque([(x, y)])
                while queue:
                    cx, cy = queue.popleft()
                    for nx, ny in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)):
                        if 0 <= nx < w and 0 <= ny < h and mask[ny, nx] and labels[ny, nx] < 0:
                            labels[ny, nx] = count
                            queue.append((nx, ny))
                count += 1
    return labels


def test_diagonal_contact_does_not_connect() -> None:
    walls = draw(
        [
            ".#",
            "#.",
        ]
    )
    labels, sizes = label_regions(~walls)
    assert sizes.tolist() == [1, 1]
    assert labels[0, 1] != labels[1, 0]


def test_labels_in_raster_order_with_sizes() -> None:
    walls = draw(
        [
            "..#...",
            "..#.#.",
            "###.#.",
        ]
    )
    labels, sizes = label_regions(~walls)
    # Row 0 (bottom) holds the first tile of the U-shaped region, so it is region 0.
    assert labels[0, 3] == 0
    assert sizes.tolist() == [7, 4]
    assert labels[2, 0] == labels[1, 1] == 1
    assert labels[0, 0] == -1


@settings(max_examples=60, deadline=None)
@given(arrays(np.bool_, st.tuples(st.integers(1, 12), st.integers(1, 12))))
def test_labels_match_plain_bfs(mask: np.ndarray) -> None:
    labels, sizes = label_regions(mask)
    expected = reference_labels(mask)
    np.testing.assert_array_equal(labels, expected)
    assert sizes.tolist() == [int((expected == k).sum()) for k in range(sizes.size)]


def test_largest_region_and_tie_break() -> None:
    walls = draw(["..#..#..."])
    largest = largest_open_region(walls)
    assert largest[0].tolist() == [False] * 6 + [True] * 3
    tie = draw(["..#.."])
    assert largest_open_region(tie)[0].tolist() == [True, True, False, False, False]
    assert not largest_open_region(np.ones((2, 2), dtype=bool)).any()


def test_open_regions_largest_first() -> None:
    walls = draw(["#.#...#.."])
    regions = open_regions(walls)
    assert [int(m.sum()) for m in regions] == [3, 2, 1]
    assert not np.logical_and(regions[0], regions[1]).any()


def test_reachable_open_from_starts() -> None:
    walls = draw(
        [
            "...#..",
            ".#.#..",
            ".#....",
            "######",
            "..#...",
        ]
    )
    reach = reachable_open(walls, np.array([[0, 4]]))  # top-left tile
    assert reach[4, 0] and reach[2, 5] and reach[2, 3]
    assert not reach[0, 0] and not reach[0, 4]
    both = reachable_open(walls, np.array([[0, 4], [4, 0]]))
    assert both[0, 4] and both[0, 5] and not both[0, 0]
    # A start on a wall or off the map reaches nothing.
    assert not reachable_open(walls, np.array([1, 3])).any()
    assert not reachable_open(walls, np.array([[-1, 0], [6, 0]])).any()


def test_path_steps_follow_corridors() -> None:
    walls = draw(
        [
            "...",
            "##.",
            "...",
        ]
    )
    steps = path_steps(~walls, np.array([0, 0]))
    assert steps[0, 0] == 0
    assert steps[2, 0] == 6  # around the wall, not the 2 steps straight up
    assert steps[1, 0] == -1


def test_bad_shapes_raise_map_error() -> None:
    with pytest.raises(MapError, match="2-D"):
        label_regions(np.zeros((2, 2, 2), dtype=bool))
    with pytest.raises(MapError, match=r"\(K, 2\)"):
        reachable_open(np.zeros((2, 2), dtype=bool), np.array([1, 2, 3]))
    with pytest.raises(MapError, match="integer"):
        reachable_open(np.zeros((2, 2), dtype=bool), np.array([[0.5, 1.0]]))
