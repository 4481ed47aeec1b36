"""Lidar kernel: hand-computed ranges, corner and edge rules, marking, numba == numpy reference."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_sim.core.grid import OPEN, SOLID, UNKNOWN
from maes_sim.core.kernels import cast_rays, ray_directions, stop_rays_at_bodies, trace_rays
from maes_sim.core.kernels.reference import trace_rays_reference

DIAG = np.array([1.0, 1.0]) / math.sqrt(2.0)  # both components equal: exactly through corners
EAST, WEST, NORTH, SOUTH = (1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)


def column_map() -> np.ndarray:
    """5x5 open map with a wall column at ix = 3."""
    walls = np.zeros((5, 5), dtype=bool)
    walls[:, 3] = True
    return walls


def one_ray(walls, origin, direction, max_range=10.0, **marking):
    ranges, hit = trace_rays(
        walls, np.array([origin], float), np.array([[direction]], float), max_range, **marking
    )
    return float(ranges[0, 0]), bool(hit[0, 0])


def marks(walls, origin, direction, max_range=10.0, slam=None):
    """(explored tile set, slam map) after one ray with marking on."""
    explored = np.full(walls.shape, -1, dtype=np.int32)
    slam = np.zeros((1, *walls.shape), dtype=np.uint8) if slam is None else slam
    one_ray(
        walls, origin, direction, max_range,
        explored_tick=explored, tick=7, slam=slam, slam_index=np.array([0]),
    )  # fmt: skip
    tiles = {(int(ix), int(iy)) for iy, ix in np.argwhere(explored == 7)}
    return tiles, slam[0]


# --- hand-computed ranges ---------------------------------------------------------------------


def test_four_cardinal_rays_on_the_column_map():
    # heading 0, R = 4: k=0 back (west), k=1 right (south), k=2 ahead (east), k=3 left (north)
    ranges, hit = cast_rays(column_map(), np.array([[1.5, 2.5]]), np.array([0.0]), 7.0, n_rays=4)
    np.testing.assert_array_equal(ranges, [[1.5, 2.5, 1.5, 2.5]])  # map edges and the column
    assert hit.all()


def test_rays_rotate_with_the_heading():
    ranges, _ = cast_rays(
        column_map(), np.array([[1.5, 3.5]]), np.array([math.pi / 2]), 7.0, n_rays=4
    )
    # heading north: back = south (3.5), right = east (the column, 1.5), ahead = north (the
    # edge, 1.5), left = west (the edge, 1.5)
    np.testing.assert_array_equal(ranges, [[3.5, 1.5, 1.5, 1.5]])


def test_ray_k_half_points_straight_ahead():
    dirs = ray_directions(np.array([0.0, math.pi / 2]), 180)
    np.testing.assert_array_equal(dirs[0, 90], EAST)
    np.testing.assert_array_equal(dirs[1, 90], NORTH)  # cos(pi/2) rounding noise snapped to 0
    np.testing.assert_array_equal(dirs[0, 0], WEST)
    assert math.isclose(math.atan2(dirs[0, 1, 1], dirs[0, 1, 0]), -math.pi + 2 * math.pi / 180)


def test_max_range_cuts_off_and_the_interval_is_closed():
    walls = column_map()
    assert one_ray(walls, (1.5, 2.5), EAST, max_range=1.0) == (1.0, False)
    assert one_ray(walls, (1.5, 2.5), EAST, max_range=1.5) == (1.5, True)  # exactly at range
    assert one_ray(walls, (1.5, 2.5), EAST, max_range=1.4999) == (1.4999, False)


def test_ray_leaving_the_map_hits_its_edge():
    walls = np.zeros((4, 6), dtype=bool)
    assert one_ray(walls, (1.25, 0.5), WEST) == (1.25, True)
    assert one_ray(walls, (1.25, 0.5), NORTH) == (3.5, True)
    assert one_ray(walls, (1.25, 0.5), NORTH, max_range=3.0) == (3.0, False)


def test_oblique_ray_hand_computed():
    # direction (1, 2)/sqrt5 from (0.5, 0.5): tiles (0,0) (0,1) (1,1) (1,2) (1,3) ...; crossings
    # y=1 at t=sqrt5/4, x=1 at sqrt5/2, y=2 at 3 sqrt5/4, y=3 at 5 sqrt5/4 (entering (1,3)).
    walls = np.zeros((6, 6), dtype=bool)
    walls[3, 1] = True
    d = np.array([1.0, 2.0]) / math.sqrt(5.0)
    rng, hit = one_ray(walls, (0.5, 0.5), d)
    assert hit and rng == pytest.approx(1.25 * math.sqrt(5.0), rel=1e-14)
    tiles, slam = marks(walls, (0.5, 0.5), d)
    assert tiles == {(0, 0), (0, 1), (1, 1), (1, 2), (1, 3)}
    assert slam[3, 1] == SOLID and (slam == SOLID).sum() == 1
    assert (slam == OPEN).sum() == 4


def test_diagonal_heading_from_cast_rays():
    walls = np.zeros((8, 8), dtype=bool)
    walls[4, 4] = True  # on the diagonal from (1.5, 1.5) at 45 degrees
    ranges, hit = cast_rays(walls, np.array([[1.5, 1.5]]), np.array([math.pi / 4]), 9.0, n_rays=4)
    # cos(pi/4) and sin(pi/4) differ in the last bit, so the ray slips past the corners at (2,2),
    # (3,3) by a hair; it still enters (4,4) through one of its lower boundaries at 2.5 * sqrt2.
    assert hit[0, 2] and ranges[0, 2] == pytest.approx(2.5 * math.sqrt(2.0), rel=1e-12)


# --- origins ----------------------------------------------------------------------------------


def test_origin_inside_a_wall_is_range_zero_hit_and_marks_that_tile():
    walls = column_map()
    assert one_ray(walls, (3.5, 2.5), WEST) == (0.0, True)
    tiles, slam = marks(walls, (3.5, 2.5), WEST)
    assert tiles == {(3, 2)} and slam[2, 3] == SOLID and (slam != UNKNOWN).sum() == 1


def test_origin_on_a_wall_boundary_belongs_to_the_tile_above_it():
    walls = column_map()
    assert one_ray(walls, (3.0, 2.5), WEST) == (0.0, True)  # tile floor(3.0) = 3 is the wall
    walls = np.zeros((5, 5), dtype=bool)
    walls[:, 2] = True
    rng, hit = one_ray(walls, (3.0, 2.5), WEST)  # leaves tile 3 at once into the wall
    assert (rng, hit) == (0.0, True) and not math.copysign(1.0, rng) < 0  # no negative zero


def test_origin_outside_the_map_is_a_hit_at_zero_and_marks_nothing():
    walls = np.zeros((3, 3), dtype=bool)
    assert one_ray(walls, (-0.5, 1.5), EAST) == (0.0, True)
    tiles, slam = marks(walls, (1.5, 3.0), SOUTH)  # y = 3.0 is outside (tile row 3)
    assert tiles == set() and not slam.any()


# --- axis-parallel rays and corners -----------------------------------------------------------


def test_ray_along_a_grid_line_runs_in_the_tiles_on_its_positive_side():
    walls = np.zeros((5, 5), dtype=bool)
    walls[3, 1] = True  # left of the line x = 2
    assert one_ray(walls, (2.0, 0.5), NORTH) == (4.5, True)  # slides past, exits at the top
    walls[3, 2] = True  # right of the line x = 2: the tiles the ray runs in
    assert one_ray(walls, (2.0, 0.5), NORTH) == (2.5, True)
    # headings whose cos/sin are not exactly 0 are snapped, so cast_rays behaves the same
    ranges, _ = cast_rays(walls, np.array([[2.0, 0.5]]), np.array([math.pi / 2]), 9.0, n_rays=4)
    assert ranges[0, 2] == 2.5


def test_closed_diagonal_seam_blocks_the_ray_and_both_sides_are_hit():
    walls = np.zeros((4, 4), dtype=bool)
    walls[0, 1] = walls[1, 0] = True  # tiles (1, 0) and (0, 1) meet at corner (1, 1)
    rng, hit = one_ray(walls, (0.5, 0.5), DIAG)
    assert hit and rng == 0.5 / DIAG[0]
    tiles, slam = marks(walls, (0.5, 0.5), DIAG)
    assert tiles == {(0, 0), (1, 0), (0, 1)}  # not the diagonal tile (1, 1) behind the seam
    assert slam[0, 1] == SOLID and slam[1, 0] == SOLID and slam[0, 0] == OPEN
    assert slam[1, 1] == UNKNOWN


def test_corner_with_one_wall_beside_it_is_grazed():
    walls = np.zeros((4, 4), dtype=bool)
    walls[0, 1] = True  # only tile (1, 0)
    rng, hit = one_ray(walls, (0.5, 0.5), DIAG)
    # through (1,1), (2,2), (3,3) to the map corner (4, 4): both tiles beside it are outside
    assert hit and rng == 3.5 / DIAG[0]
    tiles, slam = marks(walls, (0.5, 0.5), DIAG)
    assert tiles == {(0, 0), (1, 1), (2, 2), (3, 3)}  # the grazed wall is not marked
    assert slam[0, 1] == UNKNOWN and (slam == OPEN).sum() == 4 and not (slam == SOLID).any()


def test_wall_on_the_diagonal_through_a_corner():
    walls = np.zeros((4, 4), dtype=bool)
    walls[1, 1] = True
    assert one_ray(walls, (0.5, 0.5), DIAG) == (0.5 / DIAG[0], True)
    tiles, slam = marks(walls, (0.5, 0.5), DIAG)
    assert tiles == {(0, 0), (1, 1)} and slam[1, 1] == SOLID


def test_map_corner_is_a_seam_of_outside_tiles():
    walls = np.zeros((2, 2), dtype=bool)
    for origin, d in (((0.5, 0.5), -DIAG), ((1.5, 0.5), (DIAG[0], -DIAG[1]))):
        assert one_ray(walls, origin, d) == (0.5 / DIAG[0], True)


# --- marking semantics ------------------------------------------------------------------------


def test_solid_is_never_downgraded_and_tiles_beyond_the_hit_stay_unmarked():
    walls = column_map()
    slam = np.zeros((1, 5, 5), dtype=np.uint8)
    slam[0, 2, 1] = SOLID  # believed solid (e.g. from a merged map) although open
    slam[0, 2, 4] = OPEN  # beyond the column: must stay as it was
    tiles, slam = marks(walls, (0.5, 2.5), EAST, slam=slam)
    assert tiles == {(0, 2), (1, 2), (2, 2), (3, 2)}  # explored includes the hit tile
    np.testing.assert_array_equal(slam[2], [OPEN, SOLID, OPEN, SOLID, OPEN])
    assert (slam[[0, 1, 3, 4]] == UNKNOWN).all()


def test_max_range_marking_stops_at_the_range():
    tiles, slam = marks(np.zeros((1, 10), dtype=bool), (0.5, 0.5), EAST, max_range=2.5)
    assert tiles == {(0, 0), (1, 0), (2, 0), (3, 0)}  # (3, 0) entered exactly at 2.5
    assert (slam == OPEN).sum() == 4 and not (slam == SOLID).any()


def test_each_robot_marks_its_own_map_and_minus_one_skips():
    walls = column_map()
    explored = np.zeros((5, 5), dtype=np.int32)
    slam = np.zeros((2, 5, 5), dtype=np.uint8)
    origins = np.array([[0.5, 0.5], [0.5, 4.5], [4.5, 2.5]])
    headings = np.zeros(3)
    cast_rays(
        walls, origins, headings, 1.0, n_rays=4,
        explored_tick=explored, tick=3, slam=slam, slam_index=np.array([1, -1, 0]),
    )  # fmt: skip
    # robot 0 (map 1) reaches (0,0),(1,0),(0,1); robot 2 (map 0) is beside the column: (3,2) hit
    assert {tuple(t) for t in np.argwhere(slam[1] != UNKNOWN)} == {(0, 0), (0, 1), (1, 0)}
    assert slam[0, 2, 3] == SOLID and slam[0, 2, 4] == OPEN
    assert (slam[0] != UNKNOWN).sum() == 4  # (4,2) open, (3,2) solid, (4,1) and (4,3) open
    # robot 1 skips SLAM but still counts for exploration
    assert explored[4, 0] == 3 and explored[3, 0] == 3 and explored[4, 1] == 3
    assert (explored == 3).sum() == 3 + 3 + 4  # all other tiles keep their old value


def test_marking_does_not_change_ranges():
    rng = np.random.default_rng(5)
    walls = rng.random((20, 20)) < 0.3
    origins = rng.uniform(0, 20, (6, 2))
    headings = rng.uniform(-np.pi, np.pi, 6)
    plain = cast_rays(walls, origins, headings, 7.0)
    marked = cast_rays(
        walls, origins, headings, 7.0,
        explored_tick=np.zeros((20, 20), np.int32), tick=1,
        slam=np.zeros((6, 20, 20), np.uint8), slam_index=np.arange(6),
    )  # fmt: skip
    np.testing.assert_array_equal(plain[0], marked[0])
    np.testing.assert_array_equal(plain[1], marked[1])


# --- numba == numpy reference, and an independent geometric check -----------------------------


def random_case(rng: np.random.Generator, n: int, size: int, fill: float = 0.3):
    """A random map and robots; half the origins snapped to tile centres/edges/corners."""
    h, w = rng.integers(1, size + 1, size=2)
    walls = rng.random((h, w)) < fill
    origins = rng.uniform(-0.5, max(h, w) + 0.5, size=(n, 2))
    origins[::2] = np.round(origins[::2] * 2.0) / 2.0
    headings = rng.uniform(-np.pi, np.pi, n)
    headings[::3] = rng.integers(-4, 4, size=headings[::3].shape) * (np.pi / 4)
    return walls, origins, headings


def compare_with_reference(walls, origins, directions, max_range, m_maps=2, seed=0):
    """Run kernel and reference with marking on; assert bit-identical ranges, hits and marks."""
    rng = np.random.default_rng(seed)
    n = origins.shape[0]
    explored = [rng.integers(-5, 5, walls.shape).astype(np.int32)] * 2
    explored = [explored[0].copy(), explored[0].copy()]
    slam0 = rng.integers(0, 3, (m_maps, *walls.shape)).astype(np.uint8)
    slams = [slam0.copy(), slam0.copy()]
    index = rng.integers(-1, m_maps, n)
    got = trace_rays(
        walls, origins, directions, max_range,
        explored_tick=explored[0], tick=9, slam=slams[0], slam_index=index,
    )  # fmt: skip
    want = trace_rays_reference(
        walls, origins + 0.0, directions, max_range, explored[1], 9, slams[1], index
    )
    assert got[0].tobytes() == want[0].tobytes()  # bit-identical, including zero signs
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(explored[0], explored[1])
    np.testing.assert_array_equal(slams[0], slams[1])
    return got


@pytest.mark.parametrize("seed", range(6))
def test_kernel_matches_reference_on_random_maps(seed):
    rng = np.random.default_rng(seed)
    for _ in range(15):
        walls, origins, headings = random_case(rng, n=5, size=14)
        max_range = float(rng.choice([0.5, 3.0, 7.0, 20.0, rng.uniform(0.1, 25.0)]))
        compare_with_reference(walls, origins, ray_directions(headings, 36), max_range, seed=seed)


def test_cast_rays_rotates_in_the_kernel_exactly_like_ray_directions():
    # cast_rays rotates the ray fan inside the kernel; the reference gets ray_directions()
    rng = np.random.default_rng(21)
    for _ in range(20):
        walls, origins, headings = random_case(rng, n=8, size=14)
        explored = [np.zeros(walls.shape, np.int32) for _ in range(2)]
        slams = [np.zeros((8, *walls.shape), np.uint8) for _ in range(2)]
        index = np.arange(8)
        got = cast_rays(
            walls, origins, headings, 7.0, 60,
            explored_tick=explored[0], tick=4, slam=slams[0], slam_index=index,
        )  # fmt: skip
        want = trace_rays_reference(
            walls, origins + 0.0, ray_directions(headings, 60), 7.0, explored[1], 4, slams[1], index
        )
        assert got[0].tobytes() == want[0].tobytes()
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(explored[0], explored[1])
        np.testing.assert_array_equal(slams[0], slams[1])


def test_kernel_matches_reference_with_exact_diagonals_and_axes():
    rng = np.random.default_rng(11)
    base = np.array(
        [EAST, WEST, NORTH, SOUTH, DIAG, -DIAG, (DIAG[0], -DIAG[1]), (-DIAG[0], DIAG[1])]
    )
    for _ in range(40):
        walls, origins, _ = random_case(rng, n=6, size=9, fill=0.4)
        origins[1::2] = np.round(origins[1::2])  # on tile corners
        directions = np.broadcast_to(base, (6, *base.shape))
        compare_with_reference(walls, origins, directions, float(rng.uniform(0.5, 12.0)))


@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**32 - 1),
    fill=st.floats(0.0, 0.8),
    max_range=st.floats(0.05, 30.0),
    n_rays=st.integers(1, 24),
)
def test_kernel_matches_reference_property(seed, fill, max_range, n_rays):
    walls, origins, headings = random_case(np.random.default_rng(seed), n=3, size=12, fill=fill)
    compare_with_reference(walls, origins, ray_directions(headings, n_rays), max_range, seed=seed)


def test_ranges_agree_with_the_geometry():
    """Independent of both implementations: hit points lie on a wall's boundary, and no point
    of any ray's segment (sampled densely) lies strictly inside a wall tile."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        walls, origins, headings = random_case(rng, n=4, size=16)
        h, w = walls.shape
        padded = np.ones((h + 2, w + 2), dtype=bool)
        padded[1:-1, 1:-1] = walls  # one ring of outside wall
        directions = ray_directions(headings, 24)
        ranges, hit = trace_rays(walls, origins, directions, 9.0)

        def is_wall(p, w=w, h=h, padded=padded):
            ix = np.clip(np.floor(p[..., 0]).astype(int), -1, w) + 1
            iy = np.clip(np.floor(p[..., 1]).astype(int), -1, h) + 1
            return padded[iy, ix]

        s = np.linspace(0.0, 1.0, 400)[1:-1]
        pts = (
            origins[:, None, None, :]
            + (ranges[..., None, None] * s[:, None]) * directions[:, :, None, :]
        )
        start_wall = is_wall(origins)
        assert not is_wall(pts)[~start_wall].any()  # nothing solid before the range
        # a wall just past every hit, or a closed seam: walls on both sides of the corner
        end = origins[:, None, :] + ranges[..., None] * directions
        step = 1e-9 * np.sign(directions)
        seam = is_wall(end + step * [1, 0]) & is_wall(end + step * [0, 1])
        ok = is_wall(end + 1e-9 * directions) | seam | start_wall[:, None]
        assert ok[hit].all()
        assert (ranges[~hit] == 9.0).all() and (ranges[start_wall] == 0.0).all()


def test_parallel_equals_serial_and_repeats_bit_identically():
    rng = np.random.default_rng(8)
    walls = rng.random((30, 30)) < 0.3
    origins = rng.uniform(0, 30, (40, 2))
    headings = rng.uniform(-np.pi, np.pi, 40)
    outs = []
    for parallel in (False, True, False):
        explored = np.zeros((30, 30), np.int32)
        slam = np.zeros((10, 30, 30), np.uint8)
        index = np.arange(40) % 10  # four robots share each map
        r, hit = cast_rays(
            walls, origins, headings, 7.0,
            explored_tick=explored, tick=2, slam=slam, slam_index=index, parallel=parallel,
        )  # fmt: skip
        outs.append((r.tobytes(), hit.tobytes(), explored.tobytes(), slam.tobytes()))
    assert outs[0] == outs[1] == outs[2]


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"walls": np.zeros((5, 5), dtype=np.uint8)}, TypeError, "walls must be a bool"),
        ({"origins": np.array([[np.nan, 1.0]])}, ValueError, r"origins must be finite.*nan"),
        ({"origins": np.zeros((1, 3))}, ValueError, r"origins must have shape \(N, 2\)"),
        ({"headings": np.array([np.inf])}, ValueError, "headings must be finite"),
        ({"headings": np.zeros(2)}, ValueError, r"headings must have shape \(1,\)"),
        ({"max_range": 0.0}, ValueError, "max_range must be finite and > 0, got 0.0"),
        ({"max_range": float("inf")}, ValueError, "max_range"),
        ({"n_rays": 0}, ValueError, "n_rays must be a positive integer, got 0"),
        (
            {"explored_tick": np.zeros((5, 5), np.int64)},
            ValueError,
            "explored_tick must be an array with dtype int32",
        ),
        ({"explored_tick": np.zeros((4, 5), np.int32)}, ValueError, r"shape \(5, 5\)"),
        ({"slam": np.zeros((1, 5, 5), np.uint8)}, ValueError, "slam and slam_index"),
        (
            {"slam": np.zeros((1, 5, 5), np.uint8), "slam_index": np.array([1])},
            ValueError,
            r"slam_index\[0\] = 1 is out of range \[-1, 1\)",
        ),
        (
            {"slam": np.zeros((1, 5, 5), np.float32), "slam_index": np.array([0])},
            ValueError,
            "slam must be an array with dtype uint8",
        ),
        ({"tick": 2**31}, ValueError, "tick must fit in int32"),
    ],
)
def test_bad_input_raises_naming_the_argument(kwargs, error, match):
    args = {
        "walls": np.zeros((5, 5), dtype=bool),
        "origins": np.array([[1.5, 1.5]]),
        "headings": np.array([0.0]),
        "max_range": 7.0,
    } | kwargs
    with pytest.raises(error, match=match):
        cast_rays(**args)


def test_zero_direction_is_rejected():
    with pytest.raises(ValueError, match="non-zero"):
        trace_rays(np.zeros((2, 2), bool), np.array([[0.5, 0.5]]), np.zeros((1, 1, 2)), 3.0)


def test_marking_arrays_must_be_writable_in_place():
    explored = np.zeros((5, 5), np.int32)[:, ::1].T  # F-ordered view: a copy would be lost
    with pytest.raises(ValueError, match="C-contiguous"):
        cast_rays(
            np.zeros((5, 5), bool), np.array([[1.5, 1.5]]), np.zeros(1), 3.0, explored_tick=explored
        )


def test_no_robots_gives_empty_results():
    ranges, hit = cast_rays(np.zeros((3, 3), bool), np.zeros((0, 2)), np.zeros(0), 3.0)
    assert ranges.shape == (0, 180) and hit.shape == (0, 180)


# --- numba is required ---------------------------------------------------------------------------


def test_without_numba_the_core_fails_at_import_saying_what_to_install():
    # numba is a hard dependency: no silent slow fallback, but a message instead of a traceback
    # from deep inside a kernel module.
    code = textwrap.dedent(
        """
        import sys
        sys.modules["numba"] = None  # makes `import numba` raise ImportError
        try:
            import maes_sim.core
        except ImportError as exc:
            print(exc)
        else:
            print("imported")
        """
    )
    src = Path(__file__).resolve().parents[2]  # the maes_sim package root (holds maes_sim/)
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        # the simulator and the shared package (maes_common.jit imports numba)
        env={"PYTHONPATH": f"{src}:{src.parent / 'maes_common'}", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "MAES-ROS needs numba" in result.stdout and "pip install numba" in result.stdout


def test_kernels_are_compiled_here():
    # The public kernels are numba dispatchers (not plain Python) wherever the project runs.
    from maes_sim.core.kernels import los, physics, raycast

    for kernel in (raycast._trace_serial, los._los_serial, physics.advance_kernel):
        assert hasattr(kernel, "signatures") and hasattr(kernel, "py_func"), kernel


# --- robots' bodies stop rays -----------------------------------------------------------------


def test_a_body_ahead_stops_the_ray_at_its_disc():
    # robot at (1.5, 2.5) facing east, another at (3.0, 2.5) radius 0.3: the disc starts at 2.7
    walls = np.zeros((5, 5), dtype=bool)
    two = np.array([[1.5, 2.5], [3.0, 2.5]])
    ranges, hit = cast_rays(walls, two, np.zeros(2), 7.0, n_rays=4, bodies=two, body_radius=0.3)
    assert math.isclose(ranges[0, 2], 1.2, rel_tol=1e-12) and hit[0, 2]  # 3.0 - 0.3 - 1.5
    assert (
        math.isclose(ranges[1, 0], 1.2, rel_tol=1e-12) and hit[1, 0]
    )  # the other one looking back sees the first
    np.testing.assert_array_equal(ranges[0, [0, 1, 3]], [1.5, 2.5, 2.5])  # the map edges


def test_an_oblique_ray_meets_the_disc_where_the_geometry_says():
    walls = np.zeros((10, 10), dtype=bool)
    origin, centre, r = np.array([1.0, 1.0]), np.array([5.0, 4.0]), 0.5
    d = np.array([0.8, 0.6])  # unit, through the centre offset by nothing: hits at |e| - r
    got, hit = trace_rays(
        walls, origin[None], d[None, None], 9.0, bodies=centre[None], body_radius=r
    )
    assert hit[0, 0] and math.isclose(got[0, 0], 5.0 - r, rel_tol=1e-12)
    # a ray passing 0.4 from the centre: t = b - sqrt(r^2 - 0.4^2)
    e = centre - origin
    side = np.array([-d[1], d[0]])
    o2 = origin + 0.4 * side
    got, _ = trace_rays(walls, o2[None], d[None, None], 9.0, bodies=centre[None], body_radius=r)
    b = float(d @ (centre - o2))
    assert math.isclose(got[0, 0], b - math.sqrt(r * r - 0.16), rel_tol=1e-12)
    # missing it by 0.01: no hit, the ray goes on to the map edge
    o3 = origin + 0.51 * side
    _, hit = trace_rays(walls, o3[None], d[None, None], 9.0, bodies=centre[None], body_radius=r)
    assert not hit[0, 0]
    assert e.sum() > 0  # (the body is ahead of every origin used)


def test_a_robot_never_sees_itself_and_bodies_behind_a_wall_stay_hidden():
    walls = np.zeros((5, 7), dtype=bool)
    walls[:, 3] = True
    robots = np.array([[1.5, 2.5], [5.5, 2.5]])  # the wall column between them
    plain = cast_rays(walls, robots, np.zeros(2), 7.0, n_rays=36)
    with_bodies = cast_rays(walls, robots, np.zeros(2), 7.0, n_rays=36, bodies=robots,
                            body_radius=0.3)  # fmt: skip
    np.testing.assert_array_equal(plain[0], with_bodies[0])
    np.testing.assert_array_equal(plain[1], with_bodies[1])


def test_a_body_shortens_the_range_only_and_marking_follows_the_walls():
    walls = np.zeros((1, 10), dtype=bool)
    walls[0, 8] = True
    marked = []
    for bodies in (None, np.array([[4.5, 0.5]])):
        explored = np.full(walls.shape, -1, dtype=np.int32)
        slam = np.zeros((1, *walls.shape), dtype=np.uint8)
        ranges, hit = trace_rays(
            walls, np.array([[0.5, 0.5]]), np.array([[EAST]]), 9.0,
            explored_tick=explored, tick=3, slam=slam, slam_index=np.array([0]),
            bodies=bodies, body_radius=0.3,
        )  # fmt: skip
        marked.append((explored.copy(), slam.copy()))
    assert math.isclose(ranges[0, 0], 3.7, rel_tol=1e-12) and hit[0, 0]
    # the same marks with and without the body: through it to the wall at ix = 8
    np.testing.assert_array_equal(marked[0][0], marked[1][0])
    np.testing.assert_array_equal(marked[0][1], marked[1][1])
    assert marked[1][0][0].tolist() == [3] * 9 + [-1]
    assert marked[1][1][0, 0].tolist() == [OPEN] * 8 + [SOLID, UNKNOWN]


def test_a_wall_nearer_than_the_body_wins():
    walls = column_map()
    origin = np.array([[1.5, 2.5]])
    got = trace_rays(walls, origin, np.array([[EAST]]), 7.0, bodies=np.array([[4.5, 2.5]]),
                     body_radius=0.4)  # fmt: skip
    assert got[0][0, 0] == 1.5 and got[1][0, 0]


@pytest.mark.parametrize("seed", range(6))
def test_kernel_matches_reference_with_bodies(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(15):
        walls, origins, headings = random_case(rng, n=7, size=14, fill=0.15)
        origins[1] = origins[0] + rng.uniform(-0.7, 0.7, 2)  # overlapping discs too
        max_range = float(rng.choice([0.5, 3.0, 7.0, rng.uniform(0.1, 20.0)]))
        radius = float(rng.choice([0.0, 0.3, rng.uniform(0.05, 1.5)]))
        directions = ray_directions(headings, 36)
        explored = [np.zeros(walls.shape, np.int32) for _ in range(2)]
        slams = [np.zeros((7, *walls.shape), np.uint8) for _ in range(2)]
        index = np.arange(7)
        got = cast_rays(
            walls, origins, headings, max_range, 36,
            explored_tick=explored[0], tick=4, slam=slams[0], slam_index=index,
            bodies=origins, body_radius=radius,
        )  # fmt: skip
        want = trace_rays_reference(
            walls, origins + 0.0, directions, max_range, explored[1], 4, slams[1], index,
            bodies=origins, body_radius=radius,
        )  # fmt: skip
        assert got[0].tobytes() == want[0].tobytes()
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(explored[0], explored[1])
        np.testing.assert_array_equal(slams[0], slams[1])
        # explicit directions (trace_rays) agree as well, and bodies do change some rays
        got2 = trace_rays(walls, origins, directions, max_range, bodies=origins,
                          body_radius=radius)  # fmt: skip
        assert got2[0].tobytes() == want[0].tobytes()


def test_bodies_change_rays_on_a_crowded_map_and_parallel_equals_serial():
    rng = np.random.default_rng(3)
    walls = np.zeros((20, 20), dtype=bool)
    origins = rng.uniform(1, 19, (30, 2))
    headings = rng.uniform(-np.pi, np.pi, 30)
    plain = cast_rays(walls, origins, headings, 7.0)
    serial = cast_rays(walls, origins, headings, 7.0, bodies=origins, body_radius=0.3)
    par = cast_rays(walls, origins, headings, 7.0, bodies=origins, body_radius=0.3, parallel=True)
    assert (serial[0] < plain[0]).sum() > 100  # many rays stop at robots
    assert (serial[0] <= plain[0]).all()
    assert serial[0].tobytes() == par[0].tobytes()
    # the kernel skips (ray, body) pairs by angle and distance: the reference tries them all
    want = trace_rays_reference(
        walls, origins + 0.0, ray_directions(headings, 180), 7.0, bodies=origins, body_radius=0.3
    )
    assert serial[0].tobytes() == want[0].tobytes()
    np.testing.assert_array_equal(serial[1], want[1])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"body_radius": -0.1}, ValueError, "body_radius"),
        ({"body_radius": float("nan")}, ValueError, "body_radius"),
        ({"body_radius": "0.3"}, TypeError, "body_radius"),
        ({"bodies": np.zeros((2, 3))}, ValueError, "bodies"),
        ({"bodies": np.array([[np.inf, 0.0]])}, ValueError, "bodies"),
    ],
)
def test_bad_bodies_raise_naming_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        cast_rays(np.zeros((3, 3), bool), np.array([[1.5, 1.5]]), np.zeros(1), 2.0, **kwargs)


def test_stop_rays_at_bodies_after_the_walls_equals_cast_rays_with_bodies():
    rng = np.random.default_rng(8)
    for _ in range(10):
        walls, origins, headings = random_case(rng, n=12, size=16, fill=0.2)
        radius = float(rng.choice([0.3, 0.5, rng.uniform(0.0, 2.0)]))
        explored = [np.zeros(walls.shape, np.int32) for _ in range(2)]
        together = cast_rays(walls, origins, headings, 7.0, explored_tick=explored[0], tick=1,
                             bodies=origins, body_radius=radius)  # fmt: skip
        plain = cast_rays(walls, origins, headings, 7.0, explored_tick=explored[1], tick=1)
        apart = stop_rays_at_bodies(*plain, origins, headings, 7.0, origins, radius)
        assert together[0].tobytes() == apart[0].tobytes()
        np.testing.assert_array_equal(together[1], apart[1])
        np.testing.assert_array_equal(explored[0], explored[1])  # bodies never change marks
        # bodies not the origins (no own-body shortcut; one more body far away): same again
        others = np.vstack([origins, [[500.0, 500.0]]])
        again = stop_rays_at_bodies(*plain, origins, headings, 7.0, others, radius)
        assert again[0].tobytes() == apart[0].tobytes()


@pytest.mark.parametrize("heading", [0.0, math.pi / 2, -math.pi, 1e-9, math.pi - 1e-12])
def test_bodies_behind_and_on_ray_boundaries_match_the_reference(heading):
    # bearings at +-pi (where the ray index wraps) and exactly on and between rays
    walls = np.zeros((12, 12), dtype=bool)
    me = np.array([[6.0, 6.0]])
    angles = heading + np.array([math.pi, -math.pi + 1e-12, math.pi / 90, math.pi / 180, 0.5])
    others = me + np.stack([np.cos(angles), np.sin(angles)], axis=1) * [
        [2.0],
        [3.0],
        [4.0],
        [2.5],
        [1.0],
    ]
    bodies = np.vstack([me, others])
    origins = bodies.copy()
    headings = np.full(len(origins), heading)
    got = cast_rays(walls, origins, headings, 7.0, bodies=bodies, body_radius=0.3)
    want = trace_rays_reference(
        walls, origins + 0.0, ray_directions(headings, 180), 7.0, bodies=bodies, body_radius=0.3
    )
    assert got[0].tobytes() == want[0].tobytes()
    np.testing.assert_array_equal(got[1], want[1])
    assert (got[0][0] < 7.0).sum() >= 5  # robot 0 sees the others


@pytest.mark.parametrize("fov", [None, math.radians(120.0)])
def test_the_simulators_unchecked_cast_is_cast_rays(fov):
    """``cast_rays_checked`` (the simulator's own call: its state needs no checking every tick)
    returns cast_rays's ranges and hits and marks the same tiles, robots left unmarked (-1)
    included."""
    from maes_sim.core.kernels.raycast import cast_rays_checked

    rng = np.random.default_rng(4)
    walls = rng.random((30, 40)) < 0.15
    origins = rng.uniform(1.0, 29.0, size=(7, 2))
    headings = rng.uniform(-math.pi, math.pi, 7)
    index = np.array([0, 1, -1, 2, 0, -1, 1], dtype=np.int64)
    outs = []
    for cast in (cast_rays, cast_rays_checked):
        explored = np.full(walls.shape, -1, dtype=np.int32)
        slam = np.zeros((3, *walls.shape), dtype=np.uint8)
        ranges, hit = cast(
            walls, origins, headings, 9.0, 90,
            explored_tick=explored, tick=5, slam=slam, slam_index=index, parallel=False, fov=fov,
        )  # fmt: skip
        outs.append((ranges, hit, explored, slam))
    for a, b in zip(*outs, strict=True):
        assert np.array_equal(a, b)
    assert (outs[0][2] == 5).sum() > 100 and outs[0][3].any()  # it did mark
