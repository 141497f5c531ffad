"""The Stretch head camera at the robot boundary: its frames made upright before anything uses them. No ROS here.

The D435i in the Stretch's head is mounted on its side: the image it publishes is the upright view turned 90
degrees counter-clockwise (stretch_ros2 turns it back with ``cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)`` in its
detection nodes before use). The head_camera relay (:mod:`goat_stretch.camera_node`) turns colour, depth and the
camera model clockwise with the functions here, so every consumer (controller, perception, instance mapping, the
driver's obstacle check) sees rows as "down" and columns as "right".

Pixel (u, v) of a sideways frame of height H lands at (H - 1 - v, u) upright. In the optical frame that is the
rotation x' = -y, y' = x (z stays along the optical axis): the focal lengths swap, the principal point becomes
(H - 1 - cy, cx), and the tangential distortion coefficients of plumb_bob / rational_polynomial become
(p2, -p1) (the radial ones do not depend on the direction).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from goat_core.types import CameraIntrinsics

# Bytes per pixel of the encodings a head camera publishes (sensor_msgs/image_encodings.hpp names). Packed formats
# (yuv422, bayer) are not listed: turning them pixel by pixel would mix their shared bytes.
BYTES_PER_PIXEL = {"rgb8": 3, "bgr8": 3, "rgba8": 4, "bgra8": 4, "mono8": 1, "8UC1": 1, "8UC3": 3, "mono16": 2,
                   "16UC1": 2, "16SC1": 2, "32FC1": 4, "32SC1": 4, "64FC1": 8}
# Distortion models whose coefficients start k1, k2, p1, p2 (image_geometry's names) and which may be turned.
TANGENTIAL_MODELS = ("plumb_bob", "rational_polynomial")
RADIAL_ONLY_MODELS = ("equidistant",)


def rotate_clockwise(image: np.ndarray, intrinsics: CameraIntrinsics) -> tuple[np.ndarray, CameraIntrinsics]:
    """``image`` (rows, columns[, channels]) turned 90 degrees clockwise, with its intrinsics."""
    if image.shape[:2] != (intrinsics.height, intrinsics.width):
        raise ValueError(f"image shape {image.shape[:2]} does not match the intrinsics "
                         f"({intrinsics.height}, {intrinsics.width})")
    rotated = np.ascontiguousarray(np.rot90(image, k=-1))
    return rotated, CameraIntrinsics(width=intrinsics.height, height=intrinsics.width, fx=intrinsics.fy,
                                     fy=intrinsics.fx, cx=intrinsics.height - 1 - intrinsics.cy, cy=intrinsics.cx)


@dataclass(frozen=True)
class RawImage:
    """An image as sensor_msgs/Image carries it: ``data`` rows of ``step`` bytes (padding allowed)."""

    height: int
    width: int
    encoding: str
    step: int
    data: bytes


def rotate_raw_clockwise(image: RawImage) -> RawImage:
    """``image`` turned 90 degrees clockwise, byte for byte: the encoding (and its byte order) stays, rows become
    unpadded. ValueError naming the problem for an encoding that cannot be turned or data that does not fit."""
    bpp = BYTES_PER_PIXEL.get(image.encoding)
    if bpp is None:
        raise ValueError(f"cannot turn an image of encoding {image.encoding!r}; known: {sorted(BYTES_PER_PIXEL)}")
    row_bytes = image.width * bpp
    if image.step < row_bytes or len(image.data) < image.step * image.height:
        raise ValueError(f"{image.width}x{image.height} {image.encoding} image needs step >= {row_bytes} and "
                         f"{image.step * image.height} bytes, got step {image.step} and {len(image.data)} bytes")
    rows = np.frombuffer(image.data, np.uint8, count=image.step * image.height).reshape(image.height, image.step)
    pixels = rows[:, :row_bytes].reshape(image.height, image.width, bpp)
    turned = np.ascontiguousarray(np.rot90(pixels, k=-1))  # (width, height, bpp)
    return RawImage(height=image.width, width=image.height, encoding=image.encoding, step=image.height * bpp,
                    data=turned.tobytes())


@dataclass(frozen=True)
class CameraModel:
    """The fields of sensor_msgs/CameraInfo that depend on the image's orientation (row-major matrices)."""

    height: int
    width: int
    distortion_model: str
    d: tuple[float, ...]
    k: tuple[float, ...]  # 3x3
    r: tuple[float, ...]  # 3x3
    p: tuple[float, ...]  # 3x4
    binning_x: int = 0
    binning_y: int = 0
    roi: tuple[int, int, int, int] = (0, 0, 0, 0)  # x_offset, y_offset, height, width (0s: the full image)


# Optical frame of the sideways image -> optical frame of the upright image (x' = -y, y' = x, z' = z).
_TURN = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def rotate_model_clockwise(model: CameraModel) -> CameraModel:
    """The camera model of the image :func:`rotate_raw_clockwise` makes: K, R, P, D, size, binning and ROI turned.

    ValueError for a distortion model whose coefficients this does not know how to turn (non-zero ones only).
    """
    if len(model.k) != 9 or len(model.r) != 9 or len(model.p) != 12:
        raise ValueError(f"camera_info needs K of 9, R of 9 and P of 12 values, got {len(model.k)}, "
                         f"{len(model.r)} and {len(model.p)}")
    d = list(model.d)
    if model.distortion_model in TANGENTIAL_MODELS and len(d) >= 4:
        d[2], d[3] = d[3], -d[2]
    elif model.distortion_model not in RADIAL_ONLY_MODELS and any(d):
        raise ValueError(f"cannot turn distortion model {model.distortion_model!r} with coefficients {d}; "
                         f"known: {TANGENTIAL_MODELS + RADIAL_ONLY_MODELS}")
    pixels = np.array([[0.0, -1.0, model.height - 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # (u, v) -> (H-1-v, u)
    k = pixels @ np.array(model.k).reshape(3, 3) @ _TURN.T
    r = _TURN @ np.array(model.r).reshape(3, 3) @ _TURN.T
    p = pixels @ np.array(model.p).reshape(3, 4) @ np.block([[_TURN.T, np.zeros((3, 1))], [np.zeros((1, 3)), 1.0]])
    x_off, y_off, roi_h, roi_w = model.roi
    roi = (0, 0, 0, 0) if not any(model.roi) else (model.height - y_off - roi_h, x_off, roi_w, roi_h)
    return replace(model, height=model.width, width=model.height, d=tuple(float(x) for x in d),
                   k=_flat(k), r=_flat(r), p=_flat(p), binning_x=model.binning_y, binning_y=model.binning_x, roi=roi)


def _flat(matrix: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) + 0.0 for x in matrix.ravel())  # + 0.0: no -0.0 in the published matrices
