"""Keyframe memory: whole camera frames, as keypoints labelled with the instance under each, for image goals.

An image goal is a picture taken from near its object, so it shows the object *and its surroundings*: the wall
behind it, the furniture beside it, the floor. Instance views (crops of one object's mask) keep only the object,
and on weakly textured objects seen from another distance or side they share few keypoints with the goal.
Whole frames keep the context. A frame that shows the goal's surroundings matches the goal picture with many
geometrically consistent keypoints, and the ones that fall near the picture's centre, where GOAT goal pictures
frame their object, land on the goal instance in the frame. Counting those per instance over every remembered
frame localises the goal even when no single crop does (``goat_core.matching.image``).

Frames are kept only from new places or headings (``min_distance_m``, ``min_heading_rad``), and only their SIFT
keypoints are stored (descriptors as uint8, with the memory id of the instance under each keypoint), about
60 kB a frame instead of 700 kB of pixels and labels. Extraction runs once per kept frame, whatever the goal,
because a later image goal needs the frames seen before it (the lifelong part of the memory).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import cv2
import numpy as np

from goat_core.types import Observation, Pose2D


@dataclass(frozen=True)
class KeyframeConfig:
    """Which frames are kept and how they are described."""

    # Off by default. Measured on 20 procedural episodes each (seed 9000, ground truth perception): with
    # keyframes SR 0.780 / SPL 0.602 (image goals 0.52 / 0.35), without SR 0.799 / SPL 0.587 (image 0.58 /
    # 0.29). Frame votes find the goal sooner when they are right (higher SPL) but also make some look-alikes
    # confident, and SR is GOAT-Bench's primary metric.
    enabled: bool = False
    min_distance_m: float = 0.5  # a frame is new if no kept frame was taken this close ...
    min_heading_rad: float = math.radians(30.0)  # ... looking within this angle ...
    min_tilt_rad: float = math.radians(15.0)  # ... with the head tilted within this angle
    # SIFT runs on the frame downscaled by this factor: 0.75 costs about half of full size and kept goal
    # localisation on simulator homes (weighted central votes for the goal 4-12x those of the next instance).
    image_scale: float = 0.75
    features: int = 600  # SIFT keypoints kept per frame
    sift_contrast_threshold: float = 0.02  # as the instance-view matcher: the renders are smooth
    max_keyframes: int = 3000  # oldest frames are dropped beyond this (~180 MB of descriptors)

    def __post_init__(self) -> None:
        for name in ("min_distance_m", "min_heading_rad", "min_tilt_rad", "sift_contrast_threshold"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"KeyframeConfig.{name} must be positive, got {getattr(self, name)!r}")
        if not 0.0 < self.image_scale <= 1.0:
            raise ValueError(f"KeyframeConfig.image_scale must be in (0, 1], got {self.image_scale!r}")
        for name in ("features", "max_keyframes"):
            if getattr(self, name) < 1:
                raise ValueError(f"KeyframeConfig.{name} must be >= 1, got {getattr(self, name)!r}")


@dataclass(frozen=True, eq=False)
class Keyframe:
    """One kept frame, reduced to labelled keypoints."""

    index: int  # 0, 1, 2, ... in order of capture; restarts when the memory is cleared
    step: int  # the observation's step
    pose: Pose2D  # base pose in the episode frame when the frame was taken
    camera_tilt_rad: float
    points_px: np.ndarray  # (K, 2) float32 keypoint positions in the downscaled frame (x right, y down)
    descriptors: np.ndarray  # (K, 128) uint8 SIFT descriptors
    instance_ids: np.ndarray  # (K,) int64 memory id of the instance under each keypoint, -1 for none


class KeyframeMemory:
    """The kept frames of an episode (or of a subtask in the no-memory ablation), oldest first."""

    def __init__(self, config: KeyframeConfig = KeyframeConfig()) -> None:
        self.config = config
        self._sift = cv2.SIFT.create(nfeatures=config.features, contrastThreshold=config.sift_contrast_threshold)
        self._frames: list[Keyframe] = []
        self._views = np.zeros((0, 4))  # per kept frame: x_m, y_m, yaw_rad, tilt_rad
        self._next_index = 0

    @property
    def keyframes(self) -> Sequence[Keyframe]:
        return self._frames

    def clear(self) -> None:
        self._frames.clear()
        self._views = np.zeros((0, 4))
        self._next_index = 0

    def is_new_view(self, pose: Pose2D, camera_tilt_rad: float) -> bool:
        """No kept frame was taken from near this pose looking the same way."""
        cfg = self.config
        v = self._views
        near = np.hypot(v[:, 0] - pose.x_m, v[:, 1] - pose.y_m) < cfg.min_distance_m
        dyaw = np.abs(np.angle(np.exp(1j * (v[:, 2] - pose.yaw_rad))))
        same = near & (dyaw < cfg.min_heading_rad) & (np.abs(v[:, 3] - camera_tilt_rad) < cfg.min_tilt_rad)
        return not bool(same.any())

    def offer(self, obs: Observation, labelled_masks: Sequence[tuple[np.ndarray, int]]) -> Optional[Keyframe]:
        """Keep ``obs`` if it shows a new view; ``labelled_masks`` are (H, W) bool masks with their memory ids.

        Returns the new keyframe, or None when the view was not new (or keyframes are disabled).
        """
        if not self.config.enabled or not self.is_new_view(obs.pose, obs.camera_tilt_rad):
            return None
        h, w = int(obs.rgb.shape[0]), int(obs.rgb.shape[1])
        labels = np.full((h, w), -1, dtype=np.int64)
        for mask, mem_id in labelled_masks:
            labels[mask] = mem_id
        gray = cv2.cvtColor(np.ascontiguousarray(obs.rgb), cv2.COLOR_RGB2GRAY)
        scale = self.config.image_scale
        if scale < 1.0:
            size = (max(1, round(gray.shape[1] * scale)), max(1, round(gray.shape[0] * scale)))
            gray = cv2.resize(gray, size, interpolation=cv2.INTER_AREA)
        keypoints, descriptors = self._sift.detectAndCompute(gray, None)
        if descriptors is None or len(keypoints) == 0:
            points = np.zeros((0, 2), np.float32)
            desc = np.zeros((0, 128), np.uint8)
        else:
            points = np.array([kp.pt for kp in keypoints], dtype=np.float32)
            # OpenCV's SIFT descriptors are floats in [0, 255]; rounding them to bytes quarters the storage and
            # changes nearest-neighbour distances by well under a percent.
            desc = np.clip(np.rint(descriptors), 0, 255).astype(np.uint8)
        rows = np.clip((points[:, 1] / scale).astype(np.int64), 0, h - 1)
        cols = np.clip((points[:, 0] / scale).astype(np.int64), 0, w - 1)
        frame = Keyframe(index=self._next_index, step=obs.step, pose=obs.pose, camera_tilt_rad=obs.camera_tilt_rad,
                         points_px=points, descriptors=desc, instance_ids=labels[rows, cols])
        self._next_index += 1
        self._frames.append(frame)
        view = [obs.pose.x_m, obs.pose.y_m, obs.pose.yaw_rad, obs.camera_tilt_rad]
        self._views = np.vstack([self._views, view])
        if len(self._frames) > self.config.max_keyframes:
            del self._frames[0]
            self._views = self._views[1:]
        return frame
