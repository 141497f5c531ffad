"""No wait without a deadline: a bench graph with the controller missing still plays every subtask, each ending
as an ``error`` that names what did not answer, within the episode player's deadlines (real nodes, one process).
An outcome that comes after the player gave up on its subtask is not scored twice."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from goat_interfaces.msg import SubtaskOutcome  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_ros.graph import NODES, params_args, repo_config_dir  # noqa: E402
from goat_suites.common.episode_files import save_goat_dataset  # noqa: E402
from goat_suites.common.episodes import GoatDataset  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset  # noqa: E402


@pytest.mark.slow
def test_a_missing_controller_ends_each_subtask_with_a_named_error_in_time(tmp_path: Path) -> None:
    episode = generate_dataset(1, 78, config=EpisodeGenConfig(min_subtasks=2, max_subtasks=2)).episodes[0]
    episodes_file = tmp_path / "episodes.json"
    save_goat_dataset(GoatDataset(episodes=(episode,)), episodes_file)
    overrides: dict[str, dict[str, Any]] = {
        "episode_player": {"episodes_file": str(episodes_file), "peers_timeout_s": 3.0, "start_delay_s": 0.2,
                           "result_timeout_s": 2.0},
        "evaluator": {"episodes_file": str(episodes_file)}}
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Any] = []
    try:
        for name in ("sim_bridge", "episode_player", "evaluator"):  # no controller
            spec = NODES[name]
            nodes.append(spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides.get(name, {}))))
            executor.add_node(nodes[-1])
        player, evaluator = nodes[1], nodes[2]
        started = time.monotonic()
        # start-up ~3 s + per subtask 2 s (+ loading the scene); without deadlines this never ends
        spin_until(executor, lambda: player.done, 60.0, "the episode player to finish")
        elapsed_s = time.monotonic() - started
        # The controller coming back late with its own outcome for subtask 0: scored once already, dropped.
        late = rclpy.create_node("late_controller")
        executor.add_node(late)
        nodes.append(late)
        outcomes = late.create_publisher(SubtaskOutcome, topics.OUTCOME, 10)
        spin_until(executor, lambda: outcomes.get_subscription_count() > 0, 10.0, "the evaluator's subscription")
        outcomes.publish(SubtaskOutcome(episode_id=episode.episode_id, subtask_index=0, modality="object",
                                        stop_reason=SubtaskOutcome.BUDGET))
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
    finally:
        for node in nodes:
            node.destroy_node()
        executor.shutdown()
        rclpy.shutdown()
    records = evaluator.records
    assert [(r.episode_id, r.index) for r in records] == [(episode.episode_id, i) for i in range(2)]
    for record in records:
        assert record.stop_reason == "error"
        assert record.error is not None
        assert "no subtask result within 2.0 s" in record.error and "(the controller)" in record.error, record.error
    assert elapsed_s < 45.0
