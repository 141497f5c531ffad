"""A subtask read from its episode once, before the simulator runs it: the goal objects that score it, the goal
the agent gets (its words, or where its picture is taken), and where everything is in the world frame.

The runner (goat_suites.common.runner) plans every subtask of an episode first, hands each plan's
:class:`~sim_bridge.embedded.subtask_env.GoalPlace` to the simulator and scores what comes back; it does not read
the episode again while the robot moves.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Optional

import numpy as np

from goat_core.errors import GoatError
from goat_core.frames import habitat_quaternion_to_tilt, habitat_quaternion_to_yaw, habitat_to_ros_position
from goat_core.types import Goal, GoalModality
from goat_suites.common.episodes import GoatEpisode, GoatTask, image_goal_for_task, task_goal_text
from goat_suites.common.paraphrase import paraphrase_description
from goat_suites.common.parts import SuiteParts
from goat_suites.common.success import goal_points_xy, no_view_points
from sim_bridge.embedded.subtask_env import GoalPlace


@dataclass(frozen=True)
class GoalWording:
    """How the runner states a subtask's goal (goat_suites.common.runner.RunConfig's goal settings)."""

    paraphrase: bool = False  # description goals restated in other words
    image_noise: bool = False  # image goals get GOAT-Bench's pixel noise
    image_category: bool = True  # image goals carry their object category


@dataclass(frozen=True)
class SubtaskPlan:
    """One subtask of an episode, planned."""

    index: int
    task: GoatTask
    place: GoalPlace  # the goal in the world frame, for the simulator
    goal: Optional[Goal]  # the agent's goal (None for an image goal, made when its picture is rendered)
    target_id: Optional[str]  # the goal instance named to the agent
    image_category: Optional[str]  # the category an image goal carries
    goal_positions_xy_m: list[tuple[float, float]]  # the goal objects' centres (the report's map)

    def image_goal(self, picture: np.ndarray, hfov_rad: float) -> Goal:
        """The agent's goal of an image subtask, with its rendered picture."""
        return Goal(GoalModality.IMAGE, image=picture, image_hfov_rad=hfov_rad, category=self.image_category,
                    target_id=self.target_id)

    def described(self) -> str:
        """The goal in words before it is made ("image: mug")."""
        return f"{self.task.modality.value}: {self.task.category}"


def subtask_seed(episode: GoatEpisode, index: int) -> int:
    """A seed of one subtask (noise, paraphrases) that depends on nothing but the episode and the index."""
    return zlib.crc32(f"{episode.scene_id}/{episode.episode_id}/{index}".encode())


def plan_subtask(episode: GoatEpisode, index: int, task: GoatTask, parts: SuiteParts,
                 wording: GoalWording) -> SubtaskPlan:
    """Plan subtask ``index``: the suite's scored goals, the goal as the agent gets it, and the world frame.

    A goal that cannot be stated (no words, no picture) is kept as the place's error, which the simulator reports
    once it has found the goal reachable, as a subtask that failed unstarted.
    """
    goals = parts.scored_goals(episode, index, task)
    target = task.object_id or (goals[0].object_id if goals else None)
    goal: Optional[Goal] = None
    spec = None
    error: Optional[str] = None
    try:
        if task.modality is GoalModality.CATEGORY:
            goal = Goal(GoalModality.CATEGORY, category=task_goal_text(episode, index, task), target_id=target)
        elif task.modality is GoalModality.DESCRIPTION:
            text = task_goal_text(episode, index, task)
            if wording.paraphrase:
                text = paraphrase_description(text, subtask_seed(episode, index))
            goal = Goal(GoalModality.DESCRIPTION, text=text, target_id=target)
        else:
            spec = image_goal_for_task(episode, task)
    except GoatError as exc:
        error = str(exc)
    # the world frame last: everything above reads the episode as stored
    view_xy, object_xy = goal_points_xy(goals)
    image_view = None
    if spec is not None:
        image_view = (habitat_to_ros_position(spec.position)[:2], habitat_quaternion_to_yaw(spec.rotation),
                      habitat_quaternion_to_tilt(spec.rotation))
    if not len(view_xy):
        error = no_view_points(goals)
    place = GoalPlace(tuple(g.object_id for g in goals), object_xy, view_xy, image_view,
                      subtask_seed(episode, index) if wording.image_noise and spec is not None else None, error)
    return SubtaskPlan(index, task, place, goal, target,
                       task.category if wording.image_category and task.category else None,
                       [(float(x), float(y)) for x, y in object_xy])
