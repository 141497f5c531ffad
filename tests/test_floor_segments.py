"""Room segments of the agent's own map (goat_core.mapping.floor_segments) and the room votes that use them."""

from __future__ import annotations

import numpy as np
import pytest
from test_description_matcher import VOCABULARY, box

from goat_core.mapping.floor_segments import NO_SEGMENT, FloorSegmentConfig, segment_floor
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.matching.description import DescriptionMatcher
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.types import Goal, GoalModality

WALL_X_M = 4.0  # the wall between the two rooms, 0.1 m thick, with a door at y in [1.5, 2.5]


def _two_rooms(door_width_m: float = 1.0) -> OccupancyGrid:
    """A map as the agent builds it: two explored 4 x 4 m rooms side by side, walls all round, one doorway."""
    grid = OccupancyGrid(OccupancyConfig(size_m=20.0))

    def fill(layer: np.ndarray, x0: float, x1: float, y0: float, y1: float) -> None:
        c0 = grid.to_cells(np.array([[x0, y0]]))[0]
        c1 = grid.to_cells(np.array([[x1, y1]]))[0]
        layer[c0[0]:c1[0], c0[1]:c1[1]] = 1

    fill(grid.explored, -0.1, 8.2, -0.1, 4.1)
    for x0, x1, y0, y1 in [(-0.1, 8.2, -0.1, 0.0), (-0.1, 8.2, 4.0, 4.1), (-0.1, 0.0, -0.1, 4.1),
                           (8.1, 8.2, -0.1, 4.1)]:
        fill(grid.obstacle, x0, x1, y0, y1)
    door_y0 = 2.0 - door_width_m / 2.0
    fill(grid.obstacle, WALL_X_M, WALL_X_M + 0.1, 0.0, door_y0)
    fill(grid.obstacle, WALL_X_M, WALL_X_M + 0.1, door_y0 + door_width_m, 4.0)
    fill(grid.obstacle, 3.2, 3.8, 3.2, 3.8)  # a stove against the wall
    grid.recompute_bounds()
    return grid


def test_a_doorway_separates_two_segments_and_objects_join_the_nearest() -> None:
    cut = segment_floor(_two_rooms())
    kitchen = cut.segment_of(np.array([[1.0, 1.0]]))
    hallway = cut.segment_of(np.array([[6.0, 2.0]]))
    assert cut.count == 2 and NO_SEGMENT not in (kitchen, hallway) and kitchen != hallway
    # The stove's points lie on obstacle cells by the wall; they belong to the room they are in, not the next one.
    assert cut.segment_of(np.array([[3.5, 3.5], [3.7, 3.7]])) == kitchen
    assert cut.segment_of(np.array([[4.4, 3.6]])) == hallway  # just behind the wall from it
    assert cut.segment_of(np.array([[15.0, 15.0]])) == NO_SEGMENT  # far from all explored floor


def test_an_opening_wider_than_a_passage_does_not_separate() -> None:
    assert segment_floor(_two_rooms(door_width_m=2.0)).count == 1


def test_config_rejects_a_non_positive_width() -> None:
    with pytest.raises(ValueError, match="passage_half_width_m"):
        FloorSegmentConfig(passage_half_width_m=0.0)


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return SentenceEmbedder()


def test_votes_through_a_wall_count_less_once_the_map_is_known(embedder: SentenceEmbedder) -> None:
    # GOAT 1000-0 #5 (furnished homes): "the green ceramic plant in the kitchen"; the plant just behind the kitchen
    # wall, in the hallway, read as a kitchen plant as much as the kitchen's own (votes of the stove through the
    # wall) and the agent stopped at it.
    instances = {2: box(2, "stove", (3.5, 3.5, 0.45), (0.6, 0.6, 0.9)),
                 3: box(3, "refrigerator", (0.5, 3.5, 0.9), (0.7, 0.7, 1.8)),
                 5: box(5, "plant", (4.4, 3.6, 0.5), (0.3, 0.3, 1.0), "green"),  # hallway, behind the stove
                 6: box(6, "plant", (1.0, 0.6, 0.5), (0.3, 0.3, 1.0), "green"),  # kitchen, far corner
                 7: box(7, "couch", (6.5, 1.0, 0.4), (1.8, 0.8, 0.8), "gray")}  # hallway
    goal = Goal(GoalModality.DESCRIPTION, text="the green plant in the kitchen")
    blind = DescriptionMatcher(embedder)
    blind.set_goal(goal, VOCABULARY)
    assert blind.candidates(instances)[0].instance_id == 5  # without a map: the nearer to the stove
    mapped = DescriptionMatcher(embedder)
    mapped.observe_map(_two_rooms())
    mapped.set_goal(goal, VOCABULARY)
    ranked = mapped.candidates(instances)
    assert ranked[0].instance_id == 6 and ranked[0].score > ranked[1].score


def test_the_matcher_cuts_the_floor_again_only_when_it_changed() -> None:
    """The description matcher keeps its last cut while the grid's free floor stays the same (several matches a
    step; issue 33's agent step): the cut it uses is always the one segment_floor gives now. A widened doorway
    joins the rooms; a matcher that kept its cut whatever the map would still see two."""
    grid = _two_rooms()
    matcher = DescriptionMatcher(SentenceEmbedder())
    first = matcher._floor_cut(grid)
    assert matcher._floor_cut(grid) is first and first.count == 2
    c0 = grid.to_cells(np.array([[WALL_X_M, 0.0]]))[0]
    c1 = grid.to_cells(np.array([[WALL_X_M + 0.1, 1.5]]))[0]
    grid.obstacle[c0[0]:c1[0], c0[1]:c1[1]] = 0  # the wall below the door gone: one wide opening
    for cut in (matcher._floor_cut(grid), segment_floor(grid)):
        assert cut.count == 1
    assert np.array_equal(matcher._floor_cut(grid).labels, segment_floor(grid).labels)
    other = _two_rooms()  # another grid with the same floor as the first: a cut of its own, the same labels
    assert np.array_equal(matcher._floor_cut(other).labels, first.labels)
    matcher.reset()
    assert matcher._cut is None
