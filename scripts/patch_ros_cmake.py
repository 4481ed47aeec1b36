"""Rewrite the ROS wheels' exported CMake files to point at this venv instead of the wheel builder.

The ROS 2 Jazzy wheels on PyPI were built in a manylinux container whose Python lived in
``/opt/python/cp311-cp311``. About fifteen exported ``share/*/cmake/*.cmake`` files (the
``rosidl_generator_py`` export targets of the message packages) still name that builder's Python
include directory and numpy include directory, so building any interface package against them
fails. This script rewrites those paths to the running interpreter's own include directory and
the installed numpy's include directory. It is idempotent, and fails if any such path is left.

Run it with the venv's interpreter::

    .venv/bin/python scripts/patch_ros_cmake.py .venv
"""

from __future__ import annotations

import argparse
import re
import sys
import sysconfig
from pathlib import Path

BUILDER_PREFIX = "/opt/python/cp311-cp311"
# Longest first: the numpy include lies under the builder's site-packages.
BUILDER_NUMPY_INCLUDE = re.compile(
    re.escape(BUILDER_PREFIX) + r"/lib/python3\.11/site-packages/numpy/(?:_core|core)/include"
)
BUILDER_PYTHON_INCLUDE = re.compile(re.escape(BUILDER_PREFIX) + r"/include/python3\.11")


def target_paths() -> tuple[str, str]:
    """Return this interpreter's Python include directory and numpy's include directory.

    Returns
    -------
    tuple of str
        ``(python_include, numpy_include)``, both existing directories.

    Examples
    --------
    >>> py_inc, np_inc = target_paths()  # doctest: +SKIP
    """
    import numpy

    python_include = sysconfig.get_paths()["include"]
    numpy_include = numpy.get_include()
    for path in (python_include, numpy_include):
        if not Path(path).is_dir():
            raise SystemExit(f"patch_ros_cmake: include directory {path!r} does not exist")
    if not (Path(python_include) / "Python.h").is_file():
        raise SystemExit(
            f"patch_ros_cmake: {python_include}/Python.h is missing; "
            "install the Python 3.11 headers (Debian/Ubuntu: apt-get install python3.11-dev)"
        )
    return python_include, numpy_include


def patch_text(text: str, python_include: str, numpy_include: str) -> str:
    """Replace the wheel builder's include paths in one CMake file's text.

    Parameters
    ----------
    text : str
        Contents of a CMake file.
    python_include, numpy_include : str
        Replacement paths.

    Returns
    -------
    str
        The patched text (unchanged if it names no builder path).

    Examples
    --------
    >>> patch_text('"/opt/python/cp311-cp311/include/python3.11"', '/v/inc', '/v/np')
    '"/v/inc"'
    """
    text = BUILDER_NUMPY_INCLUDE.sub(numpy_include, text)
    return BUILDER_PYTHON_INCLUDE.sub(python_include, text)


def main(argv: list[str] | None = None) -> int:
    """Patch the CMake files under ``<venv>/share`` and ``<venv>/lib/cmake``; return 0 if done."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venv", type=Path, help="the venv (ROS prefix) to patch")
    args = parser.parse_args(argv)
    venv = args.venv.resolve()
    python_include, numpy_include = target_paths()

    roots = [venv / "share", venv / "lib" / "cmake"]
    patched = 0
    leftovers = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.cmake")):
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            if BUILDER_PREFIX not in text:
                continue
            new_text = patch_text(text, python_include, numpy_include)
            if new_text != text:
                path.write_text(new_text, encoding="utf-8", errors="surrogateescape")
                patched += 1
            if re.search(re.escape(BUILDER_PREFIX) + r"/(include|lib)", new_text):
                leftovers.append(path)
    if leftovers:
        listing = "\n  ".join(str(p) for p in leftovers)
        print(f"patch_ros_cmake: builder paths left in:\n  {listing}", file=sys.stderr)
        return 1
    print(f"patch_ros_cmake: rewrote {patched} file(s) to {python_include} and {numpy_include}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
