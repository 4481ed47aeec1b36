"""Every docstring example in the packages runs and gives what it shows."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("maes_common", "maes_sim", "maes_controller", "maes_bringup")


def modules():
    for pkg in PACKAGES:
        root = SRC / pkg / pkg
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(SRC / pkg).with_suffix("")
            yield ".".join(rel.parts).removesuffix(".__init__")


ALL = list(modules())


def test_the_walk_finds_the_packages():
    assert (
        "maes_common.pose" in ALL
        and "maes_sim.core.simulation" in ALL
        and "maes_controller.navigation.planning" in ALL
    )
    assert len(ALL) > 40


@pytest.mark.parametrize("name", ALL)
def test_docstring_examples(name):
    if name.startswith(
        (
            "maes_sim.ros",
            "maes_common.qos",
            "maes_common.process",
            "maes_common.participant",
            "maes_controller.nodes",
            "maes_bringup.runners.embedded",
            "maes_controller.examples",
        )
    ):
        pytest.importorskip("rclpy", reason="ROS modules need the pip environment")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
