"""goat_stretch's stretch_driver takes /cmd_vel (as from Nav2's controller server) with accept_cmd_vel: a real rclpy
graph in process, the stretch_body stand-in as the robot. The velocity safety rules are tested without ROS in
tests/test_stretch_driver.py; this checks the wiring: Twist in, clamped stand-in velocity out, zero when stale.
"""

from __future__ import annotations

import math
import time
from typing import Iterator

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()
pytest.importorskip("goat_stretch.driver_node", reason="goat_stretch is not on the path (ros_ws/src/goat_stretch)")

from geometry_msgs.msg import Twist  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402

from goat_core.types import CameraIntrinsics  # noqa: E402
from goat_ros import conversions as cv  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_stretch.driver import MonotonicClock  # noqa: E402
from goat_stretch.driver_node import CMD_VEL, StretchDriverNode  # noqa: E402
from goat_stretch.standin import StandinRobot  # noqa: E402

INTR = CameraIntrinsics.from_hfov(90, 160, math.radians(42.0))
TIMEOUT_S = 0.5


@pytest.fixture()
def graph(ros: None) -> Iterator[tuple[SingleThreadedExecutor, StretchDriverNode, StandinRobot, Node]]:
    robot = StandinRobot(clock=MonotonicClock())
    driver = StretchDriverNode(cli_args=["--ros-args", "-p", "robot_backend:=standin", "-p", "publish_state:=false",
                                         "-p", "accept_cmd_vel:=true", "-p", "cmd_vel_max_linear_mps:=0.2",
                                         "-p", f"cmd_vel_timeout_s:={TIMEOUT_S}"], robot=robot)
    tester = Node("cmd_vel_tester")
    executor = SingleThreadedExecutor()
    executor.add_node(driver)
    executor.add_node(tester)
    try:
        yield executor, driver, robot, tester
    finally:
        executor.shutdown()
        driver.close()
        driver.destroy_node()
        tester.destroy_node()


def test_twist_on_cmd_vel_drives_the_standin_and_goes_to_zero_when_stale(
        graph: tuple[SingleThreadedExecutor, StretchDriverNode, StandinRobot, Node]) -> None:
    executor, driver, robot, tester = graph
    pub_twist = tester.create_publisher(Twist, CMD_VEL, 1)
    pub_depth = tester.create_publisher(Image, topics.DEPTH, 10)
    pub_info = tester.create_publisher(CameraInfo, topics.CAMERA_INFO, 10)
    sending = [True]
    last_sent_s = [0.0]

    def publish() -> None:  # a head camera seeing nothing within range, and Nav2 at 20 Hz while sending
        hdr = cv.header(tester.get_clock().now().nanoseconds, topics.OPTICAL_FRAME)
        pub_info.publish(cv.intrinsics_to_camera_info(INTR, hdr))
        pub_depth.publish(cv.depth_to_image(np.zeros((INTR.height, INTR.width), np.float32), hdr))
        if sending[0]:
            twist = Twist()
            twist.linear.x, twist.angular.z = 0.5, 0.1  # forward beyond the 0.2 m/s limit
            pub_twist.publish(twist)
            last_sent_s[0] = time.monotonic()

    tester.create_timer(0.05, publish)
    spin_until(executor, lambda: pub_twist.get_subscription_count() > 0, 10.0, "the driver's cmd_vel subscription")
    spin_until(executor, lambda: robot.base.commanded_velocity == (0.2, 0.1), 5.0, "the clamped velocity")
    assert ("velocity", 0.2, 0.1) in robot.base.commands
    assert not any(c[0] == "velocity" and c[1] > 0.2 for c in robot.base.commands)  # never beyond the limit
    moving_s = time.monotonic()
    spin_until(executor, lambda: time.monotonic() - moving_s > 0.3, 2.0, "the base to move")
    assert robot.base.commanded_velocity == (0.2, 0.1) and robot.base.status["x"] > 0.03

    sending[0] = False  # Nav2 goes quiet without a final zero (a crash, a dropped link)
    spin_until(executor, lambda: robot.base.commanded_velocity == (0.0, 0.0), 3.0, "the stale-command zero")
    quiet_s = time.monotonic() - last_sent_s[0]
    assert TIMEOUT_S <= quiet_s < TIMEOUT_S + 0.5, f"zeroed {quiet_s:.2f} s after the last twist"
    assert robot.base.commands[-1] == ("stop", 0.0) and not robot.base.is_moving
    x = robot.base.status["x"]
    spin_until(executor, lambda: time.monotonic() - last_sent_s[0] > TIMEOUT_S + 0.3, 2.0, "a quiet moment")
    assert robot.base.status["x"] == x  # still stopped
