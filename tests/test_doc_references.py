"""The docs name what exists: every relative link resolves, and every dotted module path does.

After a module moves, a stale ``maes_bringup.embedded`` in a doc or a Makefile recipe fails here
instead of on a reader's machine.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Files whose dotted names are checked: the docs, and the commands that run modules by name.
NAMED = [*DOCS, ROOT / "Makefile", *sorted((ROOT / "bench").glob("*.py"))]
DOTTED = re.compile(r"\b(maes_(?:sim|controller|bringup)(?:\.[A-Za-z_]\w*)+)")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _dotted_names() -> list[str]:
    return sorted({m for path in NAMED for m in DOTTED.findall(path.read_text())})


def _links() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if not re.match(r"[a-z]+:|#", target):
                found.append((str(doc.relative_to(ROOT)), target))
    return found


def test_the_docs_name_modules_and_links():
    names = _dotted_names()
    assert "maes_bringup.runners.embedded" in names and "maes_sim.core.load_config" in names
    assert ("README.md", "docs/architecture.md") in _links()


@pytest.mark.parametrize(("doc", "target"), _links())
def test_relative_link_resolves(doc, target):
    path = (ROOT / doc).parent / target.split("#")[0]
    assert path.exists(), f"{doc} links to {target}, which does not exist"


@pytest.mark.parametrize("name", _dotted_names())
def test_dotted_name_resolves(name):
    """The longest importable prefix is a module; the rest are attributes of it."""
    pytest.importorskip("maes_controller", reason="needs the workspace (make setup)")
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module_name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name in ("rclpy", "launch", "launch_ros"):
                pytest.skip(f"{module_name} needs {err.name}")
            if err.name is None or not module_name.startswith(err.name):
                raise
            continue
        break
    else:
        pytest.fail(f"no module of {name} can be imported")
    for attr in parts[i:]:
        assert hasattr(obj, attr), f"{name}: {module_name} has no {'.'.join(parts[i:])}"
        obj = getattr(obj, attr)
