"""MAES-ROS's frontier explorer: the logic every run uses unless told otherwise.

It drives to the nearest frontier (free space next to unknown space) it can reach, skips
frontiers other robots announced (a broadcast ``frontier-goal x y`` at every new goal), deposits
a tag at every new goal, and stops when no frontier is left. It is
:data:`maes_common.contract.DEFAULT_LOGIC` (``maes_controller.algorithms.frontier_explorer:logic``):
``make run``, direct mode, the launch file, experiments and the tests name it there, so that a
user's edits to :mod:`maes_controller.logic` (the template for their own logic) change none of
them. Its results are pinned by ``tests/test_result_digests.py``.
"""

from __future__ import annotations

from maes_controller.frontier import choose_frontier_goal, is_near_frontier
from maes_controller.navigation import traversable_mask
from maes_controller.robot_api import NavStatus

#: Broadcasts of the example explorer start with this word, then "x y" of the goal.
CLAIM_PREFIX = "frontier-goal"
#: A frontier within this many cells of another robot's goal is left to that robot.
CLAIM_RADIUS_CELLS = 4.0


def logic(robot) -> None:
    """Frontier exploration (see the module docstring)."""
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
