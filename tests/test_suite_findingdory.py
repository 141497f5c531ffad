"""FindingDory on the embedded simulator: moving objects, the experience, the generated tasks, the verifier,
the metrics and ``goat-nav bench --suite findingdory`` end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterator, Optional

import numpy as np
import pytest

from goat_core.errors import SceneGenerationError
from goat_nav.cli import main
from goat_suites.common.metrics import spl
from goat_suites.common.suite_metrics import FindingDoryRecord
from goat_suites.findingdory import run as suite
from goat_suites.findingdory.generator import (
    Experience,
    FindingDoryGenConfig,
    TaskJudge,
    collect_experience,
    findingdory_sim_config,
    generate_tasks,
)
from goat_suites.findingdory.oracle import _free_spot
from goat_suites.findingdory.pose_nav import PoseGoalNavigator, PoseNavConfig
from goat_suites.findingdory.selector import ExperienceSelector, Selection
from goat_suites.findingdory.tasks import TASK_TYPES, FindingDoryTask, Subgoal, ordinal_index, room_of_target
from sim_bridge.embedded.home import HomeConfig, ObjectSpec, generate_home
from sim_bridge.embedded.navgrid import NavGrid
from sim_bridge.embedded.sim import EmbeddedSim

HOME_SEED = int(np.random.default_rng(3002).integers(0, 2**31 - 1))  # the first home of --seed 3002


def _look_at(sim: EmbeddedSim, obj: ObjectSpec) -> Optional[tuple[np.ndarray, float, float]]:
    """A view point of ``obj`` and the yaw and tilt that look at it, from which it is in view."""
    for xy in sim.navgrid.view_points(obj):
        dx, dy, dz = np.asarray(obj.position_m) - np.array([xy[0], xy[1], sim.config.camera_height_m])
        yaw, tilt = math.atan2(dy, dx), math.atan2(dz, math.hypot(dx, dy))
        if np.any(sim.render_view(xy, yaw, tilt).segmentation == obj.instance_id):
            return xy, yaw, tilt
    return None


def _seen(sim: EmbeddedSim, view: tuple[np.ndarray, float, float], instance_id: int) -> int:
    return int(np.count_nonzero(sim.render_view(*view).segmentation == instance_id))


# ----------------------------------------------------------------------------------------------- moving objects


def test_a_moved_object_renders_at_its_new_place_and_back() -> None:
    home = generate_home(HOME_SEED, HomeConfig(num_rooms=3, furniture="primitive"))  # what is in sight: this home's
    with EmbeddedSim(home) as sim:
        before_grid = sim.navgrid.navigable.copy()
        obj = next(o for o in home.objects if o.receptacle_id is not None and _look_at(sim, o) is not None)
        old_view = _look_at(sim, obj)
        assert old_view is not None
        reference = sim.render_view(*old_view)
        dest, spot = next((r, s) for r in home.objects if r.is_receptacle and r.object_id != obj.receptacle_id
                          and (s := _free_spot(sim, obj, r, np.random.default_rng(0), FindingDoryGenConfig()))
                          is not None and _look_at(sim, r) is not None)

        sim.pick_up(obj.instance_id)
        assert sim.is_carried(obj.instance_id) and obj.object_id not in {o.object_id for o in sim.current_objects()}
        assert _seen(sim, old_view, obj.instance_id) == 0

        moved = sim.place_on(obj.instance_id, dest.object_id, spot)
        assert moved.receptacle_id == dest.object_id and moved.room_id == dest.room_id
        assert np.allclose(moved.position_m, spot)
        assert sim.object_by_instance_id(obj.instance_id) == moved
        assert _seen(sim, old_view, obj.instance_id) == 0  # gone from where it stood
        new_view = _look_at(sim, moved)
        assert new_view is not None and _seen(sim, new_view, obj.instance_id) > 0
        # Geometric ray casting agrees with the rasteriser: a ray to the new centre hits the object.
        eye = np.array([new_view[0][0], new_view[0][1], sim.config.camera_height_m])
        distance, hit = sim.renderer.cast_ray(eye, np.asarray(moved.position_m) - eye)
        assert hit == obj.instance_id and distance < 1.0
        # The navigable grid (floor objects only) is unchanged; the verifier's goal point follows the object: its
        # new position snapped to the floor (FindingDory measures movable objects so, pddl.py l.420-426).
        assert np.array_equal(sim.navgrid.navigable, before_grid)
        assert np.array_equal(NavGrid.from_home(home).navigable, before_grid)
        judge = TaskJudge(sim, sim.base_pose_world)
        points = judge.goal(obj.object_id).points_xy_m
        grid = sim.navgrid
        assert np.allclose(points, grid.cell_to_world(*grid.snap(np.asarray(moved.position_m[:2])))[None])
        gap = np.linalg.norm(points - np.clip(points, moved.bbox_min_m[:2], moved.bbox_max_m[:2]), axis=1)
        assert gap.max() <= 1.0 + 1e-9

        # Put back where it was: the image is the original one, pixel for pixel.
        assert obj.receptacle_id is not None
        sim.place_on(obj.instance_id, obj.receptacle_id, obj.position_m)
        again = sim.render_view(*old_view)
        assert np.array_equal(again.rgb, reference.rgb) and np.array_equal(again.segmentation, reference.segmentation)


def test_moving_checks_name_the_bad_value() -> None:
    home = generate_home(HOME_SEED, HomeConfig(num_rooms=3))
    with EmbeddedSim(home) as sim:
        furniture = next(o for o in home.objects if o.is_receptacle)
        small = next(o for o in home.objects if o.receptacle_id is not None)
        with pytest.raises(SceneGenerationError, match=furniture.object_id):
            sim.pick_up(furniture.instance_id)
        with pytest.raises(SceneGenerationError, match="does not stand on top"):
            sim.place_on(small.instance_id, furniture.object_id, (0.0, 0.0, 5.0))
        with pytest.raises(SceneGenerationError, match="is not a receptacle"):
            sim.place_on(small.instance_id, small.object_id, small.position_m)
        sim.pick_up(small.instance_id)
        with pytest.raises(SceneGenerationError, match="already carried"):
            sim.pick_up(small.instance_id)


# ----------------------------------------------------------------------------------------------- one episode


class Episode:
    def __init__(self, sim: EmbeddedSim, experience: Experience, judge: TaskJudge,
                 tasks: tuple[FindingDoryTask, ...], navigator: PoseGoalNavigator) -> None:
        self.sim, self.experience, self.judge, self.tasks, self.navigator = sim, experience, judge, tasks, navigator
        self.map = navigator.snapshot()

    def task(self, task_type: str) -> FindingDoryTask:
        return next(t for t in self.tasks if t.task_type == task_type)


@pytest.fixture(scope="module")
def episode() -> Iterator[Episode]:
    rng = np.random.default_rng(HOME_SEED)
    with EmbeddedSim(generate_home(HOME_SEED), findingdory_sim_config()) as sim:
        navigator = PoseGoalNavigator(PoseNavConfig(actions=sim.config.action_sizes))
        experience = collect_experience(sim, rng, on_frame=navigator.observe)
        judge = TaskJudge(sim, experience.start_world)
        yield Episode(sim, experience, judge, generate_tasks(sim, experience, judge, rng), navigator)


@pytest.mark.slow
def test_experience_log_follows_the_moves(episode: Episode) -> None:
    log, moves, sim = episode.experience.log, episode.experience.moves, episode.sim
    config = FindingDoryGenConfig()
    assert config.interactions[0] <= len(moves) <= config.interactions[1]
    assert [(i.object_id, i.receptacle_id) for _, i in log.events("pick")] == [(m.object_id, m.source_id)
                                                                               for m in moves]
    assert [(i.object_id, i.receptacle_id) for _, i in log.events("place")] == [(m.object_id, m.dest_id)
                                                                                for m in moves]
    times = np.array([f.time_s for f in log.frames])
    assert np.all(np.diff(times) > 0) and abs(log.frames[0].camera_tilt_rad) < 1e-9
    assert all(abs(f.camera_tilt_rad - config.camera_tilt_rad) < 1e-9 for f in log.frames[1:])
    for m in moves:
        now = next(o for o in sim.current_objects() if o.object_id == m.object_id)
        assert now.receptacle_id == m.dest_id
        pick, after = log.frames[m.pick_frame], log.frames[m.pick_frame + 1]
        assert next(s.support_id for s in pick.seen if s.object_id == m.object_id) == m.source_id
        assert after.coverage_of(m.object_id) == 0.0  # carried: out of the world
        assert all(s.support_id == m.dest_id for f in log.frames[m.place_frame:] for s in f.seen
                   if s.object_id == m.object_id)
        assert log.frames[m.place_frame].coverage_of(m.object_id) > 0.0
        # The world after the experience: the view from the pick frame no longer shows the object there.
        assert episode.judge.check_frame(Subgoal("object", frozenset({m.object_id})), pick).sc is False


@pytest.mark.slow
def test_every_task_type_has_a_correct_non_empty_answer(episode: Episode) -> None:
    tasks, moves, log = episode.tasks, episode.experience.moves, episode.experience.log
    assert [t.task_type for t in tasks] == list(TASK_TYPES)
    home_ids = {o.object_id for o in episode.sim.home.objects}
    rooms = {r.room_id for r in episode.sim.home.rooms}
    by_pick = [m.object_id for m in moves]
    by_place = [m.dest_id for m in sorted(moves, key=lambda m: m.place_frame)]
    for task in tasks:
        for goal in task.subgoals:
            assert goal.valid_ids
            assert all((room_of_target(t) in rooms) if goal.kind == "room" else t in home_ids for t in goal.valid_ids)
            assert episode.judge.solvable(goal, log)
        # Independent of the generator: the selector reads the answer off the log alone.
        _, answer = ExperienceSelector().answer(task.lang, log)
        expected = [goal.valid_ids for goal in task.subgoals]
        assert sorted(map(sorted, answer)) == sorted(map(sorted, expected)), task.lang
        words = task.lang.rstrip(".").split()
        if task.template_key == "order_pick":
            assert expected == [frozenset({by_pick[ordinal_index(words[-1], len(by_pick))]})]
        elif task.template_key == "order_place":
            assert expected == [frozenset({by_place[ordinal_index(words[-1], len(by_place))]})]
        elif task.template_key in ("interaction_picked", "revisit_any_order"):
            assert set().union(*expected) == set(by_pick)
        elif task.template_key == "revisit_pick_order":
            assert expected == [frozenset({o}) for o in by_pick]
        elif task.template_key == "revisit_place_order":
            assert expected == [frozenset({r}) for r in by_place]
        elif task.template_key.startswith("duration"):
            spans = {m.object_id: log.frames[m.place_frame].time_s - log.frames[m.pick_frame].time_s for m in moves}
            pick = max if task.template_key.endswith("longest") else min
            assert pick(spans, key=lambda o: spans[o]) in expected[0]


@pytest.mark.slow
def test_selected_frames_pass_the_high_level_check(episode: Episode) -> None:
    log = episode.experience.log
    for task in episode.tasks:
        selection = ExperienceSelector().select(task.lang, log)
        outcome = suite.high_level_outcome(episode.judge, task, selection, log)
        assert outcome.success and outcome.dtg and outcome.sc, task.lang
    # The frame of the first pick shows the object where it no longer is: wrong; its place frame: right.
    move = episode.experience.moves[0]
    task = FindingDoryTask("task_x", "interaction_order", "order_pick", "Navigate to the object you picked up first.",
                           (Subgoal("object", frozenset({move.object_id})),))
    stale = Selection((move.pick_frame,), (move.object_id,), ())
    assert suite.high_level_outcome(episode.judge, task, stale, log) == suite.Relaxed(False, False, False)
    placed = Selection((move.place_frame,), (move.object_id,), ())
    assert suite.high_level_outcome(episode.judge, task, placed, log) == suite.Relaxed(True, True, True)


@pytest.mark.slow
def test_run_task_scores_as_findingdory_does(episode: Episode) -> None:
    task = episode.task("interaction_order")
    config = suite.FindingDoryRunConfig(max_actions_per_goal=300)
    outcome = suite.run_task(episode.sim, episode.judge, episode.navigator, episode.map, episode.experience.log,
                             task, "e", config)
    r = outcome.record
    assert r.hl_success and r.ll_success and outcome.stops == len(task.subgoals)
    start = episode.judge.start_world.xy()
    assert outcome.shortest_path_m == pytest.approx(episode.judge.shortest_path_m(task, start))
    assert r.ll_spl == pytest.approx(outcome.shortest_path_m / max(outcome.shortest_path_m, outcome.path_length_m))
    assert outcome.selection is not None
    frame = episode.experience.log.frames[outcome.selection.frame_indices[0]]
    # HL-SPL: to the view points of the target the chosen frame satisfied (FindingDory), not to the frame's pose
    satisfied = episode.judge.check_frame(task.subgoals[0], frame).target_id
    assert satisfied is not None
    to_target = episode.judge.distance_m(satisfied, start)
    assert r.hl_spl == pytest.approx(spl(True, outcome.shortest_path_m, to_target))
    # The navigator stopped at the chosen pose (within its arrival radius) facing the frame's heading.
    assert outcome.path_length_m > 0.0 and outcome.num_actions < 300


def test_metric_table_matches_hand_computed_values() -> None:
    records = [
        # hl_spl = 2 / max(2, 2.5) = 0.8, ll_spl = 2 / max(2, 4) = 0.5
        FindingDoryRecord.from_distances("e", "task_1", "interaction", hl_success=True, hl_dtg_success=True,
                                         hl_sc_success=True, ll_success=True, shortest_path_m=2.0,
                                         hl_goal_path_m=2.5, path_length_m=4.0),
        FindingDoryRecord.from_distances("e", "task_2", "interaction", hl_success=False, hl_dtg_success=True,
                                         hl_sc_success=False, ll_success=False, shortest_path_m=3.0,
                                         hl_goal_path_m=5.0, path_length_m=0.0),
        FindingDoryRecord.from_distances("e", "task_3", "ordered_revisitation", hl_success=True,
                                         hl_dtg_success=True, hl_sc_success=True, ll_success=False,
                                         shortest_path_m=6.0, hl_goal_path_m=None, path_length_m=9.0),
    ]
    lines = suite.format_table(records).splitlines()
    assert lines[0].split() == ["HL-SR", "LL-SR", "HL-SPL", "LL-SPL", "DTG-SR", "SC-SR", "n"]
    # HL-SR 2/3, LL-SR 1/3, HL-SPL (0.8 + 0) / 2 (multi-goal left out), LL-SPL 0.5 / 3, DTG 3/3, SC 2/3.
    assert lines[1].split() == ["overall", "66.7", "33.3", "40.0", "16.7", "100.0", "66.7", "3"]
    assert lines[2].split() == ["interaction", "50.0", "50.0", "40.0", "25.0", "100.0", "50.0", "2"]
    assert lines[3].split() == ["ordered_revisitation", "100.0", "0.0", "-", "0.0", "100.0", "100.0", "1"]


def _outcome(hl: bool, ll: bool, stops: int, goals: int, error: Optional[str] = None) -> suite.TaskOutcome:
    record = FindingDoryRecord.from_distances("e", "task_1", "interaction", hl_success=hl, hl_dtg_success=hl,
                                              hl_sc_success=hl, ll_success=ll, shortest_path_m=2.0,
                                              hl_goal_path_m=2.0, path_length_m=3.0 if goals else 0.0)
    return suite.TaskOutcome(record=record, lang="Navigate to any object you picked up yesterday.",
                             template_key="pick_any", valid_targets=(("cup_1",),), selection=None,
                             shortest_path_m=2.0, path_length_m=3.0 if goals else 0.0, num_actions=10 * goals,
                             stops=stops, error=error, goal_starts=tuple(range(goals)))


@pytest.mark.parametrize(("outcome", "stop_reason", "failure"), [
    (_outcome(True, True, 1, 1), "stop", None),
    (_outcome(False, False, 0, 0), "stop", "wrong_instance"),  # frames that do not show the goal: no drive
    (_outcome(True, False, 1, 1), "stop", "near_miss"),  # the right frames, a STOP the verifier refused
    (_outcome(True, False, 0, 1), "budget", "budget"),
    (_outcome(False, False, 0, 0, error="the VLM answered 'x'"), "error", "error"),
])
def test_a_failed_task_is_classified_as_the_failure_taxonomy_says(outcome: suite.TaskOutcome, stop_reason: str,
                                                                    failure: Optional[str]) -> None:
    record = outcome.subtask_record(0)
    assert (record.stop_reason, record.failure, record.success) == (stop_reason, failure, failure is None)


# ----------------------------------------------------------------------------------------------- CLI


@pytest.mark.slow
def test_cli_runs_one_tiny_episode_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(suite, "TASK_TYPES", ("interaction_order", "unordered_revisitation"))
    out = tmp_path / "fd.json"
    rc = main(["bench", "--suite", "findingdory", "--episodes", "1", "--seed", "7", "--num-rooms", "3",
               "--max-actions", "300", "--out", str(out), "--quiet"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "HL-SR" in printed and "DTG-SR" in printed and "1 episodes, 2 tasks" in printed
    body = json.loads(out.read_text())
    assert body["suite"] == "findingdory" and body["meta"]["seed"] == 7
    # --max-actions: a per-goal budget instead of FindingDory's episode budget, named in the table and the meta
    custom = "custom (findingdory v1; budget 300 actions/subtask (official 5000 actions/episode"
    assert f"protocol: {custom}" in printed and body["meta"]["protocol"].startswith(custom)
    tasks = body["tasks"]
    assert [t["task_type"] for t in tasks] == ["interaction_order", "unordered_revisitation"]
    assert len(tasks[1]["selected_frames"]) == len(tasks[1]["valid_targets"]) >= 3
    overall = body["summary"]["overall"]
    for key, field in (("hl_sr", "hl_success"), ("ll_sr", "ll_success"), ("dtg_sr", "hl_dtg_success"),
                       ("sc_sr", "hl_sc_success"), ("ll_spl", "ll_spl")):
        assert overall[key] == pytest.approx(sum(float(t[field]) for t in tasks) / len(tasks))
    assert overall["hl_spl"] == pytest.approx(tasks[0]["hl_spl"])  # the multi-goal task has none
    for line in printed.splitlines():
        if line.startswith("overall"):
            assert line.split()[1:3] == [f"{100 * overall['hl_sr']:.1f}", f"{100 * overall['ll_sr']:.1f}"]


def test_cli_names_a_missing_episode_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Readable real files are refused naming their scene: tests/test_suite_record_report.py
    rc = main(["bench", "--suite", "findingdory", "--episodes-file", str(tmp_path / "x.json.gz"), "--quiet"])
    assert rc == 2
    assert f"{tmp_path / 'x.json.gz'}: cannot read episode file" in capsys.readouterr().err
