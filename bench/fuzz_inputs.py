"""Fuzz the simulator's inputs as a careless user or an attacker would; count outcomes per class.

Three classes of cases, each generated deterministically from ``(seed, class, index)``:

``configs``   mutated ``maes_config.yaml`` files: weird values at random key paths (huge, tiny,
              negative, NaN, strings, lists, bools), deleted and unknown keys, YAML-level damage
              (duplicate keys, YAML 1.1 traps, alias bombs, cyclic aliases, deep nesting,
              truncation, byte flips) and odd map paths (/dev/zero, a FIFO, ``~nosuchuser``, a
              directory, a NUL byte), also as a Nav2 map YAML's ``image``.
              A config that loads is run for a few ticks.
``maps``      corrupt or odd PGM, PNG and Nav2 YAML maps (bad headers, truncated or oversized
              data, sparse files, decompression bombs, bad keys, all-wall, tiny), loaded through
              a config and run for a few ticks.
``commands``  one call of the Simulation command API with valid or invalid arguments (strings,
              bools, complex numbers, dicts, misshaped arrays, NaN, huge numbers, lone
              surrogates, 2 MB texts, poses off the map), then a tick.

Outcomes: ``named error`` (ConfigError, MapError, CommandRejected), ``ran``, ``raw traceback``
(any other exception), ``hang`` (over the case's CPU-time budget), ``out of memory``
(MemoryError under the worker's address-space limit), ``crash`` (the worker died) and, for
commands, ``wrongly accepted`` (an invalid argument taken). Every case runs in a worker process
with an address-space limit (``--memory-gib``) and a CPU-time budget (``--case-seconds``); a
worker that stops answering is killed and counted as a hang.

Run:  scripts/with_env python bench/fuzz_inputs.py [--configs 500] [--maps 200]
      [--commands 1000] [--seed 1] [--case-seconds 20] [--memory-gib 4] [--show 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

OUTCOMES = (
    "named error",
    "ran",
    "raw traceback",
    "hang",
    "out of memory",
    "crash",
    "wrongly accepted",
)
CLASSES = ("configs", "maps", "commands")
ROOT = Path(__file__).resolve().parents[1]
#: Real Nav2 maps shipped with the project (configs/maps/README.md).
MAPS = ROOT / "configs" / "maps"
TICKS = 3


class CaseTimeout(Exception):
    """The case used up its CPU-time budget."""


# ------------------------------------------------------------------------------ configs
_WEIRD = [
    0,
    -1,
    1,
    2,
    3,
    7,
    10,
    99,
    100,
    101,
    5000,
    5001,
    2**31,
    2**63,
    -(2**63),
    10**30,
    -(10**30),
    1e308,
    -1e308,
    1e-9,
    1e9,
    1e6,
    0.5,
    1.5,
    -0.5,
    float("nan"),
    float("inf"),
    float("-inf"),
    True,
    False,
    None,
    "",
    "x",
    "1.0",
    "Default",
    [],
    [1],
    [0, 1, 2],
    {},
    {"a": 1},
    "a" * 10_000,
    0.01,
    0.001,
]
_TRAPS = [
    "1:30",
    "010",
    "0b11",
    "1_000",
    "yes",
    "off",
    "0o17",
    "1e3",
    "1.0e3",
    "0x1F",
    "~",
    "2001-12-14",
    ".NaN",
    "-.inf",
    "!!float 3",
    "!!str 5",
    "!!python/object:os.system []",
    "'" + "9" * 5000 + "'",
    "9" * 5000,
    "&a [1]",
    "*nope",
]


def _key_paths() -> list[str]:
    from maes_sim.core.config import key_paths

    return key_paths()


def _base_configs() -> list[dict]:
    small = {
        "number_of_robots": 2,
        "end_criteria": {"tick": 50},
        "map": {"width_in_tiles": 30, "height_in_tiles": 30},
    }
    bases = [
        small,
        {**small, "map": {"width_in_tiles": 40, "height_in_tiles": 30, "cave_config": {}}},
        {**small, "robot_spawn_config": {"spawn_at_hallway_ends": True}},
        {
            **small,
            "robot_spawn_config": {"biggest_room": True},
            "map": {"width_in_tiles": 40, "height_in_tiles": 40, "building_config": {}},
        },
    ]
    bases.append(
        {
            "number_of_robots": 3,
            "world": {"tile_size": 0.5},
            "map": {"custom_map_filename": str(MAPS / "depot.yaml")},
        }
    )
    bases.append(
        {
            "number_of_robots": 2,
            "world": {"tile_size": 0.25},
            "map": {"custom_map_filename": str(MAPS / "tb3_sandbox.yaml")},
        }
    )
    return bases


def _set(data: dict, path: str, value) -> None:
    *parents, leaf = path.split(".")
    node = data
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[leaf] = value


def _delete(data: dict, path: str) -> None:
    *parents, leaf = path.split(".")
    node = data
    for part in parents:
        node = node.get(part)
        if not isinstance(node, dict):
            return
    node.pop(leaf, None)


def _leaf_checks() -> dict:
    """Key path -> the schema's check object, for every leaf setting."""
    from dataclasses import fields

    from maes_sim.core.config import SimConfig

    out = {}

    def walk(cls, prefix):
        for f in fields(cls):
            path = f"{prefix}.{f.name}" if prefix else f.name
            if "section" in f.metadata:
                walk(f.metadata["section"], path)
            elif "check" in f.metadata:
                out[path] = f.metadata["check"]

    walk(SimConfig, "")
    return out


def _plausible(rng: np.random.Generator, check):
    """A value ``check`` accepts, biased to small and boundary values (keeps runs short)."""
    from maes_sim.core import config_checks as cc

    if isinstance(check, cc.Nullable):
        return None if rng.random() < 0.3 else _plausible(rng, check.inner)
    if isinstance(check, cc.Bool):
        return bool(rng.random() < 0.5)
    if isinstance(check, cc.Choice):
        return _pick(rng, list(check.options))
    if isinstance(check, cc.Int):
        lo = -50 if check.lo is None else check.lo
        hi = lo + 60 if check.hi is None else min(check.hi, lo + 60)
        return int(_pick(rng, [lo, hi, int(rng.integers(lo, hi + 1))]))
    if isinstance(check, cc.Float):
        lo = -50.0 if check.lo is None else check.lo
        hi = lo + 20.0 if check.hi is None else min(check.hi, lo + 20.0)
        value = float(_pick(rng, [lo, hi, rng.uniform(lo, hi)]))
        return value if not (check.lo_open and value == lo) else hi
    if isinstance(check, cc.IntList):
        return [int(v) for v in rng.integers(0, 1000, int(rng.integers(1, 4)))]
    return "results"


def _pick(rng: np.random.Generator, items):
    return items[int(rng.integers(len(items)))]


def _odd_path(rng: np.random.Generator, work: Path) -> str:
    fifo = work / "fifo.pgm"
    if not fifo.exists():
        os.mkfifo(fifo)
    return _pick(
        rng,
        [
            "/dev/zero",
            "/dev/null.pgm",
            str(fifo),
            "~nosuchuser_q/map.pgm",
            str(work),
            "a\0b.pgm",
            "x" * 5000 + ".pgm",
            "map.png",
            "missing.yaml",
            str(MAPS / "depot.yaml"),
            str(MAPS / "depot.pgm"),
            str(MAPS / "tb3_sandbox.yaml"),
            str(ROOT / "maes_config.yaml"),
        ],
    )


def _yaml_text(data) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10**9)


#: YAML aliases that refer to the value holding them (a loader that expands them never ends).
_CYCLES = [
    "loop: &c [*c]",
    "loop: &c {self: *c}",
    "loop: &c [1, [2, {x: *c}]]",
    "loop: &c\n  <<: *c",
    "&c [*c]",
    "&c {a: *c}",
]


def _damage_text(rng: np.random.Generator, text: str) -> str:
    lines = text.splitlines() or [""]
    op = int(rng.integers(9))
    if op == 0:  # a line twice: a duplicate key
        k = int(rng.integers(len(lines)))
        lines.insert(k, lines[k])
    elif op == 1:  # a YAML 1.1 trap or tagged scalar as some value
        k = int(rng.integers(len(lines)))
        if ":" in lines[k]:
            lines[k] = lines[k].split(":", 1)[0] + ": " + _pick(rng, _TRAPS)
    elif op == 2:  # billion laughs
        bomb = ["l0: &l0 [" + ", ".join(["lol"] * 10) + "]"]
        bomb += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 10)]
        lines = bomb + lines
    elif op == 3:  # deep nesting
        depth = int(rng.choice([50, 1000, 100_000]))
        lines.append("number_of_robots: " + "[" * depth + "]" * depth)
    elif op == 4:  # truncated
        return text[: int(rng.integers(len(text) + 1))]
    elif op == 5:  # random bytes flipped (kept as text)
        chars = list(text)
        for _ in range(int(rng.integers(1, 6))):
            if chars:
                chars[int(rng.integers(len(chars)))] = chr(int(rng.integers(0, 0x3000)))
        return "".join(chars)
    elif op == 6:  # tabs and odd indentation
        k = int(rng.integers(len(lines)))
        lines[k] = "\t" + lines[k]
    elif op == 7:  # a merge key from an alias
        lines = ["base: &b {number_of_robots: 2}", "<<: *b"] + lines
    else:  # an alias inside the value it names: a cycle (sequence, mapping, merge, whole file)
        cycle = _pick(rng, _CYCLES)
        if cycle.startswith("&"):
            return cycle + "\n"
        lines = [cycle] + lines
    return "\n".join(lines) + "\n"


def make_config_case(rng: np.random.Generator, work: Path) -> Path:
    """Write one mutated config file into ``work`` and return its path."""
    data = json.loads(json.dumps(_pick(rng, _base_configs())))
    paths = _key_paths()
    if rng.random() < 0.4:  # values each key accepts alone: do the combinations run?
        checks = _leaf_checks()
        for _ in range(int(rng.integers(1, 5))):
            path = _pick(rng, sorted(checks))
            _set(data, path, _plausible(rng, checks[path]))
        path = work / "config.yaml"
        path.write_text(_yaml_text(data), encoding="utf-8")
        return path
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(10))
        path = _pick(rng, paths)
        if op <= 4:
            value = _pick(rng, _WEIRD)
            if isinstance(value, int) and not isinstance(value, bool) and rng.random() < 0.3:
                value = int(rng.integers(-5, 200))
            _set(data, path, value)
        elif op == 5:
            _delete(data, path)
        elif op == 6:
            _set(data, path.rsplit(".", 1)[0] + ".junk_key" if "." in path else "junk", 1)
        elif op == 7:
            _set(data, "map.custom_map_filename", _odd_path(rng, work))
        else:
            _set(data, path, _pick(rng, [{"deep": {"er": [1, {"x": None}]}}, [[[]]], "text"]))
    text = _yaml_text(data)
    if rng.random() < 0.35:
        text = _damage_text(rng, text)
    path = work / "config.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


# --------------------------------------------------------------------------------- maps
def _png(width: int, height: int, rows: bytes | None = None) -> bytes:
    """A PNG; without ``rows``, white rows (only the first 50 written: a bomb's header)."""
    squeeze = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * width
    data = (
        squeeze.compress(rows)
        if rows is not None
        else b"".join(squeeze.compress(row) for _ in range(min(height, 50)))
    ) + squeeze.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def _pgm(rng: np.random.Generator, path: Path) -> None:
    op = int(rng.integers(16))
    op = 0 if op >= 12 else op  # a third of them well formed
    w, h = (int(v) for v in rng.integers(1, 60, 2))
    pixels = (rng.random((h, w)) > 0.25).astype(np.uint8) * 254
    pixels[0, :] = pixels[-1, :] = pixels[:, 0] = pixels[:, -1] = 0
    good = b"P5\n%d %d\n255\n" % (w, h) + pixels.tobytes()
    if op == 0:
        data = good
    elif op == 1:
        data = good[: int(rng.integers(len(good)))]
    elif op == 2:
        data = good + bytes(int(rng.integers(1, 100_000)))
    elif op == 3:
        data = b"P5\n%d %d\n%d\n" % (
            int(rng.choice([0, 1, 70000, 10**6, 10**12])),
            int(rng.choice([0, 1, 3, 10**6])),
            int(rng.choice([0, 1, 255, 65535, 70000])),
        ) + bytes(64)
    elif op == 4:
        path.write_bytes(b"P5\n1000 1000\n255\n")
        with open(path, "r+b") as handle:
            handle.truncate(int(rng.choice([1 << 20, 1 << 30, 5 << 30])))
        return
    elif op == 5:  # ASCII with comments everywhere
        body = "\n".join(" ".join(str(v) for v in row) for row in pixels)
        data = f"P2\n# c\n{w} # c\n{h}\n# c\n255\n{body}\n".encode()
    elif op == 6:
        data = b"P2\n3 1\n255\n0 -1 x\n"
    elif op == 7:
        data = b"P2\n2 1\n255\n" + b"9" * int(rng.choice([20, 5000])) + b" 1\n"
    elif op == 8:  # all wall, or a single open pixel
        data = b"P5\n%d %d\n255\n" % (w, h) + bytes(w * h - 1) + bytes([int(rng.integers(2))])
    elif op == 9:
        data = bytes(rng.integers(0, 256, int(rng.integers(0, 200)), dtype=np.uint8))
    elif op == 10:
        data = b"P5" + b" " * int(rng.integers(1, 5)) + b"#" * 100_000
    else:
        data = b"P5\n4 4\n65535\n" + bytes(int(rng.integers(0, 40)))
    path.write_bytes(data)


def _nav2_yaml(rng: np.random.Generator, work: Path, image: str) -> str:
    fifo = work / "fifo.png"
    if not fifo.exists():
        os.mkfifo(fifo)
    doc = {
        "image": image,
        "resolution": 0.05,
        "origin": [0.0, 0.0, 0.0],
        "occupied_thresh": 0.65,
        "free_thresh": 0.25,
        "negate": 0,
        "mode": "trinary",
    }
    for _ in range(max(0, int(rng.integers(-2, 3)))):
        key = _pick(rng, list(doc) + ["extra"])
        value = _pick(
            rng,
            _WEIRD
            + ["scale", "raw", str(work), "/dev/zero", "\0", "a\0b.png", "fifo.png", str(fifo)]
            + [[1, 2], [1e308, 0, 0], 1e-300],
        )
        if rng.random() < 0.3:
            doc.pop(key, None)
        else:
            doc[key] = value
    text = _yaml_text(doc)
    return _damage_text(rng, text) if rng.random() < 0.2 else text


def make_map_case(rng: np.random.Generator, work: Path) -> tuple[Path, float, int]:
    """Write one odd map (and its image) into ``work``; return (path, tile_size, robots)."""
    kind = int(rng.integers(4))
    tile_size = float(_pick(rng, [1.0, 1.0, 0.5, 0.25, 0.05, 0.001, 10.0, 1000.0]))
    robots = int(_pick(rng, [1, 2, 5, 50]))
    if kind == 0:
        path = work / "m.pgm"
        _pgm(rng, path)
        return path, tile_size, robots
    image = work / ("img.pgm" if kind == 1 else "img.png")
    if kind == 1:
        _pgm(rng, image)
    else:
        op = int(rng.integers(5))
        if op == 0:
            image.write_bytes(_png(int(rng.choice([20_000, 60_000])), 20_000))
        elif op == 4:  # a real Nav2 map's image
            image = work / "img.pgm"
            image.write_bytes((MAPS / "tb3_sandbox.pgm").read_bytes())
        elif op == 1:
            image.write_bytes(_png(8, 8)[: int(rng.integers(8, 60))])
        elif op == 2:
            image.write_bytes(
                _png(
                    16,
                    16,
                    b"".join(
                        b"\x00" + bytes(rng.integers(0, 256, 16, dtype=np.uint8)) for _ in range(16)
                    ),
                )
            )
        else:
            image.write_bytes(bytes(rng.integers(0, 256, 300, dtype=np.uint8)))
    path = work / "m.yaml"
    path.write_text(_nav2_yaml(rng, work, image.name), encoding="utf-8", errors="surrogatepass")
    return path, tile_size, robots


# ----------------------------------------------------------------------------- commands
_GOOD_NUMBERS = [0.0, 1.0, -2.5, 3, np.float32(0.5), np.int16(2), 1e6]
_BAD_NUMBERS = [
    float("nan"),
    float("inf"),
    1e7,
    "1.0",
    True,
    np.True_,
    1 + 2j,
    {"x": 1},
    None,
    [1.0, "a"],
    b"1",
    10**400,
    object(),
    [[1.0], [2.0, 3.0]],
    "",
    [True, 1.0],
]
_GOOD_ROBOTS = [0, 1, 2, np.int64(1)]
_BAD_ROBOTS = [-1, 3, 2**70, True, 1.0, "0", None, {"r": 0}, [0.5], object()]
_TEXTS = [
    "hello",
    "x" * 1024,
    "x" * 1025,
    "x" * 2_000_000,
    "",
    "abc\ud800",
    "\udfff",
    "é" * 600,
    None,
    5,
    b"bytes",
    ["list"],
]


def _text_ok(text) -> bool:
    try:
        return isinstance(text, str) and 0 < len(text.encode("utf-8")) <= 1024
    except UnicodeEncodeError:
        return False


def make_command_case(rng: np.random.Generator, n: int = 3):
    """(method name, args, kwargs, valid) of one command call on an ``n``-robot simulation."""
    good = rng.random() < 0.4

    def number():
        return _pick(rng, _GOOD_NUMBERS) if good else _pick(rng, _BAD_NUMBERS + _GOOD_NUMBERS)

    def robot():
        return _pick(rng, _GOOD_ROBOTS) if good else _pick(rng, _BAD_ROBOTS + _GOOD_ROBOTS)

    method = _pick(
        rng,
        [
            "set_velocity",
            "set_velocities",
            "move",
            "rotate",
            "move_continuous",
            "rotate_continuous",
            "stop",
            "broadcast",
            "deposit_tag",
            "place_robots",
        ],
    )
    if method == "set_velocity":
        args, kwargs = (robot(), number(), number()), {}
    elif method == "set_velocities":
        shape = (n,) if good else _pick(rng, [(n,), (n, 1), (n + 1,), (), (0,)])
        args = tuple(np.full(shape, 0.5) if rng.random() < 0.8 else number() for _ in range(2))
        kwargs = {}
    elif method in ("move", "rotate"):
        args, kwargs = (robot(), number()), {}
    elif method in ("move_continuous", "rotate_continuous"):
        key = "reverse" if method == "move_continuous" else "counter_clockwise"
        flag = _pick(rng, [True, False, np.False_] if good else [True, "no", 0, 1, None, [1]])
        args, kwargs = (robot(),), {key: flag}
    elif method == "stop":
        args, kwargs = (robot(),), {}
    elif method in ("broadcast", "deposit_tag"):
        args, kwargs = (robot(), _pick(rng, _TEXTS)), {}
    else:
        pose = _pick(
            rng,
            [
                [-3.0, -3.0, 0.0],
                [50.0, 0.0, 0.0],
                [-1e300, 0, 0],
                [0.5, 0.5, 0],
                ["1", "2", "0"],
                [1 + 1j, 0, 0],
                [True, 0.0, 0.0],
                [1.0, 2.0],
            ],
        )
        args, kwargs = ([pose] * n if rng.random() < 0.5 else [pose],), {}
    return method, args, kwargs, _command_valid(method, args, kwargs, n)


def _command_valid(method: str, args, kwargs, n: int) -> bool | None:
    """Whether the call must be accepted (True), refused (False), or may be either (None)."""
    from numbers import Integral, Real

    def is_robot(r) -> bool:
        return isinstance(r, Integral) and not isinstance(r, bool | np.bool_) and 0 <= r < n

    def is_number(v) -> bool:
        return (
            isinstance(v, Real) and not isinstance(v, bool | np.bool_) and abs(float(v)) <= 1e6
            if isinstance(v, Real) and abs(v) < 1e308
            else False
        )

    if method == "set_velocities":
        ok = all(
            (isinstance(a, np.ndarray) and a.shape in ((n,), ())) or is_number(a) for a in args
        )
        return ok
    if method == "place_robots":
        return None if np.shape(args[0]) == (n, 3) else False
    if not is_robot(args[0]):
        return False
    if method in ("set_velocity", "move", "rotate"):
        return all(is_number(v) for v in args[1:])
    if method in ("move_continuous", "rotate_continuous"):
        return isinstance(next(iter(kwargs.values())), bool | np.bool_)
    if method in ("broadcast", "deposit_tag"):
        return None if _text_ok(args[1]) else False  # rate limits may refuse a good one
    return True


# ------------------------------------------------------------------------------ worker
def _named_errors() -> tuple[type, ...]:
    from maes_sim.core import CommandRejected, ConfigError, MapError

    return (ConfigError, MapError, CommandRejected)


def _run_config(path: Path) -> None:
    from maes_sim.core import Simulation, load_config

    sim = Simulation(load_config(path))
    for _ in range(TICKS):
        sim.step()


def _run_map(path: Path, tile_size: float, robots: int) -> None:
    from maes_sim.core import Simulation, config_from_dict

    config = config_from_dict(
        {
            "number_of_robots": robots,
            "world": {"tile_size": tile_size},
            "map": {"custom_map_filename": str(path)},
        }
    )
    sim = Simulation(config)
    for _ in range(TICKS):
        sim.step()


class _CommandBed:
    """One small simulation reused across command cases (refused commands change nothing)."""

    def __init__(self) -> None:
        from maes_sim.core import SimConfig, Simulation, WorldMap

        walls = np.zeros((12, 20), dtype=bool)
        walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
        walls[6, 10] = True
        self.sim = Simulation(SimConfig(number_of_robots=3), world=WorldMap(walls=walls))

    def run(self, method, args, kwargs, valid) -> str:
        from maes_sim.core import CommandRejected

        try:
            getattr(self.sim, method)(*args, **kwargs)
            outcome = "wrongly accepted" if valid is False else "ran"
        except CommandRejected as exc:
            if len(str(exc)) > 2000:
                raise AssertionError(f"a {len(str(exc))}-character message") from None
            outcome = "named error"
        self.sim.step()
        if not np.isfinite(self.sim.poses).all():
            raise AssertionError("non-finite poses after the command")
        return outcome


def _on_budget(signum, frame) -> None:
    raise CaseTimeout


def worker(kind: str, seed: int, start: int, stop: int, case_seconds: float) -> None:
    """Run cases ``start..stop-1`` of ``kind``, printing one JSON line per case."""
    named = _named_errors()
    signal.signal(signal.SIGVTALRM, _on_budget)
    bed = _CommandBed() if kind == "commands" else None
    with tempfile.TemporaryDirectory(prefix="maes-fuzz-") as tmp:
        for i in range(start, stop):
            rng = np.random.default_rng([seed, CLASSES.index(kind), i])
            work = Path(tmp) / str(i)
            work.mkdir()
            detail = ""
            signal.setitimer(signal.ITIMER_VIRTUAL, case_seconds)  # CPU time: load-independent
            try:
                if kind == "configs":
                    _run_config(make_config_case(rng, work))
                    outcome = "ran"
                elif kind == "maps":
                    _run_map(*make_map_case(rng, work))
                    outcome = "ran"
                else:
                    case = make_command_case(rng)
                    detail = f"{case[0]}{_short(case[1])} {case[2]}"
                    outcome = bed.run(*case)
            except named as exc:
                outcome, detail = "named error", f"{type(exc).__name__}: {_short(str(exc))}"
            except CaseTimeout:
                outcome = "hang"
            except MemoryError:
                outcome = "out of memory"
            except RecursionError as exc:
                outcome, detail = "raw traceback", f"RecursionError: {_short(str(exc))}"
            except Exception as exc:  # noqa: BLE001 - every other exception is the finding
                import traceback

                outcome = "raw traceback"
                detail = "".join(traceback.format_exception(exc, limit=-4))[-1500:]
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            _clear(work)
            print(json.dumps({"i": i, "outcome": outcome, "detail": detail}), flush=True)


def _short(value, limit: int = 300) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clear(work: Path) -> None:
    for child in work.iterdir():
        child.unlink()
    work.rmdir()


# ------------------------------------------------------------------------------ parent
def run_class(
    kind: str, count: int, seed: int = 1, case_seconds: float = 20.0, memory_gib: float = 4.0
) -> tuple[Counter, list[dict]]:
    """Run ``count`` cases of ``kind`` in worker processes; (outcome counts, non-clean cases).

    A worker gets ``memory_gib`` of address space; a case over ``case_seconds`` of CPU time is
    a hang, and a worker silent for 3x that (plus start-up) is killed and the case counted as
    a hang. A worker that dies is a crash; the next worker goes on with the next case.
    """
    counts: Counter = Counter()
    bad: list[dict] = []
    next_case = 0
    while next_case < count:
        proc = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                kind,
                str(seed),
                str(next_case),
                str(count),
                str(case_seconds),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: _limit_memory(memory_gib),
        )
        wait = 3 * case_seconds + 60  # the first case includes imports and numba's cache
        while next_case < count:
            ready, _, _ = select.select([proc.stdout], [], [], wait)
            line = proc.stdout.readline() if ready else ""
            if not line:
                alive = proc.poll() is None
                if alive:
                    proc.kill()  # our own worker, by its handle
                proc.wait()
                outcome = "hang" if alive else "crash"
                err = proc.stderr.read()[-1500:]
                if outcome == "crash" and "MemoryError" in err:
                    outcome = "out of memory"
                counts[outcome] += 1
                bad.append({"i": next_case, "outcome": outcome, "detail": err})
                next_case += 1
                break
            result = json.loads(line)
            counts[result["outcome"]] += 1
            if result["outcome"] not in ("named error", "ran"):
                bad.append(result)
            next_case = result["i"] + 1
            wait = 3 * case_seconds + 10
        else:
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    return counts, bad


def _limit_memory(gib: float) -> None:
    limit = int(gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        kind, seed, start, stop, seconds = sys.argv[2:7]
        worker(kind, int(seed), int(start), int(stop), float(seconds))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=500)
    parser.add_argument("--maps", type=int, default=200)
    parser.add_argument("--commands", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--case-seconds", type=float, default=20.0)
    parser.add_argument("--memory-gib", type=float, default=4.0)
    parser.add_argument("--show", type=int, default=5, help="non-clean cases to print per class")
    args = parser.parse_args()
    print(f"{'class':>10} {'tried':>6} " + " ".join(f"{o:>16}" for o in OUTCOMES) + "  seconds")
    for kind in CLASSES:
        count = getattr(args, kind)
        if count <= 0:
            continue
        start = time.perf_counter()
        counts, bad = run_class(kind, count, args.seed, args.case_seconds, args.memory_gib)
        print(
            f"{kind:>10} {count:>6} "
            + " ".join(f"{counts[o]:>16}" for o in OUTCOMES)
            + f"  {time.perf_counter() - start:7.1f}",
            flush=True,
        )
        for case in bad[: args.show]:
            print(f"    case {case['i']}: {case['outcome']}: {case['detail']}", flush=True)


if __name__ == "__main__":
    main()
