"""GOAT vs CoW on the same episodes: SR and SPL side by side, beside GOAT-Bench's Table 2.

    goat-nav bench --agent goat --episodes 6 --seed 1000 --out goat_1000.json
    goat-nav bench --agent cow  --episodes 6 --seed 1000 --out cow_1000.json
    python benchmarks/bench_agents.py goat_1000.json cow_1000.json [goat_5000.json cow_5000.json ...]

Reads results files of ``goat-nav bench`` (their ``meta.agent`` says which method ran), checks that every agent
ran the same episodes of each seed, and prints per seed and pooled: SR and SPL overall, per modality, SPL of
subtasks 2+ (where memory can help), the failure classes, and whether the ordering matches GOAT-Bench's Table 2
(Khanna et al., CVPR 2024, val seen: Modular GOAT SR 26.3 / SPL 17.5, Modular CoW SR 14.8 / SPL 8.7).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Sequence

from goat_suites.common.results import SubtaskRecord, read_results_json, summarise

# GOAT-Bench Table 2, val seen split, percent.
PAPER = {"goat": (26.3, 17.5), "cow": (14.8, 8.7)}


def later_spl(records: Sequence[SubtaskRecord]) -> float:
    later = [r.spl for r in records if r.index >= 1]
    return statistics.fmean(later) if later else 0.0


def table(runs: dict[str, list[SubtaskRecord]]) -> str:
    """Rows of SR / SPL per agent, side by side."""
    agents = sorted(runs, key=lambda a: (a != "goat", a))
    summaries = {a: summarise(runs[a]) for a in agents}
    head = f"{'':<22}" + "".join(f"{a + ' SR':>10}{a + ' SPL':>10}" for a in agents)
    lines = [head]

    def row(name: str, values: list[tuple[float, float]]) -> None:
        lines.append(f"{name:<22}" + "".join(f"{sr:>10.3f}{spl:>10.3f}" for sr, spl in values))

    row("overall", [(summaries[a].success_rate, summaries[a].spl) for a in agents])
    modalities = sorted({m for a in agents for m in summaries[a].by_modality})
    for m in modalities:
        row(f"modality {m}", [(summaries[a].by_modality[m].success_rate, summaries[a].by_modality[m].spl)
                              if m in summaries[a].by_modality else (0.0, 0.0) for a in agents])
    lines.append(f"{'SPL subtasks 2+':<22}" + "".join(f"{'':>10}{later_spl(runs[a]):>10.3f}" for a in agents))
    for a in agents:
        s = summaries[a]
        failed = s.num_subtasks - round(s.success_rate * s.num_subtasks)
        counts = ", ".join(f"{k} {v}" for k, v in s.failures.items() if v)
        lines.append(f"{a}: {s.num_episodes} episodes, {s.num_subtasks} subtasks, {failed} failed"
                     + (f" ({counts})" if counts else ""))
    if {"goat", "cow"} <= set(agents):
        g, c = summaries["goat"], summaries["cow"]
        holds = g.success_rate > c.success_rate and g.spl > c.spl
        lines.append(f"GOAT - CoW: SR {g.success_rate - c.success_rate:+.3f}, SPL {g.spl - c.spl:+.3f}; ratio SR "
                     f"{g.success_rate / max(c.success_rate, 1e-9):.2f}, SPL {g.spl / max(c.spl, 1e-9):.2f} "
                     f"(paper: SR {PAPER['goat'][0] / PAPER['cow'][0]:.2f}, SPL "
                     f"{PAPER['goat'][1] / PAPER['cow'][1]:.2f}); GOAT ahead on both as in the paper: {holds}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, nargs="+", help="results files of goat-nav bench")
    args = parser.parse_args(argv)
    by_seed: dict[str, dict[str, list[SubtaskRecord]]] = defaultdict(dict)
    plans: dict[str, list[str]] = {}
    for path in args.results:
        found = read_results_json(path)
        agent, seed = str(found.meta.get("agent", "goat")), str(found.meta.get("source", "?"))
        plan = list(found.meta.get("episode_plan") or sorted({f"{r.scene_id}/{r.episode_id}" for r in found.records}))
        if seed in plans and plans[seed] != plan:
            print(f"error: {path} ran other episodes than the first file of {seed}", file=sys.stderr)
            return 2
        if agent in by_seed[seed]:
            print(f"error: {path} is a second {agent} run of {seed}", file=sys.stderr)
            return 2
        plans[seed] = plan
        by_seed[seed][agent] = list(found.records)
    pooled: dict[str, list[SubtaskRecord]] = defaultdict(list)
    for seed, runs in by_seed.items():
        # A run still under way (or cut short) has fewer episodes: compare on the episodes every agent finished.
        done = [{(r.scene_id, r.episode_id) for r in records} for records in runs.values()]
        common = set.intersection(*done)
        runs = {a: [r for r in records if (r.scene_id, r.episode_id) in common] for a, records in runs.items()}
        print(f"== {seed}: {len(common)} episodes run by every agent")
        print(table(runs))
        for agent, records in runs.items():
            pooled[agent].extend(records)
    if len(by_seed) > 1:
        print(f"== pooled over {len(by_seed)} seeds")
        print(table(pooled))
    print("GOAT-Bench Table 2 (val seen): " + ", ".join(f"{a} SR {sr} / SPL {spl}" for a, (sr, spl) in PAPER.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
