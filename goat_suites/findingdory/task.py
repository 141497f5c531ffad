"""One FindingDory task (``goat-nav bench --suite findingdory``, ``goat_suites.findingdory.run``): the high
level verifies the frames the policy chose; after a high-level success the low level drives to them and every
STOP is verified; the task's FindingDory record and what a results file shows of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from typing import Any, Callable, Optional, Sequence

import numpy as np

from goat_core.errors import ConfigError, GoatError
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.types import DiscreteAction, GoalModality, Observation, Pose2D
from goat_suites.common.protocols import FINDINGDORY, Budget
from goat_suites.common.results import SubtaskRecord
from goat_suites.common.suite_metrics import (
    FindingDoryRecord,
)
from goat_suites.findingdory.experience import ExperienceLog
from goat_suites.findingdory.generator import JudgeConfig, TaskJudge, Verdict
from goat_suites.findingdory.policy import EpisodeExperience, HighLevelPolicy, OracleSelector
from goat_suites.findingdory.pose_nav import PoseGoalNavigator
from goat_suites.findingdory.selector import ExperienceSelector, Selection
from goat_suites.findingdory.tasks import FindingDoryTask
from sim_bridge.embedded.sim import EmbeddedSim


@dataclass(frozen=True)
class FindingDoryRunConfig:
    """How the tasks are run and verified.

    The budget is FindingDory's (``goat_suites.common.protocols.FINDINGDORY``): 5000 steps per episode
    (findingdory-habitat ``config/benchmark/findingdory.yaml`` l.27), where one episode is the experience and
    then one instruction, stepped through the same habitat Env (``run_findingdory_eval.py`` l.92-106), so the
    experience's actions count and what is left is the task's, shared by its goals. ``max_actions_per_goal``
    (``--max-actions``) caps each goal as well: a custom budget.
    """

    max_actions_per_episode: Optional[int] = FINDINGDORY.budget.max_actions_per_episode
    max_actions_per_goal: Optional[int] = None
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    use_experience_map: bool = True  # False: --no-memory, the navigator starts each task without a map

    def __post_init__(self) -> None:
        for name in ("max_actions_per_episode", "max_actions_per_goal"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be >= 1 or None, got {value}")
        if self.max_actions_per_episode is None and self.max_actions_per_goal is None:
            raise ConfigError("FindingDoryRunConfig needs max_actions_per_episode or max_actions_per_goal")

    def task_actions(self, experience_actions: int) -> Optional[int]:
        """The actions one task may take after an experience of ``experience_actions`` (None: no episode cap)."""
        if self.max_actions_per_episode is None:
            return None
        return max(0, self.max_actions_per_episode - experience_actions)

    def budget(self) -> Budget:
        """The budget as the protocols name it (per goal = per subtask)."""
        return Budget(max_actions_per_episode=self.max_actions_per_episode,
                      max_actions_per_subtask=self.max_actions_per_goal)


@dataclass(frozen=True)
class Relaxed:
    """High-level outcome under the full check and its two relaxations."""

    success: bool
    dtg: bool
    sc: bool


@dataclass(frozen=True)
class TaskOutcome:
    """One task's record plus what a log or a results file should show about it."""

    record: FindingDoryRecord
    lang: str
    template_key: str
    valid_targets: tuple[tuple[str, ...], ...]  # per goal, sorted
    selection: Optional[Selection]  # the high-level policy's answer (None: it gave none; see error)
    shortest_path_m: float
    path_length_m: float
    num_actions: int
    stops: int
    error: Optional[str] = None
    actions: tuple[DiscreteAction, ...] = ()  # of the low-level drive, every goal's STOP included
    path_xy_m: tuple[tuple[float, float], ...] = ()  # world positions of the drive: its start, then every step
    goal_starts: tuple[int, ...] = ()  # per goal driven to: the index into path_xy_m where its drive began
    reference_frames: tuple[int, ...] = ()  # the oracle's frames for the task (what a correct answer looks like)

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {"episode_id": r.episode_id, "task_id": r.task_id, "task_type": r.task_type,
                "template": self.template_key, "lang": self.lang,
                "valid_targets": [list(t) for t in self.valid_targets],
                "selected_frames": list(self.selection.frame_indices) if self.selection else None,
                "selected_targets": list(self.selection.target_ids) if self.selection else None,
                "reference_frames": list(self.reference_frames),
                "hl_success": r.hl_success, "hl_dtg_success": r.hl_dtg_success, "hl_sc_success": r.hl_sc_success,
                "ll_success": r.ll_success, "hl_spl": r.hl_spl, "ll_spl": r.ll_spl,
                "shortest_path_m": round(self.shortest_path_m, 3), "path_length_m": round(self.path_length_m, 3),
                "num_actions": self.num_actions, "stops": self.stops, "error": self.error,
                "notes": list(self.selection.notes) if self.selection else []}

    def line(self) -> str:
        r = self.record
        chosen = "nothing" if self.selection is None else ", ".join(
            f"{t}@{f}" for t, f in zip(self.selection.target_ids, self.selection.frame_indices, strict=True))
        text = (f"{'OK  ' if r.ll_success else 'MISS'} {r.episode_id} {r.task_id} [{r.task_type}] {self.lang!r} -> "
                f"{chosen}; HL {_ok(r.hl_success)} (DTG {_ok(r.hl_dtg_success)}, SC {_ok(r.hl_sc_success)}), "
                f"LL {_ok(r.ll_success)} after {self.num_actions} actions, {self.path_length_m:.1f} m, "
                f"LL-SPL {r.ll_spl:.2f}")
        return text + (f"; error: {self.error}" if self.error else "")

    def subtask_record(self, index: int, scene_id: Optional[str] = None) -> SubtaskRecord:
        """The task as a ``goat-nav bench`` subtask record (the bag's /goat/subtask_result): the low-level
        outcome, a description goal (the instruction). Ended by "stop" when every goal driven to was stopped at
        (or none was: the high level gave no valid answer), "budget" when a goal ran out of actions, "error" when
        the selector could not read the instruction. A failed STOP is classified (``goat_suites.common.failures``) by
        the high level's verdict: ``wrong_instance`` when the chosen frames do not show the goal (nothing was
        driven), ``near_miss`` when they do but the verifier refused a STOP of the drive to them."""
        r = self.record
        if self.error is not None:
            stop_reason = "error"
        elif self.goal_starts and self.stops < len(self.goal_starts):
            stop_reason = "budget"
        else:
            stop_reason = "stop"
        failure = None
        if stop_reason == "stop" and not r.ll_success:
            failure = "near_miss" if r.hl_success else "wrong_instance"
        geodesic = self.shortest_path_m if np.isfinite(self.shortest_path_m) else None
        return SubtaskRecord(episode_id=r.episode_id, index=index, modality=GoalModality.DESCRIPTION,
                             success=r.ll_success, spl=r.ll_spl, path_length_m=self.path_length_m,
                             geodesic_m=geodesic, num_actions=self.num_actions, stop_reason=stop_reason,
                             distance_to_goal_m=None, error=self.error, actions=self.actions, scene_id=scene_id,
                             failure=failure)


def _ok(flag: bool) -> str:
    return "ok" if flag else "no"


# ----------------------------------------------------------------------------------------------- one task


def high_level_outcome(judge: TaskJudge, task: FindingDoryTask, selection: Optional[Selection],
                       log: ExperienceLog) -> Relaxed:
    """Verify the chosen frames: goal k at frame k, or, for unordered goals, in some one-to-one assignment."""
    if selection is None or len(selection.frame_indices) != len(task.subgoals):
        return Relaxed(False, False, False)
    verdicts = [[judge.check_frame(goal, log.frames[f]) for goal in task.subgoals] for f in selection.frame_indices]
    return Relaxed(*(_assigned(task, verdicts, attr) for attr in ("success", "dtg", "sc")))


def _assigned(task: FindingDoryTask, verdicts: Sequence[Sequence[Verdict]], attr: str) -> bool:
    """Whether stop/frame k satisfies goal k (ordered) or the goals can be matched one-to-one (unordered)."""
    n = len(task.subgoals)
    if len(verdicts) != n:
        return False
    orders = permutations(range(n)) if task.revisit == "unordered" else [tuple(range(n))]
    return any(all(getattr(verdicts[k][goal], attr) for k, goal in enumerate(order)) for order in orders)


StepCallback = Callable[[Observation, DiscreteAction], None]  # an action and the observation it was chosen on


@dataclass
class _Drive:
    stops: list[list[Verdict]] = field(default_factory=list)  # per STOP: the verdict for every goal
    path_length_m: float = 0.0
    num_actions: int = 0
    actions: list[DiscreteAction] = field(default_factory=list)
    path_xy_m: list[tuple[float, float]] = field(default_factory=list)  # world: the start, then every step
    goal_starts: list[int] = field(default_factory=list)  # index into path_xy_m where each goal's drive began


def pose_xy(pose: Pose2D) -> tuple[float, float]:
    """A pose's position as a plain tuple (what trajectories store)."""
    return (float(pose.x_m), float(pose.y_m))


def navigate(sim: EmbeddedSim, judge: TaskJudge, navigator: PoseGoalNavigator, task: FindingDoryTask,
             goals: Sequence[Pose2D], max_actions_per_goal: Optional[int], max_actions: Optional[int] = None,
             on_step: Optional[StepCallback] = None) -> _Drive:
    """Drive from the experience start to each goal pose (episode frame) in turn, verifying at every STOP.

    ``max_actions``: for the whole drive (the task's share of the episode budget); ``max_actions_per_goal``: for
    each goal; None: no cap of that kind (one of them is needed)."""
    if max_actions is None and max_actions_per_goal is None:
        raise ConfigError("navigate needs max_actions or max_actions_per_goal (got neither)")
    start = judge.start_world
    obs = sim.reset(start.xy(), start.yaw_rad)
    drive = _Drive(path_xy_m=[pose_xy(start)])
    prev = start.xy()
    for goal in goals:
        navigator.start_goal(goal)
        drive.goal_starts.append(len(drive.path_xy_m) - 1)
        stopped = False
        caps = [c for c in (max_actions_per_goal,
                            None if max_actions is None else max_actions - drive.num_actions) if c is not None]
        for _ in range(max(0, min(caps))):
            action = navigator.act(obs)
            drive.num_actions += 1
            drive.actions.append(action)
            if on_step is not None:
                on_step(obs, action)
            if action is DiscreteAction.STOP:
                stopped = True
                break
            obs = sim.step(action)
            here = sim.base_pose_world.xy()
            drive.path_xy_m.append(pose_xy(sim.base_pose_world))
            drive.path_length_m += float(np.linalg.norm(here - prev))
            prev = here
        if not stopped:
            break  # out of budget: this goal and the ones after it fail
        world = sim.base_pose_world
        drive.stops.append([judge.check(g, world, obs.camera_tilt_rad, obs.segmentation) for g in task.subgoals])
    return drive


def run_task(sim: EmbeddedSim, judge: TaskJudge, navigator: PoseGoalNavigator, experience_map: Optional[OccupancyGrid],
             log: ExperienceLog, task: FindingDoryTask, episode_id: str, config: FindingDoryRunConfig,
             policy: Optional[HighLevelPolicy] = None, on_step: Optional[StepCallback] = None,
             experience_actions: int = 0) -> TaskOutcome:
    """High level, then (after a high-level success) low level, and the FindingDory record of the task.

    ``policy`` has begun the episode (default: the oracle over ``log``). ``log`` is the simulator's log: it
    verifies the chosen frames and gives the oracle's reference frames. A policy that raises a GoatError (no
    answer, a malformed VLM reply, an endpoint that went away) fails the task with that error; the run goes on.
    ``on_step`` sees every low-level action with the observation it was chosen on (the recorder's hook).
    ``experience_actions``: what the experience took of the episode budget."""
    if policy is None:
        policy = OracleSelector()
        policy.begin_episode(EpisodeExperience(video=None, log=log))
    start_xy = judge.start_world.xy()
    shortest_m = judge.shortest_path_m(task, start_xy)
    error = None
    try:
        selection: Optional[Selection] = policy.select(task.lang)
    except GoatError as exc:
        selection, error = None, str(exc)
    hl = high_level_outcome(judge, task, selection, log)
    drive = _Drive()
    if hl.success and selection is not None:
        if experience_map is not None:
            navigator.restore(experience_map)
        else:
            navigator.clear_map()
        goals = [log.frames[f].pose for f in selection.frame_indices]
        drive = navigate(sim, judge, navigator, task, goals, config.max_actions_per_goal,
                         config.task_actions(experience_actions), on_step)
    ll_success = hl.success and _assigned(task, drive.stops, "success")
    hl_goal_m: Optional[float] = None
    if not task.multi_goal:  # FindingDory leaves HL-SPL undefined for multi-goal tasks (-1)
        hl_goal_m = shortest_m if selection is None else _hl_goal_m(judge, task, log, selection, start_xy)
    record = FindingDoryRecord.from_distances(
        episode_id, task.task_id, task.task_type, hl_success=hl.success, hl_dtg_success=hl.dtg,
        hl_sc_success=hl.sc, ll_success=ll_success, shortest_path_m=shortest_m, hl_goal_path_m=hl_goal_m,
        path_length_m=drive.path_length_m)
    return TaskOutcome(record=record, lang=task.lang, template_key=task.template_key,
                       valid_targets=tuple(tuple(sorted(g.valid_ids)) for g in task.subgoals), selection=selection,
                       shortest_path_m=shortest_m, path_length_m=drive.path_length_m, num_actions=drive.num_actions,
                       stops=len(drive.stops), error=error, actions=tuple(drive.actions),
                       path_xy_m=tuple(drive.path_xy_m), goal_starts=tuple(drive.goal_starts),
                       reference_frames=_reference_frames(task, log))


def _hl_goal_m(judge: TaskJudge, task: FindingDoryTask, log: ExperienceLog, selection: Selection,
               start_xy: np.ndarray) -> float:
    """HL-SPL's path: geodesic from the start to the view points of the target the chosen frame satisfied (as
    FindingDory measures it), or to the frame's pose when the frame satisfies none (then HL-SPL is 0 anyway)."""
    frame = log.frames[selection.frame_indices[0]]
    verdict = judge.check_frame(task.subgoals[0], frame)
    if verdict.target_id is not None:
        return judge.distance_m(verdict.target_id, start_xy)
    return judge.geodesic_m(start_xy, judge.world_pose(frame.pose).xy())


def _reference_frames(task: FindingDoryTask, log: ExperienceLog) -> tuple[int, ...]:
    """The oracle's frames for a task (the report shows them beside the chosen ones); none if it has none."""
    try:
        return ExperienceSelector().select(task.lang, log).frame_indices
    except GoatError:
        return ()
