"""How well the parallel scheduler's estimate ranks episodes (issue 31): each episode's CPU time and actions
against its estimate, and what handing them out longest first would give on two workers.

    python benchmarks/bench_episode_cost.py --episodes 8 --seed 5000
    python benchmarks/bench_episode_cost.py --seed 5000 1000 --episodes 8 6   # what the estimate was fitted on

Generates the procedural episodes of ``goat-nav bench --homes small --episodes N --seed S``, runs them one after
another in this process (the default agent and run settings, ground-truth perception, as
``benchmarks/check_same_actions.py``) and prints per episode its subtasks, the sum of its stored subtask distances
(``info.subtask_geodesic_distances_m``), its estimate (``goat_suites.common.episode_worker.estimated_actions``), the
actions taken and the CPU seconds spent. Then the rank correlation with CPU time and with actions of the estimate
and of the subtask count (the estimate before), and the makespan of longest first on ``--workers`` workers handed
out by each, by plan order and by the measured costs, beside an even split, in CPU seconds and in actions. CPU time,
unlike wall time, depends little on the other jobs of the machine (a heavily loaded one stretches it too, through
the caches: one episode took 12.6 s at load 4 and 16.5 s at load 13); actions do not depend on it at all. The
least-squares fit of actions per subtask (per metre of its distance, per subtask, more for the first) on these
subtasks is what the estimate's constants came from; the subtasks that ran out of actions are left out of it.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from goat_core.agent import AgentConfig
from goat_core.matching.matcher import MatcherConfig
from goat_suites.common.episode_worker import estimated_actions
from goat_suites.common.episodes import SUBTASK_DISTANCES_FIELD
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.common.work_units import longest_first_makespan, rank_correlation
from goat_suites.goat.generator import episode_config_for, generate_dataset
from sim_bridge.embedded.home import HomeConfig

Subtask = tuple[float, bool, int]  # (distance m, the first of its episode, actions) of a subtask within its budget


def _run_seed(seed: int, num_episodes: int, workers: int) -> list[Subtask]:
    """Run and report the episodes of one seed; their subtasks that stopped within their budget (for the fit)."""
    home_config = HomeConfig()
    episodes = generate_dataset(num_episodes, seed, home_config, episode_config_for(home_config)).episodes
    run_config = RunConfig()
    rows = []  # (estimate, subtasks, CPU s, actions)
    subtasks: list[Subtask] = []
    print(f"{'episode':<10}{'subtasks':>9}{'metres':>8}{'estimate':>10}{'actions':>9}{'CPU s':>8}")
    with EpisodeRunner(run_config, AgentConfig(), MatcherConfig()) as runner:
        for episode in episodes:
            started = time.process_time()
            records, _ = runner.run_episode(episode)
            cpu_s = time.process_time() - started
            distances = [float(d) for d in episode.info[SUBTASK_DISTANCES_FIELD]]
            actions = sum(r.num_actions for r in records)
            rows.append((estimated_actions(episode), len(episode.tasks), cpu_s, actions))
            subtasks += [(d, i == 0, r.num_actions) for i, (d, r) in enumerate(zip(distances, records, strict=True))
                         if r.num_actions < run_config.subtask_cap()]
            print(f"{episode.episode_id:<10}{len(episode.tasks):>9}{sum(distances):>8.1f}{rows[-1][0]:>10.0f}"
                  f"{actions:>9}{cpu_s:>8.2f}", flush=True)
    estimate, count, cpu, actions = (list(column) for column in zip(*rows, strict=True))
    print(f"seed {seed}: rank correlation with CPU time: estimate {rank_correlation(estimate, cpu):.2f}, subtask "
          f"count {rank_correlation(count, cpu):.2f}; with actions: estimate "
          f"{rank_correlation(estimate, actions):.2f}, subtask count {rank_correlation(count, actions):.2f}")
    plan = [-float(i) for i in range(len(rows))]
    # In CPU seconds, and in actions: the same every run, where a loaded machine stretches CPU times too (cache).
    for unit, costs in (("CPU s", cpu), ("actions", [float(a) for a in actions])):
        print(f"seed {seed}: longest first on {workers} workers, makespan in {unit}: by the estimate "
              f"{longest_first_makespan(costs, workers, estimate):.1f}, by subtask count "
              f"{longest_first_makespan(costs, workers, count):.1f}, in plan order "
              f"{longest_first_makespan(costs, workers, plan):.1f}, knowing them "
              f"{longest_first_makespan(costs, workers):.1f}; even split {sum(costs) / workers:.1f}", flush=True)
    return subtasks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, nargs="+", default=[5000], help="one run per seed")
    parser.add_argument("--episodes", type=int, nargs="+", default=[8],
                        help="episodes of each seed's run (one number: for every seed)")
    parser.add_argument("--workers", type=int, default=2, help="workers of the simulated longest-first runs")
    args = parser.parse_args()
    counts = args.episodes * len(args.seed) if len(args.episodes) == 1 else args.episodes
    if len(counts) != len(args.seed):
        parser.error(f"--episodes needs one number or one per seed ({len(args.seed)}), got {args.episodes}")
    subtasks: list[Subtask] = []
    for seed, num_episodes in zip(args.seed, counts, strict=True):
        subtasks += _run_seed(seed, num_episodes, args.workers)
    table = np.asarray(subtasks, dtype=np.float64)
    fit = np.linalg.lstsq(np.c_[table[:, 0], np.ones(len(table)), table[:, 1]], table[:, 2], rcond=None)[0]
    print(f"fit on {len(table)} subtasks of every seed: actions = {fit[0]:.1f} per metre + {fit[1]:.1f} per subtask "
          f"+ {fit[2]:.1f} for the first")
    return 0


if __name__ == "__main__":
    sys.exit(main())
