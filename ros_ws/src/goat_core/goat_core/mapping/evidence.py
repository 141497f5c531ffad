"""Evidence over views: when a remembered instance is trusted, what it is, and when it is forgotten.

A real detector misses, confuses look-alikes and sees things that are not there (goat_core.perception.
detector_errors models it). One frame is then weak evidence; many frames are strong. Per instance this module
keeps:

* category votes: the detection scores summed per category; the instance is named by the largest sum, so a
  confusion in one view is outvoted by the correct name in later views (confusions resolved by repeated looks);
* the number of detections and the fused confidence of the winning category (noisy-OR of its scores,
  1 - prod(1 - s)): an instance is trusted, and shown to the matcher, only with ``min_detections`` detections and
  ``min_confidence``;
* the views in a row in which it should have been detected and was not: its points project into the image,
  unoccluded (the depth image sees them, not something nearer), large enough to be detected, and no detection
  landed on it. After ``forget_after_unseen`` such views it is forgotten: a phantom, or an object that is not
  there. An instance detected many times needs as many such views in a row (``forget_unseen_per_detection``): a
  detector that misses a small, far object one frame in two would otherwise forget a clock it found fourteen
  times, and the agent would give up on a goal it had seen. GOAT-Bench's modular agent has no such rule, and
  loses half its success to Detic (Khanna et al., 2024).

Off by default: with ground-truth perception every detection is right and the gates only delay.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from goat_core.errors import ConfigError, require_at_least, require_positive
from goat_core.geometry import episode_to_pixels
from goat_core.types import Instance, Observation

EVIDENCE_MODES = ("auto", "on", "off")


def evidence_wanted(mode: str, perception_errors: str) -> bool:
    """Whether evidence over views is on for ``mode`` (auto: exactly when ``perception_errors`` is not "off");
    ConfigError naming a mode that is not one of EVIDENCE_MODES."""
    if mode not in EVIDENCE_MODES:
        raise ConfigError(f"evidence must be one of {EVIDENCE_MODES}, got {mode!r}")
    return mode == "on" or (mode == "auto" and perception_errors != "off")


@dataclass(frozen=True)
class EvidenceConfig:
    """The evidence rules of the instance memory (see the module docstring)."""

    enabled: bool = False
    min_detections: int = 2  # detections before an instance is trusted
    min_confidence: float = 0.6  # fused confidence (noisy-OR) of its winning category before it is trusted
    forget_after_unseen: int = 3  # views in a row that should have shown it and did not
    # ... and at least this many such views per detection of it so far (0: forget_after_unseen alone)
    forget_unseen_per_detection: float = 1.0
    min_expected_pixels: float = 600.0  # smaller than this in the image: not detecting it is no evidence
    visible_fraction: float = 0.3  # share of its points that must be in the image and unoccluded
    surface_tolerance_m: float = 0.15  # a point is unoccluded when the depth image sees it within this
    max_depth_m: float = 4.0  # farther than this, not detecting it is no evidence
    # Detectors without persistent ids: a detection named otherwise joins an instance sharing this much of its
    # voxels (a confusion is a vote, not a new object).
    other_name_overlap_ratio: float = 0.5
    # Mask pixels farther than this from the mask's median depth are not placed in the map (a mask that bleeds
    # onto the wall behind would smear the object there); 0 keeps every pixel.
    mask_depth_band_m: float = 0.6
    # Trackers merge and split ids (goat_core.perception.detector_errors): with persistent keys, a detection is
    # taken for the instance its key names only where it touches that instance (its points come within this of
    # the instance's); elsewhere it goes to a same-named instance it overlaps, or starts a new one. 0: trust keys.
    tracker_gap_m: float = 0.25
    # Goal verification at arrival (goat_core.agent.verification): before STOP, this many looks at the target from
    # its goal spot must name the category it had at the first look (or verify_max_looks looks be taken); once
    # its votes name another, it is "not here" and set aside for the subtask. 0: STOP at first sight.
    verify_looks: int = 2
    verify_max_looks: int = 5
    # Before settling for a match it does not trust, or giving up, with nothing left to explore: trust every
    # instance still remembered for the rest of the subtask (InstanceMemory.relax_trust), so the goal seen once,
    # or seen with low scores, is walked to and looked at again (the arrival check still judges it).
    trust_all_before_giving_up: bool = True
    # Then, before giving up: bring back the instances forgotten earlier in the episode (InstanceMemory.recall) and
    # ask the matcher again. A small goal missed in most frames can be forgotten, and a home explored once is then
    # "empty"; the arrival check still judges what is recalled.
    recall_forgotten_before_giving_up: bool = True
    max_forgotten: int = 1000  # forgotten instances kept for the recall, the oldest dropped first (a lifelong node)

    def __post_init__(self) -> None:
        require_at_least(self, 1, ("min_detections", "forget_after_unseen"))
        if self.max_forgotten < 0:
            raise ValueError(f"EvidenceConfig.max_forgotten must be >= 0, got {self.max_forgotten!r}")
        if self.verify_looks < 0:
            raise ValueError(f"EvidenceConfig.verify_looks must be >= 0, got {self.verify_looks!r}")
        if self.verify_max_looks < self.verify_looks:
            raise ValueError(f"EvidenceConfig.verify_max_looks must be >= verify_looks ({self.verify_looks}), got "
                             f"{self.verify_max_looks!r}")
        for name in ("min_confidence", "visible_fraction", "other_name_overlap_ratio"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"EvidenceConfig.{name} must be in [0, 1], got {getattr(self, name)!r}")
        for name in ("mask_depth_band_m", "tracker_gap_m", "forget_unseen_per_detection"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"EvidenceConfig.{name} must be >= 0, got {getattr(self, name)!r}")
        require_positive(self, ("min_expected_pixels", "surface_tolerance_m", "max_depth_m"))


@dataclass
class InstanceEvidence:
    """What the views so far say about one instance."""

    votes: dict[str, float] = field(default_factory=dict)  # category -> summed detection score
    miss_products: dict[str, float] = field(default_factory=dict)  # category -> prod(1 - score)
    detections: int = 0
    unseen_in_a_row: int = 0

    def add(self, category: str, score: float) -> None:
        s = float(np.clip(score, 0.0, 1.0))
        self.votes[category] = self.votes.get(category, 0.0) + s
        self.miss_products[category] = self.miss_products.get(category, 1.0) * (1.0 - s)
        self.detections += 1
        self.unseen_in_a_row = 0

    def category(self) -> str:
        """The category with the largest summed score (ties: the name first in sorted order)."""
        return min(self.votes, key=lambda c: (-self.votes[c], c))

    def confidence(self) -> float:
        """Noisy-OR of the winning category's scores."""
        return 1.0 - self.miss_products[self.category()]

    def trusted(self, config: EvidenceConfig) -> bool:
        return self.detections >= config.min_detections and self.confidence() >= config.min_confidence

    def forgotten(self, config: EvidenceConfig) -> bool:
        """Whether the views in a row that should have shown it and did not are enough to forget it:
        ``forget_after_unseen``, and no fewer than ``forget_unseen_per_detection`` per detection so far."""
        needed = max(float(config.forget_after_unseen), config.forget_unseen_per_detection * self.detections)
        return self.unseen_in_a_row >= needed


def should_be_detected(inst: Instance, obs: Observation, config: EvidenceConfig, voxel_m: float) -> bool:
    """Whether this view shows ``inst`` well enough that a detector should have found it.

    Its points are projected into the image; a point counts as seen when it lands inside the image, within
    ``max_depth_m``, where the depth image reads its depth (within ``surface_tolerance_m``): nearer means hidden
    behind something. Enough seen points (``visible_fraction``), and an expected area of at least
    ``min_expected_pixels`` (each point stands for a voxel_m square), make the view count.
    """
    points = inst.points_xyz_m
    if points.shape[0] == 0:
        return False
    uv, depth = episode_to_pixels(points, obs.intrinsics, obs.pose, obs.camera_height_m, obs.camera_tilt_rad)
    k = obs.intrinsics
    with np.errstate(invalid="ignore"):
        inside = ((depth > 0.1) & (depth <= config.max_depth_m) & (uv[:, 0] >= 0) & (uv[:, 0] < k.width)
                  & (uv[:, 1] >= 0) & (uv[:, 1] < k.height))
    if not inside.any():
        return False
    cols = uv[inside, 0].astype(np.int64)
    rows = uv[inside, 1].astype(np.int64)
    seen_depth = obs.depth_m[rows, cols]
    seen = (seen_depth > 0) & (np.abs(seen_depth - depth[inside]) <= config.surface_tolerance_m)
    if float(np.count_nonzero(seen)) < config.visible_fraction * points.shape[0]:
        return False
    expected_pixels = float(np.sum((k.fx * voxel_m / depth[inside][seen]) ** 2))
    return expected_pixels >= config.min_expected_pixels
