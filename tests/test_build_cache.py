"""The stand-ins' build cache (scripts/build_cache.py): keyed by what the build reads, and a tree
restored into another clone works there and names only that clone's paths.

The restore test copies this checkout's real install tree (``make setup`` built it) through
``scripts/build_ws.sh standins`` of a second, temporary clone, then imports the stand-ins there
with rclpy; outside the pip environment it skips.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / ".standins" / "install"


def load_build_cache(root: Path = ROOT):
    spec = importlib.util.spec_from_file_location(
        f"build_cache_{abs(hash(root))}", root / "scripts" / "build_cache.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def clone_inputs(dest: Path) -> Path:
    """A second clone's copy of what the stand-ins' build reads, and the scripts that run it."""
    for name in ("standins", "scripts", "requirements"):
        shutil.copytree(ROOT / name, dest / name, symlinks=True)
    return dest


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAES_BUILD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MAES_BUILD_CACHE", raising=False)
    monkeypatch.delenv("MAES_UNITY_BUILD", raising=False)
    return tmp_path / "cache"


def test_the_key_follows_every_input_and_not_the_clones_folder(tmp_path, cache_dir, monkeypatch):
    mine = load_build_cache()
    clone = clone_inputs(tmp_path / "other clone")
    theirs = load_build_cache(clone)

    def entry(module) -> Path:
        return module.entry_path(cache_dir, "standins", module.key_inputs("standins"))

    assert entry(theirs) == entry(mine)  # same sources elsewhere: the same entry
    original = entry(theirs)
    edits = [
        clone / "standins/nav2_msgs/msg/SpeedLimit.msg",
        clone / "scripts/unity_build.cmake",
        clone / "requirements/constraints.txt",
    ]
    for path in edits:
        text = path.read_text()
        path.write_text(text + "\n# edited\n")
        assert entry(theirs) != original, path
        path.write_text(text)
        assert entry(theirs) == original
    new = clone / "standins/nav2_msgs/msg/Extra.msg"
    new.write_text("int32 a\n")
    assert entry(theirs) != original
    new.unlink()
    monkeypatch.setenv("MAES_UNITY_BUILD", "OFF")
    assert entry(theirs) != original


def test_off_neither_reads_nor_writes(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("MAES_BUILD_CACHE", "off")
    module = load_build_cache()
    tree = tmp_path / "install"
    (tree / "share").mkdir(parents=True)
    (tree / "share" / "a.sh").write_text(f"prefix={tree}\n")
    assert module.main(["store", "standins", str(tree)]) == 0
    assert not cache_dir.exists()
    assert module.main(["restore", "standins", str(tmp_path / "elsewhere")]) == module.MISS
    assert not (tmp_path / "elsewhere").exists()


def test_a_restore_rewrites_text_files_only_and_prunes_old_entries(
    tmp_path, cache_dir, monkeypatch
):
    module = load_build_cache()
    monkeypatch.setenv("VIRTUAL_ENV", "/old/venv")
    tree = tmp_path / "a" / "install"
    (tree / "lib").mkdir(parents=True)
    (tree / "setup.sh").write_text(f'PREFIX="{tree}"\nPY=/old/venv/bin/python\n')
    binary = b"\x7fELF\0" + str(tree).encode() + b"\0"
    (tree / "lib" / "libx.so").write_bytes(binary)
    (tree / "lib" / "__pycache__").mkdir()
    (tree / "lib" / "__pycache__" / "m.pyc").write_bytes(b"\0pyc")
    assert module.main(["store", "standins", str(tree)]) == 0
    monkeypatch.setenv("VIRTUAL_ENV", "/new/venv")
    dest = tmp_path / "b" / "install"
    dest.parent.mkdir()
    assert module.main(["restore", "standins", str(dest)]) == 0
    assert (dest / "setup.sh").read_text() == f'PREFIX="{dest}"\nPY=/new/venv/bin/python\n'
    assert (dest / "lib" / "libx.so").read_bytes() == binary  # a binary is copied as it is
    assert not (dest / "lib" / "__pycache__").exists()  # bytecode names the old paths
    assert not list(tmp_path.glob("b/.restore-*"))
    # Entries for other inputs (older sources): the newest KEEP stay.
    for i in range(module.KEEP + 2):
        old = cache_dir / f"standins-old{i}"
        (old / "install").mkdir(parents=True)
        (old / module.META).write_text("{}")
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    module._prune(cache_dir, "standins")
    kept = sorted(p.name for p in cache_dir.glob("standins-*"))
    assert len(kept) == module.KEEP
    assert module.entry_path(cache_dir, "standins", module.key_inputs("standins")).name in kept


def test_build_ws_in_another_clone_restores_the_stand_ins_and_rclpy_uses_them(tmp_path, cache_dir):
    if not (INSTALL / ".maes-build-ok").is_file():
        if os.environ.get("MAES_ROS_ENV") == "1":
            pytest.fail("inside the pip environment but the stand-ins are not built")
        pytest.skip("the stand-ins are not built here; run make setup")
    venv = Path(os.environ.get("VIRTUAL_ENV") or sys.prefix)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update(MAES_VENV=str(venv), VIRTUAL_ENV=str(venv))
    env.pop("MAES_ROOT", None)
    stored = subprocess.run(
        [str(venv / "bin/python"), str(ROOT / "scripts/build_cache.py"), "store", "standins",
         str(INSTALL)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stdout + stored.stderr

    clone = clone_inputs(tmp_path / "clone")
    built = subprocess.run(
        [str(clone / "scripts/build_ws.sh"), "standins"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = built.stdout + built.stderr
    assert built.returncode == 0, output
    assert "copied from the build cache" in output
    assert not (clone / "log/setup/colcon-standins.log").exists()  # colcon did not run
    restored = clone / ".standins" / "install"
    assert (restored / ".maes-build-ok").is_file()
    for path in restored.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if b"\0" not in data:
                assert str(INSTALL).encode() not in data, path

    probe = (
        "from ament_index_python.packages import get_package_prefix\n"
        "from rclpy.serialization import deserialize_message, serialize_message\n"
        "import nav2_msgs, tf2_msgs.msg\n"
        "from nav2_msgs.action import NavigateToPose\n"
        "goal = NavigateToPose.Goal()\n"
        "goal.pose.pose.position.x = 1.5\n"
        "back = deserialize_message(serialize_message(goal), NavigateToPose.Goal)\n"
        "print(nav2_msgs.__file__)\n"
        "print(get_package_prefix('nav2_msgs'))\n"
        "print(back.pose.pose.position.x)\n"
    )
    ran = subprocess.run(
        [str(clone / "scripts/with_env"), "python", "-c", probe],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    module_file, prefix, x = ran.stdout.split()
    assert Path(module_file).is_relative_to(restored)
    assert Path(prefix) == restored
    assert float(x) == 1.5
