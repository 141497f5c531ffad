"""The benchmark loop under the stretch realism profile: the same seed gives the same run, the agent acts on the
localiser's pose (logged against the truth), and ideal keeps no log."""

from __future__ import annotations

import math

import pytest

from goat_core.agent import AgentConfig
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_suites.common.realism import PoseLog
from goat_suites.common.results import SubtaskRecord
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset
from sim_bridge.embedded.realism import RealismConfig, realism_profile
from sim_bridge.embedded.sim import SimConfig

BUDGET = 20  # actions per subtask: a look around and a few steps (the suite is slow enough)


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return SentenceEmbedder()


@pytest.fixture(scope="module")
def episode():  # type: ignore[no-untyped-def]
    return generate_dataset(1, seed=3, config=EpisodeGenConfig(min_subtasks=2, max_subtasks=2)).episodes[0]


def _run(episode, embedder, realism: RealismConfig) -> tuple[list[SubtaskRecord], PoseLog]:  # type: ignore[no-untyped-def]
    with EpisodeRunner(RunConfig(max_actions_per_subtask=BUDGET), AgentConfig(), MatcherConfig(),
                       SimConfig(realism=realism), embedder=embedder) as runner:
        records, _ = runner.run_episode(episode)
        return records, runner.senses.log


def test_same_seed_same_run_and_the_pose_is_logged(episode, embedder) -> None:  # type: ignore[no-untyped-def]
    first, log = _run(episode, embedder, realism_profile("stretch", seed=7))
    again, _ = _run(episode, embedder, realism_profile("stretch", seed=7))
    other, _ = _run(episode, embedder, realism_profile("stretch", seed=8))
    assert [r.actions for r in first] == [r.actions for r in again]
    assert [r.path_length_m for r in first] == [r.path_length_m for r in again]
    assert [r.path_length_m for r in first] != [r.path_length_m for r in other]
    steps = sum(r.num_actions for r in first)
    assert len(log.truth) == len(log.belief) == steps  # one entry per action the agent chose
    assert len(log.subtask_end) == len(first)
    pos, yaw = log.errors()
    assert pos.max() > 0.0  # the agent's pose is not the truth ...
    assert pos.max() < 0.5 and math.degrees(float(yaw.max())) < 10.0  # ... but the localiser keeps it near


def test_ideal_keeps_no_pose_log(episode, embedder) -> None:  # type: ignore[no-untyped-def]
    _, log = _run(episode, embedder, RealismConfig())
    assert log.truth == [] and log.belief == []
