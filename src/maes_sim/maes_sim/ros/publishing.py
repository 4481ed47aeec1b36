"""Publishing a simulation's ticks: the publishers of the robot-facing interface (topics and
QoS, docs/ros_interface.md) and which of :mod:`maes_sim.ros.messages`'s messages go out each
tick, to whoever takes them.

:class:`TickPublishers` gets its publishers from a function with ``Node.create_publisher``'s
arguments: the simulator node's own (DDS, and its tap when there is one), or a tap's outlets
alone (:meth:`maes_sim.ros.tap.Tap.outlet`). The second is how direct mode records a run and
serves the live view without a node (:class:`maes_sim.ros.outputs.TapOutputs`): the same
messages, by the same code, as the simulator node publishes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from nav_msgs.msg import OccupancyGrid, Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from maes_common.contract import RECORDING_RADII_KEY, TICK_TOPIC, robot_namespace
from maes_common.publishers import subscription_counter
from maes_common.qos import (
    DEFAULT_QOS,
    LATCHED_QOS,
    LOCKSTEP_WRITER_QOS,
    SCAN_PUB_QOS,
    STATE_QOS,
    TF_QOS,
)
from maes_interfaces.msg import State, Stats, Tick
from maes_sim.core import Simulation

from .messages import MessageFactory
from .tap import Tap

__all__ = ["RobotPublishers", "TickPublishers", "prepare_tap"]

#: ``make(msg_type, topic, qos)`` -> a publisher (``publish``, ``get_subscription_count``).
MakePublisher = Callable[[type, str, Any], Any]


class RobotPublishers:
    """The publishers of one robot namespace ``robot<i>``."""

    def __init__(self, make: MakePublisher, i: int, slam_map: bool) -> None:
        ns = "/" + robot_namespace(i)
        self.scan = make(LaserScan, f"{ns}/scan", SCAN_PUB_QOS)
        self.odom = make(Odometry, f"{ns}/odom", DEFAULT_QOS)
        self.tf = make(TFMessage, f"{ns}/tf", TF_QOS)
        self.tf_static = make(TFMessage, f"{ns}/tf_static", LATCHED_QOS)
        self.state = make(State, f"{ns}/maes_state", STATE_QOS)
        self.map = make(OccupancyGrid, f"{ns}/map", LATCHED_QOS) if slam_map else None
        #: A SLAM map not published for want of a reader (see TickPublishers.publish_tick).
        self.map_owed = False
        #: The subscription counts of tf, odom, scan and maes_state, asked every tick.
        self.readers = tuple(
            subscription_counter(p) for p in (self.tf, self.odom, self.scan, self.state)
        )


class TickPublishers:
    """A simulation's publishers and what each tick publishes on them.

    Each robot's ``tf``, ``odom``, ``scan`` and ``maes_state``, the global ``/tf`` and the
    markers go out as the bytes a DDS writer sends, written without message objects (rclpy's
    publishers and the tap take bytes as they are; :class:`MessageFactory`).

    Parameters
    ----------
    factory : MessageFactory
        Builds the messages (of its simulation).
    make : callable
        ``make(msg_type, topic, qos)`` -> a publisher, e.g. ``node.create_publisher`` or
        ``tap.outlet``.
    maps_every_slam_tick : bool
        Publish the robots' maps on every SLAM tick (lockstep's navigator waits for them);
        False: only while someone takes them, and the newest at once to a reader that comes
        between two SLAM ticks (transient local: later readers get it from the middleware).
    heatmap_period_ticks : int
        Ticks between exploration and coverage refreshes.
    """

    def __init__(
        self,
        factory: MessageFactory,
        make: MakePublisher,
        *,
        maps_every_slam_tick: bool = True,
        heatmap_period_ticks: int = 10,
    ) -> None:
        self.factory = factory
        self.maps_every_slam_tick = bool(maps_every_slam_tick)
        self.heatmap_period_ticks = max(1, int(heatmap_period_ticks))
        sim = factory.sim
        self.clock_pub = make(Clock, "/clock", DEFAULT_QOS)
        self.tf_pub = make(TFMessage, "/tf", TF_QOS)
        self.truth_pub = make(OccupancyGrid, "/maes/ground_truth", LATCHED_QOS)
        self.explore_pub = make(OccupancyGrid, "/maes/exploration", LATCHED_QOS)
        self.cover_pub = make(OccupancyGrid, "/maes/coverage", LATCHED_QOS)
        self.marker_pub = make(MarkerArray, "/maes/markers", DEFAULT_QOS)
        # the moving obstacles alone, every tick (recordings and replays read them from here)
        self.obstacle_pub = (
            make(MarkerArray, "/maes/obstacles", DEFAULT_QOS) if sim.obstacles is not None else None
        )
        self.stats_pub = make(Stats, "/maes/stats", DEFAULT_QOS)
        self.tick_pub = make(Tick, TICK_TOPIC, LOCKSTEP_WRITER_QOS)
        self.robots = [
            RobotPublishers(make, i, factory.publish_slam_map) for i in range(sim.n_robots)
        ]
        #: The last tick's outputs held the robots' maps (the manifest says so).
        self.maps_published = True

    def publish_static(self) -> None:
        """Every robot's ``tf_static`` (once)."""
        msg = self.factory.static_tf(self.factory.stamp())
        for robot in self.robots:
            robot.tf_static.publish(msg)

    def publish_tick(self, force_maps: bool = False, real_time_factor: float = 0.0) -> None:
        """The current tick's outputs (all but the manifest); ``force_maps``: the maps and the
        ground truth too, as at the start; ``real_time_factor``: the achieved speed, for
        ``/maes/stats``."""
        factory = self.factory
        sim = factory.sim
        frame = factory.frame(force_maps)
        stamp = frame.stamp
        self.clock_pub.publish(factory.clock(stamp))
        self.maps_published = frame.slam_update
        # A robot's topic is built and published only while someone takes it (a DDS reader, a
        # recording, the live view), looked at every tick: a reader that comes late gets the
        # stream from then on. Maps are the exception: published on every SLAM tick, kept for
        # late readers (transient local), and waited for by lockstep's navigator.
        for i, robot in enumerate(self.robots):
            tf_readers, odom_readers, scan_readers, state_readers = robot.readers
            if tf_readers():
                robot.tf.publish(factory.robot_tf(frame, i))
            if odom_readers():
                robot.odom.publish(factory.odom(frame, i))
            if scan_readers():
                robot.scan.publish(factory.scan(frame, i))
            if state_readers():
                robot.state.publish(factory.state(frame, i))
            if robot.map is not None and (frame.slam_update or robot.map_owed):
                if self.maps_every_slam_tick or robot.map.get_subscription_count():
                    robot.map.publish(factory.slam_map(frame, i))
                    robot.map_owed = False
                else:
                    robot.map_owed = True
        if self.tf_pub.get_subscription_count():
            self.tf_pub.publish(factory.global_tf(frame))
        if force_maps:
            self.truth_pub.publish(factory.ground_truth(stamp))
        # The inspection topics are for people: build them only when someone listens.
        if force_maps or (
            sim.tick % self.heatmap_period_ticks == 0
            and (
                self.explore_pub.get_subscription_count() or self.cover_pub.get_subscription_count()
            )
        ):
            self.explore_pub.publish(factory.exploration(stamp))
            self.cover_pub.publish(factory.coverage(stamp))
        if self.marker_pub.get_subscription_count():
            self.marker_pub.publish(factory.markers(frame))
        if self.obstacle_pub is not None and self.obstacle_pub.get_subscription_count():
            self.obstacle_pub.publish(factory.obstacles(stamp))
        self.publish_stats(real_time_factor)

    def publish_stats(self, real_time_factor: float = 0.0) -> None:
        """``/maes/stats`` now."""
        self.stats_pub.publish(self.factory.stats(real_time_factor))

    def publish_manifest(self, **fields) -> None:
        """``/maes/tick`` (after the tick's outputs): :meth:`MessageFactory.manifest`'s
        fields but ``maps_published``, which the last :meth:`publish_tick` says."""
        self.tick_pub.publish(self.factory.manifest(maps_published=self.maps_published, **fields))


def prepare_tap(tap: Tap, sim: Simulation) -> None:
    """Stamp ``tap``'s messages with ``sim``'s time and note the robots' sizes (for replays of
    the recording: robot types)."""
    tap.clock_ns = lambda: int(round(sim.sim_time * 1e9))  # as time_to_msg
    radii_m = (np.asarray(sim.team.radii) * sim.config.world.tile_size).tolist()
    tap.describe(RECORDING_RADII_KEY, json.dumps(radii_m))
