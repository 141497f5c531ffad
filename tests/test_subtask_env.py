"""One subtask in the simulator (sim_bridge.embedded.subtask_env) and its plan from the episode
(goat_suites.common.subtask_plan): the checks before the first step come in the runner's order, the goal's
picture carries GOAT-Bench's noise, and a spent budget still gives the goal and measures where the robot stands."""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np
import pytest

from goat_core.types import DiscreteAction, GoalModality, Observation, Pose2D
from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.parts import EPISODE_SCHEMA, procedural_home
from goat_suites.common.subtask_plan import GoalWording, plan_subtask
from goat_suites.goat.generator import generate_dataset
from sim_bridge.embedded.goal_image import noisy_goal_image
from sim_bridge.embedded.sim import EmbeddedSim
from sim_bridge.embedded.subtask_env import GoalPlace, run_subtask


class _Stops:
    """A policy that calls STOP at once."""

    def act(self, obs: Observation) -> DiscreteAction:
        return DiscreteAction.STOP


def _see(obs: Observation, pose: Pose2D) -> Observation:
    return obs


@pytest.fixture(scope="module")
def episode() -> GoatEpisode:
    return generate_dataset(1, seed=3).episodes[0]


@pytest.fixture(scope="module")
def sim(episode: GoatEpisode):
    with EmbeddedSim(procedural_home(episode.scene_id)) as sim:
        yield sim


def _index_of(episode: GoatEpisode, modality: GoalModality) -> int:
    return next(i for i, t in enumerate(episode.tasks) if t.modality is modality)


def _run(sim: EmbeddedSim, episode: GoatEpisode, place: GoalPlace, max_actions: int = 5):
    start = episode.start_pose_ros()
    obs = sim.reset(start.xy(), start.yaw_rad)
    begun: list[Optional[np.ndarray]] = []
    outcome = run_subtask(sim, place, "view_points", obs, max_actions, begun.append, _Stops(), _see)
    return outcome, begun


def test_a_goal_without_view_points_fails_before_the_goal_is_given(sim, episode) -> None:
    plan = plan_subtask(episode, 0, episode.tasks[0], EPISODE_SCHEMA, GoalWording())
    place = dataclasses.replace(plan.place, view_xy_m=np.zeros((0, 2)), error="goal objects ['x'] have no view "
                                                                              "points: cannot score this subtask")
    outcome, begun = _run(sim, episode, place)
    assert outcome.error == place.error and begun == [] and outcome.actions == []


def test_an_unreachable_goal_is_reported_before_a_goal_that_cannot_be_given(sim, episode) -> None:
    plan = plan_subtask(episode, 0, episode.tasks[0], EPISODE_SCHEMA, GoalWording())
    nowhere = np.asarray([[math.nan, math.nan]])  # no geodesic reaches it (GoalDistance: UnreachableGoalError)
    outcome, begun = _run(sim, episode, dataclasses.replace(plan.place, view_xy_m=nowhere, error="no words"))
    assert outcome.error is not None and "GoalDistance needs finite" in outcome.error and begun == []
    outcome, begun = _run(sim, episode, dataclasses.replace(plan.place, error="no words"))
    assert outcome.error == "no words" and begun == [] and math.isfinite(outcome.geodesic_m)


def test_a_spent_budget_still_gives_the_goal_and_measures_where_the_robot_stands(sim, episode) -> None:
    plan = plan_subtask(episode, 0, episode.tasks[0], EPISODE_SCHEMA, GoalWording())
    outcome, begun = _run(sim, episode, plan.place, max_actions=0)
    assert outcome.error is None and len(begun) == 1 and outcome.actions == [] and not outcome.stopped
    assert outcome.distance_m == pytest.approx(outcome.geodesic_m) and outcome.path_length_m == 0.0
    outcome, _ = _run(sim, episode, plan.place, max_actions=5)
    assert outcome.actions == [DiscreteAction.STOP] and outcome.stopped


def test_an_image_goal_gets_its_picture_with_the_noise_of_its_seed(sim, episode) -> None:
    index = _index_of(episode, GoalModality.IMAGE)
    clean = plan_subtask(episode, index, episode.tasks[index], EPISODE_SCHEMA, GoalWording())
    noisy = plan_subtask(episode, index, episode.tasks[index], EPISODE_SCHEMA, GoalWording(image_noise=True))
    assert clean.goal is None and clean.place.image_noise_seed is None and noisy.place.image_noise_seed is not None
    (_, [picture]), (_, [with_noise]) = _run(sim, episode, clean.place), _run(sim, episode, noisy.place)
    assert picture is not None and with_noise is not None
    assert np.array_equal(with_noise, noisy_goal_image(picture, noisy.place.image_noise_seed)[0])
    assert not np.array_equal(with_noise, picture)


def test_the_plan_reads_the_goal_words_and_restates_descriptions_when_asked(episode) -> None:
    index = _index_of(episode, GoalModality.DESCRIPTION)
    task = episode.tasks[index]
    plain = plan_subtask(episode, index, task, EPISODE_SCHEMA, GoalWording())
    restated = plan_subtask(episode, index, task, EPISODE_SCHEMA, GoalWording(paraphrase=True))
    assert plain.goal is not None and restated.goal is not None and plain.goal.text != restated.goal.text
    assert plain.place.error is None and plain.place.view_xy_m.shape[1] == 2 and len(plain.place.view_xy_m)
    assert plain.target_id == task.object_id and plain.place.object_ids == (task.object_id,)
