"""Every config the repository ships loads, and every run it describes ends by itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from maes_sim.core import load_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(
    [
        ROOT / "maes_config.yaml",
        *(ROOT / "configs").glob("*.yaml"),
        *(ROOT / "experiments").glob("cave_*.yaml"),
    ]
)


def test_configs_are_found():
    assert {p.name for p in CONFIGS} >= {
        "maes_config.yaml",
        "cave_75.yaml",
        "maes2_example.yaml",
        "cave_30.yaml",
    }


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_run_has_a_tick_limit(path):
    # Exploration and coverage targets may never be reached (a robot stuck, an unreachable
    # corner); only a tick limit guarantees that `make run` on this file ends.
    config = load_config(path)
    assert config.end_criteria.tick is not None and config.end_criteria.tick > 0


def test_seed_comments_say_what_runs():
    # cave_75.yaml lists three seeds; a single run uses the first (the text must not promise
    # three runs from `make run`).
    text = (ROOT / "configs" / "cave_75.yaml").read_text()
    line = next(x for x in text.splitlines() if x.startswith("random_seeds:"))
    assert "first" in line and "Three runs" not in line
