"""`goat-nav bench` and `goat-nav generate`: procedural episodes, the in-process run, metrics, files."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import math
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from tqdm import tqdm

from goat_core.agent import AgentConfig
from goat_core.bench.episodes import GoatDataset, GoatEpisode, goals_for_task, load_goat_dataset, save_goat_dataset
from goat_core.bench.langmap import EXTRA_LEVELS
from goat_core.bench.results import SubtaskRecord, Summary, summarise, write_results_json
from goat_core.errors import GoatError
from goat_core.mapping.keyframes import KeyframeConfig
from goat_core.matching.cow import CowConfig
from goat_core.matching.matcher import MatcherConfig
from goat_core.matching.selection import StackConfig
from goat_core.perception.factory import PerceptionConfig
from goat_core.perception.model_folder import check_model_folder
from goat_core.types import DiscreteAction, Goal, GoalModality, Observation
from goat_nav.record import RecordedGoal, RunRecorder, check_bag_path
from goat_nav.report import TRAJECTORIES_META_KEY, trajectories_path, write_html_report, write_trajectories
from goat_nav.runner import EpisodeRunner, RunConfig, SubtaskTrace, Trajectory
from sim_bridge.embedded.episodes import EpisodeGenConfig, generate_dataset, task_goal_text
from sim_bridge.embedded.home import HomeConfig
from sim_bridge.embedded.sim import SimConfig


def home_config_from_args(args: argparse.Namespace) -> HomeConfig:
    """The home settings of the --num-rooms, --homes and --furniture-libraries flags."""
    fields: dict[str, Any] = {"furniture": getattr(args, "homes", "furnished")}
    if getattr(args, "num_rooms", None) is not None:
        fields["num_rooms"] = args.num_rooms
    if getattr(args, "furniture_libraries", None):
        fields["furniture_libraries"] = tuple(n.strip() for n in args.furniture_libraries.split(",") if n.strip())
    return HomeConfig(**fields)


def _generate(args: argparse.Namespace, quiet: bool) -> GoatDataset:
    bar = tqdm(total=args.episodes, desc="generating episodes", unit="ep", disable=quiet, file=sys.stderr)
    def advance(_episode: object) -> None:
        bar.update(1)

    dataset = generate_dataset(args.episodes, args.seed, home_config_from_args(args), EpisodeGenConfig(),
                               on_episode=advance)
    bar.close()
    return dataset


def run_generate(args: argparse.Namespace) -> int:
    dataset = _generate(args, quiet=False)
    save_goat_dataset(dataset, args.out)
    n_tasks = sum(len(e.tasks) for e in dataset.episodes)
    print(f"wrote {len(dataset.episodes)} episodes ({n_tasks} subtasks) to {args.out}")
    return 0


def run_config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run settings of the ``goat-nav bench`` flags (shared by every suite)."""
    overrides: dict[str, Any] = {"use_memory": not args.no_memory,
                                 "goal_image_noise": bool(getattr(args, "image_noise", False)),
                                 "goal_paraphrase": bool(getattr(args, "paraphrase", False)),
                                 "image_goal_category": not getattr(args, "image_without_category", False)}
    if args.max_actions is not None:
        overrides["max_actions_per_subtask"] = args.max_actions
    if args.success_distance_m is not None:
        overrides["success_distance_m"] = args.success_distance_m
    if args.success_metric is not None:
        overrides["success_metric"] = args.success_metric
    return RunConfig(**overrides)


def format_summary(summary: Summary) -> str:
    """The metric table printed at the end of a run."""
    rows = [("overall", summary.success_rate, summary.spl, summary.num_subtasks)]
    rows += [(f"modality {m}", g.success_rate, g.spl, g.count) for m, g in sorted(summary.by_modality.items())]
    rows += [(f"subtask {i}", g.success_rate, g.spl, g.count) for i, g in sorted(summary.by_subtask_index.items())]
    lines = [f"{'':<22}{'SR':>7}{'SPL':>7}{'n':>6}"]
    lines += [f"{name:<22}{sr:>7.3f}{spl:>7.3f}{n:>6d}" for name, sr, spl, n in rows]
    if summary.stop_reasons:
        lines.append("ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.stop_reasons.items())))
    failed = summary.num_subtasks - round(summary.success_rate * summary.num_subtasks)
    if summary.failures and failed:
        counts = ", ".join(f"{k} {v}" for k, v in summary.failures.items())
        extra = f", unclassified {summary.unclassified_failures}" if summary.unclassified_failures else ""
        lines.append(f"failures ({failed}): {counts}{extra}")
    return "\n".join(lines)


def agent_config_from_args(args: argparse.Namespace, run_config: RunConfig) -> AgentConfig:
    """The agent's settings of the ``goat-nav bench`` flags: the memory ablation and keyframe evidence."""
    return AgentConfig(use_memory=run_config.use_memory,
                       keyframes=KeyframeConfig(enabled=bool(getattr(args, "keyframes", False))))


def stack_config(args: argparse.Namespace) -> StackConfig:
    """Perception backend and goal matcher from the command line (defaults: ground truth, structured)."""
    perception = PerceptionConfig(backend=getattr(args, "perception", "ground_truth"),
                                  model_dir=getattr(args, "model_dir", None), device=getattr(args, "device", "cpu"))
    stack = StackConfig(perception=perception, matcher=getattr(args, "matcher", "structured"),
                        image_matcher=getattr(args, "image_matcher", "sift"),
                        clip_model_dir=getattr(args, "clip_model_dir", None),
                        cow=CowConfig(relevance=getattr(args, "cow_relevance", "owl")))
    # Model folders are checked here, before episodes are generated; the models load with the runner.
    if perception.backend != "ground_truth":
        check_model_folder(perception.model_dir, perception.backend)
    if stack.clip_model_dir is not None:
        check_model_folder(stack.clip_model_dir, "clip")
    return stack


def prepare_run(args: argparse.Namespace, runner: str) -> tuple[Sequence[GoatEpisode], RunConfig, dict[str, Any]]:
    """The episodes (read or generated), the run settings and the results' meta block of a bench command."""
    run_config = run_config_from_args(args)  # settings first: a bad one fails before any episode is generated
    stack = stack_config(args)
    if args.episodes_file is not None:
        episodes: Sequence[GoatEpisode] = load_goat_dataset(args.episodes_file).episodes
        episodes = episodes[: args.episodes] if args.episodes else episodes
        source = str(args.episodes_file)
    else:
        episodes = _generate(args, quiet=args.quiet).episodes
        source = f"procedural seed={args.seed}"
    meta: dict[str, Any] = {"suite": args.suite, "source": source, "seed": args.seed,
                            "run_config": dataclasses.asdict(run_config),
                            "agent_config": dataclasses.asdict(agent_config_from_args(args, run_config)),
                            "perception": stack.perception.backend, "stack": stack.describe(), "runner": runner}
    return episodes, run_config, meta


class SubtaskTap:
    """The runner's callbacks for one episode: the recorder's goal, step and result calls, and --verbose lines.

    Shared by every suite that runs GoatEpisodes through the runner (GOAT, LangMap, PASTURE: goat_nav.suites).

    The runner reports each subtask's goal as the agent got it (image goals with their picture); a subtask that
    failed before it had a goal (an unreachable target) gets one rebuilt from the episode with its result.
    """

    def __init__(self, episode: GoatEpisode, run_config: RunConfig, hfov_rad: float,
                 recorder: Optional[RunRecorder], verbose: bool) -> None:
        self.episode = episode
        self.run_config = run_config
        self.hfov_rad = hfov_rad
        self.recorder = recorder
        self.verbose = verbose
        self.index = 0  # the subtask under way
        self._goal_recorded = False

    def _record_goal(self) -> None:
        if self.recorder is not None and not self._goal_recorded:
            self.recorder.on_goal(_recorded_goal(self.episode, self.index, self.run_config, self.hfov_rad))
            self._goal_recorded = True

    def on_goal(self, index: int, goal: Goal) -> None:
        if self.recorder is not None:
            max_actions = self.run_config.max_actions_per_subtask
            recorded = RecordedGoal.from_goal(goal, self.episode.episode_id, index, max_actions)
            if not recorded.level:  # the runner's goals carry no level; a LangMap episode names it
                level = (self.episode.extra.get(EXTRA_LEVELS) or {}).get(str(index))
                recorded = dataclasses.replace(recorded, level=str(level or ""))
            self.recorder.on_goal(recorded)
            self._goal_recorded = True

    def on_step(self, obs: Observation, action: DiscreteAction) -> None:
        self._record_goal()
        if self.recorder is not None:
            self.recorder.on_step(obs, action)

    def on_subtask(self, trace: SubtaskTrace) -> None:
        self._record_goal()
        if self.recorder is not None:
            self.recorder.on_result(trace.record)
        if self.verbose:
            tqdm.write(trace.line(), file=sys.stderr)
        self.index += 1
        self._goal_recorded = False


def _recorded_goal(episode: GoatEpisode, index: int, run_config: RunConfig, hfov_rad: float) -> RecordedGoal:
    """The goal of subtask ``index`` rebuilt from the episode (for subtasks that ended before they had one)."""
    task = episode.tasks[index]
    try:
        goals = goals_for_task(episode, task)
        words = "" if task.modality is GoalModality.IMAGE else task_goal_text(episode, index, task)
    except (GoatError, StopIteration, KeyError):  # the runner records such a subtask as an error
        goals, words = (), task.category
    levels = episode.extra.get(EXTRA_LEVELS) or {}
    return RecordedGoal(
        episode_id=episode.episode_id, subtask_index=index, modality=task.modality,
        category=(words if task.modality is GoalModality.CATEGORY
                  else task.category if task.modality is GoalModality.IMAGE and run_config.image_goal_category
                  else ""),
        text=words if task.modality is GoalModality.DESCRIPTION else "",
        image_hfov_rad=hfov_rad if task.modality is GoalModality.IMAGE else 0.0,
        level=str(levels.get(str(index), "")), target_id=task.object_id or (goals[0].object_id if goals else ""),
        max_actions=run_config.max_actions_per_subtask)


def run_bench(args: argparse.Namespace) -> int:
    if args.suite != "goat":
        # Each non-GOAT family lives in goat_nav/suites/<suite>.py with ``run_suite(args) -> int``.
        suite = importlib.import_module(f"goat_nav.suites.{args.suite}")
        return int(suite.run_suite(args))
    started = time.monotonic()
    if args.record is not None:
        check_bag_path(args.record)  # a bad --record path fails before any episode is generated
    episodes, run_config, meta = prepare_run(args, "in_process")
    # The bag's run info is the meta as prepared: the same run gives the same bag whatever --out is.
    recorder = RunRecorder(args.record, run_info=meta) if args.record is not None else None
    traj_path = trajectories_path(args.out) if args.out is not None else None
    if traj_path is not None:
        meta[TRAJECTORIES_META_KEY] = traj_path.name
    records: list[SubtaskRecord] = []
    trajectories: list[Trajectory] = []
    bar = tqdm(episodes, desc="episodes", unit="ep", disable=args.quiet, file=sys.stderr)
    sim_config = SimConfig()
    stack = stack_config(args)
    with EpisodeRunner(run_config, agent_config_from_args(args, run_config), MatcherConfig(), sim_config,
                       stack=stack) as runner, recorder if recorder is not None else contextlib.nullcontext():
        for episode in bar:
            tap = SubtaskTap(episode, run_config, math.radians(sim_config.hfov_deg), recorder, args.verbose)
            ep_records, trajectory = runner.run_episode(
                episode, on_step=tap.on_step if recorder is not None else None,
                on_subtask=tap.on_subtask if recorder is not None or args.verbose else None,
                on_goal=tap.on_goal if recorder is not None else None)
            records.extend(ep_records)
            trajectories.append(trajectory)
            summary = summarise(records)
            bar.set_postfix(SR=f"{summary.success_rate:.2f}", SPL=f"{summary.spl:.2f}")
            if args.out is not None and traj_path is not None:
                meta["elapsed_s"] = round(time.monotonic() - started, 1)
                write_trajectories(traj_path, trajectories)  # first: the results never name a missing file
                write_results_json(args.out, records, summary, meta)
    summary = summarise(records)
    print(format_summary(summary))
    print(f"{len(episodes)} episodes, {len(records)} subtasks in {time.monotonic() - started:.0f} s")
    if args.out is not None:
        print(f"results: {args.out}")
    if recorder is not None:
        print(f"recording: {recorder.folder} (rosbag2: metadata.yaml + {recorder.mcap_path.name})")
    if args.report is not None:
        from goat_nav.report_views import report_extras  # renders the goal views: only when a report is asked for

        views, credits = report_extras(episodes)
        write_html_report(Path(args.report), records, summary, meta, trajectories, views, [credits])
        print(f"report: {args.report}")
    return 0
