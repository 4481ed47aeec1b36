"""Explore-Bench metrics (issue 15): time to 90 %, area per metre, overlap, per robot."""

import numpy as np
import pytest

from maes_sim.core import SimConfig, Simulation, WorldMap, write_run_results
from maes_sim.core.config_schema import CaveConfig, GlobalSettings, MapConfig
from maes_sim.core.explore_bench import EXPLORE_BENCH_COLUMNS, ExploreBench, overlap_of
from maes_sim.core.metrics import SNAPSHOT_COLUMNS


def corridor(h=5, w=30):
    walls = np.zeros((h, w), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    return WorldMap(walls=walls, name="corridor")


def config(n, **kw):
    return SimConfig(
        number_of_robots=n,
        map=MapConfig(width_in_tiles=30, height_in_tiles=30, cave_config=CaveConfig()),
        **kw,
    )


def place(sim, grid_xy):
    xy = np.asarray(grid_xy, dtype=float) - np.array([sim.shape[1], sim.shape[0]]) / 2
    sim.place_robots(np.column_stack([xy, np.zeros(len(xy))]))


def test_overlap_by_hand():
    reach = np.ones((1, 4), dtype=bool)
    one = np.array([[[1, 1, 0, 0]]], dtype=np.uint8)
    assert overlap_of(one, reach)[:2] == (0.0, 0.0)  # one robot: no overlap
    same = np.array([[[1, 2, 1, 0]]] * 3, dtype=np.uint8)  # 3 robots saw the same 3 tiles
    ov, share, per = overlap_of(same, reach)
    assert ov == pytest.approx(2.0) and share == 1.0 and per.tolist() == [3, 3, 3]
    # tiles that are not reachable never count: robot 1 saw only an unreachable tile
    reach2 = np.array([[True, True, False, True]])
    seen = np.array([[[1, 1, 0, 0]], [[0, 0, 1, 0]]], dtype=np.uint8)
    assert overlap_of(seen, reach2)[0] == 0.0
    assert overlap_of(np.zeros((2, 1, 4), np.uint8), reach) == (0.0, 0.0, pytest.approx([0, 0]))


def test_two_robots_at_both_ends_of_a_corridor():
    """Lidar range 5 tiles in a 28-tile corridor. Both robots spawn in the middle and see it
    together; moved to x = 3 and x = 26 they see stretches the other never saw."""
    from maes_sim.core.config_schema import RobotConstraints

    rc = RobotConstraints(slam_raytrace_range=5.0)
    sim = Simulation(config(2, robot_constraints=rc), world=corridor())
    place(sim, [(3.5, 2.5), (26.5, 2.5)])
    sim.step()
    row = sim.stats()
    seen = sim.explore_bench.seen != 0
    reach = sim.metrics.reachable
    assert seen[0][:, :9].any() and not seen[1][:, :9].any()  # only robot 0 was at the west end
    assert seen[1][:, 21:].any() and not seen[0][:, 21:].any()
    both = (seen[0] & seen[1] & reach).sum()
    union = ((seen[0] | seen[1]) & reach).sum()
    assert 0 < both < union  # the middle, seen from the spawn by both
    assert row["overlap_share"] == pytest.approx(both / union, abs=1e-6)
    assert row["overlap"] == pytest.approx(
        ((seen[0] & reach).sum() + (seen[1] & reach).sum()) / union - 1, abs=1e-6
    )
    # every explored reachable tile was seen by a robot, and only those
    explored = (sim.metrics.explored_tick >= 0) & sim.metrics.reachable
    union = (sim.explore_bench.seen != 0).any(axis=0) & sim.metrics.reachable
    assert np.array_equal(explored, union)
    assert row["explored_area_m2"] == explored.sum() * 1.0  # tile 1 m
    assert row["exploration_efficiency_m2_per_m"] is None  # nobody drove

    sim2 = Simulation(config(2, robot_constraints=rc), world=corridor())
    place(sim2, [(14.5, 2.5), (15.5, 2.5)])
    sim2.step()
    row2 = sim2.stats()
    per = (sim2.explore_bench.seen != 0).reshape(2, -1).sum(axis=1)
    assert row2["overlap_share"] > 0.8 and 0.8 < row2["overlap"] <= 1.0
    assert per[0] > 0 and per[1] > 0


def test_efficiency_time_to_90_and_summary(tmp_path):
    sim = Simulation(
        config(1, global_settings=GlobalSettings(should_write_csv_results=True)),
        world=corridor(),
    )
    place(sim, [(2.5, 2.5)])
    series = []
    for _ in range(200):
        sim.set_velocity(0, 1.0, 0.0)
        sim.step()
        series.append(sim.exploration_percent)
    first = next(i for i, p in enumerate(series, start=1) if p >= 90.0)
    assert sim.explore_bench.tick_to_90 == first
    row = sim.stats()
    metres = float(sim.metrics.distance.sum())
    assert metres > 5
    area = sim.metrics.explored_count
    assert row["exploration_efficiency_m2_per_m"] == pytest.approx(area / metres, abs=1e-6)
    assert row["overlap"] == 0.0
    assert set(EXPLORE_BENCH_COLUMNS) <= set(SNAPSHOT_COLUMNS)
    folder = write_run_results(sim, tmp_path)
    import csv
    import json

    summary = json.loads((folder / "summary.json").read_text())["exploration_metrics"]
    assert summary["ticks_to_90_percent"] == first
    assert summary["seconds_to_90_percent"] == pytest.approx(first * sim.tick_duration)
    assert summary["ticks_to_end"] is None  # no end criterion was met
    assert summary["seen_area_m2_per_robot"] == [float(area)]
    assert summary["exploration_efficiency_per_robot"][0] == pytest.approx(area / metres)
    with (folder / "statistics.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert float(rows[-1]["overlap"]) == 0.0
    assert float(rows[-1]["explored_area_m2"]) == area


def test_record_keeps_the_first_tick():
    bench = ExploreBench(1, (2, 2))
    for tick, p in [(1, 50.0), (2, 90.0), (3, 95.0)]:
        bench.record(tick, p)
    assert bench.tick_to_90 == 2


def test_doctests():
    import doctest

    from maes_common import contract
    from maes_sim.core import explore_bench

    for module in (explore_bench, contract):
        assert doctest.testmod(module).failed == 0, module.__name__
