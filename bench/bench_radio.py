"""Benchmark of the radio models: per-tick cost with every model on, paired with the default.

N robots on a 75x75 cave (``configs/cave_75.yaml``, SLAM merged every 10 ticks, broadcasts
blocked by walls) drive in circles and each broadcasts one message per tick (a worst case:
shipped algorithms send far fewer). The same run is timed with the default radio (``range``) and
with a lossy, late, budgeted one (a mixed team: Bernoulli, Gilbert-Elliott and distance loss,
latency 2, a budget of 1 message per tick), alternating, several rounds; prints the median
ms per tick of each and their ratio.

``--all-models`` turns the rest of the imperfect world on as well in the second run (every
type: lidar range noise and dropouts, odometry and heading drift, a SLAM pose error; five random
walkers), paired with everything off. ``--send-every K`` has each robot broadcast on every K-th
tick only (1, the default, is the worst case; 5 is about SPACE-CBBA's rate, 25 the frontier
explorer's).

``--over-ros`` steps each run through the simulator node (``SimNode.step_once``: the tick, then
every robot's ``scan``, ``odom``, ``tf``, ``maes_state`` and the rest published, as
``maes_sim_node`` does at 120 robots), so the figures are the node's whole tick; without it,
the bare core's ``Simulation.step``. ``--read-scans`` reads every robot's scan after each step
in the core (``Simulation.lidar_of``, as direct mode's controllers and the learning environments
do): the robots' bodies, the obstacles and the noise are applied only to a scan that is read.

Usage::

    python bench/bench_radio.py                  # 10 and 120 robots, 200 ticks, 3 rounds
    python bench/bench_radio.py --robots 120 --ticks 400 --rounds 5
    python bench/bench_radio.py --robots 120 --all-models --send-every 5
    scripts/with_env python bench/bench_radio.py --robots 120 --all-models --send-every 5 --over-ros
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for pkg in ("maes_common", "maes_sim", "maes_controller", "maes_bringup"):
    sys.path.insert(0, str(ROOT / "src" / pkg))


#: What --all-models adds to every robot type (the noisy row of experiments/imperfect_world.yaml).
NOISE = {
    "lidar": {"range_noise_std": 0.05, "dropout_probability": 0.05},
    "motion": {"odometry_noise": 0.05, "heading_noise": 0.05},
    "slam_position_inaccuracy": 0.5,
}
WALKERS = [{"random_walkers": 5, "radius": 0.5, "speed": 0.5}]


def _config(robots: int, radio_on: bool, all_models: bool = False):
    from maes_sim.core import config_from_dict, config_to_dict, load_config

    data = config_to_dict(load_config(ROOT / "configs" / "cave_75.yaml"))
    data["number_of_robots"] = robots
    data["robot_spawn_config"] = {"biggest_room": True}
    data["end_criteria"] = {"tick": None, "exploration_percent": None, "coverage_percent": None}
    # the same team of three types either way: only the radio differs
    third = robots // 3
    data["team"] = [
        {"type": "default", "count": robots - 2 * third},
        {"type": "bursty", "count": third},
        {"type": "near", "count": third},
    ]
    data["robot_types"] = {"bursty": {}, "near": {}}
    if radio_on:
        data["communication"] = {
            "model": "bernoulli",
            "loss_probability": 0.3,
            "latency_ticks": 2,
            "max_messages_per_tick": 1,
        }
        data["robot_types"] = {
            "bursty": {
                "communication": {
                    "model": "gilbert_elliott",
                    "good_to_bad_probability": 0.05,
                    "bad_to_good_probability": 0.2,
                }
            },
            "near": {"communication": {"model": "distance", "loss_probability": 0.05}},
        }
        if all_models:
            data["robot_types"] = {
                name: {**NOISE, **t} for name, t in {"default": {}, **data["robot_types"]}.items()
            }
            data["obstacles"] = WALKERS
    return config_from_dict(data)


def _ms_per_tick(
    robots: int,
    ticks: int,
    radio_on: bool,
    all_models: bool = False,
    every: int = 1,
    over_ros: bool = False,
    read_scans: bool = False,
) -> float:
    import numpy as np

    from maes_sim.core import Simulation

    sim = Simulation(_config(robots, radio_on, all_models), seed=0)
    turn = np.linspace(-0.5, 0.5, robots)
    sim.set_velocities(np.full(robots, 1.0), turn)
    step, stop = sim.step, None
    if over_ros:
        import rclpy
        from rclpy.context import Context

        from maes_sim.ros.sim_node import SimNode

        ctx = Context()
        rclpy.init(context=ctx)
        node = SimNode(sim, real_time_factor=0.0, context=ctx, start_paused=True)
        step = node.step_once

        def stop():
            node.destroy_node()
            rclpy.shutdown(context=ctx)

    start = time.process_time()  # every thread of the process: DDS's too
    for t in range(ticks):
        for i in range(robots):
            if (t + i) % every == 0:  # staggered: the same load every tick
                sim.broadcast(i, f"{i}:{t}")
        step()
        if read_scans:
            for i in range(robots):
                sim.lidar_of(i)
    ms = (time.process_time() - start) * 1000.0 / ticks
    if stop is not None:
        stop()
    return ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[10, 120])
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--all-models", action="store_true", help="noise and walkers too")
    parser.add_argument("--send-every", type=int, default=1, metavar="K")
    parser.add_argument("--over-ros", action="store_true", help="time the simulator node's tick")
    parser.add_argument("--read-scans", action="store_true", help="read every scan (core)")
    args = parser.parse_args(argv)
    if min(args.robots) < 3:
        parser.error("--robots: at least 3 per case (the team has one robot of each of 3 types)")
    if args.send_every < 1:
        parser.error("--send-every must be >= 1")
    if args.over_ros:
        import os

        os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    _ms_per_tick(4, 5, True, args.all_models, over_ros=args.over_ros)  # compile, warm up
    what = "radio, noise and walkers" if args.all_models else "radio models"
    where = "the simulator node's tick (published)" if args.over_ros else "the core's step"
    if args.read_scans and not args.over_ros:
        where += ", every scan read"
    print(f"each robot broadcasts every {args.send_every} tick(s); {where}")
    print(f"second column: {what} on")
    print("robots | everything off ms/tick | on ms/tick | ratio (CPU time, median)")
    for robots in args.robots:
        off, on = [], []
        for _ in range(args.rounds):  # alternate, so a load change hits both alike
            case = (args.send_every, args.over_ros, args.read_scans)
            off.append(_ms_per_tick(robots, args.ticks, False, False, *case))
            on.append(_ms_per_tick(robots, args.ticks, True, args.all_models, *case))
        a, b = statistics.median(off), statistics.median(on)
        print(f"{robots} | {a:.2f} | {b:.2f} | {b / a:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
