"""SPACE's agent controller: a ``py_trees`` behaviour tree around a decision-making plugin.

After SPACE (Swarm Planning and Control Evaluation; ``docs/algorithms.md``, section SPACE).
Tasks are *areas*: the world is cut into squares of ``AREA_SIDE_M``; an area with reachable
frontier cells in the robot's map is a task whose *workload* is its number of frontier cells, whose
goal is its reachable frontier cell nearest to the robot and whose cost is the path length there.
Area ids come from world coordinates, so every robot names a task alike whatever its map.

The tree is SPACE's default one, ticked once per logic tick::

    Selector (memory=False)
    ├── Sequence (memory=False)
    │   ├── LocalSensing     read broadcasts; every DECISION_PERIOD ticks, rebuild the tasks
    │   ├── DecisionMaking   the plugin picks a task (FAILURE when it has none)
    │   └── TaskExecution    drive to the task's goal (RUNNING), SUCCESS when it is explored
    └── Exploration          no task assigned: drive to a random reachable free cell nearby

The *plugin* decides: :class:`FirstClaimedGreedy` here (SPACE's FCG: nearest task not claimed by
another robot), CBBA in :mod:`.space_cbba`, GRAPE in :mod:`.space_grape`. Each robot keeps its
own tree and a plain dict as its blackboard in ``robot.memory`` (py_trees' blackboard is one per
process, and direct mode runs every robot in one process).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import py_trees

from ..robot_api import NavStatus
from ._common import MapView, area_labels, robot_index, robot_rng

#: Side of a square area task, metres.
AREA_SIDE_M = 5.0
#: Ticks between rebuilding the tasks from the costmap (the SLAM map's default update period).
DECISION_PERIOD = 10
#: Ticks between a plugin's broadcasts.
BROADCAST_PERIOD = 5
#: How far the Exploration node's random goals may be, metres.
EXPLORATION_RADIUS_M = 5.0
#: The Exploration node's random goals keep this far (metres) from the robots sensed.
ROOM_M = 1.5
#: Ticks a robot hemmed in by robots (frontier only through them) waits for them to go.
HEMMED_TICKS = 50
#: Ticks a task the robot gave up (the navigator aborted its goal, or the robot was stuck) is
#: left out of its tasks, for a plugin with ``gives_up_when_stuck`` (CBBA's; SPACE BT and SPACE
#: GRAPE explored less with 50 robots and GRAPE stalled more with it, so they go without).
ABORTED_TICKS = 300
#: A robot driving to a task that stays within STUCK_M of one place for STUCK_TICKS gives it up.
STUCK_M = 2.0
STUCK_TICKS = 300

Status = py_trees.common.Status


@dataclass(frozen=True)
class Task:
    """An area to explore, as this robot sees it now."""

    goal: tuple[int, int]  # its reachable frontier cell nearest to the robot
    workload: int  # frontier cells in it
    cost_m: float  # path length from the robot to ``goal``
    pos: tuple[float, float]  # ``goal`` in world metres


def find_tasks(view: MapView, side_m: float = AREA_SIDE_M) -> dict[int, Task]:
    """The area tasks of a map view: area id -> :class:`Task`, for areas with reachable frontier.

    Examples
    --------
    >>> from maes_controller.navigation import GridMap
    >>> g = GridMap.from_array(np.array([[0, 0, 0, -1]], dtype=np.int8), 1.0)
    >>> t = find_tasks(MapView(g, (0.5, 0.5)), side_m=10.0)
    >>> [(v.goal, v.workload, v.cost_m) for v in t.values()]
    [((2, 0), 1, 2.0)]
    """
    sel = view.reachable_frontier
    if not sel.any():
        return {}
    labels = area_labels(view, side_m)[sel]
    iy, ix = np.nonzero(sel)
    d = view.dist[sel]
    order = np.lexsort((ix, iy, d, labels))  # per area: nearest first, ties in raster order
    labels, ix, iy, d = labels[order], ix[order], iy[order], d[order]
    first = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    counts = np.diff(np.r_[first, labels.size])
    tasks = {}
    for k, n in zip(first, counts, strict=True):
        cell = (int(ix[k]), int(iy[k]))
        tasks[int(labels[k])] = Task(cell, int(n), float(d[k]) * view.resolution, view.pos_of(cell))
    return tasks


class FirstClaimedGreedy:
    """SPACE's First-Claimed Greedy: the nearest task nobody else claimed first.

    Broadcasts ``fcg <task>``; a task claimed by another robot within ``CLAIM_TICKS`` is
    skipped, and if another robot claims the task this robot chose, the robot gives it up and
    chooses again.
    """

    CLAIM_TICKS = 50

    def __init__(self, me: int) -> None:
        self.me = me
        self.claims: dict[int, tuple[int, int]] = {}  # task -> (robot, tick)
        self.task: int | None = None

    def receive(self, sender: int, text: str, now: int) -> None:
        parts = text.split()
        if len(parts) == 2 and parts[0] == "fcg" and parts[1].lstrip("-").isdigit():
            self.claims[int(parts[1])] = (sender, now)
            if int(parts[1]) == self.task and sender != self.me:
                self.task = None  # claimed by another robot: choose again

    def decide(self, tasks: dict[int, Task], now: int) -> int | None:
        if self.task in tasks:
            return self.task
        free = [
            t
            for t in tasks
            if t not in self.claims
            or self.claims[t][0] == self.me
            or now - self.claims[t][1] > self.CLAIM_TICKS
        ]
        self.task = min(free, key=lambda t: (tasks[t].cost_m, t)) if free else None
        return self.task

    def task_done(self, task: int) -> None:
        self.task = None

    def message(self) -> str | None:
        return None if self.task is None else f"fcg {self.task}"


class _Node(py_trees.behaviour.Behaviour):
    def __init__(self, name: str, bb: dict) -> None:
        super().__init__(name)
        self.bb = bb


class LocalSensing(_Node):
    """Read the broadcasts; rebuild the tasks every DECISION_PERIOD ticks."""

    def update(self) -> Status:
        robot = self.bb["robot"]
        _receive(robot, self.bb["plugin"])
        if self.bb.get("tasks") is None or robot.tick >= self.bb["tasks_tick"] + DECISION_PERIOD:
            view = MapView.of(robot, around_robots=True)
            if view is None:
                return Status.FAILURE
            tasks = find_tasks(view)
            self.bb["view"], self.bb["tasks"] = view, tasks
            self.bb["tasks_tick"] = robot.tick
            _report_explored(self.bb, view)
            seen = getattr(self.bb["plugin"], "seen", None)
            if seen is not None:
                seen(view)  # a plugin that reads the map itself (CBBA's)
            aborted = self.bb.setdefault("aborted", {})
            for task, tick in list(aborted.items()):
                if robot.tick - tick >= ABORTED_TICKS:
                    del aborted[task]
                else:
                    tasks.pop(task, None)
        return Status.SUCCESS


class DecisionMaking(_Node):
    """Ask the plugin for a task; broadcast what it wants to share."""

    def update(self) -> Status:
        robot, plugin = self.bb["robot"], self.bb["plugin"]
        task = plugin.decide(self.bb["tasks"], robot.tick)
        if robot.tick % BROADCAST_PERIOD == robot.robot_id % BROADCAST_PERIOD:
            text = plugin.message()
            if text is not None:
                robot.broadcast_msg(text)
        self.bb["task"] = task
        return Status.FAILURE if task is None else Status.SUCCESS


class TaskExecution(_Node):
    """Drive to the assigned task's goal; SUCCESS once the area is explored or reached."""

    def update(self) -> Status:
        robot, plugin, tasks = self.bb["robot"], self.bb["plugin"], self.bb["tasks"]
        task = self.bb["task"]
        goal = tasks[task].pos
        gives_up = getattr(plugin, "gives_up_when_stuck", False)
        if gives_up and _stuck(self.bb, robot, task):
            robot.cancel_nav()  # no way to it through the crowd: leave it for a while
            plugin.task_done(task)
            self.bb.setdefault("aborted", {})[task] = robot.tick
            self.bb["tasks"], self.bb["goal"], self.bb["progress"] = None, None, None
            return Status.FAILURE
        if self.bb.get("goal") != goal:
            self.bb["goal"] = goal
            robot.nav_to_pos(*goal)
            return Status.RUNNING
        status = robot.nav_status
        if not status.done:
            return Status.RUNNING
        self.bb["progress"] = None
        if status is NavStatus.SUCCEEDED or status is NavStatus.ABORTED:
            # reached (its frontier should now be seen) or unreachable: rebuild the tasks now
            if status is NavStatus.ABORTED:
                plugin.task_done(task)
                if gives_up:
                    self.bb.setdefault("aborted", {})[task] = robot.tick
            self.bb["tasks"], self.bb["goal"] = None, None
            return Status.SUCCESS
        self.bb["goal"] = None  # canceled or rejected: send it again next tick
        return Status.FAILURE


def _stuck(bb: dict, robot: Any, task: int) -> bool:
    """Whether the robot has driven to ``task`` for STUCK_TICKS without getting STUCK_M from
    where it was (MAES-ROS). The navigator's own progress check cannot tell: the task's
    nearest frontier cell moves as the robot jostles, and each new goal restarts that check,
    so a robot jammed in a crowd kept its task for minutes (a stall)."""
    pos = robot.robot_position
    mark = bb.get("progress")
    if pos is None:
        return False
    if mark is None or mark[0] != task or math.dist(pos, mark[1]) > STUCK_M:
        bb["progress"] = (task, (float(pos[0]), float(pos[1])), robot.tick)
        return False
    return robot.tick - mark[2] >= STUCK_TICKS


class Exploration(_Node):
    """No task: drive to a random reachable free cell within EXPLORATION_RADIUS_M, among
    those at least ROOM_M from the robots it senses when there are any (MAES-ROS: spare
    robots of a large team spread out instead of milling about the start)."""

    def update(self) -> Status:
        robot, view = self.bb["robot"], self.bb.get("view")
        if view is None or not self.bb.get("tasks"):
            return Status.SUCCESS  # nothing known to explore: idle
        if self.bb.get("wander") is not None and not robot.nav_status.done:
            return Status.RUNNING
        near = np.isfinite(view.dist) & (view.dist * view.resolution <= EXPLORATION_RADIUS_M)
        roomy = near & _away_from(view, robot.state.nearby_robots, ROOM_M)
        if roomy.any():
            near = roomy
        iy, ix = np.nonzero(near)
        if ix.size == 0:
            return Status.FAILURE
        k = int(robot_rng(robot).integers(ix.size))
        self.bb["wander"], self.bb["goal"] = view.pos_of((ix[k], iy[k])), None
        robot.nav_to_pos(*self.bb["wander"])
        return Status.RUNNING


def _report_explored(bb: dict, view: MapView) -> None:
    """Tell a plugin that keeps them (``plugin.explored(areas)``, CBBA's) the areas that were
    tasks of this robot and have no frontier cell left in its map, reachable or not."""
    explored = getattr(bb["plugin"], "explored", None)
    if explored is None:
        return
    known = bb.setdefault("areas", set())
    known.update(bb["tasks"])
    open_areas = set(np.unique(area_labels(view, AREA_SIDE_M)[view.frontier]).tolist())
    finished = known - open_areas
    if finished:
        explored(finished)
        known -= finished


def _away_from(view: MapView, robots: Any, distance_m: float) -> np.ndarray:
    """Bool (H, W): cells whose centre is at least ``distance_m`` from every robot in
    ``robots`` (``State.nearby_robots``)."""
    h, w = view.array.shape
    xs = view.grid.origin_x + (np.arange(w) + 0.5) * view.resolution
    ys = view.grid.origin_y + (np.arange(h) + 0.5) * view.resolution
    free = np.ones((h, w), dtype=bool)
    for r in robots:
        free &= (xs[None, :] - r.pos.x) ** 2 + (ys[:, None] - r.pos.y) ** 2 >= distance_m**2
    return free


def build_tree(bb: dict) -> py_trees.behaviour.Behaviour:
    """SPACE's default tree over the blackboard dict ``bb`` (see the module docstring)."""
    task = py_trees.composites.Sequence(
        "Task",
        memory=False,
        children=[
            LocalSensing("LocalSensing", bb),
            DecisionMaking("DecisionMaking", bb),
            TaskExecution("TaskExecution", bb),
        ],
    )
    return py_trees.composites.Selector(
        "Root", memory=False, children=[task, Exploration("Exploration", bb)]
    )


def run_tree(robot: Any, make_plugin) -> None:
    """Tick the robot's tree once, building it (with ``make_plugin(robot)``) on the first call."""
    bb = robot.memory.get("bt")
    if bb is None:
        bb = {"robot": robot, "plugin": make_plugin(robot), "tasks": None, "tasks_tick": 0}
        bb["tree"] = build_tree(bb)
        robot.memory["bt"] = bb
    bb["robot"] = robot
    if bb.get("task") is not None and bb["tasks"] is not None and bb["task"] not in bb["tasks"]:
        bb["plugin"].task_done(bb["task"])  # its area has no frontier left
    bb["wander"] = None if bb.get("task") is not None else bb.get("wander")
    if _hemmed(robot, bb):
        return  # frontier only through the robots around: let them go first
    bb["tree"].tick_once()


def _receive(robot: Any, plugin: Any) -> None:
    """Hand the plugin this tick's broadcasts."""
    for message in robot.state.incoming_broadcast_msgs:
        sender = robot_index(message.sender)
        if sender is not None:
            plugin.receive(sender, message.msg, robot.tick)


def _hemmed(robot: Any, bb: dict) -> bool:
    """Whether the robot, without a goal yet, reaches frontier only through the robots it
    senses (inside a packed start); it then waits, at most HEMMED_TICKS (MAES-ROS: the
    robots outside leave first)."""
    if bb.get("goal") is not None or bb.get("wander") is not None:
        bb["hemmed_since"] = None
        return False
    since = bb.get("hemmed_since")
    if since is not None and robot.tick - since >= HEMMED_TICKS:
        return False
    view = MapView.of(robot, around_robots=True)
    if view is None or not view.hemmed:
        bb["hemmed_since"] = None
        return False
    bb["hemmed_since"] = robot.tick if since is None else since
    _receive(robot, bb["plugin"])  # the plugin still hears the others
    return True


def logic(robot: Any) -> None:
    """SPACE's behaviour tree with the First-Claimed Greedy plugin."""
    run_tree(robot, lambda r: FirstClaimedGreedy(r.robot_id))
