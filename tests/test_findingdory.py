"""FindingDory episode files, the real object attribute table, and per-task metric files."""

import copy
import gzip
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from goat_core.errors import EpisodeFormatError
from goat_suites.common.suite_metrics import findingdory_stats
from goat_suites.findingdory.loader import (
    CANDIDATE_FIELDS,
    LogicalExpr,
    Predicate,
    load_findingdory_dataset,
    load_findingdory_metrics,
    load_object_attributes,
    task_types_of,
)

ATTRIBUTES = Path("/work/shared/reference-data/findingdory/object_attribute_annotation.csv")
ROT = [0.0, 0.7071, 0.0, 0.7071]


def _goal(object_id: int, category: str, view_points: list[Any]) -> dict[str, Any]:
    return {"object_id": object_id, "object_name": f"{category}_{object_id}", "object_category": category,
            "position": [1.0, 0.5, float(object_id)], "view_points": view_points}


def _instructions() -> dict[str, Any]:
    return {
        "task_1": {"task_id": "task_1", "lang": "Navigate to the object you picked up second.",
                   "task_type": "interaction_order", "sampled_objects": [{"type": ["apple"], "attribute": None}],
                   "sampled_receps": [],
                   "goal_expr": {"expr_type": "OR", "quantifier": "EXISTS",
                                 "inputs": [{"name": "obj", "expr_type": "obj_type"}],
                                 "sub_exprs": ["robot_at_object(obj, robot_0)"]}},
        "task_2": {"task_id": "task_2", "lang": "Revisit the receptacles you placed objects on, in order.",
                   "task_type": "ordered_revisitation", "sampled_objects": [], "sampled_receps": [],
                   "sequential_goals": {"ordered": True, "sequence": [1, 0], "sub_expr_sequence": [1, 0]},
                   "goal_expr": {"expr_type": "and_sequential_ordered", "sub_exprs": [
                       {"expr_type": "AND", "sub_exprs": ["robot_at_receptacle(table_2|top, robot_0)"]},
                       {"expr_type": "AND", "sub_exprs": ["robot_at_receptacle(shelf_4|shelf, robot_0)"]}]}},
    }


def _dataset() -> dict[str, Any]:
    episode = {
        "episode_id": "17", "scene_id": "data/hssd/102344193.scene_instance.json",
        "start_position": [0.5, 0.0, -1.0], "start_rotation": ROT, "instructions": _instructions(),
        "candidate_objects": [_goal(21, "apple", [{"agent_state": {"position": [1.0, 0.0, 20.0],
                                                                   "rotation": ROT}, "iou": 0.3}])],
        "candidate_goal_receps": [_goal(4, "shelf", [0, 1])],  # rows of viewpoints.npy
        "name_to_receptacle": {"apple_21": "table_2|top"},
    }
    return {"episodes": [episode], "obj_category_to_obj_category_id": {"apple": 0}}


def _write(path: Path, data: Any) -> Path:
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


def _viewpoints(folder: Path, rows: int = 2) -> None:
    matrix = np.array([[1.0, 0.0, 4.0, 0.0, 0.7071, 0.0, 0.7071, 0.5]] * rows, dtype=np.float32)
    np.save(folder / "viewpoints.npy", matrix)


# ----------------------------------------------------------------------------------------------- attributes


def test_real_attribute_table() -> None:
    table = load_object_attributes(ATTRIBUTES)
    assert len(table) == 240
    apple = table["Apple_25"]
    assert (apple.object_category, apple.shape, apple.color, apple.material, apple.functionality,
            apple.print_or_design) == ("apple", "spherical", "red", "organic", "nutrition", "polka dots")
    assert table["Apple_6"].print_or_design is None
    assert table["Book_12"].color == "blue"


@pytest.mark.parametrize(
    ("edit", "bad"),
    [
        (lambda text: text[: text.index(",", text.index("\n", 200))], r"line \d+: expected 7 columns"),  # cut mid-row
        (lambda text: text.replace("object_name,shape", "name,shape", 1), "line 1: expected columns"),
        (lambda text: text.replace("Apple_6,spherical,red", "Apple_25,spherical,red", 1), "duplicate object_name"),
        (lambda text: text.replace("Book_12,cuboidal,blue", "Book_12,cuboidal,", 1), r"empty \['color'\]"),
        (lambda text: text.split("\n", 1)[0] + "\n", "has no rows"),
    ],
)
def test_attribute_table_rejects(tmp_path: Path, edit: Callable[[str], str], bad: str) -> None:
    path = tmp_path / "object_attribute_annotation.csv"
    path.write_text(edit(ATTRIBUTES.read_text()))
    with pytest.raises(EpisodeFormatError, match=f"{path}: .*{bad}"):
        load_object_attributes(path)


# ----------------------------------------------------------------------------------------------- episodes


def test_episode_file(tmp_path: Path) -> None:
    _viewpoints(tmp_path)
    dataset = load_findingdory_dataset(_write(tmp_path / "episodes.json.gz", _dataset()))
    (episode,) = dataset.episodes
    assert (episode.episode_id, episode.start_position) == ("17", (0.5, 0.0, -1.0))
    assert dataset.extra == {"obj_category_to_obj_category_id": {"apple": 0}}
    assert episode.extra["name_to_receptacle"] == {"apple_21": "table_2|top"}
    single, multi = episode.instructions["task_1"], episode.instructions["task_2"]
    assert not single.is_multi_goal and multi.is_multi_goal
    assert single.sampled_objects[0].types == ("apple",)
    assert isinstance(single.goal_expr, LogicalExpr) and single.goal_expr.quantifier == "EXISTS"
    assert single.goal_expr.inputs == (("obj", "obj_type"),)
    assert single.goal_expr.predicates() == (Predicate("robot_at_object", ("obj", "robot_0")),)
    assert isinstance(multi.goal_expr, LogicalExpr) and multi.goal_expr.expr_type == "AND_SEQUENTIAL_ORDERED"
    assert [p.args[0] for p in multi.goal_expr.predicates()] == ["table_2|top", "shelf_4|shelf"]
    assert set(episode.candidates) == set(CANDIDATE_FIELDS)
    (apple,) = episode.candidates["candidate_objects"]
    assert (apple.object_id, apple.attributes["object_name"], apple.view_points[0].iou) == ("21", "apple_21", 0.3)
    (shelf,) = episode.candidates["candidate_goal_receps"]
    assert len(shelf.view_points) == 2 and shelf.view_points[1].position == (1.0, 0.0, 4.0)
    assert shelf.view_points[0].iou == pytest.approx(0.5)
    assert task_types_of(dataset)[("17", "task_2")] == "ordered_revisitation"


def test_cached_view_point_rows_are_kept_without_the_matrix(tmp_path: Path) -> None:
    dataset = load_findingdory_dataset(_write(tmp_path / "episodes.json.gz", _dataset()))
    (shelf,) = dataset.episodes[0].candidates["candidate_goal_receps"]
    assert shelf.view_points == () and shelf.attributes["view_point_rows"] == [0, 1]


def _instr(task: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        instruction = data["episodes"][0]["instructions"][task]
        if value is ...:
            del instruction[key]
        else:
            instruction[key] = value
    return change


def _episode(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        if value is ...:
            del data["episodes"][0][key]
        else:
            data["episodes"][0][key] = value
    return change


@pytest.mark.parametrize(
    ("change", "bad"),
    [
        (_instr("task_1", "goal_expr", ...), r"instructions\['task_1'\]: missing field 'goal_expr'"),
        (_instr("task_1", "goal_expr", {"expr_type": "XOR", "sub_exprs": ["a(b)"]}),
         r"goal_expr.expr_type: expected one of \('AND'"),
        (_instr("task_1", "goal_expr", {"expr_type": "OR", "sub_exprs": ["robot_at_object obj"]}),
         r"goal_expr.sub_exprs\[0\]: expected a predicate 'name\(arg, ...\)'"),
        (_instr("task_1", "goal_expr", {"expr_type": "OR", "sub_exprs": []}), "at least one sub-expression"),
        (_instr("task_1", "goal_expr", {"expr_type": "OR", "quantifier": "SOME", "sub_exprs": ["a(b)"]}),
         "goal_expr.quantifier: expected one of"),
        (_instr("task_1", "task_id", "task_9"), r"task_id: 'task_9' differs from its key 'task_1'"),
        (_instr("task_1", "lang", ""), "lang: expected a non-empty string"),
        (_instr("task_2", "sequential_goals", {"sequence": [0]}), "needs 'ordered': true | false"),
        (_episode("instructions", {}), "an episode needs at least one instruction"),
        (_episode("start_position", [0.0, 1.0]), r"episodes\[0\].start_position: expected 3 numbers"),
        (_episode("candidate_goal_receps", [_goal(4, "shelf", [0, 5])]),
         r"view_points\[1\]: view point row 5 out of range for 2 cached rows"),
        (_episode("candidate_objects", [{"object_id": 3, "object_category": "apple"}]),
         r"candidate_objects\[0\]: missing field 'position'"),
        (lambda d: d["episodes"].append(copy.deepcopy(d["episodes"][0])), r"episodes\[1\].episode_id: duplicate"),
    ],
)
def test_episode_file_rejects(tmp_path: Path, change: Callable[[dict[str, Any]], None], bad: str) -> None:
    _viewpoints(tmp_path)
    data = copy.deepcopy(_dataset())
    change(data)
    path = _write(tmp_path / "episodes.json.gz", data)
    with pytest.raises(EpisodeFormatError, match=f"{path}: .*{bad}"):
        load_findingdory_dataset(path)


def test_truncated_episode_file_and_bad_matrix(tmp_path: Path) -> None:
    path = tmp_path / "episodes.json.gz"
    path.write_bytes(gzip.compress(json.dumps(_dataset()).encode())[:-20])
    with pytest.raises(EpisodeFormatError, match=f"{path}: not a readable gzip file"):
        load_findingdory_dataset(path)
    _write(path, _dataset())
    np.save(tmp_path / "viewpoints.npy", np.zeros((3, 4)))
    with pytest.raises(EpisodeFormatError, match=r"viewpoints.npy: expected an \(N, 8\) numeric matrix"):
        load_findingdory_dataset(path)


# ----------------------------------------------------------------------------------------------- metrics files


def _metrics() -> dict[str, Any]:
    return {
        "task_1": {"predicate_task_success": True, "high_level_goal_success": True, "high_level_dtg_success": True,
                   "high_level_sem_cov_success": True, "findingdory_spl": 0.6, "findingdory_high_level_spl": 0.9,
                   "num_steps": 120, "subgoal_count": 1},
        "task_2": {"predicate_task_success": 0, "high_level_goal_success": 0, "high_level_dtg_success": 1,
                   "high_level_sem_cov_success": 0, "findingdory_spl": 0.0, "findingdory_high_level_spl": -1,
                   "num_steps": 30, "subgoal_count": 2},
    }


def test_metrics_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "metrics_ep_ids_17.json.gz", _metrics())
    records = load_findingdory_metrics(path, {("17", "task_1"): "interaction_order"})
    assert [(r.episode_id, r.task_id, r.task_type) for r in records] == [("17", "task_1", "interaction_order"),
                                                                         ("17", "task_2", "unknown")]
    assert records[1].hl_spl is None  # FindingDory's -1: undefined for a multi-goal task
    stats = findingdory_stats(records)
    assert (stats.hl_sr, stats.ll_sr, stats.dtg_sr, stats.sc_sr) == (0.5, 0.5, 1.0, 0.5)
    assert (stats.hl_spl, stats.ll_spl) == (pytest.approx(0.9), pytest.approx(0.3))


@pytest.mark.parametrize(
    ("task", "key", "value", "bad"),
    [
        ("task_2", "predicate_task_success", True, r"\['task_2'\]: .*low-level success without high-level"),
        ("task_1", "high_level_goal_success", "yes", r"\['task_1'\].high_level_goal_success: expected true/false"),
        ("task_1", "findingdory_spl", 1.3, r"findingdory_spl: expected SPL in \[0, 1\]"),
        ("task_1", "high_level_sem_cov_success", ..., "missing field 'high_level_sem_cov_success'"),
    ],
)
def test_metrics_file_rejects(tmp_path: Path, task: str, key: str, value: Any, bad: str) -> None:
    data = _metrics()
    if value is ...:
        del data[task][key]
    else:
        data[task][key] = value
    path = _write(tmp_path / "metrics_ep_ids_17.json.gz", data)
    with pytest.raises(EpisodeFormatError, match=f"{path}: .*{bad}"):
        load_findingdory_metrics(path)
    other = tmp_path / "ep_17.json.gz"
    shutil.copy(path, other)
    with pytest.raises(EpisodeFormatError, match="metrics_ep_ids_<episode>"):
        load_findingdory_metrics(other)
