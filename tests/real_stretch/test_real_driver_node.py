"""The stretch_driver node with ``robot_backend: stretch_body``: it starts the real Robot itself (goat_stretch.body
.start_robot, reading the test's fleet directory), serves /goat/execute_action through a real rclpy graph and
publishes /joint_states from stretch_body's status; fake boards below (conftest.py)."""

from __future__ import annotations

import math
import threading
import time
from typing import Any, Callable

import pytest
from teardown import end_event_loop

from goat_core.types import DiscreteAction

pytestmark = [pytest.mark.real_stretch_body, pytest.mark.slow]  # real timing: seconds per test

MODE_SAFETY = 0


def _wait(future: Any, timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while not future.done():
        assert time.monotonic() < deadline, "no answer from the driver node"
        time.sleep(0.01)
    return future.result()


def test_node_starts_stretch_body_serves_a_turn_and_stops_the_base_at_shutdown(
        fake_hardware: Callable[..., Any], restore_signals: None) -> None:
    for module in ("rclpy", "goat_interfaces.action", "tf2_msgs.msg"):
        pytest.importorskip(module, reason="ROS 2 is not installed: run 'bash scripts/setup_ros.sh'")
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from sensor_msgs.msg import JointState

    from goat_interfaces.action import ExecuteAction
    from goat_ros import topics
    from goat_ros.spin import stop_threaded_executor
    from goat_stretch.driver_node import StretchDriverNode

    fake = fake_hardware()
    rclpy.init()
    driver = StretchDriverNode(cli_args=["--ros-args", "-p", "robot_backend:=stretch_body", "-p", "turn_deg:=30.0"])
    client_node = rclpy.create_node("real_stretch_test_client")
    client = ActionClient(client_node, ExecuteAction, topics.EXECUTE_ACTION)
    tilts: list[float] = []
    client_node.create_subscription(JointState, topics.JOINT_STATES,
                                    lambda msg: tilts.append(msg.position[list(msg.name).index("joint_head_tilt")]),
                                    10)
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(driver)
    executor.add_node(client_node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        assert client.wait_for_server(timeout_sec=10.0)
        handle = _wait(client.send_goal_async(ExecuteAction.Goal(action=int(DiscreteAction.TURN_LEFT))), 10.0)
        result = _wait(handle.get_result_async(), 20.0).result
        assert result.success, result.message
        assert result.pose.theta == pytest.approx(math.radians(30.0), abs=math.radians(2.0))
        assert tilts and all(abs(t) < 0.02 for t in tilts), tilts  # the head stays level, as the servo reports it
    finally:
        stop_threaded_executor(executor, spinner)  # no callback still running when the nodes go
        driver.close()  # stops the base, then stretch_body (every motor in safety)
        end_event_loop(driver._robot)
        driver.destroy_node()
        client_node.destroy_node()
        rclpy.try_shutdown()
        spinner.join(timeout=5.0)
    assert fake.wheel_commands()[-1][0] == MODE_SAFETY
