"""`goat-nav bench --suite langmap|pasture|findingdory` with `--record`, `--out` and `--report`, and `goat-nav
report` on each suite's results: tiny real runs, their bags read back with rosbags, their reports' tables."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import pytest
from rosbags.highlevel import AnyReader

from goat_core.types import DiscreteAction
from goat_nav.cli import main
from goat_ros import record
from goat_suites.common.results import read_results_json
from goat_suites.common.suite_metrics import LANGMAP_LEVELS, PASTURE_CATEGORIES
from goat_suites.findingdory import run as fd_suite
from goat_suites.findingdory.report import FINDINGDORY_COLUMNS

FD_TASK_TYPES = ("interaction_order", "unordered_revisitation")
FD_MAX_ACTIONS = 30  # the ordered task finishes within it; the three-goal revisit runs out of budget


def _messages(bag: Path) -> list[tuple[str, Any]]:
    """(topic, decoded message) of every message, in log order."""
    with AnyReader([bag]) as reader:
        return [(c.topic, reader.deserialize(raw, c.msgtype)) for c, _, raw in reader.messages()]


def _observations_acted_on(action_lists: Sequence[Sequence[DiscreteAction]], fresh_per_list: bool) -> int:
    """Observation sets an agent acted on: a fresh one per episode (or per task, ``fresh_per_list``) and one
    after every action but STOP (after STOP the next goal starts on the same observation)."""
    count, fresh = 0, True
    for actions in action_lists:
        fresh = fresh or fresh_per_list
        for action in actions:
            count += fresh
            fresh = action is not DiscreteAction.STOP
    return count


def _table_rows(page: str, table_id: str) -> list[list[str]]:
    match = re.search(rf'<table id="{table_id}">.*?<tbody>(.*?)</tbody>', page)
    assert match, table_id
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", match.group(1))]


# ----------------------------------------------------------------------------------------------- LangMap


@pytest.fixture(scope="module")
def langmap_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(results, report, bag folder) of one recorded LangMap sequence with a tiny budget."""
    root = tmp_path_factory.mktemp("langmap")
    results, report, bag = root / "results.json", root / "report.html", root / "run"
    assert main(["bench", "--suite", "langmap", "--episodes", "1", "--seed", "3000", "--num-rooms", "3",
                 "--max-actions", "3", "--quiet", "--out", str(results), "--report", str(report),
                 "--record", f"{bag}.mcap"]) == 0
    return results, report, bag


@pytest.mark.slow
def test_a_langmap_bag_holds_every_goal_action_and_observation(langmap_run: tuple[Path, Path, Path]) -> None:
    results, _, bag = langmap_run
    records = read_results_json(results).records
    messages = _messages(bag)
    counts = Counter(topic for topic, _ in messages)
    assert set(counts) == set(record.TOPICS)
    actions = [m.action for topic, m in messages if topic == record.ACTION_TOPIC]
    assert actions == [int(a) for r in records for a in r.actions or ()]
    assert counts[record.ACTION_TOPIC] == sum(r.num_actions for r in records) > 0
    n_obs = _observations_acted_on([r.actions or () for r in records], fresh_per_list=False)
    for topic in (record.RGB_TOPIC, record.DEPTH_TOPIC, record.CAMERA_INFO_TOPIC, record.ODOM_TOPIC, record.TF_TOPIC):
        assert counts[topic] == n_obs, topic
    goals = [m for topic, m in messages if topic == record.GOAL_TOPIC]
    results_msgs = [m for topic, m in messages if topic == record.RESULT_TOPIC]
    assert len(goals) == len(results_msgs) == len(records) == 5
    assert [(g.subtask_index, g.level) for g in goals] == [(r.index, r.level) for r in records]
    assert [(m.success, m.num_actions, m.stop_reason) for m in results_msgs] == \
        [(r.success, r.num_actions, r.stop_reason) for r in records]


@pytest.mark.slow
def test_the_langmap_report_has_levels_styles_and_seq_sr(langmap_run: tuple[Path, Path, Path],
                                                         tmp_path: Path) -> None:
    results_path, report, _ = langmap_run
    results = read_results_json(results_path)
    tables = results.meta["langmap"]["tables"]
    page = report.read_text()
    levels = [level for level in LANGMAP_LEVELS if level in tables["by_level"]]
    assert _table_rows(page, "by-level") == [
        [level, f"{tables['by_level'][level]['success_rate']:.3f}", f"{tables['by_level'][level]['spl']:.3f}",
         str(tables["by_level"][level]["count"])] for level in levels]
    assert _table_rows(page, "seq-sr") == [[n, f"{v:.3f}"] for n, v in tables["seq_sr"].items()]
    assert [row[0] for row in _table_rows(page, "by-style")] == list(tables["by_style"])
    assert 'class="chart seq-sr"' in page and 'class="chart by-level"' in page
    assert page.count('<img class="map"') == 1
    again = tmp_path / "again.html"
    assert main(["report", str(results_path), "--out", str(again)]) == 0
    assert again.read_bytes() == report.read_bytes()


# ----------------------------------------------------------------------------------------------- PASTURE


@pytest.mark.slow
def test_the_pasture_report_has_the_splits(tmp_path: Path) -> None:
    results_path, report = tmp_path / "pasture.json", tmp_path / "pasture.html"
    assert main(["bench", "--suite", "pasture", "--episodes", "1", "--seed", "7", "--num-rooms", "3",
                 "--max-actions", "2", "--quiet", "--out", str(results_path), "--report", str(report)]) == 0
    by_category = read_results_json(results_path).meta["pasture"]["by_category"]
    page = report.read_text()
    rows = _table_rows(page, "by-pasture-split")
    assert [row[0] for row in rows] == [c for c in PASTURE_CATEGORIES if c in by_category]
    for name, sr, spl, n in rows:
        assert (sr, spl, n) == (f"{by_category[name]['success_rate']:.3f}", f"{by_category[name]['spl']:.3f}",
                                str(by_category[name]["count"]))
    assert 'class="chart by-pasture-split"' in page
    assert page.count('<img class="map"') == len(read_results_json(results_path).records)


# ----------------------------------------------------------------------------------------------- FindingDory


@pytest.fixture(scope="module")
def findingdory_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(results, report, bag folder) of one recorded FindingDory episode with two task types (its experience is
    recorded too, under experience/)."""
    root = tmp_path_factory.mktemp("findingdory")
    results, report, bag = root / "fd.json", root / "fd.html", root / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fd_suite, "TASK_TYPES", FD_TASK_TYPES)
        assert main(["bench", "--suite", "findingdory", "--episodes", "1", "--seed", "7", "--num-rooms", "3",
                     "--homes", "primitive", "--max-actions", str(FD_MAX_ACTIONS), "--quiet", "--out", str(results),
                     "--report", str(report), "--record", str(bag), "--experience-bags", str(root / "experience")]) == 0
    return results, report, bag


@pytest.mark.slow
def test_a_findingdory_bag_holds_the_interaction_phase(findingdory_run: tuple[Path, Path, Path]) -> None:
    results, _, bag = findingdory_run
    tasks = json.loads(results.read_text())["tasks"]
    messages = _messages(bag)
    counts = Counter(topic for topic, _ in messages)
    goals = [m for topic, m in messages if topic == record.GOAL_TOPIC]
    outcomes = [m for topic, m in messages if topic == record.RESULT_TOPIC]
    assert [(g.subtask_index, g.text, g.modality) for g in goals] == \
        [(i, t["lang"], "description") for i, t in enumerate(tasks)]
    assert [g.max_actions for g in goals] == [FD_MAX_ACTIONS * len(t["valid_targets"]) for t in tasks]
    assert [(m.num_actions, m.success) for m in outcomes] == [(t["num_actions"], t["ll_success"]) for t in tasks]
    assert [m.stop_reason for m in outcomes] == ["stop", "budget"]
    action_lists = [[DiscreteAction(a) for a in m.actions] for m in outcomes]
    assert [m.action for topic, m in messages if topic == record.ACTION_TOPIC] == \
        [int(a) for actions in action_lists for a in actions]
    assert counts[record.ACTION_TOPIC] == sum(t["num_actions"] for t in tasks) > 0
    n_obs = _observations_acted_on(action_lists, fresh_per_list=True)  # every task starts from a reset
    for topic in (record.RGB_TOPIC, record.DEPTH_TOPIC, record.ODOM_TOPIC, record.TF_TOPIC):
        assert counts[topic] == n_obs, topic


@pytest.mark.slow
def test_the_findingdory_report_has_its_metrics(findingdory_run: tuple[Path, Path, Path], tmp_path: Path) -> None:
    results_path, report, _ = findingdory_run
    body = json.loads(results_path.read_text())
    overall = body["summary"]["overall"]
    page = report.read_text()

    def percent(value: Any) -> str:
        return "-" if value is None else f"{100.0 * value:.1f}"

    keys = ("hl_sr", "ll_sr", "hl_spl", "ll_spl", "dtg_sr", "sc_sr")
    assert _table_rows(page, "findingdory-overall")[:6] == [
        [name, percent(overall[key])] for name, key in zip(FINDINGDORY_COLUMNS, keys, strict=True)]
    assert _table_rows(page, "findingdory-by-task-type") == [
        [t] + [percent(body["summary"]["by_task_type"][t][key]) for key in keys] + ["1"] for t in FD_TASK_TYPES]
    assert all(t["lang"] in page for t in body["tasks"])
    assert page.count('<figure class="task-map">') == len(FD_TASK_TYPES)  # a map per task from the sidecar
    # The high level is named, and per task the frames it chose sit next to the oracle's, as thumbnails.
    assert body["meta"]["high_level"]["selector"] == "memory" and body["meta"]["perception"] == "ground_truth"
    assert "High level: <b>memory</b>, perception: <b>ground_truth</b>" in page
    for t in body["tasks"]:
        assert t["reference_frames"] and t["selected_frames"]
        for k in t["selected_frames"] + t["reference_frames"]:
            assert f'<img alt="frame {k}" src="data:image/jpeg;base64,' in page
    assert page.count('<div class="frames ') == len(FD_TASK_TYPES)
    again = tmp_path / "again.html"
    assert main(["report", str(results_path), "--out", str(again)]) == 0
    assert again.read_bytes() == report.read_bytes()


@pytest.mark.slow
def test_the_findingdory_experience_is_a_bag_of_its_own(findingdory_run: tuple[Path, Path, Path]) -> None:
    from goat_suites.findingdory.experience_bag import read_experience_bag

    video = read_experience_bag(findingdory_run[0].parent / "experience" / "7-0")
    assert len(video) > 50 and video.has_segmentation and video.annotation
    assert any(f.proprioception.holding for f in video.frames) and not video.frames[0].proprioception.holding
    times = [f.time_s for f in video.frames]
    assert times == sorted(times) and times[0] >= 8 * 3600.0


@pytest.mark.slow
def test_a_findingdory_results_file_that_does_not_add_up_is_named(findingdory_run: tuple[Path, Path, Path],
                                                                   tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    body = json.loads(findingdory_run[0].read_text())
    body["summary"]["overall"]["ll_sr"] = 0.123
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(body))
    assert main(["report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "summary does not match" in err


# ---------------------------------------------------------------------------------- FindingDory episode files

REAL_FINDINGDORY = Path("/work/shared/reference-data/findingdory/episodes.json.gz")
HSSD_SCENE = "data/hssd-hab/scenes/102344193.scene_instance.json"


def _findingdory_file(path: Path) -> Path:
    """A FindingDory episodes.json.gz in the real schema (findingdory_dataset.py), one task."""
    instruction = {"task_id": "task_1", "lang": "Navigate to the object you picked up second.",
                   "task_type": "interaction_order", "sampled_objects": [], "sampled_receps": [],
                   "goal_expr": "robot_at_object(obj_1, robot_0)"}
    episode = {"episode_id": "3", "scene_id": HSSD_SCENE, "start_position": [0.0, 0.0, 0.0],
               "start_rotation": [0.0, 0.0, 0.0, 1.0], "instructions": {"task_1": instruction},
               "candidate_objects": [{"object_id": 1, "object_category": "apple", "position": [1.0, 0.5, 2.0],
                                      "view_points": []}]}
    path.write_bytes(gzip.compress(json.dumps({"episodes": [episode]}).encode()))
    return path


@pytest.mark.parametrize("source", ["schema", "real"])
def test_a_findingdory_episode_file_is_refused_naming_its_scene(source: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    if source == "real":
        if not REAL_FINDINGDORY.is_file():
            pytest.skip(f"no real FindingDory episode file at {REAL_FINDINGDORY} (HF yali30/findingdory-habitat)")
        path = REAL_FINDINGDORY
        scene = json.loads(gzip.decompress(path.read_bytes()))["episodes"][0]["scene_id"]
    else:
        path, scene = _findingdory_file(tmp_path / "episodes.json.gz"), HSSD_SCENE
    assert main(["bench", "--suite", "findingdory", "--episodes-file", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and scene in err and "habitat-sim" in err and str(path) in err


def test_a_broken_findingdory_episode_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    goat_like = tmp_path / "goat.json.gz"
    goat_like.write_bytes(gzip.compress(json.dumps({"episodes": [{"episode_id": "1", "scene_id": "s"}]}).encode()))
    for path, reason in ((tmp_path / "missing.json.gz", "cannot read"), (goat_like, "instructions")):
        assert main(["bench", "--suite", "findingdory", "--episodes-file", str(path), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and reason in err


def test_a_bad_record_path_fails_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").mkdir()
    for suite in ("langmap", "pasture", "findingdory"):
        assert main(["bench", "--suite", suite, "--episodes", "1", "--quiet", "--record",
                     str(tmp_path / "taken")]) == 2
        assert "already exists" in capsys.readouterr().err

