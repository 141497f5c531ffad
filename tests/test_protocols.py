"""Official evaluation protocols: conformance cases built by hand from the official code's logic (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goat_core.errors import ConfigError
from goat_core.types import GoalModality
from goat_nav.bench_cmd import format_summary
from goat_suites.common.episode_files import load_goat_dataset
from goat_suites.common.episodes import goals_for_task
from goat_suites.common.protocol_meta import protocol_meta, protocol_sim_config
from goat_suites.common.protocols import (
    FINDINGDORY,
    FINDINGDORY_RECEPTACLE,
    GOAT_BENCH,
    LANGMAP,
    PASTURE_COW,
    Budget,
    SuccessRule,
    protocol_by_name,
)
from goat_suites.common.results import SubtaskRecord, read_results_json, summarise, write_results_json
from goat_suites.common.runner import RunConfig


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
    from goat_suites.common.runner import EpisodeRunner
    from goat_suites.goat.generator import generate_dataset

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
])
def test_any_deviation_makes_the_run_custom(run_config: RunConfig, embodiment: str, words: str) -> None:
    meta = protocol_meta("goat", run_config, protocol_sim_config("goat", embodiment))
    assert meta["protocol"].startswith("custom (goat-bench v1; ")
    assert words in meta["protocol"]
    table = format_summary(summarise(_records("a", 1, 2)), meta["protocol"])
    assert table.splitlines()[0] == f"protocol: {meta['protocol']}"


def test_the_no_memory_ablation_makes_the_run_custom() -> None:
    from goat_nav.cli import build_parser
    from goat_suites.common.suite import agent_config_from_args, memory_deviation

    args = build_parser().parse_args(["bench", "--no-memory"])
    meta = protocol_meta("goat", RunConfig(), protocol_sim_config("goat"),
                         memory_deviation(agent_config_from_args(args)))
    assert meta["protocol"].startswith("custom (goat-bench v1; ") and "no memory across subtasks" in meta["protocol"]
    with_memory = agent_config_from_args(build_parser().parse_args(["bench"]))
    assert memory_deviation(with_memory) == ()


def test_langmap_runs_under_its_protocol_and_says_when_it_does_not() -> None:
    official = RunConfig(max_actions_per_episode=None, max_actions_per_subtask=500, success_comparison="<=",
                         success_requires_stop=False)
    assert protocol_meta("langmap", official, protocol_sim_config("langmap"))["protocol"] == "langmap v1"
    sim = protocol_sim_config("langmap")
    assert (sim.width_px, sim.height_px, sim.hfov_deg, sim.allow_sliding) == (640, 480, 120.0, False)
    with_stop = RunConfig(max_actions_per_episode=None, max_actions_per_subtask=500, success_comparison="<=")
    label = protocol_meta("langmap", with_stop, protocol_sim_config("langmap", "stretch"))["protocol"]
    assert label.startswith("custom (langmap v1; ") and "STOP required" in label
    assert "camera 360x640 HFOV 42 deg (official 640x480 HFOV 120 deg)" in label and "sliding on" in label


def test_pasture_runs_under_cows_protocol() -> None:
    official = RunConfig(max_actions_per_episode=250, max_actions_per_subtask=None, success_metric="visible_object",
                         success_distance_m=1.0, success_comparison="<=")
    assert protocol_meta("pasture", official, protocol_sim_config("pasture"))["protocol"] == "pasture-cow v1"
    sim = protocol_sim_config("pasture")
    assert (sim.width_px, sim.height_px, sim.hfov_deg) == (672, 672, 90.0)
    old = RunConfig(max_actions_per_episode=None, max_actions_per_subtask=500)
    label = protocol_meta("pasture", old, protocol_sim_config("pasture"))["protocol"]
    assert label.startswith("custom (pasture-cow v1; ")
    assert "budget 500 actions/subtask (official 250 actions/episode)" in label
    assert "success view_points < 0.25 m (official visible_object <= 1 m)" in label
    with pytest.raises(ConfigError, match="embodiment must be one of"):
        protocol_sim_config("goat", "robot")


def test_a_cow_stop_counts_only_with_the_target_in_view_and_within_one_metre() -> None:
    """robothor_challenge.py l.390-391: success = stopped and target_visible. A stop 0.9 m from the target
    facing it succeeds; the same stop facing away fails; a stop 1.2 m away facing it fails."""
    import math

    from goat_suites.common.episodes import GoalObject
    from goat_suites.common.success import target_visible_m
    from sim_bridge.embedded.home import HomeConfig, generate_home
    from sim_bridge.embedded.sim import EmbeddedSim

    home = generate_home(1000, HomeConfig(furniture="primitive"))
    checked = set()
    with EmbeddedSim(home, protocol_sim_config("pasture")) as sim:
        grid = sim.navgrid
        for obj in home.objects:
            goal = GoalObject(obj.object_id, obj.category, (0.0, 0.0, 0.0))
            lo, hi = np.asarray(obj.bbox_min_m[:2]), np.asarray(obj.bbox_max_m[:2])
            cells = np.argwhere(grid.navigable)
            points = grid.origin_xy_m + (cells[:, ::-1] + 0.5) * grid.resolution_m
            gaps = np.linalg.norm(points - np.clip(points, lo, hi), axis=1)
            for want_m, key in ((0.9, "near"), (1.2, "far")):
                if key in checked:
                    continue
                for xy in points[np.abs(gaps - want_m) < 0.02][:20]:
                    centre = (lo + hi) / 2.0
                    yaw = math.atan2(centre[1] - xy[1], centre[0] - xy[0])
                    facing = sim.render_view(xy, yaw, math.radians(-30.0)).segmentation
                    if not (facing == obj.instance_id).any():
                        continue
                    distance = target_visible_m(home.objects, [goal], xy, facing)
                    assert distance == pytest.approx(want_m, abs=0.03)
                    assert PASTURE_COW.success.is_success(True, distance) is (key == "near")
                    if key == "near":
                        away = sim.render_view(xy, yaw + math.pi, math.radians(-30.0)).segmentation
                        assert not (away == obj.instance_id).any()
                        assert not PASTURE_COW.success.is_success(
                            True, target_visible_m(home.objects, [goal], xy, away))
                    checked.add(key)
                    break
            if checked == {"near", "far"}:
                return
    pytest.fail(f"no object seen from 0.9 m and 1.2 m in home 1000 (found {sorted(checked)})")


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


# ----------------------------------------------------------------------------------------------- LangMap

def test_a_langmap_subgoal_ending_near_a_view_point_without_stop_succeeds() -> None:
    """The budget ends the subgoal (no STOP) 0.2 m from a view point: LangMap scores it a success (distance at
    the subgoal's end <= 0.25 m), GOAT-Bench a failure (no STOP)."""
    import dataclasses
    import math

    from goat_core.agent import AgentConfig
    from goat_core.errors import UnreachableGoalError
    from goat_core.matching.matcher import MatcherConfig
    from goat_suites.common.runner import EpisodeRunner
    from goat_suites.goat.generator import generate_dataset

    episode = generate_dataset(1, seed=3).episodes[0]
    task = episode.tasks[0]
    view_points = [v.position for g in goals_for_task(episode, task) for v in g.view_points]
    langmap = RunConfig(max_actions_per_episode=None, max_actions_per_subtask=1, success_comparison="<=",
                        success_requires_stop=False)
    goat = RunConfig(max_actions_per_episode=None, max_actions_per_subtask=1)
    for vp in view_points:
        for angle in np.linspace(0.0, 2 * math.pi, 8, endpoint=False):
            start = (vp[0] + 0.2 * math.cos(angle), vp[1], vp[2] + 0.2 * math.sin(angle))
            if min(math.hypot(start[0] - v[0], start[2] - v[2]) for v in view_points) < 0.199:
                continue  # nearer another view point
            one = dataclasses.replace(episode, tasks=(task,), start_position=start)
            try:
                outcomes = []
                for config in (langmap, goat):
                    with EpisodeRunner(config, AgentConfig(), MatcherConfig()) as runner:
                        (record,), _ = runner.run_episode(one)
                    outcomes.append(record)
            except UnreachableGoalError:
                continue  # the start is not navigable
            if outcomes[0].stop_reason != "budget":
                continue  # the agent stopped at once: not the case under test
            assert outcomes[0].distance_to_goal_m == pytest.approx(0.2, abs=1e-6)
            assert outcomes[0].success and not outcomes[1].success
            return
    pytest.fail("no navigable start 0.2 m from a view point")


def _langmap_scene() -> dict[str, Any]:
    def view(x: float, z: float) -> dict[str, Any]:
        return {"agent_state": {"position": [x, 0.0, z], "rotation": [0.0, 0.0, 0.0, 1.0]}}

    def task(targets: list[str], **extra: Any) -> dict[str, Any]:
        return {"episode_id": 0, "start_position": [0.0, 0.0, 0.0], "start_rotation": [0.0, 0.0, 0.0, 1.0],
                "target_object_ids": targets, "object_category": "blanket", **extra}

    return {
        "goals": [{"object_id": "blanket_3", "object_category": "blanket", "position": [4.0, 0.5, 2.0],
                   "view_points": [view(3.5, 2.0)], "annot_unique_concise_description": "blue blanket",
                   "annot_unique_detailed_description": "the blue blanket on the sofa"},
                  {"object_id": "blanket_9", "object_category": "blanket", "position": [-2.0, 0.5, 2.0],
                   "view_points": [view(-2.0, 1.0)]}],
        "region_annotation": {"7": {"region_category": "Office", "concise_description": "desk beside couch",
                                    "detailed_description": "a desk beside a grey couch"}},
        "episodes_by_object_level": [task(["blanket_3", "blanket_9"])],
        "episodes_by_room_level": [task(["blanket_3", "blanket_9"], room_name="Living Room")],
        "episodes_by_region_level": [task(["blanket_3", "blanket_9"], region_id="7")],
        "episodes_by_instance_level": [task(["blanket_3"], instance_id="blanket_3")],
        "episode_by_sequence": [],
    }


def test_langmap_room_and_region_goals_are_scored_against_every_target(tmp_path: Path) -> None:
    import gzip

    from goat_suites.langmap.loader import load_langmap_scene, scored_goals, task_to_goat_episode

    path = tmp_path / "00800-TEEsavR23oF.json.gz"
    path.write_bytes(gzip.compress(json.dumps(_langmap_scene()).encode()))
    scene = load_langmap_scene(path)
    for level in ("room", "region"):
        episode = task_to_goat_episode(scene, scene.tasks[level][0])
        assert [g.object_id for g in goals_for_task(episode, episode.tasks[0])] == ["blanket_3"]  # the old set
        assert [g.object_id for g in scored_goals(episode, 0, episode.tasks[0])] == ["blanket_3", "blanket_9"]


def test_langmap_single_goal_evaluation_leaves_out_the_blacklist() -> None:
    """analyze_langmap_results.py skips BLACK_TASK_IDS (e.g. "00800-TEEsavR23oF_room_74") and never mixes in
    sequence subgoals."""
    from goat_suites.langmap.loader import LANGMAP_BLACK_TASK_IDS
    from goat_suites.langmap.results import LangMapResult, single_goal_records

    assert len(LANGMAP_BLACK_TASK_IDS) == 106 and "00894-HY1NcmCgn3n_instance_7" in LANGMAP_BLACK_TASK_IDS
    results = [LangMapResult("00800-TEEsavR23oF", "room", True, 1.0, episode_id="74"),  # blacklisted
               LangMapResult("00800-TEEsavR23oF", "room", False, 0.0, episode_id="75"),
               LangMapResult("00810-CrMo8WxCyVb", "scene", True, 0.5, episode_id="30"),  # "_object_30": listed
               LangMapResult("00810-CrMo8WxCyVb", "scene", True, 0.5, episode_id="32"),
               LangMapResult("00800-TEEsavR23oF", "room", True, 1.0, sequence_id="00800-TEEsavR23oF_sequence_0",
                             index=0)]
    assert results[0].task_id == "00800-TEEsavR23oF_room_74" and results[4].task_id is None
    kept = single_goal_records(results)
    assert [(r.level, r.success) for r in kept] == [("room", False), ("scene", True)]


def test_the_report_names_the_protocol() -> None:
    from goat_suites.common.report import render_html_report

    records = _records("a", 1, 2)
    meta = protocol_meta("goat", RunConfig(max_actions_per_episode=None, max_actions_per_subtask=500),
                         protocol_sim_config("goat"))
    page = render_html_report(records, summarise(records), meta, [])
    assert "protocol: <b>custom (goat-bench v1; budget 500 actions/subtask" in page


def _ros_bench_args(tmp_path: Path, *flags: str) -> Any:
    from goat_nav.cli import build_parser

    return build_parser().parse_args(["bench", "--ros", "--episodes-file", str(_goat_file(tmp_path / "g.json")),
                                      *flags])


def test_an_official_ros_graph_run_shares_the_episode_budget_and_is_labelled_so(tmp_path: Path) -> None:
    """The episode player hands out what is left of the episode's 5000 actions (goat_suites.ros.episode_budget), so an
    official --ros run is goat-bench v1; the README's 500 per subtask stays a named deviation through the graph."""
    from goat_nav.bench_cmd import prepare_run
    from goat_nav.ros_bench import graph_overrides

    _, run_config, meta = prepare_run(_ros_bench_args(tmp_path), "ros_graph")
    assert meta["protocol"] == "goat-bench v1" and meta["runner"] == "ros_graph"
    player = graph_overrides(tmp_path / "e.json", run_config, tmp_path / "a.yaml")["episode_player"]
    assert (player["max_actions_per_episode"], player["max_actions_per_subtask"]) == (5000, 0)
    _, run_config, meta = prepare_run(_ros_bench_args(tmp_path, "--max-actions", "500"), "ros_graph")
    assert meta["protocol"] == "custom (goat-bench v1; budget 500 actions/subtask (official 5000 actions/episode))"
    player = graph_overrides(tmp_path / "e.json", run_config, tmp_path / "a.yaml")["episode_player"]
    assert (player["max_actions_per_episode"], player["max_actions_per_subtask"]) == (0, 500)


def test_a_ros_graph_run_refuses_an_embodiment_its_simulator_does_not_run(tmp_path: Path) -> None:
    from goat_core.errors import GoatError
    from goat_nav.cli import _check_bench_args

    with pytest.raises(GoatError, match="--embodiment stretch is not passed to the ROS graph's simulator"):
        _check_bench_args(_ros_bench_args(tmp_path, "--embodiment", "stretch"))


def test_the_findingdory_verifier_has_both_thresholds_and_the_official_angles() -> None:
    """FindingDory's thresholds are the verifier's defaults: 2.0 m for objects, 0.1 m for receptacles (the oracle
    places from a receptacle view point, so its frames pass: tests/test_findingdory_official.py), pi/4 and pi/2,
    coverage 0.001."""
    from goat_suites.findingdory.generator import JudgeConfig

    config = JudgeConfig()
    assert (config.success_distance_m, config.receptacle_distance_m) == (
        FINDINGDORY.success.distance_m, FINDINGDORY_RECEPTACLE.distance_m) == (2.0, 0.1)
    assert config.object_angle_rad == pytest.approx(FINDINGDORY.success.max_angle_rad, abs=1e-3)
    assert config.receptacle_angle_rad == pytest.approx(FINDINGDORY_RECEPTACLE.max_angle_rad, abs=1e-3)
    assert config.min_coverage == FINDINGDORY.success.min_coverage
    with pytest.raises(ConfigError, match="receptacle_distance_m must be a positive number, got 0.0"):
        JudgeConfig(receptacle_distance_m=0.0)
