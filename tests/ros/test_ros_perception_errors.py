"""The detector error model in the ROS graph: the perception, controller and instance_mapping nodes take a preset
(off by default, bad names refused), and a --ros run takes the same actions as the in-process run under it."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

import rclpy  # noqa: E402

from goat_core.errors import ConfigError  # noqa: E402
from goat_core.perception.detector_errors import ERROR_PRESETS, DetectorErrorModel  # noqa: E402
from goat_core.perception.gt import GroundTruthPerception  # noqa: E402
from goat_ros.graph import NODES, params_args, repo_config_dir  # noqa: E402
from goat_ros.perception_node import PerceptionNode  # noqa: E402


@pytest.fixture()
def ros_context():
    rclpy.init()
    try:
        yield
    finally:
        rclpy.shutdown()


def test_perception_node_runs_ground_truth_by_default_and_a_preset_when_asked(ros_context) -> None:
    plain = PerceptionNode(name="perception_plain")
    try:
        assert isinstance(plain._backend, GroundTruthPerception)
    finally:
        plain.destroy_node()
    node = PerceptionNode(name="perception_errors", cli_args=["--ros-args", "-p", "perception_errors:=harsh",
                                                              "-p", "perception_errors_seed:=3"])
    try:
        assert isinstance(node._backend, DetectorErrorModel)
        assert node._backend.config == ERROR_PRESETS["harsh"] and node._backend.seed == 3
    finally:
        node.destroy_node()


def test_perception_node_refuses_an_unknown_preset(ros_context) -> None:
    with pytest.raises(ConfigError, match="'sloppy'"):
        PerceptionNode(name="perception_bad", cli_args=["--ros-args", "-p", "perception_errors:=sloppy"])


# ------------------------------------------------------------------ the error model in the controller and the mapper
def _node(name: str, overrides: dict[str, Any]) -> Any:
    spec = NODES[name]
    return spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides))


def test_controller_and_mapping_nodes_take_an_error_preset_and_turn_evidence_on(ros_context) -> None:
    controller = _node("controller", {"perception_errors": "detic-like", "perception_errors_seed": 7})
    try:
        agent = controller.agent
        assert isinstance(agent._perception, DetectorErrorModel)
        assert agent._perception.config == ERROR_PRESETS["detic-like"] and agent._perception.seed == 7
        assert agent.memory.config.evidence.enabled  # evidence "auto": on with errors, as goat-nav bench
    finally:
        controller.destroy_node()
    mapping = _node("instance_mapping", {"perception_errors": "mild", "evidence": "off"})
    try:
        assert isinstance(mapping.mapper.perception, DetectorErrorModel)
        assert mapping.mapper.perception.config == ERROR_PRESETS["mild"]
        assert not mapping.mapper.memory.config.evidence.enabled
    finally:
        mapping.destroy_node()
    plain = _node("controller", {})
    try:
        assert isinstance(plain.agent._perception, GroundTruthPerception)
        assert not plain.agent.memory.config.evidence.enabled
    finally:
        plain.destroy_node()


def test_controller_refuses_an_unknown_evidence_mode(ros_context) -> None:
    with pytest.raises(ConfigError, match="'maybe'"):
        _node("controller", {"evidence": "maybe"})


@pytest.mark.slow
def test_graph_and_in_process_take_the_same_actions_under_an_error_preset() -> None:
    """The detector error model reaches a --ros run as it does in process: same detections, same actions."""
    import dataclasses

    from goat_core.agent import AgentConfig
    from goat_core.matching.matcher import MatcherConfig
    from goat_core.matching.selection import StackConfig
    from goat_core.perception.factory import PerceptionConfig
    from goat_nav.ros_bench import run_graph
    from goat_ros.controller_session import with_evidence
    from goat_suites.common.runner import EpisodeRunner, RunConfig
    from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset

    seed, preset = 4243, "detic-like"
    episodes = list(generate_dataset(2, seed, config=EpisodeGenConfig(min_subtasks=2, max_subtasks=3,
                                                                      max_start_geodesic_m=5.0)).episodes)
    run = RunConfig(max_actions_per_subtask=30)
    agent_config = with_evidence(AgentConfig(), True)
    stack = StackConfig(perception=PerceptionConfig(errors=preset, errors_seed=seed))
    reference = []
    with EpisodeRunner(run, agent_config, MatcherConfig(), stack=stack) as runner:
        for episode in episodes:
            reference.extend(runner.run_episode(episode)[0])
    plain = []
    with EpisodeRunner(run, dataclasses.replace(AgentConfig()), MatcherConfig()) as runner:
        for episode in episodes:
            plain.extend(runner.run_episode(episode)[0])
    # The preset changes what the agent does here (else this test would not show that it reached the graph).
    assert [r.actions for r in plain] != [r.actions for r in reference]
    rclpy.init()
    try:
        graph = run_graph(episodes, run, timeout_s=600, agent_config=agent_config, perception_errors=preset,
                          perception_errors_seed=seed)
    finally:
        rclpy.try_shutdown()
    assert len(graph) == len(reference)
    for ref, got in zip(reference, graph, strict=True):
        where = f"{ref.episode_id}/{ref.index}"
        assert got.actions == ref.actions, f"{where}: action sequences differ"
        assert (got.stop_reason, got.success, got.failure) == (ref.stop_reason, ref.success, ref.failure), where
