"""The ROS evaluator's results file says how much of its episode file it holds: ``complete`` false (and
``goat-nav report`` says PARTIAL RUN) until every subtask of the file is scored, as a ``goat-nav bench`` file does.
A graph stopped before the end (Ctrl+C, a lost robot) thus never leaves a file that reads as a whole run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from goat_interfaces.msg import SubtaskOutcome  # noqa: E402
from goat_ros.graph import NODES, params_args, repo_config_dir  # noqa: E402
from goat_suites.common.episode_files import save_goat_dataset  # noqa: E402
from goat_suites.common.episodes import GoatDataset  # noqa: E402
from goat_suites.common.outputs import partial_run_note  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset  # noqa: E402


def test_the_evaluators_file_is_partial_until_every_planned_subtask_is_scored(ros: None, tmp_path: Path) -> None:
    episode = generate_dataset(1, 78, config=EpisodeGenConfig(min_subtasks=2, max_subtasks=2)).episodes[0]
    episodes_file, results_file = tmp_path / "episodes.json", tmp_path / "results.json"
    save_goat_dataset(GoatDataset(episodes=(episode,)), episodes_file)
    spec = NODES["evaluator"]
    node = spec.load_class()(cli_args=params_args(spec, repo_config_dir(), {
        "episodes_file": str(episodes_file), "results_file": str(results_file)}))
    try:
        for index in range(2):
            # The controller's outcome of one subtask (stopped without moving), as it arrives on the topic.
            node._on_outcome(SubtaskOutcome(episode_id=episode.episode_id, subtask_index=index,
                                            modality=episode.tasks[index].modality.value,
                                            stop_reason=SubtaskOutcome.BUDGET))
            data = json.loads(results_file.read_text())
            meta = data["meta"]
            assert (meta["planned_episodes"], meta["planned_subtasks"]) == (1, 2)
            assert meta["complete"] is (index == 1)
            note = partial_run_note(meta, len(data["subtasks"]))
            assert (note is None) is (index == 1)
        assert note is None
    finally:
        node.destroy_node()
