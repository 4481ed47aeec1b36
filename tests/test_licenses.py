"""Every package declares Apache-2.0 and ships the license text, as `ros2 pkg create --license`
does (a LICENSE file in the package folder, beside package.xml)."""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent for p in (ROOT / "src").glob("*/package.xml"))


def test_the_five_packages_are_found():
    assert [p.name for p in PACKAGES] == [
        "maes_bringup",
        "maes_common",
        "maes_controller",
        "maes_interfaces",
        "maes_sim",
    ]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_package_xml_declares_apache(package: Path):
    licenses = [e.text for e in ET.parse(package / "package.xml").getroot().iter("license")]
    assert licenses == ["Apache-2.0"]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_license_file_is_the_root_one(package: Path):
    root_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in root_text and "Version 2.0" in root_text
    assert (package / "LICENSE").read_text() == root_text


@pytest.mark.parametrize(
    "setup_py", sorted((ROOT / "src").glob("*/setup.py")), ids=lambda p: p.parent.name
)
def test_setup_py_declares_apache(setup_py: Path):
    calls = [
        n
        for n in ast.walk(ast.parse(setup_py.read_text()))
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "setup"
    ]
    assert len(calls) == 1
    kwargs = {k.arg: k.value for k in calls[0].keywords}
    assert isinstance(kwargs.get("license"), ast.Constant)
    assert kwargs["license"].value == "Apache-2.0"
