"""Per-step latency through the ROS 2 graph versus the in-process loop, as medians on this machine.

    python benchmarks/bench_ros_overhead.py [--episodes 2] [--seed 3000] [--max-actions 40]

A step is the time from one ``Agent.act`` call to the next within a run: in process that is the agent plus one
simulator step; through the graph (the bench bringup, all nodes in one process on one executor, as
``goat-nav launch bench`` and ``goat-nav bench --ros`` run it) it adds the ExecuteAction round trip, publishing
and receiving the observation set (rgb8, 32FC1 depth, 32SC1 segmentation at 360x640, info, odometry, joint
states, TF), message conversions and the rviz topics. Target: graph overhead <= 50 ms per step (median).
Needs ROS 2 (bash scripts/setup_ros.sh).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from typing import Any, Callable

import numpy as np
from latency import summarise_ms

from goat_core.agent import AgentConfig
from goat_core.matching.matcher import MatcherConfig
from goat_nav.ros_bench import run_graph
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset


def _timed(act: Callable[..., Any], stamps: list[float]) -> Callable[..., Any]:
    """Wrap Agent.act to note when each call starts (a measurement probe; the agent itself runs unchanged)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        stamps.append(time.perf_counter())
        return act(*args, **kwargs)

    return wrapper


def _intervals_ms(stamps: list[float]) -> np.ndarray:
    return np.diff(np.asarray(stamps)) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=3000)
    parser.add_argument("--max-actions", type=int, default=40, help="action budget per subtask")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 200)))

    gen = EpisodeGenConfig(min_subtasks=3, max_subtasks=3)
    episodes = list(generate_dataset(args.episodes, args.seed, config=gen).episodes)
    run_config = RunConfig(max_actions_per_subtask=args.max_actions)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; {len(episodes)} episodes, "
          f"{sum(len(e.tasks) for e in episodes)} subtasks, budget {args.max_actions}")

    local: list[float] = []
    with EpisodeRunner(run_config, AgentConfig(), MatcherConfig()) as runner:
        runner.agent.act = _timed(runner.agent.act, local)  # type: ignore[method-assign]
        for episode in episodes:
            runner.run_episode(episode)

    graph: list[float] = []

    def probe(nodes: list[Any]) -> None:
        controller = next(n for n in nodes if type(n).__name__ == "ControllerNode")
        controller.agent.act = _timed(controller.agent.act, graph)

    run_graph(episodes, run_config, timeout_s=1800, on_start=probe)

    local_ms, graph_ms = _intervals_ms(local), _intervals_ms(graph)
    print(f"{'in process':<12} {summarise_ms(local_ms)}")
    print(f"{'ROS graph':<12} {summarise_ms(graph_ms)}")
    overhead = float(np.median(graph_ms) - np.median(local_ms))
    print(f"graph overhead (median difference) {overhead:.1f} ms per step; ratio graph/in-process "
          f"{np.median(graph_ms) / np.median(local_ms):.2f} (target overhead <= 50 ms)")


if __name__ == "__main__":
    main()
