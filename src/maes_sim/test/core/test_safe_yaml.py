"""The strict YAML loader and the file checks every user file goes through (issue 17).

Each case is a real file on disk read through the public loaders (``load_config``,
``load_custom_map``); every failure must be the loader's named error, quickly, with a short
message.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from maes_sim.core import ConfigError, MapError, load_config
from maes_sim.core.safe_yaml import MAX_YAML_DEPTH, MAX_YAML_NODES, load_yaml, short_repr
from maes_sim.core.world import load_custom_map, load_map_yaml


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _laughs(levels: int, fan: int = 10) -> str:
    names = [f"l{i}" for i in range(levels + 1)]
    lines = [f"{names[0]}: &{names[0]} [" + ", ".join(["lol"] * fan) + "]"]
    for prev, name in zip(names, names[1:], strict=False):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * fan) + "]")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ YAML 1.1 versus 1.2


@pytest.mark.parametrize(
    ("scalar", "fragment"),
    [
        ("1:30", "base-60"),
        ("010", "octal"),
        ("00", "octal"),
        ("1_000", "without '_'"),
        ("0b101", "binary"),
        ("yes", "boolean"),
        ("Off", "boolean"),
    ],
)
def test_yaml_11_traps_are_refused_with_the_reason(tmp_path, scalar, fragment):
    with pytest.raises(ConfigError) as info:
        load_config(_config(tmp_path, f"number_of_robots: {scalar}\n"))
    message = str(info.value)
    assert message.startswith(str(tmp_path / "c.yaml"))
    assert f"'{scalar}' is ambiguous" in message and fragment in message
    assert "line 1, column 19" in message


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1e3", 1000.0),
        ("1.0e3", 1000.0),
        ("1.5E-1", 0.15),
        ("0o17", 15),
        ("0x1F", 31),
        ("'yes'", "yes"),
        ("'1:30'", "1:30"),
        ("2001-12-14", "2001-12-14"),  # YAML 1.1 makes a date of it; 1.2 keeps the text
        ("!!int '010'", 10),
        (".inf", float("inf")),
    ],
)
def test_yaml_12_scalars_read_as_a_user_expects(text, value):
    assert load_yaml(f"a: {text}\n", "x.yaml", ValueError) == {"a": value}


def test_exponent_numbers_reach_the_config():
    # The README's advice: 1000, 1e3 and 1.0e3 are the same number.
    for text in ("1000", "1e3", "1.0e3"):
        data = load_yaml(f"robot_constraints: {{broadcast_range: {text}}}\n", "x", ValueError)
        assert data["robot_constraints"]["broadcast_range"] == 1000


# ------------------------------------------------------------------ budgets


def test_billion_laughs_is_refused_quickly_in_config_and_nav2_map(tmp_path):
    # 10^10 values once expanded, 100 nodes on disk: before the budget, the error message's
    # repr of the value ran for hours.
    text = _laughs(9)
    with pytest.raises(ConfigError, match=f"more than {MAX_YAML_NODES} values through aliases"):
        load_config(_config(tmp_path, text))
    nav2 = tmp_path / "m.yaml"
    nav2.write_text(text)
    with pytest.raises(MapError, match="through aliases"):
        load_map_yaml(nav2)


_NAV2 = (
    "image: {image}\nresolution: 0.05\norigin: [0, 0, 0]\noccupied_thresh: 0.65\n"
    "free_thresh: 0.25\nnegate: 0\n"
)

#: Runs a loader on a file in a fresh interpreter and prints the error's type and message.
_LOAD_IN_CHILD = """
import sys
from maes_sim.core import load_config
from maes_sim.core.world import load_map_yaml
loader = {"config": load_config, "nav2": load_map_yaml}[sys.argv[1]]
try:
    loader(sys.argv[2])
except Exception as exc:
    print(type(exc).__name__, exc)
else:
    print("loaded")
"""


def _load_with_timeout(kind: str, path: Path, seconds: float = 60.0) -> str:
    """What loading ``path`` printed; a loader still running after ``seconds`` fails the test
    (a hang must fail, not hang the suite)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _LOAD_IN_CHILD, kind, str(path)],
            capture_output=True,
            text=True,
            timeout=seconds,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {path.name} ({kind}) did not end within {seconds:g} s")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.mark.parametrize(
    "text",
    [
        "loop: &c [*c]\n",  # through a sequence
        "loop: &c {self: *c}\n",  # through a mapping
        "number_of_robots: 2\nloop: &c [1, [2, {x: *c}]]\n",  # deeper down
        "loop: &c\n  <<: *c\n",  # through a merge key
        "&c [*c]\n",  # a one-line file
        "&c {a: *c}\n",
    ],
)
def test_a_cyclic_alias_is_a_named_error_at_once(tmp_path, text):
    # PyYAML builds such a document as an infinite value; the expansion budget's walk over it
    # used to loop for ever with growing memory (issue 22).
    out = _load_with_timeout("config", _config(tmp_path, text))
    assert out.startswith("ConfigError ") and "a cycle" in out, out
    assert "line 1" in out or "line 2" in out, out  # where the cycle is
    nav2 = tmp_path / "m.yaml"
    nav2.write_text(text)
    out = _load_with_timeout("nav2", nav2)
    assert out.startswith("MapError ") and "a cycle" in out, out


def test_a_nav2_map_whose_image_is_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo.png")  # reading its header would block for ever
    nav2 = tmp_path / "m.yaml"
    nav2.write_text(_NAV2.format(image="fifo.png"))
    out = _load_with_timeout("nav2", nav2)
    assert out.startswith("MapError ") and "not a regular file (a FIFO)" in out, out
    config = _config(tmp_path, "map: {custom_map_filename: m.yaml}\n")
    assert _load_with_timeout("config", config) == "loaded"  # the map is read by Simulation


def test_small_alias_use_is_fine():
    data = load_yaml(_laughs(2), "x.yaml", ValueError)  # 1,000 values once expanded
    assert len(data["l2"]) == 10 and data["l2"][0] is data["l2"][1]


def test_deep_nesting_and_huge_integers_are_named(tmp_path):
    deep = "a: " + "[" * 2000 + "]" * 2000 + "\n"
    with pytest.raises(ConfigError, match=f"nesting deeper than {MAX_YAML_DEPTH}"):
        load_config(_config(tmp_path, deep))
    with pytest.raises(ConfigError, match="an integer of 5000 digits is too long"):
        load_config(_config(tmp_path, "number_of_robots: " + "7" * 5000 + "\n"))


def test_error_messages_stay_short(tmp_path):
    huge = "x" * 2_000_000
    for text in (
        f"{huge}: 1\n",
        f"map: {{custom_map_filename: '{huge}.pgm'}}\n",
        f"number_of_robots: '{huge}'\n",
        f"random_seeds: [{', '.join(['-1'] * 9000)}]\n",
    ):
        with pytest.raises(ConfigError) as info:
            load_config(_config(tmp_path, text))
        assert len(str(info.value)) < 1000, str(info.value)[:200]


def test_short_repr_is_bounded_on_shared_structures():
    value: list = ["lol"]
    for _ in range(40):
        value = [value] * 10  # 10^40 leaves if walked in full
    assert len(short_repr(value)) <= 60


@pytest.mark.parametrize(
    "text",
    [
        "number_of_robots: 1\nnumber_of_robots: 2\n",
        "map:\n  cave_config: {}\n  cave_config: {}\n",
    ],
)
def test_duplicate_keys_are_refused(tmp_path, text):
    with pytest.raises(ConfigError, match="appears twice"):
        load_config(_config(tmp_path, text))


def test_duplicate_keys_in_a_nav2_map_are_refused(tmp_path):
    (tmp_path / "m.pgm").write_bytes(b"P2\n2 1\n255\n0 254\n")
    path = tmp_path / "m.yaml"
    path.write_text(
        "image: m.pgm\nresolution: 0.5\nresolution: 0.05\norigin: [0, 0, 0]\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\nnegate: 0\n"
    )
    with pytest.raises(MapError, match="key 'resolution' appears twice"):
        load_map_yaml(path)


# ------------------------------------------------------------------ files before reading


def test_special_files_are_refused_without_reading(tmp_path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # opening it for reading would block forever
    with pytest.raises(ConfigError, match="not a regular file \\(a FIFO\\)"):
        load_config(fifo)
    with pytest.raises(ConfigError, match="a character device"):
        load_config("/dev/zero")
    pgm = tmp_path / "fifo.pgm"
    os.mkfifo(pgm)
    with pytest.raises(MapError, match="a FIFO"):
        load_custom_map(pgm)


def test_oversized_config_is_refused_before_reading(tmp_path):
    path = tmp_path / "big.yaml"
    with open(path, "wb") as handle:
        handle.truncate(3 << 30)  # sparse: 3 GiB that take no disk space
    with pytest.raises(ConfigError, match="3.0 GiB, more than the 1.0 MiB allowed"):
        load_config(path)


def test_sparse_pgm_with_a_small_header_is_refused(tmp_path):
    path = tmp_path / "sparse.pgm"
    with open(path, "wb") as handle:
        handle.write(b"P5\n100 100\n255\n")
        handle.truncate(5 << 30)
    with pytest.raises(MapError, match="5.0 GiB, more than the 256.0 MiB allowed"):
        load_custom_map(path)
    with open(path, "r+b") as handle:
        handle.truncate(1 << 20)  # within the cap, but far more than 100x100 pixels
    with pytest.raises(MapError, match="header declares 100x100 pixels"):
        load_custom_map(path)


def test_pgm_header_asking_for_too_many_pixels(tmp_path):
    path = tmp_path / "huge.pgm"
    path.write_bytes(b"P5\n60000 60000\n255\n\0\0\0")
    with pytest.raises(MapError, match="60000x60000 is too large"):
        load_custom_map(path)


def _png(path: Path, width: int, height: int) -> None:
    squeeze = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * width
    data = b"".join(squeeze.compress(row) for _ in range(height)) + squeeze.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def test_png_decompression_bomb_is_refused_from_its_header(tmp_path):
    _png(tmp_path / "bomb.png", 12000, 12000)  # ~0.2 MB on disk, 144 M pixels decoded
    assert (tmp_path / "bomb.png").stat().st_size < 1 << 20
    path = tmp_path / "bomb.yaml"
    path.write_text(
        "image: bomb.png\nresolution: 1.0\norigin: [0, 0, 0]\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\nnegate: 0\n"
    )
    with pytest.raises(MapError, match="12000x12000"):
        load_map_yaml(path)


def test_nav2_map_resampled_beyond_the_tile_budget(tmp_path):
    (tmp_path / "m.pgm").write_bytes(b"P2\n2 1\n255\n0 254\n")
    path = tmp_path / "m.yaml"
    path.write_text(
        "image: m.pgm\nresolution: 1e6\norigin: [0, 0, 0]\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\nnegate: 0\n"
    )
    with pytest.raises(MapError, match="more than the 25000000 allowed"):
        load_map_yaml(path, tile_size=0.001)


def test_unknown_user_in_a_map_path_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="custom_map_filename: no such file"):
        load_config(_config(tmp_path, "map: {custom_map_filename: ~nosuchuser_x/map.pgm}\n"))


def test_not_utf8_and_nul_in_paths(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"number_of_robots: 2\n\xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)
    with pytest.raises(ConfigError, match="config file path cannot contain a NUL byte"):
        load_config(str(tmp_path / "a\0b.yaml"))
    with pytest.raises(ConfigError, match="custom_map_filename: a path cannot contain a NUL"):
        load_config(_config(tmp_path, 'map: {custom_map_filename: "a\\0b.pgm"}\n'))
    nav2 = tmp_path / "m.yaml"
    nav2.write_text(_NAV2.format(image='"a\\0b.png"'))
    with pytest.raises(MapError, match="image 'a\\\\x00b.png' contains a NUL byte"):
        load_map_yaml(nav2)


def test_png_cut_inside_its_header_is_a_map_error(tmp_path):
    # Found by bench/fuzz_inputs.py: a PNG shorter than its IHDR chunk.
    pytest.importorskip("cv2", reason="PNG maps are read with opencv (absent in the image venv)")
    _png(tmp_path / "cut.png", 8, 8)
    (tmp_path / "cut.png").write_bytes((tmp_path / "cut.png").read_bytes()[:20])
    path = tmp_path / "cut.yaml"
    path.write_text(
        "image: cut.png\nresolution: 1.0\norigin: [0, 0, 0]\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\nnegate: 0\n"
    )
    with pytest.raises(MapError, match="not a readable image"):
        load_map_yaml(path)
