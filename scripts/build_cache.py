"""A content-keyed cache of the stand-ins' colcon install tree, shared by a user's clones.

The stand-ins (tf2_msgs, geographic_msgs, nav2_msgs in ``standins/``) are the longest step of a
first ``make setup`` (about 2.5 minutes of rosidl generators and C compiles on 2 cores), and their
install tree depends only on their sources, the build scripts and the venv's packages, never on
the clone. So after a successful build, ``scripts/build_ws.sh standins`` stores the install tree
here, and the next clone (or ``make clean``) with the same inputs copies it instead of building:

    ${MAES_BUILD_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/maes_ros/builds}/standins-<key>/

The key is a SHA-256 of everything the build reads: the stand-ins' files, the build scripts, the
venv's pinned requirements (``requirements/constraints.txt`` fixes every package's version), the
Python and C compiler versions, the machine and ``MAES_UNITY_BUILD``. An install tree names its
prefix and the venv in a few text files (colcon's setup scripts, ament's parent prefix index, a
CMake export); a restore rewrites them to the new clone's paths. The shared libraries carry the
old paths only as source file names in error messages and are copied as they are (bytecode is
not stored). ``MAES_BUILD_CACHE=off`` neither reads nor writes the cache; the newest ``KEEP``
entries are kept.

    build_cache.py restore standins INSTALL_BASE   exit 0: restored; 3: no entry (or off)
    build_cache.py store standins INSTALL_BASE     after a successful build
    build_cache.py key standins                    print the key and the entry's path

Standard library only: it runs under the venv's Python before anything else is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Bump when the layout of an entry or the meaning of the key changes.
FORMAT = 1
#: Entries kept per kind (the newest by last use).
KEEP = 3
META = "maes-build-cache.json"
MISS = 3

#: What each kind's build reads, besides the venv: folders (every file) and single files.
INPUTS = {
    "standins": [
        "standins",
        "scripts/build_ws.sh",
        "scripts/unity_build.cmake",
        "scripts/patch_ros_cmake.py",
        "requirements/venv.txt",
        "requirements/constraints.txt",
    ],
}


def cache_root() -> Path | None:
    """The cache's folder, or None when ``MAES_BUILD_CACHE`` turns it off."""
    if os.environ.get("MAES_BUILD_CACHE", "on").lower() in {"off", "0", "no", "false"}:
        return None
    if os.environ.get("MAES_BUILD_CACHE_DIR"):
        return Path(os.environ["MAES_BUILD_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "maes_ros" / "builds"


def _compiler() -> str:
    cc = os.environ.get("CC", "cc")
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False)
    except OSError:
        return f"{cc}: not found"
    return f"{cc}: {out.stdout.splitlines()[0] if out.stdout else out.returncode}"


def key_inputs(kind: str) -> dict[str, str]:
    """Everything the key is made of, by name (also written into the entry, for a reader)."""
    files = hashlib.sha256()
    for name in INPUTS[kind]:
        path = ROOT / name
        paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for p in paths:
            files.update(str(p.relative_to(ROOT)).encode() + b"\0")
            files.update(hashlib.sha256(p.read_bytes()).digest())
    return {
        "format": str(FORMAT),
        "files": files.hexdigest(),
        "python": sys.version,
        "compiler": _compiler(),
        "machine": f"{platform.system()} {platform.machine()}",
        "unity_build": os.environ.get("MAES_UNITY_BUILD", "ON"),
    }


def entry_path(root: Path, kind: str, inputs: dict[str, str]) -> Path:
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    return root / f"{kind}-{digest[:20]}"


def _rewrite(tree: Path, replacements: list[tuple[bytes, bytes]]) -> int:
    """Replace the old paths in every text file under ``tree``; the number of files changed."""
    changed = 0
    for p in tree.rglob("*"):
        if p.is_symlink() or not p.is_file():
            continue
        data = p.read_bytes()
        if b"\0" in data or not any(old in data for old, _ in replacements):
            continue
        for old, new in replacements:
            data = data.replace(old, new)
        p.write_bytes(data)
        changed += 1
    return changed


def restore(kind: str, install_base: Path) -> int:
    root = cache_root()
    if root is None:
        print("build cache: off (MAES_BUILD_CACHE)")
        return MISS
    entry = entry_path(root, kind, key_inputs(kind))
    meta_file = entry / META
    if not meta_file.is_file():
        print(f"build cache: no entry for these inputs ({entry})")
        return MISS
    meta = json.loads(meta_file.read_text())
    venv = os.environ.get("VIRTUAL_ENV") or sys.prefix
    # Longest first, so a venv inside the old install base (or the reverse) is rewritten whole.
    pairs = sorted(
        [(meta["install_base"], str(install_base)), (meta["venv"], venv)],
        key=lambda pair: -len(pair[0]),
    )
    replacements = [(old.encode(), new.encode()) for old, new in pairs if old != new]
    tmp = Path(tempfile.mkdtemp(prefix=".restore-", dir=install_base.parent))
    try:
        shutil.copytree(entry / "install", tmp / "install", symlinks=True)
        changed = _rewrite(tmp / "install", replacements)
        if install_base.exists():
            shutil.rmtree(install_base)
        os.replace(tmp / "install", install_base)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.utime(entry)  # last use: pruning keeps the entries in use
    print(f"build cache: restored {entry} ({changed} files pointed at this clone)")
    return 0


def _prune(root: Path, kind: str) -> None:
    entries = sorted(
        (p for p in root.glob(f"{kind}-*") if (p / META).is_file()),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in entries[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)
    # Leftovers of a store that was killed half-way.
    for tmp in root.glob(".store-*"):
        if time.time() - tmp.stat().st_mtime > 3600:
            shutil.rmtree(tmp, ignore_errors=True)


def store(kind: str, install_base: Path) -> int:
    root = cache_root()
    if root is None:
        print("build cache: off (MAES_BUILD_CACHE); nothing stored")
        return 0
    inputs = key_inputs(kind)
    entry = entry_path(root, kind, inputs)
    root.mkdir(parents=True, exist_ok=True)
    if (entry / META).is_file():
        os.utime(entry)
        print(f"build cache: {entry} already holds this build")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix=".store-", dir=root))
    try:
        shutil.copytree(
            install_base,
            tmp / "install",
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", ".maes-build-ok"),
        )
        meta = {
            "install_base": str(install_base),
            "venv": os.environ.get("VIRTUAL_ENV") or sys.prefix,
            "stored": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "inputs": inputs,
        }
        (tmp / META).write_text(json.dumps(meta, indent=2) + "\n")
        try:
            os.rename(tmp, entry)
        except OSError:
            # Another clone stored the same build meanwhile: theirs stays.
            if not (entry / META).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _prune(root, kind)
    print(f"build cache: stored {entry}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["restore", "store", "key"])
    parser.add_argument("kind", choices=sorted(INPUTS))
    parser.add_argument("install_base", nargs="?", type=Path)
    args = parser.parse_args(argv)
    if args.command == "key":
        root = cache_root()
        inputs = key_inputs(args.kind)
        print(json.dumps(inputs, indent=2))
        print(entry_path(root, args.kind, inputs) if root else "build cache: off")
        return 0
    if args.install_base is None:
        parser.error(f"{args.command} needs the install base")
    install_base = args.install_base.resolve()
    return (
        restore(args.kind, install_base)
        if args.command == "restore"
        else store(args.kind, install_base)
    )


if __name__ == "__main__":
    sys.exit(main())
