"""The Stretch head camera is mounted on its side: its frames are turned upright at the robot boundary
(goat_stretch.camera) before the forward-clearance check uses them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from goat_core.types import CameraIntrinsics
from goat_stretch.camera import head_depth_snapshot, rotate_clockwise
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
    turned = forward_clearance_m(head_depth_snapshot(raw, raw_intr, 0.0, CAMERA_HEIGHT_M, sideways=True), config)
    assert turned == pytest.approx(truth)
    # Taken as upright, the raw frame swaps the axes: the pole lies across the image, and the check misses it.
    as_is = forward_clearance_m(head_depth_snapshot(raw, raw_intr, 0.0, CAMERA_HEIGHT_M, sideways=False), config)
    assert as_is != pytest.approx(POLE_AHEAD_M)


def test_a_frame_that_does_not_match_its_intrinsics_is_refused() -> None:
    with pytest.raises(ValueError, match="does not match the intrinsics"):
        rotate_clockwise(np.zeros((10, 20), np.float32), UPRIGHT)
