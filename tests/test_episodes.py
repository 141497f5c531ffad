"""GOAT-Bench / ObjectNav episode loading and saving, on files written to disk in the real layouts."""

import copy
import gzip
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from goat_core.errors import EpisodeFormatError
from goat_core.types import GoalModality
from goat_suites.common.episode_files import (
    load_goat_dataset,
    load_image_goal_meta,
    load_objectnav_dataset,
    save_goat_dataset,
)
from goat_suites.common.episodes import (
    GoatDataset,
    GoatTask,
    ImageGoalKey,
    goals_for_task,
    goals_key,
    image_goal_for_task,
    scene_name,
)

REFERENCE = Path("/work/shared/reference-data")
OBJECTNAV_SPLIT = REFERENCE / "home-robot_mp3d_objectnav" / "train.json.gz"
IMAGE_GOAL_META = REFERENCE / "goat-bench_ZikeYan" / "val_seen_image_goal.json"

SCENE_ID = "hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb"
CHAIR_KEY = "TEEsavR23oF.basis.glb_chair"
BED_KEY = "TEEsavR23oF.basis.glb_bed"


def _view_point(x: float, z: float) -> dict[str, Any]:
    return {"agent_state": {"position": [x, 0.1, z], "rotation": [0.0, 0.7071, 0.0, 0.7071]}, "iou": 0.4}


def _scene_content() -> dict[str, Any]:
    """One scene's content file in the GOAT-Bench layout (field names as in GOAT-Bench / habitat-lab)."""
    chairs = [
        {"object_id": "chair_1", "object_category": "chair", "position": [1.0, 0.5, -2.0],
         "view_points": [_view_point(1.5, -2.0)], "object_name": "chair_1", "room_name": "kitchen"},
        {"object_id": "chair_2", "object_category": "chair", "position": [3.0, 0.5, -4.0],
         "view_points": [_view_point(3.5, -4.0), _view_point(3.0, -3.5)],
         "lang_desc": "the red chair next to the dining table", "colour": "red"},
    ]
    beds = [
        {"object_id": "bed_7", "object_category": "bed", "position": [-2.0, 0.6, 1.0],
         "view_points": [_view_point(-2.0, 2.0)],
         "image_goals": [
             {"position": [-2.0, 1.3, 2.5], "rotation": [0.0, 0.0, 0.0, 1.0], "hfov": 42,
              "image_dimensions": [640, 360], "frame_coverage": 0.3, "object_coverage": 0.9},
             {"position": [-1.0, 1.3, 2.5], "rotation": [-0.1, 0.0, 0.0, 0.995], "hfov": 79,
              "image_dimensions": [512, 512]},
         ]},
    ]
    episode = {
        "episode_id": "0",
        "scene_id": SCENE_ID,
        "scene_dataset_config": "hm3d_annotated_basis.scene_dataset_config.json",
        "start_position": [0.5, 0.1, 0.5],
        "start_rotation": [0.0, 0.3826834, 0.0, 0.9238795],
        "info": {"geodesic_distance": 4.2},
        "tasks": [["chair", "object", None], ["chair", "description", "chair_2"],
                  ["bed", "image", "bed_7", 1]],
    }
    second = copy.deepcopy(episode)
    second["episode_id"] = "1"
    second["tasks"] = [["bed", "object", "bed_7"]]
    return {"episodes": [episode, second], "goals": {CHAIR_KEY: chairs, BED_KEY: beds}}


def _write(path: Path, payload: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(payload).encode()
    path.write_bytes(gzip.compress(raw) if path.name.endswith(".gz") else raw)
    return path


def _split_layout(root: Path, episodes_in_split: bool) -> Path:
    """GOAT-Bench ships val_seen/val_seen.json.gz next to val_seen/content/<scene>.json.gz."""
    content = _scene_content()
    _write(root / "val_seen" / "content" / "TEEsavR23oF.json.gz", content)
    split = {"episodes": content["episodes"] if episodes_in_split else []}
    return _write(root / "val_seen" / "val_seen.json.gz", split)


@pytest.mark.parametrize("name", ["episodes.json", "episodes.json.gz"])
def test_single_file_fields_as_stored(tmp_path: Path, name: str) -> None:
    dataset = load_goat_dataset(_write(tmp_path / name, _scene_content()))
    assert [e.episode_id for e in dataset.episodes] == ["0", "1"]
    episode = dataset.episodes[0]
    assert episode.scene_id == SCENE_ID
    assert episode.start_position == (0.5, 0.1, 0.5)
    assert episode.tasks == (
        GoatTask("chair", GoalModality.CATEGORY, None, None),
        GoatTask("chair", GoalModality.DESCRIPTION, "chair_2", None),
        GoatTask("bed", GoalModality.IMAGE, "bed_7", 1),
    )
    assert episode.info == {"geodesic_distance": 4.2}
    assert episode.extra == {"scene_dataset_config": "hm3d_annotated_basis.scene_dataset_config.json"}
    chair_2 = episode.goals[CHAIR_KEY][1]
    assert chair_2.attributes == {"colour": "red"}
    assert chair_2.lang_desc == "the red chair next to the dining table"
    assert chair_2.view_points[1].position == (3.0, 0.1, -3.5)
    assert episode.goals[CHAIR_KEY][0].attributes == {"object_name": "chair_1", "room_name": "kitchen"}


@pytest.mark.parametrize("episodes_in_split", [False, True])
def test_split_and_content_layout(tmp_path: Path, episodes_in_split: bool) -> None:
    dataset = load_goat_dataset(_split_layout(tmp_path, episodes_in_split))
    assert [e.uid for e in dataset.episodes] == ["TEEsavR23oF/0", "TEEsavR23oF/1"]
    assert set(dataset.episodes[0].goals) == {CHAIR_KEY, BED_KEY}


def test_scene_filter_reads_only_named_scenes(tmp_path: Path) -> None:
    split = _split_layout(tmp_path, episodes_in_split=False)
    other = _scene_content()
    for e in other["episodes"]:
        e["scene_id"] = "hm3d/val/00801-HaxA7YrQdEC/HaxA7YrQdEC.basis.glb"
    other["goals"] = {k.replace("TEEsavR23oF", "HaxA7YrQdEC"): v for k, v in other["goals"].items()}
    _write(split.parent / "content" / "HaxA7YrQdEC.json.gz", other)
    assert len(load_goat_dataset(split).episodes) == 4
    only = load_goat_dataset(split, scenes={"HaxA7YrQdEC"})
    assert {scene_name(e.scene_id) for e in only.episodes} == {"HaxA7YrQdEC"}


def test_multi_scene_file_gives_each_episode_its_own_goals(tmp_path: Path) -> None:
    payload = _scene_content()
    other_scene = "procedural/home_0002"
    payload["episodes"][1]["scene_id"] = other_scene
    payload["goals"][goals_key(other_scene, "bed")] = payload["goals"][BED_KEY]
    dataset = load_goat_dataset(_write(tmp_path / "mixed.json", payload))
    assert set(dataset.episodes[0].goals) == {CHAIR_KEY, BED_KEY}
    assert set(dataset.episodes[1].goals) == {"home_0002_bed"}


@pytest.mark.parametrize(
    ("task_index", "expected_ids"),
    [(0, ["chair_1", "chair_2"]), (1, ["chair_2"]), (2, ["bed_7"])],
)
def test_goals_for_task(tmp_path: Path, task_index: int, expected_ids: list[str]) -> None:
    episode = load_goat_dataset(_write(tmp_path / "e.json", _scene_content())).episodes[0]
    goals = goals_for_task(episode, episode.tasks[task_index])
    assert [g.object_id for g in goals] == expected_ids


def test_image_goal_camera_parameters(tmp_path: Path) -> None:
    episode = load_goat_dataset(_write(tmp_path / "e.json", _scene_content())).episodes[0]
    spec = image_goal_for_task(episode, episode.tasks[2])
    assert (spec.hfov_deg, spec.image_height_px, spec.image_width_px) == (79.0, 512, 512)
    assert spec.tilt_rad() < 0.0  # a rotation of -11.5 deg about +X looks down
    first = goals_for_task(episode, episode.tasks[2])[0].image_goals[0]
    assert (first.frame_coverage, first.object_coverage, first.image_height_px) == (0.3, 0.9, 640)


def test_ros_frame_helpers(tmp_path: Path) -> None:
    episode = load_goat_dataset(_write(tmp_path / "e.json", _scene_content())).episodes[0]
    start = episode.start_pose_ros()
    assert (start.x_m, start.y_m) == pytest.approx((-0.5, -0.5))
    assert start.yaw_rad == pytest.approx(math.radians(45.0), abs=1e-6)
    chair = episode.goals[CHAIR_KEY][0]
    np.testing.assert_allclose(chair.position_ros_m(), [2.0, -1.0, 0.5])
    assert chair.view_points[0].pose_ros().yaw_rad == pytest.approx(math.pi / 2, abs=1e-3)
    # The start position itself is the origin of the episode frame.
    origin = episode.to_episode_frame_m(episode.start_position)
    np.testing.assert_allclose(origin, [0.0, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("name", ["out.json", "out.json.gz"])
def test_save_load_round_trip(tmp_path: Path, name: str) -> None:
    original = load_goat_dataset(_write(tmp_path / "in.json", _scene_content()))
    out = tmp_path / "saved" / name
    save_goat_dataset(original, out)
    assert out.read_bytes().startswith(b"\x1f\x8b") == name.endswith(".gz")
    assert load_goat_dataset(out) == original
    stored = json.loads(gzip.decompress(out.read_bytes()) if name.endswith(".gz") else out.read_bytes())
    assert stored["episodes"][0]["tasks"][2] == ["bed", "image", "bed_7", 1]
    assert stored["goals"][CHAIR_KEY][1]["colour"] == "red"
    assert list(tmp_path.glob("saved/.*.tmp")) == []


def test_save_split_by_scene_round_trip(tmp_path: Path) -> None:
    original = load_goat_dataset(_write(tmp_path / "in.json", _scene_content()))
    split = tmp_path / "val" / "val.json.gz"
    save_goat_dataset(original, split, split_by_scene=True)
    assert (tmp_path / "val" / "content" / "TEEsavR23oF.json.gz").is_file()
    assert json.loads(gzip.decompress(split.read_bytes()))["episodes"] == []
    assert load_goat_dataset(split) == original


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(payload: dict[str, Any]) -> None:
        target: Any = payload
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _delete(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def mutate(payload: dict[str, Any]) -> None:
        target: Any = payload
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_set(["episodes", 0, "tasks", 1, 1], "smell"),
         r"episodes\[0\]\.tasks\[1\]\[1\]: unknown modality 'smell'"),
        (_delete(["episodes", 1, "start_position"]), r"episodes\[1\]: missing field 'start_position'"),
        (_set(["episodes", 0, "start_rotation"], [0, 1, 0]), r"episodes\[0\]\.start_rotation: expected a"),
        (_set(["episodes", 0, "start_rotation"], [0, 0, 0, 0]), r"episodes\[0\]\.start_rotation: zero quat"),
        (_set(["episodes", 0, "start_position", 2], "x"), r"episodes\[0\]\.start_position\[2\]: expected a"),
        (_set(["episodes", 0, "tasks"], []), r"episodes\[0\]\.tasks: an episode needs at least one task"),
        (_set(["episodes", 0, "tasks", 1], ["chair", "description"]), r"tasks\[1\]\[2\]: a description task"),
        (_set(["episodes", 0, "tasks", 1, 2], "chair_9"), r"tasks\[1\]: .*object_id 'chair_9' is not among"),
        (_set(["episodes", 0, "tasks", 2, 3], 5), r"tasks\[2\]: .*image_idx 5 out of range"),
        (_set(["episodes", 0, "tasks", 2], ["bed", "image", "bed_7"]), r"tasks\[2\]\[3\]: an image task"),
        (_set(["episodes", 0, "tasks", 0, 0], "sofa"), r"tasks\[0\]: .*no goal objects of category 'sofa'"),
        (_delete(["goals", CHAIR_KEY, 1, "lang_desc"]), r"tasks\[1\]: object 'chair_2' has no lang_desc"),
        (_set(["goals", BED_KEY, 0, "image_goals", 0, "hfov"], 0), r"image_goals\[0\]\.hfov: expected deg"),
        (_set(["goals", BED_KEY, 0, "image_goals", 1, "image_dimensions"], [512]), r"image_dimensions: exp"),
        (_delete(["goals", CHAIR_KEY, 0, "object_category"]), r"goals\['[^']+'\]\[0\]: missing field 'obj"),
        (_set(["episodes"], {"0": {}}), r"episodes: expected a list, got dict"),
    ],
)
def test_bad_fields_name_file_episode_and_field(tmp_path: Path, mutate: Callable, message: str) -> None:
    payload = _scene_content()
    mutate(payload)
    path = _write(tmp_path / "bad.json.gz", payload)
    with pytest.raises(EpisodeFormatError, match=message) as info:
        load_goat_dataset(path)
    assert str(info.value).startswith(str(path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (gzip.compress(json.dumps(_scene_content()).encode())[:-40], "not a readable gzip file"),
        (gzip.compress(b'{"episodes": [}'), "invalid JSON at line 1 column 15"),
        (gzip.compress(b"\xff\xfe\x00"), "not UTF-8"),
        (gzip.compress(b"[1, 2]"), "top level: expected an object, got list"),
    ],
)
def test_unreadable_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "broken.json.gz"
    path.write_bytes(content)
    with pytest.raises(EpisodeFormatError, match=message):
        load_goat_dataset(path)


def test_missing_file_and_missing_content(tmp_path: Path) -> None:
    with pytest.raises(EpisodeFormatError, match="cannot read episode file"):
        load_goat_dataset(tmp_path / "nope.json.gz")
    split = _split_layout(tmp_path, episodes_in_split=True)
    (split.parent / "content" / "TEEsavR23oF.json.gz").rename(split.parent / "content" / "Other.json.gz")
    with pytest.raises(EpisodeFormatError, match="no content file for scene 'TEEsavR23oF'"):
        load_goat_dataset(split)


def test_save_refuses_two_goal_tables_under_one_key(tmp_path: Path) -> None:
    first, second = load_goat_dataset(_write(tmp_path / "in.json", _scene_content())).episodes
    second = replace(second, goals={**second.goals, BED_KEY: (second.goals[CHAIR_KEY][0],)})
    other = GoatDataset(episodes=(first, second))
    with pytest.raises(EpisodeFormatError, match="goals 'TEEsavR23oF.basis.glb_bed' differ"):
        save_goat_dataset(other, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


@pytest.mark.skipif(not OBJECTNAV_SPLIT.is_file(), reason="ObjectNav reference data not present")
def test_real_objectnav_v1_file() -> None:
    dataset = load_objectnav_dataset(OBJECTNAV_SPLIT)
    assert len(dataset.episodes) == 50000
    assert dataset.extra["category_to_task_category_id"]["bed"] == 6
    episode = dataset.episodes[0]
    assert (episode.uid, episode.start_position) == ("17DRP5sb8fy/0", (-1.89078, 0.07245, -2.1819))
    assert episode.tasks == (GoatTask("bed", GoalModality.CATEGORY),)
    assert episode.info["closest_goal_object_id"] == 5
    beds = goals_for_task(episode, episode.tasks[0])
    assert [g.object_id for g in beds] == ["5", "15"]
    assert beds[0].view_points[0].position == (-9.98395, 0.07245, -1.95226)
    assert beds[0].view_points[0].iou == pytest.approx(1.19375)
    assert beds[0].attributes["object_name"] == "0_0_5"
    # [0, 0.62436, 0, -0.78113] turns 2 * atan2(0.62436, -0.78113) = 282.73 deg about +Y: heading -77.27 deg.
    assert math.degrees(episode.start_pose_ros().yaw_rad) == pytest.approx(-77.27, abs=0.01)


@pytest.mark.skipif(not IMAGE_GOAL_META.is_file(), reason="GOAT-Bench image goal reference data not present")
def test_real_goat_bench_image_goal_meta() -> None:
    meta = load_image_goal_meta(IMAGE_GOAL_META)
    assert len(meta) == 860
    spec = meta[ImageGoalKey(scene="4ok3usBNeis", episode_id="0", object_id="heater_128", image_idx=6)]
    assert spec.hfov_deg == 77.0
    assert spec.position == (6.548101425170898, 0.8331397193890147, 4.960444450378418)
    assert spec.caption == "a box with a piece of paper and a piece of paper"
    assert ImageGoalKey("4ok3usBNeis", "1", "sink cabinet_318", 34) in meta  # object ids may hold spaces
    assert all(math.isfinite(s.yaw_rad()) and abs(s.tilt_rad()) < math.radians(80) for s in meta.values())


def test_image_goal_meta_bad_key(tmp_path: Path) -> None:
    path = _write(tmp_path / "meta.json", {"scene/0_chair": {"hfov": 79, "position": [0, 0, 0],
                                                             "rotation": [0, 0, 0, 1]}})
    with pytest.raises(EpisodeFormatError, match=r"\['scene/0_chair'\]: key must look like"):
        load_image_goal_meta(path)
