"""The robot of direct mode: the :class:`~maes_controller.robot_api.Robot` API over an in-process
simulation, fed states in metres (``Simulation.observation(tile_size)``) as the ROS stack is.

Used by :func:`maes_bringup.runners.direct.run`, which builds one :class:`DirectRobot` per robot and
feeds it every tick; see :mod:`maes_bringup.runners.direct` for what each attribute holds.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from maes_common.contract import (
    BASE_FRAME,
    MAP_FRAME,
    ODOM_FRAME,
    robot_index_of_id,
    robot_namespace,
    scan_angles,
    wire_scan_geometry,
    wire_scan_ranges,
    wire_time,
)
from maes_common.frames import OdomFrames, wire_poses
from maes_common.pose import quaternion_from_yaw
from maes_controller.maes_compat import MaesCostmap
from maes_controller.navigation import GridMap, NavSession, SessionEvents
from maes_controller.robot_api import NavStatus
from maes_controller.tf_pose import FrameTree, SmoothedTransform, compose, map_odom_jump_distance
from maes_controller.velocity import MotionNote, VelocityCommand, velocity_problem
from maes_sim.core import CommandRejected, RobotState, Simulation


class NavigatorPoses:
    """The transforms each robot's navigator and logic read, from the simulation's arrays.

    On the embedded ROS stack the simulator publishes ``odom -> base_footprint`` (odometry since
    the start) and ``map -> odom`` (so that ``map -> base_footprint`` is the SLAM-believed pose);
    the controller looks up ``map -> base_footprint`` in its frame tree, and the navigator
    smooths ``map -> odom`` (``maes_controller.tf_pose.SmoothedTransform``, which averages out the
    SLAM's random pose error) and composes it with odometry. Here the same transforms
    (:class:`maes_common.frames.OdomFrames`, as the simulator node's
    :func:`~maes_common.frames.tick_transforms`) pass through the same wire rounding
    (:func:`maes_common.frames.wire_poses`) into the same smoother every tick, and are composed as
    :class:`FrameTree` composes them (only for the robots whose pose is read), so a goal is
    followed as on ROS, to the bit. Metres and radians, map frame.
    """

    def __init__(self, sim: Simulation) -> None:
        self._tile = float(sim.config.world.tile_size)
        # The simulator node's odom frames start at the world origin.
        self._odom = OdomFrames(np.zeros((sim.n_robots, 3)), self._tile)
        # as the navigator node: larger map -> odom changes than the SLAM error are real jumps
        self._map_odom = [
            SmoothedTransform(reset_distance=map_odom_jump_distance(sim.config, robot=i))
            for i in range(sim.n_robots)
        ]
        self._stamp = 0.0
        self._odom_base: list[tuple[float, float, float]] = []
        self._map_odom_wire: list[tuple[float, float, float]] = []
        self._in_odom: list[tuple[float, float, float] | None] = []

    def observe(self, sim: Simulation) -> None:
        """Take this tick's transforms (as published, then read back from the wire)."""
        # the robots' own frames only: no world -> odom (not read here)
        tf = self._odom.transforms(None, sim.estimated_poses, sim.odometry_poses, world=False)
        self._stamp = wire_time(sim.sim_time)
        self._odom_base = wire_poses(tf.odom_base)
        self._map_odom_wire = wire_poses(tf.map_odom)
        for smoother, map_odom in zip(self._map_odom, self._map_odom_wire, strict=True):
            smoother.add(map_odom)
        self._in_odom = [None] * len(self._odom_base)

    def _base_in_odom(self, i: int) -> tuple[float, float, float]:
        # FrameTree.lookup(odom, base_footprint) composes the one edge with the identity
        pose = self._in_odom[i]
        if pose is None:
            pose = self._in_odom[i] = compose(self._odom_base[i], (0.0, 0.0, 0.0))
        return pose

    @property
    def frames(self) -> list[FrameTree]:
        """Each robot's frame tree, as its controller and the navigator hold it (built on read:
        :meth:`believed` and :meth:`pose` compose the same transforms the same way)."""
        trees = []
        for odom_base, map_odom in zip(self._odom_base, self._map_odom_wire, strict=True):
            tree = FrameTree()
            tree.set_transform(ODOM_FRAME, BASE_FRAME, odom_base, self._stamp)
            tree.set_transform(MAP_FRAME, ODOM_FRAME, map_odom, self._stamp)
            trees.append(tree)
        return trees

    def believed(self, i: int) -> tuple[float, float, float]:
        """Robot ``i``'s ``map -> base_footprint`` (what its logic reads)."""
        return compose(self._map_odom_wire[i], self._base_in_odom(i))

    def pose(self, i: int) -> tuple[float, float, float]:
        """Robot ``i``'s pose for navigation: smoothed ``map -> odom`` * ``odom -> base``."""
        return compose(self._map_odom[i].value, self._base_in_odom(i))

    def odom_pose(self, i: int) -> tuple[float, float, float]:
        """Robot ``i``'s ``odom -> base_footprint`` (what behaviours measure travel on)."""
        return self._odom_base[i]


def _duration(seconds: float) -> SimpleNamespace:
    sec = math.floor(seconds)
    return SimpleNamespace(sec=int(sec), nanosec=int(round((seconds - sec) * 1e9)))


def _feedback(step: Any, pose: Sequence[float], now: float) -> SimpleNamespace:
    """``NavigateToPose`` feedback's attribute names from a navigator step."""
    ns = SimpleNamespace
    z, w = quaternion_from_yaw(float(pose[2]))
    current = ns(
        header=ns(stamp=_duration(now), frame_id="map"),
        pose=ns(
            position=ns(x=float(pose[0]), y=float(pose[1]), z=0.0),
            orientation=ns(x=0.0, y=0.0, z=z, w=w),
        ),
    )
    return ns(
        current_pose=current,
        navigation_time=_duration(step.navigation_time),
        estimated_time_remaining=_duration(step.estimated_time_remaining),
        number_of_recoveries=int(step.number_of_recoveries),
        distance_remaining=float(step.distance_remaining),
    )


def _costmap_msg(nav: Any, grid: GridMap) -> tuple[SimpleNamespace, GridMap]:
    """The ``global_costmap/costmap`` message the navigator publishes for ``grid``, and its
    GridMap."""
    costs = GridMap.from_array(
        nav.costmap_values(grid), grid.resolution, grid.origin_x, grid.origin_y
    )
    return costs.to_msg_like(), costs


# ---------------------------------------------------------------------------------- robot
def propagating_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)``, passing its records on to the root's handlers.

    ROS 2's launch package, once imported in a process, makes every logger created after it a
    ``launch.logging.LaunchLogger``, which does not propagate: direct mode's records would then
    reach none of the user's handlers (nor pytest's ``caplog``) and end on logging's last
    resort, stderr. The launch loggers along ``name``'s dotted chain are made to propagate.
    """
    logger = logging.getLogger(name)
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        existing = logging.Logger.manager.loggerDict.get(".".join(parts[:k]))
        if isinstance(existing, logging.Logger) and type(existing).__module__.startswith("launch"):
            existing.propagate = True
    return logger


class DirectLogger:
    """``info/warning/error/debug(text)`` to Python logging ``maes.direct.robot<i>``.

    Keyword arguments of rclpy's logger (``throttle_duration_sec``, ``once``, ...) are accepted
    and ignored, so logic written for ROS logs here unchanged.
    """

    def __init__(self, robot: DirectRobot) -> None:
        self._robot = robot
        self._log = propagating_logger(f"maes.direct.{robot.namespace}")

    def _emit(self, level: int, text: Any) -> None:
        if self._log.isEnabledFor(level):
            self._log.log(level, "[tick %d] %s", self._robot.tick, text)

    def debug(self, text: Any, **_rclpy_options: Any) -> None:
        self._emit(logging.DEBUG, text)

    def info(self, text: Any, **_rclpy_options: Any) -> None:
        self._emit(logging.INFO, text)

    def warning(self, text: Any, **_rclpy_options: Any) -> None:
        self._emit(logging.WARNING, text)

    def warn(self, text: Any, **_rclpy_options: Any) -> None:
        self._emit(logging.WARNING, text)

    def error(self, text: Any, **_rclpy_options: Any) -> None:
        self._emit(logging.ERROR, text)


class DirectRobot:
    """The :class:`~maes_controller.robot_api.Robot` of one robot in direct mode.

    Built by :func:`run`; a logic callback only reads and calls what the protocol lists, plus
    ``rng`` (a per-robot ``numpy.random.Generator``, seeded from the run seed and the robot id).
    """

    def __init__(self, sim: Simulation, index: int, navigator: Any, rng: np.random.Generator):
        self._sim = sim
        #: The robot's navigation session; its events are carried by :func:`step_navigation`.
        self.session = NavSession(navigator)
        self._tile = float(sim.config.world.tile_size)
        self.robot_id = index
        self.namespace = robot_namespace(index)
        self.memory: dict = {}
        self.rng = rng
        #: Direct mode's logger (Python logging); RobotTeam.start may give another (maes_run's:
        #: rclpy's).
        self.logger = DirectLogger(self)
        self.state: RobotState | None = None
        #: The robots this one senses this tick as arrays, when the runner has them:
        #: ``(their indices, every robot's position)`` (see :meth:`observe`); None: read from
        #: ``state``.
        self._nearby: tuple[np.ndarray, np.ndarray] | None = None
        #: The navigator's newest plan not yet taken by ``maes_run``'s ``plan`` topic:
        #: ``(points, wire time)``, or None (see runners/in_process.py).
        self.plan_update: tuple[Any, float] | None = None
        #: Goals the navigator accepted so far.
        self.goals_accepted = 0
        self.tick = 0
        self._pose = np.zeros(3)
        self._grid: GridMap | None = None
        self._costmap = MaesCostmap(self.logger)
        self._costmap_for: GridMap | None = None
        self._stop_requested = False  # the session asked for a zero command this tick
        self.velocity = VelocityCommand()
        motion = sim.motion_params  # top speeds in tiles/s: cmd_vel is in m/s
        tile = float(sim.config.world.tile_size)
        self._motion_note = MotionNote(
            motion.model, motion.max_speed * tile, motion.max_angular_speed
        )
        self._scan_tick = -1
        self._scan: np.ndarray | None = None
        n_rays, fov = sim.lidar_geometry(index)  # the robot type's lidar
        self._angles = scan_angles(*wire_scan_geometry(n_rays, fov), n_rays)
        self._angles.setflags(write=False)

    # -- fed by the runner (maes_bringup.runners.direct.run) ---------------------------------
    def receive_map(self, grid: GridMap) -> None:
        """A new ``map`` (what the simulator node publishes on SLAM update ticks)."""
        self._grid = grid

    def observe(
        self,
        state: RobotState,
        pose_m: Sequence[float],
        nearby: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """This tick's state and believed pose (x, y, yaw), in metres; fed by the runner.

        ``nearby``: the robots ``state.nearby_robots`` lists, from the arrays of the observation
        the state was made from: their indices (K,) and their positions (K, 2), metres (may be
        a view of the tick's shared array: read only). The navigator then reads them without
        going through the state's objects (the same values).
        """
        self.state = state
        self.tick = state.tick
        self._pose = pose_m
        self._nearby = nearby

    @property
    def nearby_positions(self) -> np.ndarray | None:
        """float64 (K, 2): where the robots ``state.nearby_robots`` lists stand (metres), in
        its order, from the observation's arrays (the same values); None when the runner gave
        only the state."""
        if self._nearby is None:
            return None
        return self._nearby[1].copy()  # the logic's own array, as the state's objects are

    # -- Robot protocol ------------------------------------------------------------------------
    @property
    def robot_position(self) -> tuple[float, float]:
        """``(x, y)`` metres, map frame: the pose the robot's SLAM believes."""
        return float(self._pose[0]), float(self._pose[1])

    @property
    def robot_heading(self) -> float:
        """Yaw, radians, map frame."""
        return float(self._pose[2])

    @property
    def scan_ranges(self) -> np.ndarray:
        """This tick's lidar ranges (R,), metres, +inf for no return: the ``scan`` message's
        float32 values (:func:`maes_common.contract.wire_scan_ranges`), as float64."""
        if self._scan_tick != self.tick or self._scan is None:
            sim, i = self._sim, self.robot_id
            ranges = wire_scan_ranges(*sim.lidar_of(i), self._tile)
            self._scan, self._scan_tick = ranges.astype(np.float64), self.tick
        return self._scan.copy()

    @property
    def scan_angles(self) -> np.ndarray:
        """Each ray's angle (R,), radians, robot frame (read-only)."""
        return self._angles

    @property
    def robot_velocity(self) -> tuple[float, float]:
        """``(linear m/s, angular rad/s)``: ``odom``'s twist."""
        v = self._sim.velocities[self.robot_id]
        return float(v[0] * self._tile), float(v[1])

    def set_velocity(self, linear: float, angular: float, lateral: float = 0.0) -> None:
        """Drive with ``linear`` m/s, ``angular`` rad/s and ``lateral`` m/s (sideways, an
        omnidirectional robot) (rules: :mod:`maes_controller.velocity`)."""
        problem = velocity_problem(linear, angular, lateral)
        if problem is not None:
            self.logger.warning(
                f"{self.namespace}: set_velocity refused: {problem}", throttle_duration_sec=5.0
            )
            return
        in_progress = not self.session.status.done
        if in_progress:
            self.cancel_nav()
        self.velocity.set(linear, angular, self.tick, in_progress, lateral)
        note = self._motion_note.check(linear, angular, lateral)
        if note is not None:  # a warning: shown even where Python logging is not configured
            self.logger.warning(f"{self.namespace}: {note}")

    @property
    def global_costmap(self) -> MaesCostmap:
        """The navigator's costmap of the latest published map (built when first read)."""
        if self._grid is not None and self._costmap_for is not self._grid:
            g = self._grid
            nav = self.session.navigator
            # one message per map and navigator parameters, shared by the robots with that map
            msg, grid = g.derived(("direct costmap", nav.params), lambda g: _costmap_msg(nav, g))
            self._costmap.update_costmap(msg, grid=grid)
            self._costmap_for = g
        return self._costmap

    @property
    def nav_status(self) -> NavStatus:
        """State of the current or last goal."""
        return self.session.status

    @property
    def nav_feedback(self) -> Any:
        """``NavigateToPose`` feedback of the latest navigation step, or None."""
        if self.session.feedback is None:
            return None
        return _feedback(*self.session.feedback)

    @property
    def nav_error(self) -> str:
        """``"error <code>: <message>"`` of the last failed goal ("" otherwise), as on ROS."""
        return self.session.error()

    def nav_to_pos(self, x: float, y: float) -> None:
        """Start navigating to ``(x, y)`` metres (map frame); replaces any current goal.

        A goal that is not two finite numbers is refused as on ROS: the current goal ends, the
        status turns ABORTED with Nav2's GOAL_OUTSIDE_MAP code, and a warning is logged.
        """
        token = object()
        events = self.session.submit(token, (x, y), wire_time(self._sim.sim_time))
        refused = any(end.token is token for end in events.ended)
        self.goals_accepted += not refused
        self.velocity.goal_sent(refused=refused)
        self._carry(events)
        if refused:
            self.logger.warning(
                f"{self.namespace}: goal refused ({self.session.error()})",
                throttle_duration_sec=5.0,
            )

    def cancel_nav(self) -> None:
        """Cancel the current goal (no-op when none); the robot is stopped."""
        self._carry(self.session.cancel(wire_time(self._sim.sim_time)))

    def _carry(self, events: SessionEvents) -> None:
        """A session call's events: its zero command goes out with the tick's commands."""
        if events.plan is not None:
            self.plan_update = (events.plan, wire_time(self._sim.sim_time))
        if events.command is not None:
            self._stop_requested = True

    def is_nav_complete(self) -> bool:
        """True when no goal is in progress."""
        return self.session.status.done

    def broadcast_msg(self, text: str) -> None:
        """Broadcast ``text``; a refused message (empty, too long, over the limit) is logged."""
        try:
            self._sim.broadcast(self.robot_id, str(text))
        except CommandRejected as err:
            self._refused("broadcast", str(text), err)

    def deposit_tag(self, text: str) -> None:
        """Leave a tag at the robot's position; a refused tag is logged."""
        try:
            self._sim.deposit_tag(self.robot_id, str(text))
        except CommandRejected as err:
            self._refused("tag", str(text), err)

    def _refused(self, what: str, text: str, err: Exception) -> None:
        """Log a request the simulator refused, as the ROS stack's controller does (at most
        every 5 s with rclpy's logger; direct mode's logs each)."""
        short = text if len(text) <= 60 else text[:57] + "..."
        self.logger.warning(
            f"{self.namespace}: {what} {short!r} refused by the simulator ({err})",
            throttle_duration_sec=5.0,
        )


class _NearbyXY(Sequence):
    """Positions (K, 2) of the robots a robot senses, from the observation's arrays: the array
    itself for the navigator's array paths (``numpy.asarray``), ``(x, y)`` tuples for its loops.
    """

    __slots__ = ("_rows", "_xy")

    def __init__(self, xy: np.ndarray) -> None:
        self._xy = xy
        self._rows: list[tuple[float, float]] | None = None

    def _tuples(self) -> list[tuple[float, float]]:
        if self._rows is None:
            self._rows = list(map(tuple, self._xy.tolist()))
        return self._rows

    def __len__(self) -> int:
        return self._xy.shape[0]

    def __getitem__(self, k: Any) -> tuple[float, float]:
        if self._rows is None and isinstance(k, int):
            x, y = self._xy[k].tolist()  # one row: the navigator reads a few of dozens
            return (x, y)
        return self._tuples()[k]

    def __iter__(self) -> Iterator[tuple[float, float]]:
        return iter(self._tuples())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        xy = self._xy if dtype is None else self._xy.astype(dtype, copy=False)
        return xy.copy() if copy else xy


class _Positions(Sequence):
    """``(x, y)`` of each item's ``pos``, read only when the navigator needs them (recovery)."""

    def __init__(self, items: Sequence[Any]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, k: Any) -> tuple[float, float]:
        pos = self._items[k].pos
        return pos.x, pos.y

    def __iter__(self) -> Iterator[tuple[float, float]]:
        # what the navigator's yielding check reads every drive step: one pass over the items
        for it in self._items:
            pos = it.pos
            yield pos.x, pos.y

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # one pass, not the Sequence protocol item by item
        xy = np.array([(it.pos.x, it.pos.y) for it in self._items], dtype=np.float64)
        return xy.reshape(-1, 2) if dtype is None else xy.reshape(-1, 2).astype(dtype)


def step_navigation(
    sim: Simulation, robots: list[DirectRobot], poses: NavigatorPoses, tile: float
) -> None:
    """One navigator step for every robot with a goal; their commands in one call.

    As the navigator node: the pose from :class:`NavigatorPoses`, the robot's latest map, and
    the other robots its state reports nearby (recovery plans go around them). Then, as the
    controller node publishes after the logic, each robot's ``set_velocity`` command (never in
    the same tick as a navigator command: :mod:`maes_controller.velocity`).
    """
    now = wire_time(sim.sim_time)  # the stamp the navigator node reads
    idx, linear, angular, lateral = [], [], [], []
    for i, robot in enumerate(robots):
        session = robot.session
        if session.task is not None:
            if robot._nearby is not None:
                indices, xy = robot._nearby
                positions, ids = _NearbyXY(xy), indices.tolist()
            else:
                nearby = robot.state.nearby_robots
                positions, ids = _Positions(nearby), [robot_index_of_id(r.id) for r in nearby]
            events = session.step(
                poses.pose(i),
                robot._grid,
                now,
                positions,
                odom_pose=poses.odom_pose(i),
                robot_ids=ids,
            )
            if events.plan is not None:
                robot.plan_update = (events.plan, now)
            idx.append(i)
            linear.append(events.command[0] / tile)  # cmd_vel: m/s -> tiles/s
            angular.append(events.command[1])
            lateral.append(events.command[2] / tile if len(events.command) > 2 else 0.0)
        elif robot._stop_requested:  # a cancel or refusal ended the goal: one zero cmd_vel
            idx.append(i)
            linear.append(0.0)
            angular.append(0.0)
            lateral.append(0.0)
        robot._stop_requested = False
        command = robot.velocity.to_send(robot.tick)
        if command is not None:
            if idx and idx[-1] == i:  # both stop this tick (a cancel, a refused goal): zeros
                continue
            idx.append(i)
            linear.append(command[0] / tile)  # as the simulator node reads cmd_vel
            angular.append(command[1])
            lateral.append(command[2] / tile)
    if idx:
        lin, ang, lat = np.asarray(linear), np.asarray(angular), np.asarray(lateral)
        if len(idx) == sim.n_robots:  # every robot, in order (one entry each): whole rows
            sim.set_velocities(lin, ang, lat)
        else:
            sim.set_velocity(np.asarray(idx), lin, ang, lat)
