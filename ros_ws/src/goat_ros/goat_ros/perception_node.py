"""The perception node: per-frame detections of the ground-truth backend (optionally through the detector error
model, parameter ``perception_errors``), and an overlay image for rviz.

The controller runs the same backend inside the agent (see controller_node.py); this node publishes what it
detects for monitoring and for consumers outside the agent: ``/goat/detections`` and ``/goat/detection_image``.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import cv2
import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from goat_core.perception.factory import PerceptionConfig, build_perception
from goat_core.types import CameraIntrinsics, Observation, Pose2D
from goat_core.vocabulary import OBJECT_LABELS
from goat_interfaces.msg import Detection, Detections, InstanceLabels
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.params import PerceptionParams, declare

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


class PerceptionNode(Node):
    def __init__(self, name: str = "perception", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, PerceptionParams)
        p = self.params
        self._backend = build_perception(PerceptionConfig(errors=p.perception_errors,
                                                          errors_seed=p.perception_errors_seed),
                                         list(OBJECT_LABELS))
        self._frames = 0  # frames seen: the error model's draws and tracker follow it as they follow the step
        self._parts: dict[int, dict[str, Any]] = {}
        self._pub = self.create_publisher(Detections, topics.DETECTIONS, RELIABLE)
        self._pub_overlay = self.create_publisher(Image, topics.DETECTION_IMAGE, RELIABLE)
        for part, msg_type, topic in (("rgb", Image, topics.RGB), ("segmentation", Image, topics.SEGMENTATION),
                                      ("labels", InstanceLabels, topics.INSTANCE_LABELS)):
            self.create_subscription(msg_type, topic, functools.partial(self._on_part, part), RELIABLE)

    def _on_part(self, part: str, msg: Any) -> None:
        stamp_ns = cv.ns_from_time(msg.header.stamp)
        entry = self._parts.setdefault(stamp_ns, {})
        entry[part] = msg
        if len(entry) < 3:
            for old in sorted(self._parts)[:-4]:
                del self._parts[old]
            return
        del self._parts[stamp_ns]
        self._detect(entry)

    def _detect(self, parts: dict[str, Any]) -> None:
        rgb = cv.image_to_rgb(parts["rgb"])
        h, w = rgb.shape[:2]
        obs = Observation(rgb=rgb, depth_m=np.zeros((h, w), np.float32), pose=Pose2D(0.0, 0.0, 0.0),
                          camera_tilt_rad=0.0, camera_height_m=0.0,
                          intrinsics=CameraIntrinsics.from_hfov(w, h, 1.0), step=self._frames,
                          segmentation=cv.image_to_segmentation(parts["segmentation"]),
                          instance_categories=cv.msg_to_labels(parts["labels"]))
        detections = self._backend.detect(obs)
        self._frames += 1
        msg = Detections(header=parts["rgb"].header)
        for det in detections:
            u0, v0, u1, v1 = det.bbox_xyxy
            msg.detections.append(Detection(instance_key=int(det.instance_key), category=det.category,
                                            score=float(det.score), u_min=int(u0), v_min=int(v0), u_max=int(u1),
                                            v_max=int(v1), pixel_count=int(det.mask.sum())))
        self._pub.publish(msg)
        if self.params.publish_overlay:
            overlay = rgb.copy()
            for det in msg.detections:
                cv2.rectangle(overlay, (det.u_min, det.v_min), (det.u_max - 1, det.v_max - 1), (255, 220, 0), 2)
                cv2.putText(overlay, det.category, (det.u_min + 2, max(det.v_min + 14, 14)),
                            cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA)
            self._pub_overlay.publish(cv.rgb_to_image(overlay, parts["rgb"].header))


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([PerceptionNode], args)


if __name__ == "__main__":
    main()
