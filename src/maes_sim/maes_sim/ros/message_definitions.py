"""Complete ROS 2 message definitions (``ros2msg``), as rosbag2 and Foxglove's ROS 2 bridge
store them, for the recorder and the live view.

A complete definition is the type's ``.msg`` text followed by every type it uses (recursively),
each after a line of 80 ``=`` and a line ``MSG: pkg/msg/Type`` (rosbag2's
``docs/message_definition_encoding.md``). The ``.msg`` files come from the packages' share
folders (``share/<pkg>/msg/<Type>.msg``, found through the ament index), the dependencies
from the message classes' rosidl introspection (``SLOT_TYPES``).
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

__all__ = ["SEPARATOR", "message_definition", "type_name"]

#: The line between two definitions.
SEPARATOR = "=" * 80


def type_name(msg_type: type) -> str:
    """The ROS 2 type name ``pkg/msg/Type`` of a message class.

    Examples
    --------
    >>> from nav_msgs.msg import OccupancyGrid
    >>> type_name(OccupancyGrid)
    'nav_msgs/msg/OccupancyGrid'
    """
    return f"{msg_type.__module__.split('.')[0]}/msg/{msg_type.__name__}"


def _msg_file(name: str) -> Path:
    package, _, short = name.split("/")
    try:
        share = Path(get_package_share_directory(package))
    except PackageNotFoundError:
        raise LookupError(f"no package {package!r} in the ament index (for {name})") from None
    path = share / "msg" / f"{short}.msg"
    if not path.is_file():
        raise LookupError(f"no message definition {path} (for {name})")
    return path


def _used_types(msg_type: type) -> list[type]:
    """The message classes ``msg_type``'s fields use directly, in field order."""
    from rosidl_parser.definition import AbstractNestedType, NamespacedType

    used = []
    for slot in msg_type.SLOT_TYPES:
        while isinstance(slot, AbstractNestedType):
            slot = slot.value_type
        if isinstance(slot, NamespacedType):
            module = importlib.import_module(".".join(slot.namespaces))
            used.append(getattr(module, slot.name))
    return used


@cache
def message_definition(msg_type: type) -> str:
    """The complete ``ros2msg`` definition of ``msg_type`` (a message class).

    Raises
    ------
    LookupError
        When a ``.msg`` file of the type or of a type it uses cannot be found.

    Examples
    --------
    >>> from geometry_msgs.msg import Pose
    >>> text = message_definition(Pose)
    >>> "MSG: geometry_msgs/msg/Point" in text and "MSG: geometry_msgs/msg/Quaternion" in text
    True
    """
    order: list[type] = []
    seen = {msg_type}
    queue = [msg_type]
    while queue:  # breadth first: every type once, the top-level one first
        current = queue.pop(0)
        order.append(current)
        for used in _used_types(current):
            if used not in seen:
                seen.add(used)
                queue.append(used)
    parts = [_msg_file(type_name(msg_type)).read_text(encoding="utf-8").rstrip("\n")]
    for used in order[1:]:
        name = type_name(used)
        text = _msg_file(name).read_text(encoding="utf-8").rstrip("\n")
        parts.append(f"{SEPARATOR}\nMSG: {name}\n{text}")
    return "\n".join(parts) + "\n"
