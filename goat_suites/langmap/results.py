"""LangMap result files: PlaNaVid's per-episode logs and the outputs of LangMap's two evaluation scripts.

``stats_<scene>_sequence_<n>_<k>.json`` logs and the single-goal / multi-goal scripts' outputs are read into
:class:`LangMapResult` (per subgoal: level, success, SPL, and where it stood in its sequence) and scored with
:mod:`goat_suites.common.suite_metrics` (SR / SPL per level, SeqSR@n). Task ids on the official blacklist
(:data:`goat_suites.langmap.loader.LANGMAP_BLACK_TASK_IDS`) are left out as the official scripts leave them out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from goat_core.errors import EpisodeFormatError
from goat_suites.common.episode_files import FieldParser, read_json
from goat_suites.common.episodes import short_repr
from goat_suites.common.levels import parse_level
from goat_suites.common.metrics import InvalidMetricInputError
from goat_suites.common.suite_metrics import LevelRecord
from goat_suites.langmap.loader import (
    LANGMAP_BLACK_TASK_IDS,
    PathLike,
    _optional_text,
)


@dataclass(frozen=True)
class LangMapResult:
    """One scored LangMap goal, from any of LangMap's result file layouts."""

    scene_name: str  # "00800-TEEsavR23oF"
    level: str  # scene | room | region | instance
    success: bool
    spl: float
    instruction: Optional[str] = None
    episode_id: Optional[str] = None  # single-goal: the level episode id
    sequence_id: Optional[str] = None  # multi-goal: "<scene>_sequence_<n>"
    index: Optional[int] = None  # multi-goal: subgoal position, from 0
    path_length_m: Optional[float] = None
    distance_to_goal_m: Optional[float] = None  # geodesic to the nearest target view point at STOP

    def to_level_record(self) -> LevelRecord:
        return LevelRecord(level=self.level, success=self.success, spl=self.spl, sequence_id=self.sequence_id,
                           index=self.index)

    @property
    def task_id(self) -> Optional[str]:
        """LangMap's id of a single-goal task, "<scene>_<level file name>_<episode_id>"; None for a subgoal."""
        if self.episode_id is None or self.sequence_id is not None:
            return None
        return f"{self.scene_name}_{'object' if self.level == 'scene' else self.level}_{self.episode_id}"


def single_goal_records(results: Iterable[LangMapResult]) -> list[LevelRecord]:
    """The single-goal results LangMap's evaluation scores: multi-goal subgoals and the tasks of
    :data:`LANGMAP_BLACK_TASK_IDS` left out (``analyze_single_goal_results`` skips those ids)."""
    return [r.to_level_record() for r in results
            if r.task_id is not None and r.task_id not in LANGMAP_BLACK_TASK_IDS]


def _success(p: FieldParser, value: Any, where: str) -> bool:
    """LangMap writes success as 1.0 / 0.0, 1 / 0 or a bool."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise p.error(where, f"expected success 0 or 1, got {short_repr(value)}")


def _spl(p: FieldParser, value: Any, success: bool, where: str) -> float:
    """SPL in [0, 1]; a non-finite SPL of a failed goal (unreachable goal) is 0, as LangMap's analysis does."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise p.error(where, f"expected a number, got {short_repr(value)}")
    if not math.isfinite(value) and not success:
        return 0.0
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise p.error(where, f"expected SPL in [0, 1], got {short_repr(value)}")
    if value > 0.0 and not success:
        raise p.error(where, f"SPL {value!r} of a failed goal must be 0")
    return float(value)


def _level(p: FieldParser, value: Any, where: str) -> str:
    try:
        return parse_level(p.text(value, where))
    except InvalidMetricInputError as exc:
        raise p.error(where, str(exc)) from None


def _split_task_id(p: FieldParser, task_id: str, where: str) -> tuple[str, str, Optional[int]]:
    """"<scene>_sequence_<n>_<k>" -> (scene, "sequence_<n>", k); "<scene>_<level>_<ep>" -> (scene, level, None)."""
    scene, sep, rest = task_id.partition("_sequence_")
    if sep:
        number, _, sub = rest.partition("_")
        if scene and number.isdigit() and sub.isdigit():
            return scene, f"sequence_{number}", int(sub)
    else:
        parts = task_id.rsplit("_", 2)
        if len(parts) == 3 and all(parts):
            return parts[0], parts[1], None
    raise p.error(where, f"expected '<scene>_<level>_<episode>' or '<scene>_sequence_<n>_<k>', got {task_id!r}")


def _optional_length(p: FieldParser, obj: Mapping[str, Any], key: str, where: str) -> Optional[float]:
    value = p.optional_number(obj, key, where)
    if value is not None and value < 0.0:
        raise p.error(f"{where}.{key}", f"expected a length >= 0 m, got {value!r}")
    return value


def _stats_result(p: FieldParser, obj: Mapping[str, Any], where: str) -> LangMapResult:
    """PlaNaVid's per-goal ``stats_*.json``: success, spl, path_length, id, instruction, navigation_type."""
    task_id = p.text(p.require(obj, "id", where), f"{where}.id")
    scene, kind, index = _split_task_id(p, task_id, f"{where}.id")
    level = _level(p, p.require(obj, "navigation_type", where), f"{where}.navigation_type")
    if index is None and parse_level(kind) != level:
        raise p.error(f"{where}.navigation_type", f"{level!r} differs from the level in the id {task_id!r}")
    success = _success(p, p.require(obj, "success", where), f"{where}.success")
    return LangMapResult(
        scene_name=scene, level=level, success=success,
        spl=_spl(p, p.require(obj, "spl", where), success, f"{where}.spl"),
        instruction=_optional_text(p, obj, "instruction", where),
        episode_id=task_id.rsplit("_", 1)[1] if index is None else None,
        sequence_id=f"{scene}_{kind}" if index is not None else None, index=index,
        path_length_m=_optional_length(p, obj, "path_length", where),
        distance_to_goal_m=_optional_length(p, obj, "final_goal_dist", where),
    )


def _script_goal(p: FieldParser, obj: Mapping[str, Any], where: str, scene: str, level: str, episode_id: Optional[str],
                 sequence_id: Optional[str], index: Optional[int]) -> LangMapResult:
    success = _success(p, p.require(obj, "sr", where), f"{where}.sr")
    return LangMapResult(scene_name=scene, level=level, success=success,
                         spl=_spl(p, p.require(obj, "spl", where), success, f"{where}.spl"),
                         instruction=_optional_text(p, obj, "instruction", where), episode_id=episode_id,
                         sequence_id=sequence_id, index=index)


def _sequence_results(p: FieldParser, obj: Mapping[str, Any]) -> list[LangMapResult]:
    """``langmap_multi_goal.py`` output: {scene_name, episode_id, sequence: [{task_id, task_type, sr, spl}]}."""
    scene = p.text(p.require(obj, "scene_name", "top level"), "scene_name")
    sequence_id = f"{scene}_sequence_{p.ident(p.require(obj, 'episode_id', 'top level'), 'episode_id')}"
    out = []
    for i, raw in enumerate(p.items(p.require(obj, "sequence", "top level"), "sequence")):
        where = f"sequence[{i}]"
        goal = p.mapping(raw, where)
        index = goal.get("task_id", i)
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise p.error(f"{where}.task_id", f"expected the subgoal index, got {short_repr(index)}")
        level = _level(p, p.require(goal, "task_type", where), f"{where}.task_type")
        out.append(_script_goal(p, goal, where, scene, level, None, sequence_id, index))
    return out


def _read_result_file(path: Path) -> list[LangMapResult]:
    p = FieldParser(path)
    obj = p.mapping(read_json(path), "top level")
    if "sequence" in obj:
        return _sequence_results(p, obj)
    if "id" in obj:
        return [_stats_result(p, obj, "top level")]
    if "task_id" in obj:  # langmap_single_goal.py output
        task_id = p.text(obj["task_id"], "task_id")
        scene, kind, _ = _split_task_id(p, task_id, "task_id")
        level = _level(p, p.require(obj, "task_type", "top level"), "task_type")
        return [_script_goal(p, obj, "top level", scene, level, task_id.rsplit("_", 1)[1], None, None)]
    raise p.error("top level", "not a LangMap result: expected 'id' (stats log), 'task_id' (single-goal) or "
                               "'sequence' (multi-goal)")


def load_langmap_results(path: PathLike) -> tuple[LangMapResult, ...]:
    """Read a LangMap result file, or every ``*.json`` in a folder (sorted by name).

    Layouts: PlaNaVid ``stats_<scene>_sequence_<n>_<k>.json`` / ``stats_<scene>_<level>_<ep>.json``
    (``success``, ``spl``, ``path_length``, ``id``, ``instruction``, ``navigation_type``, ``final_goal_dist``),
    ``langmap_single_goal.py`` outputs (``task_id``, ``task_type``, ``sr``, ``spl``) and
    ``langmap_multi_goal.py`` outputs (``scene_name``, ``episode_id``, ``sequence``).
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(q for q in path.iterdir() if q.name.endswith(".json"))
        if not files:
            raise EpisodeFormatError(f"{path}: no LangMap result files (*.json)")
        return tuple(r for q in files for r in _read_result_file(q))
    return tuple(_read_result_file(path))
