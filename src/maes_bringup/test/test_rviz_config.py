"""rviz/maes.rviz: valid YAML naming every MAES topic with the right display and QoS."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

RVIZ = Path(__file__).resolve().parents[1] / "rviz" / "maes.rviz"
MAP = "rviz_default_plugins/Map"

# topic -> (display class, colour scheme for maps)
WORLD_VIEW = {
    "/maes/ground_truth": (MAP, "map"),
    "/maes/exploration": (MAP, "costmap"),
    "/maes/coverage": (MAP, "costmap"),
    "/maes/markers": ("rviz_default_plugins/MarkerArray", None),
}
ROBOT0_VIEW = {
    "/robot0/map": (MAP, "map"),
    "/robot0/scan": ("rviz_default_plugins/LaserScan", None),
    "/robot0/global_costmap/costmap": (MAP, "costmap"),
    "/robot0/plan": ("rviz_default_plugins/Path", None),
}
# Published transient-local (latched) by the simulator / Nav2: a volatile subscriber would
# miss the last map sent before RViz started.
LATCHED = {
    "/maes/ground_truth",
    "/maes/exploration",
    "/maes/coverage",
    "/robot0/map",
    "/robot0/global_costmap/costmap",
}


@pytest.fixture(scope="module")
def config() -> dict:
    doc = yaml.safe_load(RVIZ.read_text())
    assert isinstance(doc, dict)
    return doc


def walk(displays, group=None, group_enabled=True):
    """(group name, enabled including its group, display) for every display, depth first."""
    for display in displays:
        enabled = group_enabled and display.get("Enabled", True)
        if display["Class"] == "rviz_common/Group":
            yield from walk(display["Displays"], display["Name"], enabled)
        else:
            yield group, enabled, display


@pytest.fixture(scope="module")
def displays(config) -> list:
    return list(walk(config["Visualization Manager"]["Displays"]))


def by_topic(displays) -> dict:
    found = {}
    for group, enabled, display in displays:
        topic = display.get("Topic", {}).get("Value")
        if topic:
            assert topic not in found, f"{topic} shown twice"
            found[topic] = (group, enabled, display)
    return found


def test_fixed_frame_is_world(config):
    assert config["Visualization Manager"]["Global Options"]["Fixed Frame"] == "world"


@pytest.mark.parametrize("topic", sorted({**WORLD_VIEW, **ROBOT0_VIEW}))
def test_each_topic_has_the_right_display(displays, topic):
    cls, scheme = {**WORLD_VIEW, **ROBOT0_VIEW}[topic]
    _, _, display = by_topic(displays)[topic]
    assert display["Class"] == cls
    if scheme is not None:
        assert display["Color Scheme"] == scheme


def test_global_tf_is_shown(displays):
    tf = [(g, on, d) for g, on, d in displays if d["Class"] == "rviz_default_plugins/TF"]
    assert len(tf) == 1
    group, enabled, display = tf[0]
    assert enabled and display["Frames"]["All Enabled"] is True


def test_world_view_is_on_and_robot_view_is_off(displays):
    topics = by_topic(displays)
    for topic in ("/maes/ground_truth", "/maes/exploration", "/maes/markers"):
        assert topics[topic][1], f"{topic} should be on by default"
    # robot0's frames live in its own TF tree, absent from the world view: off by default.
    for topic in ROBOT0_VIEW:
        group, enabled, display = topics[topic]
        assert group.startswith("robot0") and not enabled
        assert display["Enabled"] is True  # on once the group is ticked


def test_only_robot0_has_per_robot_displays(displays):
    per_robot = {t for t in by_topic(displays) if t.startswith("/robot")}
    assert per_robot == set(ROBOT0_VIEW)


@pytest.mark.parametrize("topic", sorted({**WORLD_VIEW, **ROBOT0_VIEW}))
def test_qos_matches_the_publishers(displays, topic):
    qos = by_topic(displays)[topic][2]["Topic"]
    expected_durability = "Transient Local" if topic in LATCHED else "Volatile"
    assert qos["Durability Policy"] == expected_durability
    # The scan is published with the sensor-data profile (best effort).
    expected_reliability = "Best Effort" if topic.endswith("/scan") else "Reliable"
    assert qos["Reliability Policy"] == expected_reliability
