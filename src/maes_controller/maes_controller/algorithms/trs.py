"""TRS-Python's exploration: nearest frontier, A* with path pruning, RNN coordination.

After "Robotic exploration in Python" (TRS-Python; ``docs/algorithms.md``, section TRS-Python).
Each robot splits the world into square *subareas* and is in one of two states:

* **Exploration**: drive to the nearest reachable frontier cell (by path length) inside the
  subarea the robot is in; when the subarea has none left, switch to Moving.
* **Moving**: pick the subarea with frontiers minimising ``path length + w`` with
  ``w = ALPHA_M * robots approaching it`` (robots whose latest broadcast names it as their
  subarea), drive to its nearest frontier cell, then switch back to Exploration there.

The route to a goal is the robot's own A* path on its costmap (:func:`astar`), then either
pruned to line-of-sight waypoints (:func:`prune_path`, :func:`logic`) or kept cell by cell
(:func:`logic_unpruned`, the paper's "without pruning" baseline). Each waypoint is sent as a
navigation goal in turn, as TRS-Python's robots drove from way-point to way-point.

Every robot broadcasts ``trs <state> <subarea> <x> <y> <d> [f=<id>,...]`` (its goal, the path
length to it in metres, and the finished subareas it knows, below) when it picks a goal and
every ``BROADCAST_PERIOD`` ticks; robots out of broadcast range simply do not count.

Spreading a team that starts together (MAES-ROS's additions; the paper coordinated by subareas
only, and its few robots started apart):

* a frontier cell within :data:`CLAIM_RADIUS_CELLS` of another robot's announced goal is left
  to it while the subarea has others; a subarea whose frontier is all announced counts as
  explored for Exploration (the robot moves on, with TRS's own weight per robot approaching);
* two robots whose goals are that close keep a total order, the shorter announced path first
  (then the lower robot index), and the other chooses again;
* path lengths go around the robots the robot senses; a robot that reaches frontier only
  through them (inside a packed start) waits for them, at most :data:`HEMMED_TICKS`;
* a subarea a robot explored (in Exploration there, no frontier cell left in its own map,
  reachable or not, and at least :data:`FINISHED_KNOWN_SHARE` of its cells known) is
  *finished* for every robot: the finished subareas ride in the
  broadcasts (``f=<id>,<id>...``, the union each robot knows) and a robot takes a subarea
  another robot finished only when no other frontier is left to it. Each robot maps alone
  (``distribute_slam: false``, the default), so without this an area explored by one robot
  still shows frontier in the others' maps and a bigger team explores it again and again.
  A subarea the robot finished itself stays a task wherever its own map shows frontier, so a
  lone robot runs as before.
* **Ground others passed**, as in the frontier explorer: each robot announces where it is
  every :data:`~._common.TRAIL_STEP_M` metres it drives (``frontier-trail x y``), and a
  frontier cell within :data:`CLAIM_RADIUS_CELLS` of a trail point it heard is taken only
  when no other is left (after the claims, and also while every frontier is announced).
* **Making room**, as in the frontier explorer: a robot in a crowd
  (:func:`~._common.crowded`) that finds every frontier announced first drives to the place
  within :data:`~._common.SPREAD_RADIUS_M` of path farthest from the robots it senses
  (:func:`~._common.spread_cell`), then chooses again; when the crowd keeps it from that
  place (the navigator gave up, or :data:`SPREAD_TICKS` passed) it chooses a goal at once,
  not another place. From the :data:`CROWDED_AGAIN`-th time
  it made room on, a robot that still finds every frontier announced chooses that next goal
  by TRS's weight among subareas, the one it stands in included (with the robots approaching
  it), instead of the nearest frontier of the subarea it stands in (``docs/scaling.md``,
  "The doubling misses traced": 50 robots in a start room with one door).
* **Maps shared over the radio** (``docs/scaling.md``, "TRS shares its map"): each robot
  maps alone (``distribute_slam: false``, the default), so a robot in a room wider than its
  lidar reaches took the room's far side, which the robots there had mapped, as frontier,
  and 50 robots in a start room with one door left it late. Every
  :data:`~._common.MAP_PERIOD` ticks each robot broadcasts the tiles of its own map
  (:data:`~._common.MAP_TILE` cells square: known and blocked bits, ``maptiles
  <tx>,<ty>:<base64> ...``) that changed since it last sent them, nearest first, and a
  robot chooses (frontier, subareas, paths) on its own map with the cells only others mapped
  filled in (:func:`~._common.merged_view`). Broadcasts reach as far as the radio does
  (``broadcast_range``, walls, loss): out of range, a robot maps alone as before. A robot
  making room in a crowd chooses its spot on its own map (on the shared one the spot lies
  beyond the crowd's door, against the robots coming in). **Its own frontier first**: a
  frontier cell known only from the tiles heard (the edge of a teammate's map, where that
  teammate is exploring) is chosen only when no frontier cell the robot mapped itself is
  reachable; otherwise two robots follow each other and swap regions (2 robots on 20
  buildings: 57.8 % explored after 2 minutes with, 60.7 % without sharing; 59.9 % with it
  and this rule).
* **A goal the navigator gave up on** (or that could not be planned) is left while other
  frontier is; when nothing else is left, such goals are tried again (a crowd that blocked
  them moves on), so a robot in a packed start does not declare itself done. A goal reached
  without closing its frontier is left for good.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from maes_common.contract import MAX_MESSAGE_BYTES

from ..navigation import astar, prune_path
from ..robot_api import NavStatus
from ._common import (
    SPREAD_RADIUS_M,
    MapView,
    announce_trail,
    area_labels,
    crowded,
    hear_map,
    hear_trail,
    merged_view,
    robot_index,
    share_map,
    spread_cell,
    trail_cells,
    without_trails,
)

#: Side of a square subarea, metres (the paper does not give one; 4 subareas in its house map).
SUBAREA_SIDE_M = 10.0
#: Weight per robot approaching a subarea, metres of path (the paper's alpha).
ALPHA_M = 10.0
#: Ticks between position broadcasts.
BROADCAST_PERIOD = 10
#: Ticks between checks that the current goal still borders unknown space, and between a
#: done robot's looks for new frontier.
RECHECK_PERIOD = 10
#: A goal that failed or did not close its frontier blocks frontier cells this close (cells).
SKIP_RADIUS_CELLS = 2
#: Another robot's broadcast older than this many ticks no longer counts as approaching.
PEER_TIMEOUT = 100
#: A frontier cell this close (cells) to another robot's announced goal is left to it.
CLAIM_RADIUS_CELLS = 4.0
#: Ticks a robot hemmed in by robots (frontier only through them) waits for them to go.
HEMMED_TICKS = 50

EXPLORATION, MOVING = "exploration", "moving"
#: A subarea is finished only when its robot's map knows this share of its cells (a room whose
#: door lies in another subarea shows no frontier here until a robot comes through that door).
FINISHED_KNOWN_SHARE = 0.8
#: The broadcast's field of finished subareas.
FINISHED_PREFIX = "f="
#: From the time a robot made room in a crowd this often, its next choice (when every frontier
#: is announced) is by TRS's weight, not the nearest frontier of the subarea it stands in.
CROWDED_AGAIN = 2
#: A robot making room that has not reached its spot after this many ticks (the crowd it
#: makes room in blocks the way) stops, and chooses a goal instead of another spot.
SPREAD_TICKS = 150


def logic(robot: Any) -> None:
    """TRS-Python with path pruning (line-of-sight waypoints)."""
    step(robot, prune=True)


def logic_unpruned(robot: Any) -> None:
    """TRS-Python without path pruning: every A* cell is a waypoint."""
    step(robot, prune=False)


def parse_message(text: str) -> tuple[str, int, float, float, float] | None:
    """``(state, subarea, x, y, d)`` of a TRS broadcast (``d`` 0 when not given), None for
    other messages.

    Examples
    --------
    >>> parse_message("trs moving 1002001 1.5 -2.0 7.25")
    ('moving', 1002001, 1.5, -2.0, 7.25)
    >>> parse_message("frontier-goal 1 2") is None
    True
    """
    parts = text.split()
    if len(parts) == 7 and parts[6].startswith(FINISHED_PREFIX):
        parts = parts[:6]
    if len(parts) not in (5, 6) or parts[0] != "trs" or parts[1] not in (EXPLORATION, MOVING):
        return None
    try:
        d = float(parts[5]) if len(parts) == 6 else 0.0
        return parts[1], int(parts[2]), float(parts[3]), float(parts[4]), d
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def parse_finished(text: str) -> frozenset[int]:
    """The finished subareas a TRS broadcast lists (``f=<id>,<id>...``; empty when none or
    for other messages). Parsed once for all the robots that hear it.

    Examples
    --------
    >>> sorted(parse_finished("trs moving 1002001 1.5 -2.0 7.25 f=1002001,1001001"))
    [1001001, 1002001]
    >>> parse_finished("trs moving 1002001 1.5 -2.0 7.25")
    frozenset()
    """
    parts = text.split()
    if len(parts) != 7 or parts[0] != "trs" or not parts[6].startswith(FINISHED_PREFIX):
        return frozenset()
    try:
        return frozenset(int(a) for a in parts[6][len(FINISHED_PREFIX) :].split(",") if a)
    except ValueError:
        return frozenset()


def finished_field(finished: set[int] | frozenset[int], room: int, tick: int) -> str:
    """`` f=<id>,<id>...``: the finished subareas, sorted, as many as ``room`` characters
    hold; when not all fit, a window that moves on every tick, so each is sent in turn.

    Examples
    --------
    >>> finished_field({1002001, 1001001}, 100, 0)
    ' f=1001001,1002001'
    >>> finished_field({1002001, 1001001}, 12, 1)
    ' f=1002001'
    >>> finished_field(set(), 100, 0)
    ''
    """
    ids = [str(a) for a in sorted(finished)]
    if not ids:
        return ""
    field = " " + FINISHED_PREFIX + ",".join(ids)
    if len(field) <= room:
        return field
    width = len(ids[0]) + 1  # ids are of one width (area_labels)
    fit = max((room - len(FINISHED_PREFIX) - 1) // width, 0)
    if fit == 0:
        return ""
    start = (tick * fit) % len(ids)
    window = (ids + ids)[start : start + fit]
    return " " + FINISHED_PREFIX + ",".join(window)


def approaching_counts(peers: dict, now: int) -> dict[int, int]:
    """How many robots' recent broadcasts name each subarea.

    Examples
    --------
    >>> approaching_counts({"robot1": (5, 7), "robot2": (5, 9), "robot3": (6, 0)}, now=10)
    {5: 2, 6: 1}
    """
    counts: dict[int, int] = {}
    for sub, tick in peers.values():
        if now - tick <= PEER_TIMEOUT:
            counts[sub] = counts.get(sub, 0) + 1
    return counts


def choose_subarea(
    view: MapView, labels: np.ndarray, counts: dict[int, int], allowed: np.ndarray
) -> int | None:
    """The subarea with reachable frontier (in ``allowed``) minimising path + ALPHA_M * count."""
    sel = view.reachable_frontier & allowed
    if not sel.any():
        return None
    subs = labels[sel]
    cost_m = view.dist[sel] * view.resolution
    best: tuple[float, int] | None = None
    for sub in np.unique(subs):  # sorted: ties go to the lowest subarea index
        c = float(cost_m[subs == sub].min()) + ALPHA_M * counts.get(int(sub), 0)
        if best is None or c < best[0]:
            best = (c, int(sub))
    return best[1]


def _skip_mask(view: MapView, skip: list) -> np.ndarray:
    mask = np.ones(view.array.shape, dtype=bool)
    h, w = mask.shape
    r = SKIP_RADIUS_CELLS
    for ix, iy in skip:
        mask[max(iy - r, 0) : min(iy + r + 1, h), max(ix - r, 0) : min(ix + r + 1, w)] = False
    return mask


def _plan(view: MapView, goal: tuple[int, int], prune: bool) -> list[tuple[float, float]]:
    """World waypoints from the robot to ``goal``: the A* path, pruned or cell by cell."""
    path = astar(view.traversable, view.robot_cell, goal)
    if not path:
        return []
    cells = prune_path(path, view.traversable) if prune else path
    return [view.pos_of(c) for c in cells[1:]] or [view.pos_of(goal)]


def _goal_open(robot: Any, goal_cell: tuple[int, int]) -> bool:
    view = merged_view(robot)
    if view is None or not view.grid.in_bounds(*goal_cell):
        return False
    ix, iy = goal_cell
    return bool(view.frontier[max(iy - 1, 0) : iy + 2, max(ix - 1, 0) : ix + 2].any())


def step(robot: Any, *, prune: bool) -> None:
    """One logic tick of TRS-Python (see the module docstring)."""
    mem = robot.memory
    peers = mem.setdefault("peers", {})  # namespace -> (subarea, tick of the broadcast)
    claims = mem.setdefault("claims", {})  # namespace -> (goal x, y, path length d)
    heard = mem.setdefault("heard_finished", set())  # subareas finished, by anyone, heard of
    for message in robot.state.incoming_broadcast_msgs:
        if hear_trail(mem, message.msg) or hear_map(robot, message.msg):
            continue  # where others were (trail_cells), what they mapped (merged_view)
        parsed = parse_message(message.msg)
        if parsed is not None:
            peers[message.sender] = (parsed[1], robot.tick)
            claims[message.sender] = parsed[2:]
            heard |= parse_finished(message.msg)
    if robot.robot_position is not None:
        announce_trail(robot, robot.robot_position)
    share_map(robot)
    mem.setdefault("mode", EXPLORATION)
    skip = mem.setdefault("skip", [])
    waypoints = mem.get("waypoints")
    if waypoints and mem.get("spreading"):
        status = robot.nav_status
        late = robot.tick - mem.get("spread_since", robot.tick) >= SPREAD_TICKS
        if not status.done and not late:
            return  # making room in a crowd: then choose a frontier from there
        if late and not status.done:
            robot.cancel_nav()
        mem["spreading"] = False
        # the crowd blocked the way to the spot: choose a goal now, not another spot
        mem["room_blocked"] = late or status in (NavStatus.ABORTED, NavStatus.REJECTED)
        mem["rooms_made"] = mem.get("rooms_made", 0) + 1
        mem["weigh_next"] = mem["rooms_made"] >= CROWDED_AGAIN
        waypoints.clear()
    elif waypoints:
        status = robot.nav_status
        goal_cell = mem["goal_cell"]
        if robot.tick % RECHECK_PERIOD == 0 and not _goal_open(robot, goal_cell):
            waypoints.clear()  # the frontier closed on the way: pick a new goal now
        elif not mem.get("sharing") and _outranked_claim(robot):
            waypoints.clear()  # a robot that goes first announced a goal near ours
        elif status is NavStatus.ABORTED or status is NavStatus.REJECTED:
            mem.setdefault("failed", []).append(goal_cell)
            waypoints.clear()
        elif not status.done:
            _maybe_broadcast(robot)
            return
        else:
            waypoints.pop(0)
            if waypoints:
                robot.nav_to_pos(*waypoints[0])
                return
            if _goal_open(robot, goal_cell):
                skip.append(goal_cell)  # reached without closing it: don't come back
        if mem["mode"] == MOVING and not waypoints:
            mem["mode"] = EXPLORATION  # done moving: explore the subarea we are in now
    elif mem.get("done") and robot.tick - mem["done_at"] < RECHECK_PERIOD:
        return  # no frontier left: look again every RECHECK_PERIOD ticks, not every tick
    _decide(robot, prune)


def _decide(robot: Any, prune: bool) -> None:
    mem = robot.memory
    view = merged_view(robot, around_robots=True)
    if view is None or view.robot_cell is None:
        return
    hemmed = mem.get("hemmed_since")
    if view.hemmed and (hemmed is None or robot.tick - hemmed < HEMMED_TICKS):
        mem["hemmed_since"] = robot.tick if hemmed is None else hemmed
        mem["waypoints"] = []
        return  # frontier only through the robots around: let them go first
    mem["hemmed_since"] = None
    labels = area_labels(view, SUBAREA_SIDE_M)
    here = int(labels[view.robot_cell[1], view.robot_cell[0]])
    finished = mem.setdefault("finished", set())  # subareas this robot explored
    if mem["mode"] == EXPLORATION:
        inside = labels == here
        if not view.frontier[inside].any() and (
            np.count_nonzero(view.array[inside] >= 0)
            >= FINISHED_KNOWN_SHARE * np.count_nonzero(inside)
        ):
            finished.add(here)
    failed = mem.setdefault("failed", [])  # goals the navigator gave up on, or unplanned
    allowed = _skip_mask(view, mem["skip"] + failed)
    if failed and not (view.reachable_frontier & allowed).any():
        failed.clear()  # nothing else is left: try them again (a crowd that blocked them moves)
        allowed = _skip_mask(view, mem["skip"])
    others = mem["heard_finished"] - finished
    if others:  # subareas others finished wait until no other frontier is left
        open_ = allowed & ~np.isin(labels, np.fromiter(others, dtype=np.int64, count=len(others)))
        if (view.reachable_frontier & open_).any():
            allowed = open_
    # its own frontier first: a frontier only the tiles heard show lies where the robot that
    # mapped them is exploring, and a robot that takes it follows that robot
    mine = allowed & (robot.global_costmap.grid.array >= 0)
    if (view.reachable_frontier & mine).any():
        allowed = mine
    unclaimed = allowed & _claim_mask(view, mem["claims"])
    mem["sharing"] = not (view.reachable_frontier & unclaimed).any()
    if not mem["sharing"]:
        allowed = unclaimed  # else every frontier is announced: share, weighted by TRS's rule
    allowed = without_trails(view, allowed, trail_cells(mem, view.grid), CLAIM_RADIUS_CELLS)
    if mem["sharing"] and not mem.pop("room_blocked", False):
        robots = [(r.pos.x, r.pos.y) for r in robot.state.nearby_robots]
        if crowded(view.position, robots):
            # on its own map: with the tiles heard, the spot farthest from the robots around
            # lies beyond the crowd's door, and robots making room pushed into it against
            # the robots coming in (stalls)
            own = MapView.of(robot, around_robots=True)
            spot = spread_cell(own, robots, SPREAD_RADIUS_M)
            if spot is not None and spot != own.robot_cell:
                mem["spreading"], mem["waypoints"] = True, [own.pos_of(spot)]
                mem["spread_since"] = robot.tick
                robot.nav_to_pos(*mem["waypoints"][0])
                return  # make room first, then choose again
    goal = None
    weigh = mem.pop("weigh_next", False) and mem["sharing"]  # made room again: TRS's weight
    if mem["mode"] == EXPLORATION and not weigh:
        goal = view.nearest_in((labels == here) & allowed)
        mem["subarea"] = here
    if goal is None:
        counts = approaching_counts(mem["peers"], robot.tick)
        target = choose_subarea(view, labels, counts, allowed)
        if target is None:
            if not mem.get("done"):
                robot.logger.info(f"{robot.namespace}: no frontier left, exploration done")
            mem["done"], mem["waypoints"], mem["done_at"] = True, [], robot.tick
            return
        mem["mode"], mem["subarea"] = (MOVING if target != here else EXPLORATION), target
        goal = view.nearest_in((labels == target) & allowed)
    mem["done"] = False
    mem["goal_cell"] = goal
    mem["goal_distance"] = round(float(view.dist[goal[1], goal[0]]) * view.resolution, 2)
    mem["waypoints"] = _plan(view, goal, prune)
    if not mem["waypoints"]:
        failed.append(goal)
        return
    robot.nav_to_pos(*mem["waypoints"][0])
    _maybe_broadcast(robot, force=True)


def _claim_mask(view: MapView, claims: dict) -> np.ndarray:
    """Bool (H, W): cells farther than :data:`CLAIM_RADIUS_CELLS` from every announced goal."""
    h, w = view.array.shape
    free = np.ones((h, w), dtype=bool)
    if not claims:
        return free
    cells = np.array([view.cell_of(x, y) for x, y, _ in claims.values()], dtype=np.float64)
    ys, xs = np.mgrid[0:h, 0:w]
    for cx, cy in cells:
        free &= (xs - cx) ** 2 + (ys - cy) ** 2 > CLAIM_RADIUS_CELLS**2
    return free


def _outranked_claim(robot: Any) -> bool:
    """Whether another robot announced a goal within :data:`CLAIM_RADIUS_CELLS` of ours with a
    shorter path (then a lower robot index): the total order of who keeps a frontier."""
    mem = robot.memory
    costmap = robot.global_costmap
    if costmap.costmap is None or "goal_cell" not in mem:
        return False
    gx, gy = mem["goal_cell"]
    me = (mem.get("goal_distance", 0.0), robot_index(robot.namespace))
    for sender, (x, y, d) in mem["claims"].items():
        cx, cy = costmap.pos_to_cell(x, y)
        near = (cx - gx) ** 2 + (cy - gy) ** 2 <= CLAIM_RADIUS_CELLS**2
        if near and (d, robot_index(sender)) < me:
            return True
    return False


def _maybe_broadcast(robot: Any, force: bool = False) -> None:
    mem = robot.memory
    if "subarea" not in mem or "goal_cell" not in mem or robot.robot_position is None:
        return
    if force or robot.tick % BROADCAST_PERIOD == 0:
        costmap = robot.global_costmap
        if costmap.costmap is None:
            return
        x, y = costmap.cell_to_pos(*mem["goal_cell"])
        d = mem.get("goal_distance", 0.0)
        text = f"trs {mem['mode']} {mem['subarea']} {x:.2f} {y:.2f} {d:.2f}"
        known = mem.get("finished", set()) | mem.get("heard_finished", set())
        room = MAX_MESSAGE_BYTES - len(text.encode())
        robot.broadcast_msg(text + finished_field(known, room, robot.tick))
