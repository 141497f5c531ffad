"""Identity: the ROS graph and the in-process loop take the same actions and score the same metrics."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from in_process import in_process_records  # noqa: E402

from goat_nav.ros_bench import run_graph  # noqa: E402
from goat_suites.common.runner import RunConfig  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset  # noqa: E402

# Short episodes for CI: three homes, two or three subtasks each, a small action budget, goals near the start.
GEN = EpisodeGenConfig(min_subtasks=2, max_subtasks=3, max_start_geodesic_m=5.0)
RUN = RunConfig(max_actions_per_subtask=30)
SEED = 4243


@pytest.mark.slow
def test_graph_matches_in_process_run() -> None:
    episodes = list(generate_dataset(3, SEED, config=GEN).episodes)
    reference = in_process_records(episodes, RUN)
    graph = run_graph(episodes, RUN, timeout_s=240)
    assert len(graph) == len(reference) == sum(len(e.tasks) for e in episodes)
    # The seed is chosen so that the check covers all three modalities and subtasks that end in a successful STOP.
    assert len({r.modality for r in reference}) == 3
    assert any(r.success for r in reference) and any(r.stop_reason == "budget" for r in reference)
    for ref, got in zip(reference, graph, strict=True):
        where = f"{ref.episode_id}/{ref.index}"
        assert (got.episode_id, got.index, got.modality) == (ref.episode_id, ref.index, ref.modality), where
        assert got.actions == ref.actions, f"{where}: action sequences differ"
        assert (got.stop_reason, got.success, got.num_actions) == (ref.stop_reason, ref.success, ref.num_actions)
        assert (got.failure, got.stop_detail) == (ref.failure, ref.stop_detail), where
        assert got.spl == pytest.approx(ref.spl, abs=1e-9), where
        assert got.path_length_m == pytest.approx(ref.path_length_m, abs=1e-9), where
        assert got.geodesic_m == pytest.approx(ref.geodesic_m, abs=1e-9), where
        assert got.distance_to_goal_m == pytest.approx(ref.distance_to_goal_m, abs=1e-9), where
