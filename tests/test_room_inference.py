"""Room inference from telling objects (goat_core.matching.rooms) and the room clause of description goals."""

from __future__ import annotations

import numpy as np
import pytest
from test_description_matcher import box
from test_floor_segments import _two_rooms

from goat_core.errors import GoatError
from goat_core.matching.description import DescriptionMatcher
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.rooms import ROOM_PRIORS, RoomConfig, RoomInferer
from goat_core.types import Goal, GoalModality, Instance
from goat_core.vocabulary import OBJECT_LABELS, ROOM_TYPES

OTHER_VOCABULARIES = {"tv", "sink", "shower"}  # common labels of other detectors' vocabularies (HM3D)


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return SentenceEmbedder()


@pytest.fixture(scope="module")
def inferer(embedder: SentenceEmbedder) -> RoomInferer:
    return RoomInferer(embedder)


def _living_room_and_bedroom() -> dict[int, Instance]:
    """The two rooms of ``_two_rooms`` (a wall at x = 4 m, a doorway at y in [1.5, 2.5]): a living room on the
    left, a bedroom on the right, and a white table lamp on each side of the wall, 1.1 m apart."""
    return {1: box(1, "couch", (1.0, 1.0, 0.4), (1.8, 0.8, 0.8), "gray"),
            2: box(2, "tv stand", (1.0, 3.4, 0.3), (1.2, 0.4, 0.6), "black"),
            3: box(3, "bed", (6.5, 1.5, 0.3), (2.0, 1.6, 0.6), "gray"),
            4: box(4, "nightstand", (7.6, 3.4, 0.3), (0.4, 0.4, 0.6), "brown"),
            40: box(40, "table lamp", (4.6, 2.9, 0.6), (0.3, 0.3, 0.5), "white"),  # bedroom side, seen first
            41: box(41, "table lamp", (3.5, 2.9, 0.6), (0.3, 0.3, 0.5), "white")}  # living room side


def _rooms(inferer: RoomInferer, instances: dict[int, Instance], targets: list[int],
           segments: dict[int, int] | None = None) -> dict[int, np.ndarray]:
    return inferer.distributions(targets, instances, {i: inst.centroid_m[:2] for i, inst in instances.items()},
                                 segments)


def test_the_prior_table_names_known_labels_and_rooms(inferer: RoomInferer) -> None:
    for category, row in ROOM_PRIORS.items():
        assert category in OBJECT_LABELS or category in OTHER_VOCABULARIES, category
        assert set(row) <= set(ROOM_TYPES) and 0.0 < sum(row.values()) <= 1.0, category
        probs = inferer.category_affinity(category)
        assert probs is not None and probs.sum() == pytest.approx(1.0)
        assert inferer.room_types[int(np.argmax(probs))] == max(row, key=lambda r: row[r])


@pytest.mark.parametrize(("category", "room"), [("bed", "bedroom"), ("toilet", "bathroom"), ("couch", "living room"),
                                                ("stove", "kitchen"), ("washing machine", "laundry room"),
                                                ("office chair", "office"), ("dining table", "dining room"),
                                                ("sofa", "living room"), ("beds", "bedroom")])
def test_telling_objects_vote_for_their_room(inferer: RoomInferer, category: str, room: str) -> None:
    probs = inferer.category_affinity(category)  # "sofa": not a label here, borrows the couch's row
    assert probs is not None and inferer.room_types[int(np.argmax(probs))] == room


@pytest.mark.parametrize("category", ["table lamp", "plant", "chair", "book", "picture frame", "balustrade"])
def test_objects_found_in_any_room_cast_no_vote(inferer: RoomInferer, category: str) -> None:
    assert inferer.category_affinity(category) is None


def test_with_no_telling_object_around_the_room_is_unknown(inferer: RoomInferer) -> None:
    instances = {1: box(1, "table lamp", (0.0, 0.0, 0.5), (0.3, 0.3, 0.5)),
                 2: box(2, "plant", (1.0, 0.0, 0.5), (0.3, 0.3, 1.0)),
                 3: box(3, "bed", (9.0, 0.0, 0.3), (2.0, 1.6, 0.6))}  # beyond the vote radius
    probs = _rooms(inferer, instances, [1])[1]
    np.testing.assert_allclose(probs, 1.0 / len(ROOM_TYPES))
    assert not inferer.confident(probs)
    assert inferer.agreement(probs, "kitchen") == pytest.approx(1.0)  # flat: no room disagrees


def test_one_telling_object_nearby_makes_the_room_confident(inferer: RoomInferer) -> None:
    instances = {1: box(1, "table lamp", (0.0, 0.0, 0.5), (0.3, 0.3, 0.5)),
                 2: box(2, "bed", (1.5, 0.0, 0.3), (2.0, 1.6, 0.6))}
    probs = _rooms(inferer, instances, [1])[1]
    assert inferer.room_types[int(np.argmax(probs))] == "bedroom" and inferer.confident(probs)
    assert inferer.agreement(probs, "living room") < 0.2


def test_rooms_of_a_constructed_map_follow_its_segments(inferer: RoomInferer) -> None:
    from goat_core.mapping.floor_segments import segment_floor

    instances = _living_room_and_bedroom()
    cut = segment_floor(_two_rooms())
    segments = {i: cut.segment_of(inst.points_xyz_m[:, :2]) for i, inst in instances.items()}
    assert segments[40] == segments[3] != segments[41] == segments[1]
    rooms = _rooms(inferer, instances, [40, 41], segments)
    for iid, room in [(40, "bedroom"), (41, "living room")]:
        assert inferer.room_types[int(np.argmax(rooms[iid]))] == room and inferer.confident(rooms[iid]), iid


def test_the_room_clause_picks_the_look_alike_in_the_named_room(embedder: SentenceEmbedder) -> None:
    # Two white table lamps 1.1 m apart on either side of a wall. Before stop 39 the rooms were voted by
    # embedding similarity of object and room names ("a couch" ~ bedroom) and the bedroom's lamp was taken.
    instances = _living_room_and_bedroom()
    vocabulary = list(OBJECT_LABELS)
    for text, expected in [("the white table lamp in the living room", 41),
                           ("the white table lamp in the bedroom", 40)]:
        matcher = DescriptionMatcher(embedder)
        matcher.observe_map(_two_rooms())
        matcher.set_goal(Goal(GoalModality.DESCRIPTION, text=text), vocabulary)
        result = matcher.match(instances)
        assert result.instance_id == expected and result.confident, text
    # Only the bedroom's lamp seen yet: known to be in another room, it is no confident match for the living room.
    matcher = DescriptionMatcher(embedder)
    matcher.observe_map(_two_rooms())
    matcher.set_goal(Goal(GoalModality.DESCRIPTION, text="the white table lamp in the living room"), vocabulary)
    alone = matcher.match({i: inst for i, inst in instances.items() if i != 41})
    assert alone.instance_id == 40 and not alone.confident


def test_a_target_does_not_vote_for_its_own_room(embedder: SentenceEmbedder) -> None:
    # GOAT 5000-0 #4 "the brown wooden dining table in the kitchen": the table's own dining-room vote vetoed it.
    # Nothing else telling seen yet (a plant): the table's room is unknown, not the dining room.
    instances = {1: box(1, "dining table", (0.0, 0.0, 0.4), (1.6, 0.9, 0.75), "brown"),
                 2: box(2, "plant", (1.5, 1.0, 0.5), (0.4, 0.4, 1.0), "green")}
    matcher = DescriptionMatcher(embedder)
    matcher.set_goal(Goal(GoalModality.DESCRIPTION, text="the brown wooden dining table in the kitchen"),
                     list(OBJECT_LABELS))
    result = matcher.match(instances)
    assert result.instance_id == 1 and result.confident


def test_a_bad_prior_row_is_rejected(embedder: SentenceEmbedder) -> None:
    with pytest.raises(GoatError, match="bed"):
        RoomInferer(embedder, priors={"bed": {"bedroom": 0.9, "kitchen": 0.3}})
    with pytest.raises(GoatError, match="attic"):
        RoomInferer(embedder, priors={"bed": {"attic": 0.9}})


def test_room_config_is_checked() -> None:
    with pytest.raises(ValueError, match="confident_probability"):
        RoomConfig(confident_probability=1.5)
    with pytest.raises(ValueError, match="prior_weight"):
        RoomConfig(prior_weight=0.0)


def test_the_matcher_places_only_the_targets_and_voters_in_the_cut_with_the_votes_of_placing_all(
        embedder: SentenceEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    # The votes read the segments of the targets and of the telling instances alone; a large home's ~100 other
    # instances (lamps, books, plants) need not be placed in the cut at every match (issue 33's agent step).
    from goat_core.mapping import floor_segments
    from goat_core.mapping.floor_segments import FloorSegments, segment_floor

    instances = _living_room_and_bedroom()
    instances[50] = box(50, "plant", (2.0, 2.0, 0.4), (0.4, 0.4, 0.8), "green")  # casts no vote, no target
    instances[51] = box(51, "book", (6.0, 3.0, 0.5), (0.2, 0.2, 0.05), "red")
    cut = segment_floor(_two_rooms())
    everyone = {i: cut.segment_of(inst.points_xyz_m[:, :2]) for i, inst in instances.items()}
    placed: list[int] = []
    original = FloorSegments.segment_of

    def counted(self: FloorSegments, points_xy_m: np.ndarray) -> int:
        placed.append(len(points_xy_m))
        return original(self, points_xy_m)

    monkeypatch.setattr(floor_segments.FloorSegments, "segment_of", counted)
    matcher = DescriptionMatcher(embedder)
    matcher.observe_map(_two_rooms())
    matcher.set_goal(Goal(GoalModality.DESCRIPTION, text="the white table lamp in the bedroom"), list(OBJECT_LABELS))
    feats = {i: matcher._features_of(i, inst) for i, inst in instances.items()}
    got = matcher._room_distributions([40, 41], instances, feats)
    want = _rooms(RoomInferer(embedder), instances, [40, 41], everyone)
    assert set(got) == set(want) and all(np.array_equal(got[i], want[i]) for i in want)
    assert len(placed) == 6  # the two lamps and the four telling objects; not the plant or the book
