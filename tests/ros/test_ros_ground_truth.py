"""The simulator's true pose is published for evaluation only: no agent node of any bringup subscribes to it, and
under the stretch realism profile the bridge's /odom drifts away from it."""

from __future__ import annotations

import math
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from goat_core.types import DiscreteAction  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_ros.graph import BRINGUPS, node_factories  # noqa: E402

EVALUATION_NODES = {"sim_bridge", "evaluator", "recorder", "live_view"}  # may see the truth; none of them steers


def test_no_agent_node_reads_the_true_pose() -> None:
    """Start the sim bringup's nodes (the bridge with the stretch profile) and a probe: the truth topic has the
    bridge as its publisher and no subscriber but the probe; /odom and the truth part after a few actions."""
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Any] = []
    try:
        overrides = {"sim_bridge": {"realism": "stretch", "realism_seed": 3, "startup_publish_delay_s": 0.2}}
        nodes = [make() for make in node_factories("sim", overrides)]
        probe = rclpy.create_node("truth_probe")
        nodes.append(probe)
        got: dict[str, Odometry] = {}
        probe.create_subscription(Odometry, topics.GROUND_TRUTH_ODOM, lambda m: got.__setitem__("truth", m), 10)
        probe.create_subscription(Odometry, topics.ODOM, lambda m: got.__setitem__("odom", m), 10)
        for node in nodes:
            executor.add_node(node)
        spin_until(executor, lambda: "truth" in got and "odom" in got, 60.0, "the first observation set")
        subscribers = {info.node_name for info in probe.get_subscriptions_info_by_topic(topics.GROUND_TRUTH_ODOM)}
        publishers = {info.node_name for info in probe.get_publishers_info_by_topic(topics.GROUND_TRUTH_ODOM)}
        assert subscribers == {"truth_probe"}, subscribers
        assert publishers == {"sim_bridge"}
        agent_nodes = {name for bringup in BRINGUPS.values() for name in bringup} - EVALUATION_NODES
        assert not agent_nodes & subscribers
        bridge = nodes[0]
        sim = bridge._sim_or_raise()
        for _ in range(6):
            sim.step(DiscreteAction.TURN_LEFT)
        obs = sim.step(DiscreteAction.MOVE_FORWARD)
        got.clear()
        bridge._publish(obs)
        spin_until(executor, lambda: "truth" in got and "odom" in got, 10.0, "the set after the actions")
        odom, truth = got["odom"].pose.pose, got["truth"].pose.pose
        assert math.hypot(odom.position.x - truth.position.x, odom.position.y - truth.position.y) > 1e-4
    finally:
        for node in nodes:
            close = getattr(node, "close", None)
            if callable(close):
                close()
            node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()
