"""Direct mode: the controllers and the simulation in one process, lockstep, no ROS.

Each logic tick, every robot's ``logic(robot)`` runs with that tick's state, then the
navigation sessions of the robots that have a goal produce their velocity commands, then the
simulation steps. ``robot`` offers the API of :class:`maes_controller.robot_api.Robot` with the
same values the ROS stack gives (metres and radians in the ``map`` frame), so a controller written
for the ROS stack runs here unchanged, and the reverse:

=====================  ==========================================================================
``state``              ``maes_interfaces/State`` field names (positions in metres)
``robot_position``     the pose the robot's SLAM believes (tf ``map -> base_footprint``)
``global_costmap``     :class:`~maes_controller.maes_compat.MaesCostmap` holding what the built-in
                       navigator publishes on ``global_costmap/costmap``: its costmap of the
                       robot's SLAM map, which is "published" on SLAM update ticks, as the
                       simulator node publishes ``map``
``nav_to_pos`` ...     a :class:`maes_controller.navigation.Navigator` per robot, updated once a
                       tick as the navigator node does: with its smoothed pose
                       (:class:`NavigatorPoses`), the latest map and the robots nearby
``broadcast_msg``      ``Simulation.broadcast``; a refused message is logged, as on ROS
=====================  ==========================================================================

Same config and seed, same results, bit for bit: nothing here reads a clock or a global random
generator. Controllers that need randomness use ``robot.rng`` (direct-mode extra): a
``numpy.random.Generator`` seeded from ``(run seed, robot id)``, independent of the simulation's.

>>> from maes_bringup.direct import run  # doctest: +SKIP
>>> result = run("maes_config.yaml", "maes_controller.logic:logic", max_ticks=600)  # doctest: +SKIP
>>> result.end_reason, result.time_to_exploration(90)  # doctest: +SKIP
('exploration reached 95.12 %', 41.3)
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from maes_controller.costmap import GridMap
from maes_controller.maes_compat import MaesCostmap
from maes_controller.robot_api import LogicFunction, NavStatus, load_logic
from maes_sim.core import CommandRejected, SimConfig, Simulation, load_config
from maes_sim.core.comms import robot_name
from maes_sim.core.slam import to_occupancy
from maes_sim.core.state import NearbyRobot, RobotState, Vector2D

#: Mixed into every robot's ``rng`` seed so it never equals the simulation's own stream.
_RNG_SALT = 0x4D414553  # "MAES"


class LogicError(RuntimeError):
    """A logic callback raised; the message names the robot and the tick (cause chained)."""


# ---------------------------------------------------------------------------------- controllers
def _load_file_logic(path: str, attr: str, spec: str) -> LogicFunction:
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"controller file {path!r} (from {spec!r}) does not exist")
    name = "maes_user_logic_" + hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]
    module = sys.modules.get(name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module  # dataclasses and pickling look modules up here
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:  # user code: report any import-time failure by name
            del sys.modules[name]
            raise ValueError(f"cannot import controller file {path!r} (from {spec!r}): "
                             f"{type(exc).__name__}: {exc}") from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"{attr!r} in {path!r} (from {spec!r}) is not a callable logic function")
    return fn


def resolve_controller(controller: str | LogicFunction) -> LogicFunction:
    """The logic function of ``controller``: a callable, ``"pkg.module:function"`` or
    ``"path/to/file.py:function"`` (a relative path is relative to the working directory).

    Raises ValueError naming the spec when it cannot be imported or is not callable.

    Examples
    --------
    >>> resolve_controller("maes_controller.robot_api:load_logic").__name__
    'load_logic'
    >>> resolve_controller("no_such_module:logic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cannot import logic module 'no_such_module' (from 'no_such_module:logic'): ...
    """
    if callable(controller):
        return controller
    if not isinstance(controller, str):
        raise ValueError(f"a controller must be a callable or a 'module:function' string, "
                         f"got {controller!r}")
    module, sep, attr = controller.partition(":")
    if module.endswith(".py") and sep and attr:
        return _load_file_logic(module, attr, controller)
    return load_logic(controller)


# ---------------------------------------------------------------------------------- conversions
def _scaled(v: Vector2D, tile: float) -> Vector2D:
    return Vector2D(v.x * tile, v.y * tile)


def state_to_metres(state: RobotState, tile: float) -> RobotState:
    """The core's state (tiles) with every position in metres, as ``maes_state`` carries it.

    The one tiles -> metres conversion of direct mode, the twin of
    ``maes_sim.ros.conversions.state_to_msg``.

    Examples
    --------
    >>> s = RobotState(tick=3, status="idle", colliding=False, position=Vector2D(1.0, -2.0))
    >>> state_to_metres(s, 0.5).position
    Vector2D(x=0.5, y=-1.0)
    """
    if tile == 1.0:
        return state
    return replace(
        state,
        tags_nearby=[replace(t, pos=_scaled(t.pos, tile)) for t in state.tags_nearby],
        nearby_robots=[NearbyRobot(r.id, _scaled(r.pos, tile)) for r in state.nearby_robots],
        position=_scaled(state.position, tile),
    )


def _metres(poses: np.ndarray, tile: float) -> np.ndarray:
    """(N, 3) poses with x, y scaled from tiles to metres (a copy)."""
    out = np.array(poses, dtype=np.float64)
    out[:, :2] *= tile
    return out


def _compose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise planar pose composition ``a[k] * b[k]`` of (N, 3) arrays."""
    c, s = np.cos(a[:, 2]), np.sin(a[:, 2])
    return np.column_stack([a[:, 0] + c * b[:, 0] - s * b[:, 1],
                            a[:, 1] + s * b[:, 0] + c * b[:, 1], a[:, 2] + b[:, 2]])


def _inverse(a: np.ndarray) -> np.ndarray:
    """Row-wise inverse of (N, 3) planar poses."""
    c, s = np.cos(a[:, 2]), np.sin(a[:, 2])
    return np.column_stack([-c * a[:, 0] - s * a[:, 1], s * a[:, 0] - c * a[:, 1], -a[:, 2]])


class NavigatorPoses:
    """The poses the navigator node navigates with, from the simulation's arrays.

    On the embedded ROS stack the simulator publishes ``odom -> base_footprint`` (odometry since
    the start) and ``map -> odom`` (so that ``map -> base_footprint`` is the SLAM-believed pose);
    the navigator smooths ``map -> odom`` (``maes_controller.tf_pose.SmoothedTransform``, which
    averages out the SLAM's random pose error) and composes it with odometry. Same here, every
    tick, so a goal is followed as on ROS. Metres and radians, map frame.
    """

    def __init__(self, sim: Simulation) -> None:
        from maes_controller.tf_pose import SmoothedTransform

        self._tile = float(sim.config.world.tile_size)
        self._start_inv = _inverse(_metres(sim.odometry_poses, self._tile))
        # as the navigator node: larger map -> odom changes than the SLAM error are real jumps
        jump = 2.0 * self._tile * max(
            1.0, 1.5 * sim.config.robot_constraints.slam_position_inaccuracy)
        self._map_odom = [SmoothedTransform(reset_distance=jump) for _ in range(sim.n_robots)]
        self._odom_rel = np.zeros((sim.n_robots, 3))

    def observe(self, sim: Simulation, believed_m: np.ndarray) -> None:
        """Take this tick's transforms; ``believed_m`` (N, 3) is ``map -> base_footprint``."""
        self._odom_rel = _compose(self._start_inv, _metres(sim.odometry_poses, self._tile))
        map_odom = _compose(believed_m, _inverse(self._odom_rel))
        for smoother, sample in zip(self._map_odom, map_odom.tolist(), strict=True):
            smoother.add(tuple(sample))

    def pose(self, i: int) -> tuple[float, float, float]:
        """Robot ``i``'s pose for navigation: smoothed ``map -> odom`` * ``odom -> base``."""
        from maes_controller.tf_pose import compose

        return compose(self._map_odom[i].value, tuple(self._odom_rel[i].tolist()))


def _duration(seconds: float) -> SimpleNamespace:
    sec = math.floor(seconds)
    return SimpleNamespace(sec=int(sec), nanosec=int(round((seconds - sec) * 1e9)))


def _feedback(step: Any, pose: Sequence[float], now: float) -> SimpleNamespace:
    """``NavigateToPose`` feedback's attribute names from a navigator step."""
    ns = SimpleNamespace
    yaw = float(pose[2])
    current = ns(header=ns(stamp=_duration(now), frame_id="map"),
                 pose=ns(position=ns(x=float(pose[0]), y=float(pose[1]), z=0.0),
                         orientation=ns(x=0.0, y=0.0, z=math.sin(yaw / 2), w=math.cos(yaw / 2))))
    return ns(current_pose=current, navigation_time=_duration(step.navigation_time),
              estimated_time_remaining=_duration(step.estimated_time_remaining),
              number_of_recoveries=int(step.number_of_recoveries),
              distance_remaining=float(step.distance_remaining))


# ---------------------------------------------------------------------------------- robot
class DirectLogger:
    """``info/warning/error/debug(text)`` to Python logging ``maes.direct.robot<i>``.

    Keyword arguments of rclpy's logger (``throttle_duration_sec``, ``once``, ...) are accepted
    and ignored, so logic written for ROS logs here unchanged.
    """

    def __init__(self, robot: DirectRobot) -> None:
        self._robot = robot
        self._log = logging.getLogger(f"maes.direct.{robot.namespace}")

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
        self._nav = navigator
        self._tile = float(sim.config.world.tile_size)
        self.robot_id = index
        self.namespace = robot_name(index)
        self.memory: dict = {}
        self.rng = rng
        self.logger = DirectLogger(self)
        self.state: RobotState | None = None
        self.tick = 0
        self._pose = np.zeros(3)
        self._grid: GridMap | None = None
        self._costmap = MaesCostmap(self.logger)
        self._costmap_for: GridMap | None = None
        self._feedback_step: Any = None
        self._feedback_pose: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self._feedback_time = 0.0
        self._stop_requested = False

    # -- filled in by the runner each tick ---------------------------------------------------
    def _receive_map(self, grid: GridMap) -> None:
        """A new ``map`` (what the simulator node publishes on SLAM update ticks)."""
        self._grid = grid

    def _observe(self, state: RobotState, pose_m: np.ndarray) -> None:
        self.state = state
        self.tick = state.tick
        self._pose = pose_m

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
    def global_costmap(self) -> MaesCostmap:
        """The navigator's costmap of the latest published map (built when first read)."""
        if self._grid is not None and self._costmap_for is not self._grid:
            g = self._grid
            values = self._nav.costmap_values(g)
            msg = GridMap.from_array(values, g.resolution, g.origin_x, g.origin_y).to_msg_like()
            self._costmap.update_costmap(msg)
            self._costmap_for = g
        return self._costmap

    @property
    def nav_status(self) -> NavStatus:
        """State of the current or last goal."""
        return self._nav.status

    @property
    def nav_feedback(self) -> Any:
        """``NavigateToPose`` feedback of the latest navigation step, or None."""
        if self._feedback_step is None:
            return None
        return _feedback(self._feedback_step, self._feedback_pose, self._feedback_time)

    @property
    def nav_error(self) -> str:
        """``"error <code>: <message>"`` of the last failed goal ("" otherwise), as on ROS."""
        last = self._nav.last_step
        if self._nav.status is not NavStatus.ABORTED:
            return ""
        return f"error {last.error_code}: {last.error_msg}"

    def nav_to_pos(self, x: float, y: float) -> None:
        """Start navigating to ``(x, y)`` metres (map frame); replaces any current goal."""
        self._nav.start((x, y), self._sim.sim_time)
        self._feedback_step = None  # feedback belongs to a goal

    def cancel_nav(self) -> None:
        """Cancel the current goal (no-op when none); the robot is stopped."""
        if self._nav.status is NavStatus.ACTIVE:
            self._nav.cancel(self._sim.sim_time)
            self._stop_requested = True

    def is_nav_complete(self) -> bool:
        """True when no goal is in progress."""
        return self._nav.status.done

    def broadcast_msg(self, text: str) -> None:
        """Broadcast ``text``; a refused message (empty, too long, over the limit) is logged."""
        try:
            self._sim.broadcast(self.robot_id, str(text))
        except CommandRejected as err:
            self.logger.warning(str(err))

    def deposit_tag(self, text: str) -> None:
        """Leave a tag at the robot's position; a refused tag is logged."""
        try:
            self._sim.deposit_tag(self.robot_id, str(text))
        except CommandRejected as err:
            self.logger.warning(str(err))


# ---------------------------------------------------------------------------------- result
@dataclass
class RunResult:
    """What a direct-mode run produced.

    Attributes
    ----------
    ticks : int
        Logic ticks simulated.
    sim_time : float
        Simulated seconds.
    end_reason : str or None
        The end criterion met; None when ``max_ticks`` stopped the run first.
    stats : dict
        Final statistics (``maes_sim.core.metrics.SNAPSHOT_COLUMNS``).
    snapshots : list of dict
        Statistics every ``ticks_per_stats_snapshot`` ticks (and at the end).
    exploration, coverage : ndarray of float, shape (ticks + 1,)
        Percent explored / covered after every tick (index 0: before the first step).
    distance : ndarray of float, shape (N,)
        Metres travelled per robot.
    collisions : ndarray of int, shape (N,)
        Ticks each robot started a collision.
    messages_sent, messages_delivered, tags_deposited : int
    wall_time : float
        Seconds of wall-clock time (the only field that differs between identical runs).
    seed : int
    sim : Simulation
        The simulation, for inspection.
    """

    ticks: int
    sim_time: float
    end_reason: str | None
    stats: dict
    snapshots: list
    exploration: np.ndarray
    coverage: np.ndarray
    distance: np.ndarray
    collisions: np.ndarray
    messages_sent: int
    messages_delivered: int
    tags_deposited: int
    wall_time: float
    seed: int
    sim: Simulation

    @property
    def finished(self) -> bool:
        """True when an end criterion ended the run."""
        return self.end_reason is not None

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall-clock second."""
        return self.sim_time / self.wall_time if self.wall_time > 0 else math.inf

    def _time_to(self, series: np.ndarray, percent: float) -> float | None:
        reached = np.flatnonzero(series >= percent)
        if reached.size == 0:
            return None
        return float(reached[0]) * self.sim.tick_duration

    def time_to_exploration(self, percent: float) -> float | None:
        """First simulated time (s) at which exploration reached ``percent``, or None."""
        return self._time_to(self.exploration, percent)

    def time_to_coverage(self, percent: float) -> float | None:
        """First simulated time (s) at which coverage reached ``percent``, or None."""
        return self._time_to(self.coverage, percent)

    def write(self, parent: str | os.PathLike[str], folder: str | None = None) -> Path:
        """Write the run's result files (``maes_sim.core.results.write_run_results``)."""
        from maes_sim.core.results import write_run_results

        return write_run_results(self.sim, parent, folder,
                                 extra_summary={"mode": "direct", "wall_time_s": self.wall_time})


# ---------------------------------------------------------------------------------- runner
def _controllers(controller: Any, n: int) -> list[LogicFunction]:
    if isinstance(controller, Sequence) and not isinstance(controller, str):
        if len(controller) != n:
            raise ValueError(f"got {len(controller)} controllers for {n} robots: give one, or "
                             "one per robot")
        return [resolve_controller(c) for c in controller]
    return [resolve_controller(controller)] * n


def run(
    config: SimConfig | str | os.PathLike[str],
    controller: str | LogicFunction | Sequence[str | LogicFunction],
    *,
    seed: int | None = None,
    max_ticks: int | None = None,
    progress: Callable[[Simulation], None] | None = None,
) -> RunResult:
    """Run one simulation with ``controller`` driving every robot, in-process and lockstep.

    Parameters
    ----------
    config : SimConfig or path
        The run's config (a path is read with ``load_config``).
    controller : callable, str, or a sequence of them (one per robot)
        ``logic(robot)``, or its spec ``"pkg.module:function"`` / ``"file.py:function"``.
    seed : int, optional
        Overrides ``config.random_seeds[0]``.
    max_ticks : int, optional
        Stop after this many ticks even if no end criterion is met. Needed when the config has
        no end criteria.
    progress : callable, optional
        ``progress(sim)`` after every tick (e.g. to record trajectories).

    Returns
    -------
    RunResult

    Raises
    ------
    ValueError
        A controller that cannot be resolved, or a run that could never end.
    LogicError
        A logic callback raised (the robot and tick are named; the cause is chained).

    Examples
    --------
    >>> from maes_sim.core import config_from_dict
    >>> cfg = config_from_dict({"number_of_robots": 2, "end_criteria": {"tick": 5},
    ...                         "map": {"width_in_tiles": 20, "height_in_tiles": 20}})
    >>> def idle(robot):
    ...     robot.memory["seen"] = robot.tick
    >>> result = run(cfg, idle)
    >>> result.ticks, result.end_reason, result.sim.n_robots
    (5, 'tick limit 5 reached', 2)
    """
    from maes_controller.navigation import NavParams, Navigator

    if not isinstance(config, SimConfig):
        config = load_config(config)
    if max_ticks is None and config.end_criteria.never_ends:
        raise ValueError("the config has no end criteria: pass max_ticks, or the run never ends")
    if max_ticks is not None and (isinstance(max_ticks, bool) or not isinstance(max_ticks, int)
                                  or max_ticks < 0):
        raise ValueError(f"max_ticks must be an integer >= 0, got {max_ticks!r}")
    n = config.number_of_robots
    logic = _controllers(controller, n)

    started = time.perf_counter()
    sim = Simulation(config, seed=seed)
    tile = float(config.world.tile_size)
    h, w = sim.shape
    origin = (-w / 2.0 * tile, -h / 2.0 * tile)
    params = NavParams.from_config(config)
    robots = [DirectRobot(sim, i, Navigator(params),
                          np.random.default_rng([sim.seed, i, _RNG_SALT])) for i in range(n)]
    nav_poses = NavigatorPoses(sim)
    rc = config.robot_constraints
    exploration = [sim.exploration_percent]
    coverage = [sim.coverage_percent]

    done = 0
    while not sim.finished and (max_ticks is None or done < max_ticks):
        # The simulator node publishes `map` at start and on SLAM update ticks; the navigator
        # then plans on that map object until the next one.
        if sim.tick == 0 or (rc.automatically_update_slam
                             and sim.tick % rc.slam_update_interval_in_ticks == 0):
            maps = sim.slam_maps
            for i, robot in enumerate(robots):
                robot._receive_map(GridMap.from_array(to_occupancy(maps[i]), tile, *origin))
        poses = _metres(sim.estimated_poses, tile)  # tf map -> base_footprint
        nav_poses.observe(sim, poses)
        for i, robot in enumerate(robots):
            robot._observe(state_to_metres(sim.robot_state(i), tile), poses[i])
            try:
                logic[i](robot)
            except Exception as exc:
                raise LogicError(f"logic of {robot.namespace} raised at tick {sim.tick}: "
                                 f"{type(exc).__name__}: {exc}") from exc
        _navigate(sim, robots, nav_poses, tile)
        sim.step()
        done += 1
        exploration.append(sim.exploration_percent)
        coverage.append(sim.coverage_percent)
        if progress is not None:
            progress(sim)
    wall = time.perf_counter() - started

    stats = sim.stats()
    return RunResult(
        ticks=sim.tick, sim_time=sim.sim_time, end_reason=sim.end_reason, stats=stats,
        snapshots=list(sim.snapshots), exploration=np.asarray(exploration),
        coverage=np.asarray(coverage), distance=sim.metrics.distance * tile,
        collisions=sim.metrics.collisions.copy(), messages_sent=int(stats["broadcasts_sent"]),
        messages_delivered=int(stats["broadcasts_delivered"]),
        tags_deposited=int(stats["tags_deposited"]), wall_time=wall, seed=sim.seed, sim=sim,
    )


def _navigate(sim: Simulation, robots: list[DirectRobot], poses: NavigatorPoses,
              tile: float) -> None:
    """One navigator step for every robot with a goal; their commands in one call.

    As the navigator node: the pose from :class:`NavigatorPoses`, the robot's latest map, and
    the other robots its state reports nearby (recovery plans go around them).
    """
    now = sim.sim_time
    idx, linear, angular = [], [], []
    for i, robot in enumerate(robots):
        nav = robot._nav
        if nav.status is NavStatus.ACTIVE:
            pose = poses.pose(i)
            others = [(r.pos.x, r.pos.y) for r in robot.state.nearby_robots]
            step = nav.update(pose, robot._grid, now, others)
            robot._feedback_step, robot._feedback_pose = step, pose
            robot._feedback_time = now
            idx.append(i)
            linear.append(step.linear / tile)  # cmd_vel: m/s -> tiles/s
            angular.append(step.angular)
        elif robot._stop_requested:  # canceled by the logic: the last cmd_vel is a zero
            idx.append(i)
            linear.append(0.0)
            angular.append(0.0)
        robot._stop_requested = False
    if idx:
        sim.set_velocity(np.asarray(idx), np.asarray(linear), np.asarray(angular))
