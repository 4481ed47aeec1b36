"""Every ```python block of README.md and of the user pages it sends readers to runs as written,
each in a fresh interpreter.

A block is run alone, with the repository as working directory (the pages' paths are relative to
it), so a snippet that relies on an import from another block fails here as it would for a
reader who copies it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The README and the pages that took its sections: their snippets are the ones users copy.
PAGES = [
    "README.md",
    "docs/running.md",
    "docs/watching.md",
    "docs/writing_logic.md",
    "docs/direct_mode.md",
    "docs/ros_launch.md",
    "docs/ros_interface.md",
]
BLOCKS = [
    (page, i, code)
    for page in PAGES
    for i, code in enumerate(
        re.findall(r"^```python\n(.*?)^```", (ROOT / page).read_text(), re.M | re.S)
    )
]


def test_readme_has_python_snippets():
    assert len([b for b in BLOCKS if b[0] == "README.md"]) >= 3
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize(
    ("page", "code"), [(p, c) for p, _, c in BLOCKS], ids=[f"{p}:block{i}" for p, i, _ in BLOCKS]
)
def test_snippet_runs(page, code):
    if "maes_bringup" in code or "maes_controller" in code:
        pytest.importorskip("maes_controller", reason="needs the workspace (make setup)")
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    assert result.returncode == 0, f"{page}:\n{code}\n--- stderr ---\n{result.stderr[-3000:]}"


def test_link_texts_that_name_a_file_match_the_target():
    # [`some/path.py`](target): a text with folders is the target's path from the repository
    # root or from its package's folder (src/<package>/), so a reader looking for the named
    # file finds it; a bare file name is the target's file name.
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\[`([\w./-]+\.(?:py|yaml|md))`\]\(([^)#]+)\)", text)
    assert links
    wrong = [
        (shown, target)
        for shown, target in links
        if target != shown
        and not re.fullmatch(r"src/\w+/" + re.escape(shown), target)
        and not ("/" not in shown and target.endswith("/" + shown))
    ]
    assert wrong == []
    missing = [target for _, target in links if not (ROOT / target).exists()]
    assert missing == []
