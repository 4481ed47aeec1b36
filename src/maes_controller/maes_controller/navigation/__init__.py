"""The built-in navigator as pure Python: plan on the robot's map, follow, recover.

The public API is the navigation session, :class:`Navigator` (one per robot, updated once per
control tick), its parameters and result, and the grid type and planning helpers a controller's
logic may use on its own map. The ROS navigator node (:mod:`maes_controller.nodes.navigator_node`)
and direct mode (:mod:`maes_bringup.runners.direct`) both drive a :class:`Navigator`, so a goal is
navigated identically on either stack. Nothing here imports rclpy or a message package.

Modules
    ``session``         one robot's session as events: :class:`NavSession` (accept, preempt,
                        refuse, cancel, step), carried by the navigator node and direct mode
    ``tasks``           Nav2's other tasks on the session (waypoints, behaviours, paths)
    ``navigator``       going to one goal: :class:`Navigator`, :class:`NavParams`, :class:`NavStep`
    ``global_planner``  a route: A* on the inflated map, pruned to line-of-sight waypoints
    ``following``       following a route with the MAES motion model (rotate, then drive)
    ``yielding``        holding a straight move while a sensed robot is in the way
    ``planning``        grid search, distance fields, traversability, line of sight
    ``costmap``         :class:`GridMap` (a ROS ``OccupancyGrid`` without ROS) and cost values
    ``inflation``       obstacle inflation into a Nav2-style costmap
    ``_search``, ``_segment``  compiled kernels behind ``planning`` and ``navigator``

Examples
--------
>>> import numpy as np
>>> from maes_controller.navigation import GridMap, Navigator, NavParams
>>> grid = GridMap.from_array(np.zeros((3, 7), dtype=np.int8), 1.0, origin_x=-3.5, origin_y=-1.5)
>>> nav = Navigator(NavParams(robot_radius=0.3, max_linear_speed=1.0, max_angular_speed=2.0))
>>> nav.start((3.0, -1.0), now=0.0)
>>> nav.update((-3.0, -1.0, 0.0), grid, now=0.1).status.name
'ACTIVE'
"""

from .costmap import FREE, INSCRIBED, LETHAL, OCCUPIED_THRESHOLD, UNKNOWN, GridMap
from .navigator import NavErrorCode, Navigator, NavParams, NavStep, costmap_values, goal_problem
from .planning import (
    Cell,
    astar,
    distance_field,
    nearest_traversable,
    prune_path,
    traversable_mask,
)
from .session import (
    GOAL_FRAME,
    PREEMPTED,
    GoalEnd,
    GoToPose,
    NavSession,
    SessionEvents,
    StepInputs,
    error_text,
)
from .tasks import WAYPOINT_FAILED, Drive, FollowGiven, PoseSequence, Spin, compute_path
from .yielding import robot_in_the_way

__all__ = [
    "FREE",
    "GOAL_FRAME",
    "PREEMPTED",
    "GoToPose",
    "GoalEnd",
    "NavSession",
    "SessionEvents",
    "StepInputs",
    "INSCRIBED",
    "LETHAL",
    "OCCUPIED_THRESHOLD",
    "UNKNOWN",
    "WAYPOINT_FAILED",
    "Cell",
    "Drive",
    "FollowGiven",
    "PoseSequence",
    "Spin",
    "GridMap",
    "NavErrorCode",
    "NavParams",
    "NavStep",
    "Navigator",
    "astar",
    "compute_path",
    "costmap_values",
    "distance_field",
    "error_text",
    "goal_problem",
    "nearest_traversable",
    "prune_path",
    "robot_in_the_way",
    "traversable_mask",
]
