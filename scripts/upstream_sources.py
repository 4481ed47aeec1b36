#!/usr/bin/env python3
"""Fetch the pinned upstream sources of requirements/launch-sources.txt (used by setup).

Where the wheels folders beside the project are absent, setup installs ROS 2's launch stack, the
``ros2`` CLI and nav2_simple_commander from their upstream release tags. This script downloads
each repository's tag archive once, unpacks it and prints the package folders to install, one a
line::

    upstream_sources.py fetch COMPONENTS DEST   # e.g. fetch launch,launch-cmake .ros-launch/sources
    upstream_sources.py list COMPONENTS         # the archive URLs it would fetch

COMPONENTS is one component of the pins file or several joined by commas.

Exit codes: 0 fetched; 3 an archive could not be downloaded (no network, or the host refused):
the message names every URL it tried, so setup can say what is missing and go on; 2 bad input (an
unreadable pins file, a package folder missing from an archive).

``MAES_UPSTREAM_BASE`` replaces ``https://github.com`` in every URL (a mirror, or a local folder
as ``file:///...`` in the tests).

Standard library only: it runs before anything else is installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tarfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "requirements" / "launch-sources.txt"
GITHUB = "https://github.com"
#: Seconds a download may stall before it counts as "no network".
TIMEOUT_S = 30.0
NO_NETWORK = 3


class PinsError(ValueError):
    """A malformed pins file or an archive without a pinned package folder."""


class DownloadError(OSError):
    """Archives that could not be downloaded: ``failures`` lists ``(url, reason)``."""

    def __init__(self, failures: list[tuple[str, str]]) -> None:
        self.failures = failures
        super().__init__("; ".join(f"{url}: {reason}" for url, reason in failures))


@dataclass(frozen=True)
class Pin:
    """One repository at one tag, and the package folders setup takes from it."""

    component: str
    repository: str
    tag: str
    folders: tuple[str, ...]

    @property
    def name(self) -> str:
        """The repository's name (``https://github.com/ros2/launch`` -> ``launch``)."""
        return self.repository.rstrip("/").rsplit("/", 1)[-1]

    def archive_url(self, base: str | None = None) -> str:
        """The tag's source archive, with ``base`` in place of ``https://github.com``.

        >>> Pin("launch", "https://github.com/ros2/launch", "3.4.3", (".",)).archive_url()
        'https://github.com/ros2/launch/archive/refs/tags/3.4.3.tar.gz'
        >>> Pin("c", "https://github.com/o/r", "1.0", (".",)).archive_url("file:///m")
        'file:///m/o/r/archive/refs/tags/1.0.tar.gz'
        """
        repo = self.repository.rstrip("/")
        if base and repo.startswith(GITHUB + "/"):
            repo = base.rstrip("/") + repo[len(GITHUB) :]
        return f"{repo}/archive/refs/tags/{self.tag}.tar.gz"


def read_pins(path: Path = PINS) -> list[Pin]:
    """The pins of ``path``: one ``component repository tag folder...`` a line, ``#`` comments.

    Raises
    ------
    PinsError
        A line with fewer than four fields, naming the file and line.
    """
    pins = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) < 4:
            raise PinsError(
                f"{path}:{number}: expected 'component repository tag folder...', got {raw!r}"
            )
        pins.append(Pin(fields[0], fields[1], fields[2], tuple(fields[3:])))
    return pins


def _download(url: str, target: Path) -> None:
    partial = target.with_name(target.name + ".part")
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, partial.open("wb") as out:
        shutil.copyfileobj(response, out)
    partial.replace(target)


def _unpack(archive: Path, dest: Path) -> Path:
    """Unpack ``archive`` into ``dest``; its one top-level folder (GitHub: ``<name>-<tag>``)."""
    with tarfile.open(archive) as tar:
        tops = {m.name.split("/", 1)[0] for m in tar.getmembers()}
        if len(tops) != 1:
            raise PinsError(f"{archive}: expected one top-level folder, found {sorted(tops)}")
        top = dest / tops.pop()
        if top.exists():
            shutil.rmtree(top)
        tar.extractall(dest, filter="data")
    return top


def select(components: str, pins_path: Path = PINS) -> list[Pin]:
    """The pins of ``components`` (one name or several joined by commas), in file order.

    Raises
    ------
    PinsError
        A component without pins.
    """
    wanted = components.split(",")
    pins = [p for p in read_pins(pins_path) if p.component in wanted]
    missing = sorted(set(wanted) - {p.component for p in pins})
    if missing:
        raise PinsError(f"{pins_path}: no pins for component(s) {missing}")
    return pins


def fetch(
    components: str, dest: Path, base: str | None = None, pins_path: Path = PINS
) -> list[Path]:
    """Download and unpack the archives of ``components``; the package folders, in pin order.

    Archives already downloaded into ``dest/downloads`` are reused.

    Raises
    ------
    DownloadError
        Archives could not be downloaded (no network): every one is tried, all failures named.
    PinsError
        A component without pins, or a pinned folder missing from its archive.
    """
    pins = select(components, pins_path)
    downloads = dest / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    archives, failures = [], []
    for pin in pins:
        archive = downloads / f"{pin.name}-{pin.tag}.tar.gz"
        if not archive.is_file():
            try:
                _download(pin.archive_url(base), archive)
            except (OSError, urllib.error.URLError) as exc:
                failures.append((pin.archive_url(base), str(getattr(exc, "reason", exc))))
        archives.append(archive)
    if failures:
        raise DownloadError(failures)
    folders = []
    for pin, archive in zip(pins, archives, strict=True):
        try:
            top = _unpack(archive, dest)
        except tarfile.TarError as exc:
            archive.unlink()  # fetched again next time
            raise PinsError(f"{pin.archive_url(base)}: not a readable tar.gz ({exc})") from exc
        for folder in pin.folders:
            package = (top / folder).resolve()
            if not (package / "package.xml").is_file():
                raise PinsError(
                    f"{pin.repository} {pin.tag}: no package.xml in {folder!r} of its archive"
                )
            folders.append(package)
    return folders


def main(argv: list[str] | None = None) -> int:
    """Command line: ``fetch COMPONENT DEST`` or ``list COMPONENT``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("fetch", "list"))
    parser.add_argument("components")
    parser.add_argument("dest", nargs="?", type=Path)
    parser.add_argument("--pins", type=Path, default=PINS)
    args = parser.parse_args(argv)
    base = os.environ.get("MAES_UPSTREAM_BASE") or None
    try:
        pins = select(args.components, args.pins)
        if args.action == "list":
            for pin in pins:
                print(pin.archive_url(base))
            return 0
        if args.dest is None:
            parser.error("fetch needs DEST")
        for folder in fetch(args.components, args.dest, base, args.pins):
            print(folder)
    except PinsError as exc:
        print(f"upstream_sources: {exc}", file=sys.stderr)
        return 2
    except DownloadError as exc:
        pins_name = args.pins.relative_to(ROOT) if args.pins.is_relative_to(ROOT) else args.pins
        print(
            f"upstream_sources: the pinned upstream sources ({pins_name}) could not be "
            f"downloaded (no network?): {exc}",
            file=sys.stderr,
        )
        return NO_NETWORK
    return 0


if __name__ == "__main__":
    sys.exit(main())
