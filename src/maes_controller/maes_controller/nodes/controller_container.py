"""``controller_container``: the controllers of many robots in one process.

A ``controller_node`` process per robot costs about 200 MiB (Python, rclpy, numpy, numba and
the logic's maps), so 120 robots would need some 24 GiB. This process holds one
:class:`~maes_controller.nodes.controller_node.ControllerNode` per robot, ``/robot<i>/controller``
as ``controller_node`` names it, on one executor, as ROS 2's composition puts many nodes in one
component container (Nav2's ``use_composition``). Each node is the same as in its own process:
it runs robot ``i``'s logic on the same inputs, so the run's result is the same to the byte
(``ros2 launch ... use_composition:=true`` uses it). The process's controllers take part in
lockstep through one hub (:class:`~maes_controller.nodes.controller_hub.ControllerHub`, the
node ``/controllers_<i>``, ``i`` its first robot): it reads the run's manifests and the
navigator's reports once for all of them and sends one report per tick for all of them.
Containers of disjoint robot sets may run side by side: each has its own hub.

Parameters (``ros2 run maes_controller controller_container --ros-args -p robot_ids:=[0,1,2]``)::

    robot_ids          the robots to control (int array, required)
    logic, cmd_vel_stamped, motion_model, max_speed, max_angular_speed, navigator, run_id
                       as controller_node's, for every robot
    robot<i>.<name>    robot i's own value of one of those (e.g. robot2.max_speed: 0.5)

In a parameter file the per-robot values nest::

    /**:
      ros__parameters:
        robot_ids: [0, 1, 2]
        logic: maes_controller.algorithms.trs:logic
        robot2: {max_speed: 0.5, max_angular_speed: 1.0}

The process ends when every controller's run has ended (the simulator announced it, or left the
ROS graph), saying why once, or on Ctrl-C / a shutdown. A bad parameter exits 2 with one line.
"""

from __future__ import annotations

import sys
from typing import Any

from maes_common.process import read_parameters, ros_process

from .controller_hub import HUB_NODE_NAME, ControllerHub
from .controller_node import (
    CONTROLLER_PARAMETERS,
    ControllerNode,
    check_domain,
    controller_from_parameters,
)

__all__ = ["CONTROLLER_PARAMETERS", "main", "robot_parameters"]


def robot_parameters(robot_ids: list[int]) -> dict[str, Any]:
    """Read every robot's controller parameters: ``{robot_id: {name: value}}``.

    A robot's ``robot<i>.<name>`` overrides the container's ``<name>``.
    """
    common = read_parameters("maes_container_params", CONTROLLER_PARAMETERS)
    per_robot = read_parameters(
        "maes_container_robot_params",
        {f"robot{i}.{name}": common[name] for i in robot_ids for name in CONTROLLER_PARAMETERS},
    )
    return {
        i: {name: per_robot[f"robot{i}.{name}"] for name in CONTROLLER_PARAMETERS}
        for i in robot_ids
    }


def _robot_ids(value: Any) -> list[int]:
    ids = list(value or [])
    if not ids:
        raise ValueError(
            "parameter robot_ids: give the robots to control, e.g. -p robot_ids:=[0,1,2]"
        )
    if min(ids) < 0 or len(set(ids)) != len(ids):
        raise ValueError(f"parameter robot_ids: expected distinct robot indices >= 0, got {ids}")
    return ids


def _controller(robot_id: int, params: dict[str, Any], hub: ControllerHub) -> ControllerNode:
    return controller_from_parameters(
        robot_id,
        params,
        name=f"robot{robot_id}.navigator",
        poll_timer=False,  # polled below, all at once
        node_name="controller",
        hub=hub,
    )


def main(args: list[str] | None = None) -> None:
    """Entry point of ``controller_container`` (parameters in the module's docstring)."""
    from rclpy.parameter import Parameter

    with ros_process("controller_container", args) as proc:
        check_domain(proc)
        ids = read_parameters("maes_container_ids", {"robot_ids": Parameter.Type.INTEGER_ARRAY})[
            "robot_ids"
        ]
        try:
            ids = _robot_ids(ids)
            params = robot_parameters(ids)
            # named after its first robot: containers of other robots have other hubs
            # (destroyed after the controllers: the last owned goes first)
            hub = proc.own(ControllerHub(f"{HUB_NODE_NAME}_{min(ids)}"))
            controllers = [proc.own(_controller(i, p, hub)) for i, p in params.items()]
        except ValueError as exc:
            proc.fail(exc)
        executor = proc.events_executor()
        for node in (hub, *controllers):
            executor.add_node(node)

        # Asked between the spin's slices (0.05 s and then until idle; controller_node's own
        # timer runs at 20 Hz):
        # each controller joins lockstep and checks its input deadlines.
        def all_over() -> bool:
            for node in controllers:
                node.timer_callback()
            hub.check_late(controllers[0].input_timeout)  # says who holds a tick back, and why
            return all(node.run.over is not None for node in controllers)

        proc.spin(None, until=all_over, executor=executor)
        # (not all_over(): after a stop signal the nodes must not be polled any more)
        if all(node.run.over is not None for node in controllers):
            print(
                f"controller_container: {controllers[0].run.over}; exiting "
                f"({len(controllers)} controllers)",
                file=sys.stderr,
                flush=True,
            )
