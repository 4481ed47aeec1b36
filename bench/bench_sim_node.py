"""Benchmark of the maes_sim node alone: achieved real-time factor with every topic published.

Runs the node unpaced (as fast as possible) for each robot count on the default building map
and prints ticks per second and the real-time factor (sim s per wall s at 100 ms ticks).
Run it in the pip environment::

    scripts/with_env python bench/bench_sim_node.py            # 5, 30, 120 robots
    scripts/with_env python bench/bench_sim_node.py --robots 5 --seconds 5
"""

from __future__ import annotations

import argparse
import os
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[5, 30, 120])
    parser.add_argument("--seconds", type=float, default=8.0, help="wall time per case")
    parser.add_argument("--size", type=int, default=50, help="building map side, tiles")
    parser.add_argument(
        "--layouts",
        nargs="+",
        default=["spawn", "spread"],
        help="spawn: all robots in one cluster (each senses dozens of others, "
        "the worst case); spread: robots scattered over the open area, "
        "as during exploration",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

    import numpy as np
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from maes_sim.core import SimConfig, Simulation
    from maes_sim.core.config_schema import MapConfig
    from maes_sim.core.world import spawn_positions
    from maes_sim.ros.sim_node import SimNode

    print(
        f"{'robots':>6} {'layout':>7} {'ticks/s':>8} {'RTF':>7} {'core ms':>8} {'ROS ms':>7}",
        flush=True,
    )
    for n, layout in [(n, lay) for n in args.robots for lay in args.layouts]:
        cfg = SimConfig(
            number_of_robots=n, map=MapConfig(width_in_tiles=args.size, height_in_tiles=args.size)
        )
        sim = Simulation(cfg)
        if layout == "spread":
            # every open tile is a candidate; shuffle and keep the first n that fit
            free = np.argwhere(~sim.walls)[:, ::-1] + 0.5
            free = free[np.random.default_rng(1).permutation(len(free))]
            keep = [free[0]]
            for p in free[1:]:
                if len(keep) == n:
                    break
                if np.min(np.hypot(*(np.asarray(keep) - p).T)) > 2.5:
                    keep.append(p)
            if len(keep) < n:
                keep = spawn_positions(sim.world, n, sim.radius, np.random.default_rng(1))
            xy = np.asarray(keep) - np.array([sim.shape[1], sim.shape[0]]) / 2
            sim.place_robots(np.column_stack([xy, np.zeros(n)]))
        ctx = Context()
        rclpy.init(context=ctx)
        node = SimNode(sim, real_time_factor=0.0, context=ctx, start_paused=True)
        ex = SingleThreadedExecutor(context=ctx)
        ex.add_node(node)
        rng = np.random.default_rng(0)
        core_time = [0.0]
        step = sim.step

        def timed_step(step=step, core_time=core_time):
            t = time.perf_counter()
            step()
            core_time[0] += time.perf_counter() - t

        sim.step = timed_step
        for _ in range(3):
            node.step_once()
        node.paused = False
        t0, k0 = time.perf_counter(), sim.tick
        core_time[0] = 0.0
        while time.perf_counter() - t0 < args.seconds:
            if sim.tick % 10 == 0:
                sim.set_velocities(rng.uniform(-3, 3, n), rng.uniform(-1, 1, n))
            ex.spin_once(timeout_sec=0.0)
        ticks = sim.tick - k0
        wall = time.perf_counter() - t0
        per_tick = wall / max(ticks, 1)
        core = core_time[0] / max(ticks, 1)
        print(
            f"{n:>6} {layout:>7} {ticks / wall:8.1f} {sim.tick_duration / per_tick:6.2f}x "
            f"{core * 1e3:8.2f} {(per_tick - core) * 1e3:7.2f}",
            flush=True,
        )
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
