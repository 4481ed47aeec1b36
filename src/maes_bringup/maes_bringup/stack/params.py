"""Per-robot Nav2 and slam_toolbox parameters, rewritten from one template each.

MAES distances are in tiles; ROS parameters are in metres (``world.tile_size`` metres per tile).
:func:`stack_values` turns a config into the numbers the stack needs (robot radius, lidar reach,
top speeds and accelerations of the motion model, costmap geometry, timing);
:func:`nav2_params` and :func:`slam_toolbox_params` write them into a copy of a template (the
YAML files in ``maes_bringup/params/``). Every rewritten key must already exist in the template,
so a renamed key fails loudly instead of being added beside the one Nav2 reads.

Computation is kept apart from I/O: :func:`load_template`, :func:`dump_params` and
:func:`map_size_tiles` (which reads a custom map file) are the only functions touching files.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from maes_common.contract import map_origin
from maes_common.motion_models import MODELS
from maes_sim.core import (
    ANGULAR_BRAKE_TAU,
    BRAKE_TAU,
    RISE_HALF_LIFE,
    SimConfig,
)

__all__ = [
    "CELLS_PER_TILE",
    "DIFF_DRIVE_ROTATE_MIN_ANGLE",
    "MAES_ROTATE_MIN_ANGLE",
    "StackValues",
    "dump_params",
    "load_template",
    "map_size_tiles",
    "nav2_params",
    "slam_toolbox_params",
    "stack_values",
]

#: Costmap and slam_toolbox cells per tile: 0.1 m at MAES's 1 m tiles.
CELLS_PER_TILE = 10
#: Heading error (rad) above which the controller turns in place first, for the MAES model
#: (rotate xor move): small, so the robot faces the path before it drives.
MAES_ROTATE_MIN_ANGLE = 0.1
#: The same for ``motion.model: differential_drive`` (Nav2's default: arcs are fine).
DIFF_DRIVE_ROTATE_MIN_ANGLE = 0.785
#: Controller rate bounds (Hz); within them the controller runs once per logic tick.
MIN_CONTROLLER_HZ, MAX_CONTROLLER_HZ = 1.0, 20.0
#: TF tolerance: this many logic ticks (the simulator publishes TF once a tick), at least 0.3 s.
TF_TOLERANCE_TICKS, MIN_TF_TOLERANCE = 3, 0.3


@dataclass(frozen=True)
class StackValues:
    """The numbers (SI units) one robot's Nav2 and slam_toolbox parameters are made of.

    Build with :func:`stack_values`. Lengths in metres, speeds in m/s and rad/s, accelerations
    in m/s^2 and rad/s^2 (decelerations positive), times in seconds; rounded to 1e-6.
    """

    tile_size: float
    robot_radius: float
    lidar_range: float
    max_linear_speed: float
    max_angular_speed: float
    linear_accel: float
    angular_accel: float
    linear_decel: float
    angular_decel: float
    resolution: float
    local_costmap_size: int
    global_costmap_size: tuple[int, int]
    global_costmap_origin: tuple[float, float]
    controller_frequency: float
    tick_seconds: float
    transform_tolerance: float
    rotate_to_heading_min_angle: float


def _map_tiles(config: SimConfig, map_size: tuple[int, int] | None) -> tuple[int, int] | None:
    if map_size is not None:
        width, height = map_size
        for name, value in (("width", width), ("height", height)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"map_size {name} must be a positive integer of tiles, got {value!r}"
                )
        return int(width), int(height)
    if config.map.kind == "custom":
        return None  # the size is in the file; see map_size_tiles
    return config.map.width_in_tiles, config.map.height_in_tiles


def stack_values(
    config: SimConfig, map_size: tuple[int, int] | None = None, robot: int = 0
) -> StackValues:
    """Derive robot ``robot``'s stack numbers from a validated config (its type's size, speeds,
    lidar range and motion model).

    Parameters
    ----------
    config : SimConfig
        The run's config (``load_config``).
    map_size : tuple of int, optional
        ``(width, height)`` of the map in tiles. Generated maps default to
        ``map.width_in_tiles`` x ``map.height_in_tiles``. For a custom map pass
        :func:`map_size_tiles`; without it the global costmap starts as a square of the lidar's
        reach around the origin and Nav2's static layer resizes it to the first map it receives.

    Returns
    -------
    StackValues

    Raises
    ------
    ValueError
        If ``map_size`` is not two positive integers.

    Examples
    --------
    >>> from maes_sim.core import config_from_dict
    >>> v = stack_values(config_from_dict({"world": {"tile_size": 0.5}}))
    >>> v.robot_radius, v.lidar_range, v.max_linear_speed
    (0.15, 3.5, 1.5)
    >>> v.global_costmap_size, v.global_costmap_origin
    ((25, 25), (-12.5, -12.5))
    """
    tile = config.world.tile_size
    kind = config.robot_type_per_robot()[robot]
    tick = config.global_settings.logic_ticks_delta_millis / 1000.0
    v_max = kind.max_speed * tile
    w_max = kind.max_angular_speed
    # The motion model's drive lag v <- u + (v - u) * 0.5 ** (dt / half_life) starts at
    # u * ln 2 / half_life; its braking decays with time constant tau.
    rise = math.log(2.0) / RISE_HALF_LIFE
    lidar = kind.lidar_range * tile
    # Costmap sides are whole metres in Nav2 (integer parameters).
    local_side = max(1, math.ceil(2.0 * lidar - 1e-9))
    tiles = _map_tiles(config, map_size)
    if tiles is None:
        size = (local_side, local_side)
        origin = (-local_side / 2.0, -local_side / 2.0)
    else:
        size = (
            max(1, math.ceil(tiles[0] * tile - 1e-9)),
            max(1, math.ceil(tiles[1] * tile - 1e-9)),
        )
        origin = map_origin(tiles[0], tiles[1], tile)
    # A model that rotates xor moves turns on the spot to a heading before it drives.
    simultaneous = MODELS[kind.motion_model].simultaneous
    rotate = DIFF_DRIVE_ROTATE_MIN_ANGLE if simultaneous else MAES_ROTATE_MIN_ANGLE
    return StackValues(
        tile_size=tile,
        robot_radius=_r(kind.radius * tile),
        lidar_range=_r(lidar),
        max_linear_speed=_r(v_max),
        max_angular_speed=_r(w_max),
        linear_accel=_r(v_max * rise),
        angular_accel=_r(w_max * rise),
        linear_decel=_r(v_max / BRAKE_TAU),
        angular_decel=_r(w_max / ANGULAR_BRAKE_TAU),
        resolution=_r(tile / CELLS_PER_TILE),
        local_costmap_size=local_side,
        global_costmap_size=size,
        global_costmap_origin=(_r(origin[0]), _r(origin[1])),
        controller_frequency=_r(min(MAX_CONTROLLER_HZ, max(MIN_CONTROLLER_HZ, 1.0 / tick))),
        tick_seconds=tick,
        transform_tolerance=_r(max(MIN_TF_TOLERANCE, TF_TOLERANCE_TICKS * tick)),
        rotate_to_heading_min_angle=rotate,
    )


def _r(x: float) -> float:
    # Readable parameter files: micro-units are far below anything the stack resolves.
    return round(float(x), 6)


def _set(doc: dict, path: tuple[str, ...], value: Any, template: str) -> None:
    node: Any = doc
    for depth, key in enumerate(path):
        if not isinstance(node, dict) or key not in node:
            raise ValueError(
                f"{template} template has no key {'.'.join(path[: depth + 1])!r} "
                f"(needed to set {'.'.join(path)})"
            )
        if depth == len(path) - 1:
            node[key] = value
        else:
            node = node[key]


def _rewrite(template: Mapping[str, Any], values: dict[tuple[str, ...], Any], name: str) -> dict:
    if not isinstance(template, Mapping):
        raise ValueError(f"{name} template must be a mapping, got {type(template).__name__}")
    doc = copy.deepcopy(dict(template))
    for path, value in values.items():
        _set(doc, path, value, name)
    return doc


def _namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not namespace or "/" in namespace:
        raise ValueError(f"namespace must be a plain name such as 'robot0', got {namespace!r}")
    return namespace


def nav2_params(
    template: Mapping[str, Any], values: StackValues, namespace: str, cmd_vel_stamped: bool = False
) -> dict:
    """One robot's Nav2 parameters: a rewritten deep copy of the Nav2 template.

    The result is not nested under the namespace: nav2_bringup's ``navigation_launch.py`` does
    that itself (it is given ``namespace``).

    Parameters
    ----------
    template : Mapping
        The parsed ``params/nav2_params.yaml``.
    values : StackValues
        From :func:`stack_values`.
    namespace : str
        The robot's namespace (``robot<i>``), for the costmaps' absolute topics.
    cmd_vel_stamped : bool
        Publish TwistStamped (must match the simulator's ``cmd_vel_stamped``).

    Returns
    -------
    dict
        A new document; the template is not modified.

    Raises
    ------
    ValueError
        If the template lacks a key that is rewritten, or the namespace is not a plain name.

    Examples
    --------
    >>> from maes_sim.core import config_from_dict
    >>> tpl = load_template("src/maes_bringup/params/nav2_params.yaml")  # doctest: +SKIP
    >>> p = nav2_params(tpl, stack_values(config_from_dict({})), "robot1")  # doctest: +SKIP
    >>> p["global_costmap"]["global_costmap"]["ros__parameters"]["robot_radius"]  # doctest: +SKIP
    0.3
    """
    ns = _namespace(namespace)
    v = values
    rp = ("controller_server", "ros__parameters")
    rpp = rp + ("FollowPath",)
    bt = ("bt_navigator", "ros__parameters")
    beh = ("behavior_server", "ros__parameters")
    vs = ("velocity_smoother", "ros__parameters")
    cm = ("collision_monitor", "ros__parameters")
    dock = ("docking_server", "ros__parameters")
    tile = v.tile_size
    inflation = v.robot_radius + 0.5 * tile
    table: dict[tuple[str, ...], Any] = {
        bt + ("transform_tolerance",): v.transform_tolerance,
        rp + ("enable_stamped_cmd_vel",): bool(cmd_vel_stamped),
        rp + ("controller_frequency",): v.controller_frequency,
        rp + ("progress_checker", "required_movement_radius"): 0.5 * tile,
        rp + ("general_goal_checker", "xy_goal_tolerance"): 0.25 * tile,
        rpp + ("desired_linear_vel",): v.max_linear_speed,
        rpp + ("lookahead_dist",): 1.0 * tile,
        rpp + ("min_lookahead_dist",): 0.5 * tile,
        rpp + ("max_lookahead_dist",): 2.0 * tile,
        rpp + ("rotate_to_heading_min_angle",): v.rotate_to_heading_min_angle,
        rpp + ("rotate_to_heading_angular_vel",): v.max_angular_speed,
        rpp + ("max_angular_accel",): v.angular_accel,
        rpp + ("transform_tolerance",): v.transform_tolerance,
        # RPP requires more than 0.01 m/s here.
        rpp + ("min_approach_linear_velocity",): max(
            0.02, min(0.05 * tile, v.max_linear_speed / 2)
        ),
        rpp + ("approach_velocity_scaling_dist",): 1.0 * tile,
        rpp + ("regulated_linear_scaling_min_radius",): 0.9 * tile,
        rpp + ("regulated_linear_scaling_min_speed",): min(0.25 * tile, v.max_linear_speed),
        ("planner_server", "ros__parameters", "GridBased", "tolerance"): 0.5 * tile,
        beh + ("enable_stamped_cmd_vel",): bool(cmd_vel_stamped),
        beh + ("transform_tolerance",): v.transform_tolerance,
        beh + ("max_rotational_vel",): v.max_angular_speed,
        beh + ("rotational_acc_lim",): v.angular_accel,
        vs + ("enable_stamped_cmd_vel",): bool(cmd_vel_stamped),
        vs + ("max_velocity",): [v.max_linear_speed, 0.0, v.max_angular_speed],
        vs + ("min_velocity",): [-v.max_linear_speed, 0.0, -v.max_angular_speed],
        vs + ("max_accel",): [v.linear_accel, 0.0, v.angular_accel],
        vs + ("max_decel",): [-v.linear_decel, 0.0, -v.angular_decel],
        cm + ("enable_stamped_cmd_vel",): bool(cmd_vel_stamped),
        cm + ("transform_tolerance",): v.transform_tolerance,
        cm + ("FootprintApproach", "radius"): v.robot_radius,
        dock + ("enable_stamped_cmd_vel",): bool(cmd_vel_stamped),
    }
    for costmap in ("local_costmap", "global_costmap"):
        cp = (costmap, costmap, "ros__parameters")
        table[cp + ("transform_tolerance",)] = v.transform_tolerance
        table[cp + ("resolution",)] = v.resolution
        table[cp + ("robot_radius",)] = v.robot_radius
        scan = cp + ("obstacle_layer", "scan")
        table[scan + ("topic",)] = f"/{ns}/scan"
        table[scan + ("raytrace_max_range",)] = v.lidar_range
        table[scan + ("obstacle_max_range",)] = v.lidar_range
        table[cp + ("inflation_layer", "inflation_radius")] = inflation
        table[cp + ("inflation_layer", "cost_scaling_factor")] = 3.0 / tile
    local = ("local_costmap", "local_costmap", "ros__parameters")
    table[local + ("width",)] = v.local_costmap_size
    table[local + ("height",)] = v.local_costmap_size
    glob = ("global_costmap", "global_costmap", "ros__parameters")
    table[glob + ("width",)] = v.global_costmap_size[0]
    table[glob + ("height",)] = v.global_costmap_size[1]
    table[glob + ("origin_x",)] = v.global_costmap_origin[0]
    table[glob + ("origin_y",)] = v.global_costmap_origin[1]
    table[glob + ("static_layer", "map_topic")] = f"/{ns}/map"
    return _rewrite(template, table, "nav2_params")


def slam_toolbox_params(template: Mapping[str, Any], values: StackValues, namespace: str) -> dict:
    """One robot's slam_toolbox parameters, nested under its namespace.

    Parameters
    ----------
    template : Mapping
        The parsed ``params/slam_toolbox_params.yaml`` (top-level key ``slam_toolbox``).
    values : StackValues
        From :func:`stack_values`.
    namespace : str
        The robot's namespace; the result is ``{namespace: {"slam_toolbox": ...}}`` so it
        matches the node ``/<namespace>/slam_toolbox``.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        If the template lacks a key that is rewritten, or the namespace is not a plain name.

    Examples
    --------
    >>> from maes_sim.core import config_from_dict
    >>> tpl = {"slam_toolbox": {"ros__parameters": dict.fromkeys(
    ...     ["resolution", "max_laser_range", "transform_timeout", "minimum_time_interval",
    ...      "minimum_travel_distance"], 0.0)}}
    >>> p = slam_toolbox_params(tpl, stack_values(config_from_dict({})), "robot2")
    >>> p["robot2"]["slam_toolbox"]["ros__parameters"]["max_laser_range"]
    7.0
    """
    ns = _namespace(namespace)
    v = values
    sp = ("slam_toolbox", "ros__parameters")
    doc = _rewrite(
        template,
        {
            sp + ("resolution",): v.resolution,
            sp + ("max_laser_range",): v.lidar_range,
            sp + ("transform_timeout",): v.transform_tolerance,
            sp + ("minimum_time_interval",): v.tick_seconds,
            sp + ("minimum_travel_distance",): 0.5 * v.tile_size,
        },
        "slam_toolbox_params",
    )
    return {ns: doc}


def map_size_tiles(config: SimConfig) -> tuple[int, int]:
    """The map's ``(width, height)`` in tiles; reads the file of a custom map (I/O).

    Raises
    ------
    maes_sim.core.world.MapError
        If a custom map file cannot be read (the message names the path).

    Examples
    --------
    >>> from maes_sim.core import config_from_dict
    >>> map_size_tiles(config_from_dict({"map": {"width_in_tiles": 40}}))
    (40, 50)
    """
    if config.map.kind != "custom":
        return config.map.width_in_tiles, config.map.height_in_tiles
    from maes_sim.core import load_custom_map

    walls = load_custom_map(config.map.custom_map_filename, config.world.tile_size).walls
    return int(walls.shape[1]), int(walls.shape[0])


def load_template(path: str | os.PathLike[str]) -> dict:
    """Read a parameter template (YAML mapping).

    Raises
    ------
    ValueError
        If the file is missing, unreadable, not YAML or not a mapping (the message names it).
    """
    try:
        with open(path, encoding="utf-8") as handle:
            doc = yaml.safe_load(handle)
    except OSError as err:
        raise ValueError(f"cannot read parameter template {os.fspath(path)!r}: {err}") from None
    except yaml.YAMLError as err:
        raise ValueError(
            f"parameter template {os.fspath(path)!r} is not valid YAML: {err}"
        ) from None
    if not isinstance(doc, dict):
        raise ValueError(
            f"parameter template {os.fspath(path)!r} must hold a mapping, got {type(doc).__name__}"
        )
    return doc


class _Text(str):
    """A string parameter value written quoted (see :func:`dump_params`)."""


class _QuotingDumper(yaml.SafeDumper):
    pass


_QuotingDumper.add_representer(
    _Text, lambda dumper, text: dumper.represent_scalar("tag:yaml.org,2002:str", text, style="'")
)


def _quote_values(doc: Any) -> Any:
    if isinstance(doc, Mapping):
        return {key: _quote_values(value) for key, value in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_quote_values(value) for value in doc]
    return _Text(doc) if isinstance(doc, str) else doc


def dump_params(params: Mapping[str, Any], *, quote_strings: bool = False) -> str:
    """YAML text of a parameter document (keys in template order).

    With ``quote_strings`` every string value is written quoted, so ROS's parameter file
    parser reads it as a string whatever it looks like: left plain, a value such as the run id
    ``320748586e03`` (or ``1e5``, ``y``, ``inf``, ``nan``) is read as a number or a bool, which
    PyYAML writes without quotes. Use it for values whose Python type is their ROS type (the
    project's own nodes); a template's values are written as read, as ROS would read the
    template itself.

    Examples
    --------
    >>> print(dump_params({"/**": {"ros__parameters": {"run_id": "320748586e03"}}}), end="")
    /**:
      ros__parameters:
        run_id: 320748586e03
    >>> print(dump_params({"/**": {"ros__parameters": {"run_id": "320748586e03", "n": 2}}},
    ...                   quote_strings=True), end="")
    /**:
      ros__parameters:
        run_id: '320748586e03'
        n: 2
    """
    if not quote_strings:
        return yaml.safe_dump(dict(params), sort_keys=False, default_flow_style=False)
    return yaml.dump(
        _quote_values(params), Dumper=_QuotingDumper, sort_keys=False, default_flow_style=False
    )
