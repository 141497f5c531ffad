"""config/goat.rviz shows what the graph publishes: every display's topic has a publisher in the running sim bringup,
with the message type that rviz display expects. The Stretch model's /robot_description comes from
robot_state_publisher, which sim.launch.py starts (a ROS install's C++ node, not on PyPI)."""

from __future__ import annotations

import ast
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import close_nodes, require_ros  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from goat_ros.graph import node_factories  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# The message type each rviz display class subscribes with (rviz_default_plugins).
DISPLAY_TYPES = {
    "rviz_default_plugins/Map": "nav_msgs/msg/OccupancyGrid",
    "rviz_default_plugins/MarkerArray": "visualization_msgs/msg/MarkerArray",
    "rviz_default_plugins/Marker": "visualization_msgs/msg/Marker",
    "rviz_default_plugins/Path": "nav_msgs/msg/Path",
    "rviz_default_plugins/Image": "sensor_msgs/msg/Image",
    "rviz_default_plugins/RobotModel": "std_msgs/msg/String",
    "rviz_default_plugins/TF": "tf2_msgs/msg/TFMessage",
}


def displays() -> list[dict[str, Any]]:
    config = yaml.safe_load((ROOT / "config" / "goat.rviz").read_text())
    return list(config["Visualization Manager"]["Displays"])


def display_topic(display: dict[str, Any]) -> str | None:
    if display["Class"] == "rviz_default_plugins/TF":
        return "/tf"
    if display["Class"] == "rviz_default_plugins/RobotModel":
        return str(display["Description Topic"]["Value"])
    topic = display.get("Topic")
    return None if topic is None else str(topic["Value"])


def test_every_display_is_of_a_known_class_and_names_a_topic() -> None:
    shown = [d for d in displays() if d["Class"] != "rviz_default_plugins/Grid"]
    assert shown, "goat.rviz has no displays"
    for d in shown:
        assert d["Class"] in DISPLAY_TYPES, f"display {d['Name']!r}: unknown class {d['Class']}"
        assert display_topic(d), f"display {d['Name']!r} names no topic"
    names = {d["Class"] for d in shown}
    assert {"rviz_default_plugins/Map", "rviz_default_plugins/Image", "rviz_default_plugins/RobotModel"} <= names


def test_the_robot_model_comes_from_the_launch_files_robot_state_publisher() -> None:
    model = [d for d in displays() if d["Class"] == "rviz_default_plugins/RobotModel"]
    assert len(model) == 1 and display_topic(model[0]) == "/robot_description"
    tree = ast.parse((ROOT / "launch" / "sim.launch.py").read_text())
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "stretch_description_node" in called


@pytest.fixture()
def sim_graph(ros: None) -> Iterator[tuple[Any, SingleThreadedExecutor]]:
    executor = SingleThreadedExecutor()
    nodes = [factory() for factory in node_factories("sim", {"sim_bridge": {"republish_rate_hz": 0.0}})]
    probe = rclpy.create_node("rviz_probe")
    for node in [*nodes, probe]:
        executor.add_node(node)
    yield probe, executor
    close_nodes([*reversed(nodes), probe], executor)


@pytest.mark.slow
def test_every_display_topic_is_published_by_the_sim_graph_with_the_expected_type(
        sim_graph: tuple[Any, SingleThreadedExecutor]) -> None:
    probe, executor = sim_graph
    wanted = {display_topic(d): DISPLAY_TYPES[d["Class"]] for d in displays()
              if d["Class"] not in ("rviz_default_plugins/Grid", "rviz_default_plugins/RobotModel")}
    deadline = time.monotonic() + 30.0
    published: dict[str, list[str]] = {}
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.1)
        published = {t: sorted({i.topic_type for i in probe.get_publishers_info_by_topic(t)}) for t in wanted}
        if all(published[t] for t in wanted):
            break
    for topic, msg_type in wanted.items():
        assert published[topic] == [msg_type], f"{topic}: rviz expects {msg_type}, the graph publishes " \
                                               f"{published[topic] or 'nothing'}"
