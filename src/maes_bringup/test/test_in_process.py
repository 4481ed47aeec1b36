"""``maes_run`` with the built-in controllers in its own process (issue 35).

The robots' controllers and navigators run in the simulator's process, handed their data
in-process; the simulator node publishes a robot's topics only while someone outside takes
them. Tried as a user would: ``maes_run`` as a subprocess, and a plain rclpy node that joins the
run late (RViz, a recorder, one's own node): from its first message on it gets every tick's
``tf`` and ``scan``, the robot's ``map`` at once (transient local), the navigator's ``plan`` and
``global_costmap/costmap``; a ``cmd_vel`` it sends is applied with a warning (the built-in
controller drives that robot). Inside one process, a simulator node that nobody listens to builds
no scan, tf, odom or state message at all.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

REPO = Path(__file__).resolve().parents[3]
MAES_RUN = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
CONFIG = """\
number_of_robots: 2
random_seeds: [1]
map: {width_in_tiles: 30, height_in_tiles: 30}
results: {pictures: false}  # no result pictures: this test does not look at them
end_criteria: {exploration_percent: null, tick: null}
"""
#: Bound for anything that should take seconds; only a hung process gets near it.
BOUND_S = 40.0


def _wait(predicate, what: str, proc: subprocess.Popen, err: list[str]) -> None:
    deadline = time.monotonic() + BOUND_S
    while not predicate():
        assert proc.poll() is None, f"maes_run ended: {''.join(err)[-3000:]}"
        assert time.monotonic() < deadline, f"no {what} in {BOUND_S:g} s: {''.join(err)[-3000:]}"
        time.sleep(0.05)


def test_a_late_outside_subscriber_gets_every_tick_from_then_on(tmp_path):
    import rclpy
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import OccupancyGrid
    from nav_msgs.msg import Path as NavPath
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import LaserScan
    from tf2_msgs.msg import TFMessage

    from maes_common.qos import LATCHED_QOS, SCAN_READER_QOS, TF_QOS

    cfg = tmp_path / "run.yaml"
    cfg.write_text(CONFIG)
    proc = subprocess.Popen(
        [str(MAES_RUN), "--config", str(cfg), "--real-time-factor", "1"]
        + ["--results", str(tmp_path / "results")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(iter(proc.stderr.readline, "")))
    reader.start()
    ctx = Context()
    rclpy.init(context=ctx)
    heard: dict[str, list] = {"tf": [], "scan": [], "map": [], "plan": [], "costmap": []}
    try:
        # late: the run is well under way before anyone outside listens
        _wait(
            lambda: any(re.search(r"tick\s+(\d\d+) \|", line) for line in err), "ticks", proc, err
        )
        node = rclpy.create_node("late_listener", context=ctx)
        executor = SingleThreadedExecutor(context=ctx)
        executor.add_node(node)

        def stamp(msg) -> int:  # sim time in ticks of 0.1 s
            return round((msg.sec + msg.nanosec * 1e-9) * 10)

        def hear(msg_type, topic, key, qos, value=lambda m: m):
            node.create_subscription(msg_type, topic, lambda m: heard[key].append(value(m)), qos)

        hear(TFMessage, "/robot0/tf", "tf", TF_QOS, lambda m: stamp(m.transforms[0].header.stamp))
        hear(LaserScan, "/robot0/scan", "scan", SCAN_READER_QOS, lambda m: stamp(m.header.stamp))
        hear(OccupancyGrid, "/robot0/map", "map", LATCHED_QOS)
        hear(NavPath, "/robot0/plan", "plan", LATCHED_QOS)
        hear(OccupancyGrid, "/robot0/global_costmap/costmap", "costmap", LATCHED_QOS)

        def spin_until(predicate, what):
            deadline = time.monotonic() + BOUND_S
            while not predicate():
                assert proc.poll() is None, f"maes_run ended: {''.join(err)[-3000:]}"
                assert time.monotonic() < deadline, (
                    f"no {what}: { {k: len(v) for k, v in heard.items()} }"
                )
                executor.spin_once(timeout_sec=0.05)

        spin_until(lambda: len(heard["tf"]) >= 30 and len(heard["scan"]) >= 30, "30 ticks")
        spin_until(
            lambda: heard["map"] and heard["costmap"] and heard["plan"], "map, costmap, plan"
        )
        # one's own node drives robot1 too: told once that the built-in controller drives it
        teleop = node.create_publisher(Twist, "/robot1/cmd_vel", 10)
        told = "robot1/cmd_vel: a command from another node, applied, but the built-in"
        deadline = time.monotonic() + BOUND_S
        while not any(told in line for line in err):
            assert time.monotonic() < deadline, f"no warning: {''.join(err)[-3000:]}"
            teleop.publish(Twist())
            executor.spin_once(timeout_sec=0.1)
        for _ in range(5):
            teleop.publish(Twist())
            executor.spin_once(timeout_sec=0.1)
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=BOUND_S)
        finally:
            if proc.poll() is None:
                proc.kill()
            reader.join(timeout=5)
    assert proc.returncode == 0, "".join(err)[-3000:]
    assert sum(told in line for line in err) == 1, "".join(err)[-3000:]  # once per robot
    first_tick = min(int(m.group(1)) for line in err if (m := re.search(r"tick\s+(\d+) \|", line)))
    for topic in ("tf", "scan"):
        ticks = heard[topic]
        # from its first message on, every tick, in order, none twice
        assert ticks == list(range(ticks[0], ticks[0] + len(ticks))), (topic, ticks[:40])
        assert ticks[0] > first_tick, (topic, ticks[0], first_tick)  # it did join late
    grid = heard["map"][-1]
    assert (grid.info.width, grid.info.height) == (30, 30)
    costmap = heard["costmap"][-1]
    assert (costmap.info.width, costmap.info.height) == (30, 30)
    assert costmap.header.frame_id == "map" and grid.header.frame_id == "map"
    assert len(heard["plan"][-1].poses) >= 2 and heard["plan"][-1].header.frame_id == "map"


def test_nothing_is_built_for_topics_nobody_takes():
    """A simulator node stepped in-process (as maes_run's built-in controllers step it): with
    no reader, no scan, tf, odom or maes_state is published; a reader in the same process then
    gets them from the next tick."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import LaserScan

    from maes_bringup.runners.in_process import TeamDriver, robot_logger
    from maes_bringup.runners.team import RobotTeam
    from maes_common.contract import DEFAULT_LOGIC
    from maes_common.qos import SCAN_READER_QOS
    from maes_controller.robot_api import load_logic
    from maes_sim.core import Simulation, config_from_dict
    from maes_sim.ros.sim_node import SimNode

    ctx = Context()
    rclpy.init(context=ctx)
    try:
        sim = Simulation(
            config_from_dict(
                {"number_of_robots": 2, "map": {"width_in_tiles": 20, "height_in_tiles": 20}}
            ),
            seed=0,
        )
        node = SimNode(sim, steps_itself=False, context=ctx)
        published: dict[str, int] = {}
        for i, robot in enumerate(node.robots):
            for name in ("scan", "tf", "odom", "state"):
                pub = getattr(robot, name)
                key = f"robot{i}/{name}"
                published[key] = 0

                def counted(msg, pub=pub, key=key, real=pub.publish):
                    published[key] += 1
                    real(msg)

                pub.publish = counted
        executor = SingleThreadedExecutor(context=ctx)
        executor.add_node(node)
        team = RobotTeam.start(sim, [load_logic(DEFAULT_LOGIC)] * 2, logger=robot_logger)
        driver = TeamDriver(node, team, executor, real_time_factor=0.0)
        driver.start()
        for _ in range(10):
            driver.step()
        assert sum(published.values()) == 0, published
        # a reader appears: from the tick after it is matched, robot1's scan goes out
        listener = rclpy.create_node("listener", context=ctx)
        got = []
        listener.create_subscription(LaserScan, "/robot1/scan", got.append, SCAN_READER_QOS)
        executor.add_node(listener)
        deadline = time.monotonic() + BOUND_S
        while node.robots[1].scan.get_subscription_count() == 0:
            assert time.monotonic() < deadline, "the reader was never matched"
            executor.spin_once(timeout_sec=0.05)
        for _ in range(5):
            driver.step()
            executor.spin_once(timeout_sec=0.0)
        assert published["robot1/scan"] == 5, published
        assert published["robot0/scan"] == published["robot1/tf"] == 0, published
        deadline = time.monotonic() + BOUND_S
        while len(got) < 5:
            assert time.monotonic() < deadline, f"{len(got)} of 5 scans arrived"
            executor.spin_once(timeout_sec=0.05)
        executor.shutdown()
        listener.destroy_node()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
