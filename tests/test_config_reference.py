"""docs/config_reference.md documents exactly the keys the config loader accepts.

(The documented defaults are checked against the schema's by
``src/maes_sim/test/core/test_config.py::test_reference_documents_every_key_with_its_default``.)
"""

from __future__ import annotations

import re
from pathlib import Path

from maes_sim.core import key_paths

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


def test_every_loader_key_has_a_row_and_every_row_is_a_key():
    documented = set(_rows())
    assert sorted(_leaf_keys() - documented) == [], "keys the loader accepts but the doc lacks"
    # A row may also document an optional section as a whole (e.g. spawn_together: a mapping).
    assert sorted(documented - set(key_paths())) == [], "rows for keys the loader rejects"


def test_every_robot_type_key_has_a_row():
    from maes_sim.core.robot_types import RobotTypeSpec, TypeCommunication, TypeLidar, TypeMotion

    rows = set(re.findall(r"^\| `robot_types\.<name>\.([a-z_.]+)` \|", DOC.read_text(), re.M))
    keys = {k for k in RobotTypeSpec.KEYS if k not in ("motion", "lidar", "communication")}
    keys |= {f"motion.{k}" for k in TypeMotion.KEYS} | {f"lidar.{k}" for k in TypeLidar.KEYS}
    keys |= {f"communication.{k}" for k in TypeCommunication.KEYS}
    assert sorted(keys - rows) == [], "robot type keys the doc lacks"
    assert sorted(rows - keys) == [], "rows for robot type keys the loader rejects"
