"""The ROS messages of a :class:`~maes_sim.core.Simulation`'s ticks, built without a node.

:class:`MessageFactory` turns the simulation's arrays into the messages of the robot-facing
interface (docs/ros_interface.md): per robot ``scan``, ``odom``, ``tf``, ``tf_static``,
``maes_state`` and ``map``; globally ``/clock``, ``/tf``, the ground truth, the exploration
and coverage grids, the markers, ``/maes/stats`` and the manifest ``/maes/tick``. It publishes
nothing and needs no rclpy node or context: the simulator node publishes what it builds, and
direct mode's recording and live view hand it to a tap (:mod:`maes_sim.ros.publishing`).

Each message is built only when asked for (a topic nobody takes costs nothing), from one
:class:`TickFrame` a tick: the pose algebra and the observation, done once for every robot.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from builtin_interfaces.msg import Time
from nav_msgs.msg import OccupancyGrid
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from maes_common.contract import (
    BASE_FRAME,
    BASE_LINK_FRAME,
    MAP_FRAME,
    ODOM_FRAME,
    SCAN_FRAME,
    WORLD_FRAME,
    map_origin,
    robot_namespace,
    wire_scan_ranges,
)
from maes_common.frames import tick_transforms
from maes_common.pose import quaternion_from_yaw
from maes_interfaces.msg import Stats, Tick
from maes_sim.core import SIMULATOR_SLAM_MODES, Simulation
from maes_sim.core.slam import to_occupancy

from . import conversions as cv
from .markers import obstacle_markers_wire, simulation_markers_wire
from .wire import WireTemplate

__all__ = ["SCAN_HEIGHT", "MessageFactory", "TickFrame"]

#: Height of the lidar above the footprint, metres (display only: the world is 2-D).
SCAN_HEIGHT = 0.1
MAP, ODOM, BASE, BASE_LINK, SCAN = (MAP_FRAME, ODOM_FRAME, BASE_FRAME, BASE_LINK_FRAME, SCAN_FRAME)


@dataclass
class TickFrame:
    """What every message of one tick is built from (see :meth:`MessageFactory.frame`)."""

    #: The tick's stamp (sim time).
    stamp: Time
    #: True poses (tiles, radians), shape (N, 3).
    poses: np.ndarray
    #: A SLAM update (or forced maps): the robots' ``map`` goes out this tick.
    slam_update: bool
    #: odom -> base_footprint, map -> odom and world -> odom per robot (metres, radians).
    odom_rel: np.ndarray
    map_to_odom: np.ndarray
    world_to_odom: np.ndarray
    #: The tick's observation, in metres (``Simulation.observation``).
    observation: object
    #: This tick's NearbyRobot messages or bytes, shared by the robots' states.
    robot_msgs: dict[int, object] = field(default_factory=dict)


class MessageFactory:
    """Builds the messages of ``sim``'s ticks (see the module's docstring).

    The per-robot ``tf``, ``odom`` and ``scan``, the global ``/tf``, ``maes_state`` (with
    ``wire``) and the markers come as the bytes a DDS writer sends: the first four keep their
    shape for the run, so each is compiled once (:class:`~maes_sim.ros.wire.WireTemplate`) and
    a tick fills in its stamp, poses and ranges; building and serializing nested rosidl
    messages cost more than publishing them. The other messages are message objects.

    Parameters
    ----------
    sim : Simulation
    publish_slam_map : bool or None
        The robots' SLAM ``map`` and map -> odom are part of the interface (default: when the
        config's ``stack.slam`` is one the simulator maps: "simulated" or "occupancy").
    """

    def __init__(self, sim: Simulation, publish_slam_map: bool | None = None) -> None:
        self.sim = sim
        self.tile = sim.config.world.tile_size
        self.publish_slam_map = (
            sim.config.stack.slam in SIMULATOR_SLAM_MODES
            if publish_slam_map is None
            else bool(publish_slam_map)
        )
        h, w = sim.shape
        #: Where the world and map frames' grids start (metres): the map's centre is (0, 0).
        self.origin_m = map_origin(w, h, self.tile)
        # Every robot's odom frame starts at the world origin (REP-105 allows any fixed origin):
        # MAES 2.0 controllers read their position from odom -> base_footprint and expect map
        # coordinates, which this gives exactly when odometry is noise-free.
        self.start_odom = np.zeros((sim.n_robots, 3))
        self._tag_wire: dict[int, tuple] = {}  # id(tag in metres) -> (the tag, its bytes)
        # tf, odom, scan and /tf keep their shape for the run: each is compiled once into a
        # template whose stamp, poses and ranges every tick fills (maes_sim.ros.wire)
        zero = cv.time_to_msg(0.0)
        frames = [(ODOM, BASE)] + ([(MAP, ODOM)] if self.publish_slam_map else [])
        self._tf_wire = _transforms_template(frames, zero)
        self._odom_wire = WireTemplate(
            cv.odometry_to_msg((0.0, 0.0, 0.0), 0.0, 0.0, zero), _ODOM_SLOTS
        )
        self._scan_wire: list[WireTemplate] = []
        by_lidar: dict[tuple, WireTemplate] = {}  # robots with the same lidar share one
        for i in range(sim.n_robots):
            rays, fov = sim.lidar_geometry(i)  # the robot type's lidar
            lidar = (rays, fov, sim.team.types[i].lidar_range)
            if lidar not in by_lidar:
                scan = cv.scan_to_msg(
                    np.zeros(rays), zero, SCAN, self.tile, lidar[2], sim.tick_duration, fov=fov
                )
                by_lidar[lidar] = WireTemplate(scan, _SCAN_SLOTS)
            self._scan_wire.append(by_lidar[lidar])
        self._global_tf_wire = _transforms_template(
            [
                pair
                for i in range(sim.n_robots)
                for pair in (
                    (WORLD_FRAME, f"{robot_namespace(i)}/{ODOM}"),
                    (f"{robot_namespace(i)}/{ODOM}", f"{robot_namespace(i)}/{BASE}"),
                )
            ],
            zero,
        )

    # ------------------------------------------------------------------ once a tick
    def stamp(self) -> Time:
        """The current sim time as a message stamp."""
        return cv.time_to_msg(self.sim.sim_time)

    def frame(self, force_maps: bool = False) -> TickFrame:
        """The current tick's poses, transforms and observation (``force_maps``: the maps go
        out even without a SLAM update, as at the start)."""
        sim = self.sim
        stamp = self.stamp()
        poses = sim.poses
        est = sim.estimated_poses
        slam_update = force_maps or sim.slam_published_at(sim.tick)
        # All pose algebra vectorized over robots (metres, radians).
        odom_rel, map_to_odom, world_to_odom = tick_transforms(
            poses, est, sim.odometry_poses, self.start_odom, self.tile
        )
        return TickFrame(
            stamp=stamp,
            poses=poses,
            slam_update=bool(slam_update),
            odom_rel=odom_rel,
            map_to_odom=map_to_odom,
            world_to_odom=world_to_odom,
            observation=sim.observation(self.tile),
        )

    def clock(self, stamp: Time) -> Clock:
        """``/clock``."""
        return Clock(clock=stamp)

    def static_tf(self, stamp: Time) -> TFMessage:
        """Every robot's ``tf_static``: base_footprint -> base_link -> base_scan."""
        msg = TFMessage(
            transforms=[
                cv.transform_to_msg((0.0, 0.0, 0.0), BASE, BASE_LINK, stamp),
                cv.transform_to_msg((0.0, 0.0, 0.0), BASE_LINK, SCAN, stamp),
            ]
        )
        msg.transforms[1].transform.translation.z = SCAN_HEIGHT
        return msg

    # ------------------------------------------------------------------ per robot
    def robot_tf(self, frame: TickFrame, i: int) -> bytes:
        """Robot ``i``'s ``tf`` (bytes of a ``TFMessage``): odom -> base_footprint (and map ->
        odom with the SLAM map)."""
        stamp = frame.stamp
        poses = (frame.odom_rel[i], frame.map_to_odom[i])[: 2 if self.publish_slam_map else 1]
        return self._tf_wire.pack(*_transform_values(poses, stamp.sec, stamp.nanosec))

    def odom(self, frame: TickFrame, i: int) -> bytes:
        """Robot ``i``'s ``odom`` (bytes of an ``Odometry``)."""
        x, y, yaw = frame.odom_rel[i].tolist()
        z, w = quaternion_from_yaw(yaw)
        linear, angular = frame.observation.velocities[i, :2].tolist()
        stamp = frame.stamp
        return self._odom_wire.pack(stamp.sec, stamp.nanosec, x, y, z, w, linear, angular)

    def scan(self, frame: TickFrame, i: int) -> bytes:
        """Robot ``i``'s ``scan`` (bytes of a ``LaserScan``)."""
        ranges = wire_scan_ranges(*self.sim.lidar_of(i), self.tile)
        data = ranges.astype("<f4", copy=False).tobytes()
        stamp = frame.stamp
        return self._scan_wire[i].pack(stamp.sec, stamp.nanosec, data)

    def state(self, frame: TickFrame, i: int) -> bytes:
        """Robot ``i``'s ``maes_state``, as the bytes a DDS writer sends (bytes of a ``State``:
        no message objects to build and serialize)."""
        return cv.state_to_wire(frame.observation.state(i), self._tag_wire, frame.robot_msgs)

    def slam_map(self, frame: TickFrame, i: int) -> OccupancyGrid:
        """Robot ``i``'s SLAM ``map``."""
        return cv.occupancy_to_msg(
            to_occupancy(self.sim.slam_maps[i]), frame.stamp, MAP, self.tile, self.origin_m
        )

    def map_grid(self, values: np.ndarray) -> OccupancyGrid:
        """An ``OccupancyGrid`` in ``map`` with the robots' maps' geometry, stamped now (sim
        time): for grids derived from a robot's map, e.g. the navigator's costmap."""
        return cv.occupancy_to_msg(values, self.stamp(), MAP, self.tile, self.origin_m)

    # ------------------------------------------------------------------ global
    def global_tf(self, frame: TickFrame) -> bytes:
        """``/tf`` (bytes of a ``TFMessage``): world -> robot<i>/odom -> robot<i>/base_footprint
        for every robot."""
        poses = np.stack([frame.world_to_odom, frame.odom_rel], axis=1).reshape(-1, 3)
        stamp = frame.stamp
        return self._global_tf_wire.pack(*_transform_values(poses, stamp.sec, stamp.nanosec))

    def ground_truth(self, stamp: Time) -> OccupancyGrid:
        """``/maes/ground_truth``: the walls, in ``world``."""
        occ = np.where(self.sim.walls, 100, 0).astype(np.int8)
        return cv.occupancy_to_msg(occ, stamp, WORLD_FRAME, self.tile, self.origin_m)

    def exploration(self, stamp: Time) -> OccupancyGrid:
        """``/maes/exploration``: the exploration heatmap, in ``world``."""
        return self._heatmap(self.sim.exploration_heatmap(), stamp)

    def coverage(self, stamp: Time) -> OccupancyGrid:
        """``/maes/coverage``: the coverage heatmap, in ``world``."""
        return self._heatmap(self.sim.coverage_heatmap(), stamp)

    def _heatmap(self, heat: np.ndarray, stamp: Time) -> OccupancyGrid:
        return cv.occupancy_to_msg(
            cv.heatmap_to_values(heat), stamp, WORLD_FRAME, self.tile, self.origin_m
        )

    def markers(self, frame: TickFrame) -> bytes:
        """``/maes/markers``: robots, tags, communication links and moving obstacles, as the
        bytes of a ``MarkerArray`` (:func:`~maes_sim.ros.markers.simulation_markers_wire`)."""
        sim, tile = self.sim, self.tile
        draw = sim.config.global_settings.draw_communication
        tags = (sim.tags.grid_positions - np.array([sim.shape[1], sim.shape[0]]) / 2.0) * tile
        if not sim.config.global_settings.show_environment_tags:
            tags = np.empty((0, 2))
        poses_m = frame.poses.copy()
        poses_m[:, :2] *= tile
        return simulation_markers_wire(
            poses_m,
            sim.team.radii * tile,
            sim.colliding,
            tags,
            sim.communication_links() if draw else None,
            frame.stamp,
            obstacles_m=None if sim.obstacles is None else sim.obstacles.in_metres(tile),
        )

    def obstacles(self, stamp: Time) -> bytes:
        """``/maes/obstacles``: the moving obstacles alone (a simulation that has some), as the
        bytes of a ``MarkerArray``."""
        return obstacle_markers_wire(self.sim.obstacles.in_metres(self.tile), stamp, WORLD_FRAME)

    def stats(self, real_time_factor: float = 0.0) -> Stats:
        """``/maes/stats`` now, with the achieved ``real_time_factor``."""
        sim = self.sim
        return cv.stats_to_msg(
            sim.stats(explore_bench=False),
            sim.sim_time,
            sim.metrics.distance,
            self.tile,
            real_time_factor,
            sim.finished,
            sim.mailbox.radio,
        )

    def manifest(
        self,
        *,
        tick: int,
        lockstep: bool,
        maps_published: bool,
        navigators: list[str],
        lockstep_robots: list[int],
        run_id: str,
        end_reason: str = "",
    ) -> Tick:
        """``/maes/tick``, the tick's manifest (docs/lockstep.md), stamped now.

        ``maps_published``: the robots' maps went out with the tick (counted only when the
        SLAM map is part of the interface).
        """
        return Tick(
            tick=int(tick),
            stamp=self.stamp(),
            lockstep=bool(lockstep),
            maps_published=bool(maps_published and self.publish_slam_map),
            navigators=list(navigators),
            lockstep_robots=list(lockstep_robots),
            run_id=run_id,
            end_reason=end_reason,
        )


#: The fields of a ``tf`` transform that change every tick.
_TRANSFORM_FIELDS = (
    "header.stamp.sec",
    "header.stamp.nanosec",
    "transform.translation.x",
    "transform.translation.y",
    "transform.rotation.z",
    "transform.rotation.w",
)
_ODOM_SLOTS = (
    "header.stamp.sec",
    "header.stamp.nanosec",
    "pose.pose.position.x",
    "pose.pose.position.y",
    "pose.pose.orientation.z",
    "pose.pose.orientation.w",
    "twist.twist.linear.x",
    "twist.twist.angular.z",
)
_SCAN_SLOTS = ("header.stamp.sec", "header.stamp.nanosec", "ranges")


def _transforms_template(pairs: list[tuple[str, str]], stamp: Time) -> WireTemplate:
    """A ``TFMessage`` of planar transforms ``parent -> child``, its poses and stamps filled
    per tick by :func:`_transform_values`."""
    msg = TFMessage(
        transforms=[cv.transform_to_msg((0.0, 0.0, 0.0), a, b, stamp) for a, b in pairs]
    )
    slots = [f"transforms[{k}].{name}" for k in range(len(pairs)) for name in _TRANSFORM_FIELDS]
    return WireTemplate(msg, slots)


def _transform_values(poses, sec: int, nanosec: int) -> list:
    """The slot values of :func:`_transforms_template` for ``poses`` (x, y metres, yaw)."""
    values: list = []
    for x, y, yaw in np.asarray(poses).tolist():
        z, w = quaternion_from_yaw(yaw)
        values += (sec, nanosec, x, y, z, w)
    return values
