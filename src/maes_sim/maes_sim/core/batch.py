"""Many simulations stepped together by the compiled core, for learning at scale.

:class:`BatchedSimulation` lays the maps of ``E`` environments one above the other in one
*mosaic* (a wall row between them, and every map has its own wall border), puts all ``E x N``
robots in it and steps them with the core's kernels in one call per tick: the motion model
with collisions (:func:`~maes_sim.core.motion.advance_tick`) and the lidar with exploration
marking (:func:`~maes_sim.core.kernels.cast_rays`, other robots' bodies stopping rays). Walls
separate the environments, so no robot, ray or collision reaches another environment.

What it keeps of a :class:`~maes_sim.core.Simulation` is what learning to explore needs:
motion, scans, exploration (the explored area of each environment's reachable region) and
collisions. No SLAM maps, comms, tags, odometry noise or statistics: use the
:class:`~maes_sim.core.Simulation` (and the PettingZoo env) for those. An environment's map and
start are those of ``Simulation(config, seed=s)``; its trajectories follow the simulation's to
rounding (the mosaic's row offset changes the last bits of the coordinates: a test bounds it),
not bit for bit.

>>> from maes_sim.core import BatchedSimulation, config_from_dict
>>> cfg = config_from_dict({"number_of_robots": 2, "map": {"width_in_tiles": 20,
...                         "height_in_tiles": 20}})
>>> batch = BatchedSimulation(cfg, seeds=[1, 2, 3])
>>> batch.step(np.ones((3, 2)), np.zeros((3, 2)))
>>> batch.poses.shape, batch.scans().shape, batch.explored_counts().shape
((3, 2, 3), (3, 2, 180), (3,))
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import commands as C
from .config import SimConfig
from .grid import grid_offset
from .kernels import cast_rays, stop_rays_at_bodies
from .motion import MotionParams, MotionState, advance_tick
from .simulation import N_RAYS, world_from_config
from .world import reachable_open, spawn_positions

#: Wall rows between two environments' maps in the mosaic.
GAP = 1


class BatchedSimulation:
    """``len(seeds)`` environments of ``config`` stepped together (see the module docstring).

    Parameters
    ----------
    config : SimConfig
        Every environment's config (generated maps: each seed gives a map of the same size).
    seeds : sequence of int
        One per environment: its map and start, as ``Simulation(config, seed=s)``.

    Attributes
    ----------
    n_envs, n_robots : int
        Environments, robots per environment.
    ticks : ndarray of int, shape (E,)
        Ticks since each environment's last reset.
    """

    def __init__(self, config: SimConfig, seeds: Sequence[int]) -> None:
        if len(seeds) < 1:
            raise ValueError("a batch needs at least one seed")
        if config.robot_types or config.team:
            raise ValueError(
                "the batched simulation steps robots of robot_constraints' one type only: this "
                "config declares robot_types/team (use parallel_env for a mixed team)"
            )
        if config.obstacles:
            raise ValueError(
                "the batched simulation has no moving obstacles: this config declares "
                "obstacles (use parallel_env, which steps a Simulation per environment)"
            )
        self.config = config
        rc, gs = config.robot_constraints, config.global_settings
        self.n_envs, self.n_robots = len(seeds), config.number_of_robots
        self.radius = rc.agent_relative_size / 2.0
        self.range = rc.slam_raytrace_range
        self.params = MotionParams.from_values(
            relative_move_speed=rc.relative_move_speed,
            agent_relative_size=rc.agent_relative_size,
            logic_ticks_delta_millis=gs.logic_ticks_delta_millis,
            physics_ticks_per_logic_update=gs.physics_ticks_per_logic_update,
            model=config.motion.model,
        )
        self._rngs, self.worlds, starts = [], [], []
        for s in seeds:
            rng = np.random.default_rng(int(s))  # the draws of Simulation(config, seed=s)
            world = world_from_config(config, rng)
            starts.append(self._spawn(world, rng))
            self._rngs.append(rng)
            self.worlds.append(world)
        shapes = {w.walls.shape for w in self.worlds}
        if len(shapes) != 1:
            raise ValueError(f"every environment's map must have one size, got {sorted(shapes)}")
        self.shape = h, w = shapes.pop()
        self._stride = h + GAP
        walls = np.ones((self.n_envs * self._stride, w), dtype=bool)
        reach = np.zeros_like(walls)
        self._block_offset = np.zeros((self.n_envs, 2))
        for k, (world, start) in enumerate(zip(self.worlds, starts, strict=True)):
            rows = slice(k * self._stride, k * self._stride + h)
            walls[rows] = world.walls
            reach[rows] = reachable_open(world.walls, np.floor(start).astype(np.int64))
            self._block_offset[k, 1] = k * self._stride
        self.walls, self.reachable = walls, reach
        self.reachable_counts = reach.reshape(self.n_envs, self._stride, w).sum(axis=(1, 2))
        self._offset = grid_offset(self.shape)  # grid -> world (tiles), as the simulation's
        pos = (np.stack(starts) + self._block_offset[:, None, :]).reshape(-1, 2)
        self._motion = MotionState.at_rest(pos)
        self._commands = C.Commands.idle(self.n_envs * self.n_robots)
        self.explored_tick = np.full(walls.shape, -1, dtype=np.int32)
        self.ticks = np.zeros(self.n_envs, dtype=np.int64)
        self.collided = np.zeros((self.n_envs, self.n_robots), dtype=bool)
        self._tick = 0
        self._sense()

    def _spawn(self, world, rng: np.random.Generator) -> np.ndarray:
        spawn = self.config.robot_spawn_config
        together = None
        if spawn.mode == "spawn_together":
            together = spawn.spawn_together.starting_point or (0.0, 0.0)
        return spawn_positions(
            world,
            self.n_robots,
            self.radius,
            rng,
            biggest_room=spawn.mode == "biggest_room",
            together_at=together,
            at_hallway_ends=spawn.mode == "spawn_at_hallway_ends",
        )

    def _sense(self) -> None:
        m = self._motion
        self._wall_scan = cast_rays(
            self.walls,
            m.positions,
            m.headings,
            self.range,
            N_RAYS,
            explored_tick=self.explored_tick,
            tick=self._tick,
        )
        self._scan = None

    # ------------------------------------------------------------------------ stepping
    def step(self, linear: np.ndarray, angular: np.ndarray) -> None:
        """One tick of every environment with velocity commands ``linear`` (tiles/s) and
        ``angular`` (rad/s), shapes (E, N), mapped through the motion model."""
        n = self.n_envs * self.n_robots
        lin = np.asarray(linear, dtype=np.float64).reshape(n)
        ang = np.asarray(angular, dtype=np.float64).reshape(n)
        try:
            C.set_velocity(self._commands, np.arange(n), lin, ang)
        except C.CommandError as exc:
            raise ValueError(str(exc)) from None
        result = advance_tick(self._motion, self._commands, self.walls, self.params)
        self._motion, self._commands = result.state, result.commands
        self.collided = result.collided.reshape(self.n_envs, self.n_robots)
        self._tick += 1
        self.ticks += 1
        self._sense()

    def reset_envs(self, envs: np.ndarray) -> None:
        """Start the environments ``envs`` (indices) again: robots at new spawn positions
        drawn from each environment's own generator, at rest; nothing explored."""
        for k in np.asarray(envs, dtype=np.int64).tolist():
            start = self._spawn(self.worlds[k], self._rngs[k]) + self._block_offset[k]
            robots = slice(k * self.n_robots, (k + 1) * self.n_robots)
            m = self._motion
            m.positions[robots] = start
            m.headings[robots] = 0.0
            m.linear[robots] = 0.0
            m.angular[robots] = 0.0
            idle = C.Commands.idle(self.n_robots)
            for name in ("kind", "target", "progress", "linear", "angular", "stopping"):
                getattr(self._commands, name)[robots] = getattr(idle, name)
            rows = slice(k * self._stride, (k + 1) * self._stride)
            self.explored_tick[rows] = -1
            self.ticks[k] = 0
            self.collided[k] = False
        self._sense()

    # ------------------------------------------------------------------------ observation
    @property
    def poses(self) -> np.ndarray:
        """True poses (E, N, 3): x, y in world tiles of each environment's map, heading."""
        out = np.empty((self.n_envs, self.n_robots, 3))
        pos = self._motion.positions.reshape(self.n_envs, self.n_robots, 2)
        out[..., :2] = pos - self._block_offset[:, None, :] - self._offset
        out[..., 2] = self._motion.headings.reshape(self.n_envs, self.n_robots)
        return out

    @property
    def velocities(self) -> np.ndarray:
        """(linear tiles/s, angular rad/s) of every robot, shape (E, N, 2)."""
        v = np.stack([self._motion.linear, self._motion.angular], axis=1)
        return v.reshape(self.n_envs, self.n_robots, 2)

    def scans(self) -> np.ndarray:
        """Lidar ranges (E, N, R) in tiles; walls and the other robots' bodies stop rays."""
        if self._scan is None:
            ranges, hits = self._wall_scan
            if self.config.lidar.robots_block_rays and self.n_robots > 1:
                pos = self._motion.positions
                ranges, hits = stop_rays_at_bodies(
                    ranges, hits, pos, self._motion.headings, self.range, pos, self.radius
                )
            self._scan = ranges.reshape(self.n_envs, self.n_robots, -1)
        return self._scan

    def explored_counts(self) -> np.ndarray:
        """Reachable tiles explored in each environment, shape (E,)."""
        seen = (self.explored_tick >= 0) & self.reachable
        return seen.reshape(self.n_envs, self._stride, -1).sum(axis=(1, 2))

    def exploration_percent(self) -> np.ndarray:
        """Explored share of each environment's reachable area, 0..100, shape (E,)."""
        return 100.0 * self.explored_counts() / np.maximum(self.reachable_counts, 1)
