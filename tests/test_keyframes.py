"""Keyframe memory and the image matcher's whole-frame votes, with real SIFT on synthetic textured scenes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from goat_core.mapping.instance_memory import InstanceMemory, InstanceMemoryConfig
from goat_core.mapping.keyframes import KeyframeConfig, KeyframeMemory
from goat_core.matching.image import ImageMatcher, ImageMatcherConfig
from goat_core.types import CameraIntrinsics, Detection, Goal, GoalModality, Instance, Observation, Pose2D
from tests.test_image_matcher import GOAL_SHAPE, render, similarity_h, texture

K = CameraIntrinsics.from_hfov(GOAL_SHAPE[1], GOAL_SHAPE[0], math.radians(42.0))


def scene(shift_px: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A wall texture with an object texture in front of it: the picture and the two masks (object, wall)."""
    wall, wall_mask = render(texture(11, 256), similarity_h(0, 2.6, -20 + shift_px, -10), GOAL_SHAPE, 100)
    obj, obj_mask = render(texture(12, 192), similarity_h(0, 1.0, 84 + shift_px, 224), GOAL_SHAPE, 100)
    img = wall.copy()
    img[obj_mask] = obj[obj_mask]
    return img, obj_mask, wall_mask & ~obj_mask


def observation(rgb: np.ndarray, pose: Pose2D, step: int = 0, tilt_rad: float = 0.0) -> Observation:
    depth = np.full(rgb.shape[:2], 2.0, dtype=np.float32)
    return Observation(rgb=rgb, depth_m=depth, pose=pose, camera_tilt_rad=tilt_rad, camera_height_m=1.31,
                       intrinsics=K, step=step)


def test_a_new_view_is_kept_and_a_repeated_one_is_not() -> None:
    memory = KeyframeMemory(KeyframeConfig(enabled=True))
    img, obj_mask, _ = scene()
    assert memory.offer(observation(img, Pose2D(0.0, 0.0, 0.0)), [(obj_mask, 4)]) is not None
    assert memory.offer(observation(img, Pose2D(0.2, 0.1, 0.2), step=1), [(obj_mask, 4)]) is None  # same view
    assert memory.offer(observation(img, Pose2D(0.2, 0.1, 1.2), step=2), []) is not None  # turned
    assert memory.offer(observation(img, Pose2D(1.0, 0.0, 0.0), step=3), []) is not None  # moved
    assert memory.offer(observation(img, Pose2D(0.0, 0.0, 0.0), step=4, tilt_rad=-0.6), []) is not None  # head
    assert [kf.index for kf in memory.keyframes] == [0, 1, 2, 3]
    memory.clear()
    assert len(memory.keyframes) == 0
    assert memory.offer(observation(img, Pose2D(0.0, 0.0, 0.0)), []).index == 0  # type: ignore[union-attr]


def test_keypoints_carry_the_memory_id_of_the_instance_under_them() -> None:
    img, obj_mask, wall_mask = scene()
    kf = KeyframeMemory(KeyframeConfig(enabled=True, image_scale=0.5)).offer(observation(img, Pose2D(0, 0, 0)),
                                                                 [(obj_mask, 7), (wall_mask, 3)])
    assert kf is not None and len(kf.points_px) > 50
    assert kf.descriptors.dtype == np.uint8 and kf.descriptors.shape == (len(kf.points_px), 128)
    rows = np.clip((kf.points_px[:, 1] / 0.5).astype(int), 0, GOAL_SHAPE[0] - 1)
    cols = np.clip((kf.points_px[:, 0] / 0.5).astype(int), 0, GOAL_SHAPE[1] - 1)
    expected = np.where(obj_mask[rows, cols], 7, np.where(wall_mask[rows, cols], 3, -1))
    np.testing.assert_array_equal(kf.instance_ids, expected)
    assert {7, 3} <= set(kf.instance_ids.tolist())


def test_the_oldest_keyframes_go_beyond_the_cap() -> None:
    memory = KeyframeMemory(KeyframeConfig(enabled=True, max_keyframes=2))
    img, _, _ = scene()
    for i in range(4):
        memory.offer(observation(img, Pose2D(float(i), 0.0, 0.0), step=i), [])
    assert [kf.step for kf in memory.keyframes] == [2, 3]


@pytest.mark.parametrize("field, value", [("image_scale", 0.0), ("image_scale", 1.5), ("features", 0),
                                          ("min_distance_m", 0.0), ("max_keyframes", 0)])
def test_bad_keyframe_settings_name_the_field(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"KeyframeConfig.{field}"):
        KeyframeConfig(**{field: value})


def test_instance_memory_reports_the_masks_it_placed() -> None:
    memory = InstanceMemory(InstanceMemoryConfig())
    img, obj_mask, wall_mask = scene()
    dets = [Detection(instance_key=5, category="vase", mask=obj_mask, bbox_xyxy=(0, 0, 1, 1)),
            Detection(instance_key=9, category="wall", mask=wall_mask, bbox_xyxy=(0, 0, 1, 1))]
    ids = memory.update(dets, observation(img, Pose2D(0, 0, 0)))
    assert [(m is d.mask, i) for (m, i), d in zip(memory.last_labelled, dets, strict=True)] == \
        [(True, ids[0]), (True, ids[1])]


def _instance(iid: int, category: str, x_m: float) -> Instance:
    return Instance(instance_id=iid, category=category, points_xyz_m=np.array([[x_m, 0.0, 0.5]]))


def test_frames_that_show_the_goal_surroundings_vote_for_the_object_at_the_picture_centre() -> None:
    goal_img, _, _ = scene()
    seen, obj_mask, wall_mask = scene(shift_px=30)  # the robot saw the same place from a little to the side
    keyframes = KeyframeMemory(KeyframeConfig(enabled=True, image_scale=0.75))
    keyframes.offer(observation(seen, Pose2D(0, 0, 0)), [(obj_mask, 7), (wall_mask, 3)])
    instances = {7: _instance(7, "vase", 1.0), 3: _instance(3, "wall", 3.0)}  # no views: frames only
    # By default votes need some agreement of a crop too; here there is none, so they only rank.
    strict = ImageMatcher()
    strict.observe_keyframes(keyframes.keyframes)
    strict.set_goal(Goal(GoalModality.IMAGE, image=goal_img), ["vase", "wall"])
    ranked = strict.match(instances)
    assert ranked.instance_id == 7 and not ranked.confident
    matcher = ImageMatcher(ImageMatcherConfig(frame_min_crop_inliers=0))
    matcher.observe_keyframes(keyframes.keyframes)
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_img), ["vase", "wall"])
    result = matcher.match(instances)
    assert matcher.frame_votes(7) >= matcher.config.min_frame_votes
    assert matcher.frame_votes(7) > 2.0 * matcher.frame_votes(3)
    assert result.instance_id == 7 and result.confident
    # A keyframe of an unrelated place adds nothing.
    other, other_mask = render(texture(99, 256), similarity_h(0, 2.6, 0, 0), GOAL_SHAPE, 100)
    keyframes.offer(observation(other, Pose2D(5, 5, 0)), [(other_mask, 3)])
    before = matcher.frame_votes(3)
    matcher.match(instances)
    assert matcher.frame_votes(3) == pytest.approx(before, abs=1.0)


def test_frame_votes_restart_with_a_new_goal_and_after_reset() -> None:
    goal_img, obj_mask, wall_mask = scene()
    keyframes = KeyframeMemory(KeyframeConfig(enabled=True))
    keyframes.offer(observation(goal_img, Pose2D(0, 0, 0)), [(obj_mask, 7), (wall_mask, 3)])
    matcher = ImageMatcher()
    matcher.observe_keyframes(keyframes.keyframes)
    instances = {7: _instance(7, "vase", 1.0), 3: _instance(3, "wall", 3.0)}
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_img), ["vase"])
    matcher.match(instances)
    first = matcher.frame_votes(7)
    assert first > 0.0
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_img), ["vase"])
    assert matcher.frame_votes(7) == 0.0
    matcher.match(instances)
    assert matcher.frame_votes(7) == pytest.approx(first)  # same frames, same goal: same votes
    matcher.reset()
    assert matcher.frame_votes(7) == 0.0


def test_keyframes_are_off_unless_asked_for() -> None:
    img, obj_mask, _ = scene()
    assert KeyframeMemory().offer(observation(img, Pose2D(0.0, 0.0, 0.0)), [(obj_mask, 4)]) is None
