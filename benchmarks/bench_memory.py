"""Resident memory over a long episode: a 5000-action GOAT-Bench episode on a large home stays below 1.5 GB.

    python benchmarks/bench_memory.py [--homes large-furnished] [--seed 1000] [--actions 5000] [--every 250]

GOAT-Bench gives an episode 5000 actions; a lifelong agent keeps its map and instance memory for all of them, so
what it holds must be bounded by the home, not grow with the steps. One procedural episode of the seed has its
subtasks repeated until the episode budget (``--actions``) is spent, in one home, with memory kept across the
subtasks (the default agent). Every ``--every`` actions it prints the process's resident memory (VmRSS), the
occupancy grid's bytes and known extent, and the instance memory: instances, surface points and stored views
with their bytes. At the end it checks the bounds: resident memory below ``--max-rss-mb``, at most
``max_points_per_instance`` points and ``views_per_instance`` views per instance; exit status 1 if one fails.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

from goat_core.agent import Agent, AgentConfig
from goat_core.matching.matcher import MatcherConfig
from goat_core.types import DiscreteAction, Observation
from goat_suites.common.results import SubtaskRecord
from goat_suites.common.runner import EpisodeRunner, RunConfig, SubtaskTrace
from goat_suites.goat.generator import episode_config_for, generate_dataset
from sim_bridge.embedded.home import HOME_KINDS, home_config_for


class _BudgetSpent(Exception):
    """Raised from the step callback once the episode budget is spent: the subtasks left would run no action."""


def resident_mb() -> float:
    """The process's resident set size (VmRSS of /proc/self/status), in MB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS line in /proc/self/status (this script needs Linux)")


def peak_resident_mb() -> float:
    """The process's peak resident set size (VmHWM), in MB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmHWM line in /proc/self/status (this script needs Linux)")


@dataclasses.dataclass(frozen=True)
class MemoryState:
    """What the agent holds after some actions."""

    actions: int
    rss_mb: float
    grid_mb: float  # every layer of the occupancy grid
    known_m2: float  # the known crop of the grid
    instances: int
    points: int
    max_points: int  # of one instance
    views: int
    max_views: int  # of one instance
    memory_mb: float  # points and view crops of every instance kept

    def line(self) -> str:
        return (f"{self.actions:5d} actions: RSS {self.rss_mb:7.1f} MB | grid {self.grid_mb:5.1f} MB, known "
                f"{self.known_m2:6.1f} m2 | memory {self.instances:4d} instances, {self.points:7d} points "
                f"(max {self.max_points}), {self.views:5d} views (max {self.max_views}), {self.memory_mb:6.1f} MB")


def memory_state(agent: Agent, actions: int) -> MemoryState:
    grid = agent.occupancy
    layers = (grid.obstacle, grid.explored, grid.collision, grid.trail, grid.sight_block)
    box = grid.known_box(0)
    instances = list(agent.memory.candidates.values())
    points = [inst.points_xyz_m.shape[0] for inst in instances]
    views = [len(inst.views) for inst in instances]
    memory_bytes = sum(inst.points_xyz_m.nbytes + sum(v.rgb.nbytes + v.mask.nbytes for v in inst.views)
                       for inst in instances)
    return MemoryState(
        actions=actions, rss_mb=resident_mb(), grid_mb=sum(layer.nbytes for layer in layers) / 2 ** 20,
        known_m2=box.shape[0] * box.shape[1] * grid.resolution_m ** 2, instances=len(instances),
        points=sum(points), max_points=max(points, default=0), views=sum(views), max_views=max(views, default=0),
        memory_mb=memory_bytes / 2 ** 20)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--homes", choices=HOME_KINDS, default="large-furnished")
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--actions", type=int, default=5000, help="the episode's action budget")
    parser.add_argument("--every", type=int, default=250, help="print the state every this many actions")
    parser.add_argument("--max-rss-mb", type=float, default=1500.0, help="the bound resident memory must stay under")
    args = parser.parse_args(argv)
    if args.actions < 1 or args.every < 1:
        parser.error(f"--actions and --every must be >= 1, got {args.actions} and {args.every}")
    config = home_config_for(args.homes)
    episode = generate_dataset(1, args.seed, config, episode_config_for(config)).episodes[0]
    # Subtasks again and again in the same home (a subtask takes at least one action), until the budget is spent.
    repeats = -(-args.actions // len(episode.tasks))
    long_episode = dataclasses.replace(episode, tasks=episode.tasks * repeats)
    print(f"{args.homes} home of episode {episode.scene_id}/{episode.episode_id}: {len(episode.tasks)} subtasks "
          f"repeated up to {len(long_episode.tasks)}, budget {args.actions} actions; RSS at start "
          f"{resident_mb():.1f} MB")
    states: list[MemoryState] = []
    records: list[SubtaskRecord] = []
    agent_config = AgentConfig()
    with EpisodeRunner(RunConfig(max_actions_per_episode=args.actions, record_actions=False), agent_config,
                       MatcherConfig()) as runner:
        agent = runner.agent
        assert isinstance(agent, Agent)
        count = 0

        def on_step(obs: Observation, action: DiscreteAction) -> None:
            nonlocal count
            count += 1
            if count % args.every == 0:
                states.append(memory_state(agent, count))
                print(states[-1].line(), flush=True)
            if count >= args.actions:
                raise _BudgetSpent

        def on_subtask(trace: SubtaskTrace) -> None:
            records.append(trace.record)

        t0 = time.perf_counter()
        try:
            runner.run_episode(long_episode, on_step=on_step, on_subtask=on_subtask)
        except _BudgetSpent:
            pass  # the subtask under way when the budget ran out is not scored
        elapsed = time.perf_counter() - t0
        final = memory_state(agent, count)
    # VmHWM as the kernel keeps it, or the largest sample if that is larger (the kernel updates VmHWM lazily).
    peak_mb = max([peak_resident_mb(), final.rss_mb, *(state.rss_mb for state in states)])
    print(f"{count} actions in {elapsed:.0f} s, {len(records)} subtasks finished "
          f"({sum(r.success for r in records)} succeeded); RSS now {final.rss_mb:.1f} MB, "
          f"peak {peak_mb:.1f} MB")
    mem = agent_config.memory
    checks = {
        f"peak RSS {peak_mb:.1f} MB < {args.max_rss_mb:.0f} MB": peak_mb < args.max_rss_mb,
        f"points per instance <= {mem.max_points_per_instance}": final.max_points <= mem.max_points_per_instance,
        f"views per instance <= {mem.views_per_instance}": final.max_views <= mem.views_per_instance,
    }
    if len(states) >= 2:
        half = states[len(states) // 2]
        checks[f"RSS growth over the second half {final.rss_mb - half.rss_mb:+.1f} MB (< 100 MB)"] = \
            final.rss_mb - half.rss_mb < 100.0
    for text, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {text}")
    print("load average (1, 5, 15 min) at end: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
