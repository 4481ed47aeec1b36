"""The ``navigator_node`` process of the embedded stack: the run's config, then the navigator.

The built-in navigator (``maes_controller.nodes.navigator_node.NavigatorNode``) takes a loaded
config; reading the YAML needs the simulator's config schema, so the process lives here, where
both packages are at hand, and ``maes_controller`` installs without the simulator.
"""

from __future__ import annotations

from maes_common.process import read_parameters, ros_process
from maes_controller.nodes.navigator_node import NavigatorNode
from maes_sim.core import ConfigError, MapError, load_config

__all__ = ["main"]


def main(args: list[str] | None = None) -> None:
    """Entry point of ``navigator_node``: parameter ``config_file`` (the run's YAML).

    Runs until Ctrl-C or a shutdown (``ros2 launch`` ending), exiting quietly; a bad config or
    parameter exits 2 with a one-line message.
    """
    with ros_process("navigator_node", args) as proc:
        params = read_parameters(
            "maes_navigator_params",
            {
                "config_file": "maes_config.yaml",
                "cmd_vel_stamped": False,
                "verbose": False,
                "nav2_api": False,  # serve Nav2's whole task API (docs/nav2_task_api.md)
                "run_id": "",  # the run to take part in ("" = the first manifest's)
            },
        )
        try:
            config = load_config(params["config_file"])
        except (ConfigError, MapError, OSError) as exc:
            proc.fail(exc)
        node = proc.own(
            NavigatorNode(
                config,
                cmd_vel_stamped=params["cmd_vel_stamped"],
                verbose=params["verbose"],
                nav2_api=params["nav2_api"],
                run_id=params["run_id"] or None,
            )
        )
        # rclpy's events executor: a wait-set executor rebuilds the set of every entity (an
        # action server, subscriptions and publishers per robot) for each event, 93 % of the
        # navigator's CPU at 120 robots. Its action servers' timers are on the system clock
        # (navigator_node._OnSystemClock), which that executor's timers follow.
        executor = proc.events_executor()
        executor.add_node(node)
        proc.spin(node, executor=executor)
