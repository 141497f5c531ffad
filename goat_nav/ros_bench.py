"""`goat-nav bench --ros`: replay episodes through the ROS 2 graph and write the in-process bench's results JSON.

The bench bringup (``goat_ros.graph.BRINGUPS["bench"]``: sim_bridge, controller, episode_player, evaluator) runs
in this process on one executor with the params YAMLs of ``config/``; the benchmark settings (budget, success
radius and metric) are passed as parameter overrides, the agent's settings (memory ablation included) as a
settings file the controller reads (its ``agent_config`` parameter). The episode player shares the episode
budget among an episode's subtasks as the in-process runner does (``goat_suites.ros.episode_budget``), so an official
run is ``goat-bench v1`` through the graph too. The messages go through the real rmw.
``--record RUN`` adds the recorder node, which writes the graph's topics into the rosbag2 MCAP bag RUN/ (the run's
settings in its metadata.yaml, as ``goat-nav bench --record`` keeps them).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

from goat_core.agent import AgentConfig
from goat_core.agent.config_file import agent_config_to_yaml
from goat_core.errors import GoatError
from goat_nav.launcher import _require_ros, record_overrides
from goat_ros.record import bag_folder, check_bag_path
from goat_suites.common.episode_files import save_goat_dataset
from goat_suites.common.episodes import GoatDataset, GoatEpisode
from goat_suites.common.outputs import run_progress
from goat_suites.common.realism import realism_from_args, ros_realism_overrides
from goat_suites.common.results import SubtaskRecord, summarise, write_results_json
from goat_suites.common.resume import record_command
from goat_suites.common.runner import RunConfig
from sim_bridge.embedded.realism import RealismConfig

if TYPE_CHECKING:
    from goat_ros.recorder_node import RecorderNode


def graph_overrides(episodes_file: Path, run_config: RunConfig, agent_config_file: Path,
                    recorder: Optional[Mapping[str, Any]] = None, perception_errors: str = "off",
                    perception_errors_seed: int = 0, evidence: bool = False,
                    realism: Optional[RealismConfig] = None) -> dict[str, dict[str, Any]]:
    """The parameter overrides that make the bench bringup run ``run_config`` with the agent settings file
    ``agent_config_file`` (and record, given ``recorder``); the controller's perception goes through the
    detector error model ``perception_errors`` (seeded) with evidence over views on or off, as in process, under
    the realism profile ``realism`` (default ideal)."""
    overrides: dict[str, dict[str, Any]] = {
        "episode_player": {"episodes_file": str(episodes_file),
                           "max_actions_per_episode": run_config.max_actions_per_episode or 0,
                           "max_actions_per_subtask": run_config.max_actions_per_subtask or 0, "start_delay_s": 0.2,
                           "image_goal_category": run_config.image_goal_category},
        "evaluator": {"episodes_file": str(episodes_file), "success_metric": run_config.success_metric,
                      "success_distance_m": run_config.success_distance_m},
        "controller": {"agent_config": str(agent_config_file), "perception_errors": perception_errors,
                       "perception_errors_seed": int(perception_errors_seed), "evidence": "on" if evidence else "off"},
    }
    if recorder is not None:
        overrides["recorder"] = dict(recorder)
    if realism is not None and not realism.is_ideal:
        for node, params in ros_realism_overrides(realism).items():
            overrides.setdefault(node, {}).update(params)
    return overrides


def _let_recorder_catch_up(executor: Any, recorder: RecorderNode, num_results: int, timeout_s: float = 5.0) -> None:
    """The player finishes on the last result, which the recorder (another subscriber) may not have taken yet:
    spin until it has every published result and no message came for a moment (at most ``timeout_s``)."""
    from goat_ros import topics

    deadline = time.monotonic() + timeout_s
    quiet_since, written = time.monotonic(), -1
    while time.monotonic() < deadline:
        total = sum(recorder.bag.message_counts.values())
        if total != written:
            quiet_since, written = time.monotonic(), total
        has_results = topics.RESULT not in recorder.bag.topics or recorder.received(topics.RESULT) >= num_results
        if has_results and time.monotonic() - quiet_since >= 0.2:
            return
        executor.spin_once(timeout_sec=0.05)


def _recorder_params(record: Path, run_info: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The recorder's parameters; RecordError naming the problem if no bag can be made at ``record``."""
    params = record_overrides(record)
    if run_info is not None:
        params["run_info"] = json.dumps(dict(run_info), sort_keys=True, default=str)
    return params


def run_graph(episodes: Sequence[GoatEpisode], run_config: RunConfig, timeout_s: Optional[float] = None,
              on_record: Optional[Callable[[list[SubtaskRecord]], None]] = None,
              on_start: Optional[Callable[[list[Any]], None]] = None, record: Optional[Path] = None,
              run_info: Optional[Mapping[str, Any]] = None,
              agent_config: Optional[AgentConfig] = None, perception_errors: str = "off",
              perception_errors_seed: int = 0, realism: Optional[RealismConfig] = None) -> list[SubtaskRecord]:
    """Run ``episodes`` through the bench graph with ``agent_config`` (default: the defaults) under the realism
    profile ``realism`` (default ideal); return the evaluator's records (one per subtask, in order).
    ``perception_errors`` (a preset of goat_core.perception.detector_errors, seeded by ``perception_errors_seed``)
    puts the controller's ground truth through the detector error model, as ``goat-nav bench --perception-errors``
    does in process.

    ``on_record`` gets all records so far whenever one is added; ``on_start`` gets the nodes once they exist.
    ``record`` names a new rosbag2 bag (checked before any node starts) that the recorder node writes, with
    ``run_info`` (JSON-able) in its metadata; the bag is closed however the run ends.
    """
    recorder_params = _recorder_params(record, run_info) if record is not None else None
    _require_ros()
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from goat_ros.graph import node_factories
    from goat_ros.recorder_node import RecorderNode
    from goat_suites.ros.episode_player_node import EpisodePlayerNode
    from goat_suites.ros.evaluator_node import EvaluatorNode

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="goat_ros_bench_") as tmp:
        episodes_file = Path(tmp) / "episodes.json"
        save_goat_dataset(GoatDataset(episodes=tuple(episodes)), episodes_file)
        agent_config_file = Path(tmp) / "agent.yaml"
        agent_config_file.write_text(agent_config_to_yaml(agent_config))
        evidence = (agent_config or AgentConfig()).memory.evidence.enabled
        owns_context = not rclpy.ok()
        if owns_context:
            rclpy.init()
        executor = SingleThreadedExecutor()
        nodes: list[Any] = []
        try:
            overrides = graph_overrides(episodes_file, run_config, agent_config_file, recorder_params,
                                        perception_errors, perception_errors_seed, evidence, realism)
            for factory in node_factories("bench", overrides, record=record is not None):
                nodes.append(factory())
                executor.add_node(nodes[-1])
            player = next(n for n in nodes if isinstance(n, EpisodePlayerNode))
            evaluator = next(n for n in nodes if isinstance(n, EvaluatorNode))
            recorder = next((n for n in nodes if isinstance(n, RecorderNode)), None)
            if on_start is not None:
                on_start(nodes)
            seen = 0
            while not player.done:
                executor.spin_once(timeout_sec=0.1)
                if len(evaluator.records) != seen:
                    seen = len(evaluator.records)
                    if on_record is not None:
                        on_record(list(evaluator.records))
                if timeout_s is not None and time.monotonic() - started > timeout_s:
                    raise GoatError(f"the ROS graph did not finish {len(episodes)} episodes in {timeout_s:.0f} s "
                                    f"({len(evaluator.records)} subtasks scored)")
            if recorder is not None:
                _let_recorder_catch_up(executor, recorder, len(evaluator.results))
            return list(evaluator.records)
        finally:
            for node in reversed(nodes):
                close = getattr(node, "close", None)
                if close is not None:
                    close()
                executor.remove_node(node)
                node.destroy_node()
            executor.shutdown()
            if owns_context:
                rclpy.try_shutdown()


def run_ros_bench(args: argparse.Namespace) -> int:
    from goat_nav.bench_cmd import format_summary, prepare_run
    from goat_suites.common.suite import agent_config_from_args

    started = time.monotonic()
    if args.record is not None:
        check_bag_path(args.record)  # a bad --record path fails before any episode is generated
    episodes, run_config, meta = prepare_run(args, "ros_graph")
    run_info = dict(meta)  # as prepared: the bag's run info does not depend on --out or the run's duration
    record_command(args, meta)

    def write(records: list[SubtaskRecord]) -> None:
        if args.out is not None:
            meta["elapsed_s"] = round(time.monotonic() - started, 1)
            meta.update(run_progress(episodes, len(records)))
            write_results_json(args.out, records, summarise(records), meta)
        if not args.quiet:
            print(f"\r{len(records)} subtasks scored", end="", file=sys.stderr, flush=True)

    records = run_graph(episodes, run_config, on_record=write, record=args.record, run_info=run_info,
                        agent_config=agent_config_from_args(args), perception_errors=args.perception_errors,
                        perception_errors_seed=int(args.seed or 0), realism=realism_from_args(args))
    write(records)
    if not args.quiet:
        print(file=sys.stderr)
    print(f"homes: {meta['homes']}")
    print(format_summary(summarise(records), meta["protocol"]))
    print(f"{len(episodes)} episodes, {len(records)} subtasks through the ROS graph in "
          f"{time.monotonic() - started:.0f} s")
    if args.out is not None:
        print(f"results: {args.out}")
    if args.record is not None:
        folder = bag_folder(args.record)
        print(f"recording: {folder} (rosbag2: metadata.yaml + {folder.name}.mcap)")
    if args.report is not None:
        print("--report is not written for --ros runs yet (the graph does not record trajectories)", file=sys.stderr)
    return 0
