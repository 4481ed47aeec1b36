#!/usr/bin/env python3
"""Check that the running Python is the Docker image's: the versions of requirements/image.txt.

Run by docker/Dockerfile at the end of the build (with ``--ros --maes``: rclpy from apt and the
built workspace must import beside the pip packages) and by ``make test-image`` on the Python
3.12 venv that stands in for the image here (with ``--maes``). Exits 1 with one line per problem,
never a traceback, so a wrong version fails the build or the test run with a clear message.

Usage::

    python3 docker/check_python.py requirements/image.txt [--ros] [--maes]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import re
import sys
from pathlib import Path

#: ``# image-python: 3.12``: the image's Python (major.minor), in the requirements file.
PYTHON_LINE = re.compile(r"^#\s*image-python:\s*(\d+\.\d+)\s*$")
#: ``name==version``, the only requirement form the file may use (exact pins).
PIN_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*(#.*)?$")


def read_pins(path: Path) -> tuple[str, dict[str, str]]:
    """Read the image's Python version and exact pins from a requirements file.

    Parameters
    ----------
    path : Path
        The requirements file (``requirements/image.txt``).

    Returns
    -------
    tuple
        ``(python_version, {distribution: version})``, e.g. ``("3.12", {"numpy": "1.26.4"})``.

    Raises
    ------
    ValueError
        If the file is missing, has no ``# image-python: X.Y`` line, or a requirement that is
        not an exact ``name==version`` pin (the message names the file and line).

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.txt"
    >>> _ = p.write_text("# image-python: 3.12\\nnumpy==1.26.4\\n")
    >>> read_pins(p)
    ('3.12', {'numpy': '1.26.4'})
    """
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the requirements file ({exc.strerror})") from None
    python, pins = None, {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if match := PYTHON_LINE.match(line):
            python = match.group(1)
        elif line and not line.startswith("#"):
            pin = PIN_LINE.match(line)
            if pin is None:
                raise ValueError(f"{path}:{number}: {line!r} is not an exact pin 'name==version'")
            pins[pin.group(1)] = pin.group(2)
    if python is None:
        raise ValueError(f"{path}: no '# image-python: X.Y' line naming the image's Python")
    return python, pins


def version_problems(python: str, pins: dict[str, str]) -> list[str]:
    """What differs between the running interpreter and the pins (empty when all match).

    Parameters
    ----------
    python : str
        Expected ``major.minor`` of the interpreter.
    pins : dict
        Expected distribution versions.

    Returns
    -------
    list of str
        One message per mismatch or missing distribution.
    """
    problems = []
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if running != python:
        problems.append(f"Python is {running}, the image's is {python} ({sys.executable})")
    for name, wanted in pins.items():
        try:
            found = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{name} is not installed (wanted {wanted})")
            continue
        if found != wanted:
            problems.append(f"{name} is {found}, wanted {wanted}")
    return problems


def numba_problems() -> list[str]:
    """Whether numba compiles and runs a kernel with this numpy (empty when it does)."""
    try:
        import numba
        import numpy as np

        @numba.njit(cache=False)
        def total(values):
            acc = 0.0
            for v in values:
                acc += v
            return acc

        result = total(np.arange(5, dtype=np.float64))
    except Exception as exc:  # any failure here means the image's numba is unusable
        return [f"numba cannot compile a kernel: {type(exc).__name__}: {exc}"]
    return [] if result == 10.0 else [f"numba computed {result} for 0+1+2+3+4"]


def import_problems(ros: bool, maes: bool) -> list[str]:
    """Whether rclpy (``ros``) and the simulator's compiled kernels (``maes``) load."""
    problems = []
    if ros:
        try:
            rclpy = importlib.import_module("rclpy")
            rclpy.init()
            rclpy.shutdown()
        except Exception as exc:  # report, do not crash: the build log shows the reason
            problems.append(f"rclpy does not work beside the pip packages: {exc}")
    if maes:
        # numba is a hard dependency of the kernels (maes_common.jit is the one place
        # that imports it): they must import, and compile through that module.
        try:
            jit = importlib.import_module("maes_common.jit")

            @jit.njit(cache=False)
            def _triangle(n):
                total = 0
                for k in range(n):
                    total += k
                return total

            if _triangle(5) != 10 or not getattr(_triangle, "signatures", None):
                problems.append("maes_sim's kernels do not compile through numba")
        except Exception as exc:
            problems.append(f"maes_sim.core.kernels do not import or compile: {exc}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Run the checks; print a summary line, or the problems and return 1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requirements", type=Path, help="requirements/image.txt")
    parser.add_argument("--ros", action="store_true", help="also check that rclpy works")
    parser.add_argument(
        "--maes", action="store_true", help="also check that maes_sim's kernels use numba"
    )
    args = parser.parse_args(argv)
    try:
        python, pins = read_pins(args.requirements)
    except ValueError as exc:
        print(f"check_python: {exc}", file=sys.stderr)
        return 1
    problems = (
        version_problems(python, pins) + numba_problems() + import_problems(args.ros, args.maes)
    )
    if problems:
        for problem in problems:
            print(f"check_python: {problem}", file=sys.stderr)
        return 1
    found = ", ".join(f"{name} {version}" for name, version in pins.items())
    extras = "".join(
        [
            ", rclpy works" if args.ros else "",
            ", maes_sim kernels compiled by numba" if args.maes else "",
        ]
    )
    print(f"check_python: Python {sys.version.split()[0]}, {found}{extras}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
