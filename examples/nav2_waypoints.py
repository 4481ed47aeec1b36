#!/usr/bin/env python3
"""Drive one robot through waypoints with Nav2's simple commander.

Runs on the embedded stack, whose built-in navigator serves Nav2's task interface
(docs/nav2_task_api.md)::

    make run CONTROLLERS=none CONFIG=examples/nav2_hall.yaml
    scripts/with_env python examples/nav2_waypoints.py           # robot0, a 2 m square

and on the full stack with Nav2 (docs/full_stack.md), in the same container or one sharing its
network (and ROS_DOMAIN_ID):

    python3 /ws/examples/nav2_waypoints.py                        # robot0, a 2 m square
    python3 /ws/examples/nav2_waypoints.py --robot robot1 3,0 3,3,90 0,0

Waypoints are ``x,y`` or ``x,y,yaw_degrees`` in metres in the robot's ``map`` frame. With
slam_toolbox that frame starts where the robot started; with the simulated SLAM it is the world
frame (origin at the map's centre). The task is not blocking: the loop below polls it, prints
the feedback and stops with an exit code from the result.
"""

from __future__ import annotations

import argparse
import math
import sys

DEFAULT_WAYPOINTS = ("2,0", "2,2", "0,2", "0,0")


def parse_waypoint(text: str) -> tuple[float, float, float]:
    """``"x,y"`` or ``"x,y,yaw_degrees"`` -> ``(x, y, yaw_radians)``.

    Examples
    --------
    >>> parse_waypoint("1.5,-2")
    (1.5, -2.0, 0.0)
    >>> parse_waypoint("0,0,90")[2] == math.pi / 2
    True
    """
    parts = text.split(",")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in (2, 3) or not all(math.isfinite(n) for n in numbers):
        raise argparse.ArgumentTypeError(
            f"waypoint {text!r}: expected x,y or x,y,yaw_degrees (metres, degrees)"
        )
    x, y = numbers[:2]
    yaw = math.radians(numbers[2]) if len(numbers) == 3 else 0.0
    return x, y, yaw


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "waypoints",
        nargs="*",
        type=parse_waypoint,
        default=[parse_waypoint(w) for w in DEFAULT_WAYPOINTS],
        help="x,y[,yaw_degrees] in the robot's map frame (default: a 2 m square)",
    )
    parser.add_argument("--robot", default="robot0", help="the robot's namespace")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # ROS imports here, so the argument handling can be used (and tested) without ROS.
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from nav2_simple_commander.robot_navigator import BasicNavigator, TaskResult
    from rclpy.parameter import Parameter

    rclpy.init()
    nav = BasicNavigator(node_name="maes_waypoints", namespace=args.robot)
    nav.set_parameters([Parameter("use_sim_time", value=True)])
    # There is no AMCL in MAES-ROS (slam_toolbox or the simulator localizes): wait for the
    # navigator alone (works on both stacks).
    nav.waitUntilNav2Active(localizer="bt_navigator")

    poses = []
    for x, y, yaw in args.waypoints:
        pose = PoseStamped()
        pose.header.frame_id = "map"  # stamp 0: use the latest transform
        pose.pose.position.x, pose.pose.position.y = x, y
        pose.pose.orientation.z, pose.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
        poses.append(pose)

    nav.followWaypoints(poses)
    shown = -1
    while not nav.isTaskComplete():  # spins the node for up to 0.1 s
        feedback = nav.getFeedback()
        if feedback is not None and feedback.current_waypoint != shown:
            shown = feedback.current_waypoint
            print(f"{args.robot}: heading for waypoint {shown + 1}/{len(poses)}", flush=True)

    result = nav.getResult()
    print(f"{args.robot}: {result.name.lower()}")
    nav.destroy_node()
    rclpy.shutdown()
    return 0 if result == TaskResult.SUCCEEDED else 1


if __name__ == "__main__":
    sys.exit(main())
