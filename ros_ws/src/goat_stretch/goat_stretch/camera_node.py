"""The head_camera relay: the Stretch's head camera, republished upright on the graph's camera topics.

    ros2 run goat_stretch head_camera --ros-args --params-file config/head_camera.yaml -p sideways:=true

stretch_core's D435i publishes on the topics the graph reads (``/camera/color/image_raw`` ...), but sideways.
launch/stretch.launch.py remaps that camera to ``topics.HEAD_CAMERA_RAW`` (``/head_camera_raw/...``); this node
turns colour, aligned depth and the colour camera_info 90 deg clockwise (``sideways``, :mod:`goat_stretch.camera`)
and publishes them on ``topics.RGB``, ``DEPTH`` and ``CAMERA_INFO`` with their headers (stamp, frame_id) kept, so
the controller, perception, instance mapping and the driver's obstacle check all see the same upright frames.
Encodings stay as they come (the RealSense's 16UC1 millimetres, rgb8). The frame_id still names the camera's
optical frame; the upright image's x/y axes are that frame's turned about z (x' = -y, y' = x).
"""

from __future__ import annotations

from functools import partial
from typing import Optional

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, RegionOfInterest

from goat_ros import topics
from goat_ros.params import HeadCameraParams, declare
from goat_stretch.camera import CameraModel, RawImage, rotate_model_clockwise, rotate_raw_clockwise

IN_QOS = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)  # takes reliable and best-effort cameras
OUT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)  # as sim_bridge publishes the camera
CHECK_PERIOD_S = 5.0  # how often the node looks for a second publisher on its outputs


class HeadCameraNode(Node):
    def __init__(self, name: str = "head_camera", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, HeadCameraParams)
        self._pubs = {out: self.create_publisher(msg_type, out, OUT_QOS)
                      for out, msg_type in ((topics.RGB, Image), (topics.DEPTH, Image),
                                            (topics.CAMERA_INFO, CameraInfo))}
        raw = topics.HEAD_CAMERA_RAW
        for out in (topics.RGB, topics.DEPTH):
            self.create_subscription(Image, raw[out], partial(self._on_image, out=out), IN_QOS)
        self.create_subscription(CameraInfo, raw[topics.CAMERA_INFO], self._on_info, IN_QOS)
        self._warned = False
        self.create_timer(CHECK_PERIOD_S, self._check_outputs)
        self.get_logger().info(f"{'turning upright' if self.params.sideways else 'passing on'} "
                               f"{', '.join(topics.HEAD_CAMERA_RAW.values())}")

    def _on_image(self, msg: Image, out: str) -> None:
        if self.params.sideways:
            try:
                turned = rotate_raw_clockwise(RawImage(msg.height, msg.width, msg.encoding, msg.step,
                                                       bytes(msg.data)))
            except ValueError as exc:
                self.get_logger().error(f"{out}: {exc}", throttle_duration_sec=5.0)
                return
            msg = Image(header=msg.header, height=turned.height, width=turned.width, encoding=turned.encoding,
                        is_bigendian=msg.is_bigendian, step=turned.step, data=turned.data)
        self._pubs[out].publish(msg)

    def _on_info(self, msg: CameraInfo) -> None:
        if self.params.sideways:
            roi = msg.roi
            try:
                m = rotate_model_clockwise(CameraModel(
                    msg.height, msg.width, msg.distortion_model, tuple(msg.d), tuple(msg.k), tuple(msg.r),
                    tuple(msg.p), msg.binning_x, msg.binning_y, (roi.x_offset, roi.y_offset, roi.height, roi.width)))
            except ValueError as exc:
                self.get_logger().error(f"{topics.CAMERA_INFO}: {exc}", throttle_duration_sec=5.0)
                return
            msg = CameraInfo(header=msg.header, height=m.height, width=m.width, distortion_model=m.distortion_model,
                             d=list(m.d), k=list(m.k), r=list(m.r), p=list(m.p), binning_x=m.binning_x,
                             binning_y=m.binning_y,
                             roi=RegionOfInterest(x_offset=m.roi[0], y_offset=m.roi[1], height=m.roi[2],
                                                  width=m.roi[3], do_rectify=roi.do_rectify))
        self._pubs[topics.CAMERA_INFO].publish(msg)

    def _check_outputs(self) -> None:
        """An unremapped camera publishing on the graph's topics would mix sideways frames into the upright ones."""
        doubled = [out for out in self._pubs if self.count_publishers(out) > 1]
        if doubled and not self._warned:
            self._warned = True
            self.get_logger().error(f"another node publishes {', '.join(doubled)}: remap the camera to "
                                    f"{', '.join(topics.HEAD_CAMERA_RAW[out] for out in doubled)} "
                                    "(launch/stretch.launch.py does), or consumers get sideways frames too")


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([HeadCameraNode], args)


if __name__ == "__main__":
    main()
