"""IR-SIM's side of ``bench/bench_irsim.py``: run the wander scenario in IR-SIM and time it.

Runs under the IR-SIM venv (``make bench-irsim`` makes it; never the project's venv), so it
imports nothing of MAES-ROS but the controller of ``bench/bench_wander.py``. Reads the scenario
that ``bench_irsim.py`` wrote (walls and spawn poses), builds the same world in IR-SIM (1 m
cells, a disc robot of the core's radius per pose, a 180-beam 360-degree lidar of 10 m, 0.1 s
steps), drives every robot with the same wander controller from its own scan, and prints one
JSON line: wall and CPU seconds per step over ``--ticks`` steps after a warm-up.

Usage (normally called by ``bench_irsim.py``)::

    .venv-irsim/bin/python bench/irsim_driver.py scenario.npz --ticks 500
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_wander import LIDAR_RANGE, N_BEAMS, TICK_S, wander  # noqa: E402


def world_yaml(walls_png: Path, side: int, poses: np.ndarray, radius: float) -> str:
    """IR-SIM's world file of the scenario (JSON is valid YAML)."""
    robot = {
        "number": len(poses),
        "distribution": {"name": "manual"},
        "kinematics": {"name": "diff"},
        "shape": {"name": "circle", "radius": radius},
        "state": [[float(x), float(y), float(t)] for x, y, t in poses],
        "vel_max": [3.0, 3.2],
        "sensors": [
            {
                "name": "lidar2d",
                "range_min": 0.0,
                "range_max": LIDAR_RANGE,
                "angle_range": 2 * np.pi * (N_BEAMS - 1) / N_BEAMS,  # 180 beams 2 degrees apart
                "number": N_BEAMS,
                "noise": False,
            }
        ],
    }
    world = {
        "height": side,
        "width": side,
        "step_time": TICK_S,
        "sample_time": TICK_S,
        "obstacle_map": str(walls_png),
        "collision_mode": "stop",
    }
    return json.dumps({"world": world, "robot": [robot]})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", help=".npz with walls (H, W) bool, poses (N, 3), radius")
    parser.add_argument("--ticks", type=int, default=500)
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")

    import irsim
    import matplotlib.image as mpimg

    data = np.load(args.scenario)
    walls, poses, radius = data["walls"], data["poses"], float(data["radius"])
    side = walls.shape[1]
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "walls.png"
        # image rows run top to bottom; IR-SIM flips them back (dark = obstacle)
        mpimg.imsave(png, np.where(walls[::-1], 0.0, 1.0), cmap="gray", vmin=0.0, vmax=1.0)
        world = Path(tmp) / "wander.yaml"
        world.write_text(world_yaml(png, side, poses, radius))
        env = irsim.make(str(world), display=False, disable_all_plot=True, log_level="ERROR")
    robots = env.robot_list
    scan = robots[0].get_lidar_scan()
    angles = scan["angle_min"] + np.arange(N_BEAMS) * scan["angle_increment"]

    def tick() -> None:
        ranges = np.array([r.get_lidar_scan()["ranges"] for r in robots], dtype=np.float64)
        linear, angular = wander(ranges.reshape(len(robots), -1), angles)
        env.step([np.array([[v], [w]]) for v, w in zip(linear, angular, strict=True)], 0)

    for _ in range(10):  # warm-up
        tick()
    start, cpu0 = time.perf_counter(), time.process_time()
    for _ in range(args.ticks):
        tick()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    print(
        json.dumps(
            {
                "robots": len(robots),
                "ticks": args.ticks,
                "wall": wall / args.ticks,
                "cpu": cpu / args.ticks,
                "irsim": irsim.__version__,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
