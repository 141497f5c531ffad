"""`goat-nav bench` and `goat-nav generate`: procedural episodes, the in-process run, metrics, files."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from tqdm import tqdm

from goat_core.matching.cow import CowConfig
from goat_core.matching.lexicon import lexicon_in_use
from goat_core.matching.matcher import MatcherConfig
from goat_core.matching.selection import StackConfig
from goat_core.perception.detector_errors import describe_errors
from goat_core.perception.factory import PerceptionConfig
from goat_core.perception.model_folder import check_model_folder
from goat_ros.record import check_bag_path
from goat_suites.common.episode_files import load_goat_dataset, save_goat_dataset
from goat_suites.common.episode_worker import GoatWorkerFactory, longest_generated
from goat_suites.common.episodes import GoatDataset, GoatEpisode
from goat_suites.common.home_stats import describe_homes
from goat_suites.common.parallel import WorkerPool, parallel_config
from goat_suites.common.protocol_meta import protocol_meta
from goat_suites.common.realism import realism_deviation, realism_from_args, realism_meta
from goat_suites.common.report import write_html_report
from goat_suites.common.results import Summary, summarise
from goat_suites.common.run_args import home_config_from_args, run_config_from_args, sim_config_from_args
from goat_suites.common.runner import RunConfig
from goat_suites.common.suite import agent_config_from_args, memory_deviation, run_episodes
from goat_suites.goat.generator import ProceduralEpisodes, episode_config_for, generate_dataset, home_seeds
from goat_suites.goat.parts import GOAT


def _generate(args: argparse.Namespace, quiet: bool, pool: Optional[WorkerPool] = None) -> GoatDataset:
    """The procedural episodes; with a pool of Ray workers each worker generates some (the same episodes)."""
    bar = tqdm(total=args.episodes, desc="generating episodes", unit="ep", disable=quiet, file=sys.stderr)
    def advance(_episode: object) -> None:
        bar.update(1)

    home_config = home_config_from_args(args)
    if pool is not None and pool.distributed:
        make = ProceduralEpisodes(args.seed, home_config, episode_config_for(home_config))
        # A worker with no episode left to generate runs the longest one generated so far meanwhile (not when the
        # run is recorded or resumed: a recorded unit is run again, a resumed run may not have it).
        unrecorded = getattr(args, "record", None) is None and not getattr(args, "resume", False)
        early = longest_generated if unrecorded else None
        dataset = GoatDataset(tuple(pool.map(make, list(enumerate(home_seeds(args.episodes, args.seed))), advance,
                                             early)))
    else:
        dataset = generate_dataset(args.episodes, args.seed, home_config, episode_config_for(home_config),
                                   on_episode=advance)
    bar.close()
    return dataset


def run_generate(args: argparse.Namespace) -> int:
    dataset = _generate(args, quiet=False)
    save_goat_dataset(dataset, args.out)
    n_tasks = sum(len(e.tasks) for e in dataset.episodes)
    print(f"wrote {len(dataset.episodes)} episodes ({n_tasks} subtasks) to {args.out}")
    return 0


def format_summary(summary: Summary, protocol: str = "") -> str:
    """The metric table printed at the end of a run, headed by the protocol it ran under."""
    rows = [("overall", summary.success_rate, summary.spl, summary.num_subtasks)]
    rows += [(f"modality {m}", g.success_rate, g.spl, g.count) for m, g in sorted(summary.by_modality.items())]
    rows += [(f"subtask {i}", g.success_rate, g.spl, g.count) for i, g in sorted(summary.by_subtask_index.items())]
    lines = [f"protocol: {protocol}"] if protocol else []
    lines += [f"{'':<22}{'SR':>7}{'SPL':>7}{'n':>6}"]
    lines += [f"{name:<22}{sr:>7.3f}{spl:>7.3f}{n:>6d}" for name, sr, spl, n in rows]
    if summary.averaging == "per_episode":
        lines.append("(overall and per modality: mean over episodes of per-episode means, as GOAT-Bench averages)")
    if summary.stop_reasons:
        lines.append("ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.stop_reasons.items())))
    failed = sum(summary.failures.values()) + summary.unclassified_failures
    if summary.failures and failed:
        counts = ", ".join(f"{k} {v}" for k, v in summary.failures.items())
        extra = f", unclassified {summary.unclassified_failures}" if summary.unclassified_failures else ""
        lines.append(f"failures ({failed}): {counts}{extra}")
    return "\n".join(lines)


def stack_config(args: argparse.Namespace) -> StackConfig:
    """Perception backend and goal matcher from the command line (defaults: ground truth, structured)."""
    perception = PerceptionConfig(backend=getattr(args, "perception", "ground_truth"),
                                  model_dir=getattr(args, "model_dir", None), device=getattr(args, "device", "cpu"),
                                  errors=getattr(args, "perception_errors", "off"),
                                  errors_seed=int(getattr(args, "seed", 0) or 0))
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


def prepare_run(args: argparse.Namespace, runner: str, pool: Optional[WorkerPool] = None,
                ) -> tuple[Sequence[GoatEpisode], RunConfig, dict[str, Any]]:
    """The episodes (read or generated, by the workers of ``pool`` if it has Ray workers), the run settings and
    the results' meta block of a bench command."""
    run_config = run_config_from_args(args)  # settings first: a bad one fails before any episode is generated
    stack = stack_config(args)
    if args.episodes_file is not None:
        episodes: Sequence[GoatEpisode] = load_goat_dataset(args.episodes_file).episodes
        episodes = episodes[: args.episodes] if args.episodes else episodes
        source = str(args.episodes_file)
    else:
        episodes = _generate(args, quiet=args.quiet, pool=pool).episodes
        source = f"procedural seed={args.seed}"
    agent = getattr(args, "agent", "goat")
    if agent == "cow":
        from goat_core.baselines.cow_agent import CowAgentConfig  # the baseline's modules: only when it runs
    agent_config = CowAgentConfig() if agent == "cow" else agent_config_from_args(args)
    meta: dict[str, Any] = {"suite": args.suite, "source": source, "seed": args.seed, "agent": agent,
                            "homes": describe_homes(e.scene_id for e in episodes),
                            **protocol_meta(args.suite, run_config, sim_config_from_args(args),
                                            memory_deviation(agent_config)
                                            + realism_deviation(realism_from_args(args))),
                            "run_config": dataclasses.asdict(run_config),
                            "agent_config": dataclasses.asdict(agent_config),
                            "perception": stack.perception.backend, "stack": stack.describe(), "runner": runner,
                            "lexicon": lexicon_in_use(),
                            "perception_errors": describe_errors(stack.perception.errors, stack.perception.errors_seed),
                            "realism": realism_meta(realism_from_args(args))}
    return episodes, run_config, meta


def run_bench(args: argparse.Namespace) -> int:
    if args.suite != "goat":
        # Each non-GOAT family lives in goat_suites/<suite>/run.py with ``run_suite(args) -> int``.
        suite = importlib.import_module(f"goat_suites.{args.suite}.run")
        return int(suite.run_suite(args))
    started = time.monotonic()
    if args.record is not None:
        check_bag_path(args.record)  # a bad --record path fails before any episode is generated
    run_config = run_config_from_args(args)  # settings first: a bad one fails before any episode is generated
    workers = GoatWorkerFactory(run_config, agent_config_from_args(args), MatcherConfig(), sim_config_from_args(args),
                                stack=stack_config(args), parts=GOAT, verbose=args.verbose, live=args.live,
                                agent=getattr(args, "agent", "goat"))
    # Workers first: Ray workers build their agents, then generate the procedural episodes (the serial run's).
    with WorkerPool(parallel_config(args), workers, max_units=args.episodes) as pool:
        episodes, run_config, meta = prepare_run(args, "in_process", pool)
        run = run_episodes(args, episodes, pool, meta, GOAT)
    records, trajectories = run.records, run.trajectories
    summary = summarise(records)
    print(f"homes: {meta['homes']}")
    print(format_summary(summary, meta["protocol"]))
    print(f"{len(episodes)} episodes, {len(records)} subtasks in {time.monotonic() - started:.0f} s")
    if args.out is not None:
        print(f"results: {args.out}")
    if run.bag is not None:
        print(f"recording: {run.bag} (rosbag2: metadata.yaml + {run.bag.name}.mcap)")
    if args.report is not None:
        from goat_suites.goat.report_views import (
            report_extras,  # renders the goal views: only when a report is asked for
        )

        views, credits = report_extras(episodes)
        write_html_report(Path(args.report), records, summary, meta, trajectories, views, [credits], GOAT)
        print(f"report: {args.report}")
    return 0
