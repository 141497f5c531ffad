"""The Stretch driver node's message side, without rclpy: the newest head-camera depth frame (the forward-step
obstacle check reads it; an action's result names the first frame after the motion), the ExecuteAction result and
the robot state messages (what stretch_ros2's driver would publish) with their topics, and a log line at the
severity of what happened. The node, :mod:`goat_stretch.driver_node`, wires these to topics and the action server.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

from nav_msgs.msg import Odometry
from sensor_msgs.msg import CameraInfo, Image, JointState
from tf2_msgs.msg import TFMessage

from goat_core.types import CameraIntrinsics, Pose2D
from goat_interfaces.action import ExecuteAction
from goat_ros import conversions as cv
from goat_ros import topics
from goat_stretch.driver import ActionOutcome, DepthSnapshot

HEAD_JOINTS = ("joint_head_pan", "joint_head_tilt")  # stretch_ros2 names; tilt > 0 looks up
STATE_TOPICS = ((Odometry, topics.ODOM), (JointState, topics.JOINT_STATES), (TFMessage, topics.TF))  # state_msgs'


def log_at(logger: Any, text: str, error: bool, warning: bool, info: bool = True) -> None:
    """Log ``text`` as an error, else a warning, else (``info``) an info line. rclpy keeps one severity per logging
    call site: each severity has a call of its own here."""
    if error:
        logger.error(text)
    elif warning:
        logger.warning(text)
    elif info:
        logger.info(text)


class DepthCache:
    """The newest depth frame, stamped with its receipt time on ``now_ns`` (the node's clock), and the newest
    intrinsics; the sensor callbacks write them while an action or the velocity path reads (thread-safe)."""

    def __init__(self, now_ns: Callable[[], int]) -> None:
        self._now_ns = now_ns
        self._lock = threading.Lock()
        self._depth: Optional[tuple[int, Image]] = None  # (receipt time ns, message)
        self._intrinsics: Optional[CameraIntrinsics] = None

    def on_depth(self, msg: Image) -> None:
        with self._lock:
            self._depth = (self._now_ns(), msg)

    def on_info(self, msg: CameraInfo) -> None:
        with self._lock:
            self._intrinsics = cv.camera_info_to_intrinsics(msg)

    def snapshot(self, max_age_s: float, tilt_rad: Callable[[], float],
                 camera_height_m: float) -> Optional[DepthSnapshot]:
        """The newest frame for the obstacle check (camera tilted ``tilt_rad()``), or None when there is none or
        it is older than ``max_age_s``."""
        with self._lock:
            depth, intr = self._depth, self._intrinsics
        if depth is None or intr is None:
            return None
        age_s = (self._now_ns() - depth[0]) * 1e-9
        if age_s > max_age_s:
            return None
        return DepthSnapshot(cv.image_to_depth(depth[1]), intr, tilt_rad(), camera_height_m)

    def stamp_after(self, after_ns: int, wait_s: float) -> Optional[int]:
        """Stamp (ns) of the first depth frame received after ``after_ns``, waiting up to ``wait_s``."""
        deadline = time.monotonic() + wait_s
        while True:
            with self._lock:
                depth = self._depth
            if depth is not None and depth[0] > after_ns:
                return cv.ns_from_time(depth[1].header.stamp)
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)


def action_result(outcome: ActionOutcome, observation_stamp_ns: int, step: int) -> ExecuteAction.Result:
    """The ExecuteAction result of an executed action: its outcome, and the observation set that shows it."""
    result = ExecuteAction.Result()
    result.observation_stamp = cv.time_from_ns(observation_stamp_ns)
    result.success = outcome.success
    result.message = f"{outcome.reason.value}: {outcome.message}"
    result.collided = outcome.collided
    result.pose = cv.pose2d_to_msg(outcome.pose)
    result.camera_tilt_rad = float(outcome.camera_tilt_rad)
    result.step = step
    return result


def refusal(message: str) -> ExecuteAction.Result:
    """The result of a goal that was not executed."""
    result = ExecuteAction.Result()
    result.success, result.message = False, message
    return result


def state_msgs(pose: Pose2D, pan_rad: float, tilt_rad: float, stamp_ns: int) -> tuple[Odometry, JointState, TFMessage]:
    """``/odom``, ``/joint_states`` (the head) and the odom -> base_link TF for the base pose ``pose`` (odom frame)."""
    odom_hdr = cv.header(stamp_ns, topics.ODOM_FRAME)
    return (cv.odometry(pose, odom_hdr, topics.BASE_FRAME),
            JointState(header=cv.header(stamp_ns, ""), name=list(HEAD_JOINTS), position=[pan_rad, tilt_rad]),
            TFMessage(transforms=[cv.transform(odom_hdr, topics.BASE_FRAME, (pose.x_m, pose.y_m, 0.0),
                                               cv.yaw_to_quaternion(pose.yaw_rad))]))
