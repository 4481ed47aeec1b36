"""YOUR ROBOT LOGIC: a starting point. Edit ``logic(robot)`` below, or copy this file.

This file is yours: nothing in MAES-ROS runs it unless you ask. The default logic of ``make run``,
direct mode, the launch file, the experiments and the tests is the shipped frontier explorer,
``maes_controller.algorithms.frontier_explorer:logic`` (read it for a complete example). Run
this file with (docs/writing_logic.md):

    make run LOGIC=maes_controller.logic:logic                # the embedded ROS stack
    maes_run --logic maes_controller.logic:logic              # the same, without make
    ros2 launch maes_bringup multi_robot.launch.py logic:=maes_controller.logic:logic
    run("maes_config.yaml", "maes_controller.logic:logic")    # direct mode, in Python
                                        # (from maes_bringup.runners.direct import run)

or, for a copy of this file anywhere, ``--logic path/to/my_logic.py:logic``. Edits to this file
take effect at once if the workspace was built with ``colcon build --symlink-install`` (as
``make setup`` does); otherwise copy it and name the copy's path.

``logic(robot)`` is called once per logic tick (0.1 s of simulated time by default) for every
robot, right after the robot's new state arrives. It must return quickly: every call on
``robot`` is non-blocking. If it raises, the error is logged and counted (``logic_failures`` in
summary.json, the progress line); ``maes_run`` stops a run whose logic raised on every call of
its first 20 ticks (exit code 3; ``--keep-going`` runs on). Direct mode stops at the first.

What ``robot`` offers (MAES 2.0's names; metres and radians, map frame; full list:
maes_controller/robot_api.py):

    robot.state                  latest maes_interfaces/State (tick, incoming_broadcast_msgs,
                                 tags_nearby, nearby_robots, colliding, ...)
    robot.tick, robot.robot_id, robot.namespace
    robot.robot_position         (x, y) or None;  robot.robot_heading: yaw (rad) or None
    robot.global_costmap         the costmap: .costmap (the message, None at first), .array,
                                 .free_mask(), .unknown_mask(), .pos_to_cell(x, y),
                                 .cell_to_pos(ix, iy), .is_free(ix, iy), ...
    robot.nav_to_pos(x, y)       start navigating (replaces the current goal)
    robot.cancel_nav()           stop navigating
    robot.is_nav_complete()      True when no goal is in progress
    robot.nav_status             NavStatus.IDLE/PENDING/ACTIVE/SUCCEEDED/ABORTED/CANCELED/REJECTED
    robot.nav_feedback           latest feedback (distance_remaining, navigation_time, ...)
    robot.scan_ranges            latest lidar ranges (m, +inf: no return), numpy array, or None
    robot.scan_angles            each ray's angle (rad, robot frame, 0 ahead), numpy array
    robot.robot_velocity         own (linear m/s, angular rad/s), or None
    robot.set_velocity(v, w)     drive directly (each tick until changed; cancels navigation).
                                 The motion model decides what happens: the default ``maes``
                                 model rotates OR moves, never both, so (0.4, -0.6) only turns;
                                 ``diff_drive`` does both at once (robot_api.Robot.set_velocity)
    robot.broadcast_msg(text)    tell robots in range (they get it in their next state)
    robot.deposit_tag(text)      leave a tag here (robots nearby see it in tags_nearby)
    robot.logger.info(text)      log (also .warning, .error, .debug)
    robot.memory                 a dict kept between calls: your variables go here

The example body below drives each robot to a randomly chosen frontier cell (a known free cell
next to unknown space), then picks another. Replace it with your own.
"""

from __future__ import annotations

import random

import numpy as np


def logic(robot) -> None:
    """Drive to a random frontier cell, then to another (replace this body with yours)."""
    memory = robot.memory
    if "rng" not in memory:
        # Seed from the robot id: a run must be reproducible, so never use unseeded randomness
        # or the wall clock in logic.
        memory["rng"] = random.Random(robot.robot_id)

    costmap = robot.global_costmap
    if costmap.costmap is None or robot.robot_position is None:
        return  # wait for the first costmap and pose
    if not robot.is_nav_complete():
        return  # still driving to the last goal

    # Frontier cells: free, with an unknown cell among their 4 neighbours.
    free, unknown = costmap.free_mask(), costmap.unknown_mask()  # arrays indexed [iy, ix]
    near_unknown = np.zeros_like(unknown)
    near_unknown[1:, :] |= unknown[:-1, :]
    near_unknown[:-1, :] |= unknown[1:, :]
    near_unknown[:, 1:] |= unknown[:, :-1]
    near_unknown[:, :-1] |= unknown[:, 1:]
    frontier = np.argwhere(free & near_unknown)  # rows of (iy, ix)
    if len(frontier) == 0:
        if not memory.get("done"):
            robot.logger.info(f"{robot.namespace}: no frontier left")
            memory["done"] = True
        return

    iy, ix = frontier[memory["rng"].randrange(len(frontier))]
    x, y = costmap.cell_to_pos(int(ix), int(iy))
    robot.nav_to_pos(x, y)
