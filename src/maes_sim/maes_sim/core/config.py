"""Load, validate and export a run's configuration (``maes_config.yaml``).

Loading is two steps: :func:`load_config` reads YAML into plain data (I/O only), and
:func:`config_from_dict` turns that data into frozen dataclasses, failing on the first invalid
item with a :class:`ConfigError` that names the file, the key path, the bad value and what was
expected (with a "did you mean" suggestion for unknown keys and names). The dataclasses validate
themselves, so configs built in Python follow the same rules. :func:`config_to_dict` goes back
to plain data (for the results summary); it round-trips through :func:`config_from_dict`.

Keys and defaults are MAES 2.0's; ``world``, ``motion`` and ``stack`` are MAES-ROS sections.
Every key is described in docs/config_reference.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from maes_sim.core.config_checks import ConfigError, show, unknown_key_error
from maes_sim.core.config_schema import (
    BuildingConfig,
    CaveConfig,
    EndCriteria,
    GlobalSettings,
    LidarConfig,
    MapConfig,
    MotionConfig,
    OccupancyConfig,
    PerformanceConfig,
    ResultsConfig,
    RobotConstraints,
    RobotSpawnConfig,
    SimConfig,
    SpawnTogether,
    StackConfig,
    WorldConfig,
)
from maes_sim.core.safe_yaml import MAX_YAML_BYTES, load_yaml, read_user_file

__all__ = [
    "BuildingConfig",
    "CaveConfig",
    "ConfigError",
    "EndCriteria",
    "GlobalSettings",
    "LidarConfig",
    "MapConfig",
    "MotionConfig",
    "OccupancyConfig",
    "PerformanceConfig",
    "ResultsConfig",
    "RobotConstraints",
    "RobotSpawnConfig",
    "SimConfig",
    "SpawnTogether",
    "StackConfig",
    "WorldConfig",
    "config_from_dict",
    "config_to_dict",
    "key_paths",
    "load_config",
]


def load_config(path: str | os.PathLike[str]) -> SimConfig:
    """Read and validate a YAML config file.

    A relative ``map.custom_map_filename`` is resolved against the file's folder.

    Parameters
    ----------
    path : str or path-like
        The YAML file (MAES 2.0's ``maes_config.yaml`` format).

    Returns
    -------
    SimConfig
        The validated config; keys left out take MAES 2.0's defaults.

    Raises
    ------
    ConfigError
        The file is missing, a directory, unreadable, not YAML or not a mapping, or any setting
        is invalid. The message starts with the file path.

    Examples
    --------
    >>> cfg = load_config("maes_config.yaml")  # doctest: +SKIP
    >>> cfg.number_of_robots, cfg.map.kind  # doctest: +SKIP
    (3, 'building')
    """
    file = Path(path)
    source = str(file)
    # Size and type checked before reading; every YAML failure becomes a ConfigError here.
    text = read_user_file(file, MAX_YAML_BYTES, "config file", ConfigError)
    data = load_yaml(text, source, ConfigError)
    if data is None:
        raise ConfigError("the file is empty; write {} to use every default", source=source)
    # The folder the user sees (a symlinked config resolves beside the link, not its target).
    return config_from_dict(data, source=source, base_dir=Path(os.path.abspath(file)).parent)


def config_from_dict(
    data: Mapping[str, Any],
    source: str = "<dict>",
    base_dir: str | os.PathLike[str] | None = None,
) -> SimConfig:
    """Validate plain data (as read from YAML) into a :class:`SimConfig`.

    Parameters
    ----------
    data : Mapping
        Top-level config mapping. Sections may be left out or ``None`` (all defaults).
    source : str
        Where the data came from, for messages (a file path or ``"<dict>"``).
    base_dir : str or path-like, optional
        Folder against which a relative ``map.custom_map_filename`` is resolved (default: the
        working directory). The map file must exist.

    Returns
    -------
    SimConfig

    Raises
    ------
    ConfigError
        On the first invalid item: unknown key (with a suggestion), wrong type, value out of
        range, conflicting settings, or a custom map file that does not exist.

    Examples
    --------
    >>> cfg = config_from_dict({"number_of_robots": 4, "map": {"cave_config": {}}})
    >>> cfg.number_of_robots, cfg.map.kind, cfg.map.cave_config.random_fill_percent
    (4, 'cave', 40)
    >>> config_from_dict({"map": {"cave_config": {"smothing_runs": 3}}})
    Traceback (most recent call last):
    ...
    maes_sim.core.config_checks.ConfigError: <dict>: map.cave_config.smothing_runs: unknown key \
'smothing_runs'; did you mean 'smoothing_runs'?
    """
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    try:
        config = _build(SimConfig, _count_from_team(data), "", base)
        _check_custom_map_exists(config, data)
    except ConfigError as err:
        raise err.with_source(source) from None
    return config


def config_to_dict(config: SimConfig) -> dict[str, Any]:
    """Plain, YAML-safe data for ``config`` (every key, defaults included).

    ``config_from_dict(config_to_dict(cfg)) == cfg``. Tuples become lists and the custom map
    path is absolute, so the result can be saved anywhere (e.g. beside a run's results).

    Examples
    --------
    >>> data = config_to_dict(SimConfig(number_of_robots=2))
    >>> data["number_of_robots"], data["map"]["building_config"]["door_width"]
    (2, 2)
    >>> config_from_dict(data) == SimConfig(number_of_robots=2)
    True
    """
    if not isinstance(config, SimConfig):
        raise TypeError(f"expected a SimConfig, got {type(config).__name__}")
    return _to_plain(config)


def with_slam(config: SimConfig, slam: str) -> SimConfig:
    """``config`` with ``stack.slam`` replaced (a launch's ``slam:=``), checked as in a file.

    Examples
    --------
    >>> with_slam(SimConfig(), "occupancy").stack.slam
    'occupancy'
    >>> with_slam(SimConfig(), "occupied")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maes_sim.core.config_checks.ConfigError: stack.slam: got 'occupied' (a string), expected one ...
    """
    return replace(config, stack=replace(config.stack, slam=slam))


def key_paths(cls: type = SimConfig, prefix: str = "") -> list[str]:
    """Every dotted key path of a config section, in schema order.

    Examples
    --------
    >>> key_paths(SpawnTogether)
    ['suggested_starting_point_x', 'suggested_starting_point_y']
    """
    paths = []
    for f in fields(cls):
        path = f"{prefix}.{f.name}" if prefix else f.name
        paths.append(path)
        if "section" in f.metadata:
            paths.extend(key_paths(f.metadata["section"], path))
    return paths


_ALL_PATHS = key_paths()


def _build(cls: type, data: Any, path: str, base: Path) -> Any:
    """Build section ``cls`` from mapping ``data`` found at key ``path``."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        what = path or "top level"
        raise ConfigError(
            f"got {show(data)}, expected a mapping of {cls.__name__} settings",
            key=what,
            value=data,
        )
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise unknown_key_error(key, path, list(known), _ALL_PATHS)
        sub_path = f"{path}.{key}" if path else key
        sub = known[key].metadata.get("section")
        if sub is not None and not (value is None and known[key].default is None):
            value = _build(sub, value, sub_path, base)
        elif sub_path == "map.custom_map_filename" and isinstance(value, str) and value.strip():
            # os.path.expanduser leaves an unknown ~user as written (Path's raises RuntimeError).
            value = str(base / os.path.expanduser(value))  # absolute stays absolute
        kwargs[key] = value
    return cls(**kwargs)


def _count_from_team(data: Any) -> Any:
    """``data`` with ``number_of_robots`` set to the team's total when a team is given without
    it (the team then sets the count; when both are given they must agree)."""
    if not isinstance(data, Mapping) or "number_of_robots" in data:
        return data
    team = data.get("team")
    if not isinstance(team, list | tuple) or not team:
        return data
    counts = [e.get("count") for e in team if isinstance(e, Mapping)]
    if len(counts) != len(team) or not all(
        isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in counts
    ):
        return data  # the team's own check names the bad entry
    return {**data, "number_of_robots": sum(counts)}


def _check_custom_map_exists(config: SimConfig, data: Mapping[str, Any]) -> None:
    resolved = config.map.custom_map_filename
    if resolved is None or os.path.isfile(resolved):
        return
    written = data["map"]["custom_map_filename"]
    if "\0" in resolved:
        problem = "a path cannot contain a NUL byte (\\x00)"
    elif os.path.isdir(resolved):
        problem = "is a directory"
    elif os.path.exists(resolved):
        problem = "not a regular file (a FIFO or device?)"
    else:
        problem = "no such file"
    tried = resolved.replace("\0", "\\x00")
    raise ConfigError(
        f"{problem}: {show(written)} (tried {_cut(tried)}; a relative path is relative to the "
        "config file's folder)",
        key="map.custom_map_filename",
        value=written,
    )


def _cut(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _to_plain(value: Any) -> Any:
    if isinstance(value, SimConfig):
        out = {f.name: _to_plain(getattr(value, f.name)) for f in fields(value)}
        out["robot_types"] = {s.name: s.to_plain() for s in value.robot_types}
        out["team"] = [{"type": e.type, "count": e.count} for e in value.team]
        out["obstacles"] = [s.to_plain() for s in value.obstacles]
        return out
    if is_dataclass(value):
        return {f.name: _to_plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [_to_plain(v) for v in value]
    return value
