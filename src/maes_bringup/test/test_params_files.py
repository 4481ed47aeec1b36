"""Parameter files as ROS itself reads them: rcl's parser (through rclpy), not PyYAML.

rcl reads a plain (unquoted) scalar as a bool or a number whenever it can (``y``, ``1e5``,
``inf``, ``nan``), where PyYAML, which writes the files, sees a string and writes it plain.
A ``ros2 launch`` whose random run id came out as ``320748586e03`` stopped at once: the
simulator and the navigator were handed a DOUBLE for their STRING parameter ``run_id``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import rclpy
from rclpy.context import Context
from rclpy.parameter import Parameter

from maes_bringup.stack.params import dump_params

#: Strings that look like other types to rcl (the first six) or to PyYAML (the rest).
LOOK_LIKE_OTHER_TYPES = ["320748586e03", "1e5", "y", "Y", "inf", "nan", "0x1f", "on", "12", "true"]


def read_by_ros(path: Path, name: str) -> Parameter:
    """The parameter ``name`` of a node started with ``--params-file path``."""
    context = Context()
    rclpy.init(args=["--ros-args", "--params-file", str(path)], context=context)
    try:
        node = rclpy.create_node(
            "params_reader",
            context=context,
            automatically_declare_parameters_from_overrides=True,
        )
        try:
            return node.get_parameter(name)
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def write(tmp_path: Path, value, **options) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(dump_params({"/**": {"ros__parameters": {"v": value}}}, **options))
    return path


@pytest.mark.parametrize("text", LOOK_LIKE_OTHER_TYPES)
def test_quoted_string_values_reach_a_node_as_the_same_strings(tmp_path, text):
    got = read_by_ros(write(tmp_path, text, quote_strings=True), "v")
    assert (got.type_, got.value) == (Parameter.Type.STRING, text)


def test_string_arrays_and_other_types_keep_their_types_when_strings_are_quoted(tmp_path):
    path = tmp_path / "params.yaml"
    values = {"names": ["1e5", "a"], "n": 3, "x": 0.5, "on": True, "ids": [1, 2]}
    path.write_text(dump_params({"/**": {"ros__parameters": values}}, quote_strings=True))
    got = {name: read_by_ros(path, name) for name in values}
    assert {name: (p.type_, p.value) for name, p in got.items()} == {
        "names": (Parameter.Type.STRING_ARRAY, ["1e5", "a"]),
        "n": (Parameter.Type.INTEGER, 3),
        "x": (Parameter.Type.DOUBLE, 0.5),
        "on": (Parameter.Type.BOOL, True),
        "ids": (Parameter.Type.INTEGER_ARRAY, [1, 2]),
    }


def test_plain_strings_are_read_as_other_types_by_ros(tmp_path):
    # Why the quotes: written plain (PyYAML's choice for these), rcl changes their type.
    got = read_by_ros(write(tmp_path, "320748586e03"), "v")
    assert got.type_ == Parameter.Type.DOUBLE
    got = read_by_ros(write(tmp_path, "y"), "v")
    assert (got.type_, got.value) == (Parameter.Type.BOOL, True)


@pytest.mark.launch_stack
def test_the_launch_files_parameter_files_keep_a_run_id_that_looks_like_a_number(tmp_path):
    # The launch file itself (as installed), writing the simulator's file as `ros2 launch` does.
    pytest.importorskip("launch_ros", reason="needs ROS 2's launch stack (make setup)")
    import importlib.util
    from types import SimpleNamespace

    from ament_index_python.packages import get_package_share_directory

    path = Path(get_package_share_directory("maes_bringup")) / "launch" / "multi_robot.launch.py"
    spec = importlib.util.spec_from_file_location("maes_multi_robot_launch", path)
    launch_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch_file)
    node = SimpleNamespace(
        name="maes_sim", parameter_dict={"run_id": "320748586e03", "config_file": "1e5"}
    )
    written = Path(launch_file._values_file(node, str(tmp_path)))
    got = {name: read_by_ros(written, name) for name in node.parameter_dict}
    assert {name: (p.type_, p.value) for name, p in got.items()} == {
        "run_id": (Parameter.Type.STRING, "320748586e03"),
        "config_file": (Parameter.Type.STRING, "1e5"),
    }
