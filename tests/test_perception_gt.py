"""Ground-truth perception backend: segments straight from the simulator's instance ids."""

from __future__ import annotations

import math
from typing import Mapping, Optional

import numpy as np
import pytest

from goat_core.errors import InvalidObservationError
from goat_core.perception.base import PerceptionBackend
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import CameraIntrinsics, Observation, Pose2D

K = CameraIntrinsics.from_hfov(64, 48, math.radians(42.0))


def make_obs(seg: Optional[np.ndarray], categories: Mapping[int, str]) -> Observation:
    return Observation(rgb=np.zeros((K.height, K.width, 3), dtype=np.uint8),
                       depth_m=np.ones((K.height, K.width), dtype=np.float32), pose=Pose2D(0, 0, 0),
                       camera_tilt_rad=0.0, camera_height_m=1.31, intrinsics=K, segmentation=seg,
                       instance_categories=categories)


def scene(big_id: int, small_id: int) -> np.ndarray:
    seg = np.full((K.height, K.width), -1, dtype=np.int32)
    seg[10:20, 5:15] = big_id  # 100 px, box x 5..15, y 10..20
    seg[30:33, 40:43] = small_id  # 9 px
    return seg


@pytest.mark.parametrize(("big_id", "small_id"), [(3, 7), (0, 1), (2_000_000_000, 5)])
def test_reports_instances_with_enough_pixels(big_id: int, small_id: int) -> None:
    perception = GroundTruthPerception(["chair", "cup"], min_pixels=50)
    seg = scene(big_id, small_id)
    dets = perception.detect(make_obs(seg, {big_id: "chair", small_id: "cup"}))
    assert [d.instance_key for d in dets] == [big_id]
    det = dets[0]
    assert det.category == "chair"
    assert det.bbox_xyxy == (5, 10, 15, 20)
    assert np.array_equal(det.mask, seg == big_id)
    assert det.score == 1.0


@pytest.mark.parametrize("min_pixels", [1, 9, 10, 100, 101])
def test_min_pixels_threshold(min_pixels: int) -> None:
    perception = GroundTruthPerception(["chair", "cup"], min_pixels=min_pixels)
    dets = perception.detect(make_obs(scene(3, 7), {3: "chair", 7: "cup"}))
    expected = [k for k, n in ((3, 100), (7, 9)) if n >= min_pixels]
    assert [d.instance_key for d in dets] == expected


def test_categories_outside_labels_are_not_reported() -> None:
    dets = GroundTruthPerception(["cup"], min_pixels=1).detect(make_obs(scene(3, 7), {3: "chair", 7: "cup"}))
    assert [(d.instance_key, d.category) for d in dets] == [(7, "cup")]


def test_empty_frame_gives_no_detections() -> None:
    seg = np.full((K.height, K.width), -1, dtype=np.int32)
    assert GroundTruthPerception(["cup"]).detect(make_obs(seg, {})) == []


def test_missing_segmentation_raises() -> None:
    with pytest.raises(InvalidObservationError, match="segmentation"):
        GroundTruthPerception(["cup"]).detect(make_obs(None, {}))


def test_unknown_instance_id_raises() -> None:
    with pytest.raises(InvalidObservationError, match="7"):
        GroundTruthPerception(["cup"], min_pixels=1).detect(make_obs(scene(3, 7), {3: "chair"}))


@pytest.mark.parametrize(("labels", "min_pixels"),
                         [([], 50), ("chair", 50), (["chair", " "], 50), (["a"], 0)])
def test_bad_settings_raise(labels: object, min_pixels: int) -> None:
    with pytest.raises(ValueError):
        GroundTruthPerception(labels, min_pixels=min_pixels)


def test_satisfies_the_backend_protocol() -> None:
    backend: PerceptionBackend = GroundTruthPerception(["chair", "cup"])
    assert list(backend.labels) == ["chair", "cup"]
    assert backend.persistent_keys is True


def test_the_box_bounds_a_mask_in_pieces_touching_the_frame_edges() -> None:
    """An instance seen in pieces (a table behind a chair) gets one box around all of them, to the last column."""
    seg = np.full((K.height, K.width), -1, dtype=np.int32)
    seg[0:4, 60:64] = 4  # top right corner
    seg[40:48, 0:2] = 4  # bottom left corner
    seg[20, 30] = 4  # one stray pixel in the middle
    det = GroundTruthPerception(["table"], min_pixels=1).detect(make_obs(seg, {4: "table"}))[0]
    assert det.bbox_xyxy == (0, 0, 64, 48)
    seg[seg == 4] = -1
    seg[12:13, 7:30] = 4  # one row
    det = GroundTruthPerception(["table"], min_pixels=1).detect(make_obs(seg, {4: "table"}))[0]
    assert det.bbox_xyxy == (7, 12, 30, 13)
