"""The simulator's true pose is published for evaluation only: no agent node of any bringup subscribes to it, and
under the stretch realism profile the bridge's /odom drifts away from it."""

from __future__ import annotations

import math
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import close_nodes, require_ros, spin_until  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

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
        close_nodes(nodes, executor)
        rclpy.try_shutdown()


def test_localiser_node_publishes_map_to_odom() -> None:
    """The bridge under the stretch profile and the localiser node: each observation set gives a map -> odom
    transform with the set's stamp, and after some moves the correction is no longer the identity."""
    from goat_ros.localiser_node import LocaliserNode
    from sim_bridge.ros.bridge_node import SimBridgeNode

    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Any] = []
    try:
        bridge = SimBridgeNode(cli_args=["--ros-args", "-p", "realism:=stretch", "-p", "realism_seed:=3",
                                         "-p", "scene_id:=embedded/home_s1234_r5", "-p", "republish_rate_hz:=0.0",
                                         "-p", "startup_publish_delay_s:=0.2"])
        nodes = [bridge, LocaliserNode(), rclpy.create_node("tf_probe")]
        seen: list[Any] = []

        def on_tf(msg: Any) -> None:
            seen.extend(t for t in msg.transforms if (t.header.frame_id, t.child_frame_id) == ("map", "odom"))

        nodes[2].create_subscription(TFMessage, topics.TF, on_tf, 10)
        for node in nodes:
            executor.add_node(node)
        spin_until(executor, lambda: len(seen) >= 1, 60.0, "the first map -> odom")
        sim = bridge._sim_or_raise()
        actions = [DiscreteAction.TURN_LEFT] * 4 + [DiscreteAction.MOVE_FORWARD] * 2 + [DiscreteAction.TURN_RIGHT] * 4
        for i, action in enumerate(actions):
            bridge._publish(sim.step(action))
            spin_until(executor, lambda n=i + 2: len(seen) >= n, 20.0, f"map -> odom after action {i}")
        last = seen[-1].transform
        moved = abs(last.translation.x) + abs(last.translation.y) + abs(last.rotation.z)
        assert math.isfinite(moved) and moved > 0.0
    finally:
        close_nodes(nodes, executor)
        rclpy.try_shutdown()
