"""Category goals (label resolution, instance choice) and the modality dispatcher."""

from __future__ import annotations

import numpy as np
import pytest

from goat_core.errors import GoatError, InvalidGoalError
from goat_core.matching.base import NO_MATCH
from goat_core.matching.category import CategoryMatcher, CategoryResolver, label_key, singular
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig, ModalityMatcher
from goat_core.types import Goal, GoalModality, Instance, InstanceView, Pose2D

VOCABULARY = ["bed", "couch", "chair", "dining table", "tv", "toilet", "sink", "potted plant", "bookshelf",
              "mug", "refrigerator", "stove", "washing machine", "desk", "nightstand", "bathtub", "lamp",
              "cabinet"]


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return SentenceEmbedder()


@pytest.fixture(scope="module")
def resolver(embedder: SentenceEmbedder) -> CategoryResolver:
    return CategoryResolver(embedder, VOCABULARY)


def make_instance(iid: int, category: str, x_m: float, observations: int = 1, points: int = 10,
                  colour: tuple[int, int, int] | None = None) -> Instance:
    xyz = np.column_stack([np.full(points, x_m), np.linspace(0.0, 0.3, points), np.full(points, 0.5)])
    return Instance(instance_id=iid, category=category, points_xyz_m=xyz, num_observations=observations,
                    mean_rgb=None if colour is None else np.array(colour, dtype=float))


@pytest.mark.parametrize(("word", "expected"), [
    ("chairs", "chair"), ("benches", "bench"), ("boxes", "box"), ("shelves", "shelf"), ("bodies", "body"),
    ("glass", "glass"), ("glasses", "glass"), ("bus", "bus"), ("tv", "tv"), ("clothes", "clothe"),
])
def test_singular(word: str, expected: str) -> None:
    assert singular(word) == expected


def test_label_key_folds_case_separators_and_plurals() -> None:
    assert label_key("Potted_Plants") == label_key("potted plant") == ("potted", "plant")


@pytest.mark.parametrize(("phrase", "label"), [("Couches", "couch"), ("potted-plants", "potted plant"),
                                               ("TV", "tv"), ("dining tables", "dining table")])
def test_exact_matches_win(resolver: CategoryResolver, phrase: str, label: str) -> None:
    resolution = resolver.resolve(phrase)
    assert resolution.exact and resolution.category == label and resolution.similarity == 1.0


@pytest.mark.parametrize(("phrase", "label"), [
    ("sofa", "couch"), ("fridge", "refrigerator"), ("television", "tv"), ("washer", "washing machine"),
    ("cupboard", "cabinet"), ("armchair", "chair"), ("plant", "potted plant"), ("cooker", "stove"),
])
def test_synonyms_resolve_by_embedding(resolver: CategoryResolver, phrase: str, label: str) -> None:
    resolution = resolver.resolve(phrase)
    assert not resolution.exact and resolution.category == label
    assert resolution.similarity >= 0.5


def test_rank_lists_every_label_best_first(resolver: CategoryResolver) -> None:
    ranked = resolver.rank("sofa")
    assert [label for label, _ in ranked][0] == "couch"
    assert sorted(label for label, _ in ranked) == sorted(VOCABULARY)
    sims = [s for _, s in ranked]
    assert sims == sorted(sims, reverse=True)


@pytest.mark.parametrize("vocabulary", [[], ["", "  ", "--"]])
def test_empty_vocabulary_is_rejected(embedder: SentenceEmbedder, vocabulary: list[str]) -> None:
    with pytest.raises(GoatError, match="no usable labels"):
        CategoryResolver(embedder, vocabulary)


def test_phrase_without_words_is_rejected(resolver: CategoryResolver) -> None:
    with pytest.raises(InvalidGoalError, match="no words"):
        resolver.rank("!!")


@pytest.mark.parametrize("goal_category", ["couch", "sofa", "Couches"])
def test_matcher_prefers_the_most_observed_instance(embedder: SentenceEmbedder, goal_category: str) -> None:
    instances = {1: make_instance(1, "couch", 0.0, observations=2),
                 2: make_instance(2, "couch", 4.0, observations=9),
                 3: make_instance(3, "chair", 1.0, observations=20),
                 4: make_instance(4, "couch", 8.0, observations=9, points=5)}
    matcher = CategoryMatcher(embedder)
    matcher.set_goal(Goal(GoalModality.CATEGORY, category=goal_category), VOCABULARY)
    result = matcher.match(instances)
    assert result.instance_id == 2 and result.confident
    assert [c.instance_id for c in matcher.candidates(instances)] == [2, 4, 1]


def test_matcher_without_an_instance_of_the_label_offers_the_nearest_label(embedder: SentenceEmbedder) -> None:
    """No remembered instance of the resolved label: the most similar label memory holds, never confidently."""
    matcher = CategoryMatcher(embedder)
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="sofa"), VOCABULARY)
    assert matcher.resolution is not None and matcher.resolution.category == "couch"
    ranking = dict(matcher.ranking)
    assert ranking["chair"] > ranking["toilet"]  # "chair" is nearer to "sofa" than "toilet" is
    instances = {1: make_instance(1, "toilet", 0.0), 2: make_instance(2, "chair", 3.0),
                 3: make_instance(3, "chair", 5.0, observations=4)}
    result = matcher.match(instances)
    assert result.instance_id == 3 and not result.confident  # the most observed chair
    assert result.score == pytest.approx(ranking["chair"])
    assert matcher.candidates(instances) == []  # no instance fits the goal itself
    assert matcher.match({}) == NO_MATCH


def test_exact_label_ranks_first(embedder: SentenceEmbedder) -> None:
    matcher = CategoryMatcher(embedder)
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="Toilets"), VOCABULARY)
    assert matcher.ranking[0] == ("toilet", 1.0)
    assert [label for label, _ in matcher.ranking].count("toilet") == 1
    assert len(matcher.ranking) == len(VOCABULARY)


def test_unknown_category_is_never_confident(embedder: SentenceEmbedder) -> None:
    matcher = CategoryMatcher(embedder)
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="balustrade"), VOCABULARY)
    assert matcher.resolution is not None and matcher.resolution.similarity < 0.5
    instances = {i: make_instance(i, label, float(i)) for i, label in enumerate(VOCABULARY)}
    result = matcher.match(instances)
    assert result.instance_id is not None and not result.confident


@pytest.mark.parametrize(("category", "warned"), [("xyzzy_unknown_thing", True), ("balustrade", True),
                                                  ("sofa", False), ("couches", False)])
def test_a_category_the_detector_does_not_know_gets_a_warning_naming_it(embedder: SentenceEmbedder, category: str,
                                                                       warned: bool) -> None:
    """Issue 16: an unknown category was accepted silently; the robot explored for it with no word said."""
    dispatcher = ModalityMatcher(embedder)
    dispatcher.set_goal(Goal(GoalModality.CATEGORY, category=category), VOCABULARY)
    note = dispatcher.goal_note
    assert dispatcher.category.goal_note == note
    if not warned:
        assert note is None
        return
    resolution = dispatcher.category.resolution
    assert note is not None and resolution is not None
    assert f"{category!r} is not a label the detector knows" in note
    assert f"closest: {resolution.category!r}" in note and "never confidently" in note
    dispatcher.set_goal(Goal(GoalModality.DESCRIPTION, text=f"the {category} by the door"), VOCABULARY)
    assert dispatcher.goal_note is None  # the note belongs to the category goal that caused it


def test_category_matcher_rejects_other_modalities(embedder: SentenceEmbedder) -> None:
    with pytest.raises(InvalidGoalError, match="object-category goal"):
        CategoryMatcher(embedder).set_goal(Goal(GoalModality.DESCRIPTION, text="a mug"), VOCABULARY)


def _painted_crop(seed: int, paint: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A crop painted ``paint`` with a random pattern of darker and lighter 8-px marks on 40 % of it."""
    rng = np.random.default_rng(seed)
    factors = np.where(rng.random((24, 24, 1)) < 0.4, rng.choice([0.4, 1.3], (24, 24, 1)), 1.0)
    blocks = np.clip(np.array(paint, dtype=float) * factors, 0, 255).astype(np.uint8)
    crop = np.kron(blocks, np.ones((8, 8, 1), np.uint8))
    return crop, np.ones(crop.shape[:2], bool)


def test_dispatcher_routes_each_modality(embedder: SentenceEmbedder) -> None:
    crop, mask = _painted_crop(3, (200, 30, 30))
    mug = make_instance(1, "mug", 0.0, colour=(200, 30, 30))
    mug.views = [InstanceView(rgb=crop, mask=mask, pixel_count=int(mask.sum()), pose=Pose2D(0, 0, 0), step=1)]
    instances = {1: mug, 2: make_instance(2, "couch", 3.0)}
    matcher = ModalityMatcher(embedder, MatcherConfig())
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="sofa"), VOCABULARY)
    assert matcher.match(instances).instance_id == 2
    matcher.set_goal(Goal(GoalModality.DESCRIPTION, text="the red mug"), VOCABULARY)
    described = matcher.match(instances)
    assert described.instance_id == 1 and described.confident
    goal_picture = np.zeros((320, 240, 3), np.uint8)
    goal_picture[40:232, 24:216] = crop
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture), VOCABULARY)
    pictured = matcher.match(instances)
    assert pictured.instance_id == 1 and pictured.confident
    assert [c.instance_id for c in matcher.candidates(instances)] == [1]


def test_dispatcher_before_any_goal_raises(embedder: SentenceEmbedder) -> None:
    with pytest.raises(GoatError, match="before set_goal"):
        ModalityMatcher(embedder).match({})


def test_image_goal_that_names_its_category_is_matched_only_among_that_category(embedder: SentenceEmbedder) -> None:
    crop, mask = _painted_crop(3, (200, 30, 30))
    goal_picture = np.zeros((320, 240, 3), np.uint8)
    goal_picture[40:232, 24:216] = crop
    view = InstanceView(rgb=crop, mask=mask, pixel_count=int(mask.sum()), pose=Pose2D(0, 0, 0), step=1)
    lookalike = make_instance(1, "mug", 0.0)  # the very same picture, but a mug
    lookalike.views = [view]
    couches = {2: make_instance(2, "couch", 3.0, observations=2), 3: make_instance(3, "couch", 6.0, observations=5)}
    instances = {1: lookalike, **couches}
    matcher = ModalityMatcher(embedder, MatcherConfig())
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture, category="sofa"), VOCABULARY)
    assert matcher.image_category is not None and matcher.image_category.category == "couch"
    assert set(matcher.admissible(instances)) == {2, 3}
    # No couch view agrees with the picture: the most observed couch is offered, not confidently.
    result = matcher.match(instances)
    assert (result.instance_id, result.confident) == (3, False)
    assert matcher.candidates(instances) == []
    # Without the category, the look-alike wins on the picture alone.
    matcher.set_goal(Goal(GoalModality.IMAGE, image=goal_picture), VOCABULARY)
    assert matcher.admissible(instances) is instances
    assert matcher.match(instances).instance_id == 1


def test_image_goal_category_the_detector_does_not_know_restricts_nothing(embedder: SentenceEmbedder) -> None:
    picture = np.zeros((320, 240, 3), np.uint8)
    picture[40:232, 24:216] = _painted_crop(4, (30, 200, 30))[0]
    matcher = ModalityMatcher(embedder, MatcherConfig())
    matcher.set_goal(Goal(GoalModality.IMAGE, image=picture, category="xylophone"), VOCABULARY)
    instances = {1: make_instance(1, "mug", 0.0), 2: make_instance(2, "couch", 3.0)}
    assert matcher.image_category is not None
    assert matcher.image_category.similarity < MatcherConfig().category.min_similarity
    assert matcher.admissible(instances) is instances


def test_image_goal_category_must_not_be_blank() -> None:
    picture = np.zeros((64, 64, 3), np.uint8)
    with pytest.raises(InvalidGoalError, match="category"):
        Goal(GoalModality.IMAGE, image=picture, category="  ")
    assert Goal(GoalModality.IMAGE, image=picture, category="couch").describe() == "image: 64x64 (couch)"
