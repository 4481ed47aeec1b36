"""What ``multi_robot.launch.py`` starts, as plain data: a pure function of the config.

:func:`plan_launch` decides which nodes and includes to start, in which namespace, with which
parameters and remappings, and what each robot's rewritten parameter files contain. The launch
file only turns the resulting :class:`LaunchPlan` into ``launch`` actions, so everything here is
tested without ``launch`` installed. :func:`write_params_files` is the one function writing
files.

Per mode (``slam`` x ``nav``), the plan holds, besides the simulator (``maes_sim_node``, global
namespace, on wall time: it publishes ``/clock``; its exit ends the launch):

* ``nav == "nav2"``: per robot, nav2_bringup's ``navigation_launch.py`` in ``robot<i>`` with
  that robot's rewritten Nav2 parameters;
  ``nav == "builtin"``: one ``navigator_node`` (global namespace) serving every robot.
* ``slam == "slam_toolbox"``: per robot, ``async_slam_toolbox_node`` in ``robot<i>`` and a
  ``lifecycle_manager`` that configures and activates it (slam_toolbox is a lifecycle node in
  Jazzy); the simulator then does not publish the robots' ``map``.
* per robot, a ``controller_node`` in ``robot<i>``; with ``use_composition``, instead, one
  ``controller_container`` (global namespace) holding every robot's controller, named and
  configured as the ``controller_node`` would be; or, when every part is MAES-ROS's own
  (:func:`composes_whole_stack`), one ``maes_run`` process holding the simulator, the
  navigator and the controllers, in place of all of the above;
* ``use_rviz``: ``rviz2`` with the given config.

Every node but the simulator runs on sim time. :func:`check_packages` tells, before anything
starts, which packages of the plan (slam_toolbox, Nav2, RViz) are not installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from maes_common.contract import DEFAULT_LOGIC
from maes_sim.core import SIMULATOR_SLAM_MODES, SLAM_MODES, SimConfig

from .params import (
    dump_params,
    load_template,
    nav2_params,
    slam_toolbox_params,
    stack_values,
)

__all__ = [
    "EXTERNAL_PACKAGES",
    "LOG_LEVELS",
    "SYNC_CHOICES",
    "NAV_CHOICES",
    "SLAM_CHOICES",
    "TF_REMAPS",
    "IncludeSpec",
    "LaunchPlan",
    "MissingPackageError",
    "NodeSpec",
    "ParamsFile",
    "RobotPlan",
    "check_packages",
    "composes_whole_stack",
    "parse_bool",
    "plan_launch",
    "required_packages",
    "robot_namespace",
    "write_params_files",
]

SLAM_CHOICES = SLAM_MODES
NAV_CHOICES = ("builtin", "nav2")
LOG_LEVELS = ("debug", "info", "warn", "error", "fatal")
SYNC_CHOICES = ("lockstep", "free")
#: Nodes inside a robot namespace use the namespace's TF topics (Nav2's multi-robot convention).
TF_REMAPS = (("/tf", "tf"), ("/tf_static", "tf_static"))
#: slam_toolbox publishes its map on absolute topics; keep them inside the namespace.
SLAM_TOOLBOX_REMAPS = TF_REMAPS + (("/map", "map"), ("/map_metadata", "map_metadata"))
NAV2_TEMPLATE = "nav2_params.yaml"
SLAM_TEMPLATE = "slam_toolbox_params.yaml"
#: Packages the full stack takes from a ROS 2 Jazzy install (the Docker image, or apt), with the
#: launch argument that starts them.
EXTERNAL_PACKAGES = {
    "slam_toolbox": "slam:=slam_toolbox",
    "nav2_lifecycle_manager": "slam:=slam_toolbox",
    "nav2_bringup": "nav:=nav2",
    "rviz2": "use_rviz:=true",
}
#: MAES-ROS's own packages (built in this workspace; never reported missing).
OWN_PACKAGES = ("maes_sim", "maes_controller", "maes_bringup", "maes_interfaces")
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


@dataclass(frozen=True)
class NodeSpec:
    """One node to start. Its namespace is that of the :class:`RobotPlan` holding it, or the
    global one for :attr:`LaunchPlan.nodes`.

    ``parameters`` are ``(name, value)`` pairs (values: bool, int, float, str or a tuple of
    them); ``params_files`` are parameter files given before them. ``ends_launch``: when this
    node's process exits, for whatever reason, the whole launch shuts down (the simulator: the
    end of the run is the end of everything). ``renames``: the launch names the node
    ``name``; False for a process of many nodes (``controller_container``), where a name given
    on the command line would rename every one of them, so ``name`` only labels it in the plan.
    """

    package: str
    executable: str
    name: str
    parameters: tuple[tuple[str, Any], ...] = ()
    params_files: tuple[str, ...] = ()
    remappings: tuple[tuple[str, str], ...] = ()
    arguments: tuple[str, ...] = ()
    ends_launch: bool = False
    renames: bool = True

    @property
    def parameter_dict(self) -> dict[str, Any]:
        """``parameters`` as a dict (tuples become lists, as launch_ros expects)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.parameters}

    def ros_parameters(self) -> list[Any]:
        """The ``parameters=`` list of a launch_ros ``Node``: files first, then the dict."""
        return [*self.params_files, self.parameter_dict]


@dataclass(frozen=True)
class IncludeSpec:
    """A launch file of another package to include, with its launch arguments (strings)."""

    package: str
    launch_file: str  # relative to the package's share directory
    arguments: tuple[tuple[str, str], ...]

    @property
    def argument_dict(self) -> dict[str, str]:
        return dict(self.arguments)


@dataclass(frozen=True)
class RobotPlan:
    """What runs in one robot's namespace (pushed by the launch file around all of it)."""

    index: int
    namespace: str
    nodes: tuple[NodeSpec, ...]
    includes: tuple[IncludeSpec, ...]


@dataclass(frozen=True)
class ParamsFile:
    """A rewritten parameter file: where it goes and its YAML text."""

    path: str
    text: str


@dataclass(frozen=True)
class LaunchPlan:
    """The whole launch: global nodes, per-robot groups and the files they need."""

    slam: str
    nav: str
    nodes: tuple[NodeSpec, ...]
    robots: tuple[RobotPlan, ...]
    files: tuple[ParamsFile, ...]

    def node(self, name: str) -> NodeSpec:
        """The global node called ``name`` (KeyError if there is none)."""
        for spec in self.nodes:
            if spec.name == name:
                return spec
        raise KeyError(f"no global node named {name!r}; have {[n.name for n in self.nodes]}")


def robot_namespace(index: int) -> str:
    """Namespace of robot ``index``: ``robot<index>`` (the robot-facing contract's name)."""
    return f"robot{index}"


def _choice(argument: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(
            f"launch argument {argument}: got {value!r}, expected one of "
            f"{', '.join(repr(a) for a in allowed)}"
        )
    return value


def parse_bool(argument: str, text: Any) -> bool:
    """A boolean launch argument: ``true/false`` (also ``1/0``, ``yes/no``, ``on/off``).

    Raises
    ------
    ValueError
        Naming the argument and the value, for anything else.

    Examples
    --------
    >>> parse_bool("use_rviz", "True"), parse_bool("use_rviz", "0")
    (True, False)
    """
    if isinstance(text, bool):
        return text
    word = str(text).strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"launch argument {argument}: got {text!r}, expected true or false")


class MissingPackageError(RuntimeError):
    """A package the launch needs is not installed; the message says how to get it."""


def required_packages(plan: LaunchPlan) -> tuple[str, ...]:
    """The packages, other than MAES-ROS's own, the plan starts nodes or includes from.

    Examples
    --------
    >>> spec = NodeSpec(package="rviz2", executable="rviz2", name="rviz2")
    >>> required_packages(LaunchPlan("simulated", "builtin", (spec,), (), ()))
    ('rviz2',)
    """
    found = {n.package for n in plan.nodes}
    for robot in plan.robots:
        found.update(n.package for n in robot.nodes)
        found.update(i.package for i in robot.includes)
    return tuple(sorted(found - set(OWN_PACKAGES)))


def check_packages(plan: LaunchPlan, is_installed: Callable[[str], bool]) -> None:
    """Raise :class:`MissingPackageError` if a package of the plan is not installed.

    Parameters
    ----------
    plan : LaunchPlan
    is_installed : callable
        ``is_installed(package) -> bool``; the launch file asks the ament index.

    Raises
    ------
    MissingPackageError
        One line naming each missing package, the launch argument that needs it, and where to
        get it: the Docker image, or ``apt install ros-jazzy-<name>``.

    Examples
    --------
    >>> spec = NodeSpec(package="slam_toolbox", executable="x", name="x")
    >>> check_packages(LaunchPlan("slam_toolbox", "builtin", (spec,), (), ()),
    ...                lambda name: False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maes_bringup.stack.launch_plan.MissingPackageError: slam:=slam_toolbox needs the ROS 2 package \
slam_toolbox, which is not installed here; ...
    """
    missing = [p for p in required_packages(plan) if not is_installed(p)]
    if not missing:
        return
    needed_by = sorted({EXTERNAL_PACKAGES.get(p, "this launch") for p in missing})
    apt = " ".join("ros-jazzy-" + p.replace("_", "-") for p in missing)
    raise MissingPackageError(
        f"{' and '.join(needed_by)} {'needs' if len(needed_by) == 1 else 'need'} the ROS 2 "
        f"package{'s' if len(missing) > 1 else ''} {', '.join(missing)}, which "
        f"{'is' if len(missing) == 1 else 'are'} not installed here; run the full stack in "
        f"the Docker image (docker/, see docs/full_stack.md) or install ROS 2 Jazzy's "
        f"packages with 'sudo apt install {apt}'"
    )


def _args(level: str) -> tuple[str, ...]:
    return ("--ros-args", "--log-level", level)


def _robot_plan(
    index: int,
    *,
    slam: str,
    nav: str,
    level: str,
    nav2_file: str | None,
    slam_file: str | None,
    logic: str = DEFAULT_LOGIC,
    cmd_vel_stamped: bool = False,
    motion: tuple[str, float, float] = ("maes", 0.0, 0.0),
) -> RobotPlan:
    ns = robot_namespace(index)
    nodes: list[NodeSpec] = []
    includes: list[IncludeSpec] = []
    if slam == "slam_toolbox":
        nodes.append(
            NodeSpec(
                package="slam_toolbox",
                executable="async_slam_toolbox_node",
                name="slam_toolbox",
                parameters=(("use_sim_time", True),),
                params_files=(slam_file,),
                remappings=SLAM_TOOLBOX_REMAPS,
                arguments=_args(level),
            )
        )
        nodes.append(
            NodeSpec(
                package="nav2_lifecycle_manager",
                executable="lifecycle_manager",
                name="lifecycle_manager_slam",
                parameters=(
                    ("use_sim_time", True),
                    ("autostart", True),
                    ("node_names", ("slam_toolbox",)),
                    ("bond_timeout", 0.0),
                ),
                arguments=_args(level),
            )
        )
    if nav == "nav2":
        includes.append(
            IncludeSpec(
                package="nav2_bringup",
                launch_file="launch/navigation_launch.py",
                arguments=(
                    ("namespace", ns),
                    ("use_sim_time", "True"),
                    ("params_file", nav2_file),
                    ("autostart", "True"),
                    ("use_composition", "False"),
                    ("use_respawn", "False"),
                    ("log_level", level),
                ),
            )
        )
    nodes.append(
        NodeSpec(
            package="maes_controller",
            executable="controller_node",
            name="controller",
            parameters=(
                ("robot_id", index),
                ("logic", logic),
                ("cmd_vel_stamped", bool(cmd_vel_stamped)),
                ("motion_model", motion[0]),  # only to say what set_velocity becomes
                ("max_speed", float(motion[1])),
                ("max_angular_speed", float(motion[2])),
                # nav2: join lockstep at once, goals wait for Nav2's activation
                ("navigator", nav),
                ("use_sim_time", True),
            ),
            remappings=TF_REMAPS,
            arguments=_args(level),
        )
    )
    return RobotPlan(index=index, namespace=ns, nodes=tuple(nodes), includes=tuple(includes))


def plan_launch(
    config: SimConfig,
    *,
    config_path: str | os.PathLike[str],
    slam: str | None = None,
    nav: str | None = None,
    use_rviz: bool = False,
    log_level: str = "info",
    params_dir: str | os.PathLike[str],
    rviz_config: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    map_size: tuple[int, int] | None = None,
    cmd_vel_stamped: bool = False,
    sync: str = "lockstep",
    real_time_factor: float = 1.0,
    logic: str | None = None,
    outputs: Mapping[str, Any] | None = None,
    nav2_api: bool = False,
    use_composition: bool = False,
) -> LaunchPlan:
    """Decide everything the full stack starts, from a validated config.

    Reads the two templates in ``params_dir``; writes nothing (see
    :func:`write_params_files`).

    Parameters
    ----------
    config : SimConfig
        The run's config (``load_config(config_path)``).
    config_path : path
        The config file, passed on to the simulator and the built-in navigator.
    slam, nav : str, optional
        One of :data:`SLAM_CHOICES` (``"simulated"``, ``"occupancy"``: the simulator's maps;
        ``"slam_toolbox"``) and ``"builtin"``/``"nav2"``; ``None`` or ``""`` takes
        ``config.stack.slam`` / ``config.stack.nav``.
    use_rviz : bool
        Start RViz with ``rviz_config``.
    log_level : str
        One of :data:`LOG_LEVELS`, for every node.
    params_dir : path
        Folder of the templates ``nav2_params.yaml`` and ``slam_toolbox_params.yaml``.
    rviz_config : path
        The ``.rviz`` file.
    out_dir : path
        Where the rewritten files will be written: ``<out_dir>/robot<i>/<template name>``.
    map_size : tuple of int, optional
        Map size in tiles, for a custom map (``params.map_size_tiles``); see
        :func:`maes_bringup.stack.params.stack_values`.
    cmd_vel_stamped : bool
        ``cmd_vel`` as TwistStamped, for both the simulator and Nav2 (Jazzy's Nav2 default is
        Twist, so False).
    sync : str
        ``"lockstep"`` (default: the simulator waits for the controllers and, with
        ``nav="builtin"``, the navigator, every tick; docs/lockstep.md) or ``"free"``.
    real_time_factor : float
        The simulator's speed cap (``0``: as fast as lockstep allows).
    logic : str, optional
        Every controller's logic spec (``pkg.module:function`` or ``file.py:function``);
        ``None`` or ``""``: the shipped frontier explorer
        (``maes_controller.algorithms.frontier_explorer:logic``).
    outputs : mapping, optional
        The simulator's watching and recording parameters (``record``, ``live``,
        ``live_host``, ``live_port``; docs/live_view.md), passed on unchanged.
    nav2_api : bool
        With ``nav="builtin"``: the navigator serves Nav2's whole task interface per robot
        (docs/nav2_task_api.md), not only ``navigate_to_pose``.
    use_composition : bool
        As few processes as the parts allow, with the same result: with the built-in
        navigator, the simulator's maps, lockstep and no ``nav2_api``, one ``maes_run``
        process holding the whole stack, its parts handed their data in-process
        (:func:`composes_whole_stack`); otherwise every robot's controller in one
        ``controller_container`` process instead of a ``controller_node`` process per robot
        (about 200 MiB each), as ROS 2's composition does: the same nodes.

    Returns
    -------
    LaunchPlan

    Raises
    ------
    ValueError
        An unknown ``slam``/``nav``/``log_level`` (the message names the argument and the
        allowed values), or an unreadable or mismatched template.

    Examples
    --------
    >>> from maes_sim.core import config_from_dict
    >>> plan = plan_launch(config_from_dict({"number_of_robots": 2}), config_path="c.yaml",
    ...                    params_dir="src/maes_bringup/params", rviz_config="maes.rviz",
    ...                    out_dir="/tmp/p", slam="slam_toolbox", nav="nav2")  # doctest: +SKIP
    >>> [n.name for n in plan.robots[1].nodes]  # doctest: +SKIP
    ['slam_toolbox', 'lifecycle_manager_slam', 'controller']
    """
    if not isinstance(config, SimConfig):
        raise TypeError(f"config must be a SimConfig (load_config), got {type(config).__name__}")
    slam = _choice("slam", slam or config.stack.slam, SLAM_CHOICES)
    nav = _choice("nav", nav or config.stack.nav, NAV_CHOICES)
    level = _choice("log_level", log_level, LOG_LEVELS)
    sync = _choice("sync", sync, SYNC_CHOICES)
    if (
        isinstance(real_time_factor, bool)
        or not isinstance(real_time_factor, (int, float))
        or not real_time_factor >= 0
    ):
        raise ValueError(
            f"launch argument real_time_factor: got {real_time_factor!r}, expected a number >= 0"
        )
    use_rviz = parse_bool("use_rviz", use_rviz)
    logic = logic or DEFAULT_LOGIC
    from maes_controller.robot_api import load_logic

    try:
        load_logic(logic)
    except ValueError as err:
        raise ValueError(f"launch argument logic: {err}") from None
    config_file = os.fspath(config_path)
    nav2_template = (
        load_template(os.path.join(params_dir, NAV2_TEMPLATE)) if nav == "nav2" else None
    )
    slam_template = (
        load_template(os.path.join(params_dir, SLAM_TEMPLATE)) if slam == "slam_toolbox" else None
    )
    files: list[ParamsFile] = []
    robots: list[RobotPlan] = []
    for i in range(config.number_of_robots):
        ns = robot_namespace(i)
        values = stack_values(config, map_size, robot=i)  # the robot type's numbers
        nav2_file = slam_file = None
        if nav2_template is not None:
            nav2_file = os.path.join(os.fspath(out_dir), ns, NAV2_TEMPLATE)
            files.append(
                ParamsFile(
                    nav2_file, dump_params(nav2_params(nav2_template, values, ns, cmd_vel_stamped))
                )
            )
        if slam_template is not None:
            slam_file = os.path.join(os.fspath(out_dir), ns, SLAM_TEMPLATE)
            files.append(
                ParamsFile(slam_file, dump_params(slam_toolbox_params(slam_template, values, ns)))
            )
        robots.append(
            _robot_plan(
                i,
                slam=slam,
                nav=nav,
                level=level,
                nav2_file=nav2_file,
                slam_file=slam_file,
                logic=logic,
                cmd_vel_stamped=cmd_vel_stamped,
                motion=(config.motion.model, values.max_linear_speed, values.max_angular_speed),
            )
        )

    if parse_bool("use_composition", use_composition) and composes_whole_stack(
        slam=slam, nav=nav, sync=sync, nav2_api=nav2_api
    ):
        return _whole_stack_plan(
            robots,
            slam=slam,
            nav=nav,
            config_file=config_file,
            logic=logic,
            real_time_factor=float(real_time_factor),
            level=level,
            outputs=outputs or {},
            use_rviz=use_rviz,
            rviz_config=rviz_config,
        )
    # The simulator publishes /clock and paces itself on a steady wall clock: never sim time.
    sim_parameters = {
        "config_file": config_file,
        "real_time_factor": float(real_time_factor),
        "sync": sync,
        # The start barrier: every controller joined (and the built-in navigator); Nav2 and
        # slam_toolbox take longer to come up.
        "wait_for_navigator": nav == "builtin",
        "wait_for_controllers": "lockstep",
        "start_timeout": 60.0 if nav == "builtin" and slam in SIMULATOR_SLAM_MODES else 180.0,
        "cmd_vel_stamped": bool(cmd_vel_stamped),
        "publish_slam_map": slam in SIMULATOR_SLAM_MODES,
        "slam": slam,  # the simulator builds its maps this way (the launch may override)
        "use_sim_time": False,
    }
    # Watching and recording (docs/live_view.md): record, live, live_host, live_port.
    sim_parameters.update(outputs or {})
    nodes = [
        NodeSpec(
            package="maes_sim",
            executable="maes_sim_node",
            name="maes_sim",
            parameters=tuple(sim_parameters.items()),
            arguments=_args(level),
            ends_launch=True,
        )
    ]
    if nav == "builtin":
        nodes.append(
            NodeSpec(
                package="maes_bringup",
                executable="navigator_node",
                name="navigator",
                parameters=(
                    ("config_file", config_file),
                    ("use_sim_time", True),
                    ("nav2_api", bool(nav2_api)),
                ),
                arguments=_args(level),
            )
        )
    if parse_bool("use_composition", use_composition):
        robots, container = _compose_controllers(robots, level)
        nodes.append(container)
    if use_rviz:
        nodes.append(_rviz(rviz_config, level))
    return LaunchPlan(
        slam=slam, nav=nav, nodes=tuple(nodes), robots=tuple(robots), files=tuple(files)
    )


def composes_whole_stack(*, slam: str, nav: str, sync: str, nav2_api: bool) -> bool:
    """Whether ``use_composition:=true`` puts the whole stack in one process: the simulator,
    the built-in navigator and every robot's controller, handed their data in-process
    (``maes_run``'s stack). It does when every part is MAES-ROS's own and in lockstep: the
    built-in navigator, the simulator's maps, ``sync:=lockstep``, and no Nav2 task interface
    (served to scripts from outside). Otherwise the controllers alone share a
    ``controller_container`` and talk to the simulator, Nav2 and slam_toolbox over DDS.

    Examples
    --------
    >>> composes_whole_stack(slam="simulated", nav="builtin", sync="lockstep", nav2_api=False)
    True
    >>> composes_whole_stack(slam="slam_toolbox", nav="builtin", sync="lockstep", nav2_api=False)
    False
    """
    return (
        nav == "builtin"
        and slam in SIMULATOR_SLAM_MODES
        and sync == "lockstep"
        and not parse_bool("nav2_api", nav2_api)
    )


def _whole_stack_plan(
    robots: list[RobotPlan],
    *,
    slam: str,
    nav: str,
    config_file: str,
    logic: str,
    real_time_factor: float,
    level: str,
    outputs: Mapping[str, Any],
    use_rviz: bool,
    rviz_config: str | os.PathLike[str],
) -> LaunchPlan:
    """The plan of :func:`composes_whole_stack`: one ``maes_run`` process (global namespace,
    its exit ends the launch) holding the simulator node, the navigator and the controllers;
    the simulator node publishes each robot's topics for outside listeners (RViz, a recorder,
    your node) and serves the services, as in ``make run``."""
    arguments = [
        "--config",
        config_file,
        "--logic",
        logic,
        "--slam",
        slam,
        "--real-time-factor",
        repr(real_time_factor),
    ]
    if outputs.get("record"):
        arguments += ["--record", os.fspath(outputs["record"])]
    if outputs.get("live"):
        arguments += [
            "--live",
            str(outputs.get("live_port", 8765)),
            "--live-host",
            str(outputs.get("live_host", "127.0.0.1")),
        ]
    nodes = [
        NodeSpec(
            package="maes_bringup",
            executable="maes_run",
            name="maes_run",
            arguments=(*arguments, *_args(level)),
            ends_launch=True,
            renames=False,  # a process of many nodes
        )
    ]
    if use_rviz:
        nodes.append(_rviz(rviz_config, level))
    robots = [
        RobotPlan(index=r.index, namespace=r.namespace, nodes=(), includes=()) for r in robots
    ]
    return LaunchPlan(slam=slam, nav=nav, nodes=tuple(nodes), robots=tuple(robots), files=())


def _rviz(rviz_config: str | os.PathLike[str], level: str) -> NodeSpec:
    return NodeSpec(
        package="rviz2",
        executable="rviz2",
        name="rviz2",
        parameters=(("use_sim_time", True),),
        arguments=("-d", os.fspath(rviz_config)) + _args(level),
    )


def _compose_controllers(robots: list[RobotPlan], level: str) -> tuple[list[RobotPlan], NodeSpec]:
    """Take every robot's ``controller_node`` out of its group and into one
    ``controller_container``: ``robot_ids`` and, per robot, ``robot<i>.<name>`` for each of
    the node's parameters (``controller_container``'s format)."""
    parameters: list[tuple[str, Any]] = [("use_sim_time", True)]
    ids = []
    composed = []
    for robot in robots:
        [controller] = [n for n in robot.nodes if n.executable == "controller_node"]
        ids.append(robot.index)
        parameters += [
            (f"{robot.namespace}.{name}", value)
            for name, value in controller.parameters
            if name not in ("robot_id", "use_sim_time")
        ]
        remappings = controller.remappings
        composed.append(
            RobotPlan(
                index=robot.index,
                namespace=robot.namespace,
                nodes=tuple(n for n in robot.nodes if n is not controller),
                includes=robot.includes,
            )
        )
    container = NodeSpec(
        package="maes_controller",
        executable="controller_container",
        name="controllers",
        parameters=(("robot_ids", tuple(ids)), *parameters),
        remappings=remappings if robots else TF_REMAPS,
        arguments=_args(level),
        renames=False,
    )
    return composed, container


def write_params_files(plan: LaunchPlan) -> list[str]:
    """Write the plan's rewritten parameter files (creating folders); return their paths."""
    written = []
    for item in plan.files:
        os.makedirs(os.path.dirname(item.path) or ".", exist_ok=True)
        with open(item.path, "w", encoding="utf-8") as handle:
            handle.write(item.text)
        written.append(item.path)
    return written
