"""Every robot's controller and navigator in one process, a tick at a time, in lockstep's order.

One tick, as the lockstep ROS stack runs it (docs/lockstep.md): on a SLAM tick every robot gets
its new map (as the simulator node publishes ``map``); every robot observes the tick's state and
the pose its navigator reads from tf; every robot's logic runs; the navigator steps every robot
with a goal and every command reaches the simulation (a robot's own ``set_velocity`` too); the
simulation steps. Direct mode runs its robots so (:func:`maes_bringup.runners.direct.run`), and so
does ``maes_run`` with the built-in controllers (:mod:`maes_bringup.runners.embedded`): the same
run to the bit, with the simulator node publishing on ROS only what someone outside takes.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from maes_common.contract import map_origin, wire_resolution
from maes_controller.navigation import GridMap
from maes_controller.robot_api import LogicFunction
from maes_sim.core import Simulation, to_occupancy

from .direct_robot import DirectRobot, NavigatorPoses, step_navigation

__all__ = ["RobotTeam", "fewer_gc_passes", "shared_grids"]

#: Mixed into every robot's ``rng`` seed so it never equals the simulation's own stream.
_RNG_SALT = 0x4D414553  # "MAES"

#: ``on_logic_error(robot, exc)``: what a run does when a robot's logic raises.
LogicErrorHandler = Callable[[DirectRobot, Exception], None]


#: The youngest generation's collection threshold while a team runs (CPython's default: 700).
GC_YOUNG_THRESHOLD = 10_000


@contextlib.contextmanager
def fewer_gc_passes(young: int = GC_YOUNG_THRESHOLD) -> Iterator[None]:
    """Run the block with Python's cyclic garbage collector passing over young objects less
    often (threshold ``young`` instead of 700, when that is higher); restored on exit.

    A tick of many robots makes short-lived containers that reference many objects (each
    state's list of the robots it senses, the navigator's positions): at 120 robots the
    default threshold ran a young collection more than once a tick, each walking those lists
    while they were still alive (about 8 % of a 120-robot tick in direct mode; 0.2 % at 10
    robots, where it rarely ran). With this threshold most of them are gone before a pass.
    The tick's computations do not depend on when garbage is collected.

    Examples
    --------
    >>> before = gc.get_threshold()
    >>> with fewer_gc_passes(50_000):
    ...     gc.get_threshold()[0]
    50000
    >>> gc.get_threshold() == before
    True
    """
    threshold = gc.get_threshold()
    if young > threshold[0]:
        gc.set_threshold(young, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def shared_grids(
    slam_maps: np.ndarray, resolution: float, origin: tuple[float, float]
) -> list[GridMap]:
    """Each robot's SLAM map as the ``map`` message's GridMap; equal maps share one object.

    Robots that merged their maps (one SLAM group) hold equal maps, so what is computed from
    a map (costmap, frontiers: :meth:`GridMap.derived`) is computed once per group. Sharing
    changes no value: each robot still gets a new object on every map tick, as the ROS stack
    gets a new message.

    Examples
    --------
    >>> maps = np.array([[[0, 1]], [[0, 1]], [[2, 1]]], dtype=np.uint8)
    >>> a, b, c = shared_grids(maps, 1.0, (0.0, 0.0))
    >>> a is b, a is c, c.array.tolist()
    (True, False, [[100, 0]])
    """
    by_content: dict[bytes, GridMap] = {}
    grids = []
    for slam_map in slam_maps:
        key = slam_map.tobytes()
        grid = by_content.get(key)
        if grid is None:
            grid = by_content[key] = GridMap.from_array(to_occupancy(slam_map), resolution, *origin)
        grids.append(grid)
    return grids


class RobotTeam:
    """The robots of a run driven in this process: their :class:`DirectRobot` (the Robot API
    each logic gets, with its navigator session) and the navigator's view of their poses.

    Parameters
    ----------
    sim : Simulation
    logic : sequence of callables
        One ``logic(robot)`` per robot.
    robots : list of DirectRobot
    nav_poses : NavigatorPoses
    """

    def __init__(
        self,
        sim: Simulation,
        logic: Sequence[LogicFunction],
        robots: list[DirectRobot],
        nav_poses: NavigatorPoses,
    ) -> None:
        self.sim = sim
        self.logic = list(logic)
        self.robots = robots
        self.nav_poses = nav_poses
        tile = float(sim.config.world.tile_size)
        self._tile = tile
        h, w = sim.shape
        self._origin = map_origin(w, h, tile)

    @classmethod
    def start(
        cls,
        sim: Simulation,
        logic: Sequence[LogicFunction],
        logger: Callable[[DirectRobot], Any] | None = None,
    ) -> RobotTeam:
        """A team at the simulation's start: a navigator per robot from the config, each
        robot's ``rng`` seeded from ``(run seed, robot id)``; ``logger(robot)`` gives a robot's
        ``logger`` (default: direct mode's, Python logging)."""
        from maes_controller.navigation import Navigator, NavParams

        robots = []
        for i in range(sim.n_robots):
            params = NavParams.from_config(sim.config, robot=i)
            robot = DirectRobot(
                sim, i, Navigator(params, rank=i), np.random.default_rng([sim.seed, i, _RNG_SALT])
            )
            if logger is not None:
                robot.logger = logger(robot)
            robots.append(robot)
        return cls(sim, logic, robots, NavigatorPoses(sim))

    def tick(self, on_logic_error: LogicErrorHandler) -> None:
        """One tick: maps, states, every logic, navigation, then ``sim.step()``.

        ``on_logic_error(robot, exc)`` is called when a robot's logic raises; it may raise
        (direct mode stops the run) or return (``maes_run`` counts it, logs it and goes on,
        as the controller node does: the robot keeps what the logic did before raising).
        """
        sim = self.sim
        # The simulator node publishes `map` on the SLAM schedule; the navigator then plans on
        # that map object until the next one.
        if sim.slam_published_at(sim.tick):
            # resolution as nav_msgs/MapMetaData carries it (float32), as on ROS
            grids = shared_grids(sim.slam_maps, wire_resolution(self._tile), self._origin)
            for robot, grid in zip(self.robots, grids, strict=True):
                robot.receive_map(grid)
        self.nav_poses.observe(sim)  # this tick's tf, as the nodes read it
        # Every state of the tick first, as the simulator node publishes them: a tag deposited
        # by one robot's logic shows in the others' states of the next tick, not this one.
        observation = sim.observation(self._tile)  # in metres, as maes_state carries them
        states = observation.states()
        # the robots each one senses, also as arrays for its navigator (the same values): their
        # positions gathered once for every robot, each robot's a slice of them
        observed = observation.observed
        seen_xy = observation.robot_positions[observed]
        bounds = observation.nearby_bounds.tolist()
        for i, (robot, state) in enumerate(zip(self.robots, states, strict=True)):
            lo, hi = bounds[i], bounds[i + 1]
            robot.observe(state, self.nav_poses.believed(i), (observed[lo:hi], seen_xy[lo:hi]))
        for robot, logic in zip(self.robots, self.logic, strict=True):
            try:
                logic(robot)
            except Exception as exc:
                on_logic_error(robot, exc)
        step_navigation(sim, self.robots, self.nav_poses, self._tile)
        sim.step()
