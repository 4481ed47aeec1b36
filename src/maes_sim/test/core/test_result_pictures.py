"""The result pictures of a real run: written, sized, cropped to the map, coloured over the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from maes_sim.core import (
    Simulation,
    config_from_dict,
    crop_box,
    distinct_colours,
    robot_colours,
    write_run_results,
)
from maes_sim.core.figures import recency_rgb

plt = pytest.importorskip("matplotlib.pyplot")


#: Real Nav2 maps shipped with the project (configs/maps/README.md).
MAPS = Path(__file__).resolve().parents[4] / "configs" / "maps"


def _driven(sim: Simulation, ticks: int) -> Simulation:
    turn = np.linspace(-0.4, 0.4, sim.n_robots)
    for _ in range(ticks):
        sim.set_velocities(np.full(sim.n_robots, 1.0), turn)
        sim.step()
    return sim


def test_a_nav2_map_run_is_pictured_cropped_to_the_map(tmp_path):
    cfg = config_from_dict(
        {
            "number_of_robots": 3,
            "map": {"custom_map_filename": str(MAPS / "tb3_sandbox.yaml")},
            "world": {"tile_size": 0.25},
            "robot_spawn_config": {"biggest_room": True},
            "end_criteria": {"exploration_percent": 99.0, "tick": 500},
        }
    )
    sim = _driven(Simulation(cfg), 60)
    out = write_run_results(sim, tmp_path, folder="run")
    h, w = sim.shape
    x0, x1, y0, y1 = crop_box(~sim.walls)
    # tb3_sandbox is a small room in a large unknown square: the picture shows the room
    assert (x1 - x0) * (y1 - y0) < 0.25 * h * w
    open_y, open_x = np.nonzero(~sim.walls)
    assert (
        x0 < open_x.min() and open_x.max() < x1 - 1 and y0 < open_y.min() and open_y.max() < y1 - 1
    )
    for name in ("exploration.png", "coverage.png", "progress.png"):
        img = plt.imread(out / name)
        assert img.ndim == 3 and img.shape[1] >= 700, name  # a readable size
    assert plt.imread(out / "exploration.png").shape[1] == 900  # 9 in at 100 dpi
    assert plt.imread(out / "progress.png").shape[1] == 750


def test_pictures_show_every_robot_colour_where_it_drove(tmp_path):
    sim = _driven(Simulation(config_from_dict({"number_of_robots": 4})), 50)
    out = write_run_results(sim, tmp_path, folder="run")
    img = (plt.imread(out / "coverage.png")[..., :3] * 255).round().astype(int)
    for i, colour in enumerate((robot_colours(4) * 255).round().astype(int)):
        hits = (np.abs(img - colour).max(axis=2) <= 3).sum()
        assert hits > 30, f"robot{i}'s colour {colour} is missing from coverage.png"


def test_recency_spans_the_colour_map_over_the_runs_length():
    cmap = plt.get_cmap("viridis")
    last = np.array([[-1, 0, 25, 50]])
    walls = np.array([[False, False, False, False]])
    rgb = recency_rgb(last, walls, end_tick=50, cmap=cmap)
    np.testing.assert_allclose(rgb[0, 1], cmap(0.0)[:3])
    np.testing.assert_allclose(rgb[0, 2], cmap(0.5)[:3])
    np.testing.assert_allclose(rgb[0, 3], cmap(1.0)[:3])
    assert not np.allclose(rgb[0, 0], rgb[0, 1])  # never explored differs from long ago


@pytest.mark.parametrize("n", [1, 3, 10, 11, 12, 20, 64])
def test_colours_never_repeat(n):
    colours = distinct_colours(n)
    assert colours.shape == (n, 3) and ((colours >= 0) & (colours <= 1)).all()
    gaps = np.abs(colours[:, None] - colours[None]).max(axis=2) + np.eye(n)
    assert gaps.min() > 0.02


def test_the_docstring_examples_hold():
    import doctest

    from maes_sim.core import figures

    result = doctest.testmod(figures)
    assert result.attempted > 0 and result.failed == 0


def test_first_seen_is_the_order_of_discovery_and_is_pictured(tmp_path):
    """``first_explored_tick`` equals the tick each tile's exploration began, watched tick by
    tick; ``exploration_first_seen.png`` pictures it next to the last-seen one."""
    sim = Simulation(config_from_dict({"number_of_robots": 3, "random_seeds": [5]}))
    watched = sim.metrics.explored_tick.copy()  # what the robots saw where they start
    turn = np.linspace(-0.4, 0.4, sim.n_robots)
    for _ in range(80):
        sim.set_velocities(np.full(sim.n_robots, 1.0), turn)
        sim.step()
        new = (sim.metrics.explored_tick >= 0) & (watched < 0)
        watched[new] = sim.metrics.explored_tick[new]
    first, last = sim.metrics.first_explored_tick, sim.metrics.explored_tick
    np.testing.assert_array_equal(first, watched)
    assert ((first >= 0) == (last >= 0)).all() and (first <= last).all()
    assert (first < last).any()  # tiles seen again later: the two pictures differ
    out = write_run_results(sim, tmp_path, folder="run")
    img = plt.imread(out / "exploration_first_seen.png")
    assert img.shape[1] == 900
    assert not np.array_equal(img, plt.imread(out / "exploration.png"))


def test_results_pictures_false_writes_every_other_file_and_never_imports_matplotlib(tmp_path):
    """``results.pictures: false``: the same files but the PNGs, and matplotlib (half a short
    run's CPU) is not even imported; checked in a fresh interpreter."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import os, sys
        from maes_sim.core import Simulation, config_from_dict, write_run_results
        for pictures in (False, True):
            cfg = config_from_dict({{
                "number_of_robots": 2,
                "map": {{"width_in_tiles": 20, "height_in_tiles": 20}},
                "global_settings": {{"should_write_csv_results": True}},
                "results": {{"pictures": pictures}},
            }})
            sim = Simulation(cfg)
            for _ in range(3):
                sim.step()
            out = write_run_results(sim, {str(tmp_path)!r}, folder=f"pictures_{{pictures}}")
            print(pictures, "matplotlib" in sys.modules, sorted(os.listdir(out)))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    without, with_ = done.stdout.strip().splitlines()
    common = "'ground_truth.pgm', 'ground_truth.yaml', 'robot0_slam.pgm', 'robot0_slam.yaml'"
    assert without == (
        f"False False [{common}, 'robot1_slam.pgm', 'robot1_slam.yaml', 'statistics.csv', "
        "'summary.json']"
    )
    assert with_.startswith("True True [") and "'exploration.png'" in with_
    assert "'progress.png'" in with_ and "'coverage.png'" in with_
