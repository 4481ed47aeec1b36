"""The core must stay importable and usable without ROS (docs/architecture.md: the core layer)."""

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "maes_sim" / "core"
FORBIDDEN_PREFIXES = ("rclpy", "rosidl", "launch", "tf2_ros", "ament_index_python")
FORBIDDEN_SUFFIXES = ("_msgs", "_srvs", "_interfaces")


def imported_modules(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def is_ros(module: str) -> bool:
    top = module.split(".")[0]
    return top.startswith(FORBIDDEN_PREFIXES) or top.endswith(FORBIDDEN_SUFFIXES)


def test_no_core_module_imports_ros_or_message_packages():
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 10  # the walk really found the core
    offenders = [(f.relative_to(CORE), m) for f in files for m in imported_modules(f) if is_ros(m)]
    assert offenders == []


def test_the_guard_itself_recognises_ros_imports():
    assert is_ros("rclpy.node") and is_ros("nav_msgs.msg") and is_ros("maes_interfaces.msg")
    assert not is_ros("numpy") and not is_ros("maes_sim.core.grid")


def test_importing_the_core_loads_no_ros_module():
    code = (
        "import sys, maes_sim.core, maes_sim.core.simulation\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('rclpy', 'rosidl_runtime_py', 'std_msgs', 'sensor_msgs', 'maes_interfaces'))\n"
        "print(bad)\n"
    )
    # The simulator's source and the shared package, nothing of the ROS workspace.
    env_path = f"{CORE.parents[1]}:{CORE.parents[2] / 'maes_common'}"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert out.stdout.strip() == "[]"
