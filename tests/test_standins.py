"""The pip environment's interface stand-ins are built whole: every file is a type with its fields.

``standins/nav2_msgs`` holds every message, service and action of Jazzy's nav2_msgs, copied from
navigation2's jazzy branch (its CMakeLists says which commit); ``standins/geographic_msgs`` the
geographic_msgs that Jazzy's nav2_msgs depends on. Each interface file must be listed in its
package's CMakeLists (else it is silently not built) and import with the fields the file declares.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

ROOT = Path(__file__).resolve().parents[1]
STANDINS = ROOT / "standins"
PARTS = {
    "msg": ("",),
    "srv": ("Request", "Response"),
    "action": ("Goal", "Result", "Feedback"),
}


def interface_files(package: str) -> list[Path]:
    return sorted(
        p for kind in PARTS for p in (STANDINS / package / kind).glob(f"*.{kind}") if p.is_file()
    )


def declared_fields(text: str) -> list[list[str]]:
    """Field names of each ``---``-separated part of an interface file (constants left out).

    Examples
    --------
    >>> declared_fields("# c\\nuint16 NONE=0\\nuint16 error_code  # x\\n---\\nstring a\\n")
    [['error_code'], ['a']]
    """
    parts = []
    for block in text.split("\n---"):
        names = []
        for raw in block.splitlines():
            line = raw.split("#", 1)[0].strip()
            if line and line != "---" and "=" not in line:  # "uint16 NONE=0" is a constant
                names.append(line.split()[1])
        parts.append(names)
    return parts


@pytest.mark.parametrize("package", ["nav2_msgs", "geographic_msgs"])
def test_every_interface_file_is_built_with_its_fields(package):
    files = interface_files(package)
    cmake = (STANDINS / package / "CMakeLists.txt").read_text()
    listed = set(re.findall(r'"((?:msg|srv|action)/\w+\.(?:msg|srv|action))"', cmake))
    assert listed == {f"{p.parent.name}/{p.name}" for p in files}
    for path in files:
        kind, name = path.parent.name, path.stem
        module = importlib.import_module(f"{package}.{kind}")
        parts = declared_fields(path.read_text())
        assert len(parts) == len(PARTS[kind]), path
        for part, names in zip(PARTS[kind], parts, strict=True):
            cls = getattr(module, name)
            cls = getattr(cls, part) if part else cls
            assert list(cls.get_fields_and_field_types()) == names, (path, part)


def test_nav2_msgs_is_jazzys_whole_set():
    # navigation2's jazzy branch: 17 messages, 15 services, 19 actions.
    counts = {k: len(list((STANDINS / "nav2_msgs" / k).glob(f"*.{k}"))) for k in PARTS}
    assert counts == {"msg": 17, "srv": 15, "action": 19}
    from nav2_msgs.action import FollowGPSWaypoints, NavigateThroughPoses

    assert NavigateThroughPoses.Goal.get_fields_and_field_types() == {
        "poses": "sequence<geometry_msgs/PoseStamped>",  # Jazzy's (Kilted: nav_msgs/Goals)
        "behavior_tree": "string",
    }
    assert "sequence<geographic_msgs/GeoPose>" in (
        FollowGPSWaypoints.Goal.get_fields_and_field_types().values()
    )
