"""The one typed vocabulary shared by the simulator, the robot, replay and the agent.

Frames and units (REP 103 throughout):

* ``world``: the simulator's fixed frame, x/y horizontal, z up, metres. The agent never sees it.
* ``episode`` (the agent's ``map`` frame): origin at the robot base at the start of the episode, x forward,
  y left, z up, metres. GPS+compass readings are poses in this frame.
* camera image: u (column) to the right, v (row) down; pinhole intrinsics in pixels. The optical axis is the
  base heading tilted by ``camera_tilt_rad`` (positive looks up).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Mapping, Optional

import numpy as np

from goat_core.errors import InvalidGoalError, InvalidObservationError


class DiscreteAction(IntEnum):
    """Discrete actions; the integer values follow habitat-lab's GOAT/ObjectNav action space order."""

    STOP = 0
    MOVE_FORWARD = 1
    TURN_LEFT = 2
    TURN_RIGHT = 3
    LOOK_UP = 4
    LOOK_DOWN = 5


@dataclass(frozen=True)
class ActionSizes:
    """Step sizes of the discrete actions (GOAT-Bench defaults; FindingDory uses 10 deg turns)."""

    forward_m: float = 0.25
    turn_rad: float = math.radians(30.0)
    look_rad: float = math.radians(30.0)

    def __post_init__(self) -> None:
        for name in ("forward_m", "turn_rad", "look_rad"):
            value = getattr(self, name)
            if not (value > 0.0 and math.isfinite(value)):
                raise ValueError(f"ActionSizes.{name} must be a positive finite number, got {value!r}")


@dataclass(frozen=True)
class CameraIntrinsics:
    """Pinhole intrinsics in pixels for an image of ``width`` x ``height``."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def from_hfov(cls, width: int, height: int, hfov_rad: float) -> CameraIntrinsics:
        """Square pixels, principal point at the image centre (Habitat's convention)."""
        if width <= 0 or height <= 0:
            raise ValueError(f"image size must be positive, got {width}x{height}")
        if not 0.0 < hfov_rad < math.pi:
            raise ValueError(f"hfov_rad must be in (0, pi), got {hfov_rad!r}")
        f = (width / 2.0) / math.tan(hfov_rad / 2.0)
        return cls(width=width, height=height, fx=f, fy=f, cx=(width - 1) / 2.0, cy=(height - 1) / 2.0)

    @property
    def hfov_rad(self) -> float:
        return 2.0 * math.atan((self.width / 2.0) / self.fx)

    @property
    def vfov_rad(self) -> float:
        return 2.0 * math.atan((self.height / 2.0) / self.fy)


@dataclass(frozen=True)
class Pose2D:
    """A planar base pose: position in metres and heading (yaw, counter-clockwise from +x) in radians."""

    x_m: float
    y_m: float
    yaw_rad: float

    def xy(self) -> np.ndarray:
        return np.array([self.x_m, self.y_m], dtype=np.float64)


@dataclass(frozen=True)
class Observation:
    """One synchronous sensor snapshot, as the Stretch head camera and base odometry provide it."""

    rgb: np.ndarray  # (H, W, 3) uint8, RGB order
    depth_m: np.ndarray  # (H, W) float32 metres along the optical axis; 0 = no return
    pose: Pose2D  # GPS+compass: base pose in the episode frame
    camera_tilt_rad: float  # head tilt, 0 = level, positive looks up
    camera_height_m: float  # optical centre above the floor
    intrinsics: CameraIntrinsics
    collided: bool = False  # the previous action was blocked (fully or partly)
    step: int = 0  # number of actions taken so far in the episode
    # Ground truth, simulator only (the GOAT-GTSem setting): instance id per pixel, -1 = no instance.
    segmentation: Optional[np.ndarray] = None  # (H, W) int32
    instance_categories: Mapping[int, str] = field(default_factory=dict)  # id -> category, for ids in frame
    # False when pose and depth come from real sensors (wheel odometry corrected by a localiser, noisy depth), not
    # the simulator's truth: the map and the believed pose may then be off by decimetres, and the agent measures
    # its last approach to a goal in the frame it sees (goat_core.agent.approach). The localiser sets it.
    sensing_exact: bool = True

    def validate(self) -> None:
        """Raise InvalidObservationError naming the first field that does not fit the intrinsics."""
        h, w = self.intrinsics.height, self.intrinsics.width
        if self.rgb.dtype != np.uint8 or self.rgb.shape != (h, w, 3):
            raise InvalidObservationError(
                f"rgb must be uint8 of shape {(h, w, 3)}, got {self.rgb.dtype} {self.rgb.shape}"
            )
        if self.depth_m.shape != (h, w) or not np.issubdtype(self.depth_m.dtype, np.floating):
            raise InvalidObservationError(
                f"depth_m must be float of shape {(h, w)}, got {self.depth_m.dtype} {self.depth_m.shape}"
            )
        if self.segmentation is not None and self.segmentation.shape != (h, w):
            raise InvalidObservationError(
                f"segmentation must have shape {(h, w)}, got {self.segmentation.shape}"
            )


class GoalModality(str, Enum):
    """Goal modalities, named as in GOAT-Bench task tuples."""

    CATEGORY = "object"
    DESCRIPTION = "description"
    IMAGE = "image"

    @classmethod
    def parse(cls, value: str) -> GoalModality:
        aliases = {"object": cls.CATEGORY, "category": cls.CATEGORY, "objectnav": cls.CATEGORY,
                   "description": cls.DESCRIPTION, "language": cls.DESCRIPTION, "text": cls.DESCRIPTION,
                   "languagenav": cls.DESCRIPTION, "image": cls.IMAGE, "imagenav": cls.IMAGE}
        try:
            return aliases[str(value).strip().lower()]
        except KeyError:
            raise InvalidGoalError(
                f"unknown goal modality {value!r}; expected one of {sorted(aliases)}"
            ) from None


MIN_GOAL_IMAGE_SIDE_PX = 32


@dataclass(frozen=True, eq=False)
class Goal:
    """What to go to. Exactly the field of the modality is set; ``target_id`` is for scoring, never for acting."""

    modality: GoalModality
    # CATEGORY: the object category as the episode names it ("sofa"). IMAGE: optionally the category of the
    # pictured object, as GOAT-Bench tasks carry it ([category, modality, object_id, image_idx]) and the GOAT
    # agent uses it to compare the picture only with remembered instances of that category.
    category: Optional[str] = None
    text: Optional[str] = None  # DESCRIPTION: free text ("the red mug on the kitchen counter")
    image: Optional[np.ndarray] = None  # IMAGE: (H, W, 3) uint8 RGB picture of the instance
    image_hfov_rad: Optional[float] = None  # IMAGE: field of view the goal picture was taken with
    level: Optional[str] = None  # LangMap level: scene | room | region | instance
    target_id: Optional[str] = None  # benchmark-side id of the goal; the agent must not use it

    def __post_init__(self) -> None:
        if not isinstance(self.modality, GoalModality):
            object.__setattr__(self, "modality", GoalModality.parse(str(self.modality)))
        if self.modality is GoalModality.CATEGORY:
            if not self.category or not self.category.strip():
                raise InvalidGoalError("category goal needs a non-empty category, got "
                                       f"{self.category!r}")
        elif self.modality is GoalModality.DESCRIPTION:
            if not self.text or not self.text.strip():
                raise InvalidGoalError(f"description goal needs non-empty text, got {self.text!r}")
        else:
            if self.category is not None and not self.category.strip():
                raise InvalidGoalError(f"image goal's category must be None or non-empty, got {self.category!r}")
            img = self.image
            if not isinstance(img, np.ndarray):
                raise InvalidGoalError(f"image goal needs an image array, got {type(img).__name__}")
            if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
                raise InvalidGoalError(
                    f"image goal must be an (H, W, 3) uint8 RGB array, got {img.dtype} {img.shape}"
                )
            if min(img.shape[:2]) < MIN_GOAL_IMAGE_SIDE_PX:
                raise InvalidGoalError(
                    f"image goal is too small: {img.shape[1]}x{img.shape[0]} px, need at least "
                    f"{MIN_GOAL_IMAGE_SIDE_PX} px on each side"
                )

    def describe(self) -> str:
        """A short human-readable form for logs and reports."""
        if self.modality is GoalModality.CATEGORY:
            return f"object: {self.category}"
        if self.modality is GoalModality.DESCRIPTION:
            return f"description: {self.text}"
        assert self.image is not None
        hint = f" ({self.category})" if self.category else ""
        return f"image: {self.image.shape[1]}x{self.image.shape[0]}{hint}"


@dataclass(frozen=True, eq=False)
class Detection:
    """One object segment in one frame, from any perception backend."""

    instance_key: int  # backend-side id: the GT instance id, or a per-frame index for detectors
    category: str
    mask: np.ndarray  # (H, W) bool
    score: float = 1.0
    bbox_xyxy: tuple[int, int, int, int] = (0, 0, 0, 0)  # pixel box, inclusive min, exclusive max


@dataclass(eq=False)
class InstanceView:
    """A stored view of an instance: the crop of the frame around it and where it was taken from."""

    rgb: np.ndarray  # (h, w, 3) uint8 crop of the frame around the instance
    mask: np.ndarray  # (h, w) bool, the instance's pixels within the crop
    pixel_count: int  # instance pixels in the full frame (the "coverage" used to rank views)
    pose: Pose2D  # base pose the view was taken from (episode frame)
    step: int


@dataclass(eq=False)
class Instance:
    """One object instance in the lifelong memory (episode frame)."""

    instance_id: int
    category: str
    points_xyz_m: np.ndarray  # (N, 3) float64, voxel-subsampled surface points in the episode frame
    num_observations: int = 1
    first_seen_step: int = 0
    last_seen_step: int = 0
    views: list[InstanceView] = field(default_factory=list)  # best first
    mean_rgb: Optional[np.ndarray] = None  # (3,) float, running mean colour of the instance's pixels
    room_type: Optional[str] = None  # inferred room type, when known

    @property
    def centroid_m(self) -> np.ndarray:
        return np.asarray(self.points_xyz_m.mean(axis=0))

    @property
    def bbox_min_m(self) -> np.ndarray:
        return np.asarray(self.points_xyz_m.min(axis=0))

    @property
    def bbox_max_m(self) -> np.ndarray:
        return np.asarray(self.points_xyz_m.max(axis=0))


@dataclass(frozen=True)
class StopDecision:
    """Why the agent ended a subtask with STOP: at a target it believes in, or because it gave up.

    ``gave_up`` is True only after the agent's recoveries were exhausted with no instance left to go to; the
    ``reason`` then lists what was tried. Target fields are None when it gave up.
    """

    gave_up: bool
    reason: str  # one line, for logs, results files and the ROS outcome
    instance_id: Optional[int] = None  # memory id of the instance it stopped at
    category: Optional[str] = None  # that instance's category
    confident: bool = False  # the matcher was sure of that instance
    target_xyz_m: Optional[tuple[float, float, float]] = None  # the instance's centroid, episode frame, metres

    @classmethod
    def at(cls, instance: Instance, confident: bool, reason: str) -> StopDecision:
        """A STOP at ``instance`` (not giving up)."""
        c = instance.centroid_m
        return cls(gave_up=False, reason=reason, instance_id=instance.instance_id, category=instance.category,
                   confident=confident, target_xyz_m=(float(c[0]), float(c[1]), float(c[2])))

    def __post_init__(self) -> None:
        if self.gave_up == (self.target_xyz_m is not None):
            raise ValueError(
                f"StopDecision needs a target exactly when it did not give up, got gave_up={self.gave_up} "
                f"and target_xyz_m={self.target_xyz_m!r}")
