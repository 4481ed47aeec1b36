"""One episode of the learning environments, on direct mode's machinery.

An :class:`Episode` is a simulation plus direct mode's per-robot objects
(:class:`~maes_bringup.runners.direct.DirectRobot`, its navigator, :class:`NavigatorPoses`):
an action is applied through the robot API a logic uses (``set_velocity``, ``nav_to_pos``),
then the tick runs as :func:`maes_bringup.runners.direct.run` runs it (navigation step,
simulation step, maps on the SLAM schedule, states). So the same actions give the same
trajectories as a direct-mode run whose logic replays them (a test holds it).
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.contract import map_origin, robot_namespace, wire_resolution
from maes_controller.navigation import Navigator, NavParams
from maes_sim.core import SimConfig, Simulation, state_to_metres

from ..runners.direct_robot import DirectRobot, NavigatorPoses, step_navigation
from ..runners.team import _RNG_SALT, shared_grids
from .options import DISCRETE_ACTIONS, EnvOptions

#: Unknown, open, wall: the values of a SLAM map crop (:mod:`maes_sim.core.slam`).
MAP_VALUES = 3


def agent_names(n: int) -> list[str]:
    """The agents' names: the robots' namespaces (``robot0``, ``robot1``, ...)."""
    return [robot_namespace(i) for i in range(n)]


class Episode:
    """A running episode: ``apply(actions)`` then ``step()``; observations and rewards.

    Parameters
    ----------
    config : SimConfig
    seed : int
        The simulation's seed (map and start).
    options : EnvOptions
    sim : Simulation, optional
        A simulation of this config and seed already at its first tick (a restored start).
    """

    def __init__(
        self, config: SimConfig, seed: int, options: EnvOptions, sim: Simulation | None = None
    ) -> None:
        self.options = options
        self.sim = sim = Simulation(config, seed=seed) if sim is None else sim
        self.tile = float(config.world.tile_size)
        h, w = sim.shape
        self._origin = map_origin(w, h, self.tile)
        params = [NavParams.from_config(config, robot=i) for i in range(sim.n_robots)]
        self.robots = [
            DirectRobot(
                sim,
                i,
                Navigator(params[i], rank=i),
                np.random.default_rng([sim.seed, i, _RNG_SALT]),
            )
            for i in range(sim.n_robots)
        ]
        self.nav_poses = NavigatorPoses(sim)
        n = sim.n_robots
        self._senders = {robot_namespace(j): j for j in range(n)}
        self._heard = np.zeros((n, n, 2))  # latest broadcast position (m) of j heard by i
        self._heard_tick = np.full((n, n), -1, dtype=np.int64)
        self._explored = sim.metrics.explored_count
        self._own = self._own_counts()
        self.start_tick = sim.tick
        self._prepare()

    # -------------------------------------------------------------------------- stepping
    def _prepare(self) -> None:
        """What direct mode does at the top of a tick, before the logic runs."""
        sim = self.sim
        if sim.slam_published_at(sim.tick):
            grids = shared_grids(sim.slam_maps, wire_resolution(self.tile), self._origin)
            for robot, grid in zip(self.robots, grids, strict=True):
                robot.receive_map(grid)
        self.nav_poses.observe(sim)
        for i, (robot, state) in enumerate(zip(self.robots, sim.robot_states(), strict=True)):
            robot.observe(state_to_metres(state, self.tile), self.nav_poses.believed(i))
            for message in state.incoming_broadcast_msgs:
                self._hear(i, message.sender, message.msg)

    def _hear(self, i: int, sender: str, text: str) -> None:
        j = self._senders.get(sender)
        words = text.split()
        if j is None or len(words) != 3 or words[0] != "pose":
            return  # not one of the env's position broadcasts
        try:
            xy = float(words[1]), float(words[2])
        except ValueError:
            return
        self._heard[i, j] = xy
        self._heard_tick[i, j] = self.sim.tick

    def apply(self, index: int, action: np.ndarray | int) -> None:
        """Hand robot ``index``'s action to the robot API, as a logic would."""
        robot, o = self.robots[index], self.options
        p = self.sim.team.types[index]  # its own type's top speeds (robot types)
        if o.actions == "discrete":
            lin, ang = DISCRETE_ACTIONS[int(action)]
            robot.set_velocity(lin * p.max_speed * self.tile, ang * p.max_angular_speed)
            return
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        if o.actions == "velocity":
            robot.set_velocity(
                float(a[0]) * p.max_speed * self.tile, float(a[1]) * p.max_angular_speed
            )
        elif robot.is_nav_complete():  # a goal in progress keeps going
            x, y = robot.robot_position
            robot.nav_to_pos(x + float(a[0]) * o.goal_range, y + float(a[1]) * o.goal_range)

    def step(self) -> None:
        """The rest of the tick: navigation, the simulation step, the next tick's inputs."""
        sim = self.sim
        every = self.options.broadcast_every
        if every and sim.tick % every == 0:
            for robot in self.robots:  # as a logic would, before the navigation step
                x, y = robot.robot_position
                robot.broadcast_msg(f"pose {x:.3f} {y:.3f}")
        step_navigation(sim, self.robots, self.nav_poses, self.tile)
        sim.step()
        if not sim.finished:
            self._prepare()

    # -------------------------------------------------------------------------- rewards
    def _own_counts(self) -> np.ndarray | None:
        if self.options.own_reward == 0:
            return None
        seen = self.sim.explore_bench.seen
        return np.count_nonzero(seen.reshape(seen.shape[0], -1), axis=1)

    def rewards(self) -> np.ndarray:
        """Each robot's reward for the tick just stepped (see :class:`EnvOptions`)."""
        o, sim = self.options, self.sim
        area = self.tile * self.tile
        explored = sim.metrics.explored_count
        reward = np.full(sim.n_robots, o.team_reward * (explored - self._explored) * area)
        self._explored = explored
        own = self._own_counts()
        if own is not None:
            reward += o.own_reward * (own - self._own) * area
            self._own = own
        reward -= o.collision_penalty * sim.collided
        reward -= o.time_penalty
        return reward

    @property
    def terminated(self) -> bool:
        """The config's end criteria are met."""
        return self.sim.finished

    @property
    def truncated(self) -> bool:
        """The tick limit of the options is reached (and the run did not end by itself)."""
        return not self.sim.finished and self.sim.tick - self.start_tick >= self.options.max_ticks

    # -------------------------------------------------------------------------- observations
    def observe(self) -> list[dict[str, np.ndarray]]:
        """Every robot's observation parts (see :class:`EnvOptions`)."""
        o, sim, tile = self.options, self.sim, self.tile
        n = sim.n_robots
        parts: dict[str, np.ndarray] = {}
        if "scan" in o.observations:
            # per robot: a robot type has its own ray count (robot_types' lidar.rays)
            parts["scan"] = [(sim.lidar_of(i)[0] * tile).astype(np.float32) for i in range(n)]
        est = sim.estimated_poses
        if "pose" in o.observations:
            pose = np.empty((n, 5), dtype=np.float32)
            pose[:, :2] = est[:, :2] * tile
            pose[:, 2] = np.arctan2(np.sin(est[:, 2]), np.cos(est[:, 2]))
            vel = sim.velocities
            pose[:, 3] = vel[:, 0] * tile
            pose[:, 4] = vel[:, 1]
            parts["pose"] = pose
        if "map" in o.observations:
            parts["map"] = self._crops(est)
        if "nearby" in o.observations:
            parts["nearby"] = self._nearby()
        if "broadcasts" in o.observations:
            parts["broadcasts"] = self._broadcasts(est[:, :2] * tile)
        return [{k: v[i] for k, v in parts.items()} for i in range(n)]

    def _crops(self, est: np.ndarray) -> np.ndarray:
        sim, size = self.sim, self.options.map_size
        h, w = sim.shape
        out = np.zeros((sim.n_robots, size, size), dtype=np.uint8)
        half = size // 2
        maps = sim.slam_maps
        cells = np.floor(est[:, :2] + np.array([w / 2.0, h / 2.0])).astype(np.int64)
        for i, (cx, cy) in enumerate(cells.tolist()):
            x0, y0 = cx - half, cy - half
            xs, ys = max(x0, 0), max(y0, 0)
            xe, ye = min(x0 + size, w), min(y0 + size, h)
            if xs < xe and ys < ye:
                out[i, ys - y0 : ye - y0, xs - x0 : xe - x0] = maps[i, ys:ye, xs:xe]
        return out

    def _nearby(self) -> np.ndarray:
        sim, k = self.sim, self.options.max_nearby
        out = np.zeros((sim.n_robots, k, 3), dtype=np.float32)
        if k == 0:
            return out
        observer, observed = sim.nearby_pairs()
        xy = sim.poses[:, :2] * self.tile
        for i in range(sim.n_robots):
            others = observed[observer == i]
            if not others.size:
                continue
            d = xy[others] - xy[i]
            order = np.argsort(np.hypot(d[:, 0], d[:, 1]), kind="stable")[:k]
            out[i, : order.size, :2] = d[order]
            out[i, : order.size, 2] = 1.0
        return out

    def _broadcasts(self, own_xy: np.ndarray) -> np.ndarray:
        n = self.sim.n_robots
        out = np.zeros((n, n, 4), dtype=np.float32)
        heard = self._heard_tick >= 0
        rel = self._heard - own_xy[:, None, :]
        age = np.minimum(self.sim.tick - self._heard_tick, self.options.max_ticks)
        out[..., :2] = np.where(heard[..., None], rel, 0.0)
        out[..., 2] = np.where(heard, age, 0)
        out[..., 3] = heard
        return out

    def bounds(self, robot: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Low and high bounds of every observation part of robot ``robot`` (its type's
        ray count, lidar range, speeds and sensing range)."""
        o, sim, tile = self.options, self.sim, self.tile
        h, w = sim.shape
        kind = sim.team.types[robot]
        rays = sim.lidar_geometry(robot)[0]
        rng_m = kind.lidar_range * tile
        extent = (max(h, w) / 2.0 + kind.slam_position_inaccuracy + 1) * tile
        vmax = kind.max_speed * tile * 2
        wmax = kind.max_angular_speed * 2
        sense = kind.sense_nearby_agents_range * tile
        out = {
            "scan": (np.zeros(rays), np.full(rays, rng_m)),
            "pose": (
                np.array([-extent, -extent, -math.pi, -vmax, -wmax]),
                np.array([extent, extent, math.pi, vmax, wmax]),
            ),
            "map": (np.zeros((o.map_size, o.map_size)), np.full((o.map_size, o.map_size), 2)),
            "nearby": (
                np.tile([-sense, -sense, 0.0], (o.max_nearby, 1)),
                np.tile([sense, sense, 1.0], (o.max_nearby, 1)),
            ),
            "broadcasts": (
                np.tile([-2 * extent, -2 * extent, 0.0, 0.0], (sim.n_robots, 1)),
                np.tile([2 * extent, 2 * extent, o.max_ticks, 1.0], (sim.n_robots, 1)),
            ),
        }
        return {k: v for k, v in out.items() if k in o.observations}
