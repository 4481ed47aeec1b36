"""SPACE CBBA's unvisited ground (space_cbba.unvisited_gaps): the compiled search gives the
floats the plain NumPy pass over every cell gave, to the bit (no ROS)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_controller.algorithms._common import AREA_ROW, MapView, area_labels
from maes_controller.algorithms.space_bt import AREA_SIDE_M
from maes_controller.algorithms.space_cbba import NEAR_DONE_MAX, unvisited_gaps
from maes_controller.navigation.costmap import GridMap


def unvisited_gaps_by_every_cell(view, done, points):
    """unvisited_gaps as it was before it was compiled (code 865b1e4): every area judged in
    Python, ``np.hypot`` over every unvisited cell for every point. The reference."""
    unvisited = view.array < 0
    done = set(done)
    if done:
        labels = area_labels(view, AREA_SIDE_M)
        rows, row_of = np.unique(labels[:, 0] // AREA_ROW, return_inverse=True)
        cols, col_of = np.unique(labels[0, :] % AREA_ROW, return_inverse=True)
        ok = np.empty((rows.size, cols.size), dtype=bool)
        around = [dy * AREA_ROW + dx for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx]
        for i, row in enumerate(rows.tolist()):
            for j, col in enumerate(cols.tolist()):
                area = row * AREA_ROW + col
                near = sum(area + d in done for d in around)
                ok[i, j] = area not in done and near <= NEAR_DONE_MAX
        unvisited &= ok[row_of.reshape(-1, 1), col_of.reshape(1, -1)]
    cells = np.argwhere(unvisited)[:, ::-1]
    if cells.shape[0] == 0:
        return None
    xs = view.grid.origin_x + (cells[:, 0] + 0.5) * view.resolution
    ys = view.grid.origin_y + (cells[:, 1] + 0.5) * view.resolution
    return [float(np.hypot(xs - px, ys - py).min()) for px, py in points]


def same_bits(got, want) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return (
        all(type(v) is float for v in got)
        and len(got) == len(want)
        and np.array_equal(
            np.array(got, dtype=np.float64).view(np.uint64),
            np.array(want, dtype=np.float64).view(np.uint64),
        )
    )


def random_case(rng):
    """A map view, finished areas and points: unknown shares from none to all, areas finished
    round the grid (and ids no grid has), points inside and around the grid, on cell centres,
    corners and edges (many cells at the same distance), far away, huge and not finite."""
    h, w = (int(v) for v in rng.integers(1, 41, size=2))
    unknown = rng.choice([0.0, 0.05, 0.5, 0.95, 1.0])
    array = np.where(rng.random((h, w)) < unknown, -1, rng.choice([0, 100], size=(h, w)))
    res = float(rng.choice([0.05, 0.25, 0.5, 1.0, 2.0, rng.uniform(0.01, 3.0)]))
    ox, oy = (float(rng.choice([0.0, -w * res / 2, rng.uniform(-60, 60)])) for _ in range(2))
    grid = GridMap.from_array(array.astype(np.int8), res, origin_x=ox, origin_y=oy)
    view = MapView(grid, (ox + res / 2, oy + res / 2))
    areas = np.unique(area_labels(view, AREA_SIDE_M))
    near = np.unique((areas[:, None] + [0, 1, -1, AREA_ROW, -AREA_ROW]).ravel())
    done = set(rng.choice(near, size=int(rng.integers(0, near.size + 1))).tolist())
    if rng.random() < 0.2:
        done |= {int(near.max()) + 10 * AREA_ROW, 2**70, -(2**70)}
    points = []
    for _ in range(int(rng.integers(0, 9))):
        kind = int(rng.integers(0, 6))
        if kind == 0:  # anywhere in and round the grid
            x = ox + rng.uniform(-0.5, 1.5) * w * res
            y = oy + rng.uniform(-0.5, 1.5) * h * res
        elif kind in (1, 2):  # a centre, corner or edge of a cell (in the grid or beyond)
            x = ox + int(rng.integers(-4, 2 * w + 5)) / 2 * res
            y = oy + int(rng.integers(-4, 2 * h + 5)) / 2 * res
        elif kind == 3:  # far away
            x, y = rng.choice([-1.0, 1.0], size=2) * 10.0 ** rng.uniform(2, 8, size=2)
        elif kind == 4:  # too far for a float's square, or no number
            x = float(rng.choice([1e200, -1e300, np.inf, -np.inf, np.nan, ox]))
            y = float(rng.choice([oy, 1e180, np.nan, np.inf]))
        else:  # a whole-metre task position, as ints
            x, y = int(rng.integers(-80, 80)), int(rng.integers(-80, 80))
        points.append((x, y) if kind == 5 else (float(x), float(y)))
    return view, done, points


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_unvisited_gaps_are_the_every_cell_floats_to_the_bit(seed):
    view, done, points = random_case(np.random.default_rng(seed))
    want = unvisited_gaps_by_every_cell(view, done, points)
    assert same_bits(unvisited_gaps(view, done, points), want)
    assert same_bits(
        unvisited_gaps(view, set(), points), unvisited_gaps_by_every_cell(view, set(), points)
    )


def test_empty_cases():
    known = GridMap.from_array(np.zeros((3, 4), dtype=np.int8), 1.0)
    view = MapView(known, (0.5, 0.5))
    assert unvisited_gaps(view, set(), [(0.5, 0.5)]) is None  # nothing unknown
    assert unvisited_gaps(view, set(), []) is None
    open_ground = MapView(GridMap.from_array(-np.ones((3, 4), dtype=np.int8), 1.0), (0.5, 0.5))
    assert unvisited_gaps(open_ground, set(), []) == []  # no points
    finished = set(np.unique(area_labels(open_ground, AREA_SIDE_M)).tolist())
    assert unvisited_gaps(open_ground, finished, [(0.5, 0.5)]) is None  # all finished


def test_a_point_among_many_cells_at_the_same_distance():
    # a ring of unknown cells round a known square: every cell of the ring's inner edge is
    # about as far from the centre as the next
    array = np.full((21, 21), -1, dtype=np.int8)
    array[3:18, 3:18] = 0
    view = MapView(GridMap.from_array(array, 0.1, origin_x=-1.05, origin_y=-1.05), (0.0, 0.0))
    points = [(0.0, 0.0), (0.05, 0.05), (-0.05, 0.0), (0.3, -0.3), (1e-9, -1e-9)]
    assert same_bits(
        unvisited_gaps(view, set(), points), unvisited_gaps_by_every_cell(view, set(), points)
    )
