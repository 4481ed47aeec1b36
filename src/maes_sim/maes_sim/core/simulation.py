"""The simulation: one world, N robots, one logic tick at a time.

>>> from maes_sim.core import SimConfig, Simulation
>>> sim = Simulation(SimConfig(number_of_robots=2))
>>> sim.set_velocity(0, 1.0, 0.0)
>>> sim.step()
>>> sim.tick, sim.poses.shape
(1, (2, 3))

Order of one :meth:`Simulation.step` (tick ``t`` -> ``t + 1``):

1. communication links from the positions at tick ``t`` (the moment messages were sent); a
   failing signal function raises here, before anything has changed;
2. physics: ``physics_ticks_per_logic_update`` steps of the motion model with collisions;
3. lidar from the new poses (other robots stop rays unless ``lidar.robots_block_rays`` is
   off; moving obstacles, :mod:`.obstacles`, stop them too, having moved before step 2):
   exploration marked every tick, SLAM maps on update ticks (both by the walls alone);
4. coverage, SLAM merging (when due; each pair's map exchange through the radio model),
   broadcasts through the radio model (:mod:`.radio`: loss, latency, budget) and those due
   delivered, nearby robots sensed;
5. a statistics snapshot when due, and the end criteria.

Everything random comes from ``self.rng``, seeded from the config, so a run is reproducible
bit for bit.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from . import commands as C
from . import stalls as stall_clocks
from .collision import robot_overlap, wall_penetration
from .comms import NO_ROBOTS, CommsRule, Mailbox, SignalFunction, communication_groups
from .config import SimConfig
from .config_schema import check_slam_memory, slam_bytes_per_tile
from .explore_bench import ExploreBench
from .grid import grid_offset
from .kernels import stop_rays_at_bodies, use_threads, wall_sums
from .kernels.raycast import cast_rays_checked, ray_fan
from .kernels.tick import compiled_entry, move_kernel, step_kernel
from .metrics import Metrics, snapshot_row
from .motion import MotionParams, MotionState, MotionStepper, no_obstacles, robot_status
from .observation import Observation, scaled_tag
from .obstacles import Obstacles, stop_rays_at_obstacles
from .odometry import check_noises, draw_scales
from .radio import Radio
from .safe_yaml import short_repr
from .sensors import SENSORS
from .sensors.lidar import apply_noise, draw_noise, lidar_noisy
from .sensors.nearby_robots import sense_pairs
from .slam import SlamState
from .snapshot import SimSnapshot, restore_snapshot, take_snapshot
from .stalls import STALL_RADIUS_M, STALL_SECONDS, STOP_SECONDS, StallWatch
from .state import RobotState, TagView
from .tags import TagStore
from .team import Team
from .trails import Trail
from .world import WorldMap, build_map, reachable_open, spawn_positions

#: Lidar rays per robot of the default type (MAES: 180 rays at 2 degrees).
N_RAYS = 180


class CommandRejected(ValueError):
    """A robot command or request was refused; the message says why. State is unchanged."""


def world_from_config(config: SimConfig, rng: np.random.Generator) -> WorldMap:
    """Build (or load) the map the config describes, by the registered generator of
    ``config.map.kind`` (:mod:`maes_sim.core.world.generators`).

    Generated maps draw from ``rng``; a custom map is read from ``custom_map_filename`` and
    resampled to ``world.tile_size`` metres per tile when it is a Nav2 YAML map.
    """
    return build_map(config, rng)


class Simulation:
    """A MAES simulation of ``config.number_of_robots`` robots.

    Parameters
    ----------
    config : SimConfig
        The validated configuration (:func:`maes_sim.core.load_config`).
    seed : int, optional
        Overrides ``config.random_seeds[0]``.
    world : WorldMap, optional
        Use this map instead of building one from the config.
    signal_function : callable, optional
        ``f(total_distance, distance_through_walls[, rng]) -> bool`` deciding whether a
        broadcast gets through (replaces the range/walls rule; see :mod:`comms`).

    Attributes
    ----------
    tick : int
        Logic ticks done.
    walls : ndarray of bool, shape (H, W)
        The map (``walls[iy, ix]``, row 0 at the bottom).
    rng : numpy.random.Generator
        The only source of randomness.
    trail : Trail
        Every robot's position over time (every tick, thinned past 2048 samples), for the
        result pictures' paths.
    team : Team
        Every robot's type and its per-robot settings (:mod:`maes_sim.core.team`).
    radius : float
        The largest robot's radius, tiles (every robot's in a uniform team); ``team.radii``
        has each robot's.
    """

    def __init__(
        self,
        config: SimConfig,
        *,
        seed: int | None = None,
        world: WorldMap | None = None,
        signal_function: SignalFunction | None = None,
    ) -> None:
        self.config = config
        self.seed = int(config.random_seeds[0] if seed is None else seed)
        self.rng = np.random.default_rng(self.seed)
        self.world = world if world is not None else world_from_config(config, self.rng)
        # A custom map's size is known only now: refuse SLAM maps no machine could hold.
        check_slam_memory(
            config.number_of_robots,
            self.world.width,
            self.world.height,
            slam_bytes_per_tile(config.stack.slam, config.robot_constraints.distribute_slam),
        )
        self.walls = np.ascontiguousarray(self.world.walls, dtype=bool)
        self._wall_sums = wall_sums(self.walls)  # for line-of-sight pair searches
        self.shape = self.walls.shape
        self._offset = grid_offset(self.shape)
        rc, gs = config.robot_constraints, config.global_settings
        n = self.n_robots = config.number_of_robots
        self.team = Team(config.robot_type_per_robot())
        self.radius = self.team.radius
        self.tick_duration = gs.logic_ticks_delta_millis / 1000.0
        types = self.team.types
        self.motion_params = MotionParams.for_robots(
            [t.agent_relative_size for t in types],
            [t.relative_move_speed for t in types],
            [t.motion_model for t in types],
            logic_ticks_delta_millis=gs.logic_ticks_delta_millis,
            physics_ticks_per_logic_update=gs.physics_ticks_per_logic_update,
        )

        spawn = config.robot_spawn_config
        together = None
        if spawn.mode == "spawn_together":
            together = spawn.spawn_together.starting_point
            if together is None:
                together = (0.0, 0.0)
        start = spawn_positions(
            self.world,
            n,
            self.radius,
            self.rng,
            biggest_room=spawn.mode == "biggest_room",
            together_at=together,
            at_hallway_ends=spawn.mode == "spawn_at_hallway_ends",
        )
        self._motion = MotionState.at_rest(start)
        self._commands = C.Commands.idle(n)
        #: Advances ``_motion`` and ``_commands`` in place every tick (they are this object's).
        self._stepper = MotionStepper(self.motion_params, n)
        self._asked = np.empty(n, dtype=np.bool_)  # scratch of step(): commands asking motion
        self._odom = np.zeros((n, 3))  # believed pose by dead reckoning, world frame
        self._odom[:, :2] = start - self._offset
        self._status = robot_status(self._motion, self._commands, self.motion_params)
        self.colliding = np.zeros(n, dtype=bool)
        self.collided = np.zeros(n, dtype=bool)

        reachable = reachable_open(self.walls, np.floor(start).astype(np.int64))
        self.metrics = Metrics(reachable, n)
        #: Robots that stay in one place while driven (:mod:`.stalls`): counted for the
        #: statistics and ``summary.json``.
        self.stalls = StallWatch(
            start,
            STALL_RADIUS_M / config.world.tile_size,
            round(STALL_SECONDS / self.tick_duration),
            round(STOP_SECONDS / self.tick_duration),
        )
        #: The moving obstacles (:mod:`.obstacles`), or None without any.
        self.obstacles = (
            Obstacles(
                config.obstacles,
                self.walls,
                reachable,
                self._offset,
                config.world.tile_size,
                self.tick_duration,
                self.rng,
                start,
                self.radius,
            )
            if config.obstacles
            else None
        )
        #: Explore-Bench metrics: per-robot seen maps, time to 90 % (``explore_bench``).
        self.explore_bench = ExploreBench(n, reachable.shape)
        self.comms = CommsRule(
            float(self.team.broadcast_ranges.max()), rc.broadcast_blocked_by_walls, signal_function
        )
        #: Broadcasts in and out, through each robot type's radio model (:mod:`.radio`).
        self.mailbox = Mailbox(
            n, Radio([t.radio for t in types], np.asarray(self.team.broadcast_ranges, float))
        )
        self.tags = TagStore(n)
        self.slam = SlamState(
            n,
            self.shape,
            self.team.per_robot(self.team.slam_inaccuracy),
            config.stack.occupancy if config.stack.slam == "occupancy" else None,
            merging=rc.distribute_slam,
        )
        # noise per robot (robot types); a uniform team passes scalars, as before types existed
        self._odometry_noise = self.team.per_robot(self.team.odometry_noise)
        self._heading_noise = self.team.per_robot(self.team.heading_noise)
        # checked once here (advance_odometry's check), not every tick
        self._odometry_noisy = check_noises(n, self._odometry_noise, self._heading_noise)
        self._lidar_noise_std = self.team.lidar_noise_std / config.world.tile_size  # tiles
        self._lidar_noisy = lidar_noisy(self._lidar_noise_std, self.team.lidar_dropout)
        self._scan_noise: list | None = None
        self.snapshots: list[dict[str, float | int]] = []
        self.trail = Trail(n)  # the paths in the result pictures
        self.trail.record(0, start)
        self.tick = 0
        self.end_reason: str | None = None
        self.links = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        self._nearby = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        self._tags_nearby: list[list] | None = None
        self._observations: dict[float, Observation] = {}
        self._tags_in_units: dict[float, tuple[list, list]] = {}
        self._tag_copies: dict[float, dict[TagView, TagView]] = {}
        self._lidar_threads = config.performance.threads
        #: One lidar and one body size, serial lidar: a tick's compiled work is one call. The
        #: call advances the stall clock itself, so a stall watch of another kind (an
        #: experiment's, e.g. experiments/stall_pauses.py feeding several clocks through this
        #: module's ``StallWatch`` name) keeps the steps one by one, fed through its update().
        self._one_lidar = (
            len(self.team.lidar_groups) == 1
            and len(self.team.body_groups) == 1
            and self._lidar_threads == 1
            and type(self.stalls) is stall_clocks.StallWatch
        )
        self._one_call_kept: tuple | None = None  # see _one_call
        if self._one_lidar:  # that lidar's ray fan and range, the robots' radius
            group = self.team.lidar_groups[0]
            self._scan_constants = (
                ray_fan(group.rays, group.fov),
                float(group.range),
                float(self.team.body_groups[0][0]),
            )
        self._robot_ids = np.arange(n, dtype=np.int64)  # every robot its own map (read only)
        self._sense(slam_due=rc.automatically_update_slam)
        self._snapshot_and_check_end()

    # ------------------------------------------------------------------ observation (arrays)
    @property
    def sim_time(self) -> float:
        """Simulated seconds since the start."""
        return self.tick * self.tick_duration

    @property
    def poses(self) -> np.ndarray:
        """True poses (N, 3): x, y (world tiles, origin at the map centre), heading (rad)."""
        out = np.empty((self.n_robots, 3))
        out[:, :2] = self._motion.positions - self._offset
        out[:, 2] = self._motion.headings
        return out

    @property
    def grid_positions(self) -> np.ndarray:
        """True positions (N, 2) in grid coordinates (see :mod:`grid`)."""
        return self._motion.positions.copy()

    @property
    def lidar_ranges(self) -> np.ndarray:
        """This tick's lidar ranges (N, R) in tiles: walls, moving obstacles (:mod:`.obstacles`)
        and, with ``lidar.robots_block_rays`` (the default), other robots' bodies stop the rays;
        no return = the lidar's range; with the type's lidar noise
        (:mod:`maes_sim.core.sensors.lidar`) a hit's range has a Gaussian error and a dropped ray
        is a no return.

        Exploration and SLAM are marked by the wall-only traversal every tick; the bodies are
        applied (:func:`~maes_sim.core.kernels.stop_rays_at_bodies`) the first time a tick's
        scan is read (the obstacles likewise), so a run nobody reads scans from does not pay
        for them. A team whose
        types have different ray counts has no (N, R) array: read :meth:`lidar_of`.
        """
        return self._lidar_all()[0]

    @property
    def lidar_hits(self) -> np.ndarray:
        """Whether each ray of :attr:`lidar_ranges` hit a wall or a robot (N, R)."""
        return self._lidar_all()[1]

    def lidar_of(self, robot: int) -> tuple[np.ndarray, np.ndarray]:
        """Robot ``robot``'s scan this tick: ranges (R_i,) in tiles and hits (R_i,), R_i its
        type's ray count (views; do not modify)."""
        g, row = self.team.lidar_slot(self._index(robot))
        ranges, hits = self._lidar()[g]
        return ranges[row], hits[row]

    def lidar_geometry(self, robot: int) -> tuple[int, float | None]:
        """``(rays, field of view in rad or None for the full circle)`` of ``robot``'s lidar
        (the angles: :func:`maes_sim.core.kernels.ray_angle_offsets`)."""
        g, _ = self.team.lidar_slot(self._index(robot))
        group = self.team.lidar_groups[g]
        return group.rays, group.fov

    def _lidar_all(self) -> tuple[np.ndarray, np.ndarray]:
        scans = self._lidar()
        if len(scans) == 1:
            return scans[0]
        if not self.team.same_rays():
            raise ValueError(
                "the robots' lidars have different ray counts (robot types): read each robot's "
                "scan with Simulation.lidar_of(i)"
            )
        rays = self.team.lidar_groups[0].rays
        ranges = np.empty((self.n_robots, rays))
        hits = np.empty((self.n_robots, rays), dtype=bool)
        for group, (r, h) in zip(self.team.lidar_groups, scans, strict=True):
            ranges[group.robots] = r
            hits[group.robots] = h
        return ranges, hits

    def _lidar(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per lidar group (:attr:`Team.lidar_groups`): its robots' ranges and hits."""
        if self._scan is None:
            bodies = self.config.lidar.robots_block_rays and self.n_robots > 1
            if not bodies and self.obstacles is None and self._scan_noise is None:
                self._scan = list(self._walls_scan)  # nothing stops or blurs the walls' rays
                return self._scan
            scans = []
            pos, head = self._motion.positions, self._motion.headings
            walls_scan = zip(self.team.lidar_groups, self._walls_scan, strict=True)
            for g, (group, (ranges, hits)) in enumerate(walls_scan):
                if bodies:
                    idx = group.robots
                    if len(self.team.lidar_groups) == 1:
                        origins, heads = pos, head  # every robot: no copies
                    else:
                        origins, heads = pos[idx], head[idx]
                    for radius, body_idx in self.team.body_groups:
                        others = pos if len(self.team.body_groups) == 1 else pos[body_idx]
                        ranges, hits = stop_rays_at_bodies(
                            ranges, hits, origins, heads, group.range, others, radius, group.fov
                        )
                if self.obstacles is not None:
                    idx = group.robots
                    ranges, hits = stop_rays_at_obstacles(
                        ranges,
                        hits,
                        pos[idx],
                        head[idx],
                        self.obstacles.shapes,
                        group.fov,
                        group.range,
                    )
                # Noise last: walls, bodies, obstacles, then what the sensor gets wrong.
                if self._scan_noise is not None:
                    ranges, hits = apply_noise(ranges, hits, group.range, self._scan_noise[g])
                scans.append((ranges, hits))
            self._scan = scans
        return self._scan

    @property
    def velocities(self) -> np.ndarray:
        """Current (linear tiles/s, angular rad/s) of every robot, shape (N, 2)."""
        out = np.empty((self.n_robots, 2))  # filled by column: cheaper than np.stack
        out[:, 0] = self._motion.linear
        out[:, 1] = self._motion.angular
        return out

    @property
    def odometry_poses(self) -> np.ndarray:
        """Dead-reckoned poses (N, 3), world frame; equal to :attr:`poses` without noise."""
        return self._odom.copy()

    @property
    def estimated_poses(self) -> np.ndarray:
        """Poses (N, 3) the robots believe in their SLAM maps: the true pose plus the SLAM
        inaccuracy; with ``stack.slam: occupancy``, which does no scan matching, the odometry
        pose (:attr:`odometry_poses`, drift included) plus the SLAM inaccuracy."""
        out = self._odom.copy() if self.slam.grids is not None else self.poses
        out[:, :2] += self.slam.offsets
        return out

    @property
    def statuses(self) -> list[str]:
        """``State.status`` of every robot: MAES 2.0's "Idle", "Moving" or "Stopping"."""
        return [C.MAES_STATUS_NAMES[int(k)] for k in self._status]

    @property
    def slam_maps(self) -> np.ndarray:
        """Per-robot SLAM maps (N, H, W) uint8 (UNKNOWN=0, OPEN=1, SOLID=2). Read-only view."""
        view = self.slam.maps.view()
        view.flags.writeable = False
        return view

    @property
    def exploration_percent(self) -> float:
        """Share of the reachable open area seen by any lidar, 0..100."""
        return self.metrics.exploration_percent

    @property
    def coverage_percent(self) -> float:
        """MAES 2.0's coverage: share of the reachable area's half-tile mini-tiles within the
        3 x 3 mini-tiles around a robot at some tick, 0..100 (see :mod:`.metrics`)."""
        return self.metrics.coverage_percent

    @property
    def finished(self) -> bool:
        """True once an end criterion was met (see :attr:`end_reason`)."""
        return self.end_reason is not None

    def exploration_heatmap(self) -> np.ndarray:
        """Exploration recency (H, W) float32: 1 now .. 0 cold, -1 never."""
        cold = self.config.global_settings.ticks_before_exploration_heatmap_cold
        return self.metrics.heatmap("exploration", self.tick, cold)

    def coverage_heatmap(self) -> np.ndarray:
        """Coverage recency (H, W) float32: 1 now .. 0 cold, -1 never."""
        cold = self.config.global_settings.ticks_before_coverage_heatmap_cold
        return self.metrics.heatmap("coverage", self.tick, cold)

    def communication_links(self) -> tuple[np.ndarray, np.ndarray]:
        """Directed (sender, receiver) pairs that can communicate at the current positions."""
        return self._links(self._motion.positions)

    def _links(self, pos: np.ndarray, senders: np.ndarray | None = None):
        """The comms rule's links, each sender's own broadcast range applied (robot types)."""
        ia, ib = self.comms.links(self.walls, pos, self.rng, senders, sums=self._wall_sums)
        if self.comms.signal_function is None:
            ia, ib = self.team.within_range(ia, ib, pos, pos, self.team.broadcast_ranges)
        return ia, ib

    def nearby_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(observer, observed) index arrays of the robots sensing each other this tick."""
        return self._nearby[0].copy(), self._nearby[1].copy()

    # ------------------------------------------------------------------ observation (one pass)
    def observation(self, scale: float = 1.0) -> Observation:
        """Every robot's observation at the current tick, as arrays (robot axis first).

        Built once per tick (and unit) and shared by every reader: :meth:`robot_state` and
        :meth:`robot_states` are views of it, the simulator node and direct mode read it in
        metres (``scale = tile_size``: lengths converted once, for all robots).

        Parameters
        ----------
        scale : float
            Length unit per tile: 1.0 (default) for tiles, ``world.tile_size`` for metres.
        """
        obs = self._observations.get(scale)
        if obs is None:
            base = self._observations.get(1.0)
            if base is None:
                motion = self._motion
                robot_xy = motion.positions - self._offset
                if self.slam.grids is None:
                    believed_xy, believed_heading = robot_xy, motion.headings.copy()
                else:  # occupancy: the odometry pose, as estimated_poses
                    believed_xy, believed_heading = self._odom[:, :2], self._odom[:, 2].copy()
                base = Observation(
                    self.tick,
                    1.0,
                    positions=believed_xy + self.slam.offsets,
                    headings=believed_heading,
                    status=self._status.copy(),
                    colliding=self.colliding.copy(),
                    velocities=self.velocities,
                    robot_positions=robot_xy,
                    nearby=self._nearby,
                    inbox=self.mailbox.inbox_of,
                    tags=self._tags_for,
                    robot_types=self.team.names,
                    sensors={s.name: s.read(self) for s in SENSORS},
                )
                self._observations[1.0] = base
            if scale != 1.0:
                base = base.scaled(scale, lambda: self._tags_scaled(scale))
                self._observations[scale] = base
            obs = base
        return obs

    def robot_state(self, robot: int) -> RobotState:
        """The ``maes_interfaces/State`` of ``robot`` for the current tick (world tiles): a
        view of :meth:`observation`."""
        return self.observation().state(self._index(robot))

    def robot_states(self) -> list[RobotState]:
        """Every robot's :meth:`robot_state` for the current tick (a view of
        :meth:`observation`, its per-robot values made once for all).

        Examples
        --------
        >>> from maes_sim.core import config_from_dict
        >>> sim = Simulation(config_from_dict({"number_of_robots": 3}))
        >>> sim.robot_states() == [sim.robot_state(i) for i in range(3)]
        True
        """
        return self.observation().states()

    def _tags_scaled(self, scale: float) -> list[list[TagView]]:
        # Each tag's scaled copy is made once for the run (tags never change, and are kept),
        # so readers may cache what they make of it by identity (the simulator node does).
        source = self._tags_for()
        cached = self._tags_in_units.get(scale)
        if cached is None or cached[0] is not source:
            copies = self._tag_copies.setdefault(scale, {})
            out = []
            for tags in source:
                row = []
                for t in tags:
                    c = copies.get(t)
                    if c is None:
                        c = copies[t] = scaled_tag(t, scale)
                    row.append(c)
                out.append(row)
            cached = self._tags_in_units[scale] = (source, out)
        return cached[1]

    def _tags_for(self) -> list[list]:
        if self._tags_nearby is None:  # computed on demand: tags are read far less than kept
            ranges, pos = self.team.tag_ranges, self._motion.positions
            limit = self.config.stack.max_tags_per_state
            if self.team.uniform:
                self._tags_nearby = self.tags.nearby(pos, float(ranges[0]), limit)
            else:
                out: list[list] = [[] for _ in range(self.n_robots)]
                for r in np.unique(ranges).tolist():
                    idx = np.flatnonzero(ranges == r)
                    for i, found in zip(
                        idx.tolist(), self.tags.nearby(pos[idx], r, limit), strict=True
                    ):
                        out[i] = found
                self._tags_nearby = out
        return self._tags_nearby

    # ------------------------------------------------------------------ commands
    def _index(self, robot: int) -> int:
        if isinstance(robot, bool | np.bool_) or not isinstance(robot, int | np.integer):
            raise CommandRejected(
                f"robot index must be an int, got {short_repr(robot)} ({type(robot).__name__})"
            )
        if not 0 <= int(robot) < self.n_robots:
            raise CommandRejected(
                f"robot index {short_repr(int(robot))} is out of range: this simulation has "
                f"robots 0..{self.n_robots - 1}"
            )
        return int(robot)

    def _command(self, fn: Callable, robot, *args) -> None:
        if isinstance(robot, int | np.integer) and not isinstance(robot, bool | np.bool_):
            self._index(robot)  # the friendlier message for a single robot
        try:  # the command functions check every value first: all or nothing, no copy needed
            fn(self._commands, robot, *args)
        except C.CommandError as exc:
            raise CommandRejected(str(exc)) from exc
        if fn is not C.stop:
            self.stalls.driven(robot)

    def set_velocity(self, robot: int, linear: float, angular: float, lateral: float = 0.0) -> None:
        """Velocity command (tiles/s, rad/s) mapped through the robot's motion model (cmd_vel);
        ``lateral`` (tiles/s, to the robot's left: ``cmd_vel.linear.y``) moves only an
        omnidirectional robot."""
        self._command(C.set_velocity, robot, linear, angular, lateral)

    def set_velocities(
        self, linear: np.ndarray, angular: np.ndarray, lateral: np.ndarray | float = 0.0
    ) -> None:
        """Velocity commands for all robots at once, shapes (N,) each."""
        try:  # every robot: the rows written whole (C.set_velocity's checks and messages)
            C.set_velocity_every(self._commands, self._robot_ids, linear, angular, lateral)
        except C.CommandError as exc:
            raise CommandRejected(str(exc)) from exc
        self.stalls.driven(slice(None))

    def move(self, robot: int, distance: float) -> None:
        """Drive ``distance`` tiles straight ahead (negative: reverse), then stop."""
        self._command(C.move, robot, distance)

    def rotate(self, robot: int, angle: float) -> None:
        """Turn in place by ``angle`` radians (counter-clockwise positive), then stop."""
        self._command(C.rotate, robot, angle)

    def move_continuous(self, robot: int, reverse: bool = False) -> None:
        """Drive straight until told otherwise."""
        self._command(C.move_continuous, robot, reverse)

    def rotate_continuous(self, robot: int, counter_clockwise: bool = True) -> None:
        """Turn in place until told otherwise."""
        self._command(C.rotate_continuous, robot, counter_clockwise)

    def stop(self, robot: int) -> None:
        """Brake to a standstill."""
        self._command(C.stop, robot)

    def broadcast(self, robot: int, text: str) -> None:
        """Send ``text`` to every robot that can hear ``robot``; delivered at the next tick.

        Raises :class:`CommandRejected` for an empty or oversized message, or past the
        per-tick limit (:data:`comms.MAX_BROADCASTS_PER_TICK`).
        """
        problem = self.mailbox.post(self._index(robot), text)
        if problem is not None:
            raise CommandRejected(f"broadcast from robot {robot} refused: {problem}")

    def deposit_tag(self, robot: int, text: str) -> None:
        """Leave an environment tag with ``text`` at the robot's true position."""
        i = self._index(robot)
        gxy = self._motion.positions[i]
        problem = self.tags.deposit(i, text, gxy, gxy - self._offset, self.tick)
        if problem is not None:
            raise CommandRejected(f"tag from robot {robot} refused: {problem}")
        self._tags_nearby = None

    def place_robots(self, poses: np.ndarray) -> None:
        """Teleport every robot to ``poses`` (N, 3) (world tiles, rad) and stop it.

        For setting up scenarios and tests. Raises :class:`CommandRejected` (nothing changed)
        when a pose is not finite, a disc would overlap a wall or a moving obstacle, or two discs
        would overlap. The
        observations (lidar, sensing) are refreshed; exploration and SLAM are not marked.
        """
        try:
            poses = C.as_numbers("poses", poses, (self.n_robots, 3))
        except C.CommandError as exc:
            raise CommandRejected(str(exc)) from None
        if poses.shape != (self.n_robots, 3) or not np.isfinite(poses).all():
            raise CommandRejected(
                f"poses must be a finite ({self.n_robots}, 3) array, got shape {poses.shape}"
            )
        grid = poses[:, :2] + self._offset
        h, w = self.shape
        radii = self.team.radii if not self.team.uniform else self.radius
        inside = (
            (grid[:, 0] >= radii)
            & (grid[:, 0] <= w - radii)
            & (grid[:, 1] >= radii)
            & (grid[:, 1] <= h - radii)
        )
        if not inside.all():
            i = int(np.argmin(inside))
            x0, y0 = -self._offset
            raise CommandRejected(
                f"robot {i} at {poses[i, :2].tolist()} is off the map (world x from {x0:g} to "
                f"{x0 + w:g}, y from {y0:g} to {y0 + h:g}, less the robot's radius)"
            )
        depth = wall_penetration(self.walls, grid, radii)
        if (depth > 0).any():
            i = int(np.argmax(depth > 0))
            raise CommandRejected(f"robot {i} at {poses[i, :2].tolist()} would overlap a wall")
        if robot_overlap(grid, radii) > 0:
            raise CommandRejected("two robots would overlap")
        if self.obstacles is not None:
            hit = self.obstacles.overlapping(grid, np.broadcast_to(radii, (self.n_robots,)))
            if hit.any():
                i = int(np.argmax(hit))
                raise CommandRejected(
                    f"robot {i} at {poses[i, :2].tolist()} would overlap a moving obstacle"
                )
        self._motion = MotionState.at_rest(grid, poses[:, 2])
        self._commands = C.Commands.idle(self.n_robots)
        self._odom = poses.copy()
        self._status = robot_status(self._motion, self._commands, self.motion_params)
        self.trail.record(self.tick, grid)
        self._observe(slam_due=False, mark=False)

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> SimSnapshot:
        """The running state now (rng, arrays, tags, mailbox, statistics, trails, SLAM...), a
        deep copy: :meth:`restore` continues from it bit-identically (:mod:`.snapshot`)."""
        return take_snapshot(self)

    def restore(self, snapshot: SimSnapshot) -> None:
        """Go back (or forward) to ``snapshot``, taken from this simulation or one built from
        the same config and map; raises :class:`~.snapshot.SnapshotError` otherwise."""
        restore_snapshot(self, snapshot)
        self._observations = {}  # the observation pass of the restored tick is made anew
        self._tags_in_units = {}

    # ------------------------------------------------------------------ stepping
    def step(self) -> None:
        """Advance every robot by one logic tick (see the module docstring for the order)."""
        rc = self.config.robot_constraints
        self.tags.settle_tick()
        self._tags_nearby = None
        pos0 = self._motion.positions
        next_tick = self.tick + 1
        senders = self.mailbox.pending_senders()
        sync_due = rc.distribute_slam and next_tick % rc.slam_sync_interval_in_ticks == 0
        gs = self.config.global_settings
        want_all = sync_due or gs.populate_adjacency_and_comm_groups_every_tick
        all_links = self._links(pos0) if want_all else None
        if not senders.size:
            links = None
        elif all_links is not None:  # one evaluation serves messages and SLAM sync alike
            keep = np.isin(all_links[0], senders)
            links = (all_links[0][keep], all_links[1][keep])
        else:
            links = self._links(pos0, senders)

        shapes = None
        if self.obstacles is not None:  # they move first; the robots meet them where they are
            self.obstacles.advance(next_tick, self.rng)
            shapes = self.obstacles.shapes
        # the positions at sending time, as links were found (moved in place below)
        pos0 = pos0.copy() if senders.size or sync_due else None
        if self._one_lidar:  # steps 2 and 3 and the stall clock in one compiled call
            self._move_and_sense(shapes, next_tick)
        else:
            asked = self._asked
            move_kernel(*self._motion_args(shapes), asked)
            self.tick = next_tick
            self.trail.record(self.tick, self._motion.positions)
            self._sense(self.slam_published_at(self.tick))
            m = self.metrics
            self.stalls.update(
                self.tick, self._motion.positions, asked, m.explored_count < m.reachable_count
            )
        if all_links is not None:
            self.links = all_links
            if sync_due:  # each pair's map exchange goes through the radio model
                kept = self.mailbox.radio.exchange_links(*all_links, pos0, self.rng)
                labels = communication_groups(self.n_robots, *kept)
                if self.slam.grids is None:
                    self.slam.merge_groups(labels)
                else:  # by the robots' poses now, in grid coordinates
                    self.slam.grids.merge_groups(
                        self.slam.maps, labels, self._grid_poses(self.poses), self._grid_poses()
                    )
        if links is None:
            links = (NO_ROBOTS, NO_ROBOTS)
        self.mailbox.deliver(*links, pos0, self.rng)
        self.tags.new_tick()
        self._snapshot_and_check_end()

    def _new_motion_outputs(self) -> tuple[np.ndarray, np.ndarray]:
        """The tick's ``colliding``, ``collided`` and status arrays, made anew (the motion
        kernels fill them), and the odometry's scale errors drawn: the tick's next draws, so
        nothing may draw before the kernel runs. Returns the scale errors (translation,
        rotation)."""
        n = self.n_robots
        self.colliding = np.empty(n, dtype=np.bool_)
        self.collided = np.empty(n, dtype=np.bool_)
        self._status = np.empty(n, dtype=np.int8)
        return draw_scales(
            n, self._odometry_noise, self._heading_noise, self._odometry_noisy, self.rng
        )

    def _motion_args(self, shapes: np.ndarray | None) -> tuple:
        """Step 2 of :meth:`step` as :func:`~.kernels.tick.move_kernel`'s arguments (less
        ``asked``): the physics, the distance and collision counters and the odometry, in place.
        Makes the tick's motion outputs and draws (:meth:`_new_motion_outputs`)."""
        scale_t, scale_r = self._new_motion_outputs()
        m = self.metrics
        return (
            self.walls, no_obstacles(shapes), *self._stepper.constants,
            *self._motion.arrays(), *self._commands.arrays(),
            self.colliding, self.collided, self._status, m.distance, m.collisions,
            self._odom,  # dead-reckoned in place (every reader copies it)
            scale_t, scale_r, self._odometry_noisy,
        )  # fmt: skip

    def _move_and_sense(self, shapes: np.ndarray | None, tick: int) -> None:
        """Steps 2 and 3 of :meth:`step` to ``tick`` and the stall clock, for one lidar and one
        body size, in one compiled call (:func:`~.kernels.tick.step_kernel`): what
        :func:`~.kernels.tick.move_kernel`, :meth:`_observe` and ``StallWatch.update`` do one
        after the other, the random draws (odometry, then lidar noise) made first, in their
        order; the kernel's arguments the simulation keeps, and its compiled entry, are kept
        (:meth:`_one_call`)."""
        n = self.n_robots
        scale_t, scale_r = self._new_motion_outputs()
        scan_noise = self._draw_scan_noise()
        self.tick = tick
        m = self.metrics
        slam_due = self.slam_published_at(tick)
        # the SLAM maps when due (the seen maps then in a second pass), else the seen maps;
        # occupancy grids take the scans in _map_scans
        simulated_due = slam_due and self.slam.grids is None
        rays = self._scan_constants[0].shape[1]
        ranges = np.empty((n, rays))
        hit = np.empty((n, rays), dtype=np.bool_)
        now = (
            no_obstacles(shapes), self.colliding, self.collided, self._status, scale_t, scale_r,
            tick, self.slam.maps if simulated_due else self.explore_bench.seen, ranges, hit,
            simulated_due, (m.explored_count, m.covered_count, m.mini_covered_count),
        )  # fmt: skip
        kept, call = self._one_call(now)
        explored, covered, minis, started = call(*kept, *now)
        m.explored_count, m.covered_count, m.mini_covered_count = explored, covered, minis
        self.stalls.count += started
        self.trail.record(tick, self._motion.positions)
        self._walls_scan = [(ranges, hit)]
        self._scan = None
        self._scan_noise = scan_noise
        self._after_scan(slam_due, mark=True)

    def __getstate__(self) -> dict:
        """The simulation for pickle (direct mode's checkpoints pickle it whole) without the
        one-call tick's kept arguments and compiled entry (:meth:`_one_call`): a numba entry
        does not pickle, and the kept arrays must be this simulation's own, so the next step
        gathers them again."""
        state = self.__dict__.copy()
        state["_one_call_kept"] = None
        return state

    def _one_call(self, now: tuple) -> tuple[tuple, Callable]:
        """:func:`~.kernels.tick.step_kernel`'s arguments that the simulation keeps from tick
        to tick (its walls, the motion's constants, the robots' state and commands, the
        metrics', odometry's, seen maps' and stall clock's arrays) and the kernel's compiled
        entry for their types and those of ``now`` (this tick's, made the same way every tick:
        :func:`~.kernels.tick.compiled_entry`). Worked out again when an object holding those
        arrays was replaced (:meth:`restore`, :meth:`place_robots`)."""
        holders = (
            self._motion, self._commands, self.metrics, self._odom, self.explore_bench,
            self.stalls,
        )  # fmt: skip
        kept = self._one_call_kept
        if kept is not None and all(map(operator.is_, kept[0], holders)):
            return kept[1], kept[2]
        m = self.metrics
        base, max_range, radius = self._scan_constants
        args = (
            self.walls, *self._stepper.constants, *self._motion.arrays(),
            *self._commands.arrays(), m.distance, m.collisions, self._odom, self._odometry_noisy,
            base, max_range, m.explored_tick, self._robot_ids, self._robot_ids,
            self.explore_bench.seen, m.covered_tick, m.mini_covered_tick, m.reachable, radius,
            m.first_explored_tick, m.reachable_count, *self.stalls.kernel_state(),
        )  # fmt: skip
        call = compiled_entry(step_kernel, args + now)
        self._one_call_kept = (holders, args, call)
        return args, call

    def run(
        self, max_ticks: int | None = None, progress: Callable[[Simulation], None] | None = None
    ) -> None:
        """Step until an end criterion is met or ``max_ticks`` more ticks are done."""
        done = 0
        while not self.finished and (max_ticks is None or done < max_ticks):
            self.step()
            done += 1
            if progress is not None:
                progress(self)

    def slam_published_at(self, tick: int) -> bool:
        """Whether the robots' SLAM maps are updated (and so published) at ``tick``.

        The one home of the SLAM schedule: tick 0, then every ``slam_update_interval_in_ticks``
        when ``automatically_update_slam``. The simulator node publishes ``map`` on these ticks
        and direct mode hands maps to its navigators on the same ones.

        Examples
        --------
        >>> from maes_sim.core import config_from_dict
        >>> sim = Simulation(config_from_dict({"number_of_robots": 1}))
        >>> [t for t in range(25) if sim.slam_published_at(t)]
        [0, 10, 20]
        """
        rc = self.config.robot_constraints
        return tick == 0 or (
            rc.automatically_update_slam and tick % rc.slam_update_interval_in_ticks == 0
        )

    def _grid_poses(self, poses: np.ndarray | None = None) -> np.ndarray:
        """``poses`` (default: :attr:`estimated_poses`) (N, 3) in grid coordinates."""
        out = self.estimated_poses if poses is None else poses
        out[:, :2] += self._offset
        return out

    def _map_scans(self) -> None:
        """Add this tick's scans, as published, to the occupancy grids at the believed poses."""
        believed = self._grid_poses()
        for g, (group, (ranges, hits)) in enumerate(
            zip(self.team.lidar_groups, self._lidar(), strict=True)
        ):
            idx = group.robots
            dropped = None if self._scan_noise is None else self._scan_noise[g][1]
            self.slam.grids.integrate(
                self.slam.maps,
                idx,
                believed[idx, :2],
                believed[idx, 2],
                ranges,
                hits,
                dropped,
                group.rays,
                group.fov,
            )

    def _sense(self, slam_due: bool) -> None:
        self._observe(slam_due, mark=True)

    def _observe(self, slam_due: bool, mark: bool) -> None:
        """Step 3 of :meth:`step` and the nearby robots of step 4 at the current poses; with
        ``mark`` False (robots placed by hand) no exploration, SLAM or coverage marks."""
        self._trace(slam_due, mark)
        self._scan = None  # the robots' bodies (and noise) are applied when a scan is read
        self._scan_noise = self._draw_scan_noise()
        self._after_scan(slam_due, mark)

    def _draw_scan_noise(self) -> list | None:
        """This tick's lidar noise, drawn every tick, read or not: the same draws in every
        mode (None without noise, what ``draw_noise`` returns then, without asking it)."""
        if not self._lidar_noisy:
            return None
        groups = self.team.lidar_groups
        return draw_noise(groups, self._lidar_noise_std, self.team.lidar_dropout, self.rng)

    def _trace(self, slam_due: bool, mark: bool) -> None:
        """Step 3 of :meth:`step` for any team: one wall traversal per lidar group, then the
        coverage marks and counts, then the seen maps' pass when the SLAM maps took the first."""
        pos = self._motion.positions
        # Each robot's rays also mark its own seen map (Explore-Bench overlap): in this pass
        # when the SLAM maps are not due (the kernel marks one set of maps per pass), else in a
        # second pass below.
        seen = self.explore_bench.seen if mark else None
        # occupancy grids are not marked by the exact rays (_map_scans adds the scans)
        simulated_due = slam_due and self.slam.grids is None
        targets = self.slam.maps if simulated_due else seen
        slam_index = self._robot_ids if targets is not None else None
        # numba's thread count is per calling thread: set it where the kernel runs
        threads = use_threads(self._lidar_threads) if self._lidar_threads > 1 else 1
        # one cast per lidar group (all robots in one for a uniform team); marking does not
        # depend on the order of the rays, so grouping changes no map
        groups = self.team.lidar_groups
        head = self._motion.headings
        parts = (
            [(pos, head, slam_index)]
            if len(groups) == 1
            else [
                (pos[g.robots], head[g.robots], None if slam_index is None else g.robots)
                for g in groups
            ]
        )
        m = self.metrics

        def cast(slam, explored_tick) -> list:
            """Every lidar group's rays, marking ``slam`` (and ``explored_tick``)."""
            return [
                cast_rays_checked(
                    self.walls,
                    origins,
                    heads,
                    group.range,
                    group.rays,
                    explored_tick=explored_tick,
                    tick=self.tick,
                    slam=slam,
                    slam_index=index,
                    # serial unless performance.threads > 1: on a busy machine numba's thread
                    # pool adds milliseconds of waiting
                    parallel=threads > 1,
                    fov=group.fov,
                )
                for group, (origins, heads, index) in zip(groups, parts, strict=True)
            ]

        self._walls_scan = cast(targets, m.explored_tick if mark else None)
        if not mark:
            return
        body_groups = self.team.body_groups
        if len(body_groups) == 1:  # a uniform team: marking and counting in one call
            m.mark_covered_and_refresh(pos, body_groups[0][0], self.tick)
        else:
            for radius, idx in body_groups:
                m.mark_covered(pos[idx], radius, self.tick)
            m.refresh_counts()
        if simulated_due:  # the seen maps were not marked in the pass above
            cast(seen, None)

    def _after_scan(self, slam_due: bool, mark: bool) -> None:
        """The rest of steps 3 and 4 once the traversal has marked (and the lidar noise is
        drawn): the SLAM position errors and occupancy scans when due, Explore-Bench's record,
        the nearby robots; the per-tick caches are cleared."""
        if slam_due:
            self.slam.redraw_offsets(self.rng)
            if self.slam.grids is not None:
                self._map_scans()
        if mark:
            self.explore_bench.record(self.tick, self.metrics.exploration_percent)
        rc = self.config.robot_constraints
        self._nearby = sense_pairs(
            self.walls,
            self._motion.positions,
            self.team,
            rc.sense_nearby_agents_blocked_by_walls,
            self._wall_sums,
        )
        self._tags_nearby = None
        self._observations = {}

    def _snapshot_and_check_end(self) -> None:
        gs, end = self.config.global_settings, self.config.end_criteria
        if self.tick % gs.ticks_per_stats_snapshot == 0:
            self.snapshots.append(self.stats())
        if end.exploration_percent is not None and (
            self.exploration_percent >= end.exploration_percent
        ):
            self.end_reason = f"exploration reached {self.exploration_percent:.2f} %"
        elif end.coverage_percent is not None and self.coverage_percent >= end.coverage_percent:
            self.end_reason = f"coverage reached {self.coverage_percent:.2f} %"
        elif end.tick is not None and self.tick >= end.tick:
            self.end_reason = f"tick limit {end.tick} reached"
        if self.end_reason is not None and (
            not self.snapshots or self.snapshots[-1]["tick"] != self.tick
        ):
            self.snapshots.append(self.stats())

    def stats(self, explore_bench: bool = True) -> dict[str, float | int]:
        """Run statistics now (the columns of :data:`metrics.SNAPSHOT_COLUMNS`); with
        ``explore_bench=False`` without the Explore-Bench columns (they count every robot's
        seen map: the simulator node's per-tick ``stats`` topic does without them)."""
        row = snapshot_row(
            self.metrics,
            self.tick,
            self.sim_time,
            self.mailbox.total_sent,
            self.mailbox.total_delivered,
            len(self.tags),
            self.config.world.tile_size,
            self,
        )
        if not explore_bench:
            return row
        m = self.metrics
        row.update(
            self.explore_bench.row(
                m.reachable, m.explored_count, float(m.distance.sum()), self.config.world.tile_size
            )
        )
        return row

    def explore_bench_summary(self) -> dict[str, object]:
        """The Explore-Bench metrics now (:mod:`maes_sim.core.explore_bench`), for
        ``summary.json``: time to 90 % and to the end, area, efficiency, overlap, per robot."""
        m = self.metrics
        return self.explore_bench.summary(
            m.reachable,
            m.explored_count,
            m.distance,
            self.config.world.tile_size,
            self.tick,
            self.tick_duration,
            self.finished,
        )
