"""`goat-nav bench --suite findingdory`: FindingDory's memory tasks on procedural homes, end to end.

Per episode (one home): the oracle's experience is collected in the embedded simulator and logged
(``sim_bridge.embedded.findingdory_gen``), while the low-level navigator watches it and maps the home; one
instruction per FindingDory task type is generated from it. Per instruction, from the experience's start pose:

1. high level: :class:`~goat_core.bench.findingdory_selector.ExperienceSelector` reads the log and names one frame
   per goal; the verifier teleports to each chosen frame's pose and checks the goal there (HL, and the DTG-only
   and SC-only relaxations);
2. low level, only after a high-level success (FindingDory's order): the
   :class:`~goat_core.control.pose_nav.PoseGoalNavigator` drives to each chosen pose in turn and STOPs there;
   the verifier checks the goal at every STOP (ordered goals in their order, unordered goals in any).

Scores are FindingDory's HL-SR, LL-SR, HL-SPL, LL-SPL, DTG-SR and SC-SR (``goat_core.bench.suite_metrics``),
overall and per task type. ``--no-memory``: the navigator does not get the map it built while watching the
experience (the selector still reads the log, which is the task's input). ``--max-actions`` is the budget per
goal (default 500); ``--success-distance-m`` / ``--success-metric`` set the verifier's distance threshold.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from dataclasses import dataclass, field
from itertools import permutations
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from tqdm import tqdm

from goat_core.bench.experience import ExperienceLog
from goat_core.bench.findingdory_selector import ExperienceSelector, Selection
from goat_core.bench.findingdory_tasks import TASK_TYPES, FindingDoryTask
from goat_core.bench.results import atomic_write_bytes
from goat_core.bench.suite_metrics import (
    FindingDoryRecord,
    FindingDoryStats,
    findingdory_by_task_type,
    findingdory_stats,
)
from goat_core.control.pose_nav import PoseGoalNavigator, PoseNavConfig
from goat_core.errors import ConfigError, GoatError, SceneGenerationError
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.types import DiscreteAction, Pose2D
from sim_bridge.embedded.findingdory_gen import (
    FindingDoryGenConfig,
    JudgeConfig,
    TaskJudge,
    Verdict,
    collect_experience,
    findingdory_sim_config,
    generate_tasks,
)
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
    selection: Optional[Selection]
    shortest_path_m: float
    path_length_m: float
    num_actions: int
    stops: int
    error: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {"episode_id": r.episode_id, "task_id": r.task_id, "task_type": r.task_type,
                "template": self.template_key, "lang": self.lang,
                "valid_targets": [list(t) for t in self.valid_targets],
                "selected_frames": list(self.selection.frame_indices) if self.selection else None,
                "selected_targets": list(self.selection.target_ids) if self.selection else None,
                "hl_success": r.hl_success, "hl_dtg_success": r.hl_dtg_success, "hl_sc_success": r.hl_sc_success,
                "ll_success": r.ll_success, "hl_spl": r.hl_spl, "ll_spl": r.ll_spl,
                "shortest_path_m": round(self.shortest_path_m, 3), "path_length_m": round(self.path_length_m, 3),
                "num_actions": self.num_actions, "stops": self.stops, "error": self.error}

    def line(self) -> str:
        r = self.record
        chosen = "nothing" if self.selection is None else ", ".join(
            f"{t}@{f}" for t, f in zip(self.selection.target_ids, self.selection.frame_indices, strict=True))
        text = (f"{'OK  ' if r.ll_success else 'MISS'} {r.episode_id} {r.task_id} [{r.task_type}] {self.lang!r} -> "
                f"{chosen}; HL {_ok(r.hl_success)} (DTG {_ok(r.hl_dtg_success)}, SC {_ok(r.hl_sc_success)}), "
                f"LL {_ok(r.ll_success)} after {self.num_actions} actions, {self.path_length_m:.1f} m, "
                f"LL-SPL {r.ll_spl:.2f}")
        return text + (f"; error: {self.error}" if self.error else "")


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


@dataclass
class _Drive:
    stops: list[list[Verdict]] = field(default_factory=list)  # per STOP: the verdict for every goal
    path_length_m: float = 0.0
    num_actions: int = 0


def navigate(sim: EmbeddedSim, judge: TaskJudge, navigator: PoseGoalNavigator, task: FindingDoryTask,
             goals: Sequence[Pose2D], max_actions_per_goal: int) -> _Drive:
    """Drive from the experience start to each goal pose (episode frame) in turn, verifying at every STOP."""
    start = judge.start_world
    obs = sim.reset(start.xy(), start.yaw_rad)
    drive = _Drive()
    prev = start.xy()
    for goal in goals:
        navigator.start_goal(goal)
        stopped = False
        for _ in range(max_actions_per_goal):
            action = navigator.act(obs)
            drive.num_actions += 1
            if action is DiscreteAction.STOP:
                stopped = True
                break
            obs = sim.step(action)
            here = sim.base_pose_world.xy()
            drive.path_length_m += float(np.linalg.norm(here - prev))
            prev = here
        if not stopped:
            break  # out of budget: this goal and the ones after it fail
        world = sim.base_pose_world
        drive.stops.append([judge.check(g, world, obs.camera_tilt_rad, obs.segmentation) for g in task.subgoals])
    return drive


def run_task(sim: EmbeddedSim, judge: TaskJudge, navigator: PoseGoalNavigator, experience_map: Optional[OccupancyGrid],
             log: ExperienceLog, task: FindingDoryTask, episode_id: str, config: FindingDoryRunConfig,
             selector: Optional[ExperienceSelector] = None) -> TaskOutcome:
    """High level, then (after a high-level success) low level, and the FindingDory record of the task."""
    selector = selector or ExperienceSelector()
    start_xy = judge.start_world.xy()
    shortest_m = judge.shortest_path_m(task, start_xy)
    error = None
    try:
        selection: Optional[Selection] = selector.select(task.lang, log)
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
        drive = navigate(sim, judge, navigator, task, goals, config.max_actions_per_goal)
    ll_success = hl.success and _assigned(task, drive.stops, "success")
    hl_goal_m: Optional[float] = None
    if not task.multi_goal:  # FindingDory leaves HL-SPL undefined for multi-goal tasks
        hl_goal_m = shortest_m if selection is None else judge.geodesic_m(
            start_xy, judge.world_pose(log.frames[selection.frame_indices[0]].pose).xy())
    record = FindingDoryRecord.from_distances(
        episode_id, task.task_id, task.task_type, hl_success=hl.success, hl_dtg_success=hl.dtg,
        hl_sc_success=hl.sc, ll_success=ll_success, shortest_path_m=shortest_m, hl_goal_path_m=hl_goal_m,
        path_length_m=drive.path_length_m)
    return TaskOutcome(record=record, lang=task.lang, template_key=task.template_key,
                       valid_targets=tuple(tuple(sorted(g.valid_ids)) for g in task.subgoals), selection=selection,
                       shortest_path_m=shortest_m, path_length_m=drive.path_length_m, num_actions=drive.num_actions,
                       stops=len(drive.stops), error=error)


# ----------------------------------------------------------------------------------------------- one episode


def run_episode(home_seed: int, episode_id: str, config: FindingDoryRunConfig = FindingDoryRunConfig(),
                home_config: HomeConfig = HomeConfig(), gen_config: Optional[FindingDoryGenConfig] = None,
                task_types: Sequence[str] = TASK_TYPES) -> list[TaskOutcome]:
    """Experience, instructions and every task of one home (the experience's random draws from ``home_seed``)."""
    gen_config = gen_config or FindingDoryGenConfig()
    rng = np.random.default_rng(home_seed)
    with EmbeddedSim(generate_home(home_seed, home_config), findingdory_sim_config()) as sim:
        navigator = PoseGoalNavigator(PoseNavConfig(actions=sim.config.action_sizes,
                                                    camera_tilt_rad=gen_config.camera_tilt_rad))
        experience = collect_experience(sim, rng, gen_config, on_frame=navigator.observe)
        experience_map = navigator.snapshot() if config.use_experience_map else None
        judge = TaskJudge(sim, experience.start_world, config.judge)
        tasks = generate_tasks(sim, experience, judge, rng, gen_config, task_types)
        selector = ExperienceSelector()
        return [run_task(sim, judge, navigator, experience_map, experience.log, task, episode_id, config, selector)
                for task in tasks]


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


def write_results(path: Path, outcomes: Sequence[TaskOutcome], meta: dict[str, Any]) -> None:
    records = [o.record for o in outcomes]
    summary: dict[str, Any] = {"num_tasks": len(records)}
    if records:
        summary["overall"] = findingdory_stats(records).to_json()
        summary["by_task_type"] = {k: v.to_json() for k, v in findingdory_by_task_type(records).items()}
    body = {"suite": "findingdory", "summary": summary, "tasks": [o.to_json() for o in outcomes], "meta": meta}
    atomic_write_bytes(path, (json.dumps(body, indent=1, allow_nan=False) + "\n").encode("utf-8"))


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


def _check_args(args: argparse.Namespace) -> None:
    if args.episodes_file is not None:
        raise ConfigError("--suite findingdory runs procedural episodes only; real FindingDory episode files "
                          f"({args.episodes_file}) need HSSD scenes in habitat-sim")
    if getattr(args, "record", None) is not None:
        raise ConfigError("--record is not supported by --suite findingdory")


def run_suite(args: argparse.Namespace) -> int:
    started = time.monotonic()
    _check_args(args)
    config = _run_config(args)  # settings first: a bad one fails before any episode runs
    home_config = HomeConfig() if args.num_rooms is None else HomeConfig(num_rooms=args.num_rooms)
    gen_config = FindingDoryGenConfig()
    meta: dict[str, Any] = {"suite": "findingdory", "source": f"procedural seed={args.seed}", "seed": args.seed,
                            "run_config": dataclasses.asdict(config), "gen_config": dataclasses.asdict(gen_config),
                            "num_rooms": home_config.num_rooms, "perception": "ground_truth",
                            "high_level": "rule-based selector over the experience log",
                            "low_level": "pose-goal navigator (occupancy + FMM)", "skipped_episodes": []}
    rng = np.random.default_rng(args.seed)
    outcomes: list[TaskOutcome] = []
    bar = tqdm(range(args.episodes), desc="episodes", unit="ep", disable=args.quiet, file=sys.stderr)
    for k in bar:
        home_seed = int(rng.integers(0, 2**31 - 1))
        episode_id = f"{args.seed}-{k}"
        try:
            episode = run_episode(home_seed, episode_id, config, home_config, gen_config, TASK_TYPES)
        except SceneGenerationError as exc:
            tqdm.write(f"episode {episode_id} (home {home_seed}) skipped: {exc}", file=sys.stderr)
            meta["skipped_episodes"].append({"episode_id": episode_id, "home_seed": home_seed, "error": str(exc)})
            continue
        outcomes.extend(episode)
        if args.verbose:
            for outcome in episode:
                tqdm.write(outcome.line(), file=sys.stderr)
        if outcomes:
            stats = findingdory_stats([o.record for o in outcomes])
            bar.set_postfix(HL=f"{stats.hl_sr:.2f}", LL=f"{stats.ll_sr:.2f}")
        if args.out is not None:
            meta["elapsed_s"] = round(time.monotonic() - started, 1)
            write_results(args.out, outcomes, meta)
    bar.close()
    if not outcomes:
        raise SceneGenerationError(f"no FindingDory task could be generated in {args.episodes} episodes")
    print(format_table([o.record for o in outcomes]))
    elapsed = time.monotonic() - started
    print(f"{args.episodes - len(meta['skipped_episodes'])} episodes, {len(outcomes)} tasks in {elapsed:.0f} s "
          f"(success distance {config.judge.success_distance_m:g} m, {config.judge.success_metric})")
    if args.out is not None:
        print(f"results: {args.out}")
    if args.report is not None:
        print("--report: the HTML report covers GOAT runs only; the FindingDory table is above", file=sys.stderr)
    return 0


__all__ = ["FindingDoryRunConfig", "TaskOutcome", "format_table", "high_level_outcome", "navigate", "run_episode",
           "run_suite", "run_task"]
