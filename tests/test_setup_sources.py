"""The upstream sources setup pins (requirements/launch-sources.txt) and how it fetches them.

Where the wheels folders are absent (a user's fresh machine), ``make setup`` installs the launch
stack, the ``ros2`` CLI and nav2_simple_commander from upstream release tags; developer and CI
machines install wheels. The first test holds both to the same packages and versions (it reads
each wheel's own package.xml); it skips where the wheels folders are absent. The others run
``scripts/upstream_sources.py`` on archives laid out as GitHub serves them, from a local folder
(``MAES_UPSTREAM_BASE=file://...``), and on an address that refuses connections (no network).
"""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "upstream_sources.py"
_spec = importlib.util.spec_from_file_location("upstream_sources", SCRIPT)
upstream = importlib.util.module_from_spec(_spec)
sys.modules["upstream_sources"] = upstream  # dataclasses look the module up by name
_spec.loader.exec_module(upstream)

#: A port nothing listens on: connecting is refused at once, as without network.
REFUSED = "http://127.0.0.1:9"


def _make_variable(name: str) -> str:
    """A variable of the Makefile (the one home of the wheels folders' defaults)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(
        ["make", "--no-print-directory", "-s", f"print-{name}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.strip()


def _package_xml(text: bytes | str) -> tuple[str, str]:
    root = ET.fromstring(text)
    return root.findtext("name").strip(), root.findtext("version").strip()


def _wheel_packages(folder: Path) -> dict[str, str]:
    """name -> version, from the package.xml every ROS wheel carries in its data."""
    found = {}
    for wheel in sorted(folder.glob("*.whl")):
        with zipfile.ZipFile(wheel) as zf:
            xmls = [n for n in zf.namelist() if n.endswith("/package.xml")]
            assert len(xmls) == 1, f"{wheel.name}: expected one package.xml, found {xmls}"
            name, version = _package_xml(zf.read(xmls[0]))
        found[name] = version
    for xml in sorted(folder.glob("src/*/package.xml")):  # interface packages built by colcon
        name, version = _package_xml(xml.read_text(encoding="utf-8"))
        found[name] = version
    return found


def _pinned_packages(components: tuple[str, ...]) -> dict[str, str]:
    pinned = {}
    for pin in upstream.read_pins():
        if pin.component in components:
            for folder in pin.folders:
                pinned[pin.name if folder == "." else Path(folder).name] = pin.tag
    return pinned


@pytest.mark.parametrize(
    ("variable", "components"),
    [
        ("MAES_LAUNCH_WHEELS", ("launch", "launch-cmake")),
        ("MAES_NAV2_COMMANDER_WHEELS", ("commander",)),
    ],
)
def test_the_pinned_sources_and_the_wheels_name_the_same_versions(
    variable: str, components: tuple[str, ...]
) -> None:
    folder = Path(_make_variable(variable))
    if not any(folder.glob("*.whl")):
        pytest.skip(f"no wheels at {folder} ({variable}; a user's machine): nothing to compare")
    wheels = _wheel_packages(folder)
    pinned = _pinned_packages(components)
    assert sorted(wheels) == sorted(pinned), "the wheels and the pins name different packages"
    assert wheels == pinned, "a wheel's package.xml version differs from its pinned tag"


def _archive(mirror: Path, owner: str, repo: str, tag: str, folders: dict[str, str]) -> Path:
    """A tag archive as GitHub serves it: one top folder ``<repo>-<tag>``."""
    path = mirror / owner / repo / "archive" / "refs" / "tags" / f"{tag}.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for folder, name in folders.items():
            data = f"<package><name>{name}</name><version>{tag}</version></package>".encode()
            info = tarfile.TarInfo(f"{repo}-{tag}/{folder}/package.xml".replace("/./", "/"))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _pins(tmp_path: Path) -> Path:
    pins = tmp_path / "pins.txt"
    pins.write_text(
        "# component repository tag folders\n"
        "tools  https://github.com/o/alpha 1.2.3  a1 a2   # two packages\n"
        "tools  https://github.com/o/beta  0.9.0  .\n"
        "other  https://github.com/o/gamma 2.0.0  g\n",
        encoding="utf-8",
    )
    return pins


def test_fetch_unpacks_each_archive_once_and_lists_the_package_folders(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    alpha = _archive(mirror, "o", "alpha", "1.2.3", {"a1": "a1", "a2": "a2"})
    _archive(mirror, "o", "beta", "0.9.0", {".": "beta"})
    dest = tmp_path / "sources"
    pins = _pins(tmp_path)
    folders = upstream.fetch("tools", dest, f"file://{mirror}", pins)
    assert folders == [
        dest / "alpha-1.2.3" / "a1",
        dest / "alpha-1.2.3" / "a2",
        (dest / "beta-0.9.0").resolve(),
    ]
    assert all((f / "package.xml").is_file() for f in folders)
    alpha.unlink()  # downloaded once: a second fetch reuses dest/downloads
    assert upstream.fetch("tools", dest, f"file://{mirror}", pins) == folders


def test_a_pinned_folder_missing_from_its_archive_is_named(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    _archive(mirror, "o", "gamma", "2.0.0", {"not_g": "x"})
    with pytest.raises(upstream.PinsError, match=r"o/gamma 2\.0\.0: no package\.xml in 'g'"):
        upstream.fetch("other", tmp_path / "s", f"file://{mirror}", _pins(tmp_path))


def test_a_malformed_pin_line_is_named(tmp_path: Path) -> None:
    pins = tmp_path / "pins.txt"
    pins.write_text("launch https://github.com/ros2/launch 3.4.3\n", encoding="utf-8")
    with pytest.raises(upstream.PinsError, match=r"pins\.txt:1: expected 'component"):
        upstream.read_pins(pins)


def test_without_network_the_command_names_every_url_it_tried(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "fetch", "launch,launch-cmake", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "MAES_UPSTREAM_BASE": REFUSED},
    )
    assert out.returncode == upstream.NO_NETWORK, out.stderr
    assert "requirements/launch-sources.txt" in out.stderr
    for pin in upstream.read_pins():
        if pin.component in ("launch", "launch-cmake"):  # every archive tried, each named
            assert pin.archive_url(REFUSED) in out.stderr
    assert out.stdout == ""
