"""The episode files every suite reads and writes: the GOAT-Bench schema (goat_suites.common.episodes) on disk.

One loader for our procedural files and real GOAT-Bench / ObjectNav files, and the writer of procedural datasets.
File layouts (habitat-lab PointNavDatasetV1 convention, used by GOAT-Bench, ObjectNav v1 and HM3D-OVON):

* single file: ``{"episodes": [...], "goals": {key: [goal, ...]}, ...}`` (``.json`` or ``.json.gz``);
* split + content: ``<split>/<split>.json.gz`` (episodes often ``[]``) next to ``content/<scene>.json.gz``,
  one file per scene holding that scene's episodes and goals.

:class:`FieldParser` and :func:`read_json` serve the other suites' loaders too (LangMap, PASTURE, FindingDory):
each bad value is refused naming the file and the JSON path.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Optional, Sequence, Union

from goat_core.errors import EpisodeFormatError, InvalidGoalError
from goat_core.types import GoalModality
from goat_suites.common.episodes import (
    GoalObject,
    GoatDataset,
    GoatEpisode,
    GoatTask,
    ImageGoalKey,
    ImageGoalSpec,
    Quat,
    Vec3,
    ViewPoint,
    goals_for_task,
    image_goal_for_task,
    scene_basename,
    scene_name,
    short_repr,
)
from goat_suites.common.results import atomic_write_bytes

PathLike = Union[str, "os.PathLike[str]"]


CONTENT_DIR = "content"


# GOAT-Bench's reader drops description subtasks whose lang_desc has more than this many words, counted with
# split(" ") (goat_bench/dataset/goat_dataset.py l.172-181).
GOAT_MAX_DESCRIPTION_WORDS = 55


_GZIP_MAGIC = b"\x1f\x8b"


def read_json(path: Path) -> Any:
    """Parse a .json or .json.gz file; every failure becomes an EpisodeFormatError naming the file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise EpisodeFormatError(f"{path}: cannot read episode file: {exc.strerror or exc}") from None
    if path.name.endswith(".gz") or raw.startswith(_GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise EpisodeFormatError(f"{path}: not a readable gzip file (truncated?): {exc}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise EpisodeFormatError(f"{path}: not UTF-8 text: {exc}") from None
    except json.JSONDecodeError as exc:
        raise EpisodeFormatError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


class FieldParser:
    """Typed field access that names the file and the JSON path of the first bad value."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, where: str, message: str) -> EpisodeFormatError:
        return EpisodeFormatError(f"{self.path}: {where}: {message}")

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(where, f"expected an object, got {type(value).__name__} {short_repr(value)}")
        return value

    def require(self, obj: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in obj:
            raise self.error(where, f"missing field {key!r}")
        return obj[key]

    def items(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.error(where, f"expected a list, got {type(value).__name__} {short_repr(value)}")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(where, f"expected a non-empty string, got {short_repr(value)}")
        return value

    def ident(self, value: Any, where: str) -> str:
        """Ids may be stored as strings or integers; they are compared as text."""
        if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
            raise self.error(where, f"expected a string or integer id, got {short_repr(value)}")
        return str(value)

    def number(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.error(where, f"expected a finite number, got {short_repr(value)}")
        return float(value)

    def optional_number(self, obj: Mapping[str, Any], key: str, where: str) -> Optional[float]:
        value = obj.get(key)
        return None if value is None else self.number(value, f"{where}.{key}")

    def vec3(self, value: Any, where: str) -> Vec3:
        items = self.items(value, where)
        if len(items) != 3:
            raise self.error(where, f"expected 3 numbers [x, y, z], got {short_repr(value)}")
        x, y, z = (self.number(v, f"{where}[{i}]") for i, v in enumerate(items))
        return (x, y, z)

    def quat(self, value: Any, where: str) -> Quat:
        items = self.items(value, where)
        if len(items) != 4:
            raise self.error(where, f"expected a quaternion of 4 numbers [x, y, z, w], got {short_repr(value)}")
        x, y, z, w = (self.number(v, f"{where}[{i}]") for i, v in enumerate(items))
        if math.sqrt(x * x + y * y + z * z + w * w) < 1e-6:
            raise self.error(where, f"zero quaternion {short_repr(value)}")
        return (x, y, z, w)


_GOAL_FIELDS = ("object_id", "object_category", "position", "view_points", "lang_desc", "image_goals")


_EPISODE_FIELDS = ("episode_id", "scene_id", "start_position", "start_rotation", "tasks", "info", "goals")


def parse_view_point(p: FieldParser, raw: Any, where: str) -> ViewPoint:
    obj = p.mapping(raw, where)
    state_at = f"{where}.agent_state"
    state = p.mapping(p.require(obj, "agent_state", where), state_at)
    return ViewPoint(
        position=p.vec3(p.require(state, "position", state_at), f"{state_at}.position"),
        rotation=p.quat(p.require(state, "rotation", state_at), f"{state_at}.rotation"),
        iou=p.optional_number(obj, "iou", where),
    )


def _parse_image_goal(p: FieldParser, raw: Any, where: str) -> ImageGoalSpec:
    obj = p.mapping(raw, where)
    height_px = width_px = None
    dims = obj.get("image_dimensions")
    if dims is not None:
        items = p.items(dims, f"{where}.image_dimensions")
        if len(items) != 2 or not all(type(v) is int and v > 0 for v in items):
            raise p.error(f"{where}.image_dimensions", f"expected [height, width] pixels, got {short_repr(dims)}")
        height_px, width_px = items
    hfov_deg = p.number(p.require(obj, "hfov", where), f"{where}.hfov")
    if not 0.0 < hfov_deg < 180.0:
        raise p.error(f"{where}.hfov", f"expected degrees in (0, 180), got {hfov_deg!r}")
    caption = obj.get("image_caption")
    return ImageGoalSpec(
        position=p.vec3(p.require(obj, "position", where), f"{where}.position"),
        rotation=p.quat(p.require(obj, "rotation", where), f"{where}.rotation"),
        hfov_deg=hfov_deg,
        image_height_px=height_px,
        image_width_px=width_px,
        frame_coverage=p.optional_number(obj, "frame_coverage", where),
        object_coverage=p.optional_number(obj, "object_coverage", where),
        caption=None if caption is None else p.text(caption, f"{where}.image_caption"),
    )


def _parse_goal_object(p: FieldParser, raw: Any, where: str) -> GoalObject:
    obj = p.mapping(raw, where)
    lang_desc = obj.get("lang_desc")
    return GoalObject(
        object_id=p.ident(p.require(obj, "object_id", where), f"{where}.object_id"),
        object_category=p.text(p.require(obj, "object_category", where), f"{where}.object_category"),
        position=p.vec3(p.require(obj, "position", where), f"{where}.position"),
        view_points=tuple(
            parse_view_point(p, v, f"{where}.view_points[{i}]")
            for i, v in enumerate(p.items(obj.get("view_points", []), f"{where}.view_points"))
        ),
        lang_desc=None if lang_desc is None else p.text(lang_desc, f"{where}.lang_desc"),
        image_goals=tuple(
            _parse_image_goal(p, v, f"{where}.image_goals[{i}]")
            for i, v in enumerate(p.items(obj.get("image_goals") or [], f"{where}.image_goals"))
        ),
        attributes={k: v for k, v in obj.items() if k not in _GOAL_FIELDS},
    )


def _parse_goals(p: FieldParser, raw: Any, where: str) -> dict[str, tuple[GoalObject, ...]]:
    table = p.mapping(raw, where)
    return {
        key: tuple(
            _parse_goal_object(p, g, f"{where}[{key!r}][{i}]")
            for i, g in enumerate(p.items(objects, f"{where}[{key!r}]"))
        )
        for key, objects in table.items()
    }


def _parse_task(p: FieldParser, raw: Any, where: str) -> GoatTask:
    items = p.items(raw, where)
    if not 2 <= len(items) <= 4:
        raise p.error(where, f"expected [category, modality, object_id, image_idx?], got {short_repr(raw)}")
    category = p.text(items[0], f"{where}[0]")
    try:
        modality = GoalModality.parse(p.text(items[1], f"{where}[1]"))
    except InvalidGoalError:
        raise p.error(f"{where}[1]", f"unknown modality {items[1]!r}") from None
    object_id = None
    if len(items) > 2 and items[2] is not None:
        object_id = p.ident(items[2], f"{where}[2]")
    if modality is not GoalModality.CATEGORY and object_id is None:
        raise p.error(f"{where}[2]", f"a {modality.value} task needs the target object_id")
    image_idx = None
    if len(items) > 3 and items[3] is not None:
        if isinstance(items[3], bool) or not isinstance(items[3], int) or items[3] < 0:
            raise p.error(f"{where}[3]", f"expected a non-negative image index, got {short_repr(items[3])}")
        image_idx = items[3]
    if modality is GoalModality.IMAGE and image_idx is None:
        raise p.error(f"{where}[3]", "an image task needs an image index")
    return GoatTask(category=category, modality=modality, object_id=object_id, image_idx=image_idx)


def _check_task_goals(p: FieldParser, episode: GoatEpisode, where: str) -> None:
    """Fail at load time, not mid-benchmark, when a task points at goals the file does not hold."""
    for t, task in enumerate(episode.tasks):
        try:
            targets = goals_for_task(episode, task)
            if task.modality is GoalModality.IMAGE:
                image_goal_for_task(episode, task)
        except EpisodeFormatError as exc:
            raise p.error(f"{where}.tasks[{t}]", str(exc)) from None
        if task.modality is GoalModality.DESCRIPTION and not targets[0].lang_desc:
            raise p.error(f"{where}.tasks[{t}]", f"object {task.object_id!r} has no lang_desc to describe it")


def _parse_episode(
    p: FieldParser,
    raw: Any,
    where: str,
    goals: Mapping[str, tuple[GoalObject, ...]],
    tasks_from: Callable[[FieldParser, dict[str, Any], str], tuple[GoatTask, ...]],
    max_description_words: Optional[int] = None,
) -> GoatEpisode:
    obj = p.mapping(raw, where)
    tasks = tasks_from(p, obj, where)
    if max_description_words is not None:
        tasks = tuple(t for t in tasks if not _too_long(goals, obj, t, max_description_words))
    episode = GoatEpisode(
        episode_id=p.ident(p.require(obj, "episode_id", where), f"{where}.episode_id"),
        scene_id=p.text(p.require(obj, "scene_id", where), f"{where}.scene_id"),
        start_position=p.vec3(p.require(obj, "start_position", where), f"{where}.start_position"),
        start_rotation=p.quat(p.require(obj, "start_rotation", where), f"{where}.start_rotation"),
        tasks=tasks,
        goals=goals,
        info=p.mapping(obj.get("info") or {}, f"{where}.info"),
        extra={k: v for k, v in obj.items() if k not in _EPISODE_FIELDS},
    )
    _check_task_goals(p, episode, where)
    return episode


def _too_long(goals: Mapping[str, tuple[GoalObject, ...]], obj: Mapping[str, Any], task: GoatTask,
              max_words: int) -> bool:
    """A description task whose target's ``lang_desc`` has more than ``max_words`` words (split on " ")."""
    if task.modality is not GoalModality.DESCRIPTION:
        return False
    probe = GoatEpisode(episode_id="probe", scene_id=str(obj.get("scene_id", "")), start_position=(0.0, 0.0, 0.0),
                        start_rotation=(0.0, 0.0, 0.0, 1.0), tasks=(task,), goals=goals)
    try:
        target = goals_for_task(probe, task)[0]
    except EpisodeFormatError:
        return False  # reported by _check_task_goals with the episode's own name
    return target.lang_desc is not None and len(target.lang_desc.split(" ")) > max_words


def _goat_tasks(p: FieldParser, obj: dict[str, Any], where: str) -> tuple[GoatTask, ...]:
    raw_tasks = p.items(p.require(obj, "tasks", where), f"{where}.tasks")
    if not raw_tasks:
        raise p.error(f"{where}.tasks", "an episode needs at least one task")
    return tuple(_parse_task(p, t, f"{where}.tasks[{i}]") for i, t in enumerate(raw_tasks))


def _objectnav_tasks(p: FieldParser, obj: dict[str, Any], where: str) -> tuple[GoatTask, ...]:
    category = p.text(p.require(obj, "object_category", where), f"{where}.object_category")
    return (GoatTask(category=category, modality=GoalModality.CATEGORY),)


@dataclass(frozen=True)
class _Format:
    goals_field: str  # top-level field holding the goal table
    tasks_from: Callable[[FieldParser, dict[str, Any], str], tuple[GoatTask, ...]]
    max_description_words: Optional[int] = None  # longer description tasks are dropped (None: none are)


_GOAT = _Format(goals_field="goals", tasks_from=_goat_tasks, max_description_words=GOAT_MAX_DESCRIPTION_WORDS)


_OBJECTNAV = _Format(goals_field="goals_by_category", tasks_from=_objectnav_tasks)


class _SceneTables:
    """Per-scene views of a goal table, shared (not copied) by all episodes of a scene.

    A file may hold the goals of several scenes; an episode gets the keys "<its scene basename>_*" only, or
    the whole table when no key carries that prefix.
    """

    def __init__(self, table: Mapping[str, tuple[GoalObject, ...]]) -> None:
        self._table = table
        self._by_scene: dict[str, Mapping[str, tuple[GoalObject, ...]]] = {}

    def for_scene(self, scene_id: str) -> Mapping[str, tuple[GoalObject, ...]]:
        if scene_id not in self._by_scene:
            prefix = f"{scene_basename(scene_id)}_"
            own = {k: v for k, v in self._table.items() if k.startswith(prefix)}
            self._by_scene[scene_id] = own if own else self._table
        return self._by_scene[scene_id]


def _wanted(raw: Any, scenes: Optional[Collection[str]]) -> bool:
    return scenes is None or not isinstance(raw, dict) or scene_name(str(raw.get("scene_id", ""))) in scenes


def _parse_file(
    path: Path,
    data: Any,
    fmt: _Format,
    goals: Optional[Mapping[str, tuple[GoalObject, ...]]],
    scenes: Optional[Collection[str]],
) -> list[GoatEpisode]:
    """Episodes of one file; ``goals`` (already parsed, from content files) is used when the file has none."""
    p = FieldParser(path)
    top = p.mapping(data, "top level")
    raw_episodes = p.items(p.require(top, "episodes", "top level"), "episodes")
    if fmt.goals_field in top:
        goals = _parse_goals(p, top[fmt.goals_field], fmt.goals_field)
    tables = _SceneTables(goals or {})
    episodes = []
    for i, raw in enumerate(raw_episodes):
        if _wanted(raw, scenes):
            where = f"episodes[{i}]"
            scene_id = p.text(p.require(p.mapping(raw, where), "scene_id", where), f"{where}.scene_id")
            episode = _parse_episode(p, raw, where, tables.for_scene(scene_id), fmt.tasks_from,
                                     fmt.max_description_words)
            if episode.tasks:  # every task dropped as too long: nothing left to run
                episodes.append(episode)
    return episodes


def _content_files(content_dir: Path, scenes: Optional[Collection[str]]) -> list[Path]:
    files = sorted(q for q in content_dir.iterdir() if q.name.endswith((".json", ".json.gz")))
    if scenes is not None:
        files = [q for q in files if q.name.split(".")[0] in scenes]
    return files


def _content_goals(content_dir: Path, scene: str, fmt: _Format) -> dict[str, tuple[GoalObject, ...]]:
    for name in (f"{scene}.json.gz", f"{scene}.json"):
        path = content_dir / name
        if path.exists():
            p = FieldParser(path)
            top = p.mapping(read_json(path), "top level")
            return _parse_goals(p, p.require(top, fmt.goals_field, "top level"), fmt.goals_field)
    raise EpisodeFormatError(f"{content_dir}: no content file for scene {scene!r} to take its goals from")


def _load(path: PathLike, fmt: _Format, scenes: Optional[Collection[str]]) -> GoatDataset:
    path = Path(path)
    data = read_json(path)
    top = FieldParser(path).mapping(data, "top level")
    extra = {k: v for k, v in top.items() if k not in ("episodes", fmt.goals_field)}
    content_dir = path.parent / CONTENT_DIR
    raw_episodes = top.get("episodes")
    if isinstance(raw_episodes, list) and not raw_episodes and content_dir.is_dir():
        # Split file of the split + content layout: the episodes live in one content file per scene.
        episodes: list[GoatEpisode] = []
        for content in _content_files(content_dir, scenes):
            episodes.extend(_parse_file(content, read_json(content), fmt, None, None))
        return GoatDataset(episodes=tuple(episodes), extra=extra)
    goals: Optional[dict[str, tuple[GoalObject, ...]]] = None
    if fmt.goals_field not in top and isinstance(raw_episodes, list) and content_dir.is_dir():
        # Episodes without goals: take each referenced scene's goals from its content file.
        goals = {}
        wanted = [e for e in raw_episodes if isinstance(e, dict) and _wanted(e, scenes)]
        names = {scene_name(str(e.get("scene_id", ""))) for e in wanted}
        for scene in sorted(names - {""}):
            goals.update(_content_goals(content_dir, scene, fmt))
    return GoatDataset(episodes=tuple(_parse_file(path, data, fmt, goals, scenes)), extra=extra)


def load_goat_dataset(path: PathLike, *, scenes: Optional[Collection[str]] = None,
                      max_description_words: Optional[int] = GOAT_MAX_DESCRIPTION_WORDS) -> GoatDataset:
    """Load a GOAT-Bench dataset: a single ``.json`` / ``.json.gz`` file, or a split file with ``content/``.

    ``scenes`` keeps only the named scenes ("TEEsavR23oF"). Description subtasks longer than
    ``max_description_words`` are dropped as GOAT-Bench's reader drops them (None keeps all: files of other
    suites in the same format). Raises EpisodeFormatError naming the file, the episode index and the field of
    the first problem.
    """
    fmt = _GOAT if max_description_words == _GOAT.max_description_words else dataclasses.replace(
        _GOAT, max_description_words=max_description_words)
    return _load(path, fmt, scenes)


def load_objectnav_dataset(path: PathLike, *, scenes: Optional[Collection[str]] = None) -> GoatDataset:
    """Load an ObjectNav v1 / HM3D-OVON dataset as single-subtask GOAT episodes with category goals."""
    return _load(path, _OBJECTNAV, scenes)


def load_image_goal_meta(path: PathLike) -> dict[ImageGoalKey, ImageGoalSpec]:
    """Read a GOAT-Bench ``image_goal_meta`` file ("<scene>/<ep>_<object_id>_<idx>" -> camera parameters)."""
    path = Path(path)
    p = FieldParser(path)
    table = p.mapping(read_json(path), "top level")
    out: dict[ImageGoalKey, ImageGoalSpec] = {}
    for raw_key, raw in table.items():
        where = f"[{raw_key!r}]"
        scene, _, rest = raw_key.partition("/")
        episode_id, _, rest = rest.partition("_")
        object_id, _, idx = rest.rpartition("_")
        if not (scene and episode_id and object_id and idx.isdigit()):
            raise p.error(where, "key must look like '<scene>/<episode>_<object_id>_<image_idx>'")
        spec = _parse_image_goal(p, raw, where)
        stored_id = p.mapping(raw, where).get("object_id")
        if stored_id is not None and str(stored_id) != object_id:
            raise p.error(f"{where}.object_id", f"{stored_id!r} differs from the key's id {object_id!r}")
        out[ImageGoalKey(scene=scene, episode_id=episode_id, object_id=object_id, image_idx=int(idx))] = spec
    return out


def _view_point_json(v: ViewPoint) -> dict[str, Any]:
    out: dict[str, Any] = {"agent_state": {"position": list(v.position), "rotation": list(v.rotation)}}
    if v.iou is not None:
        out["iou"] = v.iou
    return out


def _image_goal_json(g: ImageGoalSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"position": list(g.position), "rotation": list(g.rotation), "hfov": g.hfov_deg}
    if g.image_height_px is not None and g.image_width_px is not None:
        out["image_dimensions"] = [g.image_height_px, g.image_width_px]
    for key, value in (("frame_coverage", g.frame_coverage), ("object_coverage", g.object_coverage),
                       ("image_caption", g.caption)):
        if value is not None:
            out[key] = value
    return out


def _goal_json(g: GoalObject) -> dict[str, Any]:
    # the stored fields we do not read first, then ours over them (a key keeps its place, as dict.update does)
    out: dict[str, Any] = {**g.attributes, "object_id": g.object_id, "object_category": g.object_category,
                           "position": list(g.position), "view_points": [_view_point_json(v) for v in g.view_points],
                           "image_goals": [_image_goal_json(i) for i in g.image_goals]}
    if g.lang_desc is not None:
        out["lang_desc"] = g.lang_desc
    return out


def _task_json(t: GoatTask) -> list[Any]:
    out: list[Any] = [t.category, t.modality.value, t.object_id]
    if t.image_idx is not None:
        out.append(t.image_idx)
    return out


def _episode_json(e: GoatEpisode) -> dict[str, Any]:
    return {**e.extra, "episode_id": e.episode_id, "scene_id": e.scene_id, "start_position": list(e.start_position),
            "start_rotation": list(e.start_rotation), "tasks": [_task_json(t) for t in e.tasks], "info": dict(e.info)}


def _merged_goals(episodes: Sequence[GoatEpisode]) -> dict[str, list[dict[str, Any]]]:
    merged: dict[str, tuple[GoalObject, ...]] = {}
    for e in episodes:
        for key, objects in e.goals.items():
            if merged.setdefault(key, objects) != objects:
                raise EpisodeFormatError(
                    f"episode {e.uid}: goals {key!r} differ from those of an earlier episode; one file holds "
                    "one goal table"
                )
    return {key: [_goal_json(g) for g in objects] for key, objects in merged.items()}


def _encode(path: Path, payload: Mapping[str, Any]) -> bytes:
    text = json.dumps(payload, allow_nan=False, separators=(",", ":")).encode("utf-8")
    # mtime=0 keeps the bytes of a regenerated file identical (reproducible datasets).
    return gzip.compress(text, mtime=0) if path.name.endswith(".gz") else text


def save_goat_dataset(dataset: GoatDataset, path: PathLike, *, split_by_scene: bool = False) -> None:
    """Write ``dataset`` in the GOAT-Bench schema (gzip when the name ends with .gz), atomically.

    With ``split_by_scene`` the file at ``path`` gets no episodes and each scene goes to
    ``content/<scene>.json.gz`` beside it, the layout GOAT-Bench ships.
    """
    path = Path(path)
    if not split_by_scene:
        payload = dict(dataset.extra)
        payload.update(episodes=[_episode_json(e) for e in dataset.episodes],
                       goals=_merged_goals(dataset.episodes))
        atomic_write_bytes(path, _encode(path, payload))
        return
    by_scene: dict[str, list[GoatEpisode]] = {}
    for e in dataset.episodes:
        by_scene.setdefault(scene_name(e.scene_id), []).append(e)
    for scene, episodes in by_scene.items():
        content = path.parent / CONTENT_DIR / f"{scene}.json.gz"
        payload = {"episodes": [_episode_json(e) for e in episodes], "goals": _merged_goals(episodes)}
        atomic_write_bytes(content, _encode(content, payload))
    payload = dict(dataset.extra)
    payload["episodes"] = []
    atomic_write_bytes(path, _encode(path, payload))
