"""Benchmark of the maes_sim node with many environment tags nearby: ticks per second.

Issue 17, item 8: every ``maes_state`` carries the tags within ``environment_tag_read_range``
of its robot, so thousands of 1 KB tags deposited in one spot made every tick slow for good.
This deposits N tags of ``--bytes`` bytes where one robot stands (5 per tick, the simulator's
limit, over as many ticks as needed), then runs the node unpaced (free-running) with a
subscriber on that robot's ``maes_state`` in the same executor, and prints ticks per second,
the tags one state carried, and the size of that state. Run it in the pip environment::

    scripts/with_env python bench/bench_tags.py                     # 0, 100, 1000, 3655 tags
    scripts/with_env python bench/bench_tags.py --tags 3655 --seconds 5
"""

from __future__ import annotations

import argparse
import os
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tags", type=int, nargs="+", default=[0, 100, 1000, 3655])
    parser.add_argument("--bytes", type=int, default=1000, help="text size of one tag")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per case")
    parser.add_argument("--robots", type=int, default=2)
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from maes_common.qos import STATE_QOS
    from maes_interfaces.msg import State
    from maes_sim.core import SimConfig, Simulation
    from maes_sim.core.config_schema import MapConfig
    from maes_sim.ros.sim_node import SimNode

    print(f"{'tags':>6} {'in state':>8} {'state KB':>9} {'ticks/s':>8}", flush=True)
    for n_tags in args.tags:
        cfg = SimConfig(
            number_of_robots=args.robots, map=MapConfig(width_in_tiles=30, height_in_tiles=30)
        )
        sim = Simulation(cfg)
        text = "x" * args.bytes
        while len(sim.tags) < n_tags:  # robots stand still: every tag lands where robot0 is
            for _ in range(min(5, n_tags - len(sim.tags))):
                sim.deposit_tag(0, text)
            sim.step()
        ctx = Context()
        rclpy.init(context=ctx)
        node = SimNode(sim, real_time_factor=0.0, sync="free", context=ctx, start_paused=True)
        reader = Node("bench_tags_reader", context=ctx)
        got = {"n": 0, "tags": 0}

        def on_state(msg, got=got):
            got["n"] += 1
            got["tags"] = len(msg.tags_nearby)

        reader.create_subscription(State, "/robot0/maes_state", on_state, STATE_QOS)
        ex = SingleThreadedExecutor(context=ctx)
        ex.add_node(node)
        ex.add_node(reader)
        deadline = time.monotonic() + 10
        while reader.count_publishers("/robot0/maes_state") == 0 and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.05)
        node.step_once()
        node.paused = False
        t0, k0 = time.perf_counter(), sim.tick
        while time.perf_counter() - t0 < args.seconds:
            ex.spin_once(timeout_sec=0.0)
        ticks = sim.tick - k0
        wall = time.perf_counter() - t0
        size_kb = got["tags"] * (args.bytes + 60) / 1024  # text + position, sender, tick
        print(f"{n_tags:>6} {got['tags']:>8} {size_kb:>9.0f} {ticks / wall:8.1f}", flush=True)
        ex.shutdown()
        reader.destroy_node()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
