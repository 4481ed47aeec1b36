"""The project's one numba entry point: kernels compile through it and a cold cache is announced."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]  # src/

_RUN = """
import numpy as np
from maes_sim.core.neighbors import mirror_symmetric
print(mirror_symmetric(np.array([0, 1]), np.array([1, 0]), np.array([True]), 2).tolist())
"""


def _run(cache_dir: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(cache_dir),
        "PYTHONPATH": os.pathsep.join(
            [str(SRC / "maes_sim"), str(SRC / "maes_common"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    return subprocess.run(
        [sys.executable, "-c", _RUN], capture_output=True, text=True, timeout=300, env=env
    )


def test_first_run_says_it_compiles_and_how_long_later_runs_say_nothing(tmp_path):
    # An empty numba cache directory: the kernel compiles, once, and says so with its time.
    first = _run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "[True, True]"
    assert first.stderr.count("maes_sim: compiling kernels not yet in the") == 1, first.stderr
    assert "maes_sim: compiled kernels in " in first.stderr, first.stderr
    # Same cache directory: loaded from disk, no compile, no message.
    second = _run(tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "[True, True]"
    assert "compil" not in second.stderr, second.stderr


def test_numba_is_imported_only_by_the_jit_module():
    offenders = []
    for path in sorted(SRC.glob("*/*/**/*.py")):
        if "/test/" in str(path) or path.name == "jit.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n == "numba" or n.startswith("numba.") for n in names):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


def test_kernels_are_cached_under_a_digest_of_their_sources(tmp_path):
    # Without NUMBA_CACHE_DIR the kernels go to $XDG_CACHE_HOME/maes_ros/numba/<digest>, the
    # digest covering every module that compiles kernels (so a kernel calling compiled code of
    # another module is recompiled when that module changes).
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(SRC / "maes_sim"), str(SRC / "maes_common"), os.environ.get("PYTHONPATH", "")]
    )
    code = (
        _RUN + "from maes_common import jit\nprint(jit.cache_dir())\n"
        "print(jit.source_digest(jit._kernel_modules()))\n"
        "print(sorted(p.name for p in jit._kernel_modules()))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    assert result.returncode == 0, result.stderr
    _, where, digest, names = result.stdout.strip().splitlines()
    assert Path(where) == tmp_path / "maes_ros" / "numba" / digest
    assert list(Path(where).rglob("*mirror*.nbi")), "the kernel was not cached there"
    for module in ("cells.py", "physics.py", "los.py", "raycast.py", "neighbors.py"):
        assert module in names


def test_a_second_clone_of_the_same_sources_loads_the_kernels_the_first_compiled(tmp_path):
    # Two copies of maes_sim at different paths with fresh mtimes, as two clones: one cache
    # (named by the sources' digest). numba alone files kernels by absolute path and compiled
    # them again for the second clone, announcing it as a "first run".
    import shutil

    outputs = []
    for clone in ("clone_a", "clone_b"):
        root = tmp_path / clone
        shutil.copytree(SRC / "maes_sim" / "maes_sim", root / "maes_sim", symlinks=False)
        for path in root.rglob("*.py"):
            os.utime(path)  # a checkout's own mtimes
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
        env["PYTHONPATH"] = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
        code = _RUN + "import maes_sim; print(maes_sim.__file__)\n"
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1].startswith(str(root))  # this clone was used
        outputs.append(result.stderr)
    assert outputs[0].count("maes_sim: compiling kernels not yet in the") == 1, outputs[0]
    assert "compil" not in outputs[1], outputs[1]
