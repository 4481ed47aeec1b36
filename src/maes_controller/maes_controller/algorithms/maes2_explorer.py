"""MAES 2.0's example explorer, as its ROS controller and paper (Code Snippet 2) ship it.

MAES 2.0's ``maes_robot_controller.py`` (``main()``, "a simple frontier algorithm") and the
paper's Code Snippet 2: a cell is a *frontier* when it is known (not -1), not an obstacle
(cost < 65) and has at least two unknown neighbours (of 8). The robot

1. with no target, or when its navigation is complete (arrived, failed or cancelled), takes the
   **first** frontier of the costmap in index order (row by row from the map's bottom-left
   corner; not the nearest), deposits the tag ``"From tick <t>"`` and navigates to it;
2. while the target is still a frontier, keeps driving;
3. once the target is no longer a frontier, forgets it and cancels the navigation.

Nothing is broadcast and robots do not coordinate; every robot tends to pick the same frontier.
Like the original, a target that cannot be reached is picked again (step 1 takes the first
frontier whatever happened before); ``docs/algorithms.md`` lists this and how the module differs
from ``maes_controller.examples.maes2_controller``.
"""

from __future__ import annotations

import numpy as np

#: Costmap values from this up are obstacles (MAES 2.0: ``>= 65``).
OBSTACLE_COST = 65
#: A frontier has at least this many unknown neighbours (MAES 2.0: 2).
MIN_UNKNOWN_NEIGHBOURS = 2


def frontier_mask(values: np.ndarray) -> np.ndarray:
    """MAES 2.0's ``is_frontier`` for every cell of an (H, W) costmap (-1 unknown, 0..100).

    Examples
    --------
    >>> v = np.array([[0, 0, -1], [0, 0, -1], [0, 100, -1]])
    >>> frontier_mask(v).astype(int)
    array([[0, 1, 0],
           [0, 1, 0],
           [0, 0, 0]])
    """
    values = np.asarray(values)
    unknown = np.pad(values == -1, 1).astype(np.int8)
    h, w = values.shape
    count = np.zeros((h, w), dtype=np.int8)
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            if dy != 1 or dx != 1:
                count += unknown[dy : dy + h, dx : dx + w]
    return (values != -1) & (values < OBSTACLE_COST) & (count >= MIN_UNKNOWN_NEIGHBOURS)


def first_frontier(values: np.ndarray) -> int | None:
    """Flat index (``y * W + x``) of the first frontier cell, or None when there is none."""
    found = np.flatnonzero(frontier_mask(values).ravel())
    return int(found[0]) if found.size else None


def logic(robot) -> None:
    """MAES 2.0's example frontier explorer (see the module docstring)."""
    costmap = robot.global_costmap
    if costmap.costmap is None or robot.state is None:
        return  # MAES 2.0 waits for the first state and costmap
    memory = robot.memory
    goal_index = memory.get("goal_index")
    if goal_index is None or robot.is_nav_complete():
        index = first_frontier(costmap.array)
        if index is None:
            if not memory.get("done"):
                robot.logger.info(
                    f"Robot with namespace {robot.namespace} has found no more frontiers"
                )
                memory["done"] = True
            return
        memory["done"] = False
        goal = costmap.costmap_index_to_pos(index)
        memory["goal_index"] = index
        robot.deposit_tag(f"From tick {robot.state.tick}")
        robot.nav_to_pos(goal.x, goal.y)
    elif frontier_mask(costmap.array).ravel()[goal_index]:
        return  # target not reached: it is still a frontier
    else:
        memory["goal_index"] = None  # target explored
        robot.cancel_nav()
