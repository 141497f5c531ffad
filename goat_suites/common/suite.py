"""What the suites that replay GoatEpisodes through the runner share (GOAT, LangMap, PASTURE).

A suite turns its procedural episodes into GoatEpisodes whose tasks the unchanged agent runs, runs them with
:func:`run_episodes` and writes the results file of ``goat-nav bench`` (records that
``goat_suites.common.results.read_results_json`` reads, the suite's own per-subtask fields and tables under
``meta[<suite>]``), the trajectories file next to it and the HTML report, as ``goat-nav bench`` does for GOAT
(which runs through :func:`run_episodes` too). ``--record RUN`` writes the run as a rosbag2 MCAP bag through the
GOAT suite's recorder and callbacks (:class:`goat_ros.record.RunRecorder`,
:class:`goat_suites.common.episode_worker.SubtaskTap`). ``--workers`` / ``--ray-address`` run the episodes on several
workers and ``--resume`` continues a run (``goat_suites.common.parallel``, ``goat_suites.common.resume``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from tqdm import tqdm

from goat_core.agent import AgentConfig
from goat_core.agent.config_file import load_agent_config
from goat_core.matching.lexicon import lexicon_in_use
from goat_core.matching.matcher import MatcherConfig
from goat_ros.record import RunRecorder, check_bag_path
from goat_suites.common.episode_files import load_goat_dataset
from goat_suites.common.episode_worker import (
    EpisodeOutput,
    GoatWorkerFactory,
    episode_key,
    episode_units,
    lost_episode_records,
)
from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.home_stats import scenes_meta
from goat_suites.common.outputs import run_progress
from goat_suites.common.parallel import WORKER_LOST, RunStats, UnitResult, WorkerPool, WorkUnit, parallel_config
from goat_suites.common.parts import SuiteParts
from goat_suites.common.protocol_meta import protocol_meta, protocol_sim_config
from goat_suites.common.report import write_html_report
from goat_suites.common.results import GroupStats, SubtaskRecord, read_results_json, summarise, write_results_json
from goat_suites.common.resume import PlanResults, check_same_run, plan_run
from goat_suites.common.run_args import run_config_from_args, sim_config_from_args
from goat_suites.common.runner import RunConfig, Trajectory
from goat_suites.common.trajectories import (
    TRAJECTORIES_META_KEY,
    stored_trajectories,
    trajectories_path,
    write_trajectories,
)
from sim_bridge.embedded.catalogue import CATALOGUE
from sim_bridge.embedded.sim import SimConfig


def suite_workers(run_config: RunConfig, agent_config: AgentConfig, matcher_config: MatcherConfig,
                  parts: SuiteParts, extra_labels: Sequence[str] = (), verbose: bool = False,
                  sim_config: SimConfig = SimConfig()) -> GoatWorkerFactory:
    """The workers of a suite: the benchmark runner with the suite's ``parts`` (its scored goals, levels and homes)
    and a wider ground-truth label set.

    ``extra_labels``: categories the ground-truth perception may name besides the catalogue's (PASTURE's
    uncommon objects).
    """
    labels = [spec.name for spec in CATALOGUE]
    labels += [label for label in extra_labels if label not in labels]
    return GoatWorkerFactory(run_config, agent_config, matcher_config, sim_config, labels=tuple(labels),
                             parts=parts, verbose=verbose)


SuiteBody = Callable[[argparse.Namespace, RunConfig, WorkerPool, float], int]


def start_suite(args: argparse.Namespace, parts: SuiteParts, body: SuiteBody, extra_labels: Sequence[str] = (),
                max_units: Optional[int] = None) -> int:
    """The start of a GoatEpisode suite's run: its settings (a bad one fails before anything is generated), then
    its workers, which start (and build their agents) while ``body(args, run_config, pool, started)`` generates
    or loads the episodes and runs them. ``max_units``: the most episodes the run has (sizes the pool)."""
    started = time.monotonic()
    check_suite_args(args)
    run_config = run_config_from_args(args)
    workers = suite_workers(run_config, agent_config_from_args(args), MatcherConfig(), parts, extra_labels,
                            verbose=args.verbose, sim_config=sim_config_from_args(args))
    with WorkerPool(parallel_config(args), workers, max_units=max_units) as pool:
        return body(args, run_config, pool, started)


def generation_bar(args: argparse.Namespace, desc: str, unit: str) -> tqdm:
    """The progress bar of a suite's episode generation (``--episodes`` steps; off with ``--quiet``)."""
    return tqdm(total=args.episodes, desc=desc, unit=unit, disable=args.quiet, file=sys.stderr)


def check_suite_args(args: argparse.Namespace) -> None:
    """Check the ``goat-nav bench`` flags before anything is generated: a bad ``--record`` path fails at once."""
    if getattr(args, "record", None) is not None:
        check_bag_path(args.record)


def load_episodes(args: argparse.Namespace) -> Sequence[GoatEpisode]:
    """The first ``--episodes`` episodes of ``--episodes-file`` (a GOAT-Bench style file keeps the extras)."""
    episodes = load_goat_dataset(args.episodes_file, max_description_words=None).episodes  # not GOAT-Bench's
    return episodes[: args.episodes] if args.episodes else episodes


def agent_config_from_args(args: argparse.Namespace) -> AgentConfig:
    """The agent's settings of a bench command: ``--agent-config FILE`` (default: AgentConfig's defaults), and
    ``--no-memory`` on top of it (the no-memory ablation)."""
    path = getattr(args, "agent_config", None)
    config = load_agent_config(path) if path is not None else AgentConfig()
    if getattr(args, "no_memory", False):
        config = dataclasses.replace(config, use_memory=False)
    # --evidence auto: the instance memory's evidence over views is on exactly when --perception-errors is
    evidence = getattr(args, "evidence", "auto")
    errors_on = getattr(args, "perception_errors", "off") != "off"
    if evidence != "auto" or errors_on:
        enabled = evidence == "on" or (evidence == "auto" and errors_on)
        memory = dataclasses.replace(config.memory, evidence=dataclasses.replace(config.memory.evidence,
                                                                                 enabled=enabled))
        config = dataclasses.replace(config, memory=memory)
    return config


def memory_deviation(agent_config: object) -> tuple[str, ...]:
    """The no-memory ablation named as a protocol deviation (the official protocols keep memory across subtasks)."""
    return () if getattr(agent_config, "use_memory", True) else ("no memory across subtasks",)


def base_meta(args: argparse.Namespace, run_config: RunConfig, source: str) -> dict[str, Any]:
    """The results' meta block shared with ``goat-nav bench`` (the suite adds its own entry)."""
    return {"suite": args.suite, "source": source, "seed": args.seed,
            **protocol_meta(args.suite, run_config,
                            protocol_sim_config(args.suite, getattr(args, "embodiment", "official")),
                            memory_deviation(agent_config_from_args(args))),
            "run_config": dataclasses.asdict(run_config),
            "agent_config": dataclasses.asdict(agent_config_from_args(args)),
            "perception": "ground_truth", "runner": "in_process", "lexicon": lexicon_in_use()}


@dataclass
class SuiteRun:
    """Everything a run produced, in episode order."""

    records: list[SubtaskRecord] = field(default_factory=list)
    trajectories: list[Trajectory] = field(default_factory=list)
    bag: Optional[Path] = None  # the rosbag2 folder of --record
    stats: Optional[RunStats] = None  # what the workers did (peak memory, lost episodes)


Annotate = Callable[[GoatEpisode, SubtaskRecord], SubtaskRecord]
SuiteMeta = Callable[[Sequence[SubtaskRecord]], dict[str, Any]]


@dataclass(frozen=True)
class _Finished:
    records: tuple[SubtaskRecord, ...]  # annotated
    trajectory: Optional[Trajectory]  # None for an episode no worker finished


class GoatResults(PlanResults[_Finished]):
    """The driver side of a GOAT-type run (``goat_suites.common.parallel.ResultSink``): finished episodes in plan order,
    and
    after each one the trajectories file, then the results file (``--out``)."""

    def __init__(self, out: Optional[Path], suite: str, meta: dict[str, Any], annotate: Annotate,
                 suite_meta: Optional[SuiteMeta]) -> None:
        super().__init__(meta)
        self.out = out
        self.traj_path = trajectories_path(out) if out is not None else None
        if self.traj_path is not None:
            meta[TRAJECTORIES_META_KEY] = self.traj_path.name
        self.suite = suite
        self.planned: Sequence[GoatEpisode] = ()  # every episode of the run, for its progress entries
        self.annotate = annotate
        self.suite_meta = suite_meta

    def add(self, result: UnitResult) -> None:
        episode: GoatEpisode = result.unit.payload
        if result.error is not None:
            records, trajectory = lost_episode_records(episode, result.error), None
        else:
            output: EpisodeOutput = result.payload
            records, trajectory = list(output.records), output.trajectory
        self.done[result.unit.index] = _Finished(tuple(self.annotate(episode, r) for r in records), trajectory)
        self.write()

    @property
    def records(self) -> list[SubtaskRecord]:
        return [r for f in self.finished() for r in f.records]

    @property
    def trajectories(self) -> list[Trajectory]:
        return [f.trajectory for f in self.finished() if f.trajectory is not None]

    def postfix(self) -> dict[str, str]:
        summary = summarise(self.records)
        return {"SR": f"{summary.success_rate:.2f}", "SPL": f"{summary.spl:.2f}"}

    def write(self) -> None:
        if self.out is None or self.traj_path is None:
            return
        records = self.records
        self.stamp_elapsed()
        if self.suite_meta is not None:
            self.meta[self.suite] = self.suite_meta(records)
        self.meta.update(run_progress(self.planned, len(records)))
        write_trajectories(self.traj_path, self.trajectories)  # first: the results never name a missing file
        write_results_json(self.out, records, summarise(records), self.meta)

    def load(self, units: Sequence[WorkUnit]) -> set[str]:
        """``--resume``: take the finished episodes of ``--out`` (same plan and settings, else ConfigError); return
        their keys. An episode whose worker was lost is not finished: it runs again."""
        assert self.out is not None
        stored = read_results_json(self.out)
        check_same_run(self.out, stored.meta, [u.key for u in units], self.meta)
        self.resumed(stored.meta)
        by_key: dict[str, list[SubtaskRecord]] = {}
        for r in stored.records:
            by_key.setdefault(episode_key(r.scene_id, r.episode_id), []).append(r)
        trajectories = {episode_key(t.scene_id, t.episode_id): t for t in stored_trajectories(self.out, stored.meta)}
        for unit in units:
            records = by_key.get(unit.key)
            if records and not any((r.error or "").startswith(WORKER_LOST) for r in records):
                self.done[unit.index] = _Finished(tuple(records), trajectories.get(unit.key))
        return {units[i].key for i in self.done}


def run_episodes(args: argparse.Namespace, episodes: Sequence[GoatEpisode], pool: WorkerPool,
                 meta: dict[str, Any], parts: SuiteParts, annotate: Optional[Annotate] = None,
                 suite_meta: Optional[SuiteMeta] = None) -> SuiteRun:
    """Run every episode on the workers of ``pool`` with one progress bar; after each, rewrite ``--out``.

    ``parts``: the suite's (the homes of its scene ids). ``annotate`` adds what the suite knows about a record (the
    LangMap level); ``suite_meta`` gives the suite's meta entry (its per-subtask fields and tables) for the records
    so far. With ``--record`` every goal, action,
    observation and result goes into the bag as in a GOAT run. ``--resume`` keeps the episodes already in ``--out``.
    """
    # The bag's run info is the meta as prepared: the same run gives the same bag whatever --out is.
    recorder = RunRecorder(args.record, run_info=meta) if getattr(args, "record", None) is not None else None
    # meta.scenes: rooms, navigable area and objects of each home the run uses (goat_suites.common.home_stats); a
    # procedural episode carries its home's entry, so the driver builds no home for it while the workers run.
    meta.setdefault("scenes", scenes_meta((e.scene_id for e in episodes), parts.home_for_scene, episodes))
    units = episode_units(episodes)
    sink = GoatResults(args.out, args.suite, meta, annotate or (lambda _episode, record: record), suite_meta)
    sink.planned = episodes
    todo = plan_run(args, units, meta, sink.load)
    with recorder if recorder is not None else contextlib.nullcontext():
        stats = pool.run(todo, sink, recorder=recorder, total=len(units), quiet=args.quiet)
    return SuiteRun(records=sink.records, trajectories=sink.trajectories,
                    bag=recorder.folder if recorder is not None else None, stats=stats)


def finish(args: argparse.Namespace, run: SuiteRun, meta: dict[str, Any], table: str, started: float,
           what: str, parts: SuiteParts) -> int:
    """Print the table and where the files went; write the report (with the charts and tables of ``parts``)."""
    if "protocol" in meta:
        print(f"protocol: {meta['protocol']}")
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
        write_html_report(Path(args.report), run.records, summary, meta, run.trajectories, parts=parts)
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
