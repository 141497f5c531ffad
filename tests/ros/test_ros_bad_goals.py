"""Bad goals end their subtask with an error result that the evaluator records; the graph keeps running."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from goat_core.frames import habitat_quaternion_to_yaw, habitat_to_ros_position  # noqa: E402
from goat_interfaces.msg import Goal, SubtaskResult  # noqa: E402
from goat_interfaces.srv import ResetEpisode  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_ros.graph import NODES, params_args, repo_config_dir  # noqa: E402
from goat_suites.common.episode_files import save_goat_dataset  # noqa: E402
from goat_suites.common.episodes import GoatDataset  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset, task_goal_text  # noqa: E402


def _image(width: int, height: int, encoding: str, nbytes: int) -> Image:
    channels = 1 if encoding == "mono8" else 3
    return Image(width=width, height=height, encoding=encoding, step=width * channels, data=bytes(nbytes))


BAD_GOALS: list[tuple[dict[str, Any], str]] = [
    ({"modality": "smell", "text": "something that smells of coffee"}, "unknown goal modality"),
    ({"modality": "description", "text": "   "}, "non-empty text"),
    ({"modality": "object", "category": ""}, "non-empty category"),
    ({"modality": "image", "image": _image(64, 64, "mono8", 64 * 64)}, "encoding"),
    ({"modality": "image", "image": _image(16, 16, "rgb8", 16 * 16 * 3)}, "too small"),
    ({"modality": "image", "image": _image(64, 64, "rgb8", 1000)}, "bytes"),
]


@pytest.mark.slow
def test_bad_goals_are_recorded_as_errors_and_the_next_subtask_runs(tmp_path: Path) -> None:
    episode = generate_dataset(1, 77, config=EpisodeGenConfig(min_subtasks=3, max_subtasks=3)).episodes[0]
    index = next(i for i, t in enumerate(episode.tasks) if t.modality.value != "image")
    task = episode.tasks[index]
    episodes_file = tmp_path / "episodes.json"
    save_goat_dataset(GoatDataset(episodes=(episode,)), episodes_file)
    overrides = {"evaluator": {"episodes_file": str(episodes_file)}}
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Any] = []
    try:
        for name in ("sim_bridge", "controller", "evaluator"):
            spec = NODES[name]
            nodes.append(spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides.get(name, {}))))
            executor.add_node(nodes[-1])
        evaluator = nodes[-1]
        tester = Node("bad_goal_tester")
        executor.add_node(tester)
        results: list[SubtaskResult] = []
        tester.create_subscription(SubtaskResult, topics.RESULT, results.append, 10)
        goals = tester.create_publisher(Goal, topics.GOAL, 10)
        reset = tester.create_client(ResetEpisode, topics.RESET_EPISODE)
        spin_until(executor, lambda: reset.service_is_ready() and goals.get_subscription_count() > 0
                    and tester.count_publishers(topics.RESULT) > 0, 20.0, "the graph to be discovered")
        start = habitat_to_ros_position(episode.start_position)
        future = reset.call_async(ResetEpisode.Request(
            scene_id=episode.scene_id, start_x_m=float(start[0]), start_y_m=float(start[1]),
            start_yaw_rad=habitat_quaternion_to_yaw(episode.start_rotation)))
        spin_until(executor, future.done, 30.0, "the reset")
        assert future.result().success, future.result().message
        stamp = future.result().observation_stamp

        for k, (fields, _) in enumerate(BAD_GOALS):
            goals.publish(Goal(episode_id="bad-goals", subtask_index=k, max_actions=5, **fields))
            spin_until(executor, lambda k=k: len(results) > k, 20.0, f"the result of bad goal {k}")

        text = task_goal_text(episode, index, task)
        good = Goal(episode_id=episode.episode_id, subtask_index=index, modality=task.modality.value, max_actions=4,
                    category=text if task.modality.value == "object" else "",
                    text=text if task.modality.value == "description" else "")
        good.header.stamp = stamp
        goals.publish(good)
        spin_until(executor, lambda: len(results) > len(BAD_GOALS), 60.0, "the result of the valid goal")
    finally:
        for node in nodes:
            if hasattr(node, "close"):
                node.close()
            node.destroy_node()  # before shutdown, so no later test of this process still discovers its services
        executor.shutdown()
        rclpy.try_shutdown()

    for result, (fields, match) in zip(results, BAD_GOALS, strict=False):
        assert result.stop_reason == "error" and not result.success, fields["modality"]
        assert match in result.error, f"{fields['modality']}: {result.error!r} does not say {match!r}"
    last = results[len(BAD_GOALS)]
    assert last.episode_id == episode.episode_id and last.stop_reason in ("stop", "budget"), last.error
    assert 1 <= last.num_actions <= 4
    assert [r.stop_reason for r in evaluator.results] == ["error"] * len(BAD_GOALS) + [last.stop_reason]
    # Every goal with a known modality is also in the records that go to the results JSON.
    assert len(evaluator.records) == len(BAD_GOALS)
