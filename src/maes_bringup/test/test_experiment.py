"""Experiment files: expansion into cases, stable ids, and every bad input caught before a run."""

from __future__ import annotations

import doctest
import textwrap
from pathlib import Path

import numpy as np
import pytest

from maes_bringup.experiments import experiment, run_metrics
from maes_bringup.experiments.experiment import (
    DEFAULT_METRICS,
    ExperimentError,
    latin_hypercube,
    load_experiment,
    range_values,
)
from maes_common.contract import DEFAULT_LOGIC

BASE = """\
number_of_robots: 2
end_criteria: {exploration_percent: 95.0, tick: 50}
map: {width_in_tiles: 20, height_in_tiles: 20, cave_config: {}}
"""

CONTROLLER = "def logic(robot):\n    pass\n"


def write(folder: Path, experiment: str, base: str = BASE) -> Path:
    (folder / "base.yaml").write_text(base)
    (folder / "ctrl.py").write_text(CONTROLLER)
    path = folder / "exp.yaml"
    path.write_text(textwrap.dedent(experiment))
    return path


def test_lists_and_ranges_are_crossed_with_seeds_and_controllers(tmp_path):
    exp = load_experiment(
        write(
            tmp_path,
            """\
        base_config: base.yaml
        parameters:
          number_of_robots: [1, 3]
          robot_constraints.broadcast_range: {range: {start: 5, stop: 15, step: 5}}
        repetitions: 2
        controllers: [ctrl.py:logic, maes_controller.algorithms.frontier_explorer:logic]
        max_ticks: 40
        """,
        )
    )
    assert exp.name == "exp" and exp.seeds == (0, 1) and exp.metrics == DEFAULT_METRICS
    assert exp.parameter_names == ("number_of_robots", "robot_constraints.broadcast_range")
    assert exp.parameter_kinds == {
        "number_of_robots": "values",
        "robot_constraints.broadcast_range": "range",
    }
    assert len(exp.cases) == 2 * 3 * 2 * 2
    combos = {(c.parameters, c.controller, c.seed) for c in exp.cases}
    assert len(combos) == len(exp.cases)
    assert {dict(c.parameters)["robot_constraints.broadcast_range"] for c in exp.cases} == {
        5,
        10,
        15,
    }
    case = next(c for c in exp.cases if dict(c.parameters)["number_of_robots"] == 3)
    # each case carries its whole resolved config, with its own seed
    assert case.config["number_of_robots"] == 3
    assert case.config["random_seeds"] == [case.seed]
    assert case.config["map"]["cave_config"]["random_fill_percent"] == 40
    refs = {c.controller: c.controller_ref for c in exp.cases}
    assert refs == {
        "ctrl.py:logic": f"{tmp_path / 'ctrl.py'}:logic",  # made absolute
        DEFAULT_LOGIC: DEFAULT_LOGIC,
    }
    assert case.max_ticks == 40
    # runs of one condition share its id; different conditions do not
    by_condition: dict[str, set] = {}
    for c in exp.cases:
        by_condition.setdefault(c.condition_id, set()).add((c.parameters, c.controller))
    assert len(by_condition) == 12 and all(len(v) == 1 for v in by_condition.values())


def test_case_ids_are_stable_and_follow_the_content(tmp_path):
    text = """\
        base_config: base.yaml
        parameters: {number_of_robots: [1, 2]}
        seeds: [3, 4]
        controllers: [ctrl.py:logic]
        """
    first = [c.case_id for c in load_experiment(write(tmp_path, text)).cases]
    again = [c.case_id for c in load_experiment(write(tmp_path, text)).cases]
    assert first == again and len(set(first)) == 4
    # a changed base config (even a setting not varied) makes new cases
    changed = load_experiment(write(tmp_path, text, BASE.replace("tick: 50", "tick: 60")))
    assert not set(first) & {c.case_id for c in changed.cases}
    # the same experiment from another folder keeps its ids
    other = tmp_path / "moved"
    other.mkdir()
    assert [c.case_id for c in load_experiment(write(other, text)).cases] == first


def test_latin_hypercube_puts_one_sample_in_each_stratum(tmp_path):
    exp = load_experiment(
        write(
            tmp_path,
            """\
        base_config: base.yaml
        parameters:
          number_of_robots: [1, 2]
          robot_constraints.slam_raytrace_range: {lhs: {low: 3.0, high: 9.0}}
          map.cave_config.random_fill_percent: {lhs: {low: 30, high: 50}}
        lhs_samples: 5
        lhs_seed: 11
        seeds: [0]
        controllers: [ctrl.py:logic]
        """,
        )
    )
    assert len(exp.cases) == 2 * 5
    assert exp.parameter_kinds["robot_constraints.slam_raytrace_range"] == "lhs"
    samples = {c.parameters[1:] for c in exp.cases}
    assert len(samples) == 5  # the same 5 samples crossed with both team sizes
    ranges = sorted(dict(s)["robot_constraints.slam_raytrace_range"] for s in samples)
    strata = np.floor((np.array(ranges) - 3.0) / 6.0 * 5).astype(int)
    assert strata.tolist() == [0, 1, 2, 3, 4]
    fills = [dict(s)["map.cave_config.random_fill_percent"] for s in samples]
    assert all(isinstance(f, int) and 30 <= f <= 50 for f in fills)  # an int setting stays int
    again = load_experiment(exp.path)
    assert [c.parameters for c in again.cases] == [c.parameters for c in exp.cases]


def test_latin_hypercube_and_range_helpers():
    s = latin_hypercube(8, [0.0, -1.0], [1.0, 1.0], np.random.default_rng(1))
    assert s.shape == (8, 2)
    for d, (lo, hi) in enumerate([(0.0, 1.0), (-1.0, 1.0)]):
        assert sorted(np.floor((s[:, d] - lo) / (hi - lo) * 8).astype(int)) == list(range(8))
    assert not np.array_equal(
        s, latin_hypercube(8, [0.0, -1.0], [1.0, 1.0], np.random.default_rng(2))
    )
    assert range_values(1, 4, 1) == [1, 2, 3, 4]
    assert range_values(10, 2, -4) == [10, 6, 2]
    assert range_values(0.1, 0.3, 0.1) == [0.1, 0.2, 0.3]
    for bad in [(1, 5, 0), (5, 1, 1)]:
        with pytest.raises(ValueError, match="empty range"):
            range_values(*bad)


def test_seeds_default_to_the_config(tmp_path):
    exp = load_experiment(
        write(
            tmp_path,
            """\
        base_config: base.yaml
        controllers: [ctrl.py:logic]
        """,
            BASE + "random_seeds: [7, 9]\n",
        )
    )
    assert exp.seeds == (7, 9) and len(exp.cases) == 2 and exp.parameter_names == ()


@pytest.mark.parametrize(
    "body, needle",
    [
        (
            "parameters: {number_of_robot: [1]}",
            "parameters.number_of_robot: unknown config key path 'number_of_robot'; did you mean "
            "'number_of_robots'?",
        ),
        (
            "parameters: {robot_constraints.broadcast_rang: [1]}",
            "did you mean 'robot_constraints.broadcast_range'?",
        ),
        ("parameters: {tile_size: [1.0]}", "did you mean 'world.tile_size'?"),
        ("parameters: {random_seeds: [[1]]}", "vary seeds with the experiment's 'seeds'"),
        (
            "parameters: {number_of_robots: {range: {start: 4, stop: 1, step: 1}}}",
            "parameters.number_of_robots.range: empty range",
        ),
        ("parameters: {number_of_robots: {range: {start: 1, stop: 4, step: 0}}}", "empty range"),
        ("parameters: {number_of_robots: []}", "expected a non-empty list"),
        ("parameters: {number_of_robots: {lhs: {low: 5, high: 5}}}\nlhs_samples: 3", "empty range"),
        ("parameters: {number_of_robots: {lhs: {low: 1, high: 5}}}", "lhs_samples: needed"),
        ("parameters: {motion.model: {lhs: {low: 1, high: 5}}}\nlhs_samples: 2", "numeric setting"),
        ("parameters: {number_of_robots: {between: [1, 2]}}", "exactly one of values"),
        ("parameters: {number_of_robots: [1, 0]}", "number_of_robots: got 0, expected an integer"),
        ("parametrs: {}", "unknown key 'parametrs'; did you mean 'parameters'?"),
        ("seeds: [1]\nrepetitions: 2", "seeds or repetitions, not both"),
        ("seeds: [1, 1]", "a seed is repeated"),
        ("repetitions: 0", "repetitions: got 0"),
        ("metrics: [time_to_exploraton_99]", "did you mean 'time_to_exploration_99'?"),
        ("metrics: [time_to_exploration_150]", "percentage must be in ]0, 100]"),
        ("max_ticks: -3", "max_ticks: got -3"),
    ],
)
def test_bad_input_fails_before_any_run_naming_the_problem(tmp_path, body, needle):
    text = "base_config: base.yaml\ncontrollers: [ctrl.py:logic]\n" + body + "\n"
    with pytest.raises(ExperimentError) as info:
        load_experiment(write(tmp_path, text))
    assert needle in str(info.value)
    assert str(tmp_path / "exp.yaml") in str(info.value)


@pytest.mark.parametrize(
    "spec, needle",
    [
        ("no_such_package.logic:logic", "cannot import logic module 'no_such_package.logic'"),
        (
            "maes_controller.algorithms.frontier_explorer:no_such_function",
            "'no_such_function' in 'maes_controller.algorithms.frontier_explorer'",
        ),
        ("missing.py:logic", "logic file"),
        ("ctrl.py:nothing", "'nothing'"),
        ("ctrl.py:lgic", "is not a callable logic function; did you mean 'logic'?"),
        ("maes_controller.algorithms.frontier_explorer:logik", "did you mean 'logic'?"),
        ("maes_controller.logic:zzz", "its functions: logic"),
        ("broken.py:logic", "ZeroDivisionError"),
        ("no-colon", "must look like 'package.module:function'"),
    ],
)
def test_controllers_are_imported_before_any_run(tmp_path, spec, needle):
    (tmp_path / "broken.py").write_text("1 / 0\n")
    text = f"base_config: base.yaml\ncontrollers: ['{spec}']\n"
    with pytest.raises(ExperimentError, match="controllers: ") as info:
        load_experiment(write(tmp_path, text))
    assert needle in str(info.value)


def test_a_config_that_never_ends_needs_max_ticks(tmp_path):
    base = "map: {width_in_tiles: 20, height_in_tiles: 20}\n"
    with pytest.raises(ExperimentError, match="max_ticks: needed"):
        load_experiment(
            write(tmp_path, "base_config: base.yaml\ncontrollers: [ctrl.py:logic]\n", base)
        )


def test_a_missing_or_invalid_base_config_is_named(tmp_path):
    with pytest.raises(ExperimentError, match="base_config: .*file not found"):
        load_experiment(write(tmp_path, "base_config: nope.yaml\ncontrollers: [ctrl.py:logic]"))
    with pytest.raises(ExperimentError, match="number_of_robots: got 'x'"):
        load_experiment(
            write(
                tmp_path,
                "base_config: base.yaml\ncontrollers: [ctrl.py:logic]",
                "number_of_robots: x\n",
            )
        )
    with pytest.raises(ExperimentError, match="file not found"):
        load_experiment(tmp_path / "absent.yaml")


@pytest.mark.parametrize("module", [experiment, run_metrics])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_the_radio_experiment_loads_with_one_radio_per_row():
    """experiments/radio_loss.yaml (issue 25): 8 algorithms x 5 radio rows x 2 maps x 5 seeds,
    each row's radio reaching every robot of the run's config."""
    from maes_sim.core import config_from_dict

    root = Path(__file__).resolve().parents[3]
    exp = load_experiment(root / "experiments" / "radio_loss.yaml")
    assert len(exp.cases) == 400
    radios = {}
    for case in exp.cases[:: 5 * 8]:  # one case per (row, map)
        types = config_from_dict(case.config).robot_type_per_robot()
        assert len({t.radio for t in types}) == 1
        radios[types[0].radio.model, types[0].radio.loss_probability] = True
    assert set(radios) == {
        ("range", 0.0),
        ("bernoulli", 0.1),
        ("bernoulli", 0.3),
        ("bernoulli", 0.5),
        ("gilbert_elliott", 0.0),
    }


def test_the_occupancy_experiment_is_the_imperfect_world_with_occupancy_maps():
    """experiments/imperfect_world_occupancy.yaml (issue 37) has the cases of
    imperfect_world.yaml with ``stack.slam: occupancy``, so that occupancy_report.py pairs
    every run with the same case under the simulated SLAM."""
    root = Path(__file__).resolve().parents[3] / "experiments"
    simulated = load_experiment(root / "imperfect_world.yaml")
    occupancy = load_experiment(root / "imperfect_world_occupancy.yaml")
    assert len(occupancy.cases) == len(simulated.cases) == 800

    def case_key(case):
        config = dict(case.config)
        config["stack"] = dict(config["stack"])
        slam = config["stack"].pop("slam")
        return slam, repr(sorted(config.items())), case.controller, case.seed

    sim_keys = [case_key(c) for c in simulated.cases]
    occ_keys = [case_key(c) for c in occupancy.cases]
    assert {k[0] for k in sim_keys} == {"simulated"}
    assert {k[0] for k in occ_keys} == {"occupancy"}
    assert sorted(k[1:] for k in occ_keys) == sorted(k[1:] for k in sim_keys)


@pytest.mark.parametrize("full", ["imperfect_world", "imperfect_world_occupancy"])
def test_the_split_rows_experiments_are_cases_of_the_full_ones(full):
    """experiments/imperfect_world_split*.yaml run the two split rows (the lidar's noise alone,
    the pose errors alone) of the full experiments: 320 of their cases, the same configs and
    seeds, so that occupancy_report.py pairs them like the full batches' runs."""
    root = Path(__file__).resolve().parents[3] / "experiments"
    whole = load_experiment(root / f"{full}.yaml")
    split = load_experiment(
        root / f"{full.replace('imperfect_world', 'imperfect_world_split')}.yaml"
    )

    def key(case):
        return repr(sorted(case.config.items())), case.controller, case.seed

    assert len(split.cases) == 320
    assert {key(c) for c in split.cases} <= {key(c) for c in whole.cases}
    noises = {repr(c.config["robot_types"]) for c in split.cases}
    assert len(noises) == 2 and all("slam_position_inaccuracy" in n or "lidar" in n for n in noises)


def test_the_scaling_experiments_cover_issue_36s_grid():
    """experiments/scaling.yaml (1..50 robots on 60x60 maps) and scaling_120.yaml (50 and 120
    robots on 75x75 maps, the pair issue 36's doubling target compares there): 8 algorithms x
    both map kinds x seeds 0-4 each, spawned together, 2 minutes."""
    root = Path(__file__).resolve().parents[3]
    small = load_experiment(root / "experiments" / "scaling.yaml")
    large = load_experiment(root / "experiments" / "scaling_120.yaml")
    assert len(small.cases) == 8 * 6 * 2 * 5 and len(large.cases) == 8 * 2 * 2 * 5
    for exp, sizes, side in ((small, {1, 2, 5, 10, 20, 50}, 60), (large, {50, 120}, 75)):
        assert {c.config["number_of_robots"] for c in exp.cases} == sizes
        assert {c.config["map"]["width_in_tiles"] for c in exp.cases} == {side}
        assert {c.seed for c in exp.cases} == set(range(5))
        assert len({c.controller for c in exp.cases}) == 8
        for case in exp.cases:
            spawn = case.config["robot_spawn_config"]
            assert spawn["spawn_together"] is not None and not spawn["biggest_room"], spawn
            assert case.config["end_criteria"]["tick"] == 1200
