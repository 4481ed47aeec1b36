"""docs/config_reference.md documents exactly the keys the config loader accepts, with their
defaults as the schema has them."""

from __future__ import annotations

import math
import re
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
import yaml

from maes_sim.core import SimConfig, key_paths

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "config_reference.md"
ROW = re.compile(r"^\| `([a-z_.]+)` \| (.*?) \|", re.M)


def _rows() -> dict[str, str]:
    rows = ROW.findall(DOC.read_text())
    keys = [k for k, _ in rows]
    assert len(keys) == len(set(keys)), "a key has two rows"
    return dict(rows)


def _leaf_keys() -> set[str]:
    paths = key_paths()
    return {p for p in paths if not any(q.startswith(p + ".") for q in paths)}


def _default(path: str):
    """The schema's default of a leaf key, also inside optional sections (None by default,
    e.g. ``map.cave_config``): the section class's own field default."""
    cls = SimConfig
    *sections, leaf = path.split(".")
    for part in sections:
        cls = next(f for f in fields(cls) if f.name == part).metadata["section"]
    f = next(f for f in fields(cls) if f.name == leaf)
    value = f.default if f.default is not MISSING else f.default_factory()
    return _plain(value)


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def test_every_loader_key_has_a_row_and_every_row_is_a_key():
    documented = set(_rows())
    assert sorted(_leaf_keys() - documented) == [], "keys the loader accepts but the doc lacks"
    # A row may also document an optional section as a whole (e.g. spawn_together: a mapping).
    assert sorted(documented - set(key_paths())) == [], "rows for keys the loader rejects"


@pytest.mark.parametrize("key", sorted(_leaf_keys()))
def test_documented_default_is_the_schema_default(key):
    cell = _rows()[key]
    written = re.fullmatch(r"`(.*)`", cell.strip())
    assert written, f"{key}: default cell {cell!r} is not one `value`"
    documented = yaml.safe_load(written.group(1))
    actual = _default(key)
    if isinstance(actual, float) and isinstance(documented, int | float):
        assert documented == actual or (math.isinf(actual) and math.isinf(documented))
    else:
        assert documented == actual, f"{key}: doc says {documented!r}, schema has {actual!r}"
