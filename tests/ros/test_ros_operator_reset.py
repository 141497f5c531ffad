"""On the robot the episode player asks the operator to place the robot at each episode start (no simulator).

Real rclpy nodes in one process: the episode player with ``reset_mode: operator``, goat_stretch's operator node,
and a tester that plays the controller (a STOP for every goal) and the person (the operator services). No
sim_bridge runs, so nothing serves ``/sim/reset_episode`` or ``/sim/render_view``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from geometry_msgs.msg import Pose2D as Pose2DMsg  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

from goat_core.errors import ConfigError  # noqa: E402
from goat_interfaces.msg import Goal, SubtaskOutcome, SubtaskResult  # noqa: E402
from goat_ros import conversions as cv  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_ros.graph import NODES, bringup_overrides, params_args, repo_config_dir  # noqa: E402
from goat_ros.params import EpisodePlayerParams  # noqa: E402
from goat_suites.common.episode_files import save_goat_dataset  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset  # noqa: E402
from goat_suites.ros.operator_node import CONFIRM_SERVICE, PLACED_SERVICE  # noqa: E402
from sim_bridge.embedded.home import HomeConfig  # noqa: E402

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _node(name: str, overrides: dict[str, Any]) -> Any:
    spec = NODES[name]
    return spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides))



def test_the_robot_bringup_resets_through_the_operator_and_the_simulator_is_the_default() -> None:
    assert EpisodePlayerParams().reset_mode == "sim"
    # a person places the robot: the reset deadline is longer than the simulator's
    assert bringup_overrides("stretch", {})["episode_player"] == {"reset_mode": "operator", "reset_timeout_s": 900.0}
    assert EpisodePlayerParams().reset_timeout_s < 900.0
    assert "episode_player" not in bringup_overrides("bench", {})


def test_an_unknown_reset_mode_stops_the_player(tmp_path: Path) -> None:
    episodes_file = tmp_path / "episodes.json"
    save_goat_dataset(generate_dataset(1, 5, config=EpisodeGenConfig(min_subtasks=1, max_subtasks=1)), episodes_file)
    rclpy.init()
    try:
        with pytest.raises(ConfigError, match="reset_mode must be one of sim, operator"):
            _node("episode_player", {"episodes_file": str(episodes_file), "reset_mode": "teleport"})
    finally:
        rclpy.try_shutdown()


@pytest.mark.slow
def test_the_player_waits_for_the_operator_to_place_the_robot(tmp_path: Path) -> None:
    dataset = generate_dataset(2, 77, HomeConfig(furniture="primitive"),  # the modalities below are this dataset's
                               config=EpisodeGenConfig(min_subtasks=3, max_subtasks=3))
    first, second = dataset.episodes
    assert [t.modality.value for t in first.tasks] == ["image", "object", "description"]
    episodes_file, results_file = tmp_path / "episodes.json", tmp_path / "real.json"
    save_goat_dataset(dataset, episodes_file)
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Any] = []
    try:
        nodes.append(_node("episode_player", {"episodes_file": str(episodes_file), "start_delay_s": 0.1,
                                              "reset_mode": "operator"}))
        nodes.append(_node("operator", {"prompt_on_stdin": False, "results_file": str(results_file)}))
        tester = Node("operator_reset_tester")
        nodes.append(tester)
        for node in nodes:
            executor.add_node(node)
        goals: list[Goal] = []
        results: list[SubtaskResult] = []
        done: list[String] = []
        tester.create_subscription(Goal, topics.GOAL, goals.append, 10)
        tester.create_subscription(SubtaskResult, topics.RESULT, results.append, 10)
        tester.create_subscription(String, topics.EPISODES_DONE, done.append, LATCHED)
        outcomes = tester.create_publisher(SubtaskOutcome, topics.OUTCOME, 10)
        placed = tester.create_client(SetBool, PLACED_SERVICE)
        confirm = tester.create_client(SetBool, CONFIRM_SERVICE)

        def answer(client: Any, yes: bool, what: str) -> None:
            """Call the operator service until a question is waiting for this answer (as a person would)."""
            deadline = time.monotonic() + 15.0
            while True:
                future = client.call_async(SetBool.Request(data=yes))
                spin_until(executor, future.done, 5.0, what)
                if future.result().success:
                    return
                assert time.monotonic() < deadline, f"no question was waiting for {what}"
                for _ in range(4):
                    executor.spin_once(timeout_sec=0.05)

        spin_until(executor, lambda: placed.service_is_ready() and confirm.service_is_ready(), 10.0, "discovery")
        settle_until = time.monotonic() + 1.0
        spin_until(executor, lambda: time.monotonic() > settle_until, 2.0, "a second of waiting")
        assert goals == [] and results == []  # nothing is played before the robot is placed
        placed_at_ns = tester.get_clock().now().nanoseconds
        answer(placed, True, "the first placement")

        # Image goal: no /sim/render_view on the robot, so the player reports it and the operator records it.
        spin_until(executor, lambda: len(results) == 1, 10.0, "the image subtask's error")
        assert results[0].stop_reason == "error" and "render_view" in results[0].error
        for k in (1, 2):
            spin_until(executor, lambda k=k: len(goals) == k, 10.0, f"goal {k}")
            goal = goals[-1]
            assert (goal.episode_id, goal.subtask_index) == (first.episode_id, k)
            assert cv.ns_from_time(goal.header.stamp) >= placed_at_ns  # stamped after the robot was placed
            outcomes.publish(SubtaskOutcome(episode_id=goal.episode_id, subtask_index=k, modality=goal.modality,
                                            stop_reason=SubtaskOutcome.STOP, actions=[1, 0],
                                            poses=[Pose2DMsg(), Pose2DMsg(x=0.25)]))
            answer(confirm, k == 1, f"the verdict of subtask {k}")
            spin_until(executor, lambda k=k: len(results) == k + 1, 10.0, f"result {k}")
        assert [r.success for r in results] == [False, True, False]

        # The operator cannot place the robot for the second episode: its subtasks are errors, none is played.
        answer(placed, False, "the second placement")
        spin_until(executor, lambda: len(done) == 1, 10.0, "the end of the file")
        assert len(goals) == 2
        assert [(r.episode_id, r.stop_reason) for r in results[3:]] == [(second.episode_id, "error")] * 3
        assert all("could not place the robot" in r.error for r in results[3:])
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
    subtasks = json.loads(results_file.read_text())["subtasks"]  # the operator's results JSON: every subtask
    assert [(s["episode_id"], s["success"]) for s in subtasks] == (
        [(first.episode_id, False), (first.episode_id, True), (first.episode_id, False)]
        + [(second.episode_id, False)] * 3)
