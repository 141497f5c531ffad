"""Colour evidence for image goals: does an instance's colour distribution appear at the goal picture's centre?

Keypoint matching (``goat_core.matching.image``) finds nothing on weakly textured objects: plain painted boxes,
a one-colour clock or book give no stable corners, and the matcher would otherwise end at an arbitrary instance
of the named category. Colour is the evidence left. This is colour indexing in the manner of Swain & Ballard
(IJCV 1991): the goal picture and each remembered instance are summarised as histograms, compared by histogram
intersection. The bins are the shading-tolerant colour names of ``goat_core.matching.attributes`` (eleven broad
names under an unknown brightness factor), so a face in shadow and the same face lit fall into one bin.

* Goal side: the picture's pixels weighted by a Gaussian of their distance to the centre (GOAT-Bench goal
  pictures are taken looking at the object, so it covers the centre; what lies around it weighs less).
* Instance side: the masked pixels of its best stored views (the object only).
* Score: ``sum_k min(goal_k, instance_k)`` over names, in [0, 1]: 1 when the instance's colours account for the
  goal centre's colours in the same shares.

It decides only among instances of the category an image goal names, where rivals are few and mostly differ
in colour; two look-alikes of one colour stay apart only by keypoints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np

from goat_core.errors import GoatError
from goat_core.matching.attributes import ColourNamer, instance_view_pixels
from goat_core.types import Instance


@dataclass(frozen=True)
class ColourEvidenceConfig:
    """How the goal picture and the instances are summarised, and when colour alone decides."""

    centre_sigma_frac: float = 0.15  # Gaussian weight of goal pixels: sigma as a share of the short side
    goal_pixels: int = 20_000  # goal pixels sampled on a regular grid (a vote needs no more)
    max_views: int = 3  # stored views of an instance whose masked pixels form its histogram
    max_pixels_per_view: int = 8192  # ... sampled on a regular grid per view
    min_view_pixels: int = 50  # an instance with fewer masked pixels has no colour evidence yet
    # Colour alone names the goal when the best intersection reaches this and beats every rival instance of the
    # category (twins merged) by ``confident_margin``.
    min_similarity: float = 0.75
    confident_margin: float = 0.25
    # Instances whose intersection is within this of the leader's are a tie (ImageMatcher.tied_with_best): the
    # agent then inspects the one cheapest to reach first instead of the leader.
    tie_margin: float = 0.1

    def __post_init__(self) -> None:
        if not 0.0 < self.centre_sigma_frac:
            raise ValueError(f"ColourEvidenceConfig.centre_sigma_frac must be positive, got {self.centre_sigma_frac!r}")
        for name in ("goal_pixels", "max_views", "max_pixels_per_view", "min_view_pixels"):
            if getattr(self, name) < 1:
                raise ValueError(f"ColourEvidenceConfig.{name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("min_similarity", "confident_margin", "tie_margin"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"ColourEvidenceConfig.{name} must be in [0, 1], got {getattr(self, name)!r}")


class ColourEvidence:
    """Histogram intersection of the goal picture's centre with each instance's colours (cached per view set)."""

    def __init__(self, config: ColourEvidenceConfig = ColourEvidenceConfig(),
                 namer: Optional[ColourNamer] = None) -> None:
        self.config = config
        self.namer = namer if namer is not None else ColourNamer()
        self._goal: Optional[np.ndarray] = None
        # Instance histograms keyed by (instance id, steps of the views used): a new best view recomputes it.
        self._instances: dict[int, tuple[tuple[int, ...], Optional[np.ndarray]]] = {}

    def reset(self) -> None:
        """Forget instance histograms (memory ids restart)."""
        self._instances.clear()

    def set_goal(self, image_rgb: np.ndarray) -> None:
        """The goal picture (h, w, 3) uint8; its centre-weighted colour-name histogram."""
        image = np.asarray(image_rgb)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8 or min(image.shape[:2]) < 2:
            raise GoatError(f"goal picture must be a (h, w, 3) uint8 image, got {image.dtype} {image.shape}")
        h, w = image.shape[:2]
        stride = max(1, math.isqrt((h * w) // self.config.goal_pixels))
        ys, xs = np.mgrid[0:h:stride, 0:w:stride]
        sigma_px = self.config.centre_sigma_frac * min(h, w)
        dist2 = (ys - (h - 1) / 2.0) ** 2 + (xs - (w - 1) / 2.0) ** 2
        weights = np.exp(-0.5 * dist2 / sigma_px ** 2).ravel()
        self._goal = self.namer.pixel_histogram(image[::stride, ::stride].reshape(-1, 3), weights)

    @property
    def goal_histogram(self) -> Optional[np.ndarray]:
        return self._goal

    def instance_histogram(self, instance: Instance) -> Optional[np.ndarray]:
        """Colour-name shares of an instance's masked view pixels; None with too few pixels to say."""
        cfg = self.config
        views = instance.views[:cfg.max_views]
        key = tuple(v.step for v in views)
        cached = self._instances.get(instance.instance_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        stacked = instance_view_pixels(instance, cfg.max_views, cfg.max_pixels_per_view)
        hist = self.namer.pixel_histogram(stacked) if len(stacked) >= cfg.min_view_pixels else None
        self._instances[instance.instance_id] = (key, hist)
        return hist

    def similarity(self, instance: Instance) -> Optional[float]:
        """Histogram intersection in [0, 1] with the goal picture's centre; None without evidence."""
        if self._goal is None:
            raise GoatError("ColourEvidence.similarity() called before set_goal()")
        hist = self.instance_histogram(instance)
        if hist is None:
            return None
        return float(np.minimum(hist, self._goal).sum())

    def scores(self, instances: Mapping[int, Instance]) -> dict[int, float]:
        """Similarity of every instance with colour evidence."""
        out: dict[int, float] = {}
        for iid, inst in instances.items():
            s = self.similarity(inst)
            if s is not None:
                out[iid] = s
        return out
