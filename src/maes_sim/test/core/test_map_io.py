"""Tests for maes_sim.core.world.map_io (PGM with MAES's rule, Nav2 map_server YAML)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_sim.core.world import (
    MapError,
    WorldMap,
    largest_open_region,
    load_custom_map,
    load_map_yaml,
    load_pgm,
    parse_pgm,
)

#: Real Nav2 maps shipped with the project (configs/maps/README.md: depot, tb3_sandbox).
MAPS = Path(__file__).resolve().parents[4] / "configs" / "maps"
#: Maps that do not ship (Nav2's 1.7 MB warehouse, MAES 2.0's GPL-3.0 example): read from the
#: folder MAES_EXTRA_MAPS names, where set.
EXTRA_MAPS = Path(os.environ["MAES_EXTRA_MAPS"]) if os.environ.get("MAES_EXTRA_MAPS") else None


def p2(rows: list[list[int]], maxval: int = 255, comments: bool = True) -> bytes:
    """An ASCII PGM (first row = top of the image)."""
    h, w = len(rows), len(rows[0])
    head = (
        f"P2\n# made by a test\n{w} # width\n# between\n{h}\n{maxval}\n"
        if comments
        else (f"P2 {w} {h} {maxval}\n")
    )
    body = "\n".join(" ".join(str(v) for v in row) for row in rows)
    return (head + body + "\n").encode()


def p5(rows: list[list[int]], maxval: int = 255) -> bytes:
    """A binary PGM (8 bit, or 16 bit big-endian when maxval > 255)."""
    h, w = len(rows), len(rows[0])
    dtype = ">u2" if maxval > 255 else "u1"
    raster = np.array(rows, dtype=dtype).tobytes()
    return f"P5\n# CREATOR: test\n{w} {h}\n# late comment\n{maxval}\n".encode() + raster


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def nav2_yaml(image: str, **overrides: object) -> str:
    fields = {
        "image": image,
        "resolution": 0.5,
        "origin": "[-2.0, 3.5, 0.1]",
        "negate": 0,
        "occupied_thresh": 0.65,
        "free_thresh": 0.196,
    }
    fields.update(overrides)
    return "".join(f"{k}: {v}\n" for k, v in fields.items() if v is not None)


# ---------------------------------------------------------------- PGM (MAES rule)

# Image rows, top first: black (0) pixels are walls, anything else (even 1) is open.
PICTURE = [
    [0, 0, 0, 0],
    [0, 255, 1, 0],
    [0, 128, 0, 200],
]
# Expected walls[iy, ix], bottom row first (the image flipped).
EXPECTED = np.array(
    [
        [True, False, True, False],
        [True, False, False, True],
        [True, True, True, True],
    ]
)


def test_p2_with_comments_flips_rows(tmp_path: Path) -> None:
    world = load_pgm(write(tmp_path / "room.pgm", p2(PICTURE)))
    np.testing.assert_array_equal(world.walls, EXPECTED)
    assert world.name == "room" and world.source == str(tmp_path / "room.pgm")
    assert world.walls[2, 0]  # top-left pixel is the top-left tile: row H-1, column 0
    assert not world.walls[0, 1]  # bottom row, second pixel (128)


def test_p2_without_comments_on_one_line(tmp_path: Path) -> None:
    world = load_pgm(write(tmp_path / "a.pgm", p2(PICTURE, comments=False)))
    np.testing.assert_array_equal(world.walls, EXPECTED)


def test_p5_8bit_matches_p2(tmp_path: Path) -> None:
    world = load_pgm(write(tmp_path / "b.pgm", p5(PICTURE)))
    np.testing.assert_array_equal(world.walls, EXPECTED)


def test_p5_16bit_is_big_endian(tmp_path: Path) -> None:
    # 256 is bytes 01 00: read little-endian it would be 1 (still open), so also use 300 = 01 2C,
    # which read little-endian (0x2C01 = 11265) would exceed maxval 300 and fail.
    rows = [[0, 256, 300], [1, 0, 65535 // 256]]
    world = load_pgm(write(tmp_path / "c.pgm", p5(rows, maxval=300)))
    np.testing.assert_array_equal(world.walls, [[False, True, False], [True, False, False]])
    pixels, maxval = parse_pgm(p5(rows, maxval=300))
    assert maxval == 300 and pixels.tolist() == rows


def test_imported_map_is_kept_as_drawn_with_largest_region_as_room(tmp_path: Path) -> None:
    rows = [[255, 255, 0, 255], [255, 255, 0, 0]]  # a 4-tile region and a 1-tile pocket
    world = load_pgm(write(tmp_path / "d.pgm", p2(rows)))
    assert world.open_count == 5  # the pocket is not dropped
    assert len(world.rooms) == 1
    np.testing.assert_array_equal(world.rooms[0], largest_open_region(world.walls))
    assert int(world.rooms[0].sum()) == 4


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"P6\n2 2\n255\n" + bytes(12), "not a PGM"),
        (b"GIF89a", "not a PGM"),
        (b"", "not a PGM"),
        (b"P21 1\n255\n0\n", "not a PGM"),
        (b"P2\n2 x\n255\n0 0\n", "expected the height as a number, got b'x"),
        (b"P2\n# only a comment\n", "expected the width"),
        (b"P2\n0 3\n255\n", "has no pixels"),
        (b"P2\n1 1\n0\n0\n", "maxval must be within 1..65535, got 0"),
        (b"P2\n1 1\n70000\n0\n", "maxval must be within 1..65535, got 70000"),
        (b"P5\n3 2\n255\n" + bytes(5), "truncated PGM data, expected 6 pixels, got 5"),
        (b"P5\n2 2\n65535\n" + bytes(7), "truncated PGM data, expected 4 pixels, got 3"),
        (b"P2\n3 2\n255\n1 2 3\n4 5\n", "truncated PGM data, expected 6 pixels, got 5"),
        (b"P2\n2 1\n255\n1 two\n", "b'two' is not a number"),
        (b"P2\n2 1\n100\n1 101\n", "pixel value 101 exceeds maxval 100"),
        (b"P5\n2 1\n255", "no whitespace after maxval"),
        (b"P2\n99999999999 1\n255\n", "too large"),
    ],
)
def test_corrupt_pgm_raises_map_error(data: bytes, message: str) -> None:
    with pytest.raises(MapError, match=message):
        parse_pgm(data, "x.pgm")


def test_all_wall_and_missing_file_name_the_path(tmp_path: Path) -> None:
    path = write(tmp_path / "black.pgm", p2([[0, 0], [0, 0]]))
    with pytest.raises(MapError, match=r"black\.pgm: the map is all wall"):
        load_pgm(path)
    missing = tmp_path / "nope" / "gone.pgm"
    with pytest.raises(MapError, match=str(missing)):
        load_pgm(missing)
    with pytest.raises(MapError, match="is a directory"):
        load_pgm(tmp_path)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.builds(
            lambda m, b: m + b,
            st.sampled_from([b"P2", b"P5", b"P2\n", b"P5 "]),
            st.binary(max_size=200),
        ),
        st.builds(
            lambda w, h, m, b: f"P5\n{w} {h}\n{m}\n".encode() + b,
            st.integers(0, 20),
            st.integers(0, 20),
            st.integers(0, 70000),
            st.binary(max_size=900),
        ),
        st.builds(
            lambda w, h, vals: f"P2 {w} {h} 255\n".encode() + " ".join(vals).encode(),
            st.integers(0, 6),
            st.integers(0, 6),
            st.lists(st.sampled_from(["0", "1", "255", "256", "#c\n", "x", "-1", ""]), max_size=40),
        ),
    )
)
def test_fuzzed_bytes_give_map_error_or_valid_pixels(data: bytes) -> None:
    try:
        pixels, maxval = parse_pgm(data)
    except MapError:
        return
    assert pixels.ndim == 2 and pixels.size > 0
    assert 1 <= maxval <= 65535 and int(pixels.max()) <= maxval


# ---------------------------------------------------------------- Nav2 map_server YAML

# Grey levels with the default thresholds (occupied > 0.65, free < 0.196, p = (255 - v) / 255):
# 0 -> p 1.0 occupied; 254 -> p 0.004 free; 205 -> p 0.196 unknown; 100 -> p 0.61 unknown.
GREYS = [[0, 254, 205, 100]]


def load_greys(
    tmp_path: Path, rows: list[list[int]] = GREYS, tile_size: float = 0.5, **overrides: object
) -> WorldMap:
    write(tmp_path / "g.pgm", p5(rows))
    image = overrides.pop("image", "g.pgm")
    yaml_path = write(tmp_path / "g.yaml", nav2_yaml(image, **overrides))
    return load_map_yaml(yaml_path, tile_size)


def test_yaml_trinary_unknown_counts_as_wall(tmp_path: Path) -> None:
    world = load_greys(tmp_path)
    assert world.walls.tolist() == [[True, False, True, True]]
    assert world.origin_m == (-2.0, 3.5, 0.1)
    assert world.tile_size_m == 0.5 and world.name == "g"
    assert world.source == str(tmp_path / "g.yaml")


def test_yaml_mode_defaults_to_trinary(tmp_path: Path) -> None:
    explicit = load_greys(tmp_path, mode="trinary")
    assert explicit.walls.tolist() == load_greys(tmp_path).walls.tolist()


def test_yaml_negate_swaps_black_and_white(tmp_path: Path) -> None:
    # negate: p = v / 255: 0 free, 254 occupied, 205 (0.80) occupied, 100 (0.39) unknown.
    world = load_greys(tmp_path, negate=1)
    assert world.walls.tolist() == [[False, True, True, True]]


def test_yaml_thresholds_move_the_free_and_occupied_bands(tmp_path: Path) -> None:
    # free_thresh 0.25 frees the 205 pixel; occupied_thresh 0.6 makes the 100 pixel occupied.
    world = load_greys(tmp_path, free_thresh=0.25, occupied_thresh=0.6)
    assert world.walls.tolist() == [[True, False, False, True]]
    lenient = load_greys(tmp_path, free_thresh=0.62, occupied_thresh=0.9)
    assert lenient.walls.tolist() == [[True, False, False, False]]


def test_yaml_scale_mode_treats_grades_as_free_not_unknown(tmp_path: Path) -> None:
    world = load_greys(tmp_path, mode="scale")
    assert world.walls.tolist() == [[True, False, False, False]]


def test_yaml_raw_mode_reads_percent_values(tmp_path: Path) -> None:
    # raw: the value is the occupancy percent; 100 (> 0.65) occupied, above 100 unknown.
    world = load_greys(tmp_path, rows=[[0, 50, 100, 101, 255, 64]], mode="raw", negate=1)
    assert world.walls.tolist() == [[False, False, True, True, True, False]]


def test_yaml_resampling_any_wall_pixel_makes_a_wall_tile(tmp_path: Path) -> None:
    free = 254
    rows = [[free] * 6 for _ in range(4)]
    rows[0][5] = 0  # top-right pixel
    rows[3][0] = 205  # bottom-left pixel, unknown
    write(tmp_path / "r.pgm", p5(rows))
    yaml_path = write(tmp_path / "r.yaml", nav2_yaml("r.pgm", resolution=0.25))
    fine = load_map_yaml(yaml_path, tile_size=0.25)
    assert fine.shape == (4, 6) and int(fine.walls.sum()) == 2
    half = load_map_yaml(yaml_path, tile_size=0.5)
    assert half.walls.tolist() == [[True, False, False], [False, False, True]]


def test_yaml_resampling_partial_tiles_and_straddling_pixels(tmp_path: Path) -> None:
    # 5 x 3 pixels of 0.3 m = 1.5 x 0.9 m -> tiles of 0.5 m: 3 x 2 (top row partial).
    rows = [[254] * 5 for _ in range(3)]
    rows[2][1] = 0  # bottom row, x in [0.3, 0.6): overlaps tiles 0 and 1
    rows[0][4] = 0  # top row (y in [0.6, 0.9)), x in [1.2, 1.5): the partial top row, tile 2
    write(tmp_path / "s.pgm", p2(rows))
    world = load_map_yaml(write(tmp_path / "s.yaml", nav2_yaml("s.pgm", resolution=0.3)), 0.5)
    assert world.walls.tolist() == [[True, True, False], [False, False, True]]


def test_yaml_image_path_is_relative_to_the_yaml(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path / "maps" / "img" / "m.pgm", p2([[255, 0]]))
    yaml_path = write(tmp_path / "maps" / "m.yaml", nav2_yaml("img/m.pgm"))
    monkeypatch.chdir(tmp_path)
    assert load_map_yaml(yaml_path, 0.5).walls.tolist() == [[False, True]]
    absolute = write(tmp_path / "abs.yaml", nav2_yaml(str(tmp_path / "maps" / "img" / "m.pgm")))
    assert load_map_yaml(absolute, 0.5).walls.tolist() == [[False, True]]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"resolution": None}, "missing required key.*resolution"),
        ({"negate": None, "free_thresh": None}, "missing required key.*free_thresh, negate"),
        ({"free_thresh": 0.7}, "free_thresh=0.7, occupied_thresh=0.65"),
        ({"occupied_thresh": 1.5}, "occupied_thresh=1.5"),
        ({"resolution": -0.05}, "resolution must be > 0"),
        ({"resolution": "fine"}, "resolution must be a finite number"),
        ({"origin": "[1, 2, 3, 4]"}, "origin must be"),
        ({"negate": 2}, "negate must be 0 or 1, got 2"),
        ({"mode": "fancy"}, "mode must be one of trinary, scale, raw, got 'fancy'"),
        ({"image": "missing.pgm"}, "image 'missing.pgm' not found"),
    ],
)
def test_bad_yaml_raises_map_error(tmp_path: Path, overrides: dict, message: str) -> None:
    with pytest.raises(MapError, match=message):
        load_greys(tmp_path, **overrides)


def test_yaml_file_problems(tmp_path: Path) -> None:
    with pytest.raises(MapError, match=r"none\.yaml: map YAML not found"):
        load_map_yaml(tmp_path / "none.yaml")
    with pytest.raises(MapError, match="expected a mapping"):
        load_map_yaml(write(tmp_path / "list.yaml", "- 1\n- 2\n"))
    with pytest.raises(MapError, match="invalid YAML"):
        load_map_yaml(write(tmp_path / "bad.yaml", "image: [unclosed\n"))
    with pytest.raises(MapError, match="tile_size must be"):
        load_greys(tmp_path, tile_size=0)


def test_yaml_all_wall_and_too_coarse_tiles(tmp_path: Path) -> None:
    with pytest.raises(MapError, match="all wall"):
        load_greys(tmp_path, rows=[[0, 205]])
    # Open pixels exist, but every 1 m tile also holds an occupied one.
    rows = [[254, 0, 254, 0]]
    with pytest.raises(MapError, match="smaller tile_size"):
        load_greys(tmp_path, rows=rows, tile_size=1.0)
    assert load_greys(tmp_path, rows=rows, tile_size=0.5).open_count == 2


@pytest.mark.skipif(importlib.util.find_spec("cv2") is not None, reason="opencv is installed")
def test_png_without_opencv_names_the_package(tmp_path: Path) -> None:
    write(tmp_path / "m.png", b"\x89PNG\r\n\x1a\n")
    yaml_path = write(tmp_path / "m.yaml", nav2_yaml("m.png"))
    with pytest.raises(MapError, match="opencv-python-headless"):
        load_map_yaml(yaml_path)


def test_load_custom_map_dispatches_on_extension(tmp_path: Path) -> None:
    pgm = write(tmp_path / "x.PGM", p2(PICTURE))
    np.testing.assert_array_equal(load_custom_map(pgm, tile_size=0.25).walls, EXPECTED)
    write(tmp_path / "g.pgm", p5(GREYS))
    yml = write(tmp_path / "g.yml", nav2_yaml("g.pgm"))
    assert load_custom_map(yml, 0.5).walls.tolist() == [[True, False, True, True]]
    with pytest.raises(MapError, match=r"unsupported custom map .*x\.png"):
        load_custom_map(tmp_path / "x.png")


# ---------------------------------------------------------------- real maps made elsewhere

needs_extra_maps = pytest.mark.skipif(
    EXTRA_MAPS is None or not EXTRA_MAPS.is_dir(),
    reason="warehouse.yaml (Nav2, 1.7 MB) and maes_example.pgm (MAES 2.0, GPL-3.0) do not ship "
    "with the project: set MAES_EXTRA_MAPS to a folder holding them (configs/maps/README.md)",
)


def _real_map(name: str) -> Path:
    return MAPS / name if (MAPS / name).is_file() else (EXTRA_MAPS or MAPS) / name


@pytest.mark.parametrize(
    ("name", "tile_size", "min_reachable"),
    [
        ("depot.yaml", 1.0, 250),
        pytest.param("warehouse.yaml", 1.0, 800, marks=needs_extra_maps),
        # The sandbox's pillars stand about 1 m apart: 1 m tiles cannot resolve the gaps.
        ("tb3_sandbox.yaml", 0.25, 200),
        pytest.param("maes_example.pgm", 1.0, 5000, marks=needs_extra_maps),
    ],
)
def test_real_maps_load_and_are_explorable(name: str, tile_size: float, min_reachable: int) -> None:
    world = load_custom_map(_real_map(name), tile_size)
    reachable = largest_open_region(world.walls)
    assert int(reachable.sum()) >= min_reachable
    assert int(reachable.sum()) >= 0.9 * world.open_count
    np.testing.assert_array_equal(world.rooms[0], reachable)


def test_shipped_map_sizes_and_metadata() -> None:
    sandbox = load_custom_map(MAPS / "tb3_sandbox.yaml", 0.25)
    assert sandbox.shape == (77, 77) and sandbox.origin_m == (-10.0, -10.0, 0.0)
    with pytest.raises(MapError, match="smaller tile_size"):
        load_custom_map(MAPS / "tb3_sandbox.yaml", 1.0)


@needs_extra_maps
def test_extra_map_sizes_and_metadata() -> None:
    warehouse = load_custom_map(EXTRA_MAPS / "warehouse.yaml", 1.0)
    # 1006 x 1674 px at 0.03 m = 30.18 x 50.22 m -> 31 x 51 tiles (partial tiles kept).
    assert warehouse.shape == (51, 31)
    assert warehouse.origin_m == (-15.1, -25.0, 0.0)
    example = load_custom_map(EXTRA_MAPS / "maes_example.pgm")
    pixels, _ = parse_pgm((EXTRA_MAPS / "maes_example.pgm").read_bytes())
    assert example.shape == (100, 100)
    np.testing.assert_array_equal(example.walls, (pixels == 0)[::-1])
