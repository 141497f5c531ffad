"""Image preprocessing of CLIP, OWL-ViT and OWLv2 in numpy/OpenCV, and the way back from boxes to pixels.

transformers' own image processors need torchvision; these functions reproduce what they do, from the processor
defaults of each family (facts, not code, taken from the transformers documentation):

* CLIP: resize the shorter side to the input side (bicubic), centre crop a square, scale to [0, 1], normalise.
* OWL-ViT: resize the whole frame to the square input, aspect ratio not kept (bicubic); predicted boxes are
  relative to the frame, so x scales with the frame width and y with its height.
* OWLv2: pad the frame at the bottom and right to a square (black), then resize to the input side (bilinear,
  anti-aliased); boxes are relative to the padded square, so both axes scale with the longer frame side.

Downscaling uses OpenCV's area interpolation (anti-aliased like PIL's resize); upscaling uses bicubic.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from goat_core.errors import InvalidObservationError
from goat_core.perception.model_folder import ImageNormalisation


def _check_rgb(rgb: np.ndarray) -> None:
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3 or min(rgb.shape[:2]) < 1:
        raise InvalidObservationError(f"expected an (H, W, 3) uint8 RGB image, got {rgb.dtype} {rgb.shape}")


def _resize(rgb: np.ndarray, width_px: int, height_px: int) -> np.ndarray:
    shrinking = width_px <= rgb.shape[1] and height_px <= rgb.shape[0]
    interpolation = cv2.INTER_AREA if shrinking else cv2.INTER_CUBIC
    return np.asarray(cv2.resize(np.ascontiguousarray(rgb), (width_px, height_px), interpolation=interpolation))


def normalise(rgb: np.ndarray, norm: ImageNormalisation) -> np.ndarray:
    """(3, H, W) float32 network input from an (H, W, 3) uint8 image."""
    mean = np.asarray(norm.mean, dtype=np.float32)
    std = np.asarray(norm.std, dtype=np.float32)
    x = (rgb.astype(np.float32) / np.float32(255.0) - mean) / std
    return np.ascontiguousarray(x.transpose(2, 0, 1), dtype=np.float32)


def clip_pixels(rgb: np.ndarray, side_px: int, norm: ImageNormalisation) -> np.ndarray:
    """CLIP input: shorter side to ``side_px``, centre crop, normalised; (3, side, side) float32."""
    _check_rgb(rgb)
    h, w = rgb.shape[:2]
    scale = side_px / min(h, w)
    new_w, new_h = max(side_px, round(w * scale)), max(side_px, round(h * scale))
    resized = _resize(rgb, new_w, new_h)
    top, left = (new_h - side_px) // 2, (new_w - side_px) // 2
    return normalise(resized[top:top + side_px, left:left + side_px], norm)


def owlvit_pixels(rgb: np.ndarray, side_px: int, norm: ImageNormalisation) -> np.ndarray:
    """OWL-ViT input: the frame stretched to a square, normalised; (3, side, side) float32."""
    _check_rgb(rgb)
    return normalise(_resize(rgb, side_px, side_px), norm)


def owlv2_pixels(rgb: np.ndarray, side_px: int, norm: ImageNormalisation) -> np.ndarray:
    """OWLv2 input: the frame padded to a square at the bottom and right, resized, normalised."""
    _check_rgb(rgb)
    h, w = rgb.shape[:2]
    side = max(h, w)
    padded = np.zeros((side, side, 3), dtype=np.uint8)
    padded[:h, :w] = rgb
    return normalise(_resize(padded, side_px, side_px), norm)


@dataclass(frozen=True)
class BoxScale:
    """Multipliers from normalised box coordinates to pixels of the original frame."""

    x_px: float
    y_px: float


def owl_box_scale(variant: str, width_px: int, height_px: int) -> BoxScale:
    """OWL-ViT boxes are relative to the stretched frame, OWLv2 boxes to the padded square."""
    if variant == "owlv2":
        side = float(max(width_px, height_px))
        return BoxScale(side, side)
    return BoxScale(float(width_px), float(height_px))


def cxcywh_to_xyxy_px(boxes: np.ndarray, scale: BoxScale, width_px: int, height_px: int) -> np.ndarray:
    """(N, 4) normalised (cx, cy, w, h) boxes to (N, 4) float pixel (x0, y0, x1, y1), clipped to the frame."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    half_w, half_h = 0.5 * b[:, 2], 0.5 * b[:, 3]
    xyxy = np.stack([(b[:, 0] - half_w) * scale.x_px, (b[:, 1] - half_h) * scale.y_px,
                     (b[:, 0] + half_w) * scale.x_px, (b[:, 1] + half_h) * scale.y_px], axis=1)
    xyxy[:, [0, 2]] = np.clip(xyxy[:, [0, 2]], 0.0, float(width_px))
    xyxy[:, [1, 3]] = np.clip(xyxy[:, [1, 3]], 0.0, float(height_px))
    return xyxy


def pixel_box(xyxy: np.ndarray) -> tuple[int, int, int, int]:
    """Integer box covering a float box: inclusive min (floor), exclusive max (ceil)."""
    x0, y0, x1, y1 = (float(v) for v in xyxy)
    return (int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1)))
