"""Where an episode's CPU goes: cProfile over generating and running procedural GOAT episodes, as a table of parts.

    python benchmarks/profile_episode.py [--homes large-furnished] [--seed 1000] [--episodes 1] [--first 0]
                                         [--out runs/episode.prof]

Runs what ``goat-nav bench --homes H --workers 1`` runs for episodes ``--first`` .. ``--first + --episodes - 1`` of
the seed (episode generation, the home's simulator, every subtask, scoring; the default agent, ground-truth
perception) under cProfile and prints two tables:

* phases: the cumulative CPU of the entry points of a run (generation, simulator build, rendering, the agent's
  act(), the simulator's step and the evaluator's geodesics), each as a share of the whole profiled run;
* the agent's act() by module: each project module's own time, with the time of library code (numpy, scipy,
  scikit-fmm, OpenCV, MuJoCo) charged to the project function that called it.

cProfile adds its own cost to every Python call (about 1.5-2x on this code), so the shares are what to read, not
the seconds; ``benchmarks/check_same_actions.py`` gives each episode's CPU without the profiler.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from goat_core.agent import AgentConfig
from goat_core.matching.matcher import MatcherConfig
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import episode_config_for, generate_dataset
from sim_bridge.embedded.home import HOME_KINDS, home_config_for

Key = tuple[str, int, str]

# (phase, file suffix, function name): entry points whose calls do not nest in each other's (the simulator's step
# is counted without the observation it renders)
PHASES: tuple[tuple[str, str, str], ...] = (
    ("episode generation (homes, view points, goals)", "goat_suites/goat/generator.py", "generate_dataset"),
    ("home and simulator build for the run", "sim_bridge/embedded/sim.py", "__init__"),
    ("rendering: observe()", "sim_bridge/embedded/sim.py", "observe"),
    ("simulator step without rendering", "sim_bridge/embedded/sim.py", "step"),
    ("agent act() (perception, mapping, memory, frontiers, planning)", "goat_core/agent/dispatcher.py", "act"),
    ("evaluator: goal distance fields (FMM)", "sim_bridge/embedded/geodesic.py", "_march"),
    ("goal pictures of image goals", "sim_bridge/embedded/subtask_env.py", "goal_picture"),
    ("subtask plans (goal wording, places)", "goat_suites/common/subtask_plan.py", "plan_subtask"),
    ("scoring the subtasks", "goat_suites/common/runner.py", "_score"),
)
PROJECT = ("goat_core/", "goat_suites/", "sim_bridge/", "goat_nav/")


def _is_project(key: Key) -> bool:
    return any(part in key[0] for part in PROJECT)


def _module(key: Key) -> str:
    path = key[0].replace("\\", "/")
    for part in PROJECT:
        if part in path:
            return part + path.split(part, 1)[1]
    return path


def _keys(stats: dict[Key, Any], file_suffix: str, name: str) -> set[Key]:
    return {k for k in stats if k[0].replace("\\", "/").endswith(file_suffix) and k[2] == name}


def _cumulative(stats: dict[Key, Any], file_suffix: str, name: str) -> float:
    """Cumulative time of the function, less what it spent in the observations it rendered (``observe``)."""
    keys = _keys(stats, file_suffix, name)
    observe = _keys(stats, "sim_bridge/embedded/sim.py", "observe")
    nested = sum(v[4][k][3] for o in observe - keys for k in keys for v in [stats[o]] if k in v[4])
    return sum(stats[k][3] for k in keys) - nested


def _own_time_by_module(stats: dict[Key, Any], inside: set[Key]) -> dict[str, float]:
    """Own time of the functions in ``inside`` by project module, library time charged to its project callers
    (split by the time each caller spent in it)."""
    charged: dict[str, float] = defaultdict(float)

    def charge(key: Key, seconds: float, depth: int) -> None:
        if _is_project(key) or depth > 30:
            if key in inside:
                charged[_module(key)] += seconds
            return
        callers = stats[key][4]
        column = 2 if sum(c[2] for c in callers.values()) > 0 else 3  # own time from each caller, else cumulative
        total = sum(c[column] for c in callers.values())
        for caller, c in callers.items():
            if caller in stats and total > 0:
                charge(caller, seconds * c[column] / total, depth + 1)

    for key, value in stats.items():
        charge(key, value[2], 0)
    return charged


def _callees_of(stats: dict[Key, Any], roots: set[Key]) -> set[Key]:
    """Every function called (directly or not) from ``roots``, the roots included."""
    children: dict[Key, list[Key]] = defaultdict(list)
    for key, value in stats.items():
        for caller in value[4]:
            children[caller].append(key)
    seen, todo = set(roots), list(roots)
    while todo:
        for child in children[todo.pop()]:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--homes", choices=HOME_KINDS, default="large-furnished")
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--first", type=int, default=0, help="index of the first episode of the seed to run")
    parser.add_argument("--out", type=Path, default=None, help="also write the raw profile (pstats) here")
    args = parser.parse_args()
    if args.episodes < 1 or args.first < 0:
        parser.error(f"--episodes must be >= 1 and --first >= 0, got {args.episodes} and {args.first}")
    home_config = home_config_for(args.homes)
    profile = cProfile.Profile(time.process_time)  # CPU of the whole process: llvmpipe's render threads too
    cpu0 = time.process_time()
    profile.enable()
    dataset = generate_dataset(args.first + args.episodes, args.seed, home_config, episode_config_for(home_config))
    actions = 0
    with EpisodeRunner(RunConfig(), AgentConfig(), MatcherConfig()) as runner:
        for episode in dataset.episodes[args.first:]:
            records, _ = runner.run_episode(episode)
            actions += sum(r.num_actions for r in records)
    profile.disable()
    cpu = time.process_time() - cpu0
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        profile.dump_stats(str(args.out))
    stats: dict[Key, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.values())
    print(f"{args.homes}, seed {args.seed}, episodes {args.first}..{args.first + args.episodes - 1} "
          f"(generated {args.first + args.episodes}): {actions} actions, {cpu:.1f} s CPU under the profiler")
    print(f"{'phase':<66}{'s':>8}{'share':>8}")
    rest = total
    for label, suffix, name in PHASES:
        seconds = _cumulative(stats, suffix, name)
        rest -= seconds
        print(f"{label:<66}{seconds:>8.1f}{100 * seconds / total:>7.1f}%")
    print(f"{'the rest (imports, the runner, records)':<66}{rest:>8.1f}{100 * rest / total:>7.1f}%")
    print(f"{'all (profiled)':<66}{total:>8.1f}{100.0:>7.1f}%")
    acts = _keys(stats, "goat_core/agent/dispatcher.py", "act")
    inside = _callees_of(stats, acts)
    by_module = _own_time_by_module(stats, inside)
    act_total = sum(by_module.values())
    print(f"\nagent act() by module (own time, library calls charged to their caller): {act_total:.1f} s")
    for module, seconds in sorted(by_module.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {module:<64}{seconds:>8.1f}{100 * seconds / total:>7.1f}% of all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
