"""Identity under the stretch realism profile: the ROS graph (the bridge's drifting /odom and noisy depth, the
controller's localiser) takes the same actions as the in-process loop (docs/realism.md)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from goat_core.agent import AgentConfig  # noqa: E402
from goat_core.matching.matcher import MatcherConfig  # noqa: E402
from goat_nav.ros_bench import graph_overrides, run_graph  # noqa: E402
from goat_suites.common.results import SubtaskRecord  # noqa: E402
from goat_suites.common.runner import EpisodeRunner, RunConfig  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset  # noqa: E402
from sim_bridge.embedded.realism import RealismConfig, realism_profile  # noqa: E402
from sim_bridge.embedded.sim import SimConfig  # noqa: E402

# One short episode: two subtasks near the start, a small budget (the start's look-around turns a full circle,
# so the localiser registers turns, forward steps and a loop closure).
GEN = EpisodeGenConfig(min_subtasks=2, max_subtasks=2, max_start_geodesic_m=4.0)
RUN = RunConfig(max_actions_per_subtask=25)
SEED = 4243


def _in_process(episodes: list, realism: RealismConfig) -> tuple[list[SubtaskRecord], list[float]]:
    records: list[SubtaskRecord] = []
    with EpisodeRunner(RUN, AgentConfig(), MatcherConfig(), SimConfig(realism=realism)) as runner:
        for episode in episodes:
            records.extend(runner.run_episode(episode)[0])
        errors, _ = runner.senses.log.errors()
    return records, list(errors)


def test_overrides_carry_the_profile_to_bridge_and_controller(tmp_path) -> None:  # type: ignore[no-untyped-def]
    realism = realism_profile("stretch", seed=7)
    overrides = graph_overrides(tmp_path / "e.json", RUN, tmp_path / "a.yaml", realism=realism)
    assert overrides["sim_bridge"] == {"realism": "stretch", "realism_seed": 7}
    assert overrides["controller"]["localise"] is True and overrides["controller"]["filter_depth"] is True
    assert overrides["controller"]["agent_config"].endswith("a.yaml")  # merged, not replaced
    assert overrides["evaluator"]["score_from_ground_truth"] is True and "episodes_file" in overrides["evaluator"]
    off = graph_overrides(tmp_path / "e.json", RUN, tmp_path / "a.yaml",
                          realism=realism_profile("stretch", seed=7, localiser=False))
    assert off["controller"]["localise"] is False and off["controller"]["filter_depth"] is True
    ideal = graph_overrides(tmp_path / "e.json", RUN, tmp_path / "a.yaml", realism=realism_profile("ideal"))
    assert "sim_bridge" not in ideal and not {"localise", "filter_depth"} & set(ideal["controller"])
    assert "score_from_ground_truth" not in ideal["evaluator"]


@pytest.mark.slow
def test_graph_matches_in_process_run_under_stretch() -> None:
    realism = realism_profile("stretch", seed=SEED)
    episodes = list(generate_dataset(1, SEED, config=GEN).episodes)
    reference, errors = _in_process(episodes, realism)
    # The profile is really on: the in-process agent's pose is the localiser's, not the truth.
    assert max(errors) > 0.0 and all(math.isfinite(e) for e in errors)
    graph = run_graph(episodes, RUN, timeout_s=300, realism=realism)
    assert len(graph) == len(reference) == len(episodes[0].tasks)
    assert sum(r.num_actions for r in reference) >= 20
    for ref, got in zip(reference, graph, strict=True):
        where = f"{ref.episode_id}/{ref.index}"
        assert got.actions == ref.actions, f"{where}: action sequences differ"
        assert (got.stop_reason, got.success, got.num_actions) == (ref.stop_reason, ref.success, ref.num_actions)
        assert got.path_length_m == pytest.approx(ref.path_length_m, abs=1e-9), where
        assert got.distance_to_goal_m == pytest.approx(ref.distance_to_goal_m, abs=1e-9), where
