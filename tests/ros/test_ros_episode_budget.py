"""The ROS graph runs GOAT-Bench's episode budget as the in-process runner does: the actions are shared by the
subtasks of an episode, and once they are spent the later subtasks end by budget with no action."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from in_process import in_process_records  # noqa: E402

from goat_nav.ros_bench import run_graph  # noqa: E402
from goat_suites.common.runner import RunConfig  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset  # noqa: E402

# One short episode of three subtasks and an episode budget of 40 actions: the first subtask takes part of it
# (it STOPs after 25 actions), the second runs the rest out, the third finds it spent.
GEN = EpisodeGenConfig(min_subtasks=3, max_subtasks=3, max_start_geodesic_m=5.0)
RUN = RunConfig(max_actions_per_episode=40, max_actions_per_subtask=None)
SEED = 4243


@pytest.mark.slow
def test_a_spent_episode_budget_ends_the_later_subtasks_with_no_action_as_in_process() -> None:
    episodes = list(generate_dataset(1, SEED, config=GEN).episodes)
    reference = in_process_records(episodes, RUN)
    # The episode is chosen so that the budget runs out in the middle: some actions, then none.
    assert sum(r.num_actions for r in reference) == RUN.max_actions_per_episode
    assert reference[0].num_actions > 0 and reference[-1].num_actions == 0
    assert reference[-1].stop_reason == "budget" and reference[-1].failure == "budget"
    graph = run_graph(episodes, RUN, timeout_s=240)
    assert len(graph) == len(reference) == len(episodes[0].tasks)
    for ref, got in zip(reference, graph, strict=True):
        where = f"{ref.episode_id}/{ref.index}"
        assert got.actions == ref.actions, f"{where}: action sequences differ"
        assert (got.stop_reason, got.success, got.num_actions, got.failure) == (
            ref.stop_reason, ref.success, ref.num_actions, ref.failure), where
        assert got.spl == pytest.approx(ref.spl, abs=1e-9), where
        assert got.geodesic_m == pytest.approx(ref.geodesic_m, abs=1e-9), where
        assert got.distance_to_goal_m == pytest.approx(ref.distance_to_goal_m, abs=1e-9), where
