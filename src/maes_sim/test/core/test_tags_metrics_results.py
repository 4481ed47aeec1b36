import numpy as np
import pytest

from maes_sim.core.explore_bench import EXPLORE_BENCH_COLUMNS
from maes_sim.core.metrics import SNAPSHOT_COLUMNS, Metrics, snapshot_row
from maes_sim.core.results import heatmap_rgb, write_csv, write_occupancy_map, write_png
from maes_sim.core.slam import SlamState, to_occupancy
from maes_sim.core.tags import MAX_TAGS_PER_TICK, TagStore
from maes_sim.core.world import load_map_yaml


def test_tags_in_range_in_deposit_order_and_rate_limited():
    store = TagStore(2)
    for k, x in enumerate([1.0, 3.0, 10.0]):
        assert store.deposit(0, f"t{k}", np.array([x, 1.0]), np.array([x - 5, -4.0]), 7) is None
    near = store.nearby(np.array([[2.0, 1.0], [20.0, 20.0]]), 1.0)
    assert [t.msg for t in near[0]] == ["t0", "t1"]
    assert near[1] == []
    assert (near[0][1].pos.x, near[0][1].pos.y) == (-2.0, -4.0) and near[0][1].tick == 7
    for _ in range(MAX_TAGS_PER_TICK - 3):
        store.deposit(0, "x", np.zeros(2), np.zeros(2), 7)
    assert "already deposited" in store.deposit(0, "x", np.zeros(2), np.zeros(2), 7)
    store.new_tick()
    assert store.deposit(0, "x", np.zeros(2), np.zeros(2), 8) is None


def test_a_tag_stays_where_it_was_left_when_the_robot_drives_on():
    # the simulator advances its robots' positions in place: the store keeps its own copy
    from maes_sim.core import Simulation, config_from_dict

    sim = Simulation(config_from_dict({"number_of_robots": 1, "random_seeds": [2]}))
    sim.deposit_tag(0, "here")
    left_at = sim.tags.grid_positions.copy()
    sim.set_velocity(0, 1.0, 0.0)
    for _ in range(20):
        sim.step()
    assert not np.array_equal(sim.grid_positions, left_at)  # the robot did move
    assert np.array_equal(sim.tags.grid_positions, left_at)


def test_a_limit_keeps_the_nearest_tags_in_deposit_order_for_each_robot():
    store = TagStore(1)
    xs = [5.0, 1.0, 4.0, 2.0, 1.0, 3.0]  # deposit order; distances from x = 0 are the xs
    for k, x in enumerate(xs):
        store.new_tick()
        store.deposit(0, f"t{k}", np.array([x, 0.0]), np.array([x, 0.0]), k)
    robots = np.array([[0.0, 0.0], [100.0, 0.0]])
    unlimited = store.nearby(robots, 10.0)
    assert [t.msg for t in unlimited[0]] == [f"t{k}" for k in range(6)] and unlimited[1] == []
    near = store.nearby(robots, 10.0, limit=3)
    assert [t.msg for t in near[0]] == ["t1", "t3", "t4"]  # x = 1, 2, 1: nearest, deposit order
    assert near[1] == []
    assert [t.msg for t in store.nearby(robots, 10.0, limit=6)[0]] == [t.msg for t in unlimited[0]]


def test_a_robot_state_carries_at_most_max_tags_per_state():
    from maes_sim.core import Simulation, config_from_dict

    sim = Simulation(
        config_from_dict(
            {
                "number_of_robots": 1,
                "map": {"width_in_tiles": 20, "height_in_tiles": 20},
                "stack": {"max_tags_per_state": 7},
            }
        )
    )
    while len(sim.tags) < 20:
        for _ in range(MAX_TAGS_PER_TICK):
            sim.deposit_tag(0, "x" * 1000)
        sim.step()
    assert len(sim.robot_state(0).tags_nearby) == 7


def test_coverage_marks_the_footprint_and_percentages_use_reachable_tiles():
    reachable = np.ones((10, 10), dtype=bool)
    reachable[:, 5:] = False  # half the map is unreachable: never counts
    m = Metrics(reachable, 1)
    m.mark_covered(np.array([[2.5, 2.5]]), 0.3, tick=4)
    m.refresh_counts()
    assert np.argwhere(m.covered_tick == 4).tolist() == [[2, 2]]
    assert m.centre_coverage_percent == pytest.approx(100 / 50)
    assert m.coverage_percent == pytest.approx(100 * 9 / 200)  # MAES: 3 x 3 of 200 mini-tiles
    m.mark_covered(np.array([[3.0, 3.0]]), 0.75, tick=5)  # corner: four tile centres in reach
    assert sorted(map(tuple, np.argwhere(m.covered_tick == 5).tolist())) == [
        (2, 2),
        (2, 3),
        (3, 2),
        (3, 3),
    ]
    m.explored_tick[:, :] = 1
    m.refresh_counts()
    assert m.exploration_percent == pytest.approx(100.0)
    row = snapshot_row(m, 5, 0.5, 1, 2, 3)
    # Simulation.stats appends the Explore-Bench columns (they need every robot's seen map)
    assert tuple(row) + EXPLORE_BENCH_COLUMNS == SNAPSHOT_COLUMNS
    assert row["reachable_tiles"] == 50


def test_maes_coverage_hand_computed_beside_a_wall_and_the_map_edge():
    # 4 x 6 tiles; tile column ix = 2 is wall (not reachable), columns 3.. unreachable too.
    reachable = np.zeros((4, 6), dtype=bool)
    reachable[:, :2] = True
    m = Metrics(reachable, 2)
    # robot 0 at (1.9, 0.2): mini-tile (3, 0); its 3 x 3 is mini x 2..4, y -1..1; x = 4 lies in
    # the wall tile and y = -1 off the map, so mini-tiles (2, 0), (3, 0), (2, 1), (3, 1) count.
    # robot 1 at (0.25, 3.75): mini-tile (0, 7); x -1..1, y 6..8 -> (0..1, 6..7): 4 more.
    m.mark_covered(np.array([[1.9, 0.2], [0.25, 3.75]]), 0.3, tick=2)
    m.refresh_counts()
    covered = {(int(x), int(y)) for y, x in np.argwhere(m.mini_covered_tick == 2)}
    assert covered == {(2, 0), (3, 0), (2, 1), (3, 1), (0, 6), (1, 6), (0, 7), (1, 7)}
    assert m.mini_covered_count == 8
    assert m.coverage_percent == pytest.approx(100 * 8 / 32)  # 8 reachable tiles = 32 minis
    row = snapshot_row(m, 2, 0.2, 0, 0, 0)
    assert row["covered_tiles"] == 2.0 and row["covered_minitiles"] == 8
    assert row["coverage_percent"] == pytest.approx(100 * row["covered_tiles"] / 8)
    # the centre definition: tiles (1, 0) and (0, 3) only
    assert row["centre_covered_tiles"] == 2 and row["centre_coverage_percent"] == 25.0
    # the heatmap is per tile: a tile is as recent as its latest mini-tile
    heat = m.heatmap("coverage", 2, 10)
    assert heat[0, 1] == 1.0 and heat[3, 0] == 1.0 and heat[1, 1] == -1.0


def test_maes_coverage_is_about_one_and_a_half_times_the_centre_tiles_on_a_straight_path():
    m = Metrics(np.ones((9, 40), dtype=bool), 1)
    for k, x in enumerate(np.arange(1.0, 39.0, 0.3)):
        m.mark_covered(np.array([[x, 4.5]]), 0.3, tick=k)
    m.refresh_counts()
    ratio = m.coverage_percent / m.centre_coverage_percent
    assert 1.45 < ratio < 1.55, ratio


def test_occupancy_map_round_trips_through_the_nav2_loader(tmp_path):
    slam = SlamState(1, (6, 8), 0.0)
    slam.maps[0, 1:5, 1:7] = 1
    slam.maps[0, 0, :] = 2
    occ = to_occupancy(slam.maps[0])
    pgm, yml = write_occupancy_map(tmp_path / "robot0_map", occ, 1.0, (-4.0, -3.0))
    assert pgm.read_bytes().startswith(b"P5")
    loaded = load_map_yaml(yml, tile_size=1.0)
    # unknown counts as wall on import, so the open tiles are exactly the OPEN ones
    np.testing.assert_array_equal(~loaded.walls, slam.maps[0] == 1)


def test_csv_and_png_are_well_formed(tmp_path):
    p = write_csv(tmp_path / "stats.csv", [{"a": 1, "b": 2.5}, {"a": 2, "b": 3.5}], ["a", "b"])
    assert p.read_text().splitlines() == ["a,b", "1,2.5", "2,3.5"]
    heat = np.array([[-1.0, 0.0], [0.5, 1.0]], dtype=np.float32)
    rgb = heatmap_rgb(heat, np.array([[True, False], [False, False]]), scale=3)
    assert rgb.shape == (6, 6, 3)
    # image row 0 = map row 1 (the top): col 1 is hot (1.0) -> red; bottom-left is a wall
    assert tuple(rgb[0, 3]) == (220, 40, 30)
    assert tuple(rgb[5, 0]) == (60, 60, 60)
    png = write_png(tmp_path / "h.png", rgb)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    with pytest.raises(ValueError, match="uint8"):
        write_png(tmp_path / "bad.png", rgb.astype(float))


def test_run_results_folder_holds_every_file_and_maps_match_the_run(tmp_path):
    import json

    from maes_sim.core import SimConfig, Simulation
    from maes_sim.core.config_schema import GlobalSettings
    from maes_sim.core.results import write_run_results

    sim = Simulation(
        SimConfig(number_of_robots=2, global_settings=GlobalSettings(should_write_csv_results=True))
    )
    for _ in range(12):
        sim.set_velocity(0, 2.0, 0.0)
        sim.step()
    out = write_run_results(sim, tmp_path, folder="run")
    names = sorted(p.name for p in out.iterdir())
    for expected in (
        "statistics.csv",
        "summary.json",
        "ground_truth.pgm",
        "ground_truth.yaml",
        "robot0_slam.pgm",
        "robot1_slam.yaml",
        "exploration.png",
        "coverage.png",
    ):
        assert expected in names
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ticks"] == 12 and summary["config"]["number_of_robots"] == 2
    rows = (out / "statistics.csv").read_text().splitlines()
    assert rows[-1].startswith("12,")  # the final state is always the last row
    truth = load_map_yaml(out / "ground_truth.yaml", tile_size=1.0)
    np.testing.assert_array_equal(truth.walls, sim.walls)


def _driven_run(tile_size: float, csv: bool):
    from maes_sim.core import SimConfig, Simulation
    from maes_sim.core.config_schema import GlobalSettings, WorldConfig

    sim = Simulation(
        SimConfig(
            number_of_robots=2,
            world=WorldConfig(tile_size=tile_size),
            global_settings=GlobalSettings(should_write_csv_results=csv),
        )
    )
    for _ in range(15):
        sim.set_velocity(0, 2.0, 0.0)
        sim.set_velocity(1, 1.0, 0.0)
        sim.step()
    return sim


def test_results_distances_are_metres_everywhere_and_named_so(tmp_path):
    import csv
    import json

    from maes_sim.core import write_run_results

    sim = _driven_run(tile_size=0.5, csv=True)
    tiles = float(sim.metrics.distance.sum())
    assert tiles > 1.0  # the robots drove
    out = write_run_results(sim, tmp_path, folder="run")
    rows = list(csv.DictReader((out / "statistics.csv").open()))
    summary = json.loads((out / "summary.json").read_text())
    assert "distance_travelled" not in rows[-1]
    assert float(rows[-1]["distance_travelled_m"]) == pytest.approx(tiles * 0.5, abs=1e-5)
    assert summary["final"]["distance_travelled_m"] == pytest.approx(tiles * 0.5, abs=1e-5)
    assert sum(summary["distance_travelled_m"]) == pytest.approx(tiles * 0.5, abs=1e-5)


def test_should_write_csv_results_false_writes_no_csv(tmp_path):
    from maes_sim.core import write_run_results

    out = write_run_results(_driven_run(tile_size=1.0, csv=False), tmp_path, folder="run")
    names = {p.name for p in out.iterdir()}
    assert "summary.json" in names and "ground_truth.yaml" in names
    assert not [n for n in names if n.endswith(".csv")]
