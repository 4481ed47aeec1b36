"""Experiment files: which runs a batch makes, checked before any of them starts.

An experiment (YAML) names a base config, the settings to vary, the seeds and the controllers:

.. code-block:: yaml

    name: robots_vs_time              # optional; default: the file name without .yaml
    base_config: ../configs/cave_30.yaml   # relative to this file
    parameters:                       # dotted config key paths (docs/config_reference.md)
      number_of_robots: [1, 2, 4]                           # a list (short for values: [...])
      robot_constraints.broadcast_range: {range: {start: 5, stop: 15, step: 5}}  # stop included
      robot_constraints.slam_raytrace_range: {lhs: {low: 4.0, high: 9.0}}
    lhs_samples: 6                    # Latin hypercube samples (needed when a parameter uses lhs)
    lhs_seed: 0                       # seed of the sampling (default 0)
    seeds: [0, 1, 2, 3]               # or: repetitions: 4 (seeds 0..3); default: the config's
    controllers: [maes_controller.algorithms.frontier_explorer:logic]  # or "my_logic.py:logic"
    metrics: [ticks_to_end, time_to_exploration_99, distance]   # default: DEFAULT_METRICS
    max_ticks: 3000                   # safety stop per run (needed if the config never ends)

Lists and ranges are crossed (every combination); the Latin hypercube parameters are sampled
jointly (``lhs_samples`` points, each parameter's range cut into that many equal strata, one
sample per stratum, strata paired at random) and the sample set is crossed with the rest. A
*condition* is one parameter combination with one controller; a *case* is a condition with one
seed, i.e. one run. Case ids hash the case's whole content (resolved config, seed, controller,
``max_ticks``), so a resumed batch recognises finished runs, and a changed base config makes new
ones.

Everything a run could fail on before it starts is checked by :func:`load_experiment`: unknown
keys and parameter paths (with a suggestion), empty ranges, invalid values (each case's config is
validated), controllers that cannot be imported, unknown metrics.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from maes_sim.core import (
    MAX_YAML_BYTES,
    ConfigError,
    Float,
    Int,
    Nullable,
    SimConfig,
    config_from_dict,
    config_to_dict,
    key_paths,
    load_config,
    load_yaml,
    read_user_file,
    suggestion,
)

from ..runners.direct import resolve_controller
from .run_metrics import check_metric_names

DEFAULT_METRICS: tuple[str, ...] = (
    "ticks_to_end",
    "time_to_exploration_50",
    "time_to_exploration_90",
    "time_to_exploration_99",
    "final_exploration",
    "final_coverage",
    "distance",
    "collisions",
    "broadcasts_sent",
)

_TOP_KEYS = (
    "name",
    "description",
    "base_config",
    "parameters",
    "lhs_samples",
    "lhs_seed",
    "seeds",
    "repetitions",
    "controllers",
    "metrics",
    "max_ticks",
)
_SPEC_KINDS = ("values", "range", "lhs")


class ExperimentError(ValueError):
    """An invalid experiment file; the message names the file, the key and the problem."""


@dataclass(frozen=True)
class Case:
    """One run of an experiment.

    Attributes
    ----------
    case_id : str
        12 hex digits hashing the run's content (config, seed, controller, max_ticks).
    condition_id : str
        12 hex digits hashing the parameter values and the controller (the runs that differ
        only by seed share it).
    parameters : tuple of (str, value)
        The varied settings of this case, in the experiment's order.
    seed : int
    controller : str
        The controller spec as written in the experiment.
    controller_ref : str
        The spec to import (a file path made absolute).
    config : dict
        The run's whole config as plain data (``config_to_dict``), ``random_seeds == [seed]``.
    max_ticks : int or None
    metrics : tuple of str
    """

    case_id: str
    condition_id: str
    parameters: tuple[tuple[str, Any], ...]
    seed: int
    controller: str
    controller_ref: str
    config: dict = field(compare=False, repr=False)
    max_ticks: int | None = None
    metrics: tuple[str, ...] = DEFAULT_METRICS


@dataclass(frozen=True)
class Experiment:
    """A loaded, validated experiment: its settings and every case.

    Attributes
    ----------
    name : str
    path : Path
        The experiment file.
    parameter_names : tuple of str
        Varied key paths, in file order (the CSV's parameter columns).
    parameter_kinds : dict
        ``"values"``, ``"range"`` or ``"lhs"`` for each parameter.
    controllers : tuple of str
    seeds : tuple of int
    metrics : tuple of str
    max_ticks : int or None
    cases : tuple of Case
    """

    name: str
    path: Path
    parameter_names: tuple[str, ...]
    parameter_kinds: dict
    controllers: tuple[str, ...]
    seeds: tuple[int, ...]
    metrics: tuple[str, ...]
    max_ticks: int | None
    cases: tuple[Case, ...]


def _fail(source: str, key: str | None, problem: str) -> ExperimentError:
    where = f"{key}: " if key else ""
    return ExperimentError(f"{source}: {where}{problem}")


# ---------------------------------------------------------------------------------- sampling
def latin_hypercube(
    n: int, lows: Sequence[float], highs: Sequence[float], rng: np.random.Generator
) -> np.ndarray:
    """``n`` Latin hypercube samples of the box ``[lows, highs]``, shape (n, D).

    Each dimension is cut into ``n`` equal strata; every stratum holds exactly one sample, placed
    uniformly inside it, and the strata of different dimensions are paired by independent random
    permutations. Same ``rng`` state, same samples.

    Examples
    --------
    >>> s = latin_hypercube(4, [0.0, 10.0], [1.0, 20.0], np.random.default_rng(0))
    >>> s.shape, sorted(np.floor(s[:, 0] * 4).astype(int).tolist())
    ((4, 2), [0, 1, 2, 3])
    """
    lows = np.asarray(lows, dtype=np.float64)
    highs = np.asarray(highs, dtype=np.float64)
    d = lows.shape[0]
    strata = np.stack([rng.permutation(n) for _ in range(d)], axis=1)  # (n, D)
    unit = (strata + rng.random((n, d))) / n
    return lows + unit * (highs - lows)


def range_values(start: float, stop: float, step: float) -> list[float]:
    """``start, start + step, ...`` up to and including ``stop`` (when on the grid).

    Integers stay integers. Raises ValueError for a zero step or one pointing away from
    ``stop`` (an empty range).

    Examples
    --------
    >>> range_values(5, 20, 5)
    [5, 10, 15, 20]
    >>> range_values(0.5, 1.0, 0.2)
    [0.5, 0.7, 0.9]
    """
    if step == 0 or (stop - start) * step < 0:
        raise ValueError(f"empty range: start {start}, stop {stop}, step {step}")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if all(isinstance(v, int) for v in (start, stop, step)):
        return [start + k * step for k in range(count)]
    # round away float drift (0.1 + 0.2 ...) so values print and hash cleanly
    return [round(start + k * step, 12) for k in range(count)]


# ---------------------------------------------------------------------------------- schema
def _leaf_check(path: str) -> Any:
    """The value check of config setting ``path`` (unwrapped from Nullable), or None."""
    cls: type = SimConfig
    parts = path.split(".")
    for depth, part in enumerate(parts):
        f = {x.name: x for x in fields(cls)}[part]
        if depth == len(parts) - 1:
            check = f.metadata.get("check")
            return check.inner if isinstance(check, Nullable) else check
        cls = f.metadata["section"]
    return None


def _check_path(path: Any, source: str) -> str:
    known = key_paths()
    if not isinstance(path, str) or path not in known:
        hint = suggestion(str(path), known) or suggestion(str(path).rsplit(".", 1)[-1], known)
        if not hint:
            tails = [k for k in known if k.rsplit(".", 1)[-1] == str(path).rsplit(".", 1)[-1]]
            hint = f"; did you mean {tails[0]!r}?" if tails else ""
        raise _fail(
            source,
            f"parameters.{path}",
            f"unknown config key path {path!r}{hint} (see docs/config_reference.md)",
        )
    if path == "random_seeds":
        raise _fail(
            source,
            "parameters.random_seeds",
            "vary seeds with the experiment's 'seeds' or 'repetitions', not a parameter",
        )
    return path


def _number(value: Any, key: str, source: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(source, key, f"got {value!r}, expected a finite number")
    return value


def _parameter_values(path: str, spec: Any, source: str) -> tuple[str, Any]:
    """``(kind, [values])`` for a list or range, ``("lhs", (low, high))`` for sampling."""
    key = f"parameters.{path}"
    if isinstance(spec, list):
        spec = {"values": spec}
    if not isinstance(spec, Mapping) or len(spec) != 1 or next(iter(spec)) not in _SPEC_KINDS:
        raise _fail(
            source,
            key,
            f"got {spec!r}, expected a list, or a mapping with exactly one "
            "of values: [...], range: {start, stop, step}, lhs: {low, high}",
        )
    kind, body = next(iter(spec.items()))
    if kind == "values":
        if not isinstance(body, list) or not body:
            raise _fail(source, f"{key}.values", f"got {body!r}, expected a non-empty list")
        return "values", list(body)
    want = ("start", "stop", "step") if kind == "range" else ("low", "high")
    if not isinstance(body, Mapping) or set(body) != set(want):
        raise _fail(
            source, f"{key}.{kind}", f"got {body!r}, expected a mapping with keys {', '.join(want)}"
        )
    nums = [_number(body[k], f"{key}.{kind}.{k}", source) for k in want]
    if kind == "range":
        try:
            return "range", range_values(*nums)
        except ValueError as err:
            raise _fail(source, f"{key}.range", str(err)) from None
    low, high = nums
    if not low < high:
        raise _fail(source, f"{key}.lhs", f"empty range: low {low} must be below high {high}")
    if not isinstance(_leaf_check(path), (Int, Float)):
        raise _fail(source, f"{key}.lhs", "Latin hypercube sampling needs a numeric setting")
    return "lhs", (low, high)


# ---------------------------------------------------------------------------------- hashing
def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _file_digest(path: str, cache: dict[str, str]) -> str:
    if path not in cache:
        with open(path, "rb") as fh:
            cache[path] = hashlib.sha256(fh.read()).hexdigest()
    return cache[path]


def _content_view(config: dict, cache: dict[str, str]) -> dict:
    """The config with its custom map path replaced by the file's content hash.

    Case ids then survive moving the experiment folder, and change when the map file does.
    """
    name = config["map"].get("custom_map_filename")
    if name is None:
        return config
    view = json.loads(json.dumps(config))
    view["map"]["custom_map_filename"] = f"sha256:{_file_digest(name, cache)}{Path(name).suffix}"
    return view


def _set_path(data: dict, path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = data
    for part in parents:
        if node.get(part) is None:  # an optional section left out: create it
            node[part] = {}
        node = node[part]
    node[leaf] = value


# ---------------------------------------------------------------------------------- loading
def _read(path: Path) -> dict:
    source = str(path)
    # The simulator's strict loader: size/type checks, duplicate keys, alias bombs, YAML 1.1 traps.
    data = load_yaml(
        read_user_file(path, MAX_YAML_BYTES, "experiment file", ExperimentError),
        source,
        ExperimentError,
    )
    if not isinstance(data, Mapping):
        raise ExperimentError(f"{source}: expected a mapping of experiment settings")
    for key in data:
        if key not in _TOP_KEYS:
            hint = suggestion(str(key), _TOP_KEYS) or f"; known keys: {', '.join(_TOP_KEYS)}"
            raise _fail(source, str(key), f"unknown key {key!r}{hint}")
    return dict(data)


def _seeds(data: dict, base: SimConfig, source: str) -> tuple[int, ...]:
    if "seeds" in data and "repetitions" in data:
        raise _fail(source, "seeds", "give seeds or repetitions, not both")
    if "repetitions" in data:
        n = data["repetitions"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise _fail(source, "repetitions", f"got {n!r}, expected an integer >= 1")
        return tuple(range(n))
    if "seeds" in data:
        seeds = data["seeds"]
        ok = (
            isinstance(seeds, list)
            and seeds
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
        )
        if not ok:
            raise _fail(
                source, "seeds", f"got {seeds!r}, expected a non-empty list of integers >= 0"
            )
        if len(set(seeds)) != len(seeds):
            raise _fail(source, "seeds", f"got {seeds!r}: a seed is repeated")
        return tuple(seeds)
    return tuple(base.random_seeds)


def _controllers(data: dict, folder: Path, source: str) -> list[tuple[str, str]]:
    specs = data.get("controllers")
    if not isinstance(specs, list) or not specs or not all(isinstance(s, str) for s in specs):
        raise _fail(
            source,
            "controllers",
            f"got {specs!r}, expected a non-empty list of "
            "'package.module:function' or 'file.py:function' specs",
        )
    out = []
    for spec in specs:
        ref = spec
        module, sep, attr = spec.partition(":")
        if module.endswith(".py"):
            ref = f"{(folder / module).resolve()}{sep}{attr}"
        try:
            resolve_controller(ref)
        except ValueError as err:
            raise _fail(source, "controllers", str(err)) from None
        out.append((spec, ref))
    return out


def _int_or_none(data: dict, key: str, source: str, lo: int) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise _fail(source, key, f"got {value!r}, expected an integer >= {lo}")
    return value


def load_experiment(path: str | os.PathLike[str]) -> Experiment:
    """Read an experiment file and expand it into validated cases.

    Parameters
    ----------
    path : str or path-like
        The experiment YAML (see the module docstring for its keys).

    Returns
    -------
    Experiment

    Raises
    ------
    ExperimentError
        Naming the file, the key and the problem: unknown keys or parameter paths (with a
        suggestion), empty ranges, a case whose config is invalid, a controller that cannot be
        imported, an unknown metric, or a config that never ends without ``max_ticks``.

    Examples
    --------
    >>> exp = load_experiment("experiments/robots_vs_time.yaml")  # doctest: +SKIP
    >>> len(exp.cases), exp.parameter_names  # doctest: +SKIP
    (12, ('number_of_robots',))
    """
    file = Path(path)
    source = str(file)
    data = _read(file)
    folder = Path(os.path.abspath(file)).parent
    if not isinstance(data.get("base_config"), str):
        raise _fail(
            source,
            "base_config",
            f"got {data.get('base_config')!r}, expected the "
            "path of a config file (relative to the experiment file)",
        )
    try:
        base = load_config(folder / data["base_config"])
    except ConfigError as err:
        raise _fail(source, "base_config", str(err)) from None
    name = data.get("name", file.stem)
    if not isinstance(name, str) or not name.strip():
        raise _fail(source, "name", f"got {name!r}, expected a non-empty string")

    params = data.get("parameters") or {}
    if not isinstance(params, Mapping):
        raise _fail(source, "parameters", f"got {params!r}, expected a mapping of key paths")
    grid, lhs, kinds = [], [], {}
    for p, spec in params.items():
        kind, values = _parameter_values(_check_path(p, source), spec, source)
        (lhs if kind == "lhs" else grid).append((p, values))
        kinds[p] = kind
    samples = _int_or_none(data, "lhs_samples", source, 1)
    if lhs and samples is None:
        raise _fail(source, "lhs_samples", "needed: how many Latin hypercube samples to draw")
    if samples is not None and not lhs:
        raise _fail(source, "lhs_samples", "given, but no parameter uses lhs")
    lhs_seed = _int_or_none(data, "lhs_seed", source, 0) or 0

    combos: list[dict[str, Any]] = [
        dict(zip([p for p, _ in grid], vals, strict=True))
        for vals in itertools.product(*[v for _, v in grid])
    ]
    if lhs:
        points = latin_hypercube(
            samples,
            [lo for _, (lo, _) in lhs],
            [hi for _, (_, hi) in lhs],
            np.random.default_rng(lhs_seed),
        )
        sampled = []
        for row in points:
            sampled.append(
                {
                    p: (int(round(v)) if isinstance(_leaf_check(p), Int) else round(float(v), 6))
                    for (p, _), v in zip(lhs, row.tolist(), strict=True)
                }
            )
        combos = [{**c, **s} for c in combos for s in sampled]
    names = tuple(params)
    metrics = data.get("metrics", list(DEFAULT_METRICS))
    try:
        metrics = check_metric_names(metrics)
    except ValueError as err:
        raise _fail(source, "metrics", str(err)) from None
    max_ticks = _int_or_none(data, "max_ticks", source, 1)
    seeds = _seeds(data, base, source)
    controllers = _controllers(data, folder, source)
    base_data = config_to_dict(base)

    cases = []
    map_digests: dict[str, str] = {}
    for combo in combos:
        cfg_data = json.loads(json.dumps(base_data))  # deep copy of plain data
        for p in names:
            _set_path(cfg_data, p, combo[p])
        shown = ", ".join(f"{p}={combo[p]!r}" for p in names) or "the base config"
        try:
            cfg = config_from_dict(cfg_data, source=f"{source} ({shown})")
        except ConfigError as err:
            raise ExperimentError(f"{err}") from None
        if cfg.end_criteria.never_ends and max_ticks is None:
            raise _fail(
                source,
                "max_ticks",
                f"needed: the config ({shown}) has no end criteria, so a run would never end",
            )
        resolved = json.dumps(config_to_dict(cfg))
        for spec, ref in controllers:
            condition = _digest({"parameters": [[p, combo[p]] for p in names], "controller": spec})
            for seed in seeds:
                run_data = json.loads(resolved)
                run_data["random_seeds"] = [seed]
                case_id = _digest(
                    {
                        "config": _content_view(run_data, map_digests),
                        "seed": seed,
                        "controller": spec,
                        "max_ticks": max_ticks,
                    }
                )
                cases.append(
                    Case(
                        case_id,
                        condition,
                        tuple((p, combo[p]) for p in names),
                        seed,
                        spec,
                        ref,
                        run_data,
                        max_ticks,
                        metrics,
                    )
                )
    ids = [c.case_id for c in cases]
    if len(set(ids)) != len(ids):
        raise _fail(
            source,
            "parameters",
            "two cases are identical (a value repeated?); every combination must be distinct",
        )
    return Experiment(
        name.strip(),
        file,
        names,
        kinds,
        tuple(s for s, _ in controllers),
        seeds,
        metrics,
        max_ticks,
        tuple(cases),
    )
