"""The experience as a robot records it: a video of RGB-D frames with pose, clock and proprioception.

FindingDory (Yadav et al. 2025, arXiv:2506.15635) hands the agent the video of its own past day. This module holds
that video in the form a robot would have it, and nothing more: per frame the colour image, the aligned depth,
the camera pose (base pose in the episode frame, head tilt and height, intrinsics), the time of day and the
robot's own proprioception (gripper closed or open, and whether a grasp succeeded: the gripper closed on
something). The simulator's instance segmentation is kept only when ground-truth perception is chosen (the
GOAT-GTSem setting), together with the simulator's semantic annotation of the instances it shows (category,
colour, material; FindingDory ships the same kind of table as ``object_attribute_annotation.csv``). What the
robot did to which object is *not* here: the memory (:mod:`goat_suites.findingdory.experience_memory`) has to infer it.

Frames are stored encoded, as a bag holds them (``goat_suites.findingdory.experience_bag``): colour as JPEG, depth as a
16-bit
PNG of millimetres (0 = no return, as a RealSense reports it), segmentation as a 16-bit PNG of instance id + 1
(0 = no instance). A 405-frame experience is ~40 MB this way instead of ~1 GB of arrays, and reading a frame back
from a bag gives the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import cv2
import numpy as np

from goat_core.errors import ConfigError, InvalidObservationError
from goat_core.types import CameraIntrinsics, Observation, Pose2D

DEPTH_UNIT_M = 0.001  # stored depth: uint16 millimetres
MAX_STORED_DEPTH_M = 65.535  # the largest uint16 millimetre value; farther returns are stored as "no return"
MAX_INSTANCE_ID = 65534  # stored segmentation: uint16 id + 1


@dataclass(frozen=True)
class Proprioception:
    """What the robot senses of its own gripper."""

    gripper_closed: bool
    holding: bool  # the gripper closed on an object (a grasp succeeded), as its aperture and effort tell

    def __post_init__(self) -> None:
        if self.holding and not self.gripper_closed:
            raise ConfigError("Proprioception: holding an object needs a closed gripper")


@dataclass(frozen=True)
class InstanceAnnotation:
    """The simulator's semantic annotation of one instance (ground-truth perception only)."""

    category: str
    colour: str
    material: str


@dataclass(frozen=True)
class VideoEncoding:
    """How an experience is recorded: JPEG quality, and whether the simulator's segmentation is kept."""

    with_segmentation: bool = True  # only for ground-truth perception
    jpeg_quality: int = 90

    def __post_init__(self) -> None:
        if not 1 <= self.jpeg_quality <= 100:
            raise ConfigError(f"VideoEncoding.jpeg_quality must be in [1, 100], got {self.jpeg_quality!r}")


def _decode(data: bytes, flags: int, what: str, index: int) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), flags)
    if image is None:
        raise InvalidObservationError(f"experience frame {index}: the stored {what} image cannot be decoded")
    return np.asarray(image)


def encode_rgb(rgb: np.ndarray, quality: int) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(rgb[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise InvalidObservationError(f"cannot encode a {rgb.shape} colour image as JPEG")
    return bytes(buf.tobytes())


def encode_depth(depth_m: np.ndarray) -> bytes:
    """Depth in metres -> 16-bit PNG of millimetres; no return (0, NaN) and returns beyond 65.5 m -> 0."""
    depth = np.nan_to_num(np.asarray(depth_m, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    mm = np.rint(depth / DEPTH_UNIT_M)
    mm[(mm < 0) | (mm > np.iinfo(np.uint16).max)] = 0
    ok, buf = cv2.imencode(".png", mm.astype(np.uint16))
    if not ok:
        raise InvalidObservationError(f"cannot encode a {depth.shape} depth image as PNG")
    return bytes(buf.tobytes())


def encode_segmentation(segmentation: np.ndarray) -> bytes:
    seg = np.asarray(segmentation, dtype=np.int64)
    if seg.size and (int(seg.min()) < -1 or int(seg.max()) > MAX_INSTANCE_ID):
        raise InvalidObservationError(f"segmentation ids must lie in [-1, {MAX_INSTANCE_ID}], got "
                                      f"[{int(seg.min())}, {int(seg.max())}]")
    ok, buf = cv2.imencode(".png", (seg + 1).astype(np.uint16))
    if not ok:
        raise InvalidObservationError(f"cannot encode a {seg.shape} segmentation as PNG")
    return bytes(buf.tobytes())


@dataclass(frozen=True, eq=False)
class VideoFrame:
    """One frame of the experience video (episode frame, REP 103; see :mod:`goat_core.types`)."""

    index: int  # position in the video, from 0
    time_s: float  # clock: seconds since midnight of the experience day
    pose: Pose2D  # GPS+compass: base pose in the episode frame
    camera_tilt_rad: float  # head tilt, 0 = level, positive looks up
    camera_height_m: float  # optical centre above the floor
    intrinsics: CameraIntrinsics
    proprioception: Proprioception
    rgb_jpeg: bytes
    depth_png: bytes  # uint16 millimetres
    segmentation_png: Optional[bytes] = None  # uint16 instance id + 1; ground-truth perception only

    def rgb(self) -> np.ndarray:
        """(H, W, 3) uint8 RGB."""
        return np.ascontiguousarray(_decode(self.rgb_jpeg, cv2.IMREAD_COLOR, "colour", self.index)[:, :, ::-1])

    def depth_m(self) -> np.ndarray:
        """(H, W) float32 metres along the optical axis, 0 = no return."""
        raw = _decode(self.depth_png, cv2.IMREAD_UNCHANGED, "depth", self.index)
        if raw.dtype != np.uint16 or raw.ndim != 2:
            raise InvalidObservationError(f"experience frame {self.index}: depth must be a 16-bit single-channel "
                                          f"PNG, got {raw.dtype} {raw.shape}")
        return (raw.astype(np.float32) * np.float32(DEPTH_UNIT_M)).astype(np.float32)

    def segmentation(self) -> Optional[np.ndarray]:
        """(H, W) int32 instance ids, -1 = none; None unless ground-truth perception was recorded."""
        if self.segmentation_png is None:
            return None
        raw = _decode(self.segmentation_png, cv2.IMREAD_UNCHANGED, "segmentation", self.index)
        if raw.dtype != np.uint16 or raw.ndim != 2:
            raise InvalidObservationError(f"experience frame {self.index}: segmentation must be a 16-bit "
                                          f"single-channel PNG, got {raw.dtype} {raw.shape}")
        return raw.astype(np.int32) - 1

    def observation(self, annotation: Mapping[int, InstanceAnnotation]) -> Observation:
        """The frame as the agent's :class:`Observation` (``step`` = frame index); the segmentation's instances
        get their categories from ``annotation``, which must name each of them."""
        seg = self.segmentation()
        categories: dict[int, str] = {}
        if seg is not None:
            for instance_id in np.flatnonzero(np.bincount(seg.ravel() + 1)[1:]).tolist():
                found = annotation.get(int(instance_id))
                if found is None:
                    raise InvalidObservationError(f"experience frame {self.index} shows instance {instance_id}, "
                                                  "which the video's annotation does not describe")
                categories[int(instance_id)] = found.category
        obs = Observation(rgb=self.rgb(), depth_m=self.depth_m(), pose=self.pose, camera_tilt_rad=self.camera_tilt_rad,
                          camera_height_m=self.camera_height_m, intrinsics=self.intrinsics, step=self.index,
                          segmentation=seg, instance_categories=categories)
        obs.validate()
        return obs


def encode_frame(obs: Observation, index: int, time_s: float, proprioception: Proprioception,
                 encoding: VideoEncoding = VideoEncoding()) -> VideoFrame:
    """Record one observation as a video frame (segmentation kept only if ``encoding`` says so)."""
    obs.validate()
    if encoding.with_segmentation and obs.segmentation is None:
        raise InvalidObservationError(f"experience frame {index}: ground-truth perception needs the simulator's "
                                      "segmentation, the observation has none")
    seg = encode_segmentation(obs.segmentation) if encoding.with_segmentation and obs.segmentation is not None \
        else None
    return VideoFrame(index=index, time_s=float(time_s), pose=obs.pose, camera_tilt_rad=float(obs.camera_tilt_rad),
                      camera_height_m=float(obs.camera_height_m), intrinsics=obs.intrinsics,
                      proprioception=proprioception, rgb_jpeg=encode_rgb(obs.rgb, encoding.jpeg_quality),
                      depth_png=encode_depth(obs.depth_m), segmentation_png=seg)


def check_frame_sequence(frames: Sequence[tuple[int, float]], what: str) -> None:
    """ConfigError unless the (index, time of day) of each frame are numbered 0..n-1 and never go back in time."""
    for k, (index, time_s) in enumerate(frames):
        if index != k:
            raise ConfigError(f"{what} frame {k} has index {index}; frames must be numbered 0..n-1")
        if k and time_s < frames[k - 1][1]:
            raise ConfigError(f"{what} frame {k} goes back in time: {time_s} s after {frames[k - 1][1]} s")


def subsample_indices(count: int, budget: int) -> tuple[int, ...]:
    """``budget`` frame indices spread evenly over ``count`` frames, first and last included (all when fewer).

    FindingDory's video-language baselines see the experience evenly subsampled to a fixed number of frames
    (96 in its released subsampled set)."""
    if budget < 1:
        raise ConfigError(f"frame budget must be >= 1, got {budget!r}")
    if count <= budget:
        return tuple(range(count))
    if budget == 1:
        return (0,)
    return tuple(int(math.floor(k * (count - 1) / (budget - 1) + 0.5)) for k in range(budget))


@dataclass(frozen=True, eq=False)
class ExperienceVideo:
    """The experience: frames in time order, and the simulator's annotation when it holds segmentation."""

    frames: tuple[VideoFrame, ...]
    annotation: Mapping[int, InstanceAnnotation] = field(default_factory=dict)  # instance id -> annotation

    def __post_init__(self) -> None:
        check_frame_sequence([(f.index, f.time_s) for f in self.frames], "video")
        with_seg = {frame.segmentation_png is not None for frame in self.frames}
        if len(with_seg) > 1:
            raise ConfigError("video frames must all carry segmentation (ground-truth perception) or none")

    def __len__(self) -> int:
        return len(self.frames)

    @property
    def has_segmentation(self) -> bool:
        return bool(self.frames) and self.frames[0].segmentation_png is not None

    def subsample(self, budget: int) -> tuple[int, ...]:
        return subsample_indices(len(self.frames), budget)

    def size_bytes(self) -> int:
        """Encoded size of the frames' images."""
        return sum(len(f.rgb_jpeg) + len(f.depth_png) + len(f.segmentation_png or b"") for f in self.frames)
