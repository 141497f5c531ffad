"""Ground-truth perception: instance segments straight from the simulator (the GOAT-GTSem setting)."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import cv2
import numpy as np

from goat_core.errors import InvalidObservationError
from goat_core.types import Detection, Observation

# Above this many ids per pixel, counting with bincount would allocate more than the image itself.
_BINCOUNT_IDS_PER_PIXEL = 4


class GroundTruthPerception:
    """One detection per ground-truth instance with at least ``min_pixels`` pixels in the frame.

    Instances whose category is not in ``labels`` are not reported: the labels are the backend's vocabulary.
    """

    persistent_keys = True  # ground-truth ids name the same instance in every frame

    def __init__(self, labels: Sequence[str], min_pixels: int = 50) -> None:
        if isinstance(labels, str) or not labels or any(not str(x).strip() for x in labels):
            raise ValueError(f"labels must be a non-empty sequence of non-empty strings, got {labels!r}")
        if min_pixels < 1:
            raise ValueError(f"min_pixels must be >= 1, got {min_pixels}")
        self._labels: tuple[str, ...] = tuple(labels)
        self._label_set = frozenset(self._labels)
        self._min_pixels = int(min_pixels)

    @property
    def labels(self) -> Sequence[str]:
        return self._labels

    def detect(self, obs: Observation) -> list[Detection]:
        """Detections sorted by instance id, so the output order is deterministic."""
        seg = obs.segmentation
        if seg is None:
            raise InvalidObservationError("ground-truth perception needs obs.segmentation, got None")
        if seg.shape != obs.rgb.shape[:2]:
            raise InvalidObservationError(
                f"segmentation shape {seg.shape} differs from the rgb image's {obs.rgb.shape[:2]}"
            )
        ids, counts = self._count_ids(seg)
        detections: list[Detection] = []
        for inst_id, count in zip(ids.tolist(), counts.tolist(), strict=True):
            if count < self._min_pixels:
                continue
            category = obs.instance_categories.get(inst_id)
            if category is None:
                raise InvalidObservationError(
                    f"segmentation holds instance id {inst_id} but instance_categories has no entry for it"
                )
            if category not in self._label_set:
                continue
            mask = seg == inst_id
            # The box of the mask's pixels in one pass of OpenCV (two numpy reductions over the frame cost more).
            x, y, w, h = cv2.boundingRect(mask.view(np.uint8))
            bbox = (x, y, x + w, y + h)
            detections.append(Detection(instance_key=inst_id, category=category, mask=mask, score=1.0,
                                        bbox_xyxy=bbox))
        return detections

    @staticmethod
    def _count_ids(seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Instance ids (>= 0) present in ``seg`` and their pixel counts, ids ascending."""
        flat = seg.ravel()
        top = int(flat.max(initial=-1))
        if top < 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        if int(flat.min()) >= -1 and top < _BINCOUNT_IDS_PER_PIXEL * flat.size:
            counts = np.bincount(flat.astype(np.int64) + 1, minlength=top + 2)[1:]
            ids = np.flatnonzero(counts)
            return ids, counts[ids]
        ids, counts = np.unique(flat[flat >= 0], return_counts=True)
        return ids.astype(np.int64), counts


class GroundTruthWithoutIds:
    """Ground-truth masks and categories with their identity taken away, as a detector reports them: each frame's
    detections are numbered 0, 1, ... by decreasing size, so which object is which must come from geometry (an
    ablation of identity alone: perfect masks, no persistent keys)."""

    persistent_keys = False

    def __init__(self, labels: Sequence[str], min_pixels: int = 50) -> None:
        self._inner = GroundTruthPerception(labels, min_pixels)

    @property
    def labels(self) -> Sequence[str]:
        return self._inner.labels

    def detect(self, obs: Observation) -> list[Detection]:
        found = self._inner.detect(obs)
        order = sorted(range(len(found)), key=lambda k: (-int(np.count_nonzero(found[k].mask)), k))
        return [replace(found[k], instance_key=n) for n, k in enumerate(order)]
