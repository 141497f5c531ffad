"""`goat-nav bench` and `goat-nav generate`: procedural episodes, the in-process run, metrics, files."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from tqdm import tqdm

from goat_core.agent import AgentConfig
from goat_core.bench.episodes import GoatDataset, GoatEpisode, load_goat_dataset, save_goat_dataset
from goat_core.bench.results import SubtaskRecord, Summary, summarise, write_results_json
from goat_core.matching.matcher import MatcherConfig
from goat_nav.runner import EpisodeRunner, RunConfig, Trajectory
from sim_bridge.embedded.episodes import EpisodeGenConfig, generate_dataset
from sim_bridge.embedded.home import HomeConfig


def _home_config(args: argparse.Namespace) -> HomeConfig:
    if args.num_rooms is None:
        return HomeConfig()
    return HomeConfig(num_rooms=args.num_rooms)


def _generate(args: argparse.Namespace, quiet: bool) -> GoatDataset:
    bar = tqdm(total=args.episodes, desc="generating episodes", unit="ep", disable=quiet, file=sys.stderr)
    def advance(_episode: object) -> None:
        bar.update(1)

    dataset = generate_dataset(args.episodes, args.seed, _home_config(args), EpisodeGenConfig(), on_episode=advance)
    bar.close()
    return dataset


def run_generate(args: argparse.Namespace) -> int:
    dataset = _generate(args, quiet=False)
    save_goat_dataset(dataset, args.out)
    n_tasks = sum(len(e.tasks) for e in dataset.episodes)
    print(f"wrote {len(dataset.episodes)} episodes ({n_tasks} subtasks) to {args.out}")
    return 0


def _run_config(args: argparse.Namespace) -> RunConfig:
    overrides: dict[str, Any] = {"use_memory": not args.no_memory}
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
    return "\n".join(lines)


def prepare_run(args: argparse.Namespace, runner: str) -> tuple[Sequence[GoatEpisode], RunConfig, dict[str, Any]]:
    """The episodes (read or generated), the run settings and the results' meta block of a bench command."""
    run_config = _run_config(args)  # settings first: a bad one fails before any episode is generated
    if args.episodes_file is not None:
        episodes: Sequence[GoatEpisode] = load_goat_dataset(args.episodes_file).episodes
        episodes = episodes[: args.episodes] if args.episodes else episodes
        source = str(args.episodes_file)
    else:
        episodes = _generate(args, quiet=args.quiet).episodes
        source = f"procedural seed={args.seed}"
    meta: dict[str, Any] = {"suite": args.suite, "source": source, "seed": args.seed,
                            "run_config": dataclasses.asdict(run_config),
                            "agent_config": dataclasses.asdict(AgentConfig(use_memory=run_config.use_memory)),
                            "perception": "ground_truth", "runner": runner}
    return episodes, run_config, meta


def run_bench(args: argparse.Namespace) -> int:
    if args.suite != "goat":
        # Each non-GOAT family lives in goat_nav/suites/<suite>.py with ``run_suite(args) -> int``.
        suite = importlib.import_module(f"goat_nav.suites.{args.suite}")
        return int(suite.run_suite(args))
    started = time.monotonic()
    episodes, run_config, meta = prepare_run(args, "in_process")
    records: list[SubtaskRecord] = []
    trajectories: list[Trajectory] = []
    bar = tqdm(episodes, desc="episodes", unit="ep", disable=args.quiet, file=sys.stderr)
    with EpisodeRunner(run_config, AgentConfig(use_memory=run_config.use_memory), MatcherConfig()) as runner:
        for episode in bar:
            ep_records, trajectory = runner.run_episode(
                episode, on_subtask=(lambda trace: tqdm.write(trace.line(), file=sys.stderr)) if args.verbose else None)
            records.extend(ep_records)
            trajectories.append(trajectory)
            summary = summarise(records)
            bar.set_postfix(SR=f"{summary.success_rate:.2f}", SPL=f"{summary.spl:.2f}")
            if args.out is not None:
                meta["elapsed_s"] = round(time.monotonic() - started, 1)
                write_results_json(args.out, records, summary, meta)
    summary = summarise(records)
    print(format_summary(summary))
    print(f"{len(episodes)} episodes, {len(records)} subtasks in {time.monotonic() - started:.0f} s")
    if args.out is not None:
        print(f"results: {args.out}")
    if args.report is not None:
        from goat_nav.report import write_html_report

        write_html_report(Path(args.report), records, summary, meta, trajectories)
        print(f"report: {args.report}")
    return 0
