"""LangMap annotation files and result records: the real PlaNaVid result samples and files in the real layout."""

import copy
import gzip
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from goat_core.errors import EpisodeFormatError
from goat_core.types import GoalModality
from goat_suites.common.episodes import goals_for_task
from goat_suites.common.suite_metrics import langmap_by_level, seq_sr_table
from goat_suites.langmap.loader import (
    EXTRA_LEVELS,
    EXTRA_TEXTS,
    langmap_task_targets,
    load_langmap_dir,
    load_langmap_scene,
    sequence_to_goat_episode,
    task_to_goat_episode,
)
from goat_suites.langmap.results import load_langmap_results

SAMPLES = Path("/work/shared/reference-data/langmap")
SCENE = "00800-TEEsavR23oF"
ROT = [0.0, 0.7071, 0.0, 0.7071]


def _view(x: float, z: float) -> dict[str, Any]:
    return {"agent_state": {"position": [x, 0.0, z], "rotation": ROT}}


def _task(episode_id: int, targets: list[str], **extra: Any) -> dict[str, Any]:
    task = {"episode_id": episode_id, "start_position": [0.0, 0.0, 0.0], "start_rotation": ROT,
            "target_object_ids": targets}
    task.update(extra)
    return task


def _scene() -> dict[str, Any]:
    """A small annotation file in LangMap's layout: 3 goals, 2 regions, one task per level, one sequence."""
    return {
        "goals": [
            {"object_id": "wardrobe_12", "object_category": "wardrobe", "position": [2.0, 1.0, -1.0],
             "view_points": [_view(1.5, -1.0)],
             "annot_unique_concise_description": "tall wardrobe near white-sheeted bed",
             "annot_unique_detailed_description": "the tall wooden wardrobe next to the bed with white sheets"},
            {"object_id": "blanket_3", "object_category": "blanket", "position": [4.0, 0.5, 2.0],
             "view_points": [_view(3.5, 2.0), _view(4.0, 2.5)]},
            {"object_id": "blanket_9", "view_points": [_view(-2.0, 1.0), _view(-2.0, 3.0)]},  # no category/position
        ],
        "region_annotation": {
            "7": {"region_category": "Office", "concise_description": "computer desk beside couch",
                  "detailed_description": "a computer desk standing beside a grey couch"},
            "8": {"region_category": "Bedroom", "concise_description": "white-sheeted bed",
                  "detailed_description": "a double bed with white sheets", "level": 0},
        },
        "episodes_by_object_level": [_task(0, ["blanket_3", "blanket_9"], object_category="blanket")],
        "episodes_by_room_level": [_task(0, ["blanket_3"], object_category="blanket", room_name="Living Room")],
        "episodes_by_region_level": [_task(0, ["blanket_3"], object_category="blanket", region_id="7")],
        "episodes_by_instance_level": [_task(0, ["wardrobe_12"], object_category="wardrobe",
                                             instance_id="wardrobe_12")],
        "episode_by_sequence": [{"episode_id": 0, "start_position": [1.0, 0.0, 1.0], "start_rotation": ROT,
                                 "navigation_type": "sequence",
                                 "task_sequence": [["instance", 0], ["region", 0], ["object", 0], ["room", 0]]}],
    }


def _write(path: Path, data: Any) -> Path:
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


# ----------------------------------------------------------------------------------------------- results


def test_real_stats_samples() -> None:
    results = load_langmap_results(SAMPLES)
    assert [(r.level, r.index, r.success) for r in results] == [("instance", 0, True), ("region", 1, True),
                                                                ("region", 2, True)]
    first = results[0]
    assert first.scene_name == SCENE and first.sequence_id == f"{SCENE}_sequence_0"
    assert first.spl == pytest.approx(0.5241528323477107) and first.path_length_m == pytest.approx(15.5407518)
    assert first.distance_to_goal_m == pytest.approx(0.11531)
    assert first.instruction == "Find the tall wardrobe near white-sheeted bed"
    records = [r.to_level_record() for r in results]
    assert langmap_by_level(records)["region"].spl == pytest.approx((0.37251778882891945 + 0.30507193057642973) / 2)
    assert seq_sr_table(records, 3) == {1: 1.0, 2: 1.0, 3: 1.0}


def test_script_result_layouts(tmp_path: Path) -> None:
    (tmp_path / f"{SCENE}_sequence_4.json").write_text(json.dumps({
        "scene_name": SCENE, "episode_id": 4, "navigation_type": "sequence", "sequence": [
            {"task_id": 0, "task_type": "object", "instruction": "Find the sofa", "sr": 1, "spl": 0.5},
            {"task_id": 1, "task_type": "room", "instruction": "Find the bed in the bedroom", "sr": 0, "spl": 0.0},
        ]}))
    (tmp_path / f"{SCENE}_room_12.json").write_text(json.dumps({
        "task_id": f"{SCENE}_room_12", "task_type": "room", "instruction": "Find the tv in the den", "sr": 1,
        "spl": 0.25, "step_count": 40}))
    results = load_langmap_results(tmp_path)
    assert [(r.level, r.sequence_id, r.index, r.episode_id) for r in results] == [
        ("room", None, None, "12"), ("scene", f"{SCENE}_sequence_4", 0, None),
        ("room", f"{SCENE}_sequence_4", 1, None)]


@pytest.mark.parametrize(
    ("change", "bad"),
    [
        (lambda d: d.update(success=0.5), "success: expected success 0 or 1"),
        (lambda d: d.update(spl="high"), "spl: expected a number"),
        (lambda d: d.update(success=0.0), "spl: SPL 0.52.* of a failed goal must be 0"),
        (lambda d: d.update(id="TEEsavR23oF"), "id: expected '<scene>_<level>_<episode>'"),
        (lambda d: d.update(navigation_type="floor"), "navigation_type: unknown LangMap level 'floor'"),
        (lambda d: d.update(id=f"{SCENE}_room_3"), "navigation_type: 'instance' differs from the level"),
        (lambda d: d.pop("spl"), "top level: missing field 'spl'"),
        (lambda d: d.update(path_length=-1.0), "path_length: expected a length >= 0 m"),
    ],
)
def test_result_rejects(tmp_path: Path, change: Callable[[dict[str, Any]], Any], bad: str) -> None:
    data = json.loads((SAMPLES / f"stats_{SCENE}_sequence_0_0.json").read_text())
    change(data)
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EpisodeFormatError, match=f"{path}: .*{bad}"):
        load_langmap_results(path)


def test_truncated_result(tmp_path: Path) -> None:
    path = tmp_path / "stats.json"
    path.write_text((SAMPLES / f"stats_{SCENE}_sequence_0_1.json").read_text()[:60])
    with pytest.raises(EpisodeFormatError, match="invalid JSON at line"):
        load_langmap_results(path)


def test_unfailed_unreachable_spl_is_zero(tmp_path: Path) -> None:
    path = tmp_path / "stats.json"
    path.write_text('{"success": 0.0, "spl": NaN, "id": "00800-TEEsavR23oF_object_3", "navigation_type": "object"}')
    (result,) = load_langmap_results(path)
    assert (result.level, result.success, result.spl, result.episode_id) == ("scene", False, 0.0, "3")


# ----------------------------------------------------------------------------------------------- annotations


def test_scene_file(tmp_path: Path) -> None:
    scene = load_langmap_scene(_write(tmp_path / f"{SCENE}.json.gz", _scene()))
    assert scene.scene_name == SCENE and scene.scene_id == f"hm3d/val/{SCENE}/TEEsavR23oF.basis.glb"
    assert scene.goals["blanket_9"].object_category == "blanket"  # taken from the tasks that target it
    assert scene.goals["blanket_9"].position == (-2.0, 0.0, 2.0)  # centre of its view points
    assert scene.regions["8"].extra == {"level": 0}
    (sequence,) = scene.sequences
    tasks = scene.sequence_tasks(sequence)
    assert [t.level for t in tasks] == ["instance", "region", "scene", "room"]
    assert [scene.instruction(t) for t in tasks] == [
        "Find the tall wardrobe near white-sheeted bed",
        "Find the blanket in the office that has computer desk beside couch",
        "Find the blanket",
        "Find the blanket in the living room",
    ]
    assert scene.goal_text(tasks[1], concise=False) == ("blanket in the office that has a computer desk standing "
                                                        "beside a grey couch")
    goal = scene.goal(tasks[0])
    assert (goal.modality, goal.level, goal.target_id) == (GoalModality.DESCRIPTION, "instance", "wardrobe_12")
    assert scene.goal(tasks[2]).modality is GoalModality.CATEGORY and scene.goal(tasks[2]).target_id is None
    assert [g.object_id for g in scene.targets(tasks[2])] == ["blanket_3", "blanket_9"]
    assert load_langmap_dir(tmp_path)[0].tasks["room"][0].room_name == "Living Room"


def test_goat_episode(tmp_path: Path) -> None:
    scene = load_langmap_scene(_write(tmp_path / f"{SCENE}.json.gz", _scene()))
    episode = sequence_to_goat_episode(scene, scene.sequences[0])
    assert episode.episode_id == "sequence_0" and episode.start_position == (1.0, 0.0, 1.0)
    assert [t.modality for t in episode.tasks] == [GoalModality.DESCRIPTION, GoalModality.DESCRIPTION,
                                                   GoalModality.CATEGORY, GoalModality.DESCRIPTION]
    assert episode.extra[EXTRA_LEVELS] == {"0": "instance", "1": "region", "2": "scene", "3": "room"}
    assert episode.extra[EXTRA_TEXTS]["3"] == "blanket in the living room"
    # The scene-level task counts every blanket; the GOAT lookup and the LangMap targets agree.
    assert {g.object_id for g in goals_for_task(episode, episode.tasks[2])} == {"blanket_3", "blanket_9"}
    assert [g.object_id for g in langmap_task_targets(episode, 2)] == ["blanket_3", "blanket_9"]
    assert [g.object_id for g in goals_for_task(episode, episode.tasks[0])] == ["wardrobe_12"]
    single = task_to_goat_episode(scene, scene.tasks["room"][0])
    assert single.episode_id == "room_0" and len(single.tasks) == 1
    with pytest.raises(EpisodeFormatError, match="no LangMap targets recorded for subtask 5"):
        langmap_task_targets(episode, 5)


def _break(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set (or, with value ..., delete) the entry at a dotted path like "goals.0.view_points"."""
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        key_or_index: Any = int(last) if isinstance(node, list) else last
        if value is ...:
            del node[key_or_index]
        else:
            node[key_or_index] = value
    return change


@pytest.mark.parametrize(
    ("change", "bad"),
    [
        (_break("episodes_by_room_level", ...), "top level: missing field 'episodes_by_room_level'"),
        (_break("episode_by_sequence", ...), "top level: missing field 'episode_by_sequence'"),
        (_break("goals.1.view_points", []), r"goals\[1\].view_points: a goal needs at least one view point"),
        (_break("goals.2.object_id", 3.5), r"goals\[2\].object_id: expected a string or integer id"),
        (_break("goals.1.object_id", "wardrobe_12"), r"goals\[1\].object_id: duplicate object_id"),
        (_break("region_annotation.7.concise_description", ...), r"region_annotation\['7'\]: missing field"),
        (_break("episodes_by_region_level.0.region_id", "99"), r"region_id: region '99' has no entry"),
        (_break("episodes_by_object_level.0.target_object_ids", ["sofa_1"]), r"object ids \['sofa_1'\] are not"),
        (_break("episodes_by_object_level.0.target_object_ids", []), "needs at least one target object"),
        (_break("episodes_by_room_level.0.room_name", ...), r"episodes_by_room_level\[0\]: missing field 'room_n"),
        (_break("episodes_by_instance_level.0.instance_id", "blanket_3"),
         "goal 'blanket_3' has no annot_unique_concise_description"),
        (_break("episodes_by_room_level.0.start_rotation", [0.0, 1.0]),
         r"episodes_by_room_level\[0\].start_rotation: expected a quaternion of 4 numbers"),
        (_break("episode_by_sequence.0.task_sequence.1", ["region", 3]),
         r"task_sequence\[1\]\[1\]: index 3 out of range for 1 region-level episodes"),
        (_break("episode_by_sequence.0.task_sequence.0", ["floor", 0]), r"task_sequence\[0\]\[0\]: unknown LangM"),
        (_break("episode_by_sequence.0.task_sequence", []), "a sequence needs at least one goal"),
    ],
)
def test_scene_file_rejects(tmp_path: Path, change: Callable[[dict[str, Any]], None], bad: str) -> None:
    data = copy.deepcopy(_scene())
    change(data)
    path = _write(tmp_path / f"{SCENE}.json.gz", data)
    with pytest.raises(EpisodeFormatError, match=f"{path}: .*{bad}"):
        load_langmap_scene(path)


def test_truncated_scene_file(tmp_path: Path) -> None:
    path = tmp_path / f"{SCENE}.json.gz"
    path.write_bytes(gzip.compress(json.dumps(_scene()).encode())[:100])
    with pytest.raises(EpisodeFormatError, match=f"{path}: not a readable gzip file"):
        load_langmap_scene(path)
    with pytest.raises(EpisodeFormatError, match="not a folder of LangMap annotation files"):
        load_langmap_dir(tmp_path / "missing")
