"""What the Stretch driver node is made of, from its parameters: the robot, the executor's and the velocity path's
configurations, and the exceptions that end its spin. No ROS node here (the node, :mod:`goat_stretch.driver_node`,
only wires these to topics).
"""

from __future__ import annotations

import math

from goat_core.types import ActionSizes
from goat_ros.params import StretchDriverParams
from goat_stretch.body import HeadCalibration, RobotLike, RobotNotReadyError, start_robot
from goat_stretch.driver import ExecutorConfig, MonotonicClock
from goat_stretch.velocity import VelocityConfig

BACKENDS = ("stretch_body", "standin")


def executor_config(params: StretchDriverParams) -> ExecutorConfig:
    sizes = ActionSizes(forward_m=params.forward_m, turn_rad=math.radians(params.turn_deg),
                        look_rad=math.radians(params.look_deg))
    # With cmd_vel, a discrete action that arrives while a velocity stream is ending waits for it, at most until the
    # stream's stale zero (timeout + one check period), and is refused after that.
    base_wait_s = (params.cmd_vel_timeout_s + 1.0 / params.cmd_vel_check_rate_hz) if params.accept_cmd_vel else 0.0
    return ExecutorConfig(sizes=sizes, motion_timeout_s=params.motion_timeout_s, stall_time_s=params.stall_time_s,
                          obstacle_margin_m=params.obstacle_margin_m, base_wait_s=base_wait_s)


def velocity_config(params: StretchDriverParams) -> VelocityConfig:
    return VelocityConfig(max_linear_mps=params.cmd_vel_max_linear_mps,
                          max_angular_radps=params.cmd_vel_max_angular_radps, timeout_s=params.cmd_vel_timeout_s,
                          obstacle_margin_m=params.cmd_vel_obstacle_margin_m)


def head_calibration(params: StretchDriverParams) -> HeadCalibration:
    if not params.head_calibration_file:
        return HeadCalibration()
    return HeadCalibration.from_yaml(params.head_calibration_file)


def make_robot(backend: str) -> RobotLike:
    """A started-up robot of ``backend``; raises RobotNotReadyError naming what failed."""
    if backend == "stretch_body":
        return start_robot()
    if backend == "standin":
        from goat_stretch.standin import StandinRobot

        robot = StandinRobot(clock=MonotonicClock())
        robot.startup()
        return robot
    raise RobotNotReadyError(f"robot_backend must be one of {BACKENDS}, got {backend!r}")


def shutdown_exceptions() -> tuple[type[BaseException], ...]:
    """What ends the node's spin quietly: Ctrl-C, and stretch_body's ``hello_utils.ThreadServiceExit``, which the
    SIGINT/SIGTERM handlers that ``Robot.startup()`` installs raise instead of KeyboardInterrupt (stretch_ros2's
    driver catches it too)."""
    from rclpy.executors import ExternalShutdownException

    caught: tuple[type[BaseException], ...] = (KeyboardInterrupt, ExternalShutdownException)
    try:
        from stretch_body.hello_utils import ThreadServiceExit
    except ImportError:  # stretch_body is not installed: the stand-in runs
        return caught
    return (*caught, ThreadServiceExit)
