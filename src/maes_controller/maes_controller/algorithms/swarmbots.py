"""Swarmbots: leader, follower and dead states, leader re-election, follow and disperse.

After the Swarmbots project (``docs/algorithms.md``, section Swarmbots). Every robot runs the
same state machine and broadcasts ``swarm <state> <x> <y> <command>`` every
``BROADCAST_PERIOD`` ticks (the project's ``/state`` topic, here the range-limited broadcast):

* **lead**: the leader explores (nearest reachable frontier, the project's frontier code) and
  commands the others: ``follow`` for ``FOLLOW_TICKS``, then ``disperse`` for
  ``DISPERSE_TICKS``, in turn.
* **follow**: on ``follow``, drive to a spot ``FOLLOW_DISTANCE_M`` from the leader (farther
  in a big team: the spots fill a disc of ``FOLLOW_AREA_M2`` per follower heard); on
  ``disperse``, drive to the nearest frontier at least ``DISPERSE_RADIUS_M`` from every robot
  it hears; when every frontier is that near a robot (a crowd), to the one whose path plus
  ``SHARE_COST_CELLS`` per robot near it is least, so the spare robots spread out instead of
  all taking the nearest. A dispersing robot that senses ``CROWD_ROBOTS`` robots or more
  measures those paths around them (as TRS and SPACE do), so it takes a frontier it can reach
  without driving through the crowd, when there is one. A dispersing robot keeps its frontier
  while the navigator drives there and it is still one.
* **goals given up**: a frontier the navigator gave up is skipped from then on, as one reached
  without closing it; any other goal given up (a follow spot) is sent again when chosen again.
* **dead**: a robot that is stuck (a goal active but under ``STUCK_DISTANCE_M`` of progress in
  ``STUCK_TICKS`` ticks, or ``MAX_FAILURES`` failed goals in a row) says so, drives to a random
  reachable cell nearby to recover, and rejoins as a follower after ``DEAD_TICKS``.

Leader election: the leader is the robot of lowest index among the robots alive (not dead) that
this robot heard within ``LEADER_TIMEOUT`` ticks, itself included. A dying leader therefore hands
over to the next index at once, and a leader that falls silent (out of range, stopped) is
replaced after ``LEADER_TIMEOUT`` ticks, as in Swarmbots. Robots out of range of every other
robot lead themselves. Map merging is the simulator's SLAM sharing: run with
``robot_constraints.distribute_slam: true``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..frontier import choose_frontier_goal
from ..robot_api import NavStatus
from ._common import MapView, distance_m, robot_index, robot_rng

BROADCAST_PERIOD = 5
LEADER_TIMEOUT = 30  # ticks (3 s at the default tick)
FOLLOW_TICKS = 50
DISPERSE_TICKS = 150
FOLLOW_DISTANCE_M = 1.5
#: Floor area per follower around the leader: the k-th follower heard (by index) takes a spot
#: sqrt(k * FOLLOW_AREA_M2 / pi) from the leader when that is farther than FOLLOW_DISTANCE_M
#: (MAES-ROS: one 1.5 m circle holds about a dozen robots, and the whole team met there).
FOLLOW_AREA_M2 = 1.5
DISPERSE_RADIUS_M = 5.0
REPLAN_PERIOD = 10
STUCK_TICKS = 80
STUCK_DISTANCE_M = 0.25
MAX_FAILURES = 3
DEAD_TICKS = 30
RECOVER_RADIUS_M = 3.0
SKIP_RADIUS_CELLS = 2.0
#: In a crowd, cells of path a robot within DISPERSE_RADIUS_M of a frontier adds to it (as the
#: frontier explorer's sharing cost; MAES-ROS).
SHARE_COST_CELLS = 10.0
#: A dispersing robot that senses this many robots or more takes its paths around them
#: (MAES-ROS: a frontier across a crowded door costs the way around the crowd, or is out of reach).
CROWD_ROBOTS = 6

LEAD, FOLLOW, DEAD = "lead", "follow", "dead"


def parse_message(text: str) -> tuple[str, float, float, str] | None:
    """``(state, x, y, command)`` of a Swarmbots broadcast, None for other messages.

    Examples
    --------
    >>> parse_message("swarm lead 1.00 2.00 follow")
    ('lead', 1.0, 2.0, 'follow')
    """
    parts = text.split()
    if len(parts) != 5 or parts[0] != "swarm" or parts[1] not in (LEAD, FOLLOW, DEAD):
        return None
    try:
        return parts[1], float(parts[2]), float(parts[3]), parts[4]
    except ValueError:
        return None


def _alive(heard: dict, now: int) -> list[int]:
    """Indices of the robots heard alive (not dead) within LEADER_TIMEOUT ticks."""
    return [i for i, (st, t) in heard.items() if st != DEAD and now - t <= LEADER_TIMEOUT]


def elect_leader(me: int, my_state: str, heard: dict, now: int) -> int:
    """Lowest index among the alive robots heard within LEADER_TIMEOUT ticks (and ``me``).

    ``heard`` maps robot index -> (state, tick heard). Falls back to ``me`` even when dead, so
    a lone robot always has a leader.

    Examples
    --------
    >>> elect_leader(2, FOLLOW, {0: (DEAD, 10), 1: (FOLLOW, 10), 3: (LEAD, 10)}, now=20)
    1
    >>> elect_leader(2, FOLLOW, {1: (FOLLOW, 10)}, now=50)
    2
    """
    alive = _alive(heard, now)
    if my_state != DEAD:
        alive.append(me)
    return min(alive) if alive else me


#: Ends of a goal after which choosing the same goal again sends it again (a retry): the
#: navigator gave it up, or it never ran.
_RETRY = (NavStatus.ABORTED, NavStatus.CANCELED, NavStatus.REJECTED)


def _go(robot: Any, goal: tuple[float, float] | None) -> None:
    """Drive to ``goal`` (None: stop). A goal already sent is not sent again while it runs or
    once reached; one the navigator gave up is, as a new attempt (each attempt's abort counts
    towards MAX_FAILURES)."""
    mem = robot.memory
    if goal is None:
        if not robot.is_nav_complete():
            robot.cancel_nav()
        mem["goal"] = None
        return
    if mem.get("goal") != goal or robot.nav_status in _RETRY:
        mem["goal"] = goal
        mem["attempt"] = mem.get("attempt", 0) + 1
        robot.nav_to_pos(*goal)


def _frontier_goal(view: MapView, avoid: list, skip: list) -> tuple[float, float] | None:
    """Nearest frontier at least DISPERSE_RADIUS_M from ``avoid`` (robots) and ``skip`` goals,
    by path around the robots ``view`` avoids when it goes around them."""
    radius = DISPERSE_RADIUS_M / view.resolution if avoid else SKIP_RADIUS_CELLS
    claimed = [view.cell_of(*p) for p in avoid + skip]
    cell = choose_frontier_goal(
        view.array,
        view.robot_cell,
        np.isfinite(view.dist) if view.goes_around else view.traversable,
        claimed=claimed,
        claim_radius=radius,
        share_cost=SHARE_COST_CELLS if avoid else None,
    )
    return None if cell is None else view.pos_of(cell)


def follow_distance(rank: int) -> float:
    """Metres from the leader of the follow spot of the follower with ``rank`` followers heard
    before it (by index): FOLLOW_DISTANCE_M, or farther so that the spots fill a disc of
    FOLLOW_AREA_M2 per follower.

    Examples
    --------
    >>> follow_distance(0), follow_distance(4)
    (1.5, 1.5)
    >>> round(follow_distance(118), 2)
    7.51
    """
    return max(FOLLOW_DISTANCE_M, math.sqrt(rank * FOLLOW_AREA_M2 / math.pi))


def _follow_spot(view: MapView, leader_xy: tuple, me: int, rank: int) -> tuple[float, float] | None:
    angle = 2.0 * math.pi * ((me * 0.618) % 1.0)  # a spread of angles around the leader
    radius = follow_distance(rank)
    x = leader_xy[0] + radius * math.cos(angle)
    y = leader_xy[1] + radius * math.sin(angle)
    reach = np.isfinite(view.dist)
    iy, ix = np.nonzero(reach)
    if ix.size == 0:
        return None
    cx, cy = view.cell_of(x, y)
    k = int(np.argmin((ix - cx) ** 2 + (iy - cy) ** 2))
    return view.pos_of((ix[k], iy[k]))


def _keeps(robot: Any, view: MapView, goal: tuple[float, float] | None) -> bool:
    """Whether a dispersing robot keeps its goal: it chose it dispersing, the navigator is on
    its way there, and the frontier there is still one."""
    mem = robot.memory
    if goal is None or mem.get("dispersing") != goal or robot.nav_status.done:
        return False
    return _at_frontier(view, goal)


def _at_frontier(view: MapView, goal: tuple[float, float]) -> bool:
    """Whether a frontier cell is within one cell of ``goal`` in ``view``."""
    gx, gy = view.cell_of(*goal)
    near = view.frontier[max(gy - 1, 0) : gy + 2, max(gx - 1, 0) : gx + 2]
    return bool(view.grid.in_bounds(gx, gy) and near.any())


def _check_stuck(robot: Any) -> bool:
    """Update the progress watch; True when the robot should declare itself dead."""
    mem = robot.memory
    status = robot.nav_status
    if status is NavStatus.ABORTED and mem.get("counted_abort") != mem.get("attempt"):
        mem["failures"] = mem.get("failures", 0) + 1
        mem["counted_abort"] = mem.get("attempt")
    elif status is NavStatus.SUCCEEDED:
        mem["failures"] = 0
    pos = robot.robot_position
    anchor = mem.get("anchor")
    if status.done or anchor is None or distance_m(pos, anchor[0]) > STUCK_DISTANCE_M:
        mem["anchor"] = (pos, robot.tick)
        anchor = mem["anchor"]
    stuck = not status.done and robot.tick - anchor[1] >= STUCK_TICKS
    return stuck or mem.get("failures", 0) >= MAX_FAILURES


def logic(robot: Any) -> None:
    """One logic tick of a Swarmbot (see the module docstring)."""
    mem = robot.memory
    me = robot.robot_id
    heard = mem.setdefault("heard", {})  # index -> (state, tick)
    where = mem.setdefault("where", {})  # index -> (x, y)
    commands = mem.setdefault("commands", {})  # index -> command
    for message in robot.state.incoming_broadcast_msgs:
        parsed, sender = parse_message(message.msg), robot_index(message.sender)
        if parsed is not None and sender is not None:
            heard[sender] = (parsed[0], robot.tick)
            where[sender] = (parsed[1], parsed[2])
            commands[sender] = parsed[3]
    if robot.robot_position is None:
        return
    state = mem.setdefault("state", FOLLOW)
    if state == DEAD and robot.tick - mem["dead_since"] >= DEAD_TICKS:
        state = mem["state"] = FOLLOW
        mem["failures"], mem["anchor"] = 0, None
    elif state != DEAD and _check_stuck(robot):
        state = mem["state"] = DEAD
        mem["dead_since"], mem["goal"] = robot.tick, None
        robot.cancel_nav()
        robot.logger.info(f"{robot.namespace}: stuck, dead for {DEAD_TICKS} ticks")
    leader = elect_leader(me, state, heard, robot.tick)
    if state != DEAD:
        state = mem["state"] = LEAD if leader == me else FOLLOW
    phase = robot.tick % (FOLLOW_TICKS + DISPERSE_TICKS)
    command = "follow" if phase < FOLLOW_TICKS else "disperse"
    if state != LEAD:
        command = commands.get(leader, "disperse")
    if robot.tick % BROADCAST_PERIOD == me % BROADCAST_PERIOD:
        x, y = robot.robot_position
        robot.broadcast_msg(f"swarm {state} {x:.2f} {y:.2f} {command}")
    replan = robot.tick % REPLAN_PERIOD == 0 or robot.is_nav_complete()
    if not replan:
        return
    view = MapView.of(robot)
    if view is None or view.robot_cell is None:
        return
    if state == DEAD:
        if robot.is_nav_complete():
            near = np.isfinite(view.dist) & (view.dist * view.resolution <= RECOVER_RADIUS_M)
            iy, ix = np.nonzero(near)
            if ix.size:
                k = int(robot_rng(robot).integers(ix.size))
                _go(robot, view.pos_of((ix[k], iy[k])))
        return
    recent = [
        where[i] for i, (_, t) in heard.items() if i != me and robot.tick - t <= LEADER_TIMEOUT
    ]
    skip = mem.setdefault("skip", [])
    goal = mem.get("goal")
    to_frontier = state == LEAD or command == "disperse"
    reached = robot.nav_status is NavStatus.SUCCEEDED
    if goal is not None and to_frontier and reached and _at_frontier(view, goal):
        skip.append(goal)  # reached without closing its frontier: don't come back
    aborted = robot.nav_status is NavStatus.ABORTED and mem.get("skipped") != mem.get("attempt")
    if goal is not None and to_frontier and aborted:
        mem["skipped"] = mem.get("attempt")
        skip.append(goal)  # given up (no way through): another frontier
    if state == LEAD:
        goal = _frontier_goal(view, [], skip)
    elif command == "follow" and leader in where:
        rank = sum(1 for i in _alive(heard, robot.tick) if i < me and i != leader)
        goal = _follow_spot(view, where[leader], me, rank)
    elif _keeps(robot, view, goal):
        return  # on its way to a frontier that is still one: no new choice every second
    else:
        if len(robot.state.nearby_robots) >= CROWD_ROBOTS:
            view = MapView.of(robot, around_robots=True) or view
        goal = _frontier_goal(view, recent, skip)
        mem["dispersing"] = goal
    if goal is None and not mem.get("done"):
        robot.logger.info(f"{robot.namespace}: no frontier left")
    mem["done"] = goal is None
    _go(robot, goal)
