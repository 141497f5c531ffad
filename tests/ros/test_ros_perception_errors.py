"""The perception node's detector error model parameter: off by default, a preset when asked, bad names refused."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

import rclpy  # noqa: E402

from goat_core.errors import ConfigError  # noqa: E402
from goat_core.perception.detector_errors import ERROR_PRESETS, DetectorErrorModel  # noqa: E402
from goat_core.perception.gt import GroundTruthPerception  # noqa: E402
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
