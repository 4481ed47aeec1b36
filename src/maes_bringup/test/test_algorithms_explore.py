"""The shipped algorithms (issue 15) explore: a share of a small map within a tick limit, in
direct mode, by the spec users give (``maes_controller.algorithms.<name>:logic``); and the launch
stack hands the spec to every controller."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from maes_bringup.runners.direct import run
from maes_controller.algorithms.maes2_explorer import first_frontier, frontier_mask
from maes_controller.algorithms.random_walk import front_clearance
from maes_sim.core import config_from_dict


def _config(seed: int):
    return config_from_dict(
        {
            "number_of_robots": 2,
            "random_seeds": [seed],
            "map": {"width_in_tiles": 20, "height_in_tiles": 20},
            "end_criteria": {"tick": 600, "exploration_percent": 80},
        }
    )


@pytest.mark.parametrize(
    ("name", "least"),
    [("random_walk", 40.0), ("maes2_explorer", 80.0)],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_algorithm_explores_a_small_map(name, least, seed):
    result = run(_config(seed), f"maes_controller.algorithms.{name}:logic")
    start = float(result.exploration[0])
    final = float(result.exploration[-1])
    assert final >= least, (name, seed, final)
    assert final >= start + 20.0  # not what the robots saw standing still
    assert result.distance.min() > 1.0  # every robot drove


def test_random_walk_is_reproducible():
    a = run(_config(3), "maes_controller.algorithms.random_walk:logic", max_ticks=150)
    b = run(_config(3), "maes_controller.algorithms.random_walk:logic", max_ticks=150)
    assert np.array_equal(a.sim.poses, b.sim.poses)


def test_frontier_rule_of_maes2():
    # a cell is a frontier when known, below 65, with >= 2 unknown neighbours (of 8)
    values = np.array(
        [
            [0, 0, 0, -1],
            [0, 70, 0, -1],
            [0, 0, 0, 0],
        ]
    )
    mask = frontier_mask(values)
    assert mask.tolist() == [
        [False, False, True, False],
        [False, False, True, False],
        [False, False, False, False],
    ]
    assert first_frontier(values) == 2  # row 0 (the bottom row), x = 2
    assert first_frontier(np.zeros((3, 3), int)) is None


def test_front_clearance_watches_the_front_sector_only():
    angles = np.linspace(-np.pi, np.pi, 8, endpoint=False)
    ranges = np.full(8, np.inf)
    ranges[0] = 0.1  # right behind the robot
    assert front_clearance(ranges, angles, 0.6) == np.inf
    ranges[4] = 2.0  # straight ahead
    assert front_clearance(ranges, angles, 0.6) == 2.0


def test_launch_plan_gives_every_controller_the_logic(tmp_path):
    from maes_bringup.stack.launch_plan import plan_launch

    cfg = config_from_dict({"number_of_robots": 2})
    kwargs = {
        "config_path": "c.yaml",
        "params_dir": str(Path(__file__).resolve().parents[1] / "params"),
        "rviz_config": "maes.rviz",
        "out_dir": str(tmp_path),
        "slam": "simulated",
        "nav": "builtin",
    }
    spec = "maes_controller.algorithms.random_walk:logic"
    plan = plan_launch(cfg, logic=spec, **kwargs)
    for robot in plan.robots:
        (controller,) = [n for n in robot.nodes if n.executable == "controller_node"]
        assert controller.parameter_dict["logic"] == spec
    default = plan_launch(cfg, **kwargs)
    assert (
        default.robots[0].nodes[-1].parameter_dict["logic"]
        == "maes_controller.algorithms.frontier_explorer:logic"
    )
    with pytest.raises(ValueError, match="launch argument logic"):
        plan_launch(cfg, logic="no colon", **kwargs)


def test_batch_metrics_carry_the_explore_bench_values(tmp_path):
    import json

    from maes_bringup.experiments.run_metrics import check_metric_names, compute_metrics

    names = check_metric_names(
        [
            "explored_area",
            "exploration_efficiency",
            "overlap",
            "overlap_share",
            "distance_max_robot",
            "time_to_exploration_90",
        ]
    )
    result = run(_config(1), "maes_controller.algorithms.maes2_explorer:logic")
    m = compute_metrics(result, names)
    summary = json.loads((result.write(tmp_path) / "summary.json").read_text())
    bench = summary["exploration_metrics"]
    assert m["explored_area"] == bench["explored_area_m2"] > 0
    assert m["exploration_efficiency"] == bench["exploration_efficiency_m2_per_m"] > 0
    assert m["overlap"] == bench["overlap"] and 0 <= m["overlap_share"] <= 1
    assert m["distance_max_robot"] == max(summary["distance_travelled_m"])
    # the batch's time to 90 % and the summary's agree (here both empty: the run ends at 80 %)
    assert m["time_to_exploration_90"] == bench["seconds_to_90_percent"]


def test_doctests():
    import doctest

    from maes_controller.algorithms import maes2_explorer, random_walk

    for module in (maes2_explorer, random_walk):
        assert doctest.testmod(module).failed == 0, module.__name__
