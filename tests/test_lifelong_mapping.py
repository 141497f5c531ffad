"""The standalone mapping stage (LifelongMapper) and the settled ranking of a goal (rank_instances)."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pytest

from goat_core.errors import GoatError, InvalidObservationError
from goat_core.mapping.instance_memory import InstanceMemoryConfig
from goat_core.mapping.lifelong import LifelongMapper
from goat_core.mapping.occupancy import OccupancyConfig
from goat_core.matching.base import MatchResult
from goat_core.matching.category import ScoredInstance
from goat_core.matching.ranking import RankingMatcher, rank_instances
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import CameraIntrinsics, Goal, Instance, Observation, Pose2D

K = CameraIntrinsics.from_hfov(90, 160, math.radians(42.0))


def wall_frame(pose: Pose2D, step: int = 99) -> Observation:
    """A wall 2 m ahead with a ground-truth "chair" segment (id 7) in the middle of the view."""
    seg = np.full((K.height, K.width), -1, dtype=np.int32)
    seg[70:90, 35:55] = 7
    return Observation(rgb=np.full((K.height, K.width, 3), 120, dtype=np.uint8),
                       depth_m=np.full((K.height, K.width), 2.0, dtype=np.float32), pose=pose,
                       camera_tilt_rad=0.0, camera_height_m=1.31, intrinsics=K, step=step, segmentation=seg,
                       instance_categories={7: "chair"})


def mapper() -> LifelongMapper:
    return LifelongMapper(GroundTruthPerception(labels=["chair", "table"], min_pixels=10), OccupancyConfig(),
                          InstanceMemoryConfig(), robot_radius_m=0.17)


def test_frames_build_grid_and_memory_and_are_numbered() -> None:
    m = mapper()
    assert m.integrate(wall_frame(Pose2D(0.0, 0.0, 0.0))) == [0]
    assert m.integrate(wall_frame(Pose2D(0.0, 0.0, 0.1))) == [0]
    assert m.frames == 2
    inst = m.memory.instances[0]
    assert inst.category == "chair" and inst.num_observations == 2
    # The frame number, not the observation's own step, is what the memory records.
    assert (inst.first_seen_step, inst.last_seen_step) == (0, 1)
    assert m.grid.obstacle.any() and m.grid.explored.sum() > m.grid.obstacle.sum()
    i, j = m.grid.cell_of(0.0, 0.0)
    assert m.grid.explored[i, j] == 1  # the robot's footprint


def test_reset_forgets_and_counts_generations() -> None:
    m = mapper()
    m.integrate(wall_frame(Pose2D(0.0, 0.0, 0.0)))
    m.reset()
    assert (m.frames, m.generation, m.memory.instances) == (0, 1, {})
    assert not m.grid.explored.any()


def test_bad_observations_and_radius_are_rejected() -> None:
    bad = Observation(rgb=np.zeros((4, 4, 3), np.uint8), depth_m=np.zeros((K.height, K.width), np.float32),
                      pose=Pose2D(0.0, 0.0, 0.0), camera_tilt_rad=0.0, camera_height_m=1.31, intrinsics=K)
    with pytest.raises(InvalidObservationError, match="rgb"):
        mapper().integrate(bad)
    with pytest.raises(ValueError, match="robot_radius_m"):
        LifelongMapper(GroundTruthPerception(labels=["chair"]), OccupancyConfig(), InstanceMemoryConfig(), 0.0)


class _SlowMatcher:
    """Needs ``work`` calls before its answer is final (as the image matcher with many stored views)."""

    def __init__(self, work: int) -> None:
        self.work, self.calls = work, 0

    def reset(self) -> None: ...

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None: ...

    def match(self, instances: Mapping[int, Instance]) -> MatchResult:
        self.calls += 1
        return MatchResult(instance_id=3, score=float(self.calls), confident=self.calls >= self.work,
                           pending=self.calls < self.work)

    def candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        return [ScoredInstance(3, float(self.calls)), ScoredInstance(1, 0.5)]


@pytest.mark.parametrize("work", [1, 2, 7])
def test_ranking_settles_pending_work(work: int) -> None:
    matcher = _SlowMatcher(work)
    assert isinstance(matcher, RankingMatcher)
    ranking = rank_instances(matcher, {})
    assert matcher.calls == work
    assert ranking.match == MatchResult(3, float(work), True, False)
    assert [c.instance_id for c in ranking.ranked] == [3, 1]


def test_ranking_is_bounded() -> None:
    ranking = rank_instances(_SlowMatcher(50), {}, max_calls=5)
    assert ranking.match.pending and ranking.match.score == 5.0
    with pytest.raises(GoatError, match="max_calls"):
        rank_instances(_SlowMatcher(1), {}, max_calls=0)
