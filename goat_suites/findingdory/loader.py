"""FindingDory episode files, the object attribute table and per-task metric files.

Episode file (findingdory-benchmark/findingdory-habitat ``findingdory/dataset/findingdory_dataset.py``,
``FindingDoryDatasetV0`` on top of habitat-lab's OVMM / rearrange datasets): ``episodes.json.gz`` =
``{"episodes": [...], "obj_category_to_obj_category_id", "recep_category_to_recep_category_id", ...}``. Each
episode holds ``episode_id``, ``scene_id``, ``start_position`` / ``start_rotation`` (Habitat frame),
``instructions`` = ``{task_id: {task_id, lang, task_type, goal_expr, sampled_objects, sampled_receps,
sequential_goals?}}`` and the candidate goal lists ``candidate_objects``, ``candidate_start_receps``,
``candidate_goal_receps`` (each also ``*_noninteracted``) of habitat ObjectGoals ``{object_id, object_name,
object_category, position, view_points}``. ``view_points`` are ``[{agent_state: {position, rotation}, iou}]``
or, when the dataset caches them, integer rows of ``viewpoints.npy`` next to the episodes (row = position[3],
rotation[4] as [x, y, z, w], iou).

``goal_expr`` is a PDDL logical expression as habitat-lab writes it: a predicate string
``"robot_at_object(obj_1, robot_0)"`` or ``{expr_type, sub_exprs, quantifier?, inputs?}``, with FindingDory's
extra types ``AND_SEQUENTIAL`` / ``AND_SEQUENTIAL_ORDERED`` and quantifiers ``FORALL_SEQUENTIAL_*``
(``findingdory/task/pddl/pddl_logical_expr.py``). It is parsed and checked here, never evaluated: evaluation
needs the simulator state.

Metric files (``metrics_ep_ids_<episode>.json.gz`` = ``{task_id: {high_level_goal_success, ...}}``) become
:class:`~goat_suites.common.suite_metrics.FindingDoryRecord`.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np

from goat_core.errors import EpisodeFormatError
from goat_suites.common.episode_files import FieldParser, parse_view_point, read_json
from goat_suites.common.episodes import GoalObject, Quat, Vec3, ViewPoint, short_repr
from goat_suites.common.metrics import InvalidMetricInputError
from goat_suites.common.suite_metrics import FindingDoryRecord

PathLike = Union[str, "os.PathLike[str]"]

CANDIDATE_FIELDS = (
    "candidate_objects",  # objects the oracle picked up and moved during experience collection
    "candidate_objects_noninteracted",
    "candidate_start_receps",  # receptacles the objects were picked from
    "candidate_start_receps_noninteracted",
    "candidate_goal_receps",  # receptacles the objects were placed on
    "candidate_goal_receps_noninteracted",
)
EXPR_TYPES = ("AND", "NAND", "OR", "NOR", "AND_SEQUENTIAL", "AND_SEQUENTIAL_ORDERED")
QUANTIFIERS = ("FORALL", "EXISTS", "FORALL_SEQUENTIAL_UNORDERED", "FORALL_SEQUENTIAL_ORDERED")
VIEWPOINTS_FILE = "viewpoints.npy"
ATTRIBUTE_COLUMNS = ("object_name", "shape", "color", "material", "functionality", "print_or_design",
                     "object_category")

_EPISODE_FIELDS = ("episode_id", "scene_id", "start_position", "start_rotation", "instructions", *CANDIDATE_FIELDS)
_INSTRUCTION_FIELDS = ("task_id", "lang", "task_type", "goal_expr", "sampled_objects", "sampled_receps",
                       "sequential_goals")
_GOAL_FIELDS = ("object_id", "object_category", "position", "view_points")
_PREDICATE = re.compile(r"^\s*([A-Za-z_][\w]*)\s*\(([^()]*)\)\s*$")


# ----------------------------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class Predicate:
    """A PDDL predicate applied to entity names, e.g. robot_at_object(obj_1, robot_0)."""

    name: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class LogicalExpr:
    """A PDDL logical expression over predicates; ``inputs`` are the quantified variables (name, type)."""

    expr_type: str  # one of EXPR_TYPES
    sub_exprs: tuple[Union[LogicalExpr, Predicate], ...]
    quantifier: Optional[str] = None  # one of QUANTIFIERS
    inputs: tuple[tuple[str, str], ...] = ()

    def predicates(self) -> tuple[Predicate, ...]:
        """Every predicate in the expression, depth first."""
        out: list[Predicate] = []
        for sub in self.sub_exprs:
            out.extend(sub.predicates() if isinstance(sub, LogicalExpr) else (sub,))
        return tuple(out)


GoalExpr = Union[LogicalExpr, Predicate]


@dataclass(frozen=True)
class SampleInfo:
    """What an instruction template was filled with: entity types and an optional attribute."""

    types: tuple[str, ...]  # file field "type"
    attribute: Optional[str] = None


@dataclass(frozen=True)
class FindingDoryInstruction:
    """One task of an episode: the question about the experience and how success is verified."""

    task_id: str  # "task_<k>"
    lang: str  # the instruction; temporal tasks hold "XX:XX" / "XX" placeholders filled at run time
    task_type: str
    goal_expr: GoalExpr
    sampled_objects: tuple[SampleInfo, ...] = ()
    sampled_receps: tuple[SampleInfo, ...] = ()
    sequential_goals: Optional[Mapping[str, Any]] = None  # multi-goal tasks: {"ordered": bool, ...}
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_multi_goal(self) -> bool:
        return bool(self.sequential_goals)


@dataclass(frozen=True)
class FindingDoryEpisode:
    """One FindingDory episode: a scene, an experience-collection start, and the tasks asked afterwards."""

    episode_id: str
    scene_id: str
    start_position: Vec3  # Habitat frame, metres
    start_rotation: Quat  # Habitat frame, [x, y, z, w]
    instructions: Mapping[str, FindingDoryInstruction]  # task_id -> instruction, file order
    candidates: Mapping[str, tuple[GoalObject, ...]]  # CANDIDATE_FIELDS name -> goal objects ("object_name" etc.
    # stay in GoalObject.attributes; unresolved cached view point rows in attributes["view_point_rows"])
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FindingDoryDataset:
    episodes: tuple[FindingDoryEpisode, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)  # category tables and other top-level fields


@dataclass(frozen=True)
class ObjectAttributes:
    """One row of FindingDory's object attribute annotation (used by attribute tasks)."""

    object_name: str  # asset name, e.g. "Apple_25"
    object_category: str
    shape: str
    color: str
    material: str
    functionality: str
    print_or_design: Optional[str] = None  # empty in the file for most objects


# ----------------------------------------------------------------------------------------------- goal_expr


def _parse_predicate(p: FieldParser, text: str, where: str) -> Predicate:
    match = _PREDICATE.match(text)
    if match is None:
        raise p.error(where, f"expected a predicate 'name(arg, ...)', got {short_repr(text)}")
    args = tuple(a.strip() for a in match.group(2).split(",")) if match.group(2).strip() else ()
    if any(not a for a in args):
        raise p.error(where, f"empty argument in predicate {short_repr(text)}")
    return Predicate(name=match.group(1), args=args)


def _parse_inputs(p: FieldParser, raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    inputs = []
    for i, item in enumerate(p.items(raw, where)):
        obj = p.mapping(item, f"{where}[{i}]")
        inputs.append((p.text(p.require(obj, "name", f"{where}[{i}]"), f"{where}[{i}].name"),
                       p.text(p.require(obj, "expr_type", f"{where}[{i}]"), f"{where}[{i}].expr_type")))
    return tuple(inputs)


def _choice(p: FieldParser, value: Any, allowed: tuple[str, ...], where: str) -> str:
    text = p.text(value, where).upper()
    if text not in allowed:
        raise p.error(where, f"expected one of {allowed}, got {short_repr(value)}")
    return text


def _parse_goal_expr(p: FieldParser, raw: Any, where: str) -> GoalExpr:
    """A habitat-lab / FindingDory PDDL expression from its JSON form (names case-insensitive)."""
    if isinstance(raw, str):
        return _parse_predicate(p, raw, where)
    obj = p.mapping(raw, where)
    expr_type = _choice(p, p.require(obj, "expr_type", where), EXPR_TYPES, f"{where}.expr_type")
    at = f"{where}.sub_exprs"
    subs = tuple(_parse_goal_expr(p, s, f"{at}[{i}]") for i, s in enumerate(p.items(p.require(obj, "sub_exprs",
                                                                                             where), at)))
    if not subs:
        raise p.error(at, "an expression needs at least one sub-expression")
    quantifier = obj.get("quantifier")
    return LogicalExpr(
        expr_type=expr_type,
        sub_exprs=subs,
        quantifier=None if quantifier is None else _choice(p, quantifier, QUANTIFIERS, f"{where}.quantifier"),
        inputs=_parse_inputs(p, obj.get("inputs") or [], f"{where}.inputs"),
    )


# ----------------------------------------------------------------------------------------------- episodes


def _parse_samples(p: FieldParser, raw: Any, where: str) -> tuple[SampleInfo, ...]:
    out = []
    for i, item in enumerate(p.items(raw or [], where)):
        at = f"{where}[{i}]"
        obj = p.mapping(item, at)
        types = p.require(obj, "type", at)
        types_list = [types] if isinstance(types, str) else p.items(types, f"{at}.type")
        attribute = obj.get("attribute")
        out.append(SampleInfo(types=tuple(p.text(t, f"{at}.type") for t in types_list),
                              attribute=None if attribute is None else p.text(attribute, f"{at}.attribute")))
    return tuple(out)


def _parse_instruction(p: FieldParser, key: str, raw: Any, where: str) -> FindingDoryInstruction:
    obj = p.mapping(raw, where)
    task_id = p.text(obj.get("task_id", key), f"{where}.task_id")
    if task_id != key:
        raise p.error(f"{where}.task_id", f"{task_id!r} differs from its key {key!r}")
    sequential = obj.get("sequential_goals")
    if sequential is not None and not isinstance(sequential, (dict, bool)):
        raise p.error(f"{where}.sequential_goals", f"expected an object or null, got {short_repr(sequential)}")
    if isinstance(sequential, dict) and not isinstance(sequential.get("ordered"), bool):
        raise p.error(f"{where}.sequential_goals", "a multi-goal task needs 'ordered': true | false")
    return FindingDoryInstruction(
        task_id=task_id,
        lang=p.text(p.require(obj, "lang", where), f"{where}.lang"),
        task_type=p.text(p.require(obj, "task_type", where), f"{where}.task_type"),
        goal_expr=_parse_goal_expr(p, p.require(obj, "goal_expr", where), f"{where}.goal_expr"),
        sampled_objects=_parse_samples(p, obj.get("sampled_objects"), f"{where}.sampled_objects"),
        sampled_receps=_parse_samples(p, obj.get("sampled_receps"), f"{where}.sampled_receps"),
        sequential_goals=sequential if isinstance(sequential, dict) else None,
        extra={k: v for k, v in obj.items() if k not in _INSTRUCTION_FIELDS},
    )


def _view_points(p: FieldParser, raw: Any, where: str, matrix: Optional[np.ndarray]
                 ) -> tuple[tuple[ViewPoint, ...], tuple[int, ...]]:
    """View points stored inline, or as rows of the cached matrix (resolved when the matrix is there)."""
    items = p.items(raw, where)
    if not items or not all(type(v) is int for v in items):
        return tuple(parse_view_point(p, v, f"{where}[{i}]") for i, v in enumerate(items)), ()
    rows = tuple(items)
    if matrix is None:
        return (), rows
    resolved = []
    for i, row in enumerate(rows):
        if not 0 <= row < len(matrix):
            raise p.error(f"{where}[{i}]", f"view point row {row} out of range for {len(matrix)} cached rows")
        v = matrix[row]
        resolved.append(ViewPoint(position=(float(v[0]), float(v[1]), float(v[2])),
                                  rotation=(float(v[3]), float(v[4]), float(v[5]), float(v[6])), iou=float(v[7])))
    return tuple(resolved), ()


def _parse_candidate(p: FieldParser, raw: Any, where: str, matrix: Optional[np.ndarray]) -> GoalObject:
    obj = p.mapping(raw, where)
    views, rows = _view_points(p, obj.get("view_points") or [], f"{where}.view_points", matrix)
    attributes = {k: v for k, v in obj.items() if k not in _GOAL_FIELDS}
    if rows:
        attributes["view_point_rows"] = list(rows)
    return GoalObject(
        object_id=p.ident(p.require(obj, "object_id", where), f"{where}.object_id"),
        object_category=p.text(p.require(obj, "object_category", where), f"{where}.object_category"),
        position=p.vec3(p.require(obj, "position", where), f"{where}.position"),
        view_points=views,
        attributes=attributes,
    )


def _parse_episode(p: FieldParser, raw: Any, where: str, matrix: Optional[np.ndarray]) -> FindingDoryEpisode:
    obj = p.mapping(raw, where)
    raw_instructions = p.mapping(p.require(obj, "instructions", where), f"{where}.instructions")
    if not raw_instructions:
        raise p.error(f"{where}.instructions", "an episode needs at least one instruction")
    instructions = {key: _parse_instruction(p, key, value, f"{where}.instructions[{key!r}]")
                    for key, value in raw_instructions.items()}
    candidates = {
        name: tuple(_parse_candidate(p, g, f"{where}.{name}[{i}]", matrix)
                    for i, g in enumerate(p.items(obj.get(name) or [], f"{where}.{name}")))
        for name in CANDIDATE_FIELDS
    }
    return FindingDoryEpisode(
        episode_id=p.ident(p.require(obj, "episode_id", where), f"{where}.episode_id"),
        scene_id=p.text(p.require(obj, "scene_id", where), f"{where}.scene_id"),
        start_position=p.vec3(p.require(obj, "start_position", where), f"{where}.start_position"),
        start_rotation=p.quat(p.require(obj, "start_rotation", where), f"{where}.start_rotation"),
        instructions=instructions,
        candidates=candidates,
        extra={k: v for k, v in obj.items() if k not in _EPISODE_FIELDS},
    )


def _load_viewpoints(path: Path) -> Optional[np.ndarray]:
    matrix_path = path.parent / VIEWPOINTS_FILE
    if not matrix_path.exists():
        return None
    try:
        matrix = np.load(matrix_path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise EpisodeFormatError(f"{matrix_path}: not a readable view point matrix: {exc}") from None
    if matrix.ndim != 2 or matrix.shape[1] < 8 or not np.issubdtype(matrix.dtype, np.number):
        raise EpisodeFormatError(f"{matrix_path}: expected an (N, 8) numeric matrix, got {matrix.dtype} "
                                 f"{matrix.shape}")
    return matrix


def load_findingdory_dataset(path: PathLike) -> FindingDoryDataset:
    """Read a FindingDory ``episodes.json.gz`` (or ``.json``); ``viewpoints.npy`` beside it is used if present.

    Raises EpisodeFormatError naming the file, the episode and the field of the first problem.
    """
    path = Path(path)
    p = FieldParser(path)
    top = p.mapping(read_json(path), "top level")
    raw_episodes = p.items(p.require(top, "episodes", "top level"), "episodes")
    matrix = _load_viewpoints(path)
    episodes = tuple(_parse_episode(p, e, f"episodes[{i}]", matrix) for i, e in enumerate(raw_episodes))
    seen: set[str] = set()
    for i, e in enumerate(episodes):
        if e.episode_id in seen:
            raise p.error(f"episodes[{i}].episode_id", f"duplicate episode_id {e.episode_id!r}")
        seen.add(e.episode_id)
    return FindingDoryDataset(episodes=episodes, extra={k: v for k, v in top.items() if k != "episodes"})


# ----------------------------------------------------------------------------------------------- attributes


def load_object_attributes(path: PathLike) -> dict[str, ObjectAttributes]:
    """Read ``object_attribute_annotation.csv``: object_name -> attributes, every column checked."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EpisodeFormatError(f"{path}: cannot read attribute table: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise EpisodeFormatError(f"{path}: not UTF-8 text: {exc}") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or tuple(c.strip() for c in rows[0]) != ATTRIBUTE_COLUMNS:
        header = rows[0] if rows else []
        raise EpisodeFormatError(f"{path}: line 1: expected columns {list(ATTRIBUTE_COLUMNS)}, got {header}")
    table: dict[str, ObjectAttributes] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(ATTRIBUTE_COLUMNS):
            raise EpisodeFormatError(f"{path}: line {line}: expected {len(ATTRIBUTE_COLUMNS)} columns, got "
                                     f"{len(row)}: {row}")
        values = dict(zip(ATTRIBUTE_COLUMNS, (c.strip() for c in row), strict=True))
        empty = [c for c in ATTRIBUTE_COLUMNS if c != "print_or_design" and not values[c]]
        if empty:
            raise EpisodeFormatError(f"{path}: line {line}: empty {empty} for object {values['object_name']!r}")
        if values["object_name"] in table:
            raise EpisodeFormatError(f"{path}: line {line}: duplicate object_name {values['object_name']!r}")
        table[values["object_name"]] = ObjectAttributes(
            object_name=values["object_name"], object_category=values["object_category"], shape=values["shape"],
            color=values["color"], material=values["material"], functionality=values["functionality"],
            print_or_design=values["print_or_design"] or None,
        )
    if not table:
        raise EpisodeFormatError(f"{path}: the attribute table has no rows")
    return table


# ----------------------------------------------------------------------------------------------- metrics files


def _flag(p: FieldParser, obj: Mapping[str, Any], key: str, where: str) -> bool:
    value = p.require(obj, key, where)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise p.error(f"{where}.{key}", f"expected true/false or 0/1, got {short_repr(value)}")


def _spl_value(p: FieldParser, obj: Mapping[str, Any], key: str, where: str, optional: bool) -> Optional[float]:
    value = p.number(p.require(obj, key, where), f"{where}.{key}")
    if optional and value == -1.0:  # FindingDory's "undefined" (multi-goal high-level SPL)
        return None
    if not 0.0 <= value <= 1.0:
        raise p.error(f"{where}.{key}", f"expected SPL in [0, 1], got {value!r}")
    return value


def load_findingdory_metrics(path: PathLike, task_types: Optional[Mapping[tuple[str, str], str]] = None
                             ) -> tuple[FindingDoryRecord, ...]:
    """Read one ``metrics_ep_ids_<episode>.json(.gz)`` file into one record per task.

    ``task_types`` maps (episode_id, task_id) to the instruction's task_type (see :func:`task_types_of`);
    tasks it does not name get task_type "unknown".
    """
    path = Path(path)
    p = FieldParser(path)
    name = path.name.split(".")[0]
    if not name.startswith("metrics_ep_ids_"):
        raise EpisodeFormatError(f"{path}: expected a file named metrics_ep_ids_<episode>.json(.gz)")
    episode_id = name[len("metrics_ep_ids_"):]
    records = []
    for task_id, raw in p.mapping(read_json(path), "top level").items():
        where = f"[{task_id!r}]"
        obj = p.mapping(raw, where)
        try:
            records.append(FindingDoryRecord(
                episode_id=episode_id, task_id=task_id,
                task_type=(task_types or {}).get((episode_id, task_id), "unknown"),
                hl_success=_flag(p, obj, "high_level_goal_success", where),
                hl_dtg_success=_flag(p, obj, "high_level_dtg_success", where),
                hl_sc_success=_flag(p, obj, "high_level_sem_cov_success", where),
                ll_success=_flag(p, obj, "predicate_task_success", where),
                hl_spl=_spl_value(p, obj, "findingdory_high_level_spl", where, optional=True),
                ll_spl=_spl_value(p, obj, "findingdory_spl", where, optional=False) or 0.0,
            ))
        except InvalidMetricInputError as exc:
            raise p.error(where, str(exc)) from None
    return tuple(records)


def task_types_of(dataset: FindingDoryDataset) -> dict[tuple[str, str], str]:
    """(episode_id, task_id) -> task_type for every instruction of a dataset."""
    return {(e.episode_id, k): i.task_type for e in dataset.episodes for k, i in e.instructions.items()}
