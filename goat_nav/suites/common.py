"""What the suites that replay GoatEpisodes through the in-process runner share (LangMap, PASTURE).

A suite turns its procedural episodes into GoatEpisodes whose tasks the unchanged agent runs, runs them with
:class:`SuiteRunner` and writes the results file of ``goat-nav bench`` (records that
``goat_core.bench.results.read_results_json`` reads, the suite's own per-subtask fields and tables under
``meta[<suite>]``), the trajectories file next to it and the HTML report, as ``goat-nav bench`` does for GOAT.
``--record RUN`` writes the run as a rosbag2 MCAP bag through the GOAT suite's recorder and callbacks
(:class:`goat_nav.record.RunRecorder`, :class:`goat_nav.bench_cmd.SubtaskTap`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from tqdm import tqdm

from goat_core.agent import AgentConfig
from goat_core.bench.episodes import GoatEpisode, load_goat_dataset
from goat_core.bench.results import GroupStats, SubtaskRecord, summarise, write_results_json
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_nav.bench_cmd import SubtaskTap
from goat_nav.record import RunRecorder, check_bag_path
from goat_nav.report import TRAJECTORIES_META_KEY, trajectories_path, write_html_report, write_trajectories
from goat_nav.runner import EpisodeRunner, RunConfig, Trajectory
from sim_bridge.embedded.catalogue import CATALOGUE
from sim_bridge.embedded.home import Home


def suite_runner(run_config: RunConfig, agent_config: AgentConfig, matcher_config: MatcherConfig,
                 extra_labels: Sequence[str] = (), home_for_scene: Optional[Callable[[str], Home]] = None,
                 embedder: Optional[SentenceEmbedder] = None) -> EpisodeRunner:
    """The benchmark runner with a wider ground-truth label set and homes rebuilt from the suite's scene ids.

    ``extra_labels``: categories the ground-truth perception may name besides the catalogue's (PASTURE's
    uncommon objects). ``home_for_scene``: builds the home of a scene id the stock runner cannot parse.
    """
    labels = [spec.name for spec in CATALOGUE]
    labels += [label for label in extra_labels if label not in labels]
    return EpisodeRunner(run_config, agent_config, matcher_config, embedder=embedder, labels=labels,
                         home_for_scene=home_for_scene)


def check_suite_args(args: argparse.Namespace) -> None:
    """Check the ``goat-nav bench`` flags before anything is generated: a bad ``--record`` path fails at once."""
    if getattr(args, "record", None) is not None:
        check_bag_path(args.record)


def load_episodes(args: argparse.Namespace) -> Sequence[GoatEpisode]:
    """The first ``--episodes`` episodes of ``--episodes-file`` (a GOAT-Bench style file keeps the extras)."""
    episodes = load_goat_dataset(args.episodes_file).episodes
    return episodes[: args.episodes] if args.episodes else episodes


def base_meta(args: argparse.Namespace, run_config: RunConfig, source: str) -> dict[str, Any]:
    """The results' meta block shared with ``goat-nav bench`` (the suite adds its own entry)."""
    return {"suite": args.suite, "source": source, "seed": args.seed,
            "run_config": dataclasses.asdict(run_config),
            "agent_config": dataclasses.asdict(AgentConfig(use_memory=run_config.use_memory)),
            "perception": "ground_truth", "runner": "in_process"}


@dataclass
class SuiteRun:
    """Everything a run produced, in episode order."""

    records: list[SubtaskRecord] = field(default_factory=list)
    trajectories: list[Trajectory] = field(default_factory=list)
    bag: Optional[Path] = None  # the rosbag2 folder of --record


def run_episodes(args: argparse.Namespace, episodes: Sequence[GoatEpisode], runner: EpisodeRunner,
                 meta: dict[str, Any], annotate: Callable[[GoatEpisode, SubtaskRecord], SubtaskRecord],
                 suite_meta: Callable[[Sequence[SubtaskRecord]], dict[str, Any]]) -> SuiteRun:
    """Run every episode with a progress bar; after each, rewrite ``--out`` (trajectories first).

    ``annotate`` adds what the suite knows about a record (the LangMap level); ``suite_meta`` gives the suite's
    meta entry (its per-subtask fields and tables) for the records so far. With ``--record`` every goal, action,
    observation and result goes into the bag as in a GOAT run.
    """
    started = time.monotonic()
    run = SuiteRun()
    # The bag's run info is the meta as prepared: the same run gives the same bag whatever --out is.
    recorder = RunRecorder(args.record, run_info=meta) if getattr(args, "record", None) is not None else None
    traj_path = trajectories_path(args.out) if args.out is not None else None
    if traj_path is not None:
        meta[TRAJECTORIES_META_KEY] = traj_path.name
    hfov_rad = math.radians(runner.sim_config.hfov_deg)
    bar = tqdm(episodes, desc="episodes", unit="ep", disable=args.quiet, file=sys.stderr)
    with recorder if recorder is not None else contextlib.nullcontext():
        for episode in bar:
            tap = SubtaskTap(episode, runner.run_config, hfov_rad, recorder, args.verbose)
            records, trajectory = runner.run_episode(
                episode, on_step=tap.on_step if recorder is not None else None,
                on_subtask=tap.on_subtask if recorder is not None or args.verbose else None,
                on_goal=tap.on_goal if recorder is not None else None)
            run.records.extend(annotate(episode, r) for r in records)
            run.trajectories.append(trajectory)
            summary = summarise(run.records)
            bar.set_postfix(SR=f"{summary.success_rate:.2f}", SPL=f"{summary.spl:.2f}")
            if args.out is not None and traj_path is not None:
                meta["elapsed_s"] = round(time.monotonic() - started, 1)
                meta[args.suite] = suite_meta(run.records)
                write_trajectories(traj_path, run.trajectories)  # first: the results never name a missing file
                write_results_json(args.out, run.records, summary, meta)
    run.bag = recorder.folder if recorder is not None else None
    return run


def finish(args: argparse.Namespace, run: SuiteRun, meta: dict[str, Any], table: str, started: float,
           what: str) -> int:
    """Print the table and where the files went; write the report."""
    print(table)
    summary = summarise(run.records)
    if summary.stop_reasons:
        print("ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.stop_reasons.items())))
    print(f"{what}, {len(run.records)} subtasks in {time.monotonic() - started:.0f} s")
    if args.out is not None:
        print(f"results: {args.out}")
    if run.bag is not None:
        print(f"recording: {run.bag} (rosbag2: metadata.yaml + {run.bag.name}.mcap)")
    if args.report is not None:
        write_html_report(Path(args.report), run.records, summary, meta, run.trajectories)
        print(f"report: {args.report}")
    return 0


def stats_rows(groups: dict[str, GroupStats], order: Sequence[str], overall: Optional[GroupStats] = None,
               name_width: int = 24) -> list[str]:
    """Table lines "name  SR  SPL  n" for the groups in ``order`` (absent ones shown as "-"), then overall."""
    lines = [f"{'':<{name_width}}{'SR':>7}{'SPL':>7}{'n':>6}"]
    for name in order:
        g = groups.get(name)
        lines.append(f"{name:<{name_width}}{g.success_rate:>7.3f}{g.spl:>7.3f}{g.count:>6d}" if g is not None
                     else f"{name:<{name_width}}{'-':>7}{'-':>7}{0:>6d}")
    if overall is not None:
        lines.append(f"{'overall':<{name_width}}{overall.success_rate:>7.3f}{overall.spl:>7.3f}{overall.count:>6d}")
    return lines
