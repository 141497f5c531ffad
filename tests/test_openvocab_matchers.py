"""The CoW localizer and the Modular GOAT matcher: hand-made relevance maps, and tiny random OWL-ViT / CLIP
models through load -> detect -> back-project -> match, up to the agent."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from goat_core.errors import ConfigError
from goat_core.matching.cow import boxes_relevance, centre_pixel, grid_relevance
from goat_core.perception.image_prep import pixel_box
from goat_core.types import CameraIntrinsics, Goal, GoalModality, Instance, InstanceView, Observation, Pose2D
from tests.textures import texture as shared_texture

W, H = 180, 320
K = CameraIntrinsics.from_hfov(W, H, math.radians(42.0))
LABELS = ["chair", "sofa", "table"]


# ------------------------------------------------------------------------- CoW post-processing (numpy only)
def test_centre_pixel_takes_the_centre_of_the_region_holding_the_peak() -> None:
    relevance = np.zeros((60, 80), dtype=np.float32)
    relevance[5:45, 5:35] = 0.4  # a large region of moderate relevance
    relevance[20:31, 50:71] = 0.5  # a smaller region with the peak
    relevance[25, 52] = 0.9  # the peak sits off the region's centre
    assert centre_pixel(relevance, threshold=0.3) == (25, 60)  # box rows 20..30, cols 50..70


def test_centre_pixel_stays_on_a_region_that_does_not_cover_its_box_centre() -> None:
    relevance = np.zeros((50, 50), dtype=np.float32)
    relevance[10:40, 10:14] = 1.0  # an L: a vertical bar ...
    relevance[36:40, 10:40] = 1.0  # ... and a horizontal bar; box centre (24, 24) lies outside it
    r, c = centre_pixel(relevance, threshold=0.5) or (-1, -1)
    assert relevance[r, c] == 1.0
    assert (r, c) == (24, 13)  # the region pixel nearest to (24, 24)


def test_centre_pixel_finds_nothing_below_the_threshold_and_ignores_nan() -> None:
    relevance = np.full((10, 10), 0.2, dtype=np.float32)
    relevance[0, 0] = np.nan
    assert centre_pixel(relevance, threshold=0.25) is None
    relevance[6:9, 1:4] = 0.3
    assert centre_pixel(relevance, threshold=0.25) == (7, 2)


def test_box_and_grid_relevance_maps() -> None:
    boxes = np.array([[0, 0, 10, 10], [5, 5, 20, 20], [30, 30, 40, 40]], dtype=float)
    rel = boxes_relevance((50, 50), boxes, np.array([0.3, 0.6, 0.05]), threshold=0.1)
    assert rel[2, 2] == pytest.approx(0.3) and rel[7, 7] == pytest.approx(0.6) and rel[35, 35] == 0.0
    grid = grid_relevance((4, 6), 2, 3, np.array([1, 2, 3, 4, 5, 6]))
    assert grid[0, 0] == 1 and grid[0, 5] == 3 and grid[3, 2] == 5 and grid[3, 4] == 6


# ------------------------------------------------------------------------------------------ tiny models
@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch", reason="the openvocab extra is not installed (pip install -e '.[openvocab]')")
    pytest.importorskip("transformers", reason="the openvocab extra is not installed (pip install -e '.[openvocab]')")
    from goat_core.perception.tiny_models import save_tiny_model

    root = tmp_path_factory.mktemp("tiny_models")
    return {family: save_tiny_model(root / family, family, seed=1) for family in ("owlvit", "clip")}


def texture(seed: int, size: int = 160) -> np.ndarray:
    return shared_texture(seed, size, cells_px=(5, 10, 20), circles=25, max_radius_px=12)


def observation(seed: int = 0, depth_m: float = 2.0, step: int = 0) -> Observation:
    rgb = cv2.resize(texture(seed), (W, H), interpolation=cv2.INTER_LINEAR)
    return Observation(rgb=rgb, depth_m=np.full((H, W), depth_m, dtype=np.float32), pose=Pose2D(0.0, 0.0, 0.0),
                       camera_tilt_rad=0.0, camera_height_m=1.31, intrinsics=K, step=step)


def instance(iid: int, category: str, seed: int, x_m: float, observations: int = 1) -> Instance:
    crop = texture(seed, 120)
    view = InstanceView(rgb=crop, mask=np.ones(crop.shape[:2], dtype=bool), pixel_count=crop.shape[0] ** 2,
                        pose=Pose2D(0.0, -2.0, 0.0), step=iid)
    return Instance(instance_id=iid, category=category, points_xyz_m=np.array([[x_m, 0.0, 0.5], [x_m, 0.2, 0.7]]),
                    num_observations=observations, views=[view])


def test_cow_owl_localizes_the_goal_and_remembers_it_under_the_goal(tiny_dirs: dict[str, Path]) -> None:
    from goat_core.mapping.instance_memory import InstanceMemory, InstanceMemoryConfig
    from goat_core.matching.cow import CowConfig, build_cow
    from goat_core.perception.openvocab import OwlModel

    owl = OwlModel.load("owlvit", str(tiny_dirs["owlvit"]))
    obs = observation(seed=4)
    pred = owl.predict(obs.rgb, owl.encode_texts(["a photo of a chair"]))
    best = int(np.argmax(pred.scores[:, 0]))
    # Only the best box reaches the threshold: the target is the centre pixel of that box.
    perception, matcher = build_cow(CowConfig(owl_score_threshold=float(pred.scores[best, 0]) - 1e-6), owl=owl)
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="chair"), [])
    detections = perception.detect(obs)
    assert len(detections) == 1 and detections[0].category == "chair"
    found = perception.localize(obs.rgb)
    assert found is not None
    bx0, by0, bx1, by1 = pixel_box(pred.boxes_xyxy_px[best])
    assert found.pixel_rc == ((by0 + by1 - 1) // 2, (bx0 + bx1 - 1) // 2)
    mask = detections[0].mask
    assert mask[found.pixel_rc] and mask.sum() <= 7 * 7  # the (2k + 1)^2 square around it, cut at the border
    memory = InstanceMemory(InstanceMemoryConfig())
    memory.update(detections, obs, persistent_keys=perception.persistent_keys)
    result = matcher.match(memory.instances)
    assert result.confident and memory.instances[result.instance_id].category == "chair"
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="sofa"), [])
    assert matcher.match(memory.instances).instance_id is None  # the chair is not the sofa
    assert list(perception.labels) == ["chair", "sofa"]
    # Image goals query OWL with the picture itself.
    matcher.set_goal(Goal(GoalModality.IMAGE, image=texture(9, 96)), [])
    assert perception.query is not None and perception.query.key == "image goal 1"
    assert len(perception.detect(obs)) <= 1


def test_cow_clip_patches_target_the_centre_of_the_best_crop(tiny_dirs: dict[str, Path]) -> None:
    from goat_core.matching.cow import ClipPatchRelevance, CowConfig, build_cow
    from goat_core.perception.clip_embedder import ClipEmbedder

    clip = ClipEmbedder.load(str(tiny_dirs["clip"]))
    obs = observation(seed=5)
    probe = ClipPatchRelevance(clip, 0.0, rows=2, cols=2)
    cosines = clip.encode_images(probe.crops(obs.rgb)) @ clip.encode_texts(["a photo of a sofa"])[0]
    best = int(np.argmax(cosines))
    config = CowConfig(relevance="clip_patches", clip_threshold=float(cosines.max()), patch_rows=2, patch_cols=2)
    perception, matcher = build_cow(config, clip=clip)
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="sofa"), [])
    (det,) = perception.detect(obs)
    row, col = divmod(best, 2)
    expected_rc = ((row * 160 + row * 160 + 159) // 2, (col * 90 + col * 90 + 89) // 2)  # centre of the cell
    assert (det.bbox_xyxy[1] + 3, det.bbox_xyxy[0] + 3) == expected_rc


def test_cow_config_and_missing_models_are_reported() -> None:
    from goat_core.matching.cow import CowConfig, build_cow

    with pytest.raises(ConfigError, match="relevance"):
        CowConfig(relevance="gradcam")
    with pytest.raises(ConfigError, match="needs an OWL-ViT"):
        build_cow(CowConfig())
    with pytest.raises(ConfigError, match="needs a CLIP model"):
        build_cow(CowConfig(relevance="clip_patches"))


# ----------------------------------------------------------------------------------------- Modular GOAT
@pytest.fixture(scope="module")
def modular(tiny_dirs: dict[str, Path]):  # noqa: ANN201 - a (ClipEmbedder, SentenceEmbedder) pair
    from goat_core.matching.embeddings import SentenceEmbedder
    from goat_core.perception.clip_embedder import ClipEmbedder

    return ClipEmbedder.load(str(tiny_dirs["clip"])), SentenceEmbedder()


def settle(matcher, instances):  # noqa: ANN001, ANN201 - loop until every view is embedded
    for _ in range(20):
        result = matcher.match(instances)
        if not result.pending:
            return result
    raise AssertionError("matcher never settled")


def test_modular_goat_language_goal_ranks_only_instances_of_the_target_category(modular) -> None:  # noqa: ANN001
    from goat_core.matching.image import ImageMatcher
    from goat_core.matching.modular_goat import ModularGoatConfig, ModularGoatMatcher

    clip, sentences = modular
    text = "the chair next to the window"
    seeds = [31, 32, 33, 34, 35]
    cosines = [float(clip.encode_images([texture(s, 120)])[0] @ clip.encode_texts([text])[0]) for s in seeds]
    intruder = int(np.argmax(cosines))  # the best-looking instance is made a sofa: it must never win
    instances = {i: instance(i, "sofa" if i == intruder else "chair", s, 2.0 * i) for i, s in enumerate(seeds)}
    config = ModularGoatConfig(min_language_cosine=-1.0, language_margin=0.0, max_embeddings_per_step=2)
    matcher = ModularGoatMatcher(clip, sentences, ImageMatcher(), config)
    matcher.set_goal(Goal(GoalModality.DESCRIPTION, text=text), LABELS)
    assert matcher.goal_labels == ("chair",)
    first = matcher.match(instances)
    assert first.pending and not first.confident  # 5 views, 2 embedded per call
    result = settle(matcher, instances)
    best_chair = max((i for i in instances if i != intruder), key=lambda i: cosines[i])
    assert result.instance_id == best_chair and result.confident
    assert result.score == pytest.approx(cosines[best_chair], abs=1e-5)
    assert intruder not in {s.instance_id for s in matcher.candidates(instances)}


def test_modular_goat_category_goal_takes_any_instance_of_the_category(modular) -> None:  # noqa: ANN001
    from goat_core.matching.image import ImageMatcher
    from goat_core.matching.modular_goat import ModularGoatMatcher

    clip, sentences = modular
    instances = {0: instance(0, "sofa", 1, 1.0, observations=9), 1: instance(1, "chair", 2, 3.0, observations=2),
                 2: instance(2, "chair", 3, 5.0, observations=5)}
    matcher = ModularGoatMatcher(clip, sentences, ImageMatcher())
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="chairs"), LABELS)
    result = matcher.match(instances)
    assert (result.instance_id, result.confident) == (2, True)


def test_modular_goat_image_goal_filters_by_the_pictures_clip_label(modular) -> None:  # noqa: ANN001
    from goat_core.matching.image import ImageMatcher, ImageMatcherConfig
    from goat_core.matching.modular_goat import ModularGoatConfig, ModularGoatMatcher

    clip, sentences = modular
    goal_image = np.full((480, 320, 3), 110, dtype=np.uint8)
    goal_image[100:340, 40:280] = cv2.resize(texture(41, 120), (240, 240), interpolation=cv2.INTER_CUBIC)
    top_label = clip.classify(goal_image, LABELS)[0][0]
    other_label = next(label for label in LABELS if label != top_label)
    instances = {0: instance(0, other_label, 41, 2.0), 1: instance(1, top_label, 42, 4.0)}
    goal = Goal(GoalModality.IMAGE, image=goal_image)
    image_config = ImageMatcherConfig(max_extractions_per_step=4)

    unfiltered = ModularGoatMatcher(clip, sentences, ImageMatcher(image_config), ModularGoatConfig(image_goal_labels=0))
    unfiltered.set_goal(goal, LABELS)
    assert unfiltered.goal_labels is None
    found = settle(unfiltered, instances)
    assert found.instance_id == 0 and found.confident  # keypoints find the pictured object

    filtered = ModularGoatMatcher(clip, sentences, ImageMatcher(image_config), ModularGoatConfig(image_goal_labels=1))
    filtered.set_goal(goal, LABELS)
    assert filtered.goal_labels == (top_label,)
    assert settle(filtered, instances).instance_id != 0  # its category did not pass the filter


def test_stack_selection_builds_each_matcher_from_folders(tiny_dirs: dict[str, Path]) -> None:
    from goat_core.agent import Agent, AgentConfig
    from goat_core.matching.cow import CowMatcher, CowPerception
    from goat_core.matching.modular_goat import ModularGoatMatcher
    from goat_core.matching.selection import StackConfig, build_stack
    from goat_core.perception.factory import PerceptionConfig
    from goat_core.perception.openvocab import DetectorConfig, OwlDetector
    from goat_core.types import DiscreteAction

    owl = PerceptionConfig(backend="owlvit", model_dir=str(tiny_dirs["owlvit"]),
                           detector=DetectorConfig(score_threshold=0.0))
    with pytest.raises(ConfigError, match="clip_model_dir"):
        StackConfig(perception=owl, matcher="modular_goat")
    with pytest.raises(ConfigError, match="'owlvit' or 'owlv2'"):
        StackConfig(matcher="cow")
    cow_perception, cow_matcher = build_stack(StackConfig(perception=owl, matcher="cow"), LABELS)
    assert isinstance(cow_perception, CowPerception) and isinstance(cow_matcher, CowMatcher)

    stack = StackConfig(perception=owl, matcher="modular_goat", clip_model_dir=str(tiny_dirs["clip"]))
    perception, matcher = build_stack(stack, LABELS)
    assert isinstance(perception, OwlDetector) and isinstance(matcher, ModularGoatMatcher)
    # The whole path in the agent: detect, back-project into memory, match, act.
    agent = Agent(AgentConfig(), perception, matcher)
    agent.start_subtask(Goal(GoalModality.DESCRIPTION, text="the sofa in the living room"))
    for step in range(3):
        assert isinstance(agent.act(observation(seed=6, step=step)), DiscreteAction)
    assert agent.memory.instances
    assert {inst.category for inst in agent.memory.instances.values()} <= set(LABELS)
