"""MAES-ROS's frontier explorer: the logic every run uses unless told otherwise.

It drives to the nearest frontier (free space next to unknown space) it can reach, leaves
frontiers other robots announced to them (a broadcast ``frontier-goal x y d`` at every new goal,
``d`` the path length to it in metres) or passed (``frontier-trail x y``), deposits a tag at
every new goal, and stops when no frontier is left. It is
:data:`maes_common.contract.DEFAULT_LOGIC` (``maes_controller.algorithms.frontier_explorer:logic``):
``make run``, direct mode, the launch file, experiments and the tests name it there, so that a
user's edits to :mod:`maes_controller.logic` (the template for their own logic) change none of
them. Its results are pinned by ``tests/test_result_digests.py``.

Spreading the team (robots that start together all see the same frontiers at once):

* **New ground first.** Without shared maps a robot does not see what the others explored;
  the goals they announced tell it where they went. A frontier within
  :data:`CLAIM_RADIUS_CELLS` of any goal announced so far (the last :data:`VISITED_LIMIT`) is
  taken only when every frontier is.
* **Ground others passed.** Each robot also announces where it is every :data:`TRAIL_STEP_M`
  metres it drives (``frontier-trail x y``). Its own map still shows frontier where others
  went, and a large team's goals cover little of the ground it drove over: among the frontiers
  no goal is near, those farther than :data:`CLAIM_RADIUS_CELLS` from every trail point it
  heard (the last :data:`TRAIL_LIMIT`) go first.
* **One robot per frontier.** Two robots that announced goals within :data:`CLAIM_RADIUS_CELLS`
  of each other keep a total order, the shorter announced path first (then the lower robot
  index): the other drops its goal and chooses again among the frontiers nobody announced.
* **More robots than frontiers.** A robot that finds every frontier announced goes where the
  path plus :data:`SHARE_COST_CELLS` per robot already going there is least, so the spare robots
  spread over the frontiers instead of all following the nearest one.
* **Making room.** A robot in a crowd (:data:`CROWD_COUNT` robots within
  :data:`CROWD_RADIUS_M`) that finds every frontier taken first drives to the place within
  :data:`SPREAD_RADIUS_M` of path farthest from the robots it senses, then chooses again: the
  spare robots of a large team spread out instead of queueing behind the others.
* **A goal the navigator gave up on** (it could not make progress, or found no path) is left
  alone for :data:`SKIP_TICKS`, not for ever: a jam clears.
* **Leaving a crowd from the outside in.** Path lengths to frontiers are taken around the
  robots the robot senses; a robot that can reach a frontier only through other robots (inside
  a packed start) waits, with no goal, until a way opens, for at most :data:`HEMMED_TICKS`.
"""

from __future__ import annotations

import functools

import numpy as np

from maes_controller.frontier import frontier_goal, is_near_frontier
from maes_controller.navigation import traversable_mask
from maes_controller.robot_api import NavStatus

from ._common import (
    CROWD_COUNT,  # noqa: F401 (documented here: the explorer's making room)
    CROWD_RADIUS_M,  # noqa: F401
    SPREAD_RADIUS_M,
    TRAIL_LIMIT,  # noqa: F401 (documented here: the explorer's trails)
    TRAIL_PREFIX,  # noqa: F401
    TRAIL_STEP_M,  # noqa: F401
    MapView,
    announce_trail,
    cells_of,
    crowded,
    hear_trail,
    nearby_positions,
    remember_point,
    remembered_cells,
    robot_index,
    spread_cell,
    trail_cells,
)

#: Broadcasts of the example explorer start with this word, then "x y d" of the goal.
CLAIM_PREFIX = "frontier-goal"
#: A frontier within this many cells of another robot's goal is left to that robot.
CLAIM_RADIUS_CELLS = 4.0
#: With every frontier announced: cells of path a frontier costs per robot going there.
SHARE_COST_CELLS = 10.0
#: Ticks a goal the navigator gave up on is left alone.
SKIP_TICKS = 300
#: Ticks between re-choosing while sharing a frontier announced by a robot that goes first.
SHARE_RECHECK_TICKS = 20
#: Ticks a robot hemmed in by robots (every frontier only through them) waits for them to go.
HEMMED_TICKS = 50
#: The most goals announced by others that a robot remembers (the oldest are forgotten).
VISITED_LIMIT = 400


def logic(robot) -> None:
    """Frontier exploration (see the module docstring)."""
    memory = robot.memory
    claims = memory.setdefault("claims", {})  # other robots' goals: namespace -> (x, y, d)
    skip = memory.setdefault("skip", [])  # our goals that did not close their frontier
    failed = memory.setdefault("failed", {})  # goals the navigator gave up on -> tick
    kept = memory.get("point_cells")  # the cells of the claims (_point_cells)
    for message in robot.state.incoming_broadcast_msgs:
        if hear_trail(memory, message.msg):  # where others were (trail_cells)
            continue
        claim = _parsed_claim(message.msg)
        if claim is not None:
            claims[message.sender] = claim
            if kept is not None:
                kept["claims"][message.sender] = None  # its cell, computed when next needed
                kept["new"].append(message.sender)
            memory["claims_heard"] = memory.get("claims_heard", 0) + 1
            new = memory.setdefault("claims_new", {})  # heard since the goal check: sender -> n
            new[message.sender] = new.get(message.sender, 0) + 1
            # every goal announced (seen by others): the last VISITED_LIMIT, their cells kept
            remember_point(memory, "visited", _visited_point(message.msg), VISITED_LIMIT)

    costmap = robot.global_costmap
    here = robot.robot_position
    if costmap.costmap is None or here is None:
        return  # wait for the first costmap and pose
    announce_trail(robot, here)
    goal = memory.get("goal")
    keep_if_shared = False  # a goal we share is only left for a frontier of our own
    if memory.get("spreading"):
        if not robot.is_nav_complete():
            return  # making room in a crowd: then choose a frontier from there
        memory["spreading"], goal = False, None

    if goal is not None:
        goal_cell = costmap.pos_to_cell(*goal)
        still_frontier = costmap.in_bounds(*goal_cell) and is_near_frontier(costmap, goal_cell)
        if not robot.is_nav_complete() and still_frontier:
            if not _yield_goal(robot, costmap):
                return  # keep driving: the goal still borders unknown space
            keep_if_shared = memory.get("sharing", False)
        status = robot.nav_status
        if status is NavStatus.ABORTED:
            failed[goal_cell] = robot.tick  # the navigator gave up: leave it for a while
        elif status is NavStatus.SUCCEEDED and still_frontier:
            skip.append(goal_cell)  # reached without closing it: don't retry
    for cell in [c for c, tick in failed.items() if robot.tick - tick >= SKIP_TICKS]:
        del failed[cell]

    hemmed = memory.get("hemmed_since")
    patient = hemmed is None or robot.tick - hemmed < HEMMED_TICKS
    found, claimed = _search(robot, costmap, here, skip + list(failed), patient)
    if found is None and patient and robot.state.nearby_robots:
        # no frontier but through other robots: let the ones outside go first (bounded)
        memory["hemmed_since"] = robot.tick if hemmed is None else hemmed
        if goal is not None and robot.nav_status is NavStatus.ACTIVE:
            return  # keep the goal we have: the navigator waits for the robots in its way
        memory["goal"] = None
        return
    memory["hemmed_since"] = None
    if found is None:
        if not memory.get("done"):
            robot.logger.info(f"{robot.namespace}: no frontier left, exploration done")
            memory["done"] = True
        memory["goal"] = None
        return

    cell, cells = found
    x, y = costmap.cell_to_pos(*cell)
    memory["done"], memory["checked"] = False, robot.tick
    gaps2 = (claimed[:, 0] - cell[0]) ** 2 + (claimed[:, 1] - cell[1]) ** 2  # (whole cells)
    sharing = bool((gaps2 <= CLAIM_RADIUS_CELLS**2).any())
    if keep_if_shared and sharing:
        return  # no frontier of our own yet: keep driving to the shared one
    if sharing and crowded(here, _positions(robot)):
        view = MapView(costmap.grid, here, _positions(robot))
        spot = spread_cell(view, _positions(robot), SPREAD_RADIUS_M)
        if spot is not None and spot != view.robot_cell:
            memory["goal"], memory["spreading"] = costmap.cell_to_pos(*spot), True
            robot.nav_to_pos(*memory["goal"])
            return
    distance = cells * costmap.resolution
    memory["goal"], memory["distance"], memory["sharing"] = (x, y), distance, sharing
    robot.nav_to_pos(x, y)
    robot.broadcast_msg(f"{CLAIM_PREFIX} {x:.2f} {y:.2f} {distance:.2f}")
    robot.deposit_tag(f"{robot.namespace} goal {x:.2f} {y:.2f} at tick {robot.tick}")


def _search(robot, costmap, here, own: list, patient: bool) -> tuple:
    """(:func:`~maes_controller.frontier.frontier_goal`'s answer, the claimed cells it was
    given before ``own``: :func:`_claim_cells`): the nearest frontier not claimed, around the
    robots sensed (through them unless ``patient``). ``own``: the robot's own goals to leave
    (skipped or failed).

    A search that found no frontier finds none again on the same map, from the same cell,
    around the same cells of robots: the claims and trails only choose among the frontiers
    found. Such searches are kept with the map (``GridMap.derived``) for every robot on it, and
    not made again (a crowd's hemmed robots ask every tick)."""
    memory = robot.memory
    grid = costmap.grid
    start = costmap.pos_to_cell(*here)
    avoid = grid.pos_to_cells(nearby_positions(robot))
    fruitless = grid.derived("frontier explorer fruitless searches", lambda _grid: set())
    search = (start, patient, avoid.shape, avoid.tobytes())
    if search in fruitless:
        return None, []
    claimed = given = _claim_cells(memory, grid)
    if own:
        given = np.concatenate([claimed, np.array(own, dtype=np.float64).reshape(-1, 2)])
    found = frontier_goal(
        costmap,
        start,
        grid.derived("frontier explorer traversable", _traversable),
        claimed=given,
        claim_radius=CLAIM_RADIUS_CELLS,
        share_cost=SHARE_COST_CELLS,
        avoid=avoid,
        through=not patient,
        seen=trail_cells(memory, grid),
    )
    if found is None:
        fruitless.add(search)
    return found, claimed


def _point_cells(memory: dict, grid) -> dict:
    """The cells of the goals other robots announced, for the map's origin and resolution:
    ``{"claims": sender -> cell of its claim}``, with the keys of ``memory["claims"]`` in their
    order. Kept in ``memory["point_cells"]``: the logic's loop adds entries as it hears claims
    (a new entry's cell is None until here, and its sender listed in ``"new"``), so a tick
    computes the cells of the claims heard since the last one only; a map with another origin
    or resolution, or claims changed behind the loop's back (another length), get every cell
    anew. The same cells as :func:`~._common.cells_of` of every claim, to the bit
    (``grid.pos_to_cell``'s arithmetic on each).

    (The goals remembered, ``visited``, keep their cells in their own store:
    :func:`~._common.remembered_cells`.)"""
    geometry = (grid.origin_x, grid.origin_y, grid.resolution)
    claims = memory["claims"]
    kept = memory.get("point_cells")
    if kept is None or kept["geometry"] != geometry or len(kept["claims"]) != len(claims):
        points = [(x, y) for x, y, _ in claims.values()]
        kept = memory["point_cells"] = {
            "geometry": geometry,
            "claims": dict(zip(claims, cells_of(grid, points), strict=True)),
            "new": [],
        }
        return kept
    cells = kept["claims"]
    for sender in kept["new"]:
        if cells[sender] is None:  # (not computed already)
            x, y = claims[sender][:2]
            cells[sender] = grid.pos_to_cell(x, y)
    kept["new"] = []
    return kept


def _positions(robot) -> list[tuple[float, float]]:
    """Where the robots it senses are (metres)."""
    return [(r.pos.x, r.pos.y) for r in robot.state.nearby_robots]


def _claim_cells(memory: dict, grid) -> np.ndarray:
    """float64 (K, 2), read-only: the cells ``(ix, iy)`` of the goals other robots announced
    (``claims``, in its order), then of every goal remembered (``visited``, oldest first:
    :func:`~._common.remembered_cells`). Made again only when a claim was heard since, or the
    map's origin or resolution changed (the same cells as computing them every tick)."""
    geometry = (grid.origin_x, grid.origin_y, grid.resolution)
    key = (memory.get("claims_heard", 0), *geometry)
    cached = memory.get("claim_cells")
    if cached is None or cached[0] != key:
        announced = np.array(list(_point_cells(memory, grid)["claims"].values()), dtype=np.float64)
        remembered = remembered_cells(memory, "visited", grid)
        cells = np.concatenate([announced.reshape(-1, 2), remembered.astype(np.float64)])
        cells.flags.writeable = False
        cached = memory["claim_cells"] = (key, cells)
    return cached[1]


def _yield_goal(robot, costmap) -> bool:
    """Whether a robot that goes first announced a goal near ours: the shorter announced path
    goes first, then the lower robot index. Checked on every new claim; while every frontier
    is announced (the goal is shared), at most every :data:`SHARE_RECHECK_TICKS`."""
    memory = robot.memory
    if not _outranked_near_goal(memory, costmap, robot.namespace):
        return False
    if not memory.get("sharing"):
        return True
    return robot.tick - memory.get("checked", -SHARE_RECHECK_TICKS) >= SHARE_RECHECK_TICKS


def _outranked_near_goal(memory: dict, costmap, namespace: str) -> bool:
    """Whether a robot that goes first announced a goal within :data:`CLAIM_RADIUS_CELLS` of
    ours. It changes only with a claim heard, our goal or its distance, or the map's origin or
    resolution. While those three stay and the answer is no, only the senders heard since the
    last check are looked at (their claims replaced what they announced before); otherwise
    every claim is (the same answer as computing it afresh every tick)."""
    grid = costmap.grid
    goal, mine = memory["goal"], memory.get("distance", 0.0)
    key = (grid.origin_x, grid.origin_y, grid.resolution, goal, mine)
    heard = memory.get("claims_heard", 0)
    new = memory.get("claims_new", {})
    memory["claims_new"] = {}  # a new dict: a shallow copy of the memory keeps the old one
    cached = memory.get("outranked")
    if cached is not None and cached[0] == key:
        if cached[1] == heard:
            return cached[2]
        if not cached[2] and cached[1] + sum(new.values()) == heard:
            senders = list(new)  # every claim heard since is one of theirs
            found = _outranks(memory, costmap, goal, mine, namespace, senders)
            memory["outranked"] = (key, heard, found)
            return found
    found = _outranks(memory, costmap, goal, mine, namespace, list(memory["claims"]))
    memory["outranked"] = (key, heard, found)
    return found


def _outranks(memory: dict, costmap, goal, mine: float, namespace: str, senders: list) -> bool:
    """Whether one of ``senders`` goes first (shorter announced path, then lower robot index)
    and announced a goal within :data:`CLAIM_RADIUS_CELLS` of ``goal``."""
    me = (round(mine, 2), robot_index(namespace))
    gx, gy = costmap.pos_to_cell(*goal)
    grid = costmap.grid
    radius2 = CLAIM_RADIUS_CELLS**2
    claims = memory["claims"]
    cell_of = _point_cells(memory, grid)["claims"]
    for sender in senders:
        cx, cy = cell_of[sender]
        if (cx - gx) ** 2 + (cy - gy) ** 2 <= radius2 and (
            claims[sender][2],
            robot_index(sender),
        ) < me:
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _parsed_claim(text: str) -> tuple[float, float, float] | None:
    # parse_claim_distance of a broadcast every robot in range hears: parsed once (a tuple)
    return parse_claim_distance(text)


@functools.lru_cache(maxsize=4096)
def _visited_point(text: str) -> tuple[float, float]:
    # the point a claim broadcast adds to "visited" (remember_point): its goal to 0.1 m
    # (round() of a float to a number of digits is slow; every robot in range hears the same text)
    x, y, _ = _parsed_claim(text)
    return (round(x, 1), round(y, 1))


def _traversable(grid) -> np.ndarray:
    """:func:`~maes_controller.navigation.traversable_mask` of a costmap grid, read-only (kept
    with the grid: the robots sharing a map, and every search on it, compute it once)."""
    mask = traversable_mask(grid.array)
    mask.flags.writeable = False
    return mask


def parse_claim(text: str) -> tuple[float, float] | None:
    """The goal ``(x, y)`` announced in an explorer's broadcast, or None for other messages.

    Examples
    --------
    >>> parse_claim("frontier-goal 1.50 -2.00 7.25")
    (1.5, -2.0)
    >>> parse_claim("hello") is None
    True
    """
    claim = parse_claim_distance(text)
    return None if claim is None else claim[:2]


def parse_claim_distance(text: str) -> tuple[float, float, float] | None:
    """``(x, y, d)`` of an explorer's broadcast: the goal and the path length to it (metres;
    0 when the broadcast gives none), or None for other messages.

    Examples
    --------
    >>> parse_claim_distance("frontier-goal 1.50 -2.00 7.25")
    (1.5, -2.0, 7.25)
    >>> parse_claim_distance("frontier-goal 1.50 -2.00")
    (1.5, -2.0, 0.0)
    """
    parts = text.split()
    if len(parts) not in (3, 4) or parts[0] != CLAIM_PREFIX:
        return None
    try:
        values = [float(v) for v in parts[1:]]
    except ValueError:
        return None
    return values[0], values[1], values[2] if len(values) == 3 else 0.0
