"""``stack.slam: occupancy`` with every imperfect-world model on: ``make run`` (the embedded ROS
stack, lockstep) and direct mode give the same run to the bit, maps included.

The maps are built from the scans the robots publish (range noise, dropped rays, the walkers in
them) at their believed poses (odometry drift, SLAM error) and merged through a lossy radio; all
of it comes from the run's one generator, which both ways of running step alike.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

CONFIG = """\
number_of_robots: 3
random_seeds: [6]
map: {width_in_tiles: 20, height_in_tiles: 20}
end_criteria: {exploration_percent: 95, tick: 250}
global_settings: {ticks_per_stats_snapshot: 5, should_write_csv_results: true}
world: {tile_size: 0.3}  # not a float32: the map resolution takes the wire rounding
stack: {slam: occupancy}
robot_constraints: {distribute_slam: true, slam_sync_interval_in_ticks: 10}
robot_types:
  default:
    lidar: {range_noise_std: 0.02, dropout_probability: 0.05}
    motion: {odometry_noise: 0.05, heading_noise: 0.05}
    slam_position_inaccuracy: 0.3
communication: {model: bernoulli, loss_probability: 0.3, latency_ticks: 1}
obstacles:
  - {random_walkers: 2, radius: 0.15, speed: 0.3}
results: {pictures: false}  # no result pictures: this test does not look at them
"""


@pytest.mark.slow
def test_direct_mode_equals_make_run_with_occupancy_maps_and_every_noise_model(tmp_path, run_maes):
    (tmp_path / "c.yaml").write_text(CONFIG)
    # below the slow test's hard limit (240 s): fail with its output
    ros = run_maes(tmp_path, timeout=200)

    from maes_bringup.runners.direct import run

    result = run(str(tmp_path / "c.yaml"), "maes_controller.algorithms.frontier_explorer:logic")
    direct = result.write(tmp_path / "direct")
    sim = result.sim
    assert sim.slam.grids is not None and sim.obstacles is not None  # the models were on
    assert (direct / "statistics.csv").read_bytes() == (ros / "statistics.csv").read_bytes()
    for i in range(3):  # each robot's map as the run left it
        name = f"robot{i}_slam.pgm"
        assert (direct / name).read_bytes() == (ros / name).read_bytes(), name
    ros_summary = json.loads((ros / "summary.json").read_text())
    direct_summary = json.loads((direct / "summary.json").read_text())
    assert ros_summary["lockstep_deadline_misses"] == 0
    for key in ("ticks", "final", "distance_travelled_m", "collisions", "radio"):
        assert ros_summary[key] == direct_summary[key], key
    final = ros_summary["final"]
    assert final["map_exchanges_dropped"] > 0 and final["exploration_percent"] > 30, final
    # the noise reached the maps: some robot's map calls a wall free or open ground a wall
    truth = sim.walls
    assert any(((m == 1) & truth).any() or ((m == 2) & ~truth).any() for m in sim.slam_maps)
