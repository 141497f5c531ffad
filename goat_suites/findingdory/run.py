"""`goat-nav bench --suite findingdory`: FindingDory's memory tasks on procedural homes, end to end.

Per episode (one home): the oracle's experience is collected in the embedded simulator
(``goat_suites.findingdory.generator``). It produces what the robot recorded, the experience video
(``goat_suites.findingdory.experience_video``: RGB-D frames, poses, clock, gripper; the simulator's segmentation only
when the memory uses ground-truth perception), and the simulator's structured log, which is scoring data: it
generates the tasks (one instruction per FindingDory task type), verifies answers and gives the oracle's
reference frames. The low-level navigator watches the experience and maps the home. Per instruction, from the
experience's start pose:

1. high level: the chosen policy (``--selector``, ``goat_suites.findingdory.policy``) names one frame per
   goal: ``memory`` (default) reads a memory built from the video's frames by ``--perception``; ``oracle`` reads
   the log; ``vlm`` asks a video-language model over an OpenAI-compatible endpoint. The verifier teleports to each
   chosen frame's pose and checks the goal there (HL, and the DTG-only and SC-only relaxations). A policy that
   gives no answer (or a malformed one) fails that task with its error; the run goes on;
2. low level, only after a high-level success (FindingDory's order): the
   :class:`~goat_suites.findingdory.pose_nav.PoseGoalNavigator` drives to each chosen pose in turn and STOPs there;
   the verifier checks the goal at every STOP (ordered goals in their order, unordered goals in any).

Scores are FindingDory's HL-SR, LL-SR, HL-SPL, LL-SPL, DTG-SR and SC-SR (``goat_suites.common.suite_metrics``),
overall and per task type. ``--no-memory``: the navigator does not get the map it built while watching the
experience (the high level still reads the experience, which is the task's input). ``--max-actions`` is the
budget per goal (default 500); ``--success-distance-m`` / ``--success-metric`` set the verifier's distance
threshold.

Files: ``--out`` writes the FindingDory results (``goat_suites.findingdory.results``, read back by ``goat-nav
report``; ``meta`` names the high-level policy and the perception), next to them the trajectories file of
``goat-nav bench`` (one entry per task, id ``<episode>/<task>``) and the frames file (thumbnails of the frames
each task chose and of the oracle's); ``--report`` the HTML report; ``--record RUN`` a rosbag2 MCAP bag of the
interaction phase through :class:`goat_ros.record.RunRecorder`: per task its instruction as a description goal,
every observation and action of the low-level drive, and the task's low-level result; ``--experience-bags DIR``
each experience video as its own bag (``goat_suites.findingdory.experience_bag``). Real FindingDory episode files
(``--episodes-file``) need their HSSD scenes in habitat-sim: :func:`check_episodes_file` refuses them, naming the
scene.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import time
from dataclasses import dataclass, field
from itertools import permutations
from pathlib import Path
from typing import Any, Callable, Optional, Protocol, Sequence

import numpy as np

from goat_core.errors import ConfigError, GoatError, SceneGenerationError
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.types import DiscreteAction, GoalModality, Observation, Pose2D
from goat_ros.record import RecordedGoal, RunRecorder, check_bag_path
from goat_suites.common.outputs import episode_progress
from goat_suites.common.parallel import WORKER_LOST, UnitResult, WorkerPool, WorkUnit, parallel_config
from goat_suites.common.results import SubtaskRecord
from goat_suites.common.resume import PlanResults, check_same_run, plan_run
from goat_suites.common.run_args import home_config_from_args
from goat_suites.common.runner import Trajectory
from goat_suites.common.suite_metrics import (
    FindingDoryRecord,
    FindingDoryStats,
    findingdory_by_task_type,
    findingdory_stats,
)
from goat_suites.common.trajectories import (
    TRAJECTORIES_META_KEY,
    stored_trajectories,
    trajectories_path,
    write_trajectories,
)
from goat_suites.findingdory.args import PolicyChoice, build_policy, experience_bag_folder, policy_choice
from goat_suites.findingdory.experience import ExperienceLog
from goat_suites.findingdory.experience_bag import write_experience_bag
from goat_suites.findingdory.experience_video import ExperienceVideo, VideoEncoding
from goat_suites.findingdory.generator import (
    FindingDoryGenConfig,
    JudgeConfig,
    TaskJudge,
    Verdict,
    collect_experience,
    findingdory_sim_config,
    generate_tasks,
)
from goat_suites.findingdory.loader import load_findingdory_dataset
from goat_suites.findingdory.policy import EpisodeExperience, HighLevelPolicy, OracleSelector
from goat_suites.findingdory.pose_nav import PoseGoalNavigator, PoseNavConfig
from goat_suites.findingdory.report import write_findingdory_report
from goat_suites.findingdory.results import (
    FRAMES_META_KEY,
    frames_path,
    read_frames,
    read_results,
    thumbnail_jpeg,
    write_frames,
    write_results,
)
from goat_suites.findingdory.selector import ExperienceSelector, Selection
from goat_suites.findingdory.tasks import TASK_TYPES, FindingDoryTask
from goat_suites.goat.generator import scene_id_for
from sim_bridge.embedded.home import HomeConfig, generate_home
from sim_bridge.embedded.sim import EmbeddedSim


@dataclass(frozen=True)
class FindingDoryRunConfig:
    """How the tasks are run and verified."""

    max_actions_per_goal: int = 500
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    use_experience_map: bool = True  # False: --no-memory, the navigator starts each task without a map

    def __post_init__(self) -> None:
        if self.max_actions_per_goal < 1:
            raise ConfigError(f"max_actions_per_goal must be >= 1, got {self.max_actions_per_goal}")


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


def _xy(pose: Pose2D) -> tuple[float, float]:
    return (float(pose.x_m), float(pose.y_m))


def navigate(sim: EmbeddedSim, judge: TaskJudge, navigator: PoseGoalNavigator, task: FindingDoryTask,
             goals: Sequence[Pose2D], max_actions_per_goal: int, on_step: Optional[StepCallback] = None) -> _Drive:
    """Drive from the experience start to each goal pose (episode frame) in turn, verifying at every STOP."""
    start = judge.start_world
    obs = sim.reset(start.xy(), start.yaw_rad)
    drive = _Drive(path_xy_m=[_xy(start)])
    prev = start.xy()
    for goal in goals:
        navigator.start_goal(goal)
        drive.goal_starts.append(len(drive.path_xy_m) - 1)
        stopped = False
        for _ in range(max_actions_per_goal):
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
            drive.path_xy_m.append(_xy(sim.base_pose_world))
            drive.path_length_m += float(np.linalg.norm(here - prev))
            prev = here
        if not stopped:
            break  # out of budget: this goal and the ones after it fail
        world = sim.base_pose_world
        drive.stops.append([judge.check(g, world, obs.camera_tilt_rad, obs.segmentation) for g in task.subgoals])
    return drive


def run_task(sim: EmbeddedSim, judge: TaskJudge, navigator: PoseGoalNavigator, experience_map: Optional[OccupancyGrid],
             log: ExperienceLog, task: FindingDoryTask, episode_id: str, config: FindingDoryRunConfig,
             policy: Optional[HighLevelPolicy] = None, on_step: Optional[StepCallback] = None) -> TaskOutcome:
    """High level, then (after a high-level success) low level, and the FindingDory record of the task.

    ``policy`` has begun the episode (default: the oracle over ``log``). ``log`` is the simulator's log: it
    verifies the chosen frames and gives the oracle's reference frames. A policy that raises a GoatError (no
    answer, a malformed VLM reply, an endpoint that went away) fails the task with that error; the run goes on.
    ``on_step`` sees every low-level action with the observation it was chosen on (the recorder's hook)."""
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
        drive = navigate(sim, judge, navigator, task, goals, config.max_actions_per_goal, on_step)
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


# ----------------------------------------------------------------------------------------------- one episode


@dataclass
class EpisodeRun:
    """What one episode produced: per task its outcome and its trajectory (id ``<episode>/<task>``)."""

    scene_id: str  # the home's scene id (goat_suites.goat.generator.scene_id_for)
    outcomes: list[TaskOutcome] = field(default_factory=list)
    trajectories: list[Trajectory] = field(default_factory=list)
    thumbnails: dict[int, str] = field(default_factory=dict)  # frame -> base64 JPEG, of the frames chosen or
    # referred to by a task (the report's frame strips)
    video_bytes: int = 0  # encoded size of the experience video


def recorded_goal(task: FindingDoryTask, episode_id: str, index: int, config: FindingDoryRunConfig) -> RecordedGoal:
    """A task as /goat/goal carries it: the instruction as a description goal; target_id lists each goal's valid
    targets ("|" between alternatives, ";" between goals); the budget is the per-goal one times the goals."""
    targets = ";".join("|".join(sorted(goal.valid_ids)) for goal in task.subgoals)
    return RecordedGoal(episode_id=episode_id, subtask_index=index, modality=GoalModality.DESCRIPTION,
                        text=task.lang, target_id=targets,
                        max_actions=config.max_actions_per_goal * len(task.subgoals))


def task_trajectory(sim: EmbeddedSim, judge: TaskJudge, task: FindingDoryTask, outcome: TaskOutcome,
                    scene_id: str) -> Trajectory:
    """The report's picture of one task: the drive (or the start alone), one start and the targets per goal."""
    path = list(outcome.path_xy_m) or [_xy(judge.start_world)]
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


def run_episode(home_seed: int, episode_id: str, config: FindingDoryRunConfig = FindingDoryRunConfig(),
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
                recorder.on_goal(recorded_goal(task, episode_id, index, config))
            outcome = run_task(sim, judge, navigator, experience_map, experience.log, task, episode_id, config,
                               policy, on_step=recorder.on_step if recorder is not None else None)
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


# ----------------------------------------------------------------------------------------------- table, files


def format_table(records: Sequence[FindingDoryRecord]) -> str:
    """FindingDory's metric table (percent): overall, then one row per task type in FindingDory's order."""
    columns = ("HL-SR", "LL-SR", "HL-SPL", "LL-SPL", "DTG-SR", "SC-SR")
    lines = [f"{'':<24}" + "".join(f"{c:>8}" for c in columns) + f"{'n':>6}"]

    def row(name: str, s: FindingDoryStats) -> str:
        values = (s.hl_sr, s.ll_sr, s.hl_spl, s.ll_spl, s.dtg_sr, s.sc_sr)
        cells = "".join(f"{'-':>8}" if v is None else f"{100.0 * v:>8.1f}" for v in values)
        return f"{name:<24}{cells}{s.count:>6d}"

    lines.append(row("overall", findingdory_stats(records)))
    by_type = findingdory_by_task_type(records)
    lines += [row(t, by_type[t]) for t in TASK_TYPES if t in by_type]
    lines += [row(t, s) for t, s in by_type.items() if t not in TASK_TYPES]
    return "\n".join(lines)


class _Task(Protocol):
    """A task as the results file holds it: a TaskOutcome, or a StoredTask read back from a file."""

    @property
    def record(self) -> FindingDoryRecord: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class StoredTask:
    """A task of a results file (``--resume`` keeps it as it was written)."""

    record: FindingDoryRecord
    data: dict[str, Any]  # TaskOutcome.to_json() as written

    def to_json(self) -> dict[str, Any]:
        return self.data


def _run_config(args: argparse.Namespace) -> FindingDoryRunConfig:
    judge: dict[str, Any] = {}
    if args.success_distance_m is not None:
        judge["success_distance_m"] = args.success_distance_m
    if args.success_metric is not None:
        judge["success_metric"] = args.success_metric
    overrides: dict[str, Any] = {"judge": JudgeConfig(**judge), "use_experience_map": not args.no_memory}
    if args.max_actions is not None:
        overrides["max_actions_per_goal"] = args.max_actions
    return FindingDoryRunConfig(**overrides)


def check_episodes_file(path: Path) -> None:
    """Refuse a FindingDory ``episodes.json.gz`` with the reason: its episodes need their scenes.

    A real file is read first (a broken or foreign file is named as such, EpisodeFormatError); a readable one
    is refused with a ConfigError that names its scene(s). FindingDory's experience is collected by an oracle
    in the episode's scene (HSSD, loaded in habitat-sim with the OVMM objects), and both the high level (the
    selector reads the frames of that experience) and the low level need it; the file alone holds the
    instructions and candidate goals, not the experience, so not even a high-level-only score can be computed
    from it here. The embedded simulator has procedural homes only, and this project's Habitat backend
    (sim_bridge.habitat) does not run FindingDory's experience collection.
    """
    dataset = load_findingdory_dataset(path)
    scenes = list(dict.fromkeys(e.scene_id for e in dataset.episodes))
    if not scenes:
        raise ConfigError(f"{path}: the FindingDory episode file holds no episodes")
    first = dataset.episodes[0]
    more = f" (and {len(scenes) - 1} other scene(s))" if len(scenes) > 1 else ""
    raise ConfigError(
        f"{path}: FindingDory episode {first.episode_id} is set in scene {first.scene_id!r}{more}; replaying it "
        "needs that scene in habitat-sim (with FindingDory's experience collected there) or a run on the robot, "
        "and neither the embedded simulator (procedural homes only) nor this project's Habitat backend runs "
        "FindingDory episodes yet. Run the procedural suite instead: drop --episodes-file")


def _check_args(args: argparse.Namespace) -> None:
    if args.episodes_file is not None:
        check_episodes_file(args.episodes_file)
    if getattr(args, "record", None) is not None:
        check_bag_path(args.record)  # a bad --record path fails before any episode runs


def _print_run_line(tasks: Sequence[_Task], episodes: int, meta: dict[str, Any], config: FindingDoryRunConfig,
                    elapsed_s: float) -> None:
    errors = sum(1 for t in tasks if t.to_json().get("error"))
    high = meta["high_level"]
    print(f"{episodes} episodes, {len(tasks)} tasks in {elapsed_s:.0f} s "
          f"(high level: {high['selector']}, perception: {meta['perception']}; success distance: objects "
          f"{config.judge.success_distance_m:g} m, receptacles {config.judge.receptacle_distance_m:g} m, "
          f"{config.judge.success_metric})"
          + (f"; {errors} tasks without a high-level answer (see each task's error)" if errors else ""))


# ----------------------------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class EpisodeOutput:
    """What a worker sends back for one episode: its tasks, their trajectories and the thumbnails of the frames
    they name, or why the home had none."""

    outcomes: tuple[TaskOutcome, ...]
    trajectories: tuple[Trajectory, ...]
    skipped: Optional[str] = None  # SceneGenerationError of a home that gave no tasks
    thumbnails: dict[int, str] = field(default_factory=dict)  # EpisodeRun.thumbnails


@dataclass(frozen=True)
class FindingDoryWorkers:
    """The picklable recipe of a FindingDory worker (``goat_suites.common.parallel``): each episode builds its own home;
    each worker builds the high-level policy of ``choice`` once (models loaded, a VLM endpoint checked)."""

    config: FindingDoryRunConfig
    home_config: HomeConfig
    gen_config: FindingDoryGenConfig
    choice: PolicyChoice = PolicyChoice()
    verbose: bool = False

    def __call__(self) -> FindingDoryWorker:
        return FindingDoryWorker(self)


class FindingDoryWorker:
    def __init__(self, spec: FindingDoryWorkers) -> None:
        self.spec = spec
        self.policy = build_policy(spec.choice)
        self.video = spec.choice.video_encoding()

    def run_unit(self, unit: WorkUnit, recorder: Optional[RunRecorder], emit: Callable[[str], None]) -> EpisodeOutput:
        home_seed, episode_id = unit.payload
        s = self.spec
        try:
            episode = run_episode(home_seed, episode_id, s.config, s.home_config, s.gen_config, TASK_TYPES, recorder,
                                  self.policy, self.video, experience_bag_folder(s.choice, episode_id))
        except SceneGenerationError as exc:
            emit(f"episode {episode_id} (home {home_seed}) skipped: {exc}")
            return EpisodeOutput((), (), skipped=str(exc))
        if s.verbose:
            for outcome in episode.outcomes:
                emit(outcome.line())
        return EpisodeOutput(tuple(episode.outcomes), tuple(episode.trajectories), thumbnails=episode.thumbnails)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class _Finished:
    tasks: tuple[_Task, ...]
    trajectories: tuple[Trajectory, ...]
    skipped: Optional[dict[str, Any]]  # meta["skipped_episodes"] entry: no tasks in this home, or its worker lost
    thumbnails: dict[int, str]  # frame -> base64 JPEG (the frames file)


class FindingDoryRun(PlanResults[_Finished]):
    """The driver side of a FindingDory run (``goat_suites.common.parallel.ResultSink``): episodes in plan order, and
    after
    each one the trajectories file, the frames file, then the results file (which names the other two)."""

    def __init__(self, out: Optional[Path], meta: dict[str, Any]) -> None:
        super().__init__(meta)
        self.out = out
        self.planned_episodes = 0  # episodes of the whole plan (run_suite sets it): ``complete`` in the meta
        self.traj_path = trajectories_path(out) if out is not None else None
        self.frames_path = frames_path(out) if out is not None else None
        if self.traj_path is not None and self.frames_path is not None:
            meta[TRAJECTORIES_META_KEY], meta[FRAMES_META_KEY] = self.traj_path.name, self.frames_path.name

    def add(self, result: UnitResult) -> None:
        home_seed, episode_id = result.unit.payload
        output: EpisodeOutput = result.payload if result.error is None else EpisodeOutput((), (), result.error)
        skipped = None if output.skipped is None else {"episode_id": episode_id, "home_seed": home_seed,
                                                       "error": output.skipped}
        self.done[result.unit.index] = _Finished(output.outcomes, output.trajectories, skipped, output.thumbnails)
        self.write()

    @property
    def tasks(self) -> list[_Task]:
        return [t for f in self.finished() for t in f.tasks]

    @property
    def trajectories(self) -> list[Trajectory]:
        return [t for f in self.finished() for t in f.trajectories]

    @property
    def skipped(self) -> list[dict[str, Any]]:
        return [f.skipped for f in self.finished() if f.skipped is not None]

    @property
    def thumbnails(self) -> dict[str, dict[int, str]]:
        """Episode id -> frame -> thumbnail, of the episodes that have tasks."""
        return {f.tasks[0].record.episode_id: f.thumbnails for f in self.finished() if f.tasks}

    def postfix(self) -> dict[str, str]:
        records = [t.record for t in self.tasks]
        if not records:
            return {}
        stats = findingdory_stats(records)
        return {"HL": f"{stats.hl_sr:.2f}", "LL": f"{stats.ll_sr:.2f}"}

    def write(self) -> None:
        self.meta["skipped_episodes"] = self.skipped
        self.meta.update(episode_progress(self.planned_episodes, len(self.done)))
        if self.out is None or self.traj_path is None or self.frames_path is None:
            return
        self.stamp_elapsed()
        write_trajectories(self.traj_path, self.trajectories)  # first: the results never name a missing file
        write_frames(self.frames_path, self.thumbnails)
        tasks = self.tasks
        write_results(self.out, [t.record for t in tasks], [t.to_json() for t in tasks], self.meta)

    def load(self, units: Sequence[WorkUnit]) -> set[str]:
        """``--resume``: the finished episodes of ``--out`` (same plan and settings, else ConfigError); an episode
        whose worker was lost runs again."""
        assert self.out is not None
        stored = read_results(self.out)
        check_same_run(self.out, stored.meta, [u.key for u in units], self.meta)
        self.resumed(stored.meta)
        tasks: dict[str, list[_Task]] = {}
        for record, data in zip(stored.records, stored.tasks, strict=True):
            tasks.setdefault(record.episode_id, []).append(StoredTask(record, dict(data)))
        skipped = {str(s.get("episode_id")): s for s in stored.meta.get("skipped_episodes") or []
                   if not str(s.get("error", "")).startswith(WORKER_LOST)}
        trajectories: dict[str, list[Trajectory]] = {}
        for t in stored_trajectories(self.out, stored.meta):
            trajectories.setdefault(t.episode_id.rsplit("/", 1)[0], []).append(t)
        thumbnails = _stored_frames(self.out, stored.meta)
        for unit in units:
            _, episode_id = unit.payload
            if episode_id in tasks or episode_id in skipped:
                self.done[unit.index] = _Finished(tuple(tasks.get(episode_id, ())),
                                                  tuple(trajectories.get(episode_id, ())), skipped.get(episode_id),
                                                  thumbnails.get(episode_id, {}))
        return {units[i].key for i in self.done}


def _stored_frames(out: Path, meta: dict[str, Any]) -> dict[str, dict[int, str]]:
    """The thumbnails of a results file's frames file (none if it names none or it is missing: the report then
    shows those episodes without frames)."""
    name = meta.get(FRAMES_META_KEY)
    path = out.parent / name if isinstance(name, str) else None
    return read_frames(path) if path is not None and path.exists() else {}


def episode_units(seed: int, num_episodes: int) -> list[WorkUnit]:
    """The plan: episode ``<seed>-<k>`` in the home of the k-th draw of ``seed`` (the same homes as a serial run)."""
    rng = np.random.default_rng(seed)
    units = []
    for k in range(num_episodes):
        home_seed, episode_id = int(rng.integers(0, 2**31 - 1)), f"{seed}-{k}"
        units.append(WorkUnit(k, episode_id, (home_seed, episode_id)))
    return units


def run_suite(args: argparse.Namespace) -> int:
    started = time.monotonic()
    _check_args(args)
    config = _run_config(args)  # settings first: a bad one fails before any episode runs
    parallel = parallel_config(args)
    choice = policy_choice(args)
    # Built here once to describe it and to fail before any episode (a missing model folder, an unreachable VLM
    # endpoint); the workers build their own from the same choice.
    policy = build_policy(choice)
    home_config = home_config_from_args(args)
    gen_config = FindingDoryGenConfig()
    video = choice.video_encoding()
    meta: dict[str, Any] = {"suite": "findingdory", "source": f"procedural seed={args.seed}", "seed": args.seed,
                            "run_config": dataclasses.asdict(config), "gen_config": dataclasses.asdict(gen_config),
                            "num_rooms": home_config.num_rooms, "perception": choice.perception_name,
                            "high_level": policy.describe(), "video": dataclasses.asdict(video),
                            "low_level": "pose-goal navigator (occupancy + FMM)", "skipped_episodes": []}
    # The bag's run info is the meta as prepared: the same run gives the same bag whatever --out is.
    recorder = RunRecorder(args.record, run_info=meta) if getattr(args, "record", None) is not None else None
    run = FindingDoryRun(args.out, meta)
    units = episode_units(args.seed, args.episodes)
    run.planned_episodes = len(units)
    todo = plan_run(args, units, meta, run.load)
    workers = FindingDoryWorkers(config, home_config, gen_config, choice, args.verbose)
    bag = recorder if recorder is not None else contextlib.nullcontext()
    with WorkerPool(parallel, workers, max_units=len(todo)) as pool, bag:
        pool.run(todo, run, recorder=recorder, total=len(units), quiet=args.quiet)
    tasks = run.tasks
    if not tasks:
        raise SceneGenerationError(f"no FindingDory task could be generated in {args.episodes} episodes")
    print(format_table([t.record for t in tasks]))
    _print_run_line(tasks, args.episodes - len(run.skipped), meta, config, time.monotonic() - started)
    if args.out is not None:
        print(f"results: {args.out}")
    if recorder is not None:
        print(f"recording: {recorder.folder} (rosbag2: metadata.yaml + {recorder.mcap_path.name})")
    if choice.experience_bags is not None:
        print(f"experience bags: {choice.experience_bags}/<episode id>/")
    if args.report is not None:
        write_findingdory_report(Path(args.report), [t.record for t in tasks], [t.to_json() for t in tasks], meta,
                                 run.trajectories, run.thumbnails)
        print(f"report: {args.report}")
    return 0


__all__ = ["EpisodeRun", "FindingDoryRun", "FindingDoryRunConfig", "FindingDoryWorkers", "StoredTask", "TaskOutcome",
           "check_episodes_file", "episode_units", "format_table", "high_level_outcome", "navigate", "recorded_goal",
           "run_episode", "run_suite", "run_task", "task_trajectory"]
