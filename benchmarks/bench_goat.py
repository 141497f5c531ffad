"""Quality targets of the main job: SR, SPL and the value of lifelong memory on procedural GOAT episodes.

    python benchmarks/bench_goat.py --episodes 20 --seed 5000 [--homes furnished]

Runs the same episodes twice, with and without memory (the GOAT paper's ablation), and prints SR/SPL overall, per
modality and per subtask index, and the ratio of SPL on subtasks 2+ (index >= 1) with memory to without.
Targets (issue 11): SR >= 0.93, SPL >= 0.68, image-goal SPL >= 0.60, memory ratio >= 1.3 with ground-truth
perception, and at most 1 subtask in 100 that gives up (the failure classes print under each table).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from tqdm import tqdm

from goat_core.agent import AgentConfig
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_nav.bench_cmd import format_summary
from goat_suites.common.results import SubtaskRecord, summarise, write_results_json
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset
from sim_bridge.embedded.home import FURNITURE_KINDS, HomeConfig


def _run(episodes: list, use_memory: bool, embedder: SentenceEmbedder) -> list[SubtaskRecord]:
    records: list[SubtaskRecord] = []
    with EpisodeRunner(RunConfig(), AgentConfig(use_memory=use_memory), MatcherConfig(),
                       embedder=embedder) as runner:
        for episode in tqdm(episodes, desc=f"memory={use_memory}", unit="ep", file=sys.stderr):
            recs, _ = runner.run_episode(episode)
            records.extend(recs)
    return records


def _later_spl(records: list[SubtaskRecord]) -> float:
    later = [r.spl for r in records if r.index >= 1]
    return statistics.fmean(later) if later else 0.0


def _early_failed_stops(records: list[SubtaskRecord], max_actions: int = 2) -> list[SubtaskRecord]:
    """Failed subtasks the agent ended by STOP within its first ``max_actions`` actions (issue 11's quick quits)."""
    return [r for r in records
            if not r.success and r.stop_reason == "stop" and r.num_actions <= max_actions]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=5000)
    parser.add_argument("--skip-no-memory", action="store_true", help="only the run with memory")
    parser.add_argument("--out", type=Path, default=None, help="write both summaries as JSON")
    parser.add_argument("--results", type=Path, default=None,
                        help="write the run with memory as a results file (every subtask, its failure class)")
    parser.add_argument("--results-no-memory", type=Path, default=None,
                        help="write the run without memory as a results file, to compare subtask by subtask")
    parser.add_argument("--homes", choices=FURNITURE_KINDS, default=HomeConfig().furniture,
                        help="furnished homes (real 3D models) or primitive furniture (the default)")
    args = parser.parse_args()

    t0 = time.monotonic()
    episodes = list(generate_dataset(args.episodes, args.seed, HomeConfig(furniture=args.homes),
                                     EpisodeGenConfig()).episodes)
    t_gen = time.monotonic() - t0
    embedder = SentenceEmbedder()
    t1 = time.monotonic()
    with_memory = _run(episodes, True, embedder)
    t_mem = time.monotonic() - t1
    summary = summarise(with_memory)
    print(f"== with memory ({args.episodes} episodes, seed {args.seed}, {args.homes} homes, {t_mem:.0f} s, "
          f"generation {t_gen:.0f} s)")
    print(format_summary(summary))
    result = {"with_memory": {"success_rate": summary.success_rate, "spl": summary.spl,
                              "spl_subtasks_2plus": _later_spl(with_memory), "elapsed_s": t_mem}}
    print(f"SPL on subtasks 2+: {_later_spl(with_memory):.3f}")
    if args.results is not None:
        write_results_json(args.results, with_memory, summary, {"seed": args.seed, "episodes": args.episodes})
    if not args.skip_no_memory:
        t2 = time.monotonic()
        without = _run(episodes, False, embedder)
        summary_nm = summarise(without)
        print(f"== without memory ({time.monotonic() - t2:.0f} s)")
        if args.results_no_memory is not None:
            write_results_json(args.results_no_memory, without, summary_nm,
                               {"seed": args.seed, "episodes": args.episodes, "use_memory": False})
        print(format_summary(summary_nm))
        ratio = _later_spl(with_memory) / max(_later_spl(without), 1e-9)
        print(f"SPL on subtasks 2+: {_later_spl(without):.3f}; memory ratio {ratio:.2f} (target >= 1.3)")
        result["without_memory"] = {"success_rate": summary_nm.success_rate, "spl": summary_nm.spl,
                                    "spl_subtasks_2plus": _later_spl(without)}
        result["memory_ratio_subtasks_2plus"] = ratio
    image = summary.by_modality.get("image")
    gave_up = summary.failures.get("gave_up", 0) / max(1, summary.num_subtasks)
    print(f"targets: SR {summary.success_rate:.3f} (>= 0.93), SPL {summary.spl:.3f} (>= 0.68), image SPL "
          f"{image.spl if image else 0.0:.3f} (>= 0.60), gave up {100 * gave_up:.1f} per 100 subtasks (<= 1)")
    early = _early_failed_stops(with_memory)
    print(f"failed STOPs within the first 2 actions: {len(early)} (target 0)"
          + "".join(f"\n  {r.episode_id} subtask {r.index}: {r.stop_detail}" for r in early))
    result["early_failed_stops"] = len(early)
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
