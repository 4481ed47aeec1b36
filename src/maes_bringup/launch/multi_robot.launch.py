"""The full MAES-ROS stack: the simulator and, per robot, navigation, SLAM and a controller.

    ros2 launch maes_bringup multi_robot.launch.py [config:=path]
        [slam:=slam_toolbox|simulated|occupancy] [nav:=nav2|builtin] [use_rviz:=true]
        [use_composition:=true] [log_level:=info] [domain:=auto|N]

What starts is decided by maes_bringup.stack.launch_plan.plan_launch (a pure function, unit-tested
without `launch`); this file only loads the config with the simulator's loader and turns the
plan into launch actions. A config error, a bad argument or a package the mode needs but which
is not installed (slam_toolbox, Nav2, RViz) stops the launch with a one-line message before any
node starts. The simulator's exit (end criteria met, an error, Ctrl-C) shuts the whole launch
down (when it finished, once the controllers, which leave when the run ends, have exited); the
per-robot parameter files written for it are removed at shutdown. On Ctrl-C the simulator writes
the results folder (as `make run` does) and prints where.

Before any node starts, the launch looks for another MAES-ROS run (a simulator or a built-in
navigator) on its ROS domain and stops with one line naming the domain if it finds one;
`domain:=auto` picks a free domain instead and says which (maes_common.domain).

Every node gets FASTRTPS_DEFAULT_PROFILES_FILE=config/fastdds_profile.xml (a larger Fast DDS
shared-memory segment and queue, which many robots need), unless that variable is set already.
"""

import asyncio
import dataclasses
import os
import shutil
import tempfile

from ament_index_python import has_resource
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    GroupAction,
    IncludeLaunchDescription,
    LogInfo,
    OpaqueCoroutine,
    OpaqueFunction,
    SetEnvironmentVariable,
)
from launch.event_handlers import OnShutdown
from launch.events import Shutdown as ShutdownEvent
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.logging import get_logger
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node, PushRosNamespace

from maes_bringup.stack.launch_plan import (
    check_packages,
    composes_whole_stack,
    parse_bool,
    plan_launch,
    write_params_files,
)
from maes_bringup.stack.params import dump_params, map_size_tiles
from maes_common.domain import (
    busy_message,
    choose_domain,
    current_domain,
    find_runs,
    parse_domain,
)
from maes_common.lockstep import new_run_id
from maes_sim.core import load_config
from maes_sim.ros.outputs import check_port

SHARE = get_package_share_directory("maes_bringup")

# (name, default, description): each launch argument is declared once, here.
ARGUMENTS = (
    (
        "config",
        os.path.join(SHARE, "config", "maes_config.yaml"),
        "Run configuration (maes_config.yaml format); the simulator reads the same file",
    ),
    ("use_rviz", "false", "Start RViz with rviz/maes.rviz (true/false)"),
    (
        "slam",
        "",
        "Who maps: 'slam_toolbox' (one per robot), 'simulated' (the simulator's "
        "SLAM) or 'occupancy' (the simulator's occupancy grids from each robot's own "
        "scans); empty = the config's stack.slam",
    ),
    (
        "nav",
        "",
        "Who serves navigate_to_pose: 'nav2' (one per robot) or 'builtin' (the "
        "built-in navigator); empty = the config's stack.nav",
    ),
    (
        "nav2_api",
        "false",
        "With the built-in navigator: serve Nav2's whole task interface per robot "
        "(docs/nav2_task_api.md), not only navigate_to_pose (true/false)",
    ),
    (
        "use_composition",
        "false",
        "For many robots (true/false): with the built-in navigator, the simulator's maps and "
        "lockstep, the whole stack in one maes_run process, its parts handed their data "
        "in-process; otherwise every robot's controller in one controller_container process "
        "instead of a controller_node process per robot (about 200 MiB each)",
    ),
    ("log_level", "info", "Log level of every node: debug, info, warn, error or fatal"),
    (
        "sync",
        "lockstep",
        "'lockstep': every tick waits for the controllers (and the built-in "
        "navigator), so results do not depend on the machine; 'free': the "
        "simulator runs on the wall clock alone (docs/lockstep.md)",
    ),
    (
        "real_time_factor",
        "1.0",
        "Most simulated seconds per wall second; 0 = as fast as lockstep allows",
    ),
    (
        "logic",
        "",
        "Every controller's logic callback, 'package.module:function' or "
        "'path/file.py:function' (e.g. maes_controller.algorithms.trs:logic); empty = the "
        "shipped frontier explorer, maes_controller.algorithms.frontier_explorer:logic",
    ),
    (
        "record",
        "",
        "Record the simulator's topics to this .mcap file (or rosbag2 bag folder); "
        "empty = no recording (docs/live_view.md)",
    ),
    (
        "live",
        "false",
        "Serve the live view (true/false): a page to watch the run in a web browser at "
        "http://live_host:live_port/, and Foxglove / Lichtblick on the same port",
    ),
    ("live_host", "127.0.0.1", "Address the live view binds; 0.0.0.0 serves the network"),
    ("live_port", "8765", "TCP port of the live view"),
    (
        "domain",
        "",
        "ROS domain of the nodes: empty = ROS_DOMAIN_ID (else 0); a number; or 'auto': that "
        "one unless another MAES-ROS run uses it, else a free one (the launch says which)",
    ),
)
#: How a user starts this launch (for the one-line message about a busy domain).
COMMAND = "ros2 launch maes_bringup multi_robot.launch.py"
#: Wall seconds the simulator gets after SIGINT before SIGTERM: it writes the results folder.
SIMULATOR_SIGTERM_TIMEOUT = "30"
#: The nodes that take part in the run's lockstep: they get the launch's run id.
RUN_NODES = ("maes_sim_node", "navigator_node", "controller_node", "controller_container")
#: The nodes that exit by themselves when the simulator announces the run's end.
ENDS_WITH_RUN = ("controller_node", "controller_container")
#: Wall seconds the launch waits, once the simulator has finished, for those nodes to exit by
#: themselves before it shuts down what is left.
END_GRACE = 10.0
#: From this many robots on, a launch with a process per controller suggests use_composition.
MANY_ROBOTS = 20
#: The Fast DDS profile every node gets (config/fastdds_profile.xml says why), unless the
#: variable is set already or another RMW is used.
DDS_PROFILE_ENV = "FASTRTPS_DEFAULT_PROFILES_FILE"
DDS_PROFILE = os.path.join(SHARE, "config", "fastdds_profile.xml")
FAST_DDS_RMWS = ("rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")
# The lock file of a domain chosen with domain:=auto, held while the launch runs.
_DOMAIN_LOCKS = []


def _number(argument, text):
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"launch argument {argument}: got {text!r}, expected a number") from None


def _port(text):
    try:
        return check_port(int(text))
    except ValueError:
        raise ValueError(
            f"launch argument live_port: got {text!r}, expected a port from 0 to 65535"
        ) from None


def _end_of_run(followers):
    """on_exit of the node whose exit ends the launch (the simulator). When it finished, the
    launch waits for ``followers`` (the launched ENDS_WITH_RUN nodes, which leave when the run
    ends) to exit by themselves, at most END_GRACE s; then it shuts down what is left.

    Shutting down at once would send SIGINT to controllers in the moment they exit by
    themselves: CPython 3.11's ``Popen.send_signal`` first polls the child and so may reap it
    before asyncio's child watcher does, and launch then reports "Unknown child process pid",
    a clean exit as exit code 255."""

    def on_exit(event, context):
        how = "finished" if event.returncode == 0 else f"exited with code {event.returncode}"
        waiting = followers if event.returncode == 0 else []
        return [OpaqueCoroutine(coroutine=_shut_down_after, args=[waiting, event.action.name, how])]

    return on_exit


async def _shut_down_after(context, followers, name, how):
    futures = [action.get_asyncio_future() for action in followers]
    pending = [future for future in futures if future is not None and not future.done()]
    if pending:
        await asyncio.wait(pending, timeout=END_GRACE)
    if context.is_shutdown:  # Ctrl-C came first
        return
    get_logger("launch").info(f"{name} {how}: shutting down the launched system")
    await context.emit_event(ShutdownEvent(reason=f"{name} {how}"))


def _values_file(spec, out_dir):
    """The node's parameter values as a file in out_dir, which is removed at shutdown (given
    as a dict, launch_ros would write a /tmp/launch_params_* file that nobody removes)."""
    handle, path = tempfile.mkstemp(prefix=f"{spec.name}_", suffix=".yaml", dir=out_dir)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        # Quoted strings: ROS would read a run id such as 320748586e03 as a number.
        stream.write(
            dump_params({"/**": {"ros__parameters": spec.parameter_dict}}, quote_strings=True)
        )
    return path


def _claim_domain(request):
    """Actions that put the nodes on their ROS domain; raises (one line, before any node
    starts) when another MAES-ROS run uses the domain, unless ``request`` is 'auto'."""
    if request == "auto":
        preferred = current_domain()
        domain, found, lock = choose_domain(preferred)
        if domain == preferred:
            return []
        _DOMAIN_LOCKS.append(lock)
        return [
            SetEnvironmentVariable("ROS_DOMAIN_ID", str(domain)),
            LogInfo(
                msg=f"MAES-ROS: ROS domain {preferred} is in use by another MAES-ROS run "
                f"({', '.join(found)}); this launch uses ROS domain {domain} (start tools "
                f"with ROS_DOMAIN_ID={domain})"
            ),
        ]
    domain = parse_domain(request) if request else current_domain()
    found = find_runs(domain)
    if found:
        raise RuntimeError(busy_message("maes_bringup", domain, found, how=COMMAND))
    return [SetEnvironmentVariable("ROS_DOMAIN_ID", str(domain))] if request else []


def _dds_profile():
    """Actions giving every node MAES-ROS's Fast DDS profile: a larger shared-memory segment
    and queue, without which a tick's burst at tens of robots loses samples that are resent
    only 3 s later. Left alone when the user set FASTRTPS_DEFAULT_PROFILES_FILE (even to
    nothing) or runs another RMW."""
    rmw = os.environ.get("RMW_IMPLEMENTATION") or FAST_DDS_RMWS[0]
    if rmw not in FAST_DDS_RMWS or DDS_PROFILE_ENV in os.environ:
        return []
    return [SetEnvironmentVariable(DDS_PROFILE_ENV, DDS_PROFILE)]


def _node(spec, out_dir, run_id, followers):
    # The simulator writes the results folder on SIGINT: give it time before SIGTERM.
    timeouts = {"sigterm_timeout": SIMULATOR_SIGTERM_TIMEOUT} if spec.ends_launch else {}
    if spec.executable in RUN_NODES:  # they take part in this launch's run only
        spec = dataclasses.replace(spec, parameters=(*spec.parameters, ("run_id", run_id)))
    return Node(
        package=spec.package,
        executable=spec.executable,
        name=spec.name if spec.renames else None,
        # (no file for a node without parameters: maes_run holding the whole stack)
        parameters=[
            *spec.params_files,
            *([_values_file(spec, out_dir)] if spec.parameters else []),
        ],
        remappings=list(spec.remappings),
        arguments=list(spec.arguments),
        output="screen",
        on_exit=_end_of_run(followers) if spec.ends_launch else None,
        **timeouts,
    )


def _remove_folder(path):
    def remove(context):
        shutil.rmtree(path, ignore_errors=True)

    return OpaqueFunction(function=remove)


def _include(spec):
    path = os.path.join(get_package_share_directory(spec.package), spec.launch_file)
    return IncludeLaunchDescription(
        PythonLaunchDescriptionSource(path), launch_arguments=list(spec.arguments)
    )


def _launch_setup(context):
    arg = {name: LaunchConfiguration(name).perform(context) for name, _, _ in ARGUMENTS}
    # A ConfigError / MapError / ValueError raised here ends the launch with its message,
    # before any node has been started.
    config = load_config(arg["config"])
    domain_actions = _claim_domain(arg["domain"])
    # Made here, removed at shutdown (and at once if planning fails).
    out_dir = tempfile.mkdtemp(prefix="maes_bringup_params_")
    context.register_event_handler(OnShutdown(on_shutdown=[_remove_folder(out_dir)]))
    plan = plan_launch(
        config,
        config_path=os.path.abspath(arg["config"]),
        slam=arg["slam"] or None,
        nav=arg["nav"] or None,
        use_rviz=parse_bool("use_rviz", arg["use_rviz"]),
        log_level=arg["log_level"],
        params_dir=os.path.join(SHARE, "params"),
        rviz_config=os.path.join(SHARE, "rviz", "maes.rviz"),
        out_dir=out_dir,
        map_size=map_size_tiles(config),
        sync=arg["sync"],
        real_time_factor=_number("real_time_factor", arg["real_time_factor"]),
        logic=arg["logic"] or None,
        nav2_api=parse_bool("nav2_api", arg["nav2_api"]),
        use_composition=parse_bool("use_composition", arg["use_composition"]),
        outputs={
            "record": os.path.abspath(arg["record"]) if arg["record"] else "",
            "live": parse_bool("live", arg["live"]),
            "live_host": arg["live_host"],
            "live_port": _port(arg["live_port"]),
        },
    )
    check_packages(plan, lambda package: has_resource("packages", package))
    write_params_files(plan)
    actions = [
        *domain_actions,
        *_dds_profile(),
        LogInfo(
            msg=f"MAES-ROS: {len(plan.robots)} robots, slam={plan.slam}, "
            f"nav={plan.nav}, config={arg['config']}"
        ),
    ]
    separate = sum(n.executable == "controller_node" for r in plan.robots for n in r.nodes)
    if separate >= MANY_ROBOTS:
        whole = composes_whole_stack(
            slam=plan.slam,
            nav=plan.nav,
            sync=arg["sync"],
            nav2_api=parse_bool("nav2_api", arg["nav2_api"]),
        )
        how = (
            "the whole stack in one process, as make run does"
            if whole
            else "the controllers in one process"
        )
        actions.append(
            LogInfo(
                msg=f"MAES-ROS: {separate} controller_node processes take about "
                f"{separate * 0.2:.0f} GiB; use_composition:=true runs {how}"
            )
        )
    run_id = new_run_id()
    followers = []  # the nodes that end with the run, which the simulator's exit waits for

    def node(spec):
        action = _node(spec, out_dir, run_id, followers)
        if spec.executable in ENDS_WITH_RUN:
            followers.append(action)
        return action

    actions += [node(spec) for spec in plan.nodes]
    for robot in plan.robots:
        actions.append(
            GroupAction(
                [
                    PushRosNamespace(robot.namespace),
                    *[node(spec) for spec in robot.nodes],
                    *[_include(spec) for spec in robot.includes],
                ]
            )
        )
    return actions


def generate_launch_description():
    declared = [
        DeclareLaunchArgument(name, default_value=default, description=description)
        for name, default, description in ARGUMENTS
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=_launch_setup)])
