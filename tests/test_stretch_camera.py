"""The Stretch head camera is mounted on its side: its frames are turned upright at the robot boundary
(goat_stretch.camera, used by the head_camera relay) before anything, the forward-clearance check included, uses
them. The relay's ROS side is tested in tests/ros/test_ros_head_camera.py."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from goat_core.types import CameraIntrinsics
from goat_stretch.camera import CameraModel, RawImage, rotate_clockwise, rotate_model_clockwise, rotate_raw_clockwise
from goat_stretch.driver import DepthSnapshot, ExecutorConfig, forward_clearance_m

UPRIGHT = CameraIntrinsics.from_hfov(90, 160, math.radians(42.0))  # portrait, as the head camera sees upright
CAMERA_HEIGHT_M = 1.31
POLE_AHEAD_M = 0.5


def _upright_pole_frame() -> np.ndarray:
    """Level camera; a pole 0.1 m wide, 0.2 to 1.0 m tall, POLE_AHEAD_M in front of the camera: depth of its face
    (a level camera's depth is the distance ahead), 0 (no return) elsewhere."""
    v, u = np.mgrid[0:UPRIGHT.height, 0:UPRIGHT.width].astype(np.float64)
    lateral_m = (u - UPRIGHT.cx) * POLE_AHEAD_M / UPRIGHT.fx
    height_m = CAMERA_HEIGHT_M - (v - UPRIGHT.cy) * POLE_AHEAD_M / UPRIGHT.fy
    on_pole = (np.abs(lateral_m) <= 0.05) & (height_m > 0.2) & (height_m < 1.0)
    return np.where(on_pole, POLE_AHEAD_M, 0.0).astype(np.float32)


def _sideways(upright: np.ndarray) -> tuple[np.ndarray, CameraIntrinsics]:
    """What the sideways-mounted camera publishes: the upright view turned 90 deg counter-clockwise."""
    raw = np.ascontiguousarray(np.rot90(upright, k=1))
    intr = CameraIntrinsics(width=UPRIGHT.height, height=UPRIGHT.width, fx=UPRIGHT.fy, fy=UPRIGHT.fx,
                            cx=UPRIGHT.cy, cy=UPRIGHT.width - 1 - UPRIGHT.cx)
    return raw, intr


def test_a_sideways_frame_turned_upright_is_the_upright_frame() -> None:
    upright = _upright_pole_frame()
    raw, raw_intr = _sideways(upright)
    turned, intr = rotate_clockwise(raw, raw_intr)
    assert np.array_equal(turned, upright)
    assert (intr.width, intr.height) == (UPRIGHT.width, UPRIGHT.height)
    assert (intr.fx, intr.fy, intr.cx, intr.cy) == pytest.approx((UPRIGHT.fx, UPRIGHT.fy, UPRIGHT.cx, UPRIGHT.cy))
    rgb = np.zeros((raw_intr.height, raw_intr.width, 3), np.uint8)
    assert rotate_clockwise(rgb, raw_intr)[0].shape == (UPRIGHT.height, UPRIGHT.width, 3)  # colour turns alike


def test_the_clearance_check_on_a_rotated_frame_sees_the_pole_only_once_upright() -> None:
    config = ExecutorConfig()
    upright = _upright_pole_frame()
    truth = forward_clearance_m(DepthSnapshot(upright, UPRIGHT, 0.0, CAMERA_HEIGHT_M), config)
    assert truth == pytest.approx(POLE_AHEAD_M)
    raw, raw_intr = _sideways(upright)
    turned = forward_clearance_m(DepthSnapshot(*rotate_clockwise(raw, raw_intr), 0.0, CAMERA_HEIGHT_M), config)
    assert turned == pytest.approx(truth)
    # Taken as upright, the raw frame swaps the axes: the pole lies across the image, and the check misses it.
    as_is = forward_clearance_m(DepthSnapshot(raw, raw_intr, 0.0, CAMERA_HEIGHT_M), config)
    assert as_is != pytest.approx(POLE_AHEAD_M)


def test_a_frame_that_does_not_match_its_intrinsics_is_refused() -> None:
    with pytest.raises(ValueError, match="does not match the intrinsics"):
        rotate_clockwise(np.zeros((10, 20), np.float32), UPRIGHT)


def test_raw_bytes_turn_as_stretch_ros2_turns_the_image_and_keep_their_encoding() -> None:
    """stretch_ros2's detection nodes turn the head image with cv2.ROTATE_90_CLOCKWISE; the relay's byte-level turn
    gives the same pixels, for padded rgb8 rows and for 16UC1 depth (millimetres, kept as such)."""
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    padded = np.zeros((5, 7 * 3 + 3), np.uint8)  # step 24: three bytes of row padding
    padded[:, :21] = rgb.reshape(5, 21)
    turned = rotate_raw_clockwise(RawImage(5, 7, "rgb8", 24, padded.tobytes()))
    assert (turned.height, turned.width, turned.step, turned.encoding) == (7, 5, 15, "rgb8")
    pixels = np.frombuffer(turned.data, np.uint8).reshape(7, 5, 3)
    assert np.array_equal(pixels, cv2.rotate(rgb, cv2.ROTATE_90_CLOCKWISE))
    depth_mm = rng.integers(0, 10000, (4, 6), dtype=np.uint16)
    turned = rotate_raw_clockwise(RawImage(4, 6, "16UC1", 12, depth_mm.tobytes()))
    assert np.array_equal(np.frombuffer(turned.data, np.uint16).reshape(6, 4),
                          cv2.rotate(depth_mm, cv2.ROTATE_90_CLOCKWISE))
    assert np.frombuffer(turned.data, np.uint16).reshape(6, 4)[0, 3] == depth_mm[0, 0]  # top-left -> top-right


def test_raw_images_that_cannot_be_turned_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'yuv422'"):
        rotate_raw_clockwise(RawImage(2, 2, "yuv422", 4, bytes(8)))
    with pytest.raises(ValueError, match="needs step >= 6 and 12 bytes"):
        rotate_raw_clockwise(RawImage(2, 2, "rgb8", 6, bytes(10)))


def _project(model: CameraModel, xyz: np.ndarray) -> np.ndarray:
    """Pixel of a camera-frame point through K and plumb_bob distortion (k1, k2, p1, p2, k3), and through P."""
    x, y = xyz[0] / xyz[2], xyz[1] / xyz[2]
    k1, k2, p1, p2, k3 = model.d
    r2 = x * x + y * y
    radial = 1 + k1 * r2 + k2 * r2 * r2 + k3 * r2 ** 3
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    k = np.array(model.k).reshape(3, 3)
    p = np.array(model.p).reshape(3, 4) @ np.append(xyz, 1.0)
    return np.array([k[0, 0] * xd + k[0, 2], k[1, 1] * yd + k[1, 2], p[0] / p[2], p[1] / p[2]])


def test_the_camera_model_turns_with_the_pixels() -> None:
    """A point seen at pixel (u, v) by the sideways camera is seen at (H-1-v, u) through the turned model: K, P and
    the distortion's tangential terms; the turned point is x' = -y, y' = x in the camera frame."""
    height, width = 480, 848
    sideways = CameraModel(height=height, width=width, distortion_model="plumb_bob",
                           d=(0.1, -0.05, 0.01, -0.02, 0.003), k=(600.0, 0.0, 430.0, 0.0, 610.0, 245.0, 0.0, 0.0, 1.0),
                           r=(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
                           p=(600.0, 0.0, 430.0, 0.0, 0.0, 610.0, 245.0, 0.0, 0.0, 0.0, 1.0, 0.0),
                           binning_x=2, binning_y=1, roi=(10, 20, 100, 200))
    upright = rotate_model_clockwise(sideways)
    assert (upright.width, upright.height) == (height, width)
    k = upright.k
    assert (k[0], k[4], k[2], k[5]) == (610.0, 600.0, height - 1 - 245.0, 430.0)  # fx<->fy, cx = H-1-cy, cy = cx
    assert upright.r == sideways.r and upright.d[:2] == sideways.d[:2] and upright.d[4] == sideways.d[4]
    assert (upright.binning_x, upright.binning_y) == (1, 2)
    assert upright.roi == (height - 20 - 100, 10, 200, 100)  # x_offset, y_offset, height, width
    for xyz in (np.array([0.3, -0.2, 1.5]), np.array([-0.4, 0.25, 2.0]), np.array([0.05, 0.3, 0.8])):
        u, v, pu, pv = _project(sideways, xyz)
        turned = _project(upright, np.array([-xyz[1], xyz[0], xyz[2]]))
        assert turned == pytest.approx([height - 1 - v, u, height - 1 - pv, pu], abs=1e-9)


def test_a_distortion_model_that_cannot_be_turned_is_refused() -> None:
    model = CameraModel(height=4, width=6, distortion_model="fisheye_xyz", d=(0.1,), k=(1.0,) * 9, r=(1.0,) * 9,
                        p=(1.0,) * 12)
    with pytest.raises(ValueError, match="'fisheye_xyz'"):
        rotate_model_clockwise(model)
    assert rotate_model_clockwise(CameraModel(4, 6, "fisheye_xyz", (0.0,), (1.0,) * 9, (1.0,) * 9,
                                              (1.0,) * 12)).width == 4  # all-zero coefficients: nothing to turn
