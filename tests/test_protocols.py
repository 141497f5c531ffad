"""Official evaluation protocols: conformance cases built by hand from the official code's logic (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goat_core.bench.episodes import goals_for_task, load_goat_dataset
from goat_core.bench.protocols import (
    FINDINGDORY,
    FINDINGDORY_RECEPTACLE,
    GOAT_BENCH,
    LANGMAP,
    Budget,
    SuccessRule,
    protocol_by_name,
)
from goat_core.bench.results import SubtaskRecord, read_results_json, summarise, write_results_json
from goat_core.errors import ConfigError
from goat_core.types import GoalModality
from goat_nav.bench_cmd import format_summary
from goat_nav.protocol_meta import protocol_meta, protocol_sim_config
from goat_nav.runner import RunConfig


def _records(episode_id: str, successes: int, total: int, modality: str = "object") -> list[SubtaskRecord]:
    out = []
    for i in range(total):
        ok = i < successes
        out.append(SubtaskRecord(
            episode_id=episode_id, scene_id="s", index=i, modality=modality, success=ok, spl=0.5 if ok else 0.0,
            path_length_m=4.0, geodesic_m=2.0, num_actions=10, stop_reason="stop",
            distance_to_goal_m=0.1 if ok else 3.0, failure=None if ok else "wrong_instance"))
    return out


# ----------------------------------------------------------------------------------------------- averaging

def test_goat_rates_are_per_episode_means_then_the_mean_over_episodes() -> None:
    """GOAT-Bench: partial_success = successes / subtasks per episode (nav.py l.313), then np.mean over episodes
    (ppo_trainer_no_2d.py l.417): episodes at 9/10 and 1/5 give (0.9 + 0.2) / 2 = 0.55, not 10/15."""
    records = _records("a", 9, 10) + _records("b", 1, 5)
    summary = summarise(records)
    assert summary.success_rate == pytest.approx(0.55)
    assert summary.spl == pytest.approx((0.9 * 0.5 + 0.2 * 0.5) / 2)
    assert summarise(records, averaging="pooled").success_rate == pytest.approx(10 / 15)


def test_per_modality_rates_count_an_episode_without_the_modality_as_zero() -> None:
    """nav.py l.300-305: {modality}_success is 0.0 in an episode without that modality, and it is averaged over
    every episode: object subtasks 9/10 in episode a only give (0.9 + 0) / 2."""
    records = _records("a", 9, 10, "object") + _records("b", 1, 5, "image")
    summary = summarise(records)
    assert summary.by_modality["object"].success_rate == pytest.approx(0.45)
    assert summary.by_modality["image"].success_rate == pytest.approx(0.1)
    assert (summary.by_modality["object"].count, summary.by_modality["image"].count) == (10, 5)


def test_a_results_file_summary_is_the_per_episode_mean_of_its_records(tmp_path: Path) -> None:
    records = _records("a", 9, 10) + _records("b", 1, 5)
    path = tmp_path / "results.json"
    meta = protocol_meta("goat", RunConfig(), protocol_sim_config("goat"))
    write_results_json(path, records, summarise(records), meta)
    stored = json.loads(path.read_text())
    episodes: dict[str, list[dict[str, Any]]] = {}
    for r in stored["subtasks"]:
        episodes.setdefault(r["episode_id"], []).append(r)
    per_episode_sr = [sum(r["success"] for r in rs) / len(rs) for rs in episodes.values()]
    per_episode_spl = [sum(r["spl"] for r in rs) / len(rs) for rs in episodes.values()]
    assert stored["summary"]["success_rate"] == pytest.approx(sum(per_episode_sr) / len(per_episode_sr))
    assert stored["summary"]["spl"] == pytest.approx(sum(per_episode_spl) / len(per_episode_spl))
    assert stored["summary"]["averaging"] == "per_episode"
    assert stored["meta"]["protocol"] == "goat-bench v1"
    assert stored["meta"]["budget"] == {"max_actions_per_episode": 5000, "max_actions_per_subtask": None}
    assert stored["meta"]["sliding"] is False
    assert read_results_json(path).summary == summarise(records)


def test_a_file_written_before_the_averaging_was_recorded_reads_as_pooled(tmp_path: Path) -> None:
    records = _records("a", 9, 10) + _records("b", 1, 5)
    path = tmp_path / "old.json"
    old = summarise(records, averaging="pooled").to_json()
    del old["averaging"]
    path.write_text(json.dumps({"summary": old, "subtasks": [r.to_json() for r in records], "meta": {}}))
    assert read_results_json(path).summary.success_rate == pytest.approx(10 / 15)


# ----------------------------------------------------------------------------------------------- budget

def test_the_episode_budget_is_shared_by_the_subtasks() -> None:
    """goat_stretch_hm3d.yaml l.31: 5000 steps per episode, no per-subtask cap."""
    budget = GOAT_BENCH.budget
    assert budget.subtask_budget(0) == 5000
    assert budget.subtask_budget(4990) == 10
    assert budget.subtask_budget(5000) == 0 and budget.subtask_budget(6000) == 0
    readme = Budget(max_actions_per_subtask=500)  # the README's variant: every subtask starts afresh
    assert readme.subtask_budget(10_000) == 500
    assert Budget(5000, 500).subtask_budget(4800) == 200


@pytest.mark.parametrize("kwargs, message", [
    (dict(), "neither"),
    (dict(max_actions_per_episode=0), "max_actions_per_episode must be an integer >= 1 or None, got 0"),
    (dict(max_actions_per_subtask=-3), "max_actions_per_subtask must be an integer >= 1 or None, got -3"),
])
def test_bad_budgets_are_named(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Budget(**kwargs)


def test_run_config_defaults_are_goat_bench_official() -> None:
    config = RunConfig()
    assert config.budget() == GOAT_BENCH.budget
    assert config.success_rule() == GOAT_BENCH.success
    assert protocol_sim_config("goat").allow_sliding is False
    assert config.protocol_deviations(protocol_sim_config("goat")) == ()


def test_a_stuck_subtask_exhausts_the_episode_budget() -> None:
    """With the budget per episode, a subtask that never stops eats the budget and every later subtask fails
    unstarted (0 actions), as in GOAT-Bench once max_episode_steps is reached."""
    from goat_core.agent import AgentConfig
    from goat_core.matching.matcher import MatcherConfig
    from goat_nav.runner import EpisodeRunner
    from sim_bridge.embedded.episodes import generate_dataset

    episode = generate_dataset(1, seed=3).episodes[0]
    assert len(episode.tasks) >= 3
    episode_budget = 12
    with EpisodeRunner(RunConfig(max_actions_per_episode=episode_budget), AgentConfig(), MatcherConfig()) as runner:
        records, _ = runner.run_episode(episode)
    assert len(records) == len(episode.tasks)
    assert sum(r.num_actions for r in records) == episode_budget
    spent = next(i for i, r in enumerate(records) if r.stop_reason == "budget")
    assert records[spent].num_actions > 0
    for r in records[spent + 1:]:
        assert (r.num_actions, r.stop_reason, r.success, r.spl) == (0, "budget", False, 0.0)
        assert r.failure == "budget"


# ----------------------------------------------------------------------------------------------- success rules

def test_goat_success_threshold_is_strict() -> None:
    """goat_bench/measurements/nav.py l.292 and habitat-lab Success: distance < success_distance."""
    rule = RunConfig().success_rule()
    assert not rule.is_success(True, 0.25)
    assert rule.is_success(True, 0.2499)
    assert not rule.is_success(False, 0.0)  # STOP needed
    assert not rule.is_success(True, float("inf"))
    with pytest.raises(ConfigError, match="nan"):
        rule.is_success(True, float("nan"))


def test_langmap_scores_the_subgoal_end_without_stop() -> None:
    """LangMap: geodesic <= 0.25 m to a view point when the subgoal ends, STOP not required."""
    assert LANGMAP.success.is_success(False, 0.2)
    assert LANGMAP.success.is_success(False, 0.25)
    assert not LANGMAP.success.is_success(True, 0.26)
    assert not GOAT_BENCH.success.is_success(False, 0.2)  # GOAT: the same end without STOP fails


@pytest.mark.parametrize("distance_m, object_ok, receptacle_ok", [
    (0.05, True, True), (0.1, True, True), (0.5, True, False), (2.0, True, False), (2.01, False, False)])
def test_findingdory_objects_and_receptacles_have_their_own_thresholds(distance_m: float, object_ok: bool,
                                                                      receptacle_ok: bool) -> None:
    """pddl_domain_fp.yaml l.77-100: robot_at_object 2.0 m / pi/4; robot_at_receptacle 0.1 m / pi/2;
    pddl.py l.440 fails only when dist > dist_thresh."""
    assert FINDINGDORY.success.is_success(True, distance_m) is object_ok
    assert FINDINGDORY_RECEPTACLE.is_success(True, distance_m) is receptacle_ok
    assert FINDINGDORY.success.max_angle_rad == pytest.approx(0.785)
    assert FINDINGDORY_RECEPTACLE.max_angle_rad == pytest.approx(1.57)


def test_bad_success_rules_are_named() -> None:
    with pytest.raises(ConfigError, match="comparison must be one of .* got '=='"):
        SuccessRule(distance_m=0.25, distance_to="view_points", comparison="==")
    with pytest.raises(ConfigError, match="unknown protocol 'goat'"):
        protocol_by_name("goat")
    with pytest.raises(ConfigError, match="success_comparison|comparison must be one of"):
        RunConfig(success_comparison="=")


# ----------------------------------------------------------------------------------------------- labels

def test_an_official_goat_run_is_labelled_so() -> None:
    meta = protocol_meta("goat", RunConfig(), protocol_sim_config("goat"))
    assert meta["protocol"] == "goat-bench v1" and meta["protocol_deviations"] == []
    assert meta["official_protocol"]["budget"]["max_actions_per_episode"] == 5000


@pytest.mark.parametrize("run_config, embodiment, words", [
    (RunConfig(max_actions_per_episode=None, max_actions_per_subtask=500), "official",
     "budget 500 actions/subtask (official 5000 actions/episode)"),
    (RunConfig(), "stretch", "sliding on (official off)"),
    (RunConfig(success_comparison="<="), "official", "success view_points <= 0.25 m"),
    (RunConfig(use_memory=False), "official", "no memory across subtasks"),
])
def test_any_deviation_makes_the_run_custom(run_config: RunConfig, embodiment: str, words: str) -> None:
    meta = protocol_meta("goat", run_config, protocol_sim_config("goat", embodiment))
    assert meta["protocol"].startswith("custom (goat-bench v1; ")
    assert words in meta["protocol"]
    table = format_summary(summarise(_records("a", 1, 2)), meta["protocol"])
    assert table.splitlines()[0] == f"protocol: {meta['protocol']}"


def test_suites_whose_official_rule_is_not_implemented_say_custom() -> None:
    config = RunConfig(max_actions_per_episode=None, max_actions_per_subtask=500)
    langmap = protocol_meta("langmap", config, protocol_sim_config("langmap"))["protocol"]
    assert langmap.startswith("custom (langmap v1; ") and "STOP required" in langmap
    assert "camera 360x640 HFOV 42 deg (official 640x480 HFOV 120 deg)" in langmap
    pasture = protocol_meta("pasture", config, protocol_sim_config("pasture"))["protocol"]
    assert "budget 500 actions/subtask (official 250 actions/episode)" in pasture
    with pytest.raises(ConfigError, match="embodiment must be one of"):
        protocol_sim_config("goat", "robot")


# ----------------------------------------------------------------------------------------------- real files

SCENE_ID = "hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb"
SIXTY_WORDS = " ".join(["word"] * 59 + ["end."])


def _view_point(x: float, z: float) -> dict[str, Any]:
    return {"agent_state": {"position": [x, 0.1, z], "rotation": [0.0, 0.0, 0.0, 1.0]}, "iou": 0.5}


def _goat_file(path: Path) -> Path:
    """A GOAT-Bench file in the real layout: a category whose goal objects name children categories, and a
    description subtask whose lang_desc has 60 words (goat_dataset.py drops those over 55)."""
    goals = {
        "TEEsavR23oF.basis.glb_couch": [
            {"object_id": "couch_1", "object_category": "couch", "position": [1.0, 0.4, -2.0],
             "view_points": [_view_point(1.5, -2.0)], "children_object_categories": ["sofa_bed", "loveseat"],
             "lang_desc": SIXTY_WORDS},
            {"object_id": "couch_2", "object_category": "couch", "position": [3.0, 0.4, -2.0],
             "view_points": [_view_point(3.5, -2.0)], "children_object_categories": ["sofa_bed", "loveseat"],
             "lang_desc": "the grey couch under the window"},
        ],
        "TEEsavR23oF.basis.glb_sofa_bed": [
            {"object_id": "sofa_bed_9", "object_category": "sofa_bed", "position": [-2.0, 0.4, 1.0],
             "view_points": [_view_point(-2.0, 1.5)], "children_object_categories": []},
        ],
    }
    episode = {"episode_id": "0", "scene_id": SCENE_ID, "start_position": [0.0, 0.1, 0.0],
               "start_rotation": [0.0, 0.0, 0.0, 1.0],
               "tasks": [["couch", "object", None], ["couch", "description", "couch_1"],
                         ["couch", "description", "couch_2"]]}
    path.write_text(json.dumps({"episodes": [episode], "goals": goals}))
    return path


def test_real_goat_file_children_categories_and_long_descriptions(tmp_path: Path) -> None:
    (episode,) = load_goat_dataset(_goat_file(tmp_path / "goat.json")).episodes
    assert [(t.modality, t.object_id) for t in episode.tasks] == [
        (GoalModality.CATEGORY, None), (GoalModality.DESCRIPTION, "couch_2")]  # the 60-word one is dropped
    category_goals = goals_for_task(episode, episode.tasks[0])
    assert [g.object_id for g in category_goals] == ["couch_1", "couch_2", "sofa_bed_9"]  # loveseat: no goals
    assert [g.object_id for g in goals_for_task(episode, episode.tasks[1])] == ["couch_2"]
    (kept,) = load_goat_dataset(tmp_path / "goat.json", max_description_words=None).episodes
    assert len(kept.tasks) == 3
