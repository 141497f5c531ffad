"""Image-goal matching with real OpenCV SIFT on synthetic textured objects seen from different viewpoints."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from goat_core.errors import GoatError, InvalidGoalError
from goat_core.matching.image import ImageMatcher, ImageMatcherConfig
from goat_core.types import Goal, GoalModality, Instance, InstanceView, Pose2D
from tests.textures import texture

GOAL_SHAPE = (640, 360)  # GOAT-Bench portrait frame, rows x cols




def similarity_h(angle_deg: float, scale: float, tx: float, ty: float,
                 perspective: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    a = np.radians(angle_deg)
    return np.array([[scale * np.cos(a), -scale * np.sin(a), tx],
                     [scale * np.sin(a), scale * np.cos(a), ty],
                     [perspective[0], perspective[1], 1.0]])


def render(tex: np.ndarray, h: np.ndarray, shape: tuple[int, int],
           background: int) -> tuple[np.ndarray, np.ndarray]:
    """The texture seen through homography ``h`` on a flat background, and its pixel mask."""
    img = cv2.warpPerspective(tex, h, (shape[1], shape[0]))
    mask = cv2.warpPerspective(np.ones(tex.shape[:2], np.uint8), h, (shape[1], shape[0])) > 0
    img[~mask] = background
    return img, mask


def goal_picture(centre_seed: int, corner_seed: int | None = None) -> np.ndarray:
    """A goal picture with one object in the middle and, optionally, a neighbour near the bottom corner."""
    img, _ = render(texture(centre_seed), similarity_h(0, 1.4, 46, 186), GOAL_SHAPE, 110)
    if corner_seed is not None:
        corner, mask = render(texture(corner_seed), similarity_h(0, 0.9, 190, 460), GOAL_SHAPE, 110)
        img[mask] = corner[mask]
    return img


FRONT = Pose2D(0.0, -2.0, 0.0)  # where the stored views are taken from, unless a test says otherwise


def view_of(seed: int, h: np.ndarray, step: int, pose: Pose2D = FRONT) -> InstanceView:
    crop, mask = render(texture(seed), h, (240, 240), 90)
    return InstanceView(rgb=crop, mask=mask, pixel_count=int(mask.sum()), pose=pose, step=step)


def instance(iid: int, seed: int, h: np.ndarray, x_m: float, step: int, category: str = "object") -> Instance:
    view = view_of(seed, h, step)
    points = np.array([[x_m, 0.0, 0.5], [x_m, 0.2, 0.7]])
    return Instance(instance_id=iid, category=category, points_xyz_m=points, last_seen_step=step,
                    views=[view])


def image_goal(img: np.ndarray) -> Goal:
    return Goal(GoalModality.IMAGE, image=img)


def run_until_settled(matcher: ImageMatcher, instances: dict[int, Instance]) -> None:
    """One match() per stored view: with one SIFT extraction per call every view has been scored after it."""
    for _ in range(sum(len(i.views) for i in instances.values())):
        matcher.match(instances)


VIEWPOINTS = {
    "rotated": similarity_h(15, 0.9, 40, 20),
    "smaller_oblique": similarity_h(-30, 0.6, 80, 60, (0.001, 0.0005)),
    "perspective": similarity_h(0, 1.1, 10, 10, (0.0015, -0.0005)),
    "far": similarity_h(40, 0.45, 100, 80),
}


@pytest.mark.parametrize("viewpoint", sorted(VIEWPOINTS))
def test_true_instance_wins_confidently(viewpoint: str) -> None:
    h = VIEWPOINTS[viewpoint]
    instances = {7: instance(7, 2, h, 3.0, 1), 4: instance(4, 1, h, 0.0, 1), 9: instance(9, 3, h, 6.0, 1)}
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    run_until_settled(matcher, instances)
    result = matcher.match(instances)
    assert result.instance_id == 4
    assert result.confident
    assert matcher.instance_inliers(4) >= ImageMatcherConfig().min_inliers
    assert max(matcher.instance_inliers(7), matcher.instance_inliers(9)) < ImageMatcherConfig().min_inliers


@pytest.mark.parametrize("share_category", [False, True])
def test_candidates_of_the_named_category_need_fewer_inliers(share_category: bool) -> None:
    """Thresholds set so that the true instance's inliers pass only the same-category one."""
    config = ImageMatcherConfig(min_inliers=10_000, min_inliers_same_category=12)
    h = VIEWPOINTS["rotated"]
    instances = {7: instance(7, 2, h, 3.0, 1), 4: instance(4, 1, h, 0.0, 1)}
    matcher = ImageMatcher(config)
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    matcher.candidates_share_category = share_category
    run_until_settled(matcher, instances)
    result = matcher.match(instances)
    assert result.instance_id == 4 and result.confident is share_category
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    assert not matcher.candidates_share_category  # a new goal starts without the filter


def test_the_modality_matcher_says_when_image_candidates_share_the_named_category() -> None:
    from goat_core.matching.embeddings import SentenceEmbedder
    from goat_core.matching.matcher import ModalityMatcher

    matcher = ModalityMatcher(SentenceEmbedder())
    picture = goal_picture(1)
    matcher.set_goal(Goal(GoalModality.IMAGE, image=picture, category="sofa"), ["sofa", "chair"])
    assert matcher.image.candidates_share_category
    matcher.set_goal(Goal(GoalModality.IMAGE, image=picture), ["sofa", "chair"])
    assert not matcher.image.candidates_share_category
    matcher.set_goal(Goal(GoalModality.IMAGE, image=picture, category="xylophone"), ["sofa", "chair"])
    assert not matcher.image.candidates_share_category  # a category the detector does not know filters nothing


def test_only_unrelated_instances_is_not_confident() -> None:
    h = VIEWPOINTS["rotated"]
    instances = {i: instance(i, 10 + i, h, 2.0 * i, 1) for i in range(3)}
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    run_until_settled(matcher, instances)
    assert not matcher.match(instances).confident


def test_not_confident_before_every_instance_was_compared() -> None:
    h = VIEWPOINTS["rotated"]
    # Instance 1 is the object; instance 2 (sorted first, larger view) is its neighbour in the goal picture.
    instances = {2: instance(2, 5, similarity_h(0, 1.2, 0, 0), 3.0, 1), 1: instance(1, 1, h, 0.0, 1)}
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1, corner_seed=5)), vocabulary=[])
    first = matcher.match(instances)
    assert not first.confident
    second = matcher.match(instances)
    assert second.instance_id == 1 and second.confident


def test_centre_weighting_prefers_the_pictured_object_over_its_neighbour() -> None:
    instances = {1: instance(1, 1, VIEWPOINTS["far"], 0.0, 1),
                 2: instance(2, 5, similarity_h(0, 1.2, 0, 0), 3.0, 1)}
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1, corner_seed=5)), vocabulary=[])
    run_until_settled(matcher, instances)
    assert matcher.instance_inliers(2) >= ImageMatcherConfig().min_inliers  # the neighbour does match...
    ranked = matcher.candidates(instances)
    assert ranked[0].instance_id == 1  # ...but the object in the middle of the picture ranks first


@pytest.mark.parametrize(("twin_x_m", "twin_category", "confident"), [
    (0.2, "object", True),  # the memory split one object in two: still sure
    (4.0, "object", False),  # a second matching object elsewhere: ambiguous
    (0.2, "other", False),  # a matching object of another category right there (stacked): ambiguous
])
def test_split_twin_does_not_block_confidence_but_a_lookalike_does(twin_x_m: float, twin_category: str,
                                                                   confident: bool) -> None:
    h = VIEWPOINTS["rotated"]
    instances = {1: instance(1, 1, h, 0.0, 1),
                 2: instance(2, 1, VIEWPOINTS["perspective"], twin_x_m, 1, twin_category)}
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    run_until_settled(matcher, instances)
    assert matcher.match(instances).confident is confident


def test_views_are_extracted_one_per_call_and_pending_work_is_reported() -> None:
    h = VIEWPOINTS["rotated"]
    instances = {i: instance(i, i, h, 2.0 * i, 1) for i in range(1, 6)}
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    scored_after, pending = [], []
    for _ in range(5):
        result = matcher.match(instances)
        scored_after.append(sum(1 for i in instances if i in matcher._instance_scores))
        pending.append(result.pending)
    assert scored_after == [1, 2, 3, 4, 5]  # one new view per call (max_extractions_per_step = 1)
    assert pending == [True, True, True, True, False]
    result = matcher.match(instances)
    assert result.instance_id == 1 and result.confident and not result.pending


@pytest.mark.parametrize(("pose", "scale", "rescored"), [
    (Pose2D(0.3, -2.0, 0.0), 1.0, False),  # same side, same size: nothing new to see
    (Pose2D(2.0, 0.1, 0.0), 1.0, True),  # seen from another side
    (Pose2D(0.0, -1.0, 0.0), 1.6, True),  # much closer
    (Pose2D(0.0, -2.6, 0.0), 1.0, True),  # from another spot on the same side, as large
])
def test_only_novel_views_are_compared_again(pose: Pose2D, scale: float, rescored: bool) -> None:
    inst = instance(1, 1, VIEWPOINTS["far"], 0.0, 1)
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    matcher.match({1: inst})
    inst.views.insert(0, view_of(1, similarity_h(40, 0.45 * scale, 100, 80), 2, pose))
    inst.last_seen_step = 2
    matcher.match({1: inst})
    assert ((1, 2) in matcher._view_scores) is rescored
    assert (1, 1) in matcher._view_scores


@pytest.mark.parametrize("offered", [True, False])
def test_the_current_frames_view_is_compared_though_memory_kept_a_larger_one(offered: bool) -> None:
    """Memory keeps the largest view of each side; the camera's smaller view from another spot is the one that
    shows the pictured face, and only a matcher that is offered it finds the goal."""
    inst = instance(1, 5, similarity_h(0, 1.0, 0, 0), 0.0, 1)  # the larger stored view shows another face
    live = view_of(1, VIEWPOINTS["rotated"], 2, Pose2D(0.0, -2.6, 0.0))
    assert live.pixel_count < inst.views[0].pixel_count
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    run_until_settled(matcher, {1: inst})
    assert not matcher.match({1: inst}).confident
    if offered:
        matcher.observe_live_views([(1, live)])
    result = matcher.match({1: inst})
    assert result.confident is offered
    assert (matcher.instance_inliers(1) >= ImageMatcherConfig().min_inliers) is offered
    assert [v.step for v in inst.views] == [1]  # the matcher compares the view, memory is not changed
    matcher.match({1: inst})
    assert (1, 2) not in matcher._view_features  # nor does the matcher keep its descriptors


def test_the_current_frames_views_wait_behind_unscored_instances() -> None:
    """all_seen gates confidence: instances never compared come before the current frame's views."""
    h = VIEWPOINTS["rotated"]
    a, b = instance(1, 5, h, 0.0, 1), instance(2, 6, h, 3.0, 1)
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    matcher.match({1: a})
    matcher.observe_live_views([(1, view_of(1, h, 2, Pose2D(0.0, -2.6, 0.0)))])
    matcher.match({1: a, 2: b})
    assert (2, 1) in matcher._view_scores and (1, 2) not in matcher._view_scores


@pytest.mark.parametrize(("homography", "plausible"), [
    (similarity_h(20, 0.8, 30, 40), True),
    (similarity_h(0, 1.0, 0, 0, (0.001, 0.0)), True),
    (similarity_h(0, 0.02, 180, 320), False),  # collapses the view into a point
    (similarity_h(0, 20.0, 0, 0), False),  # blows it up
    (np.diag([-1.0, 1.0, 1.0]) @ similarity_h(0, 1.0, 300, 0), False),  # mirror image
    (np.array([[8.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 1.0]]), False),  # stretched 16:1
])
def test_implausible_homographies_are_rejected(homography: np.ndarray, plausible: bool) -> None:
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    spread_px = np.array([[100.0, 200.0], [260.0, 200.0], [260.0, 420.0], [100.0, 420.0]])
    assert matcher._plausible(homography, np.array([50.0, 50.0]), spread_px) is plausible


def test_inliers_bunched_in_a_corner_are_rejected() -> None:
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    bunched_px = np.array([[10.0, 10.0], [14.0, 10.0], [14.0, 15.0], [10.0, 15.0]])
    assert not matcher._plausible(similarity_h(0, 1.0, 0, 0), np.array([12.0, 12.0]), bunched_px)


def test_new_goal_rescores_cached_views() -> None:
    h = VIEWPOINTS["rotated"]
    instances = {1: instance(1, 1, h, 0.0, 1), 2: instance(2, 2, h, 3.0, 1)}
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    run_until_settled(matcher, instances)
    assert matcher.match(instances).instance_id == 1
    matcher.set_goal(image_goal(goal_picture(2)), vocabulary=[])
    run_until_settled(matcher, instances)
    result = matcher.match(instances)
    assert result.instance_id == 2 and result.confident


def test_removed_instances_are_forgotten() -> None:
    h = VIEWPOINTS["rotated"]
    instances = {1: instance(1, 1, h, 0.0, 1), 2: instance(2, 2, h, 3.0, 1)}
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    run_until_settled(matcher, instances)
    del instances[1]
    result = matcher.match(instances)
    assert result.instance_id != 1 and not result.confident
    assert all(key[0] != 1 for key in matcher._view_features)


def test_reset_forgets_views_of_a_previous_memory() -> None:
    """A new episode's memory reuses ids and steps; after reset() its views are extracted afresh."""
    h = VIEWPOINTS["rotated"]
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    old = {1: instance(1, 2, h, 0.0, 1), 2: instance(2, 3, h, 3.0, 1)}
    run_until_settled(matcher, old)
    assert not matcher.match(old).confident
    matcher.reset()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    new = {1: instance(1, 1, h, 0.0, 1), 2: instance(2, 3, h, 3.0, 1)}
    run_until_settled(matcher, new)
    result = matcher.match(new)
    assert result.instance_id == 1 and result.confident


def test_scores_are_deterministic() -> None:
    h = VIEWPOINTS["smaller_oblique"]
    runs = []
    for _ in range(2):
        instances = {i: instance(i, i, h, 2.0 * i, 1) for i in range(1, 4)}
        matcher = ImageMatcher()
        matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
        run_until_settled(matcher, instances)
        runs.append(matcher.candidates(instances))
    assert runs[0] == runs[1]


def test_textureless_goal_is_rejected() -> None:
    with pytest.raises(InvalidGoalError, match="SIFT keypoints"):
        ImageMatcher().set_goal(image_goal(np.full((640, 360, 3), 128, np.uint8)), vocabulary=[])


@pytest.mark.parametrize("goal", [Goal(GoalModality.CATEGORY, category="mug"),
                                  Goal(GoalModality.DESCRIPTION, text="the red mug")])
def test_other_modalities_are_rejected(goal: Goal) -> None:
    with pytest.raises(InvalidGoalError, match="image goal"):
        ImageMatcher().set_goal(goal, vocabulary=[])


def test_malformed_view_names_the_instance() -> None:
    bad = instance(3, 1, VIEWPOINTS["rotated"], 0.0, 1)
    bad.views[0].mask = bad.views[0].mask[:10]
    matcher = ImageMatcher()
    matcher.set_goal(image_goal(goal_picture(1)), vocabulary=[])
    with pytest.raises(GoatError, match="instance 3"):
        matcher.match({3: bad})


def test_match_before_goal_raises() -> None:
    with pytest.raises(GoatError, match="before set_goal"):
        ImageMatcher().match({})
