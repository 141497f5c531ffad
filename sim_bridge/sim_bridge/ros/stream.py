"""The simulator's robot topics: one observation set as the Stretch driver and its RealSense publish it, and the
stream that keeps the latest set on the wire while the robot stands still.

A Stretch streams its camera from the moment it is up; the simulator renders only when it steps. So the bridge
publishes one set when a scene is loaded and after each reset or action, and :class:`ObservationStream`
republishes the newest set's messages unchanged (same stamp, same bytes) whenever nothing was published for
``1 / rate_hz`` seconds: a late subscriber (rviz, Foxglove, a plain rclpy script) sees the robot, and every
consumer that keys sets by stamp (the controller's and instance_mapping's ``ObservationSync``) ignores a repeat,
so the action-stepped, deterministic protocol is untouched. While actions come faster than the rate, nothing is
repeated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from geometry_msgs.msg import Quaternion
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from goat_core.types import Observation
from goat_interfaces.msg import InstanceLabels
from goat_ros import conversions as cv
from goat_ros import topics

SENSOR_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
HEAD_JOINTS = ("joint_head_pan", "joint_head_tilt")  # stretch_ros2 names; tilt > 0 looks up


@dataclass(frozen=True)
class StreamSettings:
    frame_prefix: str = ""
    publish_camera_tf: bool = True
    publish_segmentation: bool = True


class ObservationStream:
    """Publishers of the robot topics on ``node``; :meth:`publish` sends one set, :meth:`republish_if_idle` the last.

    ``now_ns`` gives each new set its stamp (strictly increasing, the bridge's clock).
    """

    def __init__(self, node: Node, settings: StreamSettings, now_ns: Callable[[], int]) -> None:
        self._settings = settings
        self._now_ns = now_ns
        self._pub: dict[str, Any] = {
            name: node.create_publisher(msg_type, topic, SENSOR_QOS) for name, msg_type, topic in (
                ("odom", Odometry, topics.ODOM), ("joints", JointState, topics.JOINT_STATES),
                ("tf", TFMessage, topics.TF), ("seg", Image, topics.SEGMENTATION),
                ("labels", InstanceLabels, topics.INSTANCE_LABELS), ("info", CameraInfo, topics.CAMERA_INFO),
                ("depth", Image, topics.DEPTH), ("rgb", Image, topics.RGB))}
        self._pub_tf_static = node.create_publisher(TFMessage, topics.TF_STATIC, LATCHED_QOS)
        self._last: list[tuple[str, Any]] = []  # the newest set's messages, in publishing order
        self._last_publish_s = -float("inf")
        self.republished = 0  # how many sets were repeated (for logs and tests)

    def _frame(self, name: str) -> str:
        return self._settings.frame_prefix + name

    def publish(self, obs: Observation) -> int:
        """Publish one observation set, every message with the same fresh stamp; return the stamp."""
        stamp_ns = self._now_ns()
        self._last = self._messages(obs, stamp_ns)
        self._send()
        return stamp_ns

    def republish_if_idle(self, period_s: float) -> bool:
        """Send the newest set again, unchanged, if nothing was published for ``period_s``; True if sent."""
        if not self._last or time.monotonic() - self._last_publish_s < period_s:
            return False
        self._send()
        self.republished += 1
        return True

    def _send(self) -> None:
        for name, msg in self._last:
            self._pub[name].publish(msg)
        self._last_publish_s = time.monotonic()

    def _messages(self, obs: Observation, stamp_ns: int) -> list[tuple[str, Any]]:
        s = self._settings
        optical = cv.header(stamp_ns, self._frame(topics.OPTICAL_FRAME))
        odom_hdr = cv.header(stamp_ns, self._frame(topics.ODOM_FRAME))
        base = self._frame(topics.BASE_FRAME)
        out: list[tuple[str, Any]] = [
            ("odom", cv.odometry(obs.pose, odom_hdr, base)),
            ("joints", JointState(header=cv.header(stamp_ns, ""), name=list(HEAD_JOINTS),
                                  position=[0.0, float(obs.camera_tilt_rad)]))]
        transforms = [cv.transform(odom_hdr, base, (obs.pose.x_m, obs.pose.y_m, 0.0),
                                   cv.yaw_to_quaternion(obs.pose.yaw_rad))]
        if s.publish_camera_tf:
            transforms.append(cv.transform(cv.header(stamp_ns, base), self._frame(topics.CAMERA_FRAME),
                                           (0.0, 0.0, obs.camera_height_m), cv.pitch_quaternion(-obs.camera_tilt_rad)))
        out.append(("tf", TFMessage(transforms=transforms)))
        if s.publish_segmentation and obs.segmentation is not None:
            out += [("seg", cv.segmentation_to_image(obs.segmentation, optical)),
                    ("labels", cv.labels_to_msg(obs.instance_categories, optical))]
        out += [("info", cv.intrinsics_to_camera_info(obs.intrinsics, optical)),
                ("depth", cv.depth_to_image(obs.depth_m, optical)),
                ("rgb", cv.rgb_to_image(obs.rgb, optical))]  # last: its arrival completes the set
        return out

    def publish_static_tf(self) -> None:
        """camera_link (x forward, z up) -> optical frame (z forward, x right, y down): roll -90 deg, yaw -90 deg."""
        hdr = Header(frame_id=self._frame(topics.CAMERA_FRAME))
        self._pub_tf_static.publish(TFMessage(transforms=[
            cv.transform(hdr, self._frame(topics.OPTICAL_FRAME), (0.0, 0.0, 0.0),
                         Quaternion(x=-0.5, y=0.5, z=-0.5, w=0.5)),
        ]))
