"""PASTURE: the real CoW description templates and result file, and RoboTHOR-format episode files."""

import gzip
import json
import math
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from goat_core.errors import EpisodeFormatError
from goat_core.types import GoalModality
from goat_suites.common.suite_metrics import PASTURE_CATEGORIES, pasture_by_category
from goat_suites.pasture.loader import (
    PASTURE_DATASET_DIRS,
    TEMPLATE_FILES,
    category_of_results_dir,
    load_pasture_episodes,
    load_pasture_result,
    load_pasture_results,
    load_pasture_templates,
    object_type_words,
    pasture_goal,
)

REFERENCE = Path("/work/shared/reference-data/cow_pasture")
RESULT = REFERENCE / "FloorPlan_Val3_5_GingerbreadHouse_1.json"


# ----------------------------------------------------------------------------------------------- templates


def test_real_templates() -> None:
    t = load_pasture_templates(REFERENCE)
    assert len(t.object_ids) == 15 and all(len(types) == 12 for types in t.object_ids.values())
    assert t.object_ids["FloorPlan_Val1_1"]["Television"] == "Television|+06.83|+01.50|-02.60"
    clock = t.spatial_appearance["FloorPlan_Val1_1"]["AlarmClock"]
    assert clock.appearance == "small, metallic alarm clock"
    assert clock.spatial_parts[0] == "alarm clock on a dresser"
    assert t.hidden_choices["FloorPlan_Val1_1"]["Bed|+08.72|00.00|-02.51"] == "under the bed with two pillows"
    texts = {c: t.goal_text("FloorPlan_Val1_1", "AlarmClock", c) for c in PASTURE_CATEGORIES if c != "uncommon"}
    assert texts["spatial"] == texts["spatial_distractors"] == "alarm clock on a dresser near a desk lamp, bed"
    assert texts["appearance"] == texts["appearance_distractors"] == "small, metallic alarm clock"
    assert texts["hidden"] == texts["hidden_distractors"] == "alarm clock under the bed with one pillow"
    assert t.goal_text("FloorPlan_Val3_5", "GingerbreadHouse", "uncommon") == "gingerbread house"
    with pytest.raises(EpisodeFormatError, match="no PASTURE spatial description of 'Sofa'"):
        t.goal_text("FloorPlan_Val1_1", "Sofa", "spatial")
    with pytest.raises(EpisodeFormatError, match="unknown PASTURE category"):
        t.goal_text("FloorPlan_Val1_1", "Mug", "regular")


def _edit_json(name: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        path = folder / name
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
    return edit


def _truncate(name: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        path = folder / name
        path.write_text(path.read_text()[:500])
    return edit


@pytest.mark.parametrize(
    ("edit", "file", "bad"),
    [
        (_edit_json(TEMPLATE_FILES[0], lambda d: d["FloorPlan_Val1_1"]["Apple"].pop()), TEMPLATE_FILES[0],
         r"\['FloorPlan_Val1_1'\]\['Apple'\]: expected \[spatial, appearance, \[spatial parts\]\]"),
        (_edit_json(TEMPLATE_FILES[0], lambda d: d["FloorPlan_Val1_2"].update(Piano=["p", "q", []])),
         TEMPLATE_FILES[0], r"object types \['Piano'\] have no entry in standard_object_ids.json"),
        (_edit_json(TEMPLATE_FILES[1], lambda d: d["FloorPlan_Val1_1"].update(Mug=7)), TEMPLATE_FILES[1],
         r"\['Mug'\]: expected a non-empty string, got 7"),
        (_edit_json(TEMPLATE_FILES[2], lambda d: d["FloorPlan_Val1_2"].update({"Sofa near door": "x"})),
         TEMPLATE_FILES[2], "expected a THOR object id 'Type|x|y|z'"),
        (_edit_json(TEMPLATE_FILES[3], lambda d: d["FloorPlan_Val1_1"].update(Mug="Cup|+01.40|+00.72|-03.94")),
         TEMPLATE_FILES[3], r"object id 'Cup\|\+01.40\|\+00.72\|-03.94' is not of type 'Mug'"),
        (_truncate(TEMPLATE_FILES[1]), TEMPLATE_FILES[1], "invalid JSON at line"),
    ],
)
def test_templates_reject(tmp_path: Path, edit: Callable[[Path], None], file: str, bad: str) -> None:
    for name in TEMPLATE_FILES:
        shutil.copy(REFERENCE / name, tmp_path / name)
    edit(tmp_path)
    with pytest.raises(EpisodeFormatError, match=f"{tmp_path / file}: .*{bad}"):
        load_pasture_templates(tmp_path)


# ----------------------------------------------------------------------------------------------- results


def test_real_result() -> None:
    r = load_pasture_result(RESULT)
    assert (r.episode_id, r.scene, r.object_type) == ("FloorPlan_Val3_5_GingerbreadHouse_1", "FloorPlan_Val3_5",
                                                      "GingerbreadHouse")
    assert r.success and len(r.actions) == 47 and len(r.trajectory) == 48 and r.actions[-1] == ("Stop", True)
    assert r.trajectory[0].position == (4.5, 0.9009996652603149, -1.25) and r.trajectory[0].rotation_deg == 60.0
    # Shortest path by hand from the file's corners: (4.5,-1.25) (4.53,-1.59) (4.56,-1.71) (4.62,-1.92)
    # (5.01,-3.99) (5.16,-4.14) (5.28,-4.14) (5.40,-4.05) (7.0,-2.5), y constant.
    legs = [(0.03, 0.34), (0.03, 0.12), (0.06, 0.21), (0.39, 2.07), (0.15, 0.15), (0.12, 0.0), (0.12, 0.09),
            (1.6, 1.55)]
    assert r.shortest_path_m == pytest.approx(sum(math.hypot(a, b) for a, b in legs), abs=1e-5)
    assert r.shortest_path_m == pytest.approx(5.4996, abs=1e-3) and r.path_length_m == pytest.approx(6.4903, abs=1e-3)
    assert r.spl == pytest.approx(r.shortest_path_m / r.path_length_m)
    table = pasture_by_category([r.to_record("uncommon")])
    assert table["uncommon"].success_rate == 1.0 and table["uncommon"].spl == pytest.approx(0.8474, abs=1e-4)


@pytest.mark.parametrize(
    ("change", "bad"),
    [
        (lambda d: d["episode_metrics"]["trajectory"].pop(), "47 poses for 47 actions"),
        (lambda d: d["episode_metrics"]["actions_taken"][3].update(action="Jump"),
         r"actions_taken\[3\].action: expected one of \('MoveAhead'"),
        (lambda d: d["episode_metrics"]["actions_taken"][-1].update(action="MoveAhead"),
         "a successful episode must end with Stop"),
        (lambda d: d["episode_result"].update(success="yes"), "episode_result.success: expected true or false"),
        (lambda d: d["episode_result"]["shortest_path"][2].pop("z"), r"shortest_path\[2\]: missing field 'z'"),
        (lambda d: d["episode_metrics"]["trajectory"][5].update(horizon=None), r"trajectory\[5\].horizon: expected"),
        (lambda d: d.pop("episode_result"), "top level: missing field 'episode_result'"),
    ],
)
def test_result_rejects(tmp_path: Path, change: Callable[[dict[str, Any]], None], bad: str) -> None:
    data = json.loads(RESULT.read_text())
    change(data)
    path = tmp_path / RESULT.name
    path.write_text(json.dumps(data))
    with pytest.raises(EpisodeFormatError, match=f"{path}: .*{bad}"):
        load_pasture_result(path)


def test_result_file_name_and_truncation(tmp_path: Path) -> None:
    path = tmp_path / "episode_3.json"
    shutil.copy(RESULT, path)
    with pytest.raises(EpisodeFormatError, match="file name: episode id 'episode_3' is not"):
        load_pasture_result(path)
    path = tmp_path / RESULT.name
    path.write_text(RESULT.read_text()[:-40])
    with pytest.raises(EpisodeFormatError, match="invalid JSON"):
        load_pasture_result(path)


def test_results_folder(tmp_path: Path) -> None:
    folder = tmp_path / "longtail_longtail_fbe_owl-b32-openai-center"
    folder.mkdir()
    shutil.copy(RESULT, folder / RESULT.name)
    (record,) = load_pasture_results(folder)
    assert record.category == "uncommon" and record.success
    assert category_of_results_dir("remove_hidden_fbe_owl-b32-openai") == "hidden"
    assert category_of_results_dir("normal_hidden_fbe_owl-b32-openai") == "hidden_distractors"
    assert category_of_results_dir("dup_appearence_fbe_owl-b32-openai") == "appearance_distractors"
    with pytest.raises(EpisodeFormatError, match="not '<env>_<class>_...' of a PASTURE split"):
        category_of_results_dir("robothor_regular_fbe_owl-b32-openai")


# ----------------------------------------------------------------------------------------------- episodes


def _episode(n: int = 0, object_type: str = "AlarmClock") -> dict[str, Any]:
    return {"id": f"FloorPlan_Val1_1_{object_type}_{n}", "scene": "FloorPlan_Val1_1", "object_type": object_type,
            "initial_position": {"x": 3.0, "y": 0.9, "z": -2.0}, "initial_orientation": 270,
            "shortest_path": [{"x": 3.0, "y": 0.01, "z": -2.0}, {"x": 7.0, "y": 0.01, "z": -4.0}],
            "shortest_path_length": 4.47, "target_position": {"x": 7.55, "y": 0.54, "z": -4.01},
            "object_id": "AlarmClock|+07.55|+00.54|-04.01", "difficulty": "hard"}


def _write_episodes(folder: Path, episodes: list[dict[str, Any]]) -> Path:
    path = folder / "val" / "episodes" / "FloorPlan_Val1_1.json.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(json.dumps(episodes).encode()))
    return path


def test_episode_folder(tmp_path: Path) -> None:
    folder = tmp_path / PASTURE_DATASET_DIRS["hidden"]
    _write_episodes(folder, [_episode(0), _episode(1)])
    episodes = load_pasture_episodes(folder)
    assert [e.episode_id for e in episodes] == ["FloorPlan_Val1_1_AlarmClock_0", "FloorPlan_Val1_1_AlarmClock_1"]
    e = episodes[0]
    assert (e.initial_position, e.initial_orientation_deg, e.shortest_path_length_m) == ((3.0, 0.9, -2.0), 270.0,
                                                                                         4.47)
    assert e.shortest_path[1] == (7.0, 0.01, -4.0) and e.extra == {"difficulty": "hard"}
    goal = pasture_goal(e, "hidden", load_pasture_templates(REFERENCE))
    assert goal.modality is GoalModality.DESCRIPTION and goal.text == "alarm clock under the bed with one pillow"
    assert goal.target_id == "AlarmClock|+07.55|+00.54|-04.01"
    uncommon = pasture_goal(e, "uncommon", load_pasture_templates(REFERENCE))
    assert uncommon.modality is GoalModality.CATEGORY and uncommon.category == "alarm clock"
    assert object_type_words("BasketBall") == "basket ball"


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(episode: dict[str, Any]) -> None:
        if value is ...:
            del episode[key]
        else:
            episode[key] = value
    return change


@pytest.mark.parametrize(
    ("change", "bad"),
    [
        (_set("initial_orientation", ...), r"\[1\]: missing field 'initial_orientation'"),
        (_set("id", "FloorPlan_Val1_1_Mug_1"), r"\[1\].id: 'FloorPlan_Val1_1_Mug_1' does not match"),
        (_set("id", "episode_1"), r"\[1\].id: episode id 'episode_1' is not"),
        (_set("object_id", "Mug|+01.40|+00.72|-03.94"), r"object_id: object id .* is not of type 'AlarmClock'"),
        (_set("initial_position", [3.0, 0.9, -2.0]), r"initial_position: expected an object"),
        (_set("shortest_path_length", -2.0), "shortest_path_length: expected a length >= 0 m"),
        (_set("id", "FloorPlan_Val1_1_AlarmClock_0"), r"\[1\].id: duplicate episode id"),
    ],
)
def test_episodes_reject(tmp_path: Path, change: Callable[[dict[str, Any]], None], bad: str) -> None:
    second = _episode(1)
    change(second)
    path = _write_episodes(tmp_path, [_episode(0), second])
    with pytest.raises(EpisodeFormatError, match=f"{path}: .*{bad}"):
        load_pasture_episodes(tmp_path)


def test_truncated_episode_file(tmp_path: Path) -> None:
    path = _write_episodes(tmp_path, [_episode(0)])
    path.write_bytes(path.read_bytes()[:30])
    with pytest.raises(EpisodeFormatError, match=f"{path}: not a readable gzip file"):
        load_pasture_episodes(path)
    empty = tmp_path / "robothor-objectnav-dup"
    (empty / "val" / "episodes").mkdir(parents=True)
    with pytest.raises(EpisodeFormatError, match="no PASTURE episode files"):
        load_pasture_episodes(empty)
