"""LangMap / HieraNav annotation files, and their episodes as GOAT episodes.

Annotation file (bo-miao/LangMap README and ``langmap_single_goal.py`` / ``langmap_multi_goal.py``): one
``<scene>.json.gz`` per HM3D scene ("00800-TEEsavR23oF.json.gz") holding

* ``goals``: goal objects ``{object_id, object_category?, position?, view_points: [{agent_state: {position,
  rotation}}], annot_unique_concise_description?, annot_unique_detailed_description?, ...}``;
* ``region_annotation``: ``{region_id: {region_category, concise_description, detailed_description, ...}}``;
* ``episodes_by_{object,room,region,instance}_level``: single-goal episodes ``{episode_id, start_position,
  start_rotation, target_object_ids, object_category, room_name (room), region_id (region), instance_id
  (instance)}``; success is reaching a view point of any target;
* ``episode_by_sequence`` (also read as ``episodes_by_sequence``): multi-goal episodes ``{episode_id,
  start_position, start_rotation, task_sequence: [[level, index into that level's list], ...]}``.

Instruction templates (LangMap README): scene ("object") level "Find the {object_category}", room "Find the
{object_category} in the {room_name}", region "Find the {object_category} in the {region_category} that has
{region_description}", instance "Find the {instance_description}"; concise or detailed descriptions.

Result files (PlaNaVid logs ``stats_<scene>_sequence_<n>_<k>.json``, and the two evaluation scripts' outputs)
are read by :mod:`goat_suites.langmap.results`.

Positions and rotations are kept as stored (Habitat frame). Loading never needs the scenes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np

from goat_core.errors import EpisodeFormatError
from goat_core.types import Goal, GoalModality
from goat_suites.common.episode_files import FieldParser, parse_view_point, read_json
from goat_suites.common.episodes import (
    GoalObject,
    GoatEpisode,
    GoatTask,
    Quat,
    Vec3,
    goals_for_task,
    goals_key,
    short_repr,
)
from goat_suites.common.levels import LANGMAP_LEVELS, parse_level
from goat_suites.common.metrics import InvalidMetricInputError

PathLike = Union[str, "os.PathLike[str]"]

# File key of each level's single-goal episodes; LangMap calls the scene level "object".
LEVEL_KEYS: Mapping[str, str] = {
    "scene": "episodes_by_object_level",
    "room": "episodes_by_room_level",
    "region": "episodes_by_region_level",
    "instance": "episodes_by_instance_level",
}
SEQUENCE_KEYS = ("episode_by_sequence", "episodes_by_sequence")  # the README spells it the first way

# GoatEpisode.extra fields written by to_goat_episode, keyed by str(task index) like other per-task extras.
EXTRA_LEVELS = "langmap_levels"
EXTRA_TEXTS = "langmap_texts"
EXTRA_TARGET_IDS = "langmap_target_ids"
# Single-goal tasks LangMap excludes from its evaluation for annotation issues ("<scene>_<level file>_<episode>"):
# the data of BLACK_TASK_IDS in analyze_langmap_results.py l.8-43 (bo-miao/LangMap, commit a37db3b), the same list
# as black_task_ids_ in VLN_CE/habitat_extensions/task.py.
LANGMAP_BLACK_TASK_IDS = frozenset((
    "00800-TEEsavR23oF_room_74", "00810-CrMo8WxCyVb_object_30", "00810-CrMo8WxCyVb_object_31",
    "00810-CrMo8WxCyVb_region_75", "00810-CrMo8WxCyVb_region_76", "00810-CrMo8WxCyVb_room_53",
    "00810-CrMo8WxCyVb_room_54", "00820-mL8ThkuaVTM_object_29", "00820-mL8ThkuaVTM_region_47",
    "00820-mL8ThkuaVTM_room_39", "00823-7MXmsvcQjpJ_room_100", "00823-7MXmsvcQjpJ_room_101",
    "00823-7MXmsvcQjpJ_room_74", "00823-7MXmsvcQjpJ_room_98", "00823-7MXmsvcQjpJ_room_99",
    "00829-QaLdnwvtxbs_room_14", "00829-QaLdnwvtxbs_room_16", "00829-QaLdnwvtxbs_room_21",
    "00829-QaLdnwvtxbs_room_22", "00829-QaLdnwvtxbs_room_23", "00829-QaLdnwvtxbs_room_24",
    "00829-QaLdnwvtxbs_room_25", "00829-QaLdnwvtxbs_room_5", "00829-QaLdnwvtxbs_room_7", "00829-QaLdnwvtxbs_room_9",
    "00832-qyAac8rV8Zk_region_18", "00832-qyAac8rV8Zk_room_18", "00839-zt1RVoi7PcG_object_25",
    "00839-zt1RVoi7PcG_region_70", "00839-zt1RVoi7PcG_room_54", "00862-LT9Jq6dN3Ea_object_46",
    "00862-LT9Jq6dN3Ea_region_135", "00862-LT9Jq6dN3Ea_region_37", "00862-LT9Jq6dN3Ea_room_21",
    "00862-LT9Jq6dN3Ea_room_93", "00871-VBzV5z6i1WS_object_21", "00871-VBzV5z6i1WS_object_28",
    "00871-VBzV5z6i1WS_object_29", "00871-VBzV5z6i1WS_object_38", "00871-VBzV5z6i1WS_object_8",
    "00871-VBzV5z6i1WS_region_32", "00871-VBzV5z6i1WS_region_58", "00871-VBzV5z6i1WS_region_67",
    "00871-VBzV5z6i1WS_region_68", "00871-VBzV5z6i1WS_region_77", "00871-VBzV5z6i1WS_room_21",
    "00871-VBzV5z6i1WS_room_39", "00871-VBzV5z6i1WS_room_46", "00871-VBzV5z6i1WS_room_47",
    "00871-VBzV5z6i1WS_room_56", "00873-bxsVRursffK_object_29", "00873-bxsVRursffK_region_52",
    "00873-bxsVRursffK_room_39", "00876-mv2HUxq3B53_object_16", "00876-mv2HUxq3B53_object_31",
    "00876-mv2HUxq3B53_object_40", "00876-mv2HUxq3B53_region_33", "00876-mv2HUxq3B53_region_51",
    "00876-mv2HUxq3B53_region_69", "00876-mv2HUxq3B53_region_81", "00876-mv2HUxq3B53_region_92",
    "00876-mv2HUxq3B53_region_93", "00876-mv2HUxq3B53_room_19", "00876-mv2HUxq3B53_room_31",
    "00876-mv2HUxq3B53_room_45", "00876-mv2HUxq3B53_room_50", "00876-mv2HUxq3B53_room_59",
    "00877-4ok3usBNeis_object_44", "00877-4ok3usBNeis_region_58", "00877-4ok3usBNeis_region_8",
    "00877-4ok3usBNeis_room_52", "00877-4ok3usBNeis_room_9", "00878-XB4GS9ShBRE_object_18",
    "00878-XB4GS9ShBRE_region_33", "00878-XB4GS9ShBRE_room_32", "00880-Nfvxx8J5NCo_object_13",
    "00880-Nfvxx8J5NCo_object_30", "00880-Nfvxx8J5NCo_object_31", "00880-Nfvxx8J5NCo_region_22",
    "00880-Nfvxx8J5NCo_region_45", "00880-Nfvxx8J5NCo_region_46", "00880-Nfvxx8J5NCo_room_23",
    "00880-Nfvxx8J5NCo_room_44", "00880-Nfvxx8J5NCo_room_45", "00890-6s7QHgap2fW_region_19",
    "00890-6s7QHgap2fW_room_16", "00891-cvZr5TUy5C5_object_12", "00891-cvZr5TUy5C5_object_43",
    "00891-cvZr5TUy5C5_object_44", "00891-cvZr5TUy5C5_region_109", "00891-cvZr5TUy5C5_region_110",
    "00891-cvZr5TUy5C5_region_111", "00891-cvZr5TUy5C5_region_112", "00891-cvZr5TUy5C5_region_39",
    "00891-cvZr5TUy5C5_region_40", "00891-cvZr5TUy5C5_region_44", "00891-cvZr5TUy5C5_room_34",
    "00891-cvZr5TUy5C5_room_35", "00891-cvZr5TUy5C5_room_36", "00891-cvZr5TUy5C5_room_92",
    "00891-cvZr5TUy5C5_room_93", "00891-cvZr5TUy5C5_room_94", "00891-cvZr5TUy5C5_room_95",
    "00891-cvZr5TUy5C5_room_96", "00891-cvZr5TUy5C5_room_97", "00894-HY1NcmCgn3n_instance_7",
))

_GOAL_FIELDS = ("object_id", "object_category", "position", "view_points")  # the rest stays in attributes
_REGION_FIELDS = ("region_category", "concise_description", "detailed_description")
_TASK_FIELDS = ("episode_id", "start_position", "start_rotation", "target_object_ids", "object_category",
                "room_name", "region_id", "instance_id")
_SEQUENCE_FIELDS = ("episode_id", "start_position", "start_rotation", "task_sequence")


# ----------------------------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class RegionAnnotation:
    """A described region of a scene ("the office that has computer desk beside couch")."""

    region_id: str
    category: str  # "region_category": the room type, e.g. "Office"
    concise_description: str
    detailed_description: str
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LangMapTask:
    """One single-goal episode of one level; sequences refer to it by (level, index)."""

    level: str  # scene | room | region | instance
    index: int  # position in its level's list in the file
    episode_id: str
    category: str  # object category of the targets
    target_object_ids: tuple[str, ...]  # reaching a view point of any of them succeeds
    start_position: Vec3  # Habitat frame, metres
    start_rotation: Quat  # Habitat frame, [x, y, z, w]
    room_name: Optional[str] = None  # room level
    region_id: Optional[str] = None  # region level
    instance_id: Optional[str] = None  # instance level
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def uid(self) -> str:
        """LangMap's task id without the scene: "<level file name>_<episode_id>" ("object_30")."""
        return f"{'object' if self.level == 'scene' else self.level}_{self.episode_id}"


@dataclass(frozen=True)
class LangMapSequence:
    """A multi-goal episode: goals of mixed levels visited in order, memory kept across them."""

    episode_id: str
    start_position: Vec3
    start_rotation: Quat
    steps: tuple[tuple[str, int], ...]  # (level, index into that level's tasks)
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LangMapScene:
    """Everything one annotation file says about one scene."""

    scene_name: str  # "00800-TEEsavR23oF"
    goals: Mapping[str, GoalObject]  # object_id -> goal object
    regions: Mapping[str, RegionAnnotation]
    tasks: Mapping[str, tuple[LangMapTask, ...]]  # level -> single-goal episodes, file order
    sequences: tuple[LangMapSequence, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)  # other top-level fields

    @property
    def scene_id(self) -> str:
        """The HM3D scene path the LangMap scripts load: "hm3d/val/<scene>/<hash>.basis.glb"."""
        return f"hm3d/val/{self.scene_name}/{self.scene_name.split('-')[-1]}.basis.glb"

    def targets(self, task: LangMapTask) -> tuple[GoalObject, ...]:
        return tuple(self.goals[i] for i in task.target_object_ids)

    def sequence_tasks(self, sequence: LangMapSequence) -> tuple[LangMapTask, ...]:
        return tuple(self.tasks[level][index] for level, index in sequence.steps)

    def goal_text(self, task: LangMapTask, *, concise: bool = True) -> str:
        """The goal phrase of the LangMap template, e.g. "chair in the kitchen" (after "Find the")."""
        if task.level == "scene":
            return task.category
        if task.level == "room":
            return f"{task.category} in the {str(task.room_name).lower()}"
        if task.level == "region":
            region = self.regions[str(task.region_id)]
            text = region.concise_description if concise else region.detailed_description
            return f"{task.category} in the {region.category.lower()} that has {text}"
        goal = self.goals[str(task.instance_id)]
        key = "annot_unique_concise_description" if concise else "annot_unique_detailed_description"
        return str(goal.attributes[key])

    def instruction(self, task: LangMapTask, *, concise: bool = True) -> str:
        return f"Find the {self.goal_text(task, concise=concise)}"

    def goal(self, task: LangMapTask, *, concise: bool = True) -> Goal:
        """The goat_core goal for ``task``: a category at the scene level, a description at the others."""
        target = task.target_object_ids[0] if len(task.target_object_ids) == 1 else None
        if task.level == "scene":
            return Goal(GoalModality.CATEGORY, category=task.category, level=task.level, target_id=target)
        return Goal(GoalModality.DESCRIPTION, text=self.goal_text(task, concise=concise), level=task.level,
                    target_id=target)


# ----------------------------------------------------------------------------------------------- parsing


def _optional_text(p: FieldParser, obj: Mapping[str, Any], key: str, where: str) -> Optional[str]:
    value = obj.get(key)
    return None if value is None else p.text(value, f"{where}.{key}")


def _parse_goal(p: FieldParser, raw: Any, where: str) -> GoalObject:
    obj = p.mapping(raw, where)
    raw_views = p.items(p.require(obj, "view_points", where), f"{where}.view_points")
    if not raw_views:
        raise p.error(f"{where}.view_points", "a goal needs at least one view point to be reachable")
    views = tuple(parse_view_point(p, v, f"{where}.view_points[{i}]") for i, v in enumerate(raw_views))
    if "position" in obj:
        position = p.vec3(obj["position"], f"{where}.position")
    else:  # not every LangMap goal stores its centre; the view points surround it
        centre = np.mean([v.position for v in views], axis=0)
        position = (float(centre[0]), float(centre[1]), float(centre[2]))
    for key in ("annot_unique_concise_description", "annot_unique_detailed_description"):
        _optional_text(p, obj, key, where)
    return GoalObject(
        object_id=p.ident(p.require(obj, "object_id", where), f"{where}.object_id"),
        object_category=_optional_text(p, obj, "object_category", where) or "",
        position=position,
        view_points=views,
        lang_desc=_optional_text(p, obj, "annot_unique_concise_description", where),
        attributes={k: v for k, v in obj.items() if k not in _GOAL_FIELDS},
    )


def _parse_goals(p: FieldParser, raw: Any) -> dict[str, GoalObject]:
    goals: dict[str, GoalObject] = {}
    for i, g in enumerate(p.items(raw, "goals")):
        goal = _parse_goal(p, g, f"goals[{i}]")
        if goal.object_id in goals:
            raise p.error(f"goals[{i}].object_id", f"duplicate object_id {goal.object_id!r}")
        goals[goal.object_id] = goal
    return goals


def _parse_regions(p: FieldParser, raw: Any) -> dict[str, RegionAnnotation]:
    regions = {}
    for region_id, value in p.mapping(raw, "region_annotation").items():
        where = f"region_annotation[{region_id!r}]"
        obj = p.mapping(value, where)
        texts = [p.text(p.require(obj, key, where), f"{where}.{key}") for key in _REGION_FIELDS]
        regions[region_id] = RegionAnnotation(
            region_id=region_id, category=texts[0], concise_description=texts[1], detailed_description=texts[2],
            extra={k: v for k, v in obj.items() if k not in _REGION_FIELDS},
        )
    return regions


def _target_ids(p: FieldParser, obj: Mapping[str, Any], where: str, goals: Mapping[str, GoalObject]) -> tuple[str, ...]:
    at = f"{where}.target_object_ids"
    ids = tuple(p.ident(v, f"{at}[{i}]") for i, v in enumerate(p.items(p.require(obj, "target_object_ids", where),
                                                                          at)))
    if not ids:
        raise p.error(at, "a task needs at least one target object")
    unknown = [i for i in ids if i not in goals]
    if unknown:
        raise p.error(at, f"object ids {unknown} are not among the file's goals")
    return ids


def _level_reference(p: FieldParser, obj: Mapping[str, Any], level: str, where: str, goals: Mapping[str, GoalObject],
                     regions: Mapping[str, RegionAnnotation]) -> dict[str, str]:
    """The field that makes a task of ``level`` specific: room_name, region_id or instance_id."""
    if level == "room":
        return {"room_name": p.text(p.require(obj, "room_name", where), f"{where}.room_name")}
    if level == "region":
        region_id = p.ident(p.require(obj, "region_id", where), f"{where}.region_id")
        if region_id not in regions:
            raise p.error(f"{where}.region_id", f"region {region_id!r} has no entry in region_annotation")
        return {"region_id": region_id}
    if level == "instance":
        instance_id = p.ident(p.require(obj, "instance_id", where), f"{where}.instance_id")
        goal = goals.get(instance_id)
        if goal is None:
            raise p.error(f"{where}.instance_id", f"object {instance_id!r} is not among the file's goals")
        for key in ("annot_unique_concise_description", "annot_unique_detailed_description"):
            if not goal.attributes.get(key):
                raise p.error(f"{where}.instance_id", f"goal {instance_id!r} has no {key} to describe it")
        return {"instance_id": instance_id}
    return {}


def _parse_task(p: FieldParser, raw: Any, level: str, index: int, where: str, goals: Mapping[str, GoalObject],
                regions: Mapping[str, RegionAnnotation]) -> LangMapTask:
    obj = p.mapping(raw, where)
    targets = _target_ids(p, obj, where, goals)
    reference = _level_reference(p, obj, level, where, goals, regions)
    category = _optional_text(p, obj, "object_category", where)
    if category is None:
        category = goals[reference.get("instance_id", targets[0])].object_category
        if not category:
            raise p.error(where, "missing field 'object_category' (and its target goal names none)")
    return LangMapTask(
        level=level,
        index=index,
        episode_id=p.ident(p.require(obj, "episode_id", where), f"{where}.episode_id"),
        category=category,
        target_object_ids=targets,
        start_position=p.vec3(p.require(obj, "start_position", where), f"{where}.start_position"),
        start_rotation=p.quat(p.require(obj, "start_rotation", where), f"{where}.start_rotation"),
        extra={k: v for k, v in obj.items() if k not in _TASK_FIELDS},
        **reference,
    )


def _parse_step(p: FieldParser, raw: Any, where: str, tasks: Mapping[str, tuple[LangMapTask, ...]]) -> tuple[str, int]:
    items = p.items(raw, where)
    if len(items) != 2:
        raise p.error(where, f"expected [level, index], got {short_repr(raw)}")
    try:
        level = parse_level(p.text(items[0], f"{where}[0]"))
    except InvalidMetricInputError as exc:
        raise p.error(f"{where}[0]", str(exc)) from None
    index = items[1]
    if isinstance(index, bool) or not isinstance(index, int):
        raise p.error(f"{where}[1]", f"expected an integer index, got {short_repr(index)}")
    if not 0 <= index < len(tasks[level]):
        raise p.error(f"{where}[1]", f"index {index} out of range for {len(tasks[level])} {level}-level episodes")
    return (level, index)


def _parse_sequence(p: FieldParser, raw: Any, where: str, tasks: Mapping[str, tuple[LangMapTask, ...]]
                    ) -> LangMapSequence:
    obj = p.mapping(raw, where)
    at = f"{where}.task_sequence"
    raw_steps = p.items(p.require(obj, "task_sequence", where), at)
    if not raw_steps:
        raise p.error(at, "a sequence needs at least one goal")
    return LangMapSequence(
        episode_id=p.ident(p.require(obj, "episode_id", where), f"{where}.episode_id"),
        start_position=p.vec3(p.require(obj, "start_position", where), f"{where}.start_position"),
        start_rotation=p.quat(p.require(obj, "start_rotation", where), f"{where}.start_rotation"),
        steps=tuple(_parse_step(p, s, f"{at}[{i}]", tasks) for i, s in enumerate(raw_steps)),
        extra={k: v for k, v in obj.items() if k not in _SEQUENCE_FIELDS},
    )


def _with_categories(goals: dict[str, GoalObject], tasks: Mapping[str, tuple[LangMapTask, ...]]
                     ) -> dict[str, GoalObject]:
    """Goals without a stored category take the category of the tasks that target them."""
    named = {i: t.category for level in tasks.values() for t in level for i in t.target_object_ids}
    out = {}
    for object_id, goal in goals.items():
        if not goal.object_category and object_id in named:
            goal = GoalObject(goal.object_id, named[object_id], goal.position, goal.view_points, goal.lang_desc,
                              goal.image_goals, goal.attributes)
        out[object_id] = goal
    return out


def load_langmap_scene(path: PathLike) -> LangMapScene:
    """Read one LangMap annotation file (``.json`` or ``.json.gz``) and check it is self-consistent.

    Every target, region and instance a task names must be in the file, every sequence step must point at an
    existing task. Raises EpisodeFormatError naming the file, the JSON path and the problem.
    """
    path = Path(path)
    p = FieldParser(path)
    top = p.mapping(read_json(path), "top level")
    goals = _parse_goals(p, p.require(top, "goals", "top level"))
    regions = _parse_regions(p, p.require(top, "region_annotation", "top level"))
    tasks: dict[str, tuple[LangMapTask, ...]] = {}
    for level in LANGMAP_LEVELS:
        key = LEVEL_KEYS[level]
        raw_tasks = p.items(p.require(top, key, "top level"), key)
        tasks[level] = tuple(_parse_task(p, t, level, i, f"{key}[{i}]", goals, regions)
                             for i, t in enumerate(raw_tasks))
    seq_key = next((k for k in SEQUENCE_KEYS if k in top), None)
    if seq_key is None:
        raise p.error("top level", f"missing field {SEQUENCE_KEYS[0]!r}")
    sequences = tuple(_parse_sequence(p, s, f"{seq_key}[{i}]", tasks)
                      for i, s in enumerate(p.items(top[seq_key], seq_key)))
    known = {"goals", "region_annotation", *LEVEL_KEYS.values(), *SEQUENCE_KEYS}
    return LangMapScene(
        scene_name=path.name.split(".")[0],
        goals=_with_categories(goals, tasks),
        regions=regions,
        tasks=tasks,
        sequences=sequences,
        extra={k: v for k, v in top.items() if k not in known},
    )


def load_langmap_dir(directory: PathLike) -> tuple[LangMapScene, ...]:
    """Every ``*.json.gz`` / ``*.json`` annotation file of a LangMap ``annotations`` folder, by name."""
    directory = Path(directory)
    if not directory.is_dir():
        raise EpisodeFormatError(f"{directory}: not a folder of LangMap annotation files")
    files = sorted(q for q in directory.iterdir() if q.name.endswith((".json.gz", ".json")))
    if not files:
        raise EpisodeFormatError(f"{directory}: no LangMap annotation files (*.json.gz)")
    return tuple(load_langmap_scene(q) for q in files)


# ----------------------------------------------------------------------------------------------- GOAT episodes


def _goat_episode(scene: LangMapScene, episode_id: str, start_position: Vec3, start_rotation: Quat,
                  tasks: tuple[LangMapTask, ...], concise: bool, extra: Mapping[str, Any]) -> GoatEpisode:
    goat_tasks = []
    for t in tasks:
        if t.level == "scene":
            goat_tasks.append(GoatTask(category=t.category, modality=GoalModality.CATEGORY))
        else:
            goat_tasks.append(GoatTask(category=t.category, modality=GoalModality.DESCRIPTION,
                                       object_id=t.instance_id or t.target_object_ids[0]))
    table: dict[str, list[GoalObject]] = {}
    for goal in scene.goals.values():
        if not goal.object_category:
            continue  # never targeted and never named: no task can ask for it
        table.setdefault(goals_key(scene.scene_id, goal.object_category), []).append(goal)
    own_extra = dict(extra)
    own_extra.update({
        EXTRA_LEVELS: {str(i): t.level for i, t in enumerate(tasks)},
        EXTRA_TEXTS: {str(i): scene.goal_text(t, concise=concise) for i, t in enumerate(tasks)},
        EXTRA_TARGET_IDS: {str(i): list(t.target_object_ids) for i, t in enumerate(tasks)},
    })
    return GoatEpisode(
        episode_id=episode_id,
        scene_id=scene.scene_id,
        start_position=start_position,
        start_rotation=start_rotation,
        tasks=tuple(goat_tasks),
        goals={k: tuple(v) for k, v in table.items()},
        extra=own_extra,
    )


def sequence_to_goat_episode(scene: LangMapScene, sequence: LangMapSequence, *, concise: bool = True
                             ) -> GoatEpisode:
    """A multi-goal sequence as a GOAT episode (memory kept across subtasks, SPL from where the last ended).

    Scene-level goals become category tasks; the others description tasks whose ``object_id`` is the instance
    (instance level) or the first target. What a GoatTask cannot hold is kept per task index in ``extra``:
    the level (``langmap_levels``), the template text to give the agent (``langmap_texts``) and every target
    whose view points count for success (``langmap_target_ids``, see :func:`langmap_task_targets`).
    """
    return _goat_episode(scene, f"sequence_{sequence.episode_id}", sequence.start_position,
                         sequence.start_rotation, scene.sequence_tasks(sequence), concise, sequence.extra)


def task_to_goat_episode(scene: LangMapScene, task: LangMapTask, *, concise: bool = True) -> GoatEpisode:
    """A single-goal LangMap episode as a one-subtask GOAT episode, id "<level>_<episode_id>"."""
    return _goat_episode(scene, task.uid, task.start_position, task.start_rotation, (task,), concise, task.extra)


def langmap_task_targets(episode: GoatEpisode, index: int) -> tuple[GoalObject, ...]:
    """The goal objects any of which completes subtask ``index`` of an episode from :func:`_goat_episode`."""
    ids = episode.extra.get(EXTRA_TARGET_IDS, {}).get(str(index))
    if ids is None:
        raise EpisodeFormatError(f"episode {episode.uid}: no LangMap targets recorded for subtask {index}")
    by_id = {g.object_id: g for objects in episode.goals.values() for g in objects}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise EpisodeFormatError(f"episode {episode.uid}: subtask {index} targets {missing} are not goals")
    return tuple(by_id[i] for i in ids)


def scored_goals(episode: GoatEpisode, index: int, task: GoatTask) -> tuple[GoalObject, ...]:
    """The goal objects that score subtask ``index``: every ``target_object_ids`` entry of a LangMap episode (a
    room or region goal is reached at any of its targets, as LangMap scores it), else :func:`goals_for_task`."""
    if str(index) in (episode.extra.get(EXTRA_TARGET_IDS) or {}):
        return langmap_task_targets(episode, index)
    return goals_for_task(episode, task)
