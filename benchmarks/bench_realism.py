"""The agent under the simulated Stretch's senses and body: ideal vs stretch, and a sweep of each model's strength.

    python benchmarks/bench_realism.py --episodes 4 --seed 1000                      # ideal vs stretch
    python benchmarks/bench_realism.py --episodes 3 --sweep depth_noise,odom_drift   # x 0, 0.5, 1, 2 each
    python benchmarks/bench_realism.py --episodes 3 --settings stretch,stretch-nolocaliser

Runs the same procedural GOAT episodes (ground-truth semantics) under each setting and prints SR, SPL, collisions
per 100 m walked, and the pose error of what the agent acted on against the simulator's truth (median and 95th
percentile over all actions, metres and degrees; and the median at the end of each subtask) and the failure
classes. Settings: ``ideal``, ``stretch`` and ``stretch-nolocaliser`` (the drifting odometry taken as the pose),
and with ``--sweep`` one knob of the stretch profile at a time on top of ``ideal`` (docs/realism.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from goat_core.agent import AgentConfig
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_core.types import DiscreteAction, Observation
from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.results import SubtaskRecord, summarise
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset
from sim_bridge.embedded.home import FURNITURE_KINDS, HomeConfig
from sim_bridge.embedded.realism import RealismConfig, realism_profile
from sim_bridge.embedded.sim import SimConfig

KNOBS = ("depth_noise", "motion_noise", "odom_drift")


@dataclass
class SettingResult:
    name: str
    realism: str
    success_rate: float
    spl: float
    subtasks: int
    collisions_per_100m: float
    pose_error_m: tuple[float, float]  # median, p95 over every action
    pose_error_deg: tuple[float, float]
    end_error_median_m: float
    elapsed_s: float
    failures: dict[str, int]  # failed subtasks per class (goat_suites.common.failures), classes with none left out


def _setting(name: str, seed: int) -> RealismConfig:
    if name == "stretch-nolocaliser":
        return realism_profile("stretch", localiser=False, seed=seed)
    if "=" in name:  # knob=multiplier on top of ideal, localiser on
        knob, value = name.split("=")
        return realism_profile("ideal", seed=seed, **{knob: float(value)})
    return realism_profile(name, seed=seed)


def _run(name: str, realism: RealismConfig, episodes: list[GoatEpisode], max_actions: int,
         embedder: SentenceEmbedder) -> SettingResult:
    started = time.monotonic()
    records: list[SubtaskRecord] = []
    collisions = 0

    def on_step(obs: Observation, action: DiscreteAction) -> None:
        nonlocal collisions
        collisions += int(obs.collided)

    run_config = RunConfig(max_actions_per_subtask=max_actions)
    with EpisodeRunner(run_config, AgentConfig(), MatcherConfig(), SimConfig(realism=realism),
                       embedder=embedder) as runner:
        for episode in tqdm(episodes, desc=name, unit="ep", file=sys.stderr):
            recs, _ = runner.run_episode(episode, on_step=on_step)
            records.extend(recs)
        log = runner.senses.log
        pos, yaw = log.errors()
        ends = [i for i in log.subtask_end if i >= 0]
    summary = summarise(records)
    walked_m = sum(r.path_length_m for r in records)
    deg = np.degrees(yaw)
    return SettingResult(
        name=name, realism=realism.describe(), success_rate=summary.success_rate, spl=summary.spl,
        subtasks=summary.num_subtasks, collisions_per_100m=100.0 * collisions / max(walked_m, 1e-9),
        pose_error_m=(_pct(pos, 50), _pct(pos, 95)), pose_error_deg=(_pct(deg, 50), _pct(deg, 95)),
        end_error_median_m=statistics.median(pos[ends]) if ends and len(pos) else 0.0,
        elapsed_s=time.monotonic() - started, failures={k: v for k, v in summary.failures.items() if v})


def _pct(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else 0.0


def _table(results: list[SettingResult]) -> str:
    lines = [f"{'setting':<24}{'SR':>7}{'SPL':>7}{'n':>5}{'coll/100m':>11}{'pose m med/p95':>17}"
             f"{'pose deg med/p95':>18}{'end m med':>11}{'s':>7}  failures"]
    for r in results:
        lines.append(f"{r.name:<24}{r.success_rate:>7.3f}{r.spl:>7.3f}{r.subtasks:>5d}{r.collisions_per_100m:>11.1f}"
                     f"{r.pose_error_m[0]:>9.3f}/{r.pose_error_m[1]:<7.3f}{r.pose_error_deg[0]:>9.2f}/"
                     f"{r.pose_error_deg[1]:<8.2f}{r.end_error_median_m:>11.3f}{r.elapsed_s:>7.0f}  "
                     + (" ".join(f"{k} {v}" for k, v in r.failures.items()) or "-"))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--settings", default="ideal,stretch",
                        help="comma-separated: ideal, stretch, stretch-nolocaliser, KNOB=X (default ideal,stretch)")
    parser.add_argument("--sweep", default="", help=f"comma-separated knobs of {KNOBS} to sweep over --multipliers")
    parser.add_argument("--multipliers", default="0.5,1,2", help="the sweep's multipliers (0 is the ideal run)")
    parser.add_argument("--max-actions", type=int, default=500, help="action budget per subtask (default 500)")
    parser.add_argument("--homes", choices=FURNITURE_KINDS, default=HomeConfig().furniture)
    parser.add_argument("--out", type=Path, default=None, help="write the table as JSON")
    args = parser.parse_args()

    names = [n.strip() for n in args.settings.split(",") if n.strip()]
    for knob in (k.strip() for k in args.sweep.split(",") if k.strip()):
        if knob not in KNOBS:
            parser.error(f"--sweep knobs must be among {KNOBS}, got {knob!r}")
        names += [f"{knob}={float(m):g}" for m in args.multipliers.split(",") if float(m) > 0.0]
    episodes = list(generate_dataset(args.episodes, args.seed, HomeConfig(furniture=args.homes),
                                     EpisodeGenConfig()).episodes)
    embedder = SentenceEmbedder()
    print(f"{args.episodes} episodes, seed {args.seed}, {args.homes} homes, budget {args.max_actions} actions")
    results: list[SettingResult] = []
    for name in names:  # each row as soon as it is measured (long runs on a shared machine)
        results.append(_run(name, _setting(name, args.seed), episodes, args.max_actions, embedder))
        print(_table(results).splitlines()[-1] if len(results) > 1 else _table(results), flush=True)
    if args.out is not None:
        rows: list[dict[str, Any]] = [r.__dict__ for r in results]
        args.out.write_text(json.dumps({"episodes": args.episodes, "seed": args.seed, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
