"""YOUR ROBOT LOGIC GOES IN THIS FILE: edit the function ``logic(robot)`` below.

``logic(robot)`` is called once per logic tick (0.1 s of simulated time by default) for every
robot, right after the robot's new state arrives. It must return quickly: every call on
``robot`` is non-blocking. What ``robot`` offers (MAES 2.0's names; metres, map frame):

    robot.state                  latest maes_interfaces/State (tick, incoming_broadcast_msgs,
                                 tags_nearby, nearby_robots, colliding, ...)
    robot.tick, robot.robot_id, robot.namespace
    robot.robot_position         (x, y) or None;  robot.robot_heading: yaw (rad) or None
    robot.global_costmap         the costmap: .costmap (the message, None at first), .array,
                                 .pos_to_cell(x, y), .cell_to_pos(ix, iy), .is_free(ix, iy), ...
    robot.nav_to_pos(x, y)       start navigating (replaces the current goal)
    robot.cancel_nav()           stop navigating
    robot.is_nav_complete()      True when no goal is in progress
    robot.nav_status             NavStatus.IDLE/PENDING/ACTIVE/SUCCEEDED/ABORTED/CANCELED/REJECTED
    robot.nav_feedback           latest feedback (distance_remaining, navigation_time, ...)
    robot.scan_ranges            latest lidar ranges (m, +inf: no return), numpy array, or None
    robot.scan_angles            each ray's angle (rad, robot frame, 0 ahead), numpy array
    robot.robot_velocity         own (linear m/s, angular rad/s), or None
    robot.set_velocity(v, w)     drive directly (each tick until changed; cancels navigation)
    robot.broadcast_msg(text)    tell robots in range (they get it in their next state)
    robot.deposit_tag(text)      leave a tag here (robots nearby see it in tags_nearby)
    robot.logger.info(text)      log (also .warning, .error, .debug)
    robot.memory                 a dict kept between calls: your variables go here

The same file runs on both stacks (Nav2 + slam_toolbox, or the built-in navigator) and in
direct mode. To use another file instead, start the controller with
``-p logic:=my_package.my_module:my_function``.

The body shipped below is an example: a frontier explorer. It drives to the nearest frontier
(free space next to unknown space) it can reach, skips frontiers other robots announced,
deposits a tag at every new goal, and stops when no frontier is left.
"""

from __future__ import annotations

from maes_controller.frontier import choose_frontier_goal, is_near_frontier
from maes_controller.navigation import traversable_mask
from maes_controller.robot_api import NavStatus

#: Broadcasts of the example explorer start with this word, then "x y" of the goal.
CLAIM_PREFIX = "frontier-goal"
#: A frontier within this many cells of another robot's goal is left to that robot.
CLAIM_RADIUS_CELLS = 4.0


# ################################################################################################
# ###                                                                                          ###
# ###    EDIT HERE: your robot's logic, called once per logic tick with the robot's API.       ###
# ###                                                                                          ###
# ################################################################################################
def logic(robot) -> None:
    """Frontier exploration (the shipped example; replace the body with your own logic)."""
    memory = robot.memory
    claims = memory.setdefault("claims", {})  # other robots' goals: namespace -> (x, y)
    skip = memory.setdefault("skip", [])  # our own goals that did not close their frontier
    for message in robot.state.incoming_broadcast_msgs:
        claim = parse_claim(message.msg)
        if claim is not None:
            claims[message.sender] = claim

    costmap = robot.global_costmap
    if costmap.costmap is None or robot.robot_position is None:
        return  # wait for the first costmap and pose
    goal = memory.get("goal")

    if goal is not None:
        goal_cell = costmap.pos_to_cell(*goal)
        still_frontier = costmap.in_bounds(*goal_cell) and is_near_frontier(costmap, goal_cell)
        if not robot.is_nav_complete() and still_frontier:
            return  # keep driving: the goal still borders unknown space
        status = robot.nav_status
        if status is NavStatus.ABORTED or (status is NavStatus.SUCCEEDED and still_frontier):
            skip.append(goal_cell)  # failed, or reached without closing it: don't retry

    claimed = [costmap.pos_to_cell(*xy) for xy in claims.values()] + skip
    cell = choose_frontier_goal(
        costmap,
        costmap.pos_to_cell(*robot.robot_position),
        traversable_mask(costmap.array),
        claimed=claimed,
        claim_radius=CLAIM_RADIUS_CELLS,
    )
    if cell is None:
        if not memory.get("done"):
            robot.logger.info(f"{robot.namespace}: no frontier left, exploration done")
            memory["done"] = True
        memory["goal"] = None
        return

    x, y = costmap.cell_to_pos(*cell)
    memory["goal"], memory["done"] = (x, y), False
    robot.nav_to_pos(x, y)
    robot.broadcast_msg(f"{CLAIM_PREFIX} {x:.2f} {y:.2f}")
    robot.deposit_tag(f"{robot.namespace} goal {x:.2f} {y:.2f} at tick {robot.tick}")


# ################################################################################################
# ###    END OF THE LOGIC CALLBACK                                                             ###
# ################################################################################################


def parse_claim(text: str) -> tuple[float, float] | None:
    """The goal ``(x, y)`` announced in an explorer's broadcast, or None for other messages.

    Examples
    --------
    >>> parse_claim("frontier-goal 1.50 -2.00")
    (1.5, -2.0)
    >>> parse_claim("hello") is None
    True
    """
    parts = text.split()
    if len(parts) != 3 or parts[0] != CLAIM_PREFIX:
        return None
    try:
        return float(parts[1]), float(parts[2])
    except ValueError:
        return None
