"""The project stands alone: nothing it ships refers to files a user's clone does not have.

Developer machines keep notes and inputs beside the repository (a design note, a style guide,
shared maps, papers, wheels); a clone has none of them. So no tracked file may cite those notes,
or a folder beside the repository, or this machine's paths; papers are cited by title and
authors. The one exception: setup's default places for the optional wheels folders, in the
Makefile and scripts/lib.sh (setup installs the same versions from upstream sources without them).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()
#: What a clone does not have (built from parts, so this file does not match itself).
FORBIDDEN = re.compile(
    "|".join(
        [
            r"\b" + "DESIGN" + r"\.md\b",
            r"\b" + "STYLE" + r"\.md\b",
            r"\.\./" + "shared" + r"\b",
            "/work" + "/",
            r"\b" + "shared" + r"/(wheels|maps|seeds|hooks)\b",
            r"[\"']" + "shared" + r"[\"']\s*/",  # Path joins: parent / "shared" / ...
        ]
    )
)
#: Where setup names the optional wheels folders' default places.
WHEELS_DEFAULTS = {"Makefile", "scripts/lib.sh"}


def _tracked_text_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc}): cannot list the tracked files")
    return [name for name in out.decode().split("\0") if name and name != SELF]


def _violations(name: str, text: str) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for match in FORBIDDEN.finditer(line):
            allowed = name in WHEELS_DEFAULTS and "shared/wheels/" in line
            if not allowed:
                found.append(f"{name}:{number}: {match.group(0)!r} in {line.strip()[:120]!r}")
    return found


def test_no_tracked_file_refers_to_what_a_clone_does_not_have() -> None:
    found = []
    for name in _tracked_text_files():
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary (maps, pictures)
            continue
        found += _violations(name, data.decode("utf-8", errors="replace"))
    assert not found, "references to files outside the project:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("name", "line", "bad"),
    [
        ("docs/x.md", "see " + "DESIGN" + ".md", True),
        ("src/a.py", "# <repo>/../" + "shared/maps", True),
        ("bench/b.py", 'MAPS = Path("/work' + '/shared/maps")', True),
        ("docs/y.md", "(`../" + "shared/seeds/003_*`)", True),
        ("Makefile", "W ?= $(CURDIR)/../" + "shared/wheels/ros-jazzy-launch", False),
        ("scripts/lib.sh", "M=${M:-$(dirname $R)/" + "shared/wheels/x}", False),
        ("tests/t.py", 'ROOT.parent / "' + 'shared" / "wheels"', True),
        ("src/c.py", "a shared memory segment; shared_grids(maps)", False),
    ],
)
def test_the_check_tells_references_from_ordinary_words(name: str, line: str, bad: bool) -> None:
    assert bool(_violations(name, line)) is bad
