"""The in-process benchmark loop and `goat-nav bench`, end to end on the embedded simulator."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from goat_core.agent import Agent, AgentConfig
from goat_core.errors import ConfigError
from goat_core.matching.base import NO_MATCH, MatchResult
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import DiscreteAction, GoalModality
from goat_nav.cli import main
from goat_suites.common.episode_files import save_goat_dataset
from goat_suites.common.episodes import GoatDataset
from goat_suites.common.results import read_results_json
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import generate_dataset
from sim_bridge.embedded.catalogue import CATALOGUE

BUDGET = 60  # actions per subtask: enough to show behaviour, small enough for CI


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return SentenceEmbedder()


@pytest.fixture(scope="module")
def episode():
    return generate_dataset(1, seed=3).episodes[0]


def _run(episode, embedder, use_memory: bool = True, **run_kwargs):
    config = RunConfig(max_actions_per_subtask=BUDGET, **run_kwargs)
    with EpisodeRunner(config, AgentConfig(use_memory=use_memory), MatcherConfig(),
                       embedder=embedder) as runner:
        traces = []
        records, trajectory = runner.run_episode(episode, on_subtask=traces.append)
    return records, trajectory, traces


@pytest.fixture(scope="module")
def first_run(episode, embedder):
    return _run(episode, embedder)


@pytest.mark.slow
def test_every_subtask_is_scored(episode, first_run) -> None:
    records, trajectory, traces = first_run
    assert [r.index for r in records] == list(range(len(episode.tasks)))
    assert [r.modality for r in records] == [t.modality for t in episode.tasks]
    for r in records:
        assert 1 <= r.num_actions <= BUDGET
        assert r.stop_reason in ("stop", "budget")
        assert (r.stop_reason == "stop") == (r.actions[-1] is DiscreteAction.STOP)
        assert 0.0 <= r.spl <= 1.0 and (r.spl > 0.0) == r.success
        if r.success:
            assert r.distance_to_goal_m <= RunConfig().success_distance_m
            assert r.path_length_m >= r.geodesic_m - 0.3  # nobody beats the geodesic (snapping tolerance)
    assert len(trajectory.subtask_starts) == len(records)
    assert len(traces) == len(records) and all(t.line() for t in traces)


@pytest.mark.slow
def test_the_agent_reaches_goals(first_run) -> None:
    records, _, _ = first_run
    assert any(r.success for r in records), [t.line() for t in first_run[2]]


@pytest.mark.slow
def test_same_episode_same_actions(episode, embedder, first_run) -> None:
    records, _, _ = _run(episode, embedder)
    assert [r.actions for r in records] == [r.actions for r in first_run[0]]
    assert [r.spl for r in records] == [r.spl for r in first_run[0]]


@pytest.mark.slow
def test_no_memory_ablation_forgets_between_subtasks(episode, embedder, first_run) -> None:
    records, _, _ = _run(episode, embedder, use_memory=False)
    # Without memory the agent starts every subtask with a scan (turns in place) before it can act on a goal.
    later = [r for r in records if r.index > 0]
    assert all(r.actions[0] in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT, DiscreteAction.LOOK_DOWN)
               for r in later if r.num_actions > 1)
    assert [r.actions for r in records] != [r.actions for r in first_run[0]]


@pytest.mark.slow
def test_a_goal_without_view_points_is_recorded_as_an_error_and_the_run_goes_on(episode, embedder) -> None:
    task = episode.tasks[0]
    key = next(k for k, v in episode.goals.items() if v and v[0].object_category == task.category)
    broken_goals = dict(episode.goals)
    broken_goals[key] = tuple(dataclasses.replace(g, view_points=()) for g in episode.goals[key])
    broken = dataclasses.replace(episode, goals=broken_goals)
    records, _, _ = _run(broken, embedder)
    assert records[0].stop_reason == "error" and "no view points" in records[0].error
    assert records[0].num_actions == 0 and not records[0].success
    assert all(r.stop_reason != "error" for r in records[1:] if r.modality is not GoalModality.IMAGE
               or r.index != 0)


class _SureOfAnotherObject:
    """A goal matcher that is sure of the first remembered instance whose category is not the goal's."""

    def reset(self) -> None:
        pass

    def set_goal(self, goal, vocabulary) -> None:
        self.category = goal.category

    def match(self, instances) -> MatchResult:
        others = [k for k in sorted(instances) if instances[k].category != self.category]
        return MatchResult(others[0], 1.0, True) if others else NO_MATCH


def _run_first_subtasks(episode, embedder, agent_config: AgentConfig, matcher=None, n: int = 3):
    with EpisodeRunner(RunConfig(max_actions_per_subtask=150), agent_config, MatcherConfig(),
                       embedder=embedder) as runner:
        if matcher is not None:
            runner.agent = Agent(agent_config, GroundTruthPerception([c.name for c in CATALOGUE]), matcher)
        return runner.run_episode(dataclasses.replace(episode, tasks=episode.tasks[:n]))[0]


@pytest.mark.slow
def test_a_stop_at_another_object_is_a_wrong_instance(episode, embedder) -> None:
    records = _run_first_subtasks(episode, embedder, AgentConfig(), _SureOfAnotherObject())
    stopped = [r for r in records if r.stop_reason == "stop"]
    assert stopped and all(not r.success and r.failure == "wrong_instance" for r in stopped)
    assert all(r.stop_detail and "confident match" in r.stop_detail for r in stopped)


@pytest.mark.slow
def test_a_stop_at_the_goal_beyond_the_success_distance_is_a_near_miss(episode, embedder) -> None:
    """Stopping 1.6 m from the goal object: the right object, but no view point (within 1 m) is within 0.25 m."""
    records = _run_first_subtasks(episode, embedder, AgentConfig(stop_radius_m=1.6, max_stop_radius_m=1.8))
    stopped = [r for r in records if r.stop_reason == "stop"]
    assert stopped and all(not r.success and r.failure == "near_miss" for r in stopped)
    assert all(r.distance_to_goal_m is not None and r.distance_to_goal_m > RunConfig().success_distance_m
               for r in stopped)


@pytest.fixture(scope="module")
def episodes_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("eps") / "two.json.gz"
    dataset = generate_dataset(2, seed=11)
    short = GoatDataset(episodes=tuple(dataclasses.replace(e, tasks=e.tasks[:2]) for e in dataset.episodes))
    save_goat_dataset(short, path)
    return path


@pytest.mark.slow
def test_cli_bench_writes_results_and_report(episodes_file: Path, tmp_path: Path, capsys) -> None:
    out, report = tmp_path / "results.json", tmp_path / "report.html"
    code = main(["bench", "--episodes-file", str(episodes_file), "--max-actions", str(BUDGET), "--out", str(out),
                 "--report", str(report), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "overall" in printed and "SPL" in printed
    results = read_results_json(out)
    assert len(results.records) == 4 and results.summary.num_episodes == 2
    raw = json.loads(out.read_text())
    for key in ("success_rate", "spl", "by_modality", "by_subtask_index"):
        assert key in raw["summary"]
    for key in ("episode_id", "index", "modality", "success", "spl", "path_length_m", "geodesic_m", "num_actions",
                "stop_reason"):
        assert key in raw["subtasks"][0]
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/png;base64,") == 2


def test_cli_rejects_a_malformed_episode_file(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(b'{"episodes": [{"episode_id": "1"'))
    assert main(["bench", "--episodes-file", str(bad), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err


def test_cli_names_an_unknown_modality(episodes_file: Path, tmp_path: Path, capsys) -> None:
    raw = json.loads(gzip.decompress(episodes_file.read_bytes()))
    raw["episodes"][0]["tasks"][0][1] = "smell"
    bad = tmp_path / "smell.json"
    bad.write_text(json.dumps(raw))
    assert main(["bench", "--episodes-file", str(bad), "--quiet"]) == 2
    assert "smell" in capsys.readouterr().err


@pytest.mark.parametrize("kwargs", [dict(success_metric="manhattan"), dict(max_actions_per_subtask=0),
                                    dict(success_distance_m=0.0)])
def test_bad_run_settings_are_named(kwargs) -> None:
    with pytest.raises(ConfigError, match=next(iter(kwargs))):
        RunConfig(**kwargs)


def test_cli_rejects_a_bad_setting_before_generating_anything(capsys) -> None:
    assert main(["bench", "--success-distance-m", "-1", "--episodes", "1"]) == 2
    captured = capsys.readouterr()
    assert "success_distance_m must be > 0, got -1.0" in captured.err
    assert "generating" not in captured.err


def _goals(episode, embedder, noise: bool, paraphrase: bool = False, image_category: bool = True) -> list:
    config = RunConfig(max_actions_per_subtask=1, goal_image_noise=noise, goal_paraphrase=paraphrase,
                       image_goal_category=image_category)
    goals: list = []
    with EpisodeRunner(config, AgentConfig(), MatcherConfig(), embedder=embedder) as runner:
        runner.run_episode(episode, on_goal=lambda index, goal: goals.append((index, goal)))
    return goals


@pytest.mark.slow
def test_image_noise_perturbs_image_goals_only_and_reproducibly(episode, embedder) -> None:
    clean, noisy, again = (_goals(episode, embedder, noise) for noise in (False, True, True))
    assert [i for i, _ in clean] == list(range(len(episode.tasks)))  # the callback sees every subtask's goal
    images = [(c.image, n.image, a.image) for (_, c), (_, n), (_, a) in zip(clean, noisy, again, strict=True)
              if c.modality is GoalModality.IMAGE]
    assert images, "the fixture episode should hold an image goal"
    for c, n, a in images:
        assert c.shape == n.shape and n.dtype == np.uint8
        assert np.abs(c.astype(int) - n.astype(int)).mean() > 1.0  # perturbed
        np.testing.assert_array_equal(n, a)  # same episode, same subtask: same noise
    for (_, c), (_, n) in zip(clean, noisy, strict=True):
        if c.modality is not GoalModality.IMAGE:
            assert (c.category, c.text) == (n.category, n.text)


@pytest.mark.slow
def test_paraphrase_restates_description_goals_only(episode, embedder) -> None:
    clean, restated = _goals(episode, embedder, False), _goals(episode, embedder, False, paraphrase=True)
    pairs = [(c, r) for (_, c), (_, r) in zip(clean, restated, strict=True)]
    described = [(c.text, r.text) for c, r in pairs if c.modality is GoalModality.DESCRIPTION]
    assert described and any(a != b for a, b in described)
    assert all(c.category == r.category for c, r in pairs if c.modality is GoalModality.CATEGORY)


@pytest.mark.slow
def test_image_goals_name_the_category_of_their_task_unless_switched_off(episode, embedder) -> None:
    named, bare = _goals(episode, embedder, False), _goals(episode, embedder, False, image_category=False)
    tasks = episode.tasks
    pictured = [(tasks[i].category, g.category) for i, g in named if g.modality is GoalModality.IMAGE]
    assert pictured and all(goal_cat == task_cat for task_cat, goal_cat in pictured)
    assert all(g.category is None for _, g in bare if g.modality is GoalModality.IMAGE)
    assert "(" in next(g.describe() for _, g in named if g.modality is GoalModality.IMAGE)
