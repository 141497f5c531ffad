"""One FindingDory episode (``goat_suites.findingdory.run``): a home, the oracle's experience in it, the
instructions about it and every task, with the report's trajectories and frame thumbnails."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from goat_core.errors import GoatError
from goat_core.types import GoalModality
from goat_ros.record import RecordedGoal, RunRecorder
from goat_suites.common.runner import Trajectory
from goat_suites.findingdory.args import PolicyChoice, build_policy
from goat_suites.findingdory.experience_bag import write_experience_bag
from goat_suites.findingdory.experience_video import ExperienceVideo, VideoEncoding
from goat_suites.findingdory.generator import (
    FindingDoryGenConfig,
    TaskJudge,
    collect_experience,
    findingdory_sim_config,
    generate_tasks,
)
from goat_suites.findingdory.policy import EpisodeExperience, HighLevelPolicy
from goat_suites.findingdory.pose_nav import PoseGoalNavigator, PoseNavConfig
from goat_suites.findingdory.results import (
    thumbnail_jpeg,
)
from goat_suites.findingdory.task import FindingDoryRunConfig, TaskOutcome, pose_xy, run_task
from goat_suites.findingdory.tasks import TASK_TYPES, FindingDoryTask
from goat_suites.goat.generator import scene_id_for
from sim_bridge.embedded.home import HomeConfig, generate_home
from sim_bridge.embedded.sim import EmbeddedSim


@dataclass
class EpisodeRun:
    """What one episode produced: per task its outcome and its trajectory (id ``<episode>/<task>``)."""

    scene_id: str  # the home's scene id (goat_suites.goat.generator.scene_id_for)
    outcomes: list[TaskOutcome] = field(default_factory=list)
    trajectories: list[Trajectory] = field(default_factory=list)
    thumbnails: dict[int, str] = field(default_factory=dict)  # frame -> base64 JPEG, of the frames chosen or
    # referred to by a task (the report's frame strips)
    video_bytes: int = 0  # encoded size of the experience video


def recorded_goal(task: FindingDoryTask, episode_id: str, index: int, config: FindingDoryRunConfig,
                  experience_actions: int = 0) -> RecordedGoal:
    """A task as /goat/goal carries it: the instruction as a description goal; target_id lists each goal's valid
    targets ("|" between alternatives, ";" between goals); the budget is what the task may take: what the
    experience left of the episode budget, and at most the per-goal one times the goals."""
    targets = ";".join("|".join(sorted(goal.valid_ids)) for goal in task.subgoals)
    caps = [config.task_actions(experience_actions)]
    if config.max_actions_per_goal is not None:
        caps.append(config.max_actions_per_goal * len(task.subgoals))
    return RecordedGoal(episode_id=episode_id, subtask_index=index, modality=GoalModality.DESCRIPTION,
                        text=task.lang, target_id=targets, max_actions=min(c for c in caps if c is not None))


def task_trajectory(sim: EmbeddedSim, judge: TaskJudge, task: FindingDoryTask, outcome: TaskOutcome,
                    scene_id: str) -> Trajectory:
    """The report's picture of one task: the drive (or the start alone), one start and the targets per goal."""
    path = list(outcome.path_xy_m) or [pose_xy(judge.start_world)]
    starts = list(outcome.goal_starts)
    starts += [len(path) - 1] * (len(task.subgoals) - len(starts))  # goals never driven to start at the end
    goals: list[list[tuple[float, float]]] = []
    for goal in task.subgoals:
        centres = []
        for target in sorted(goal.valid_ids):
            try:
                centre = judge.goal(target).centre_xy_m
            except GoatError:  # a target without a reachable point: nothing to mark
                continue
            centres.append((float(centre[0]), float(centre[1])))
        goals.append(centres)
    grid = sim.navgrid
    return Trajectory(f"{outcome.record.episode_id}/{task.task_id}", scene_id, positions_xy_m=path,
                      subtask_starts=starts, goal_positions_xy_m=goals, navigable=grid.navigable,
                      grid_origin_xy_m=(float(grid.origin_xy_m[0]), float(grid.origin_xy_m[1])),
                      grid_resolution_m=grid.resolution_m)


def run_episode(home_seed: int, episode_id: str, config: Optional[FindingDoryRunConfig] = None,
                home_config: HomeConfig = HomeConfig(), gen_config: Optional[FindingDoryGenConfig] = None,
                task_types: Sequence[str] = TASK_TYPES, recorder: Optional[RunRecorder] = None,
                policy: Optional[HighLevelPolicy] = None, video: Optional[VideoEncoding] = None,
                experience_bag: Optional[Path] = None) -> EpisodeRun:
    """Experience, instructions and every task of one home (the experience's random draws from ``home_seed``).

    ``policy``: the high level (default: the rule-based selector over a memory of the video, ground-truth
    perception); it begins the episode with the experience video (recorded with ``video``, default: with the
    simulator's segmentation, as ground-truth perception needs) and the log. ``experience_bag``: the experience
    video is also written there as a rosbag2 bag (goat_suites.findingdory.experience_bag). ``recorder``: the interaction
    phase
    goes into its bag (per task: goal, observations and actions, result)."""

    config = config or FindingDoryRunConfig()
    gen_config = gen_config or FindingDoryGenConfig()
    policy = policy if policy is not None else build_policy(PolicyChoice())
    video = video if video is not None else VideoEncoding()
    rng = np.random.default_rng(home_seed)
    run = EpisodeRun(scene_id_for(home_seed, home_config))
    with EmbeddedSim(generate_home(home_seed, home_config), findingdory_sim_config()) as sim:
        navigator = PoseGoalNavigator(PoseNavConfig(actions=sim.config.action_sizes,
                                                    camera_tilt_rad=gen_config.camera_tilt_rad))
        experience = collect_experience(sim, rng, gen_config, on_frame=navigator.observe, video=video)
        if experience_bag is not None and experience.video is not None:
            write_experience_bag(experience_bag, experience.video, {"episode_id": episode_id, "home_seed": home_seed,
                                                                    "scene_id": run.scene_id})
        experience_map = navigator.snapshot() if config.use_experience_map else None
        judge = TaskJudge(sim, experience.start_world, config.judge)
        tasks = generate_tasks(sim, experience, judge, rng, gen_config, task_types)
        policy.begin_episode(EpisodeExperience(video=experience.video, log=experience.log))
        for index, task in enumerate(tasks):
            if recorder is not None:
                recorder.on_goal(recorded_goal(task, episode_id, index, config, experience.num_actions))
            outcome = run_task(sim, judge, navigator, experience_map, experience.log, task, episode_id, config,
                               policy, on_step=recorder.on_step if recorder is not None else None,
                               experience_actions=experience.num_actions)
            if recorder is not None:
                recorder.on_result(outcome.subtask_record(index, run.scene_id))
            run.outcomes.append(outcome)
            run.trajectories.append(task_trajectory(sim, judge, task, outcome, run.scene_id))
    if experience.video is not None:
        run.thumbnails = _thumbnails(experience.video, run.outcomes)
        run.video_bytes = experience.video.size_bytes()
    return run


def _thumbnails(video: ExperienceVideo, outcomes: Sequence[TaskOutcome]) -> dict[int, str]:
    wanted: set[int] = set()
    for outcome in outcomes:
        wanted.update(outcome.reference_frames)
        if outcome.selection is not None:
            wanted.update(outcome.selection.frame_indices)
    return {k: thumbnail_jpeg(video.frames[k].rgb()) for k in sorted(wanted) if 0 <= k < len(video)}
