"""Each test run holds a ROS domain of its own (root conftest.py), so two runs never meet."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_root_conftest():
    spec = importlib.util.spec_from_file_location("maes_root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = load_root_conftest()


def test_this_run_holds_the_lock_of_its_domain() -> None:
    domain_id = int(os.environ["ROS_DOMAIN_ID"])
    assert conftest.DOMAIN_ID_MIN <= domain_id <= conftest.DOMAIN_ID_MAX
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    lock = Path(tempfile.gettempdir()) / f"maes-ros-domain-{domain_id}.lock"
    with open(lock, "a+") as other_run, pytest.raises(OSError):
        fcntl.flock(other_run, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_concurrent_runs_get_distinct_domains_and_wrap_around(tmp_path: Path) -> None:
    top = conftest.DOMAIN_ID_MAX
    first, h1 = conftest.acquire_ros_domain_id(top, tmp_path)
    second, h2 = conftest.acquire_ros_domain_id(top, tmp_path)
    try:
        assert first == top
        assert second == conftest.DOMAIN_ID_MIN  # wrapped past the top of the range
    finally:
        h1.close()
        h2.close()
    # Released on close: the next run may take the domain again.
    again, h3 = conftest.acquire_ros_domain_id(top, tmp_path)
    h3.close()
    assert again == top


def test_all_domains_taken_is_an_error_naming_the_range(tmp_path: Path) -> None:
    handles = []
    try:
        for _ in range(conftest.DOMAIN_ID_MAX - conftest.DOMAIN_ID_MIN + 1):
            handles.append(conftest.acquire_ros_domain_id(0, tmp_path)[1])
        with pytest.raises(RuntimeError, match=r"every ROS domain id 1\.\.101 is locked"):
            conftest.acquire_ros_domain_id(0, tmp_path)
    finally:
        for handle in handles:
            handle.close()
