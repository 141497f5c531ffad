"""The in-process reference of the ROS identity tests: the records the plain runner gives for the same episodes."""

from __future__ import annotations

from typing import Sequence

from goat_core.agent import AgentConfig
from goat_core.matching.matcher import MatcherConfig
from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.results import SubtaskRecord
from goat_suites.common.runner import EpisodeRunner, RunConfig


def in_process_records(episodes: Sequence[GoatEpisode], run_config: RunConfig) -> list[SubtaskRecord]:
    """Every subtask record of ``episodes``, in order, from the in-process runner with the default agent."""
    records: list[SubtaskRecord] = []
    with EpisodeRunner(run_config, AgentConfig(), MatcherConfig()) as runner:
        for episode in episodes:
            records.extend(runner.run_episode(episode)[0])
    return records
