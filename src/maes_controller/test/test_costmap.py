"""GridMap (costmap.py) and MAES 2.0's MaesCostmap (maes_compat.py), without ROS."""

from __future__ import annotations

import doctest
import math
import os
import subprocess
import sys
from array import array
from types import SimpleNamespace as NS

import numpy as np
import pytest

from maes_controller import maes_compat
from maes_controller.maes_compat import Coord2D, MaesCostmap
from maes_controller.navigation import costmap
from maes_controller.navigation.costmap import GridMap


def msg_like(width, height, resolution, ox, oy, data):
    """A hand-built OccupancyGrid look-alike (only the attributes a message has)."""
    origin = NS(position=NS(x=ox, y=oy, z=0.0), orientation=NS(x=0.0, y=0.0, z=0.0, w=1.0))
    info = NS(width=width, height=height, resolution=resolution, origin=origin)
    return NS(header=NS(frame_id="map"), info=info, data=data)


@pytest.fixture
def grid():
    # 4 x 3 cells of 0.5 m, origin at (-1, -0.75): the map is centred on (0, 0).
    data = [0, 0, 100, -1,
            0, 64, 65, -1,
            -1, 0, 0, 0]  # fmt: skip
    return GridMap(4, 3, 0.5, -1.0, -0.75, data)


def test_array_is_row_major_from_the_origin(grid):
    assert grid.shape == (3, 4)
    assert grid.array[0].tolist() == [0, 0, 100, -1]  # row iy = 0 is the first in data
    assert grid.array[2, 0] == -1
    assert grid.value(2, 0) == 100 and grid.value(0, 2) == -1
    assert grid.data.dtype == np.int8 and grid.data.shape == (12,)


def test_index_cell_position_round_trip(grid):
    for index in range(12):
        ix, iy = grid.index_to_cell(index)
        assert grid.cell_to_index(ix, iy) == index
        x, y = grid.index_to_pos(index)
        assert grid.pos_to_cell(x, y) == (ix, iy)
        assert grid.pos_to_index(x, y) == index


def test_positions_are_cell_centres(grid):
    assert grid.cell_to_pos(0, 0) == (-0.75, -0.5)
    assert grid.cell_to_pos(3, 2) == (0.75, 0.5)
    cells = np.array([[0, 0], [3, 2], [1, 1]])
    assert np.allclose(grid.cells_to_pos(cells), [grid.cell_to_pos(*c) for c in cells])
    assert grid.pos_to_cells(grid.cells_to_pos(cells)).tolist() == cells.tolist()


def test_world_to_cell_floors_below_and_left_of_origin(grid):
    # Truncation towards zero (MAES 2.0) would give 0 for both; the point is outside the grid.
    assert grid.pos_to_cell(-1.01, -0.76) == (-1, -1)
    assert not grid.in_bounds(*grid.pos_to_cell(-1.01, 0.0))
    assert grid.pos_to_cell(-1.0, -0.75) == (0, 0)  # the origin corner belongs to cell (0, 0)
    assert grid.pos_to_cell(-0.5, -0.25) == (1, 1)  # a shared corner belongs to the upper cell
    with pytest.raises(IndexError, match=r"\(-1, 0\)"):
        grid.pos_to_index(-1.2, -0.5)


def test_cell_states_partition_every_value():
    values = list(range(-1, 101))
    g = GridMap(len(values), 1, 1.0, data=values)
    for ix, v in enumerate(values):
        states = (g.is_unknown(ix, 0), g.is_free(ix, 0), g.is_occupied(ix, 0))
        assert sum(states) == 1
        assert states[0] == (v == -1)
        assert states[2] == (v >= 65)
    assert (g.unknown_mask() | g.free_mask() | g.occupied_mask()).all()
    assert not (g.free_mask() & g.occupied_mask()).any()


def test_custom_occupied_threshold():
    g = GridMap(2, 1, 1.0, data=[49, 50], occupied_threshold=50)
    assert g.is_free(0, 0) and g.is_occupied(1, 0)


def test_neighbours_order_and_bounds(grid):
    assert grid.neighbours(1, 1, connectivity=4) == [(2, 1), (1, 2), (0, 1), (1, 0)]
    assert grid.neighbours(1, 1) == [
        (2, 1), (1, 2), (0, 1), (1, 0), (2, 2), (0, 2), (0, 0), (2, 0),
    ]  # fmt: skip
    assert grid.neighbours(3, 0) == [(3, 1), (2, 0), (2, 1)]  # corner: 3 of 8
    assert sorted(grid.iter_cells()) == sorted((ix, iy) for ix in range(4) for iy in range(3))


def test_grid_is_immutable_and_copies_its_input():
    data = [0, 0, 0, 0]
    g = GridMap(2, 2, 1.0, data=data)
    data[0] = 100
    assert g.value(0, 0) == 0
    with pytest.raises(ValueError):
        g.array[0, 0] = 100


def test_default_data_is_unknown():
    assert GridMap(3, 2, 1.0).unknown_mask().all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"width": 0}, "width must be a positive integer, got 0"),
        ({"height": 2.5}, "height must be a positive integer, got 2.5"),
        ({"resolution": 0.0}, "resolution must be a finite number > 0, got 0.0"),
        ({"resolution": math.nan}, "resolution"),
        ({"origin_x": math.inf}, "origin_x must be a finite number"),
        ({"data": [0, 0, 0]}, r"width \* height = 2 \* 2 = 4 values, got shape \(3,\)"),
        ({"data": [0, 0, 101, 0]}, r"data\[2\] = 101"),
        ({"data": [0, -2, 0, 0]}, r"data\[1\] = -2"),
        ({"occupied_threshold": 0}, "occupied_threshold must be an int in 1..100, got 0"),
    ],
)
def test_bad_fields_raise_naming_the_value(kwargs, match):
    fields = {"width": 2, "height": 2, "resolution": 1.0, "data": [0, 0, 0, 0]}
    fields.update(kwargs)
    with pytest.raises(ValueError, match=match):
        GridMap(**fields)


def test_bad_queries_raise(grid):
    with pytest.raises(IndexError, match="index 12"):
        grid.index_to_cell(12)
    with pytest.raises(IndexError, match=r"cell \(4, 0\)"):
        grid.is_free(4, 0)
    with pytest.raises(ValueError, match="connectivity must be 4 or 8, got 6"):
        grid.neighbours(0, 0, connectivity=6)


def test_from_msg_reads_only_message_attributes():
    # rclpy gives data as array('b'); a plain list works too.
    for data in (array("b", [0, -1, 100, 0]), [0, -1, 100, 0]):
        g = GridMap.from_msg(msg_like(2, 2, 0.05, -0.05, -0.05, data))
        assert (g.width, g.height, g.resolution) == (2, 2, 0.05)
        assert (g.origin_x, g.origin_y) == (-0.05, -0.05)
        assert g.array.tolist() == [[0, -1], [100, 0]]
    with pytest.raises(TypeError, match="OccupancyGrid-like"):
        GridMap.from_msg(NS(data=[0]))


def test_to_msg_like_round_trips(grid):
    msg = grid.to_msg_like(frame_id="robot0/map")
    assert msg.header.frame_id == "robot0/map"
    assert isinstance(msg.data, array) and msg.data.typecode == "b"
    back = GridMap.from_msg(msg)
    assert back.array.tolist() == grid.array.tolist()
    assert (back.resolution, back.origin_x, back.origin_y) == (0.5, -1.0, -0.75)


def test_from_array_matches_fields():
    arr = np.array([[0, 100], [-1, 0]], dtype=np.int8)
    g = GridMap.from_array(arr, 2.0, 1.0, 1.0)
    assert g.value(1, 0) == 100 and g.is_unknown(0, 1)
    assert g.cell_to_pos(1, 1) == (4.0, 4.0)


def test_real_ros_message_if_available():
    nav_msgs = pytest.importorskip("nav_msgs.msg")
    msg = nav_msgs.OccupancyGrid()
    msg.info.width, msg.info.height, msg.info.resolution = 3, 1, 0.25
    msg.info.origin.position.x = -0.375
    msg.data = [0, -1, 100]
    g = GridMap.from_msg(msg)
    assert g.is_unknown(1, 0) and g.is_occupied(2, 0) and g.cell_to_pos(0, 0)[0] == -0.25


# -- MAES 2.0's MaesCostmap ------------------------------------------------------------------


def test_maes_costmap_before_first_message():
    cm = MaesCostmap(logger="kept")
    assert cm.costmap is None and cm.logger == "kept"
    with pytest.raises(LookupError, match="no costmap received yet"):
        cm.is_free(0, 0)
    with pytest.raises(LookupError):
        cm.costmap_index_to_pos(0)


def test_maes_costmap_names_follow_the_latest_message(grid):
    cm = MaesCostmap()
    cm.update_costmap(grid.to_msg_like())
    assert cm.costmap_index_to_pos(5) == Coord2D(-0.25, 0.0)
    assert cm.cost_map_tiles_to_pos(1, 1) == Coord2D(-0.25, 0.0)
    assert cm.pos_to_costmap_tile(Coord2D(-0.3, 0.1)) == (1, 1)
    assert cm.pos_to_costmap_tile((-0.3, 0.1)) == (1, 1)
    assert cm.pos_to_costmap_index(Coord2D(-0.3, 0.1)) == 5
    assert cm.get_costmap_coord_status(2, 1) == 65
    assert cm.distance_to_costmap_index(Coord2D(-0.25, 3.0), 5) == pytest.approx(3.0)
    # forwarded GridMap API
    assert cm.is_occupied(2, 1) and cm.array.shape == (3, 4) and "is_free" in dir(cm)
    # a new message replaces the grid
    cm.update_costmap(GridMap(1, 1, 1.0, data=[100]).to_msg_like())
    assert cm.shape == (1, 1) and cm.is_occupied(0, 0)


def test_unknown_neighbour_count_does_not_wrap_rows():
    # Cell index 3 is (0, 1): its left neighbour in MAES 2.0's index arithmetic (index 2) is
    # really the far end of row 0, which is unknown; it must not be counted.
    g = GridMap(3, 2, 1.0, data=[0, 0, -1, 0, 0, 0])
    cm = MaesCostmap()
    cm.update_costmap(g.to_msg_like())
    assert cm.get_number_of_unknown_neighbors(3) == 0
    assert cm.get_number_of_unknown_neighbors(4) == 1  # (1, 1) sees (2, 0) diagonally
    assert cm.has_at_least_n_unknown_neighbors(4, 1)
    assert not cm.has_at_least_n_unknown_neighbors(4, 2)


def test_maes_costmap_rejects_unknown_attributes():
    cm = MaesCostmap()
    with pytest.raises(AttributeError, match="no_such_method"):
        cm.no_such_method  # noqa: B018
    cm.update_costmap(GridMap(1, 1, 1.0).to_msg_like())
    with pytest.raises(TypeError, match="position must have .x and .y"):
        cm.pos_to_costmap_tile(3.0)


def test_float_data_is_rejected():
    with pytest.raises(TypeError, match="data must hold integers, got dtype float64"):
        GridMap(2, 1, 1.0, data=[0.5, 0.0])


@pytest.mark.parametrize("module", [costmap, maes_compat])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_pure_modules_import_no_ros():
    modules = [
        "navigation.costmap",
        "maes_compat",
        "navigation.planning",
        "frontier",
        "navigation.following",
        "navigation.global_planner",
    ]
    code = (
        "import importlib, sys\n"
        f"for name in {modules}: importlib.import_module('maes_controller.' + name)\n"
        "roots = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(r for r in roots if r == 'rclpy' or r.endswith(('_msgs', '_interfaces'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert out.stdout.strip() == "[]"


def costs_by_numpy(occ, robot_radius, inflation_radius, scaling, threshold, inflate_unknown):
    """costmap_from_occupancy as numpy passes over the whole grid (what it was before its
    per-cell part was compiled): the reference it must equal, cell for cell."""
    from maes_controller.navigation.costmap import INSCRIBED, LETHAL, UNKNOWN
    from maes_controller.navigation.inflation import obstacle_distance

    lethal = occ >= threshold
    unknown = occ < 0
    dist = obstacle_distance(lethal, inflation_radius)
    with np.errstate(invalid="ignore", over="ignore"):
        decayed = np.floor(252 * np.exp(-scaling * (dist - robot_radius)))
    decayed = np.where(np.isfinite(dist), decayed, 0.0).astype(np.int64)
    translated = np.where(decayed > 0, 1 + (97 * (decayed - 1)) // 251, 0)
    cost = np.where(unknown, UNKNOWN, translated)
    if inflate_unknown:
        cost = np.where(unknown & (translated > 0), translated, cost)
    cost = np.where(dist <= robot_radius, INSCRIBED, cost)
    cost = np.where(lethal, LETHAL, cost)
    return cost.astype(np.int8)


@pytest.mark.parametrize("seed", range(40))
def test_compiled_costmap_equals_the_numpy_passes(seed):
    from maes_controller.navigation.inflation import costmap_from_occupancy

    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(1, 60, size=2))
    occ = rng.choice(np.array([0, 30, 70, 100, -1], dtype=np.int8), size=(h, w))
    robot_radius = float(rng.choice([0.0, 0.5, 1.3, 3.0]))
    inflation_radius = robot_radius + float(rng.choice([0.0, 1.0, 2.7, 6.0]))
    scaling = float(rng.choice([0.0, 0.3, 1.0, 10.0]))
    threshold = int(rng.choice([1, 65, 100]))
    inflate_unknown = bool(seed % 2)
    got = costmap_from_occupancy(
        occ,
        robot_radius,
        inflation_radius,
        scaling,
        occupied_threshold=threshold,
        inflate_unknown=inflate_unknown,
    )
    want = costs_by_numpy(occ, robot_radius, inflation_radius, scaling, threshold, inflate_unknown)
    assert got.dtype == np.int8 and got.tolist() == want.tolist()
