"""The launch plan (what multi_robot.launch.py starts), tested without ``launch`` installed.

The launch file is also checked here by compiling it and reading its syntax tree, so these
tests hold where ``launch`` is absent (a user's pip environment); ``test_launch.py`` runs it for
real with ``ros2 launch`` where the launch stack is installed.
"""

from __future__ import annotations

import ast
import doctest
import inspect
import itertools
import py_compile
from pathlib import Path

import pytest
import yaml

from maes_bringup.stack import launch_plan as L
from maes_common.contract import DEFAULT_LOGIC
from maes_sim.core.config import config_from_dict

PKG = Path(__file__).resolve().parents[1]
PARAMS_DIR = PKG / "params"
LAUNCH_FILE = PKG / "launch" / "multi_robot.launch.py"
RVIZ = "/share/maes_bringup/rviz/maes.rviz"
MODES = list(itertools.product(L.SLAM_CHOICES, L.NAV_CHOICES))


def make_plan(n=3, tmp="/tmp/maes-plan", config=None, **kwargs):
    cfg = config or config_from_dict({"number_of_robots": n})
    kwargs.setdefault("config_path", "/cfg/run.yaml")
    return L.plan_launch(cfg, params_dir=PARAMS_DIR, rviz_config=RVIZ, out_dir=tmp, **kwargs)


def all_nodes(plan):
    """(namespace or None, NodeSpec) for every node of the plan."""
    yield from ((None, n) for n in plan.nodes)
    for robot in plan.robots:
        yield from ((robot.namespace, n) for n in robot.nodes)


def names(nodes):
    return [n.name for n in nodes]


# --- what starts, per mode ----------------------------------------------------------------


@pytest.mark.parametrize("slam, nav", MODES)
@pytest.mark.parametrize("n", [1, 3])
def test_node_counts_per_mode(slam, nav, n):
    plan = make_plan(n, slam=slam, nav=nav)
    assert (plan.slam, plan.nav) == (slam, nav)
    assert [r.namespace for r in plan.robots] == [f"robot{i}" for i in range(n)]
    assert [r.index for r in plan.robots] == list(range(n))
    expected_global = ["maes_sim"] + (["navigator"] if nav == "builtin" else [])
    assert names(plan.nodes) == expected_global
    per_robot = (["slam_toolbox", "lifecycle_manager_slam"] if slam == "slam_toolbox" else []) + [
        "controller"
    ]
    for robot in plan.robots:
        assert names(robot.nodes) == per_robot
        assert len(robot.includes) == (1 if nav == "nav2" else 0)
    assert len(plan.files) == n * ((nav == "nav2") + (slam == "slam_toolbox"))


def test_executables_are_the_documented_ones():
    plan = make_plan(2, slam="slam_toolbox", nav="nav2", use_rviz=True)
    found = {(n.package, n.executable) for _, n in all_nodes(plan)}
    assert found == {
        ("maes_sim", "maes_sim_node"),
        ("maes_controller", "controller_node"),
        ("slam_toolbox", "async_slam_toolbox_node"),
        ("nav2_lifecycle_manager", "lifecycle_manager"),
        ("rviz2", "rviz2"),
    }
    include = plan.robots[0].includes[0]
    assert (include.package, include.launch_file) == ("nav2_bringup", "launch/navigation_launch.py")
    builtin = make_plan(2, nav="builtin").node("navigator")
    assert (builtin.package, builtin.executable) == ("maes_bringup", "navigator_node")


@pytest.mark.parametrize("slam, nav", MODES)
def test_every_node_but_the_simulator_uses_sim_time(slam, nav):
    plan = make_plan(2, slam=slam, nav=nav, use_rviz=True)
    for ns, node in all_nodes(plan):
        # The simulator publishes /clock and paces itself on wall time: on sim time it would
        # wait for its own clock forever.
        expected = node.name != "maes_sim"
        assert node.parameter_dict["use_sim_time"] is expected, (ns, node.name)
    for robot in plan.robots:
        for include in robot.includes:
            assert include.argument_dict["use_sim_time"] == "True"


@pytest.mark.parametrize("slam, nav", MODES)
def test_namespaced_nodes_use_the_namespace_tf(slam, nav):
    plan = make_plan(2, slam=slam, nav=nav)
    for ns, node in all_nodes(plan):
        remaps = dict(node.remappings)
        if node.package == "nav2_lifecycle_manager":
            continue  # only calls lifecycle services; no TF
        if ns is None:
            assert "/tf" not in remaps, node.name  # global nodes keep the global /tf
        else:
            assert remaps["/tf"] == "tf" and remaps["/tf_static"] == "tf_static", node.name


def test_slam_toolbox_keeps_its_map_in_the_namespace():
    plan = make_plan(2, slam="slam_toolbox")
    for robot in plan.robots:
        slam_node, manager = robot.nodes[0], robot.nodes[1]
        remaps = dict(slam_node.remappings)
        assert remaps["/map"] == "map" and remaps["/map_metadata"] == "map_metadata"
        # The lifecycle manager brings up exactly this node, without a bond.
        params = manager.parameter_dict
        assert params["node_names"] == [slam_node.name]
        assert params["autostart"] is True and params["bond_timeout"] == 0.0


@pytest.mark.parametrize("slam", L.SLAM_CHOICES)
def test_simulator_publishes_maps_only_when_it_builds_them(slam):
    sim = make_plan(2, slam=slam).node("maes_sim").parameter_dict
    assert sim["publish_slam_map"] is (slam in ("simulated", "occupancy"))
    assert sim["slam"] == slam  # the simulator maps as the launch says
    assert sim["config_file"] == "/cfg/run.yaml"
    assert sim["real_time_factor"] == 1.0


@pytest.mark.parametrize("slam, nav", MODES)
def test_only_the_simulators_exit_ends_the_launch(slam, nav):
    plan = make_plan(2, slam=slam, nav=nav, use_rviz=True)
    ending = [node.name for _, node in all_nodes(plan) if node.ends_launch]
    assert ending == ["maes_sim"]


@pytest.mark.parametrize(
    "slam, nav, rviz, expected",
    [
        ("simulated", "builtin", False, ()),
        ("simulated", "builtin", True, ("rviz2",)),
        ("slam_toolbox", "builtin", False, ("nav2_lifecycle_manager", "slam_toolbox")),
        ("simulated", "nav2", False, ("nav2_bringup",)),
        (
            "slam_toolbox",
            "nav2",
            True,
            ("nav2_bringup", "nav2_lifecycle_manager", "rviz2", "slam_toolbox"),
        ),
    ],
)
def test_required_packages_per_mode(slam, nav, rviz, expected):
    plan = make_plan(2, slam=slam, nav=nav, use_rviz=rviz)
    assert L.required_packages(plan) == expected
    L.check_packages(plan, lambda name: True)  # all installed: nothing to say


def test_missing_packages_are_named_with_the_argument_and_how_to_get_them():
    plan = make_plan(2, slam="slam_toolbox", nav="nav2")
    installed = {"nav2_lifecycle_manager"}
    with pytest.raises(L.MissingPackageError) as info:
        L.check_packages(plan, installed.__contains__)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(
        "nav:=nav2 and slam:=slam_toolbox need the ROS 2 packages "
        "nav2_bringup, slam_toolbox, which are not installed here"
    )
    assert "Docker image" in message
    assert "sudo apt install ros-jazzy-nav2-bringup ros-jazzy-slam-toolbox" in message
    with pytest.raises(
        L.MissingPackageError,
        match="^use_rviz:=true needs the ROS 2 package rviz2, which is not installed",
    ):
        L.check_packages(make_plan(1, use_rviz=True), lambda name: False)


def test_controllers_know_their_robot():
    plan = make_plan(4)
    ids = [r.nodes[-1].parameter_dict["robot_id"] for r in plan.robots]
    assert ids == [0, 1, 2, 3]


def test_the_logic_argument_reaches_every_controller_and_is_checked():
    spec = "maes_controller.algorithms.trs:logic"
    plan = make_plan(3, logic=spec)
    assert [r.nodes[-1].parameter_dict["logic"] for r in plan.robots] == [spec] * 3
    for default in (None, ""):  # the shipped example, named explicitly
        assert [
            r.nodes[-1].parameter_dict["logic"] for r in make_plan(2, logic=default).robots
        ] == [DEFAULT_LOGIC] * 2
    with pytest.raises(ValueError, match=r"launch argument logic: .*no_such_module"):
        make_plan(2, logic="no_such_module:logic")


@pytest.mark.parametrize("slam, nav", MODES)
def test_composition_moves_every_controller_into_one_container_unchanged(slam, nav):
    """use_composition: the robots' groups lose their controller_node, one global
    controller_container gets each one's parameters under robot<i>. (robots of two types with
    their own top speeds), and the launch must not rename it (that would rename every node in
    it)."""
    config = config_from_dict(
        {
            "number_of_robots": 3,
            "robot_types": {"fast": {"relative_move_speed": 1.5}},
            "team": [{"type": "fast", "count": 1}, {"type": "default", "count": 2}],
        }
    )
    # With MAES-ROS's own navigator and maps, composition takes the whole stack into one
    # process (the test below); serving Nav2's task interface keeps the container.
    whole = L.composes_whole_stack(slam=slam, nav=nav, sync="lockstep", nav2_api=False)
    extra = {"nav2_api": True} if whole else {}
    apart = make_plan(config=config, slam=slam, nav=nav, **extra)
    composed = make_plan(config=config, slam=slam, nav=nav, use_composition=True, **extra)
    [container] = [n for n in composed.nodes if n.executable == "controller_container"]
    assert not container.renames and all(n.renames for n in apart.nodes)
    values = container.parameter_dict
    assert values["robot_ids"] == [0, 1, 2] and values["use_sim_time"] is True
    for robot, robot_apart in zip(composed.robots, apart.robots, strict=True):
        [controller] = [n for n in robot_apart.nodes if n.executable == "controller_node"]
        assert [n for n in robot.nodes if n.package == "maes_controller"] == []
        assert robot.nodes == tuple(n for n in robot_apart.nodes if n is not controller)
        assert robot.includes == robot_apart.includes
        mine = {
            key.split(".", 1)[1]: value
            for key, value in values.items()
            if key.startswith(f"{robot.namespace}.")
        }
        expected = dict(controller.parameter_dict)
        assert expected.pop("robot_id") == robot.index and expected.pop("use_sim_time")
        assert mine == expected
        assert container.remappings == controller.remappings
    speeds = [values[f"robot{i}.max_speed"] for i in range(3)]
    assert speeds[0] == 1.5 * speeds[1] and speeds[1] == speeds[2]
    assert L.parse_bool("use_composition", "false") is False
    with pytest.raises(ValueError, match="launch argument use_composition: got 'maybe'"):
        make_plan(use_composition="maybe")


@pytest.mark.parametrize("slam", L.SIMULATOR_SLAM_MODES)
def test_composition_of_the_own_stack_is_one_maes_run_process(slam):
    """use_composition with the built-in navigator, the simulator's maps and lockstep: one
    ``maes_run`` process holds the simulator, the navigator and the controllers (the launch
    must not rename it: it holds many nodes). Its command line, read by maes_run's own parser,
    carries the launch's config, logic, slam, speed, outputs and log level."""
    from maes_bringup.runners.embedded import parse_args

    plan = make_plan(
        4,
        slam=slam,
        nav="builtin",
        use_composition=True,
        logic="maes_controller.algorithms.trs:logic",
        real_time_factor=0,
        log_level="warn",
        use_rviz=True,
        outputs={"record": "/tmp/run.mcap", "live": True, "live_host": "0.0.0.0", "live_port": 0},
    )
    assert [(n.package, n.executable) for n in plan.nodes] == [
        ("maes_bringup", "maes_run"),
        ("rviz2", "rviz2"),
    ]
    stack = plan.nodes[0]
    assert stack.ends_launch and not stack.renames and stack.parameters == ()
    assert [r.namespace for r in plan.robots] == [f"robot{i}" for i in range(4)]
    assert all(r.nodes == () and r.includes == () for r in plan.robots)
    assert plan.files == ()
    args = parse_args(list(stack.arguments))
    assert (args.config, args.logic, args.slam) == (
        "/cfg/run.yaml",
        "maes_controller.algorithms.trs:logic",
        slam,
    )
    assert args.controllers == "builtin" and args.real_time_factor == 0.0
    assert (args.record, args.live, args.live_host) == ("/tmp/run.mcap", 0, "0.0.0.0")
    ros = args.ros_argv
    assert ros[ros.index("--ros-args") :] == ["--ros-args", "--log-level", "warn"]
    quiet = parse_args(list(make_plan(2, nav="builtin", use_composition=True).nodes[0].arguments))
    assert (quiet.record, quiet.live, quiet.real_time_factor) == (None, None, 1.0)
    # What keeps the controllers in a container of their own, talking over DDS:
    for other in ({"sync": "free"}, {"nav2_api": True}, {"slam": "slam_toolbox"}, {"nav": "nav2"}):
        kwargs = {"slam": slam, "nav": "builtin", **other}
        executables = [n.executable for n in make_plan(2, use_composition=True, **kwargs).nodes]
        assert "controller_container" in executables and "maes_run" not in executables, other


def test_builtin_navigator_serves_every_robot_from_the_config():
    plan = make_plan(5, nav="builtin")
    assert names(plan.nodes).count("navigator") == 1
    assert plan.node("navigator").parameter_dict["config_file"] == "/cfg/run.yaml"


def test_nav2_include_arguments(tmp_path):
    plan = make_plan(2, tmp=tmp_path, nav="nav2", log_level="debug")
    for robot in plan.robots:
        args = robot.includes[0].argument_dict
        assert args == {
            "namespace": robot.namespace,
            "use_sim_time": "True",
            "params_file": str(tmp_path / robot.namespace / "nav2_params.yaml"),
            "autostart": "True",
            "use_composition": "False",
            "use_respawn": "False",
            "log_level": "debug",
        }
        assert all(isinstance(value, str) for value in args.values())


def test_rviz_only_when_asked():
    assert "rviz2" not in names(make_plan(1).nodes)
    rviz = make_plan(1, use_rviz=True).node("rviz2")
    assert rviz.arguments[:2] == ("-d", RVIZ)
    assert make_plan(1, use_rviz="true").node("rviz2") == rviz


def test_log_level_reaches_every_node():
    plan = make_plan(2, slam="slam_toolbox", nav="builtin", log_level="warn")
    for _, node in all_nodes(plan):
        assert node.arguments[-3:] == ("--ros-args", "--log-level", "warn")


# --- defaults and overrides -----------------------------------------------------------------


def test_modes_default_to_the_config_stack_section():
    cfg = config_from_dict(
        {"number_of_robots": 2, "stack": {"slam": "slam_toolbox", "nav": "nav2"}}
    )
    plan = make_plan(config=cfg)
    assert (plan.slam, plan.nav) == ("slam_toolbox", "nav2")
    # Empty launch arguments mean "from the config" too.
    assert make_plan(config=cfg, slam="", nav="").slam == "slam_toolbox"
    overridden = make_plan(config=cfg, slam="simulated", nav="builtin")
    assert (overridden.slam, overridden.nav) == ("simulated", "builtin")


def test_default_config_runs_the_embedded_choices():
    plan = make_plan(3)
    assert (plan.slam, plan.nav) == ("simulated", "builtin")


@pytest.mark.parametrize(
    "argument, value, allowed",
    [
        ("slam", "gmapping", "'simulated', 'occupancy', 'slam_toolbox'"),
        ("nav", "move_base", "'builtin', 'nav2'"),
        ("log_level", "verbose", "'debug', 'info', 'warn', 'error', 'fatal'"),
    ],
)
def test_unknown_choice_names_argument_and_allowed_values(argument, value, allowed):
    with pytest.raises(ValueError) as err:
        make_plan(1, **{argument: value})
    message = str(err.value)
    assert f"launch argument {argument}" in message
    assert repr(value) in message and allowed in message


@pytest.mark.parametrize(
    "text, expected", [("true", True), ("False", False), ("1", True), ("off", False), (True, True)]
)
def test_parse_bool(text, expected):
    assert L.parse_bool("use_rviz", text) is expected


def test_parse_bool_rejects_other_words():
    with pytest.raises(ValueError, match="use_rviz.*'maybe'.*true or false"):
        L.parse_bool("use_rviz", "maybe")
    with pytest.raises(ValueError, match="use_rviz"):
        make_plan(1, use_rviz="maybe")


def test_config_must_be_loaded_first():
    with pytest.raises(TypeError, match="SimConfig"):
        L.plan_launch(
            {"number_of_robots": 2},
            config_path="c.yaml",
            params_dir=PARAMS_DIR,
            rviz_config=RVIZ,
            out_dir="/tmp/x",
        )


def test_missing_template_folder_is_reported(tmp_path):
    with pytest.raises(ValueError, match="nav2_params.yaml"):
        L.plan_launch(
            config_from_dict({}),
            config_path="c.yaml",
            nav="nav2",
            params_dir=tmp_path,
            rviz_config=RVIZ,
            out_dir=tmp_path,
        )


# --- the parameter files ----------------------------------------------------------------------


def test_plan_writes_nothing_and_write_params_files_writes_all(tmp_path):
    plan = make_plan(3, tmp=tmp_path / "out", slam="slam_toolbox", nav="nav2")
    assert not (tmp_path / "out").exists()
    written = L.write_params_files(plan)
    assert sorted(written) == sorted(f.path for f in plan.files)
    for robot in plan.robots:
        nav2_file = Path(robot.includes[0].argument_dict["params_file"])
        slam_file = Path(robot.nodes[0].params_files[0])
        assert nav2_file.parent == slam_file.parent == tmp_path / "out" / robot.namespace
        nav2 = yaml.safe_load(nav2_file.read_text())
        assert (
            (
                nav2["global_costmap"]["global_costmap"]["ros__parameters"]["static_layer"][
                    "map_topic"
                ]
            )
            == f"/{robot.namespace}/map"
        )
        slam = yaml.safe_load(slam_file.read_text())
        assert list(slam) == [robot.namespace]


def test_map_size_reaches_the_costmap(tmp_path):
    plan = make_plan(1, tmp=tmp_path, nav="nav2", map_size=(80, 40))
    doc = yaml.safe_load(plan.files[0].text)
    glob = doc["global_costmap"]["global_costmap"]["ros__parameters"]
    assert (glob["width"], glob["height"], glob["origin_x"]) == (80, 40, -40.0)


@pytest.mark.parametrize("stamped", [False, True])
def test_simulator_and_nav2_agree_on_stamped_cmd_vel(stamped):
    plan = make_plan(1, nav="nav2", cmd_vel_stamped=stamped)
    assert plan.node("maes_sim").parameter_dict["cmd_vel_stamped"] is stamped
    doc = yaml.safe_load(plan.files[0].text)
    assert doc["controller_server"]["ros__parameters"]["enable_stamped_cmd_vel"] is stamped


def test_plan_is_deterministic():
    assert make_plan(3, slam="slam_toolbox", nav="nav2") == make_plan(
        3, slam="slam_toolbox", nav="nav2"
    )


def test_ros_parameters_lists_files_before_values():
    node = make_plan(1, slam="slam_toolbox").robots[0].nodes[0]
    params = node.ros_parameters()
    assert params[0] == node.params_files[0]
    assert params[1] == {"use_sim_time": True}


def test_docstring_examples():
    result = doctest.testmod(L)
    assert result.attempted > 0 and result.failed == 0


# --- the launch file (compiled and read, never imported) -----------------------------------


@pytest.fixture(scope="module")
def launch_tree(tmp_path_factory) -> ast.Module:
    cfile = tmp_path_factory.mktemp("pyc") / "multi_robot.launch.pyc"
    py_compile.compile(str(LAUNCH_FILE), cfile=str(cfile), doraise=True)
    return ast.parse(LAUNCH_FILE.read_text(), filename=str(LAUNCH_FILE))


def _arguments_table(tree: ast.Module) -> list[tuple]:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "ARGUMENTS" for t in stmt.targets
        ):
            return [tuple(elt.elts) for elt in stmt.value.elts]
    raise AssertionError("multi_robot.launch.py has no ARGUMENTS table")


def test_launch_declares_each_argument_once_with_a_description(launch_tree):
    table = _arguments_table(launch_tree)
    declared = [row[0].value for row in table]
    assert sorted(declared) == sorted(
        ["config", "use_rviz", "slam", "nav", "log_level", "sync", "real_time_factor", "logic"]
        + ["record", "live", "live_host", "live_port"]  # docs/live_view.md
        + ["nav2_api"]  # docs/nav2_task_api.md
        + ["domain"]  # docs/lockstep.md: one run per ROS domain
        + ["use_composition"]  # docs/running.md: many robots, one controller process
    )
    assert len(set(declared)) == len(declared)
    for name, _default, description in table:
        assert isinstance(description, ast.Constant) and len(description.value) > 15, name.value
    defaults = {row[0].value: row[1] for row in table}
    assert defaults["use_rviz"].value == "false"
    assert defaults["use_composition"].value == "false"
    assert defaults["log_level"].value == "info"
    # The installed default config: <share>/config/maes_config.yaml
    assert "maes_config.yaml" in ast.unparse(defaults["config"])
    assert "'config'" in ast.unparse(defaults["config"])
    calls = [
        n
        for n in ast.walk(launch_tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "DeclareLaunchArgument"
    ]
    assert len(calls) == 1  # one declaration, looped over ARGUMENTS


def test_launch_loads_the_config_and_plans_before_starting_nodes(launch_tree):
    setup = next(
        n for n in launch_tree.body if isinstance(n, ast.FunctionDef) and n.name == "_launch_setup"
    )
    called = [
        getattr(c.func, "id", getattr(c.func, "attr", None))
        for c in ast.walk(setup)
        if isinstance(c, ast.Call)
    ]
    order = [
        name
        for name in called
        if name
        in (
            "load_config",
            "plan_launch",
            "check_packages",
            "write_params_files",
            "_node",
            "GroupAction",
        )
    ]
    assert order[:4] == ["load_config", "plan_launch", "check_packages", "write_params_files"]
    assert {"PushRosNamespace", "GroupAction", "_include"} <= set(called)
    # The loader's errors are not swallowed: no try/except in the setup.
    assert not any(isinstance(n, ast.Try) for n in ast.walk(setup))
    imported = {
        alias.name
        for n in ast.walk(launch_tree)
        if isinstance(n, ast.ImportFrom)
        for alias in n.names
    }
    assert {"load_config", "plan_launch", "check_packages", "OpaqueFunction"} <= imported


def test_launch_uses_only_what_the_plan_offers(launch_tree):
    # The launch file cannot run here; at least every plan attribute and keyword it uses
    # must exist, so a rename in launch_plan.py cannot silently break it.
    owners = {"spec": (L.NodeSpec, L.IncludeSpec), "robot": (L.RobotPlan,), "plan": (L.LaunchPlan,)}
    used = {
        (n.value.id, n.attr)
        for n in ast.walk(launch_tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in owners
    }
    assert {name for name, _ in used} == set(owners)
    for name, attr in used:
        assert any(
            hasattr(cls, attr) or attr in cls.__dataclass_fields__ for cls in owners[name]
        ), f"{name}.{attr}"
    call = next(
        n
        for n in ast.walk(launch_tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "plan_launch"
    )
    signature = inspect.signature(L.plan_launch)
    signature.bind(*[None] * len(call.args), **{k.arg: None for k in call.keywords})
    assert {k.arg for k in call.keywords} >= {
        "config_path",
        "slam",
        "nav",
        "use_rviz",
        "log_level",
        "params_dir",
        "rviz_config",
        "out_dir",
        "map_size",
    }


@pytest.mark.parametrize("nav", ["builtin", "nav2"])
def test_simulator_runs_in_lockstep_with_a_start_barrier(nav):
    sim = make_plan(2, slam="simulated", nav=nav).node("maes_sim").parameter_dict
    assert sim["sync"] == "lockstep" and sim["wait_for_controllers"] == "lockstep"
    # Nav2 does not take part in lockstep, so only the built-in navigator is waited for.
    assert sim["wait_for_navigator"] is (nav == "builtin")
    assert sim["real_time_factor"] == 1.0
    # The controllers say who serves navigate_to_pose: with Nav2 they join at once and their
    # goals wait for its activation (docs/full_stack.md, "How the full stack starts").
    plan = make_plan(2, slam="simulated", nav=nav)
    assert [r.nodes[-1].parameter_dict["navigator"] for r in plan.robots] == [nav, nav]


def test_sync_and_speed_are_launch_choices():
    sim = make_plan(1, sync="free", real_time_factor=0).node("maes_sim").parameter_dict
    assert sim["sync"] == "free" and sim["real_time_factor"] == 0.0
    with pytest.raises(ValueError, match="sync"):
        make_plan(1, sync="lock")
    with pytest.raises(ValueError, match="real_time_factor"):
        make_plan(1, real_time_factor=-1)
