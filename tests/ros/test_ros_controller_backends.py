"""The controller node builds its agent over the configured perception backend (models from local folders)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()


from goat_core.errors import ModelLoadError  # noqa: E402
from goat_ros.graph import NODES, params_args, repo_config_dir  # noqa: E402


def _controller(overrides: dict[str, Any]) -> Any:
    spec = NODES["controller"]
    return spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides))


def test_a_missing_model_folder_stops_the_controller_at_start_up(ros: None, tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="nope"):
        _controller({"perception_backend": "owlvit", "model_dir": str(tmp_path / "nope")})


@pytest.mark.slow
def test_the_controller_runs_an_owlvit_folder(ros: None, tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="needs the openvocab extra (pip install -e '.[openvocab]')")
    pytest.importorskip("transformers", reason="needs the openvocab extra (pip install -e '.[openvocab]')")
    from goat_core.perception.openvocab import OwlDetector
    from goat_core.perception.tiny_models import save_tiny_model

    folder = save_tiny_model(tmp_path / "owlvit", "owlvit", seed=0)
    node = _controller({"perception_backend": "owlvit", "model_dir": str(folder)})
    try:
        assert isinstance(node.agent._perception, OwlDetector)
        assert not node.agent._perception.persistent_keys  # detector keys are per frame, unlike ground truth
    finally:
        node.destroy_node()
