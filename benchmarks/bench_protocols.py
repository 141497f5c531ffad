"""GOAT under the old protocol and under GOAT-Bench's official one, on the same procedural episodes (issue 28).

    python benchmarks/bench_protocols.py --episodes 6 --seed 1000 [--out protocols.json]

old: 500 actions per subtask (each subtask starts afresh), sliding along walls, success at distance <= 0.25 m,
rates pooled over subtasks. official (goat_suites.common.protocols.GOAT_BENCH): 5000 actions per episode shared by
its subtasks, no sliding, distance < 0.25 m, rates as per-episode means then the mean over episodes. Prints SR
and SPL of both, the official run also pooled (to separate the averaging from the rest), and the failure
classes of each.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from goat_core.agent import AgentConfig
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_suites.common.protocol_meta import protocol_meta, protocol_sim_config
from goat_suites.common.results import SubtaskRecord, summarise
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset
from sim_bridge.embedded.home import HomeConfig
from sim_bridge.embedded.sim import SimConfig

OLD_RUN = RunConfig(max_actions_per_episode=None, max_actions_per_subtask=500, success_comparison="<=")
OLD_SIM = SimConfig(allow_sliding=True)


def _run(episodes: list, run_config: RunConfig, sim_config: SimConfig,
         embedder: SentenceEmbedder) -> tuple[list[SubtaskRecord], float]:
    started = time.monotonic()
    records: list[SubtaskRecord] = []
    with EpisodeRunner(run_config, AgentConfig(), MatcherConfig(), sim_config, embedder=embedder) as runner:
        for episode in episodes:
            recs, _ = runner.run_episode(episode)
            records.extend(recs)
            print(f"  {episode.episode_id}: {sum(r.success for r in recs)}/{len(recs)} succeeded, "
                  f"{sum(r.num_actions for r in recs)} actions, ended {[r.stop_reason for r in recs]}, "
                  f"{time.monotonic() - started:.0f} s", flush=True)
    return records, time.monotonic() - started


def _row(records: list[SubtaskRecord], averaging: str) -> dict[str, Any]:
    s = summarise(records, averaging)
    return {"success_rate": s.success_rate, "spl": s.spl, "subtasks": s.num_subtasks,
            "by_modality": {k: round(v.success_rate, 3) for k, v in s.by_modality.items()},
            "stop_reasons": dict(s.stop_reasons), "failures": {k: v for k, v in s.failures.items() if v},
            "actions": sum(r.num_actions for r in records)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=None, help="write the numbers as JSON")
    args = parser.parse_args()
    episodes = list(generate_dataset(args.episodes, args.seed, HomeConfig(), EpisodeGenConfig()).episodes)
    embedder = SentenceEmbedder()
    print("old protocol:", flush=True)
    old, old_s = _run(episodes, OLD_RUN, OLD_SIM, embedder)
    print("official protocol:", flush=True)
    official, official_s = _run(episodes, RunConfig(), protocol_sim_config("goat"), embedder)
    result = {
        "seed": args.seed, "episodes": args.episodes,
        "old": {"protocol": protocol_meta("goat", OLD_RUN, OLD_SIM)["protocol"], **_row(old, "pooled"),
                "elapsed_s": old_s},
        "official": {"protocol": protocol_meta("goat", RunConfig(), protocol_sim_config("goat"))["protocol"],
                     **_row(official, "per_episode"), "elapsed_s": official_s},
        "official_pooled": _row(official, "pooled"),
    }
    for name in ("old", "official", "official_pooled"):
        r = result[name]
        print(f"{name:<16} SR {r['success_rate']:.3f}  SPL {r['spl']:.3f}  n {r['subtasks']}  "
              f"actions {r['actions']}  ended {r['stop_reasons']}  failures {r['failures']}")
    print(f"old: {result['old']['protocol']}")
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
