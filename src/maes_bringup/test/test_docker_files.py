"""docker/ (Dockerfile, compose file, entrypoint) and the Nav2 example, read as text.

No Docker engine exists here, so the image is never built by these tests: they check what
matters in the files (base image, packages, what is copied and built, the commands).
"""

from __future__ import annotations

import argparse
import ast
import doctest
import importlib.util
import os
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
DOCKER = REPO / "docker"
EXAMPLE = REPO / "examples" / "nav2_waypoints.py"
LAUNCH = ["ros2", "launch", "maes_bringup", "multi_robot.launch.py"]
APT_PACKAGES = ["ros-jazzy-navigation2", "ros-jazzy-nav2-bringup",
                "ros-jazzy-nav2-simple-commander", "ros-jazzy-slam-toolbox", "ros-jazzy-rviz2",
                "python3-numpy", "python3-yaml", "python3-numba"]


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: comments dropped, continuations joined."""
    text = re.sub(r"\\\n", " ", "\n".join(
        line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")))
    out = []
    for line in text.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), " ".join(rest.split())))
    return out


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    return instructions(DOCKER / "Dockerfile")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def test_base_image_is_official_ros_jazzy(dockerfile):
    assert dockerfile[0] == ("FROM", "ros:jazzy")
    assert [i for i, _ in dockerfile].count("FROM") == 1


def test_apt_installs_the_full_stack(dockerfile):
    runs = " ".join(args for cmd, args in dockerfile if cmd == "RUN")
    install = re.search(r"apt-get install (.*?)(&&|$)", runs).group(1).split()
    for package in APT_PACKAGES:
        assert package in install, package
    assert "apt-get update" in runs


def test_only_src_and_run_files_are_copied(dockerfile):
    copies = [args.split() for cmd, args in dockerfile if cmd in ("COPY", "ADD")]
    sources = [src for *srcs, _dest in copies for src in srcs if not src.startswith("--")]
    assert "src/" in sources
    assert not any(s in (".", "./", "*") or "standins" in s for s in sources), sources
    for cmd, args in dockerfile:
        assert "standins" not in args, (cmd, args)


def test_workspace_is_built_from_src_only(dockerfile):
    build = next(args for cmd, args in dockerfile if cmd == "RUN" and "colcon build" in args)
    assert "source /opt/ros/jazzy/setup.bash" in build
    assert "--base-paths src" in build
    # The build happens after src/ is copied.
    order = [args for cmd, args in dockerfile if cmd in ("COPY", "RUN")]
    assert order.index(next(a for a in order if a.startswith("src/"))) < order.index(build)


def test_default_command_is_the_full_stack_launch(dockerfile):
    entry = ast.literal_eval(next(a for c, a in dockerfile if c == "ENTRYPOINT"))
    assert entry == ["/usr/local/bin/maes-entrypoint"]
    cmd = ast.literal_eval(next(a for c, a in dockerfile if c == "CMD"))
    assert cmd[:4] == LAUNCH and "slam:=slam_toolbox" in cmd and "nav:=nav2" in cmd
    copy = next(a for c, a in dockerfile if c == "COPY" and "entrypoint.sh" in a)
    assert copy.split()[-1] == entry[0]


def test_entrypoint_sources_ros_and_the_overlay():
    path = DOCKER / "entrypoint.sh"
    lines = [ln.strip() for ln in path.read_text().splitlines()]
    assert lines[0] == "#!/bin/bash"
    ros, overlay = lines.index("source /opt/ros/jazzy/setup.bash"), lines.index(
        "source /ws/install/setup.bash")
    assert ros < overlay < lines.index('exec "$@"')
    assert os.access(path, os.X_OK)


def test_build_context_leaves_out_environments_and_standins():
    rules = [ln.strip() for ln in (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert rules[0] == "*"  # allow-list: everything else (.venv, install/, standins/) stays out
    allowed = {r[1:] for r in rules if r.startswith("!")}
    assert allowed == {"src", "configs", "examples", "maes_config.yaml", "docker/entrypoint.sh"}


def test_compose_headless_service_launches_the_stack(compose):
    maes = compose["services"]["maes"]
    assert maes["command"][:4] == LAUNCH
    assert maes["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
    assert maes["network_mode"] == "host" and maes["ipc"] == "host"
    assert "profiles" not in maes  # `docker compose up` starts it
    assert "../results:/ws/results" in maes["volumes"]
    args = dict(a.split(":=", 1) for a in maes["command"][4:])
    assert set(args) == {"config", "slam", "nav"}


def test_compose_rviz_service_uses_x11(compose):
    rviz = compose["services"]["rviz"]
    assert rviz["profiles"] == ["rviz"]
    assert "/tmp/.X11-unix:/tmp/.X11-unix:rw" in rviz["volumes"]
    assert "DISPLAY" in rviz["environment"]
    assert rviz["network_mode"] == "host"
    assert "rviz2 -d" in rviz["command"][-1] and "maes.rviz" in rviz["command"][-1]
    # $$ is compose's escape for a literal $ in a command
    assert "$$(ros2 pkg prefix maes_bringup)" in rviz["command"][-1]


# --- examples/nav2_waypoints.py (imported without ROS: its ROS imports are inside main) -----

@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("nav2_waypoints_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_parses_waypoints(example):
    args = example.parse_args(["--robot", "robot2", "1,2", "3,4,180"])
    assert args.robot == "robot2"
    assert args.waypoints[0] == (1.0, 2.0, 0.0)
    assert args.waypoints[1][2] == pytest.approx(3.141592653589793)
    default = example.parse_args([])
    assert default.robot == "robot0" and len(default.waypoints) == 4


@pytest.mark.parametrize("bad", ["1", "1,2,3,4", "a,b", "1,nan"])
def test_example_rejects_bad_waypoints(example, bad):
    with pytest.raises(argparse.ArgumentTypeError, match="waypoint"):
        example.parse_waypoint(bad)


def test_example_uses_the_simple_commander_without_blocking(example):
    tree = ast.parse(EXAMPLE.read_text())
    called = {getattr(n.func, "attr", None) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert {"followWaypoints", "isTaskComplete", "getFeedback", "getResult",
            "waitUntilNav2Active"} <= called
    result = doctest.testmod(example)
    assert result.attempted > 0 and result.failed == 0
