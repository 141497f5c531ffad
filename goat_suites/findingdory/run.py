"""`goat-nav bench --suite findingdory`: FindingDory's memory tasks on procedural homes, end to end.

This module runs the suite (settings, workers, files, table); one episode is
``goat_suites.findingdory.episode``, one task ``goat_suites.findingdory.task``.

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
experience (the high level still reads the experience, which is the task's input). The run follows
FindingDory's protocol (``goat_suites.findingdory.protocol``): 5000 actions per episode, the experience's included,
2.0 m for objects and 0.1 m for receptacles, FindingDory's camera, no sliding; ``--max-actions`` (a budget per
goal, and no episode budget unless ``--max-episode-actions``), ``--success-distance-m`` (objects) and
``--success-metric`` make it ``custom (...)``, as the table's ``protocol:`` line and the results' meta say.

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
from pathlib import Path
from typing import Any, Callable, Optional, Protocol, Sequence

import numpy as np

from goat_core.errors import ConfigError, SceneGenerationError
from goat_ros.record import RunRecorder, check_bag_path
from goat_suites.common.outputs import episode_progress
from goat_suites.common.parallel import WORKER_LOST, UnitResult, WorkerPool, WorkUnit, parallel_config
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
from goat_suites.findingdory.episode import EpisodeRun, recorded_goal, run_episode, task_trajectory
from goat_suites.findingdory.generator import FindingDoryGenConfig, JudgeConfig, findingdory_sim_config
from goat_suites.findingdory.loader import load_findingdory_dataset
from goat_suites.findingdory.protocol import findingdory_protocol_meta
from goat_suites.findingdory.report import write_findingdory_report
from goat_suites.findingdory.results import (
    FRAMES_META_KEY,
    frames_path,
    read_frames,
    read_results,
    write_frames,
    write_results,
)
from goat_suites.findingdory.task import (
    FindingDoryRunConfig,
    Relaxed,
    TaskOutcome,
    high_level_outcome,
    navigate,
    run_task,
)
from goat_suites.findingdory.tasks import TASK_TYPES
from sim_bridge.embedded.home import HomeConfig

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
    if args.max_actions is not None:  # a cap per goal, and no episode budget unless --max-episode-actions says
        overrides.update(max_actions_per_goal=args.max_actions, max_actions_per_episode=None)
    if getattr(args, "max_episode_actions", None) is not None:
        overrides["max_actions_per_episode"] = args.max_episode_actions
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
    if getattr(args, "embodiment", "official") != "official":
        raise ConfigError(f"--embodiment {args.embodiment}: the FindingDory suite runs FindingDory's own embodiment "
                          "(its camera, 10 degree turns, no sliding); drop --embodiment")


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
                            "low_level": "pose-goal navigator (occupancy + FMM)", "skipped_episodes": [],
                            **findingdory_protocol_meta(config, findingdory_sim_config())}
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
    print(f"protocol: {meta['protocol']}")
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


__all__ = ["EpisodeRun", "FindingDoryRun", "FindingDoryRunConfig", "FindingDoryWorkers", "Relaxed", "StoredTask",
           "TaskOutcome", "check_episodes_file", "episode_units", "format_table", "high_level_outcome", "navigate",
           "recorded_goal", "run_episode", "run_suite", "run_task", "task_trajectory"]
