"""goat_stretch's head_camera relay on a real rclpy graph: the Stretch's sideways head camera (stretch_core's, remapped
under topics.HEAD_CAMERA_RAW) comes out upright on the graph's camera topics, colour, depth and camera_info alike.
The pixel and camera-model turns themselves are tested without ROS in tests/test_stretch_camera.py.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()
pytest.importorskip("goat_stretch.camera_node", reason="goat_stretch is not on the path (ros_ws/src/goat_stretch)")

from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402

from goat_ros import conversions as cv  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_stretch.camera_node import IN_QOS, OUT_QOS, HeadCameraNode  # noqa: E402

# The sideways frame, as the D435i on its side publishes it: 6 rows x 4 columns (upright: 4 rows x 6 columns).
SIDE_H, SIDE_W = 6, 4
FX, FY, CX, CY = 300.0, 310.0, 1.5, 2.25
STAMP_NS = 1_234_500_000_000


def _sideways_frames() -> tuple[Image, Image, CameraInfo]:
    hdr = cv.header(STAMP_NS, topics.OPTICAL_FRAME)
    rgb = np.zeros((SIDE_H, SIDE_W, 3), np.uint8)
    rgb[:, :, 0] = np.arange(SIDE_H)[:, None]  # red: the row, green: the column, blue: 7 everywhere
    rgb[:, :, 1] = np.arange(SIDE_W)[None, :]
    rgb[:, :, 2] = 7
    depth_mm = (1000 + 10 * np.arange(SIDE_H)[:, None] + np.arange(SIDE_W)[None, :]).astype(np.uint16)
    info = CameraInfo(header=hdr, height=SIDE_H, width=SIDE_W, distortion_model="plumb_bob", d=[0.0] * 5,
                      k=[FX, 0.0, CX, 0.0, FY, CY, 0.0, 0.0, 1.0], r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                      p=[FX, 0.0, CX, 0.0, 0.0, FY, CY, 0.0, 0.0, 0.0, 1.0, 0.0])
    return cv.rgb_to_image(rgb, hdr), cv.array_to_image(depth_mm, "16UC1", hdr), info


def _relay(sideways: bool) -> Iterator[dict[str, Any]]:
    """Run a head_camera node, publish one sideways set on its inputs, return what it published on its outputs."""
    relay = HeadCameraNode(cli_args=["--ros-args", "-p", f"sideways:={'true' if sideways else 'false'}"])
    tester = Node("head_camera_tester")
    executor = SingleThreadedExecutor()
    executor.add_node(relay)
    executor.add_node(tester)
    got: dict[str, Any] = {}
    try:
        for out, msg_type in ((topics.RGB, Image), (topics.DEPTH, Image), (topics.CAMERA_INFO, CameraInfo)):
            tester.create_subscription(msg_type, out, lambda msg, out=out: got.setdefault(out, msg), OUT_QOS)
        pubs = {out: tester.create_publisher(type(msg), topics.HEAD_CAMERA_RAW[out], IN_QOS)
                for out, msg in zip((topics.RGB, topics.DEPTH, topics.CAMERA_INFO), _sideways_frames(), strict=True)}
        spin_until(executor, lambda: all(p.get_subscription_count() > 0 for p in pubs.values()), 10.0,
                   "the relay's subscriptions")
        spin_until(executor, lambda: all(tester.count_publishers(out) > 0 for out in pubs), 10.0,
                   "the relay's publishers")

        def publish_until_all_came() -> bool:
            for out, msg in zip(pubs, _sideways_frames(), strict=True):
                if out not in got:
                    pubs[out].publish(msg)
            return len(got) == 3

        spin_until(executor, publish_until_all_came, 10.0, "the relayed colour, depth and camera_info")
        yield got
    finally:
        executor.shutdown()
        relay.destroy_node()
        tester.destroy_node()


@pytest.fixture()
def upright(ros: None) -> Iterator[dict[str, Any]]:
    yield from _relay(sideways=True)


@pytest.fixture()
def passed_on(ros: None) -> Iterator[dict[str, Any]]:
    yield from _relay(sideways=False)


def test_the_sideways_camera_comes_out_upright_on_the_graphs_topics(upright: dict[str, Any]) -> None:
    rgb_msg, depth_msg, info = upright[topics.RGB], upright[topics.DEPTH], upright[topics.CAMERA_INFO]
    for msg in (rgb_msg, depth_msg, info):  # stamp and frame kept: the controller groups the three by stamp
        assert cv.ns_from_time(msg.header.stamp) == STAMP_NS and msg.header.frame_id == topics.OPTICAL_FRAME
    rgb = cv.image_to_rgb(rgb_msg)
    assert rgb.shape == (SIDE_W, SIDE_H, 3)
    # Sideways pixel (row r, column c) is upright at (row c, column SIDE_H - 1 - r): turned 90 deg clockwise.
    for r, c in ((0, 0), (0, SIDE_W - 1), (SIDE_H - 1, 0), (2, 1)):
        assert tuple(rgb[c, SIDE_H - 1 - r]) == (r, c, 7)
    assert depth_msg.encoding == "16UC1" and (depth_msg.height, depth_msg.width) == (SIDE_W, SIDE_H)
    depth_mm = cv.image_to_array(depth_msg, ("16UC1",))
    assert depth_mm[0, SIDE_H - 1] == 1000 and depth_mm[SIDE_W - 1, 0] == 1000 + 10 * (SIDE_H - 1) + SIDE_W - 1
    assert (info.width, info.height) == (SIDE_H, SIDE_W)
    k = list(info.k)
    assert (k[0], k[4], k[2], k[5]) == pytest.approx((FY, FX, SIDE_H - 1 - CY, CX))  # fx<->fy, cx = H-1-cy, cy = cx
    assert list(info.p)[:3] == pytest.approx([FY, 0.0, SIDE_H - 1 - CY])
    assert cv.camera_info_to_intrinsics(info).width == rgb.shape[1]  # the model fits the image it comes with


def test_with_sideways_off_the_frames_pass_unchanged(passed_on: dict[str, Any]) -> None:
    rgb_in, depth_in, info_in = _sideways_frames()
    assert bytes(passed_on[topics.RGB].data) == bytes(rgb_in.data)
    assert bytes(passed_on[topics.DEPTH].data) == bytes(depth_in.data)
    assert (passed_on[topics.CAMERA_INFO].width, list(passed_on[topics.CAMERA_INFO].k)) == (SIDE_W, list(info_in.k))
