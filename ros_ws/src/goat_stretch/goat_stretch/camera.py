"""The Stretch head camera at the robot boundary: its images made upright before anything uses them. No ROS here.

The D435i in the Stretch's head is mounted on its side: the image it publishes is the upright view turned 90
degrees counter-clockwise (stretch_ros2 turns it back with ``cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)`` in its
detection nodes before use). The obstacle check back-projects rows as "down" and columns as "right", so a raw frame
would swap the vertical and sideways axes; :func:`rotate_clockwise` turns an image and its intrinsics together.
"""

from __future__ import annotations

import numpy as np

from goat_core.types import CameraIntrinsics
from goat_stretch.driver import DepthSnapshot


def rotate_clockwise(image: np.ndarray, intrinsics: CameraIntrinsics) -> tuple[np.ndarray, CameraIntrinsics]:
    """``image`` (rows, columns[, channels]) turned 90 degrees clockwise, with its intrinsics.

    Pixel (u, v) of the input lands at (height - 1 - v, u): the focal lengths swap, the new principal point is
    (height - 1 - cy, cx).
    """
    if image.shape[:2] != (intrinsics.height, intrinsics.width):
        raise ValueError(f"image shape {image.shape[:2]} does not match the intrinsics "
                         f"({intrinsics.height}, {intrinsics.width})")
    rotated = np.ascontiguousarray(np.rot90(image, k=-1))
    return rotated, CameraIntrinsics(width=intrinsics.height, height=intrinsics.width, fx=intrinsics.fy,
                                     fy=intrinsics.fx, cx=intrinsics.height - 1 - intrinsics.cy, cy=intrinsics.cx)


def head_depth_snapshot(depth_m: np.ndarray, intrinsics: CameraIntrinsics, camera_tilt_rad: float,
                        camera_height_m: float, sideways: bool) -> DepthSnapshot:
    """A depth frame of the head camera for the obstacle check, made upright first when the camera is ``sideways``
    (the Stretch's mounting)."""
    if sideways:
        depth_m, intrinsics = rotate_clockwise(depth_m, intrinsics)
    return DepthSnapshot(depth_m, intrinsics, camera_tilt_rad, camera_height_m)
