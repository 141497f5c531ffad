"""The episode player's budget (goat_suites.ros.episode_budget) and the scoring of a subtask the spent budget gave no
action (goat_suites.ros.scoring): GOAT-Bench's 5000 actions per episode, as the in-process runner shares them."""

from __future__ import annotations

import math
from typing import Any

import pytest

from goat_core.errors import ConfigError
from goat_core.types import DiscreteAction, Pose2D
from goat_ros.params import EpisodePlayerParams
from goat_suites.common.protocols import GOAT_BENCH
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset
from goat_suites.ros.episode_budget import EpisodeActions, budget_from_params
from goat_suites.ros.scoring import SubtaskScorer


def test_the_player_defaults_to_goat_benchs_episode_budget() -> None:
    params = EpisodePlayerParams()
    assert budget_from_params(params.max_actions_per_episode, params.max_actions_per_subtask) == GOAT_BENCH.budget


def test_a_long_subtask_eats_the_actions_of_the_later_ones() -> None:
    actions = EpisodeActions(budget_from_params(100, 0))
    assert actions.next_subtask() == 100
    actions.add(70)
    assert actions.next_subtask() == 30
    actions.add(30)  # ran the rest out
    assert actions.next_subtask() == 0  # spent: the next subtask ends by budget unstarted
    actions.add(None)  # no result came: nothing is counted
    assert actions.next_subtask() == 0 and actions.used == 100


def test_a_per_subtask_cap_starts_every_subtask_afresh_or_caps_the_episode_share() -> None:
    readme = EpisodeActions(budget_from_params(0, 500))  # the GOAT-Bench README's variant
    readme.add(500)
    assert readme.next_subtask() == 500
    both = EpisodeActions(budget_from_params(600, 500))
    both.add(500)
    assert both.next_subtask() == 100


@pytest.mark.parametrize("episode, subtask, message", [
    (0, 0, "needs max_actions_per_episode or max_actions_per_subtask above 0 (got 0 and 0"),
    (-5, 0, "max_actions_per_episode must be an integer >= 0 (0: no cap), got -5"),
    (5000, 2.5, "max_actions_per_subtask must be an integer >= 0 (0: no cap), got 2.5"),
])
def test_bad_player_budgets_are_named(episode: Any, subtask: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        budget_from_params(episode, subtask)


def test_a_subtask_with_no_action_left_is_scored_where_the_robot_stands() -> None:
    """The player reports it as a budget outcome without poses; the scorer puts it where the episode's previous
    subtask ended: no path, failure by budget, the distance from there."""
    episode = generate_dataset(1, 4243, config=EpisodeGenConfig(min_subtasks=2, max_subtasks=2)).episodes[0]
    scorer = SubtaskScorer([episode], "geodesic_viewpoint", 0.25)
    poses = [Pose2D(0.0, 0.0, 0.0), Pose2D(0.0, 0.0, math.radians(30.0))]  # one turn at the start
    first = scorer.score(episode, 0, "budget", [int(DiscreteAction.TURN_LEFT)], poses, None)
    spent = scorer.score(episode, 1, "budget", [], [], None)
    assert spent.stop_reason == "budget" and spent.error is None and spent.failure == "budget"
    assert (spent.num_actions, spent.path_length_m, spent.success, spent.spl) == (0, 0.0, False, 0.0)
    assert first.distance_to_goal_m is not None and spent.geodesic_m is not None
    assert math.isclose(spent.geodesic_m, spent.distance_to_goal_m or 0.0)
    # the same subtask scored explicitly at the last pose gives the same numbers
    fresh = SubtaskScorer([episode], "geodesic_viewpoint", 0.25)
    explicit = fresh.score(episode, 1, "budget", [], [poses[-1]], None)
    assert (explicit.geodesic_m, explicit.distance_to_goal_m) == (spent.geodesic_m, spent.distance_to_goal_m)
    # without an earlier pose in the episode there is nothing to score it at: an error, as before
    unplaced = SubtaskScorer([episode], "geodesic_viewpoint", 0.25).score(episode, 1, "budget", [], [], None)
    assert (unplaced.stop_reason, unplaced.error) == ("error", "no pose was reported")


def test_the_scorer_scores_by_the_goals_the_suite_parts_name() -> None:
    """The ROS evaluator asks the suite's parts (goat_suites.registry; its ``suite`` parameter) which goal objects
    score a subtask, as the in-process runner does; LangMap's reading of a GOAT episode is GOAT-Bench's."""
    import dataclasses

    from goat_suites.common.episodes import goals_for_task
    from goat_suites.common.parts import EPISODE_SCHEMA
    from goat_suites.registry import suite_parts

    episode = generate_dataset(1, 4243, config=EpisodeGenConfig(min_subtasks=2, max_subtasks=2)).episodes[0]
    assert episode.tasks[0].category != episode.tasks[1].category
    poses = [Pose2D(0.0, 0.0, 0.0)]

    def score(parts: Any) -> Any:
        return SubtaskScorer([episode], "geodesic_viewpoint", 0.25, parts=parts).score(episode, 0, "stop",
                                                                                       [0], poses, None)

    second = dataclasses.replace(EPISODE_SCHEMA, scored_goals=lambda e, i, t: goals_for_task(e, e.tasks[1]))
    goat, langmap, other = score(suite_parts("goat")), score(suite_parts("langmap")), score(second)
    assert goat.geodesic_m == langmap.geodesic_m == score(EPISODE_SCHEMA).geodesic_m
    assert other.geodesic_m != goat.geodesic_m  # the second subtask's goal: another distance
    with pytest.raises(ConfigError, match="no suite 'habitat'"):
        suite_parts("habitat")


def test_an_episode_of_another_suite_is_refused_by_name_not_scored_the_wrong_way() -> None:
    """A LangMap episode (it lists its targets per subtask) given to an evaluator whose ``suite`` is ``goat`` would
    score a room goal at one target only: the check names the episode and the suite to use instead."""
    import dataclasses

    from goat_suites.registry import check_episodes_suite

    episode = generate_dataset(1, 4243, config=EpisodeGenConfig(min_subtasks=2, max_subtasks=2)).episodes[0]
    check_episodes_suite("goat", [episode])  # a GOAT episode: nothing to say
    langmap_episode = dataclasses.replace(episode, extra={**episode.extra,
                                                          "langmap_target_ids": {"0": [episode.tasks[0].object_id]}})
    with pytest.raises(ConfigError, match=rf"episode '{episode.episode_id}' is a langmap episode.*suite 'langmap'"):
        check_episodes_suite("goat", [langmap_episode])
    check_episodes_suite("langmap", [langmap_episode, episode])
