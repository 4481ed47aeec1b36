"""Per-robot Nav2 / slam_toolbox parameters rewritten from the templates (no ROS needed)."""

from __future__ import annotations

import copy
import doctest
import math
from pathlib import Path

import pytest
import yaml

from maes_bringup.stack import params as P
from maes_sim.core.config import config_from_dict, load_config
from maes_sim.core.motion import (
    ANGULAR_BRAKE_TAU,
    BRAKE_TAU,
    RISE_HALF_LIFE,
    TOP_ANGULAR_SPEED,
    TOP_SPEED,
)

PKG = Path(__file__).resolve().parents[1]
REPO = PKG.parents[1]
NAV2_TEMPLATE = PKG / "params" / "nav2_params.yaml"
SLAM_TEMPLATE = PKG / "params" / "slam_toolbox_params.yaml"
COSTMAPS = ("local_costmap", "global_costmap")
STAMPED_NODES = (
    "controller_server",
    "behavior_server",
    "velocity_smoother",
    "collision_monitor",
    "docking_server",
)
#: The lifecycle nodes nav2_bringup's navigation_launch.py starts in Jazzy (1.3.13, the
#: `lifecycle_nodes` list; route_server since 1.3.9). Each reads its parameters from our file.
NAV2_JAZZY_NODES = (
    "controller_server",
    "smoother_server",
    "planner_server",
    "route_server",
    "behavior_server",
    "velocity_smoother",
    "collision_monitor",
    "bt_navigator",
    "waypoint_follower",
    "docking_server",
)
#: The parameters Jazzy's route server declares (nav2_route/src at 1.3.13): its own, and those
#: of its operation and edge-scorer plugins (``<plugin name>.<key>``, besides ``plugin``).
ROUTE_SERVER_JAZZY_PARAMETERS = frozenset(
    [
        "action_server_result_timeout",
        "aggregate_blocked_ids",
        "base_frame",
        "boundary_radius_to_achieve_node",
        "costmap_topic",
        "edge_cost_functions",
        "enable_nn_search",
        "global_frame",
        "graph_file_loader",
        "graph_file_saver",
        "graph_filepath",
        "max_iterations",
        "max_nn_search_iterations",
        "max_planning_time",
        "max_prune_dist_from_edge",
        "min_prune_dist_from_goal",
        "min_prune_dist_from_start",
        "num_nearest_nodes",
        "operations",
        "path_density",
        "prune_goal",
        "radius_to_achieve_node",
        "route_frame",
        "smooth_corners",
        "smoothing_radius",
        "tracker_update_rate",
        "use_sim_time",
    ]
)
ROUTE_PLUGIN_JAZZY_PARAMETERS = frozenset(
    [
        "plugin",
        "check_resolution",
        "costmap_topic",
        "invalid_off_map",
        "invalid_on_collision",
        "max_collision_dist",
        "max_cost",
        "max_vel",
        "orientation_tolerance",
        "orientation_weight",
        "penalty_tag",
        "rate",
        "reroute_on_collision",
        "semantic_classes",
        "semantic_key",
        "speed_limit_topic",
        "speed_tag",
        "time_tag",
        "use_maximum",
        "use_orientation_threshold",
        "weight",
    ]
)
#: Every parameter Jazzy's slam_toolbox declares that a mapping node reads, from its source
#: (src/*.cpp and solvers/ceres_solver.cpp of the ros2 branch at 2.7.0, which the jazzy branch
#: continues), plus rclcpp's use_sim_time. `min_laser_range` is not one: it was added to the
#: Humble and Rolling branches only (slam_toolbox PRs #713, #714; issue #835).
SLAM_TOOLBOX_JAZZY_PARAMETERS = frozenset(
    [
        "angle_variance_penalty",
        "base_frame",
        "ceres_dogleg_type",
        "ceres_linear_solver",
        "ceres_loss_function",
        "ceres_preconditioner",
        "ceres_trust_strategy",
        "coarse_angle_resolution",
        "coarse_search_angle_offset",
        "correlation_search_space_dimension",
        "correlation_search_space_resolution",
        "correlation_search_space_smear_deviation",
        "debug_logging",
        "distance_variance_penalty",
        "do_loop_closing",
        "enable_interactive_mode",
        "fine_search_angle_offset",
        "interactive_mode",
        "link_match_minimum_response_fine",
        "link_scan_maximum_distance",
        "localization_on_configure",
        "loop_match_maximum_variance_coarse",
        "loop_match_minimum_chain_size",
        "loop_match_minimum_response_coarse",
        "loop_match_minimum_response_fine",
        "loop_search_maximum_distance",
        "loop_search_space_dimension",
        "loop_search_space_resolution",
        "loop_search_space_smear_deviation",
        "map_file_name",
        "map_frame",
        "map_name",
        "map_start_at_dock",
        "map_start_pose",
        "map_update_interval",
        "max_laser_range",
        "minimum_angle_penalty",
        "minimum_distance_penalty",
        "minimum_time_interval",
        "minimum_travel_distance",
        "minimum_travel_heading",
        "mode",
        "odom_frame",
        "paused_new_measurements",
        "paused_processing",
        "position_covariance_scale",
        "resolution",
        "scan_buffer_maximum_scan_distance",
        "scan_buffer_size",
        "scan_queue_size",
        "scan_topic",
        "solver_plugin",
        "stack_size_to_use",
        "tf_buffer_duration",
        "throttle_scans",
        "transform_publish_period",
        "transform_timeout",
        "use_lifecycle_manager",
        "use_map_saver",
        "use_response_expansion",
        "use_scan_barycenter",
        "use_scan_matching",
        "use_sim_time",
        "yaw_covariance_scale",
    ]
)


@pytest.fixture(scope="module")
def nav2_template() -> dict:
    return P.load_template(NAV2_TEMPLATE)


@pytest.fixture(scope="module")
def slam_template() -> dict:
    return P.load_template(SLAM_TEMPLATE)


def costmap(doc: dict, name: str) -> dict:
    return doc[name][name]["ros__parameters"]


def ros(doc: dict, node: str) -> dict:
    return doc[node]["ros__parameters"]


def odd_config(**overrides):
    """Every value differs from the defaults, so a value that is not rewritten shows."""
    data = {
        "number_of_robots": 4,
        "global_settings": {"logic_ticks_delta_millis": 200},
        "robot_constraints": {
            "agent_relative_size": 0.8,
            "slam_raytrace_range": 5.0,
            "relative_move_speed": 2.0,
        },
        "map": {"width_in_tiles": 40, "height_in_tiles": 20},
        "world": {"tile_size": 0.5},
    }
    data.update(overrides)
    return config_from_dict(data)


# --- stack_values -------------------------------------------------------------------------


def test_stack_values_scale_tiles_to_metres():
    v = P.stack_values(odd_config())
    assert v.robot_radius == pytest.approx(0.8 / 2 * 0.5)
    assert v.lidar_range == pytest.approx(5.0 * 0.5)
    assert v.max_linear_speed == pytest.approx(TOP_SPEED * 2.0 * 0.5)
    assert v.max_angular_speed == pytest.approx(TOP_ANGULAR_SPEED * 2.0, abs=1e-6)
    assert v.resolution == pytest.approx(0.5 / P.CELLS_PER_TILE)
    # 2 * 2.5 m of lidar reach, whole metres
    assert v.local_costmap_size == 5
    assert v.global_costmap_size == (20, 10)
    assert v.global_costmap_origin == (-10.0, -5.0)


def test_stack_values_accelerations_follow_the_motion_model():
    v = P.stack_values(odd_config())
    v_max, w_max = TOP_SPEED * 2.0 * 0.5, TOP_ANGULAR_SPEED * 2.0
    rise = math.log(2.0) / RISE_HALF_LIFE
    assert v.linear_accel == pytest.approx(v_max * rise, abs=1e-6)
    assert v.angular_accel == pytest.approx(w_max * rise, abs=1e-6)
    assert v.linear_decel == pytest.approx(v_max / BRAKE_TAU, abs=1e-6)
    assert v.angular_decel == pytest.approx(w_max / ANGULAR_BRAKE_TAU, abs=1e-6)


def test_global_costmap_covers_a_map_whose_size_is_not_whole_metres():
    # 61 x 15 tiles of 0.5 m: 30.5 m x 7.5 m, centred on the world origin.
    v = P.stack_values(odd_config(map={"width_in_tiles": 61, "height_in_tiles": 15}))
    assert v.global_costmap_size == (31, 8)
    assert v.global_costmap_origin == (-15.25, -3.75)
    assert v.global_costmap_origin[0] + v.global_costmap_size[0] >= 15.25


@pytest.mark.parametrize(
    "millis, hz, tolerance",
    [
        (100, 10.0, 0.3),  # MAES default: one command per tick
        (10, 20.0, 0.3),  # capped at 20 Hz; tolerance at least 0.3 s
        (200, 5.0, 0.6),  # 3 ticks
        (2000, 1.0, 6.0),  # at least 1 Hz
    ],
)
def test_timing_follows_the_logic_tick(millis, hz, tolerance):
    v = P.stack_values(config_from_dict({"global_settings": {"logic_ticks_delta_millis": millis}}))
    assert v.controller_frequency == pytest.approx(hz)
    assert v.transform_tolerance == pytest.approx(tolerance)
    assert v.tick_seconds == pytest.approx(millis / 1000)


@pytest.mark.parametrize(
    "model, angle",
    [("maes", P.MAES_ROTATE_MIN_ANGLE), ("differential_drive", P.DIFF_DRIVE_ROTATE_MIN_ANGLE)],
)
def test_rotate_to_heading_angle_depends_on_motion_model(model, angle):
    v = P.stack_values(config_from_dict({"motion": {"model": model}}))
    assert v.rotate_to_heading_min_angle == angle


def test_custom_map_without_size_falls_back_to_lidar_square():
    cfg = load_config(REPO / "configs" / "custom_map_depot.yaml")
    v = P.stack_values(cfg)
    side = v.local_costmap_size
    assert v.global_costmap_size == (side, side)
    assert v.global_costmap_origin == (-side / 2, -side / 2)


def test_custom_map_size_is_read_from_the_file():
    cfg = load_config(REPO / "configs" / "custom_map_depot.yaml")
    width, height = P.map_size_tiles(cfg)
    # The depot is about 30 x 15 m; 0.5 m tiles.
    assert 55 <= width <= 65 and 25 <= height <= 35
    v = P.stack_values(cfg, map_size=(width, height))
    assert v.global_costmap_size == (math.ceil(width * 0.5), math.ceil(height * 0.5))
    assert v.global_costmap_origin == (-width * 0.25, -height * 0.25)


def test_generated_map_size_comes_from_the_config():
    assert P.map_size_tiles(odd_config()) == (40, 20)


@pytest.mark.parametrize("bad", [(0, 10), (10, -1), (True, 10), (10.0, 10), ("10", 10)])
def test_bad_map_size_is_rejected(bad):
    with pytest.raises(ValueError, match="map_size"):
        P.stack_values(odd_config(), map_size=bad)


# --- nav2_params ----------------------------------------------------------------------------


def test_default_config_reproduces_the_nav2_template(nav2_template):
    # The template's numbers are documented as those of the default maes_config.yaml.
    values = P.stack_values(load_config(REPO / "maes_config.yaml"))
    assert P.nav2_params(nav2_template, values, "robot0") == nav2_template


def test_nav2_values_for_an_odd_config(nav2_template):
    v = P.stack_values(odd_config())
    doc = P.nav2_params(nav2_template, v, "robot3")
    for name in COSTMAPS:
        cm = costmap(doc, name)
        assert cm["robot_radius"] == pytest.approx(0.2)
        assert cm["resolution"] == pytest.approx(0.05)
        assert cm["robot_base_frame"] == "base_footprint"
        scan = cm["obstacle_layer"]["scan"]
        assert scan["topic"] == "/robot3/scan"
        assert scan["raytrace_max_range"] == pytest.approx(2.5)
        assert scan["obstacle_max_range"] == pytest.approx(2.5)
        assert cm["inflation_layer"]["inflation_radius"] == pytest.approx(0.2 + 0.25)
        assert cm["inflation_layer"]["cost_scaling_factor"] == pytest.approx(6.0)
    glob = costmap(doc, "global_costmap")
    assert (glob["width"], glob["height"]) == (20, 10)
    assert (glob["origin_x"], glob["origin_y"]) == (-10.0, -5.0)
    assert glob["global_frame"] == "map" and glob["rolling_window"] is False
    assert glob["static_layer"]["map_topic"] == "/robot3/map"
    local = costmap(doc, "local_costmap")
    assert local["rolling_window"] is True and local["global_frame"] == "odom"
    assert (local["width"], local["height"]) == (5, 5)
    rpp = ros(doc, "controller_server")["FollowPath"]
    assert rpp["desired_linear_vel"] == pytest.approx(3.0)
    assert rpp["rotate_to_heading_angular_vel"] == pytest.approx(2 * math.pi, abs=1e-6)
    assert ros(doc, "controller_server")["controller_frequency"] == pytest.approx(5.0)
    smoother = ros(doc, "velocity_smoother")
    assert smoother["max_velocity"] == pytest.approx([3.0, 0.0, 2 * math.pi], abs=1e-6)
    assert smoother["min_velocity"] == pytest.approx([-3.0, 0.0, -2 * math.pi], abs=1e-6)
    assert smoother["max_accel"][0] == pytest.approx(v.linear_accel)
    assert smoother["max_decel"][2] == pytest.approx(-v.angular_decel)
    assert ros(doc, "behavior_server")["max_rotational_vel"] == pytest.approx(v.max_angular_speed)
    assert ros(doc, "collision_monitor")["FootprintApproach"]["radius"] == pytest.approx(0.2)
    assert ros(doc, "bt_navigator")["transform_tolerance"] == pytest.approx(0.6)


@pytest.mark.parametrize("model, angle", [("maes", 0.1), ("differential_drive", 0.785)])
def test_controller_rotates_to_heading_and_never_reverses(nav2_template, model, angle):
    doc = P.nav2_params(
        nav2_template, P.stack_values(odd_config(motion={"model": model})), "robot0"
    )
    rpp = ros(doc, "controller_server")["FollowPath"]
    assert rpp["plugin"].endswith("RegulatedPurePursuitController")
    assert rpp["use_rotate_to_heading"] is True
    assert rpp["allow_reversing"] is False
    assert rpp["rotate_to_heading_min_angle"] == angle


def test_every_robot_frame_and_topic_stays_in_the_namespace(nav2_template):
    doc = P.nav2_params(nav2_template, P.stack_values(odd_config()), "robot2")
    text = P.dump_params(doc)
    # Absolute topics only where Jazzy's costmaps need them, and then the robot's own.
    absolute = {word for word in text.split() if word.startswith("/")}
    assert absolute == {"/robot2/scan", "/robot2/map"}
    assert "base_link" not in text  # MAES robots are driven from base_footprint
    assert ros(doc, "bt_navigator")["odom_topic"] == "odom"


def test_every_node_navigation_launch_starts_has_a_section(nav2_template):
    # A node without a section starts on its defaults: for route_server that is base_link, a
    # frame MAES robots do not have.
    missing = [n for n in NAV2_JAZZY_NODES if "ros__parameters" not in nav2_template.get(n, {})]
    assert missing == []
    for node in NAV2_JAZZY_NODES:
        assert ros(nav2_template, node)["use_sim_time"] is True, node


def test_route_server_uses_the_robot_frames_and_its_own_costmap(nav2_template):
    doc = P.nav2_params(nav2_template, P.stack_values(odd_config()), "robot3")
    route = ros(doc, "route_server")
    assert (route["route_frame"], route["global_frame"], route["base_frame"]) == (
        "map",
        "map",
        "base_footprint",
    )
    # Relative: /robot3/global_costmap/costmap_raw inside the robot's namespace.
    assert route["costmap_topic"] == "global_costmap/costmap_raw"
    assert "graph_filepath" not in route  # no route graph: the server starts empty
    plugins = [p for group in ("operations", "edge_cost_functions") for p in route[group]]
    for plugin in plugins:
        assert route[plugin]["plugin"] == f"nav2_route::{plugin}", plugin
        assert set(route[plugin]) - ROUTE_PLUGIN_JAZZY_PARAMETERS == set(), plugin
    assert set(route) - set(plugins) - ROUTE_SERVER_JAZZY_PARAMETERS == set()


@pytest.mark.parametrize("stamped", [False, True])
def test_cmd_vel_stamped_reaches_every_velocity_node(nav2_template, stamped):
    doc = P.nav2_params(
        nav2_template, P.stack_values(odd_config()), "robot0", cmd_vel_stamped=stamped
    )
    assert {ros(doc, n)["enable_stamped_cmd_vel"] for n in STAMPED_NODES} == {stamped}


def _leaves(doc, path=()):
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _leaves(value, path + (key,))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _leaves(value, path + (i,))
    else:
        yield path, doc


def test_rewriting_keeps_every_key_and_type(nav2_template, slam_template):
    # ROS 2 rejects a parameter whose type changes (an int where Nav2 declared a double).
    v = P.stack_values(odd_config(world={"tile_size": 2.0}))
    for template, doc in (
        (nav2_template, P.nav2_params(nav2_template, v, "robot1")),
        (slam_template, P.slam_toolbox_params(slam_template, v, "robot1")["robot1"]),
    ):
        before, after = dict(_leaves(template)), dict(_leaves(doc))
        assert before.keys() == after.keys()
        changed = [p for p in before if before[p] != after[p]]
        assert changed, "the odd config changes some values"
        for path in before:
            assert type(after[path]) is type(before[path]), path


def test_rewriting_leaves_the_template_alone(nav2_template):
    pristine = copy.deepcopy(nav2_template)
    P.nav2_params(nav2_template, P.stack_values(odd_config()), "robot5")
    assert nav2_template == pristine


def test_template_missing_a_rewritten_key_is_an_error(nav2_template):
    broken = copy.deepcopy(nav2_template)
    del broken["global_costmap"]["global_costmap"]["ros__parameters"]["static_layer"]
    with pytest.raises(
        ValueError,
        match=r"global_costmap\.global_costmap\.ros__parameters"
        r"\.static_layer",
    ):
        P.nav2_params(broken, P.stack_values(odd_config()), "robot0")


@pytest.mark.parametrize("namespace", ["", "/robot0", "a/b", None])
def test_namespace_must_be_a_plain_name(nav2_template, namespace):
    with pytest.raises(ValueError, match="namespace"):
        P.nav2_params(nav2_template, P.stack_values(odd_config()), namespace)


# --- slam_toolbox_params --------------------------------------------------------------------


def test_default_config_reproduces_the_slam_template(slam_template):
    values = P.stack_values(load_config(REPO / "maes_config.yaml"))
    assert P.slam_toolbox_params(slam_template, values, "robot0") == {"robot0": slam_template}


def test_slam_toolbox_values(slam_template):
    doc = P.slam_toolbox_params(slam_template, P.stack_values(odd_config()), "robot3")
    assert list(doc) == ["robot3"]  # matches the node /robot3/slam_toolbox
    p = doc["robot3"]["slam_toolbox"]["ros__parameters"]
    assert p["resolution"] == pytest.approx(0.05)
    assert p["max_laser_range"] == pytest.approx(2.5)
    assert (p["map_frame"], p["odom_frame"], p["base_frame"]) == ("map", "odom", "base_footprint")
    assert p["scan_topic"] == "scan"
    assert p["mode"] == "mapping"
    assert p["minimum_travel_distance"] == pytest.approx(0.25)
    assert p["minimum_time_interval"] == pytest.approx(0.2)
    assert p["transform_timeout"] == pytest.approx(0.6)
    assert p["use_sim_time"] is True


def test_slam_template_uses_only_parameters_jazzy_declares(slam_template):
    keys = set(ros(slam_template, "slam_toolbox"))
    assert keys - SLAM_TOOLBOX_JAZZY_PARAMETERS == set()
    assert "min_laser_range" not in keys


# --- I/O --------------------------------------------------------------------------------------


def test_dump_params_round_trips(nav2_template):
    doc = P.nav2_params(nav2_template, P.stack_values(odd_config()), "robot1")
    assert yaml.safe_load(P.dump_params(doc)) == doc


def test_load_template_errors_name_the_file(tmp_path):
    with pytest.raises(ValueError, match="missing.yaml"):
        P.load_template(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="list.yaml.*mapping"):
        P.load_template(tmp_path / "list.yaml")
    (tmp_path / "bad.yaml").write_text("a: [1, 2\n")
    with pytest.raises(ValueError, match="bad.yaml.*not valid YAML"):
        P.load_template(tmp_path / "bad.yaml")


def test_docstring_examples():
    result = doctest.testmod(P, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
