"""Colour evidence for image goals on weakly textured objects (real OpenCV SIFT finds nothing to match on them)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from goat_core.errors import GoatError
from goat_core.matching.attributes import ColourNamer
from goat_core.matching.image import ImageMatcher, ImageMatcherConfig
from goat_core.matching.image_colour import ColourEvidence, ColourEvidenceConfig
from goat_core.types import Goal, GoalModality, Instance, InstanceView, Pose2D
from goat_core.vocabulary import COLOURS
from tests.textures import texture

GOAL_SHAPE = (640, 360)


def goal_picture(centre_rgb: tuple[int, int, int], border_rgb: tuple[int, int, int] | None = None) -> np.ndarray:
    """A plain painted box at the centre of a textured room (the room gives SIFT keypoints, the box none)."""
    img = cv2.resize(texture(3), (GOAL_SHAPE[1], GOAL_SHAPE[0]), interpolation=cv2.INTER_LINEAR)
    if border_rgb is not None:
        img[140:500, 20:340] = border_rgb
    img[220:420, 110:250] = centre_rgb
    return img


def shaded_box(rgb: tuple[int, int, int], shading: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    """A crop of a plain box under some shading, with its mask."""
    crop = np.full((120, 120, 3), 90, np.uint8)
    mask = np.zeros((120, 120), bool)
    mask[20:100, 20:100] = True
    crop[mask] = np.clip(np.array(rgb, float) * shading, 0, 255).astype(np.uint8)
    return crop, mask


def box_instance(iid: int, rgb: tuple[int, int, int], x_m: float, category: str = "cabinet",
                 shading: float = 0.8) -> Instance:
    crop, mask = shaded_box(rgb, shading)
    view = InstanceView(rgb=crop, mask=mask, pixel_count=int(mask.sum()), pose=Pose2D(x_m, -2.0, 0.0), step=1)
    points = np.array([[x_m, 0.0, 0.5], [x_m, 0.3, 0.9]])
    return Instance(instance_id=iid, category=category, points_xyz_m=points, views=[view], last_seen_step=1)


RED, BLUE, GREEN = COLOURS["red"], COLOURS["blue"], COLOURS["green"]


def settled(matcher: ImageMatcher, instances: dict[int, Instance]):
    result = matcher.match(instances)
    for _ in range(10 * len(instances)):
        if not result.pending:
            break
        result = matcher.match(instances)
    return result


def test_pixel_histogram_shares_sum_to_one_and_follow_weights() -> None:
    namer = ColourNamer()
    pixels = np.array([RED, RED, BLUE], np.uint8)
    hist = namer.pixel_histogram(pixels)
    assert hist.sum() == pytest.approx(1.0)
    assert hist[namer.names.index("red")] == pytest.approx(2 / 3)
    weighted = namer.pixel_histogram(pixels, np.array([0.0, 0.0, 1.0]))
    assert weighted[namer.names.index("blue")] == pytest.approx(1.0)
    with pytest.raises(GoatError, match="weights"):
        namer.pixel_histogram(pixels, np.array([1.0, -1.0, 1.0]))
    with pytest.raises(GoatError, match="all zero"):
        namer.pixel_histogram(pixels, np.zeros(3))


def test_the_instance_of_the_pictured_colour_scores_highest_despite_shading() -> None:
    evidence = ColourEvidence()
    evidence.set_goal(goal_picture(RED))
    red = evidence.similarity(box_instance(1, RED, 0.0, shading=0.55))
    blue = evidence.similarity(box_instance(2, BLUE, 2.0))
    assert red is not None and blue is not None
    assert red > 0.5 > 0.1 > blue


def test_the_centre_outweighs_what_surrounds_the_object() -> None:
    """Red box in the middle of a larger green one: the red instance is the pictured object."""
    evidence = ColourEvidence()
    evidence.set_goal(goal_picture(RED, border_rgb=GREEN))
    red = evidence.similarity(box_instance(1, RED, 0.0))
    green = evidence.similarity(box_instance(2, GREEN, 2.0))
    assert red is not None and green is not None and red > green


def test_instances_without_enough_pixels_have_no_colour_evidence() -> None:
    evidence = ColourEvidence(ColourEvidenceConfig(min_view_pixels=10_000))
    evidence.set_goal(goal_picture(RED))
    assert evidence.similarity(box_instance(1, RED, 0.0)) is None
    with pytest.raises(GoatError, match="before set_goal"):
        ColourEvidence().similarity(box_instance(1, RED, 0.0))


def test_a_malformed_goal_picture_is_named() -> None:
    with pytest.raises(GoatError, match="uint8"):
        ColourEvidence().set_goal(np.zeros((10, 10), np.uint8))


@pytest.mark.parametrize("share_category", [True, False])
def test_colour_names_a_plain_object_only_among_the_named_category(share_category: bool) -> None:
    """Keypoints find nothing on plain boxes; colour decides when the goal names their category."""
    instances = {4: box_instance(4, BLUE, 0.0), 7: box_instance(7, RED, 3.0)}
    matcher = ImageMatcher()
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture(RED)), vocabulary=[])
    matcher.candidates_share_category = share_category
    result = settled(matcher, instances)
    assert matcher.instance_inliers(7) == 0 and matcher.instance_inliers(4) == 0
    if share_category:
        assert result.instance_id == 7 and result.confident
    else:
        assert result.instance_id is None and not result.confident


def test_two_lookalikes_of_the_pictured_colour_are_not_told_apart_by_colour() -> None:
    instances = {4: box_instance(4, RED, 0.0), 7: box_instance(7, RED, 3.0, shading=0.7)}
    matcher = ImageMatcher()
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture(RED)), vocabulary=[])
    matcher.candidates_share_category = True
    result = settled(matcher, instances)
    assert result.instance_id in instances and not result.confident


def test_lookalikes_that_colour_cannot_separate_are_reported_tied() -> None:
    """Two red boxes tie with each other (the agent then inspects the nearer first), a blue one is out of it; colour
    that names one box clearly ties nothing, and neither does a goal whose candidates are of any category."""
    instances = {4: box_instance(4, RED, 0.0), 7: box_instance(7, RED, 3.0, shading=0.7),
                 9: box_instance(9, BLUE, 6.0)}
    matcher = ImageMatcher()
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture(RED)), vocabulary=[])
    matcher.candidates_share_category = True
    settled(matcher, instances)
    assert sorted(matcher.tied_with_best(instances)) == [4, 7]
    clear = {4: instances[4], 9: instances[9]}
    assert matcher.tied_with_best(clear) == []
    matcher.candidates_share_category = False
    assert matcher.tied_with_best(instances) == []


def test_a_weak_colour_likeness_is_offered_but_not_trusted() -> None:
    """Only a blue box seen so far for a red picture: it is the best guess, nothing more."""
    instances = {4: box_instance(4, BLUE, 0.0)}
    matcher = ImageMatcher()
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture(RED)), vocabulary=[])
    matcher.candidates_share_category = True
    result = settled(matcher, instances)
    assert result.instance_id == 4 and not result.confident


def test_colour_can_be_switched_off() -> None:
    instances = {4: box_instance(4, BLUE, 0.0), 7: box_instance(7, RED, 3.0)}
    matcher = ImageMatcher(ImageMatcherConfig(use_colour=False))
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture(RED)), vocabulary=[])
    matcher.candidates_share_category = True
    assert not settled(matcher, instances).confident
