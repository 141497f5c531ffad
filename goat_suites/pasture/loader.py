"""PASTURE (CoWs on Pasture) episodes, description templates and result files.

Episodes (real-stanford/cow ``robothor_challenge.py::load_split``, the RoboTHOR ObjectNav challenge format):
``<dataset>/val/episodes/*.json.gz``, each a JSON list of ``{id: "<floor>_<object type>_<n>", scene:
"FloorPlan_Val3_5", object_type, initial_position: {x, y, z}, initial_orientation (deg about +y),
shortest_path: [{x, y, z}], shortest_path_length, target_position: {x, y, z}, object_id?: "Type|+x|+y|+z",
difficulty?}``. Which dataset folder each PASTURE split uses is in :data:`PASTURE_DATASET_DIRS`.

Templates (cow ``class_templates/``): ``spatial_appearence_map.json`` (floor -> object type -> [spatial
description, appearance description, [spatial sub-phrases]]), ``hidden_map.json`` (floor -> object type ->
hidden-object description), ``hidden_choices.json`` (floor -> receptacle object id -> "under the bed ..."),
``standard_object_ids.json`` (floor -> object type -> THOR object id). ``pasture_runner.py`` gives the agent the
spatial text for spatial splits, the appearance text for appearance splits and the hidden text for hidden ones.

Results (cow ``robothor_challenge.py``): one ``<episode id>.json`` per episode, ``{episode_metrics: {trajectory:
[{x, y, z, rotation, horizon}], actions_taken: [{action, success}], success}, episode_result: {path,
shortest_path, success}}``.

Coordinates are AI2-THOR's (Unity: y up, left-handed), metres, kept as stored. Loading never needs the scenes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from goat_core.errors import EpisodeFormatError
from goat_core.types import Goal, GoalModality
from goat_suites.common.episode_files import FieldParser, read_json
from goat_suites.common.episodes import Vec3, short_repr
from goat_suites.common.metrics import path_length_m, spl
from goat_suites.common.suite_metrics import PASTURE_CATEGORIES, PASTURE_EXPERIMENTS, PastureRecord

PathLike = Union[str, "os.PathLike[str]"]

# Episode folders of each split (cow pasture_runner.py).
PASTURE_DATASET_DIRS: Mapping[str, str] = {
    "uncommon": "robothor-objectnav-longtail",
    "appearance": "robothor-objectnav-normal",
    "spatial": "robothor-objectnav-normal",
    "appearance_distractors": "robothor-objectnav-dup",
    "spatial_distractors": "robothor-objectnav-dup",
    "hidden": "robothor-objectnav-hidden",
    "hidden_distractors": "robothor-objectnav-hidden",
}
TEMPLATE_FILES = ("spatial_appearence_map.json", "hidden_map.json", "hidden_choices.json",
                  "standard_object_ids.json")  # CoW's spelling of "appearence"
THOR_ACTIONS = ("MoveAhead", "RotateLeft", "RotateRight", "Stop", "LookUp", "LookDown")  # cow ALLOWED_ACTIONS

_THOR_OBJECT_ID = re.compile(r"^([A-Za-z]+)\|[+-]?\d+(\.\d+)?\|[+-]?\d+(\.\d+)?\|[+-]?\d+(\.\d+)?$")
_EPISODE_FIELDS = ("id", "scene", "object_type", "initial_position", "initial_orientation", "shortest_path",
                   "shortest_path_length", "target_position", "object_id")


# ----------------------------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class PastureEpisode:
    """One RoboTHOR / PASTURE object-goal episode."""

    episode_id: str  # "<floor>_<object type>_<n>"
    scene: str  # AI2-THOR floor plan, "FloorPlan_Val3_5"
    object_type: str  # THOR object type, "GingerbreadHouse"
    initial_position: Vec3  # agent position, AI2-THOR frame, metres
    initial_orientation_deg: float  # agent yaw about +y, degrees
    shortest_path: tuple[Vec3, ...]  # corners of the shortest path to the target
    shortest_path_length_m: Optional[float] = None
    target_position: Optional[Vec3] = None
    object_id: Optional[str] = None  # THOR object id of the target instance, when the split names one
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SpatialAppearance:
    """PASTURE texts of one object: where it is, what it looks like, and the spatial phrase split in parts."""

    spatial: str  # "alarm clock on a dresser near a desk lamp, bed"
    appearance: str  # "small, metallic alarm clock"
    spatial_parts: tuple[str, ...]  # ("alarm clock on a dresser", "alarm clock near a desk lamp", ...)


@dataclass(frozen=True)
class PastureTemplates:
    """The four class_templates files, floor plan -> object type -> text or id."""

    spatial_appearance: Mapping[str, Mapping[str, SpatialAppearance]]
    hidden: Mapping[str, Mapping[str, str]]  # "TV under the bed with one pillow"
    hidden_choices: Mapping[str, Mapping[str, str]]  # receptacle object id -> "under the bed with two pillows"
    object_ids: Mapping[str, Mapping[str, str]]  # object type -> THOR object id of the standard instance

    def goal_text(self, scene: str, object_type: str, category: str) -> str:
        """The words the agent is given for ``object_type`` on ``scene`` in a PASTURE split."""
        if category not in PASTURE_CATEGORIES:
            raise EpisodeFormatError(f"unknown PASTURE category {category!r}; expected one of {PASTURE_CATEGORIES}")
        if category == "uncommon":
            return object_type_words(object_type)
        table: Mapping[str, Mapping[str, Any]] = (self.hidden if category.startswith("hidden")
                                                  else self.spatial_appearance)
        entry = table.get(scene, {}).get(object_type)
        if entry is None:
            raise EpisodeFormatError(f"no PASTURE {category} description of {object_type!r} on {scene!r}")
        if isinstance(entry, SpatialAppearance):
            return entry.spatial if category.startswith("spatial") else entry.appearance
        return str(entry)


@dataclass(frozen=True)
class ThorPose:
    """One trajectory sample of a CoW result: AI2-THOR position, yaw and camera pitch."""

    position: Vec3  # metres, AI2-THOR frame
    rotation_deg: float  # yaw about +y
    horizon_deg: float  # camera pitch, positive looks down (AI2-THOR convention)


@dataclass(frozen=True)
class PastureResult:
    """One evaluated episode as CoW writes it."""

    episode_id: str
    scene: str
    object_type: str
    trajectory: tuple[ThorPose, ...]  # the start pose, then one pose per action
    actions: tuple[tuple[str, bool], ...]  # (THOR action, whether the simulator executed it)
    success: bool  # CoW: Stop called while the target was visible
    shortest_path: tuple[Vec3, ...]

    @property
    def path_length_m(self) -> float:
        return path_length_m([p.position for p in self.trajectory])

    @property
    def shortest_path_m(self) -> float:
        return path_length_m(self.shortest_path) if len(self.shortest_path) > 1 else 0.0

    @property
    def spl(self) -> float:
        """AI2-THOR ``compute_spl`` of this episode: S * l / max(p, l) with 3D polyline lengths."""
        return spl(self.success, self.shortest_path_m, self.path_length_m)

    def to_record(self, category: str) -> PastureRecord:
        return PastureRecord(episode_id=self.episode_id, category=category, success=self.success, spl=self.spl)


# ----------------------------------------------------------------------------------------------- helpers


def object_type_words(object_type: str) -> str:
    """"GingerbreadHouse" -> "gingerbread house": the THOR type as the words given for uncommon objects."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", object_type).lower()


def split_episode_id(episode_id: str) -> tuple[str, str, str]:
    """"FloorPlan_Val3_5_GingerbreadHouse_1" -> ("FloorPlan_Val3_5", "GingerbreadHouse", "1")."""
    parts = episode_id.rsplit("_", 2)
    if len(parts) != 3 or not all(parts) or not parts[0].startswith("FloorPlan"):
        raise EpisodeFormatError(f"episode id {episode_id!r} is not '<FloorPlan_...>_<object type>_<n>'")
    return parts[0], parts[1], parts[2]


def _xyz(p: FieldParser, raw: Any, where: str) -> Vec3:
    obj = p.mapping(raw, where)
    x, y, z = (p.number(p.require(obj, k, where), f"{where}.{k}") for k in ("x", "y", "z"))
    return (x, y, z)


def _path(p: FieldParser, raw: Any, where: str) -> tuple[Vec3, ...]:
    return tuple(_xyz(p, v, f"{where}[{i}]") for i, v in enumerate(p.items(raw, where)))


def _thor_id(p: FieldParser, value: Any, where: str, object_type: Optional[str] = None) -> str:
    text = p.text(value, where)
    match = _THOR_OBJECT_ID.match(text)
    if match is None:
        raise p.error(where, f"expected a THOR object id 'Type|x|y|z', got {short_repr(text)}")
    if object_type is not None and match.group(1) != object_type:
        raise p.error(where, f"object id {text!r} is not of type {object_type!r}")
    return text


# ----------------------------------------------------------------------------------------------- episodes


def _parse_episode(p: FieldParser, raw: Any, where: str) -> PastureEpisode:
    obj = p.mapping(raw, where)
    episode_id = p.text(p.require(obj, "id", where), f"{where}.id")
    scene = p.text(p.require(obj, "scene", where), f"{where}.scene")
    object_type = p.text(p.require(obj, "object_type", where), f"{where}.object_type")
    try:
        id_scene, id_type, _ = split_episode_id(episode_id)
    except EpisodeFormatError as exc:
        raise p.error(f"{where}.id", str(exc)) from None
    if (id_scene, id_type) != (scene, object_type):
        raise p.error(f"{where}.id", f"{episode_id!r} does not match scene {scene!r} and type {object_type!r}")
    length = p.optional_number(obj, "shortest_path_length", where)
    if length is not None and length < 0.0:
        raise p.error(f"{where}.shortest_path_length", f"expected a length >= 0 m, got {length!r}")
    target = obj.get("target_position")
    object_id = obj.get("object_id")
    return PastureEpisode(
        episode_id=episode_id,
        scene=scene,
        object_type=object_type,
        initial_position=_xyz(p, p.require(obj, "initial_position", where), f"{where}.initial_position"),
        initial_orientation_deg=p.number(p.require(obj, "initial_orientation", where),
                                         f"{where}.initial_orientation"),
        shortest_path=_path(p, p.require(obj, "shortest_path", where), f"{where}.shortest_path"),
        shortest_path_length_m=length,
        target_position=None if target is None else _xyz(p, target, f"{where}.target_position"),
        object_id=None if object_id is None else _thor_id(p, object_id, f"{where}.object_id", object_type),
        extra={k: v for k, v in obj.items() if k not in _EPISODE_FIELDS},
    )


def _episode_files(path: Path) -> list[Path]:
    for folder in (path / "val" / "episodes", path / "episodes", path):
        if folder.is_dir():
            files = sorted(q for q in folder.iterdir() if q.name.endswith((".json.gz", ".json")))
            if files:
                return files
    raise EpisodeFormatError(f"{path}: no PASTURE episode files (val/episodes/*.json.gz)")


def load_pasture_episodes(path: PathLike) -> tuple[PastureEpisode, ...]:
    """Episodes of one ``.json.gz`` file, or of a dataset folder (``<dir>/val/episodes/*.json.gz``)."""
    path = Path(path)
    files = _episode_files(path) if path.is_dir() else [path]
    episodes: list[PastureEpisode] = []
    seen: set[str] = set()
    for file in files:
        p = FieldParser(file)
        for i, raw in enumerate(p.items(read_json(file), "top level")):
            episode = _parse_episode(p, raw, f"[{i}]")
            if episode.episode_id in seen:
                raise p.error(f"[{i}].id", f"duplicate episode id {episode.episode_id!r}")
            seen.add(episode.episode_id)
            episodes.append(episode)
    return tuple(episodes)


def pasture_goal(episode: PastureEpisode, category: str, templates: PastureTemplates) -> Goal:
    """The goat_core goal of an episode in a split: the type's words for uncommon objects, else a description."""
    text = templates.goal_text(episode.scene, episode.object_type, category)
    if category == "uncommon":
        return Goal(GoalModality.CATEGORY, category=text, target_id=episode.object_id)
    return Goal(GoalModality.DESCRIPTION, text=text, target_id=episode.object_id)


# ----------------------------------------------------------------------------------------------- templates


def _floors(p: FieldParser, data: Any) -> dict[str, dict[str, Any]]:
    top = p.mapping(data, "top level")
    return {floor: p.mapping(table, f"[{floor!r}]") for floor, table in top.items()}


def _spatial_appearance(p: FieldParser, data: Any) -> dict[str, dict[str, SpatialAppearance]]:
    out: dict[str, dict[str, SpatialAppearance]] = {}
    for floor, table in _floors(p, data).items():
        out[floor] = {}
        for object_type, value in table.items():
            where = f"[{floor!r}][{object_type!r}]"
            items = p.items(value, where)
            if len(items) != 3:
                raise p.error(where, f"expected [spatial, appearance, [spatial parts]], got {short_repr(value)}")
            parts = p.items(items[2], f"{where}[2]")
            out[floor][object_type] = SpatialAppearance(
                spatial=p.text(items[0], f"{where}[0]"),
                appearance=p.text(items[1], f"{where}[1]"),
                spatial_parts=tuple(p.text(s, f"{where}[2][{i}]") for i, s in enumerate(parts)),
            )
    return out


def _texts(p: FieldParser, data: Any, key_is_id: bool) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for floor, table in _floors(p, data).items():
        out[floor] = {}
        for key, value in table.items():
            where = f"[{floor!r}][{key!r}]"
            if key_is_id:
                _thor_id(p, key, where)
            out[floor][key] = p.text(value, where)
    return out


def _object_ids(p: FieldParser, data: Any) -> dict[str, dict[str, str]]:
    return {floor: {t: _thor_id(p, v, f"[{floor!r}][{t!r}]", t) for t, v in table.items()}
            for floor, table in _floors(p, data).items()}


def _check_covered(path: Path, described: Mapping[str, Mapping[str, Any]], ids: Mapping[str, Mapping[str, str]]
                   ) -> None:
    for floor, table in described.items():
        missing = sorted(set(table) - set(ids.get(floor, {})))
        if missing:
            raise EpisodeFormatError(f"{path}: [{floor!r}]: object types {missing} have no entry in "
                                     f"{TEMPLATE_FILES[3]}")


def load_pasture_templates(folder: PathLike) -> PastureTemplates:
    """Read the four ``class_templates`` files from ``folder``; every described object must have an id."""
    folder = Path(folder)
    paths = [folder / name for name in TEMPLATE_FILES]
    parsers = [FieldParser(q) for q in paths]
    data = [read_json(q) for q in paths]
    templates = PastureTemplates(
        spatial_appearance=_spatial_appearance(parsers[0], data[0]),
        hidden=_texts(parsers[1], data[1], key_is_id=False),
        hidden_choices=_texts(parsers[2], data[2], key_is_id=True),
        object_ids=_object_ids(parsers[3], data[3]),
    )
    _check_covered(paths[0], templates.spatial_appearance, templates.object_ids)
    _check_covered(paths[1], templates.hidden, templates.object_ids)
    return templates


# ----------------------------------------------------------------------------------------------- results


def _pose(p: FieldParser, raw: Any, where: str) -> ThorPose:
    obj = p.mapping(raw, where)
    return ThorPose(position=_xyz(p, obj, where),
                    rotation_deg=p.number(p.require(obj, "rotation", where), f"{where}.rotation"),
                    horizon_deg=p.number(p.require(obj, "horizon", where), f"{where}.horizon"))


def _action(p: FieldParser, raw: Any, where: str) -> tuple[str, bool]:
    obj = p.mapping(raw, where)
    name = p.text(p.require(obj, "action", where), f"{where}.action")
    if name not in THOR_ACTIONS:
        raise p.error(f"{where}.action", f"expected one of {THOR_ACTIONS}, got {name!r}")
    done = p.require(obj, "success", where)
    if not isinstance(done, bool):
        raise p.error(f"{where}.success", f"expected true or false, got {short_repr(done)}")
    return (name, done)


def load_pasture_result(path: PathLike) -> PastureResult:
    """Read one CoW result file ``<episode id>.json``; the episode id comes from the file name."""
    path = Path(path)
    p = FieldParser(path)
    top = p.mapping(read_json(path), "top level")
    metrics = p.mapping(p.require(top, "episode_metrics", "top level"), "episode_metrics")
    result = p.mapping(p.require(top, "episode_result", "top level"), "episode_result")
    trajectory = tuple(_pose(p, v, f"episode_metrics.trajectory[{i}]") for i, v in
                       enumerate(p.items(p.require(metrics, "trajectory", "episode_metrics"),
                                         "episode_metrics.trajectory")))
    actions = tuple(_action(p, v, f"episode_metrics.actions_taken[{i}]") for i, v in
                    enumerate(p.items(p.require(metrics, "actions_taken", "episode_metrics"),
                                      "episode_metrics.actions_taken")))
    if not trajectory:
        raise p.error("episode_metrics.trajectory", "a trajectory needs at least the start pose")
    if len(trajectory) != len(actions) + 1:
        raise p.error("episode_metrics.trajectory", f"{len(trajectory)} poses for {len(actions)} actions; "
                                                    "expected one pose more than actions")
    success = p.require(result, "success", "episode_result")
    if not isinstance(success, bool):
        raise p.error("episode_result.success", f"expected true or false, got {short_repr(success)}")
    if success and (not actions or actions[-1][0] != "Stop"):
        raise p.error("episode_result.success", "a successful episode must end with Stop")
    try:
        scene, object_type, _ = split_episode_id(path.name.split(".")[0])
    except EpisodeFormatError as exc:
        raise p.error("file name", str(exc)) from None
    return PastureResult(
        episode_id=path.name.split(".")[0], scene=scene, object_type=object_type, trajectory=trajectory,
        actions=actions, success=success,
        shortest_path=_path(p, p.require(result, "shortest_path", "episode_result"), "episode_result.shortest_path"),
    )


def category_of_results_dir(name: str) -> str:
    """The PASTURE split of a CoW results folder "<env>_<class>_<agent>" ("dup_spatial_fbe_owl-b32-openai")."""
    env, _, rest = name.partition("_")
    klass = rest.partition("_")[0]
    category = PASTURE_EXPERIMENTS.get((env.lower(), klass.lower()))
    if category is None:
        raise EpisodeFormatError(f"results folder {name!r} is not '<env>_<class>_...' of a PASTURE split "
                                 f"{sorted(PASTURE_EXPERIMENTS)}")
    return category


def load_pasture_results(folder: PathLike, category: Optional[str] = None) -> tuple[PastureRecord, ...]:
    """Every result file of a CoW results folder as records of one split (from the folder name if not given)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise EpisodeFormatError(f"{folder}: not a folder of CoW result files")
    split = category or category_of_results_dir(folder.name)
    files = sorted(q for q in folder.iterdir() if q.name.endswith(".json"))
    if not files:
        raise EpisodeFormatError(f"{folder}: no CoW result files (*.json)")
    return tuple(load_pasture_result(q).to_record(split) for q in files)
