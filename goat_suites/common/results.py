"""Per-subtask benchmark records, their summary, and the results JSON file.

File layout::

    {"summary": {"success_rate", "spl", "by_modality": {modality: {success_rate, spl, count}},
                 "by_subtask_index": {"0": {...}, ...}, "num_subtasks", "num_episodes", "stop_reasons",
                 "averaging"},
     "subtasks": [record, ...],
     "meta": {...}}

``"averaging"`` says how the rates were averaged (``goat_suites.common.protocols.AVERAGING``): ``per_episode``
(GOAT-Bench: each episode's mean over its subtasks, then the mean over episodes) or ``pooled`` (the mean over
all subtasks); files written before it was recorded were pooled and read so.

A record carries ``"level"`` only when it has one (LangMap goals); files without it read as before. A failed
record carries ``"failure"`` (``goat_suites.common.failures``: gave_up, wrong_instance, near_miss, budget, error)
and the summary counts them under ``"failures"``; files written before the taxonomy read as before.

Every write replaces the whole file atomically (temporary file + rename), so a crash mid-benchmark leaves the
last complete file; :func:`append_results_json` is the per-episode write the bench uses.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from goat_core.errors import GoatError, InvalidGoalError
from goat_core.types import DiscreteAction, GoalModality
from goat_suites.common.failures import FAILURE_CLASSES, count_failures
from goat_suites.common.levels import parse_level
from goat_suites.common.metrics import InvalidMetricInputError, group_by, mean, mean_over
from goat_suites.common.protocols import AVERAGING

PathLike = Union[str, "os.PathLike[str]"]

STOP_REASONS = ("stop", "budget", "error")  # agent called STOP | ran out of actions | the run raised


class InvalidResultError(GoatError, ValueError):
    """A subtask record or a results file is malformed; the message names the file, record and field."""


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a partial one.

    The bytes go to a temporary file in the same directory (same filesystem, so the rename is atomic on
    POSIX), are flushed to disk, and the file is renamed over ``path``.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    # mkstemp creates the file readable by its owner only; results are meant to be shared like any file.
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _check_length(value: Optional[float], name: str, optional: bool) -> None:
    allowed = "a finite length >= 0 m" + (" or None" if optional else "")
    if value is None:
        if optional:
            return
        raise InvalidResultError(f"{name} must be {allowed}, got None")
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (number and math.isfinite(value) and value >= 0.0):
        raise InvalidResultError(f"{name} must be {allowed}, got {value!r}")


def _check_count(value: int, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidResultError(f"{name} must be an integer >= 0, got {value!r}")


def _check_outcome(success: bool, spl: float, stop_reason: str) -> None:
    if not isinstance(success, bool):
        raise InvalidResultError(f"success must be a bool, got {success!r}")
    if isinstance(spl, bool) or not isinstance(spl, (int, float)) or not 0.0 <= spl <= 1.0:
        raise InvalidResultError(f"spl must be a number in [0, 1], got {spl!r}")
    if spl > 0.0 and not success:
        raise InvalidResultError(f"spl must be 0 for a failed subtask, got {spl!r}")
    if stop_reason not in STOP_REASONS:
        raise InvalidResultError(f"stop_reason must be one of {STOP_REASONS}, got {stop_reason!r}")


def _modality(value: Any) -> GoalModality:
    if isinstance(value, GoalModality):
        return value
    try:
        return GoalModality.parse(str(value))
    except InvalidGoalError as exc:
        raise InvalidResultError(str(exc)) from None


def _actions(values: Iterable[Any]) -> tuple[DiscreteAction, ...]:
    try:
        return tuple(DiscreteAction(a) for a in values)
    except ValueError as exc:
        raise InvalidResultError(f"actions must be DiscreteAction values: {exc}") from None


def _level(value: Any) -> str:
    """The canonical LangMap level name ("object" is LangMap's file name of the scene level)."""
    if not isinstance(value, str):
        raise InvalidResultError(f"level must be a LangMap level name or None, got {value!r}")
    try:
        return parse_level(value)
    except InvalidMetricInputError as exc:
        raise InvalidResultError(str(exc)) from None


@dataclass(frozen=True)
class SubtaskRecord:
    """The outcome of one subtask of one episode."""

    episode_id: str
    index: int  # position of the subtask in its episode, from 0
    modality: GoalModality
    success: bool
    spl: float  # Anderson et al. SPL of this subtask, in [0, 1]; 0 unless success
    path_length_m: float  # length of the path the agent took during this subtask
    geodesic_m: Optional[float]  # shortest path from where the subtask began to the goal; None if unknown
    num_actions: int
    stop_reason: str  # one of STOP_REASONS
    distance_to_goal_m: Optional[float]  # when the subtask ended; None if unknown (error, unreachable)
    error: Optional[str] = None  # what went wrong, for stop_reason "error"
    actions: Optional[tuple[DiscreteAction, ...]] = None  # the actions taken, when recorded
    scene_id: Optional[str] = None  # episode ids repeat across GOAT-Bench scenes; this disambiguates
    level: Optional[str] = None  # LangMap goal level (scene | room | region | instance); None outside LangMap
    # Failed subtasks: why (goat_suites.common.failures.FAILURE_CLASSES); None on success. Budget and error
    # failures are filled in from ``stop_reason``; a failed STOP is classified by whoever scores it.
    failure: Optional[str] = None
    stop_detail: Optional[str] = None  # the agent's own account of its STOP: its target, or why it gave up

    def __post_init__(self) -> None:
        object.__setattr__(self, "modality", _modality(self.modality))
        if not isinstance(self.episode_id, str) or not self.episode_id:
            raise InvalidResultError(f"episode_id must be a non-empty string, got {self.episode_id!r}")
        _check_count(self.index, "index")
        _check_count(self.num_actions, "num_actions")
        _check_outcome(self.success, self.spl, self.stop_reason)
        _check_length(self.path_length_m, "path_length_m", optional=False)
        _check_length(self.geodesic_m, "geodesic_m", optional=True)
        _check_length(self.distance_to_goal_m, "distance_to_goal_m", optional=True)
        if self.error is not None and not isinstance(self.error, str):
            raise InvalidResultError(f"error must be a message string or None, got {self.error!r}")
        if self.actions is not None:
            object.__setattr__(self, "actions", _actions(self.actions))
        if self.level is not None:
            object.__setattr__(self, "level", _level(self.level))
        self._check_failure()

    def _check_failure(self) -> None:
        if self.success:
            if self.failure is not None:
                raise InvalidResultError(f"failure must be None for a successful subtask, got {self.failure!r}")
            return
        if self.failure is None and self.stop_reason in ("budget", "error"):
            object.__setattr__(self, "failure", self.stop_reason)
        if self.failure is None:
            return  # a failed STOP not classified (files written before the taxonomy)
        if self.failure not in FAILURE_CLASSES:
            raise InvalidResultError(f"failure must be one of {FAILURE_CLASSES}, got {self.failure!r}")
        if (self.failure in ("budget", "error") or self.stop_reason != "stop") and self.failure != self.stop_reason:
            raise InvalidResultError(
                f"failure {self.failure!r} does not fit stop_reason {self.stop_reason!r}")
        if self.stop_detail is not None and not isinstance(self.stop_detail, str):
            raise InvalidResultError(f"stop_detail must be a string or None, got {self.stop_detail!r}")

    def to_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {} if self.level is None else {"level": self.level}  # absent, not null: older files
        if not self.success:  # stay as they were
            extra["failure"] = self.failure
        if self.stop_detail is not None:
            extra["stop_detail"] = self.stop_detail
        return {
            "episode_id": self.episode_id,
            "scene_id": self.scene_id,
            "index": self.index,
            "modality": self.modality.value,
            "success": self.success,
            "spl": self.spl,
            "path_length_m": self.path_length_m,
            "geodesic_m": self.geodesic_m,
            "num_actions": self.num_actions,
            "stop_reason": self.stop_reason,
            "distance_to_goal_m": self.distance_to_goal_m,
            "error": self.error,
            "actions": None if self.actions is None else [a.name for a in self.actions],
            **extra,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> SubtaskRecord:
        """Inverse of :meth:`to_json`; raises InvalidResultError naming the bad field."""
        required = ("episode_id", "index", "modality", "success", "spl", "path_length_m", "geodesic_m",
                    "num_actions", "stop_reason", "distance_to_goal_m")
        missing = [k for k in required if k not in obj]
        if missing:
            raise InvalidResultError(f"missing fields {missing}")
        raw_actions = obj.get("actions")
        actions = None
        if raw_actions is not None:
            if not isinstance(raw_actions, list):
                raise InvalidResultError(f"actions must be a list of action names, got {raw_actions!r}")
            try:
                actions = tuple(DiscreteAction[name] for name in raw_actions)
            except (KeyError, TypeError):
                raise InvalidResultError(
                    f"actions must name DiscreteAction members {[a.name for a in DiscreteAction]}, got "
                    f"{raw_actions!r}"
                ) from None
        return cls(actions=actions, error=obj.get("error"), scene_id=obj.get("scene_id"), level=obj.get("level"),
                   failure=obj.get("failure"), stop_detail=obj.get("stop_detail"), **{k: obj[k] for k in required})


@dataclass(frozen=True)
class GroupStats:
    success_rate: float
    spl: float
    count: int

    def to_json(self) -> dict[str, Any]:
        return {"success_rate": self.success_rate, "spl": self.spl, "count": self.count}


@dataclass(frozen=True)
class Summary:
    """Benchmark-level numbers. Success rate and SPL are averaged as ``averaging`` says: ``per_episode`` is
    GOAT-Bench's way (``goat_bench/measurements/nav.py`` l.313-314 and l.405-406 score each episode as
    successes / subtasks; ``ppo_trainer_no_2d.py`` l.415-419 averages over episodes), ``pooled`` the mean over
    all subtasks."""

    success_rate: float
    spl: float
    num_subtasks: int
    num_episodes: int
    by_modality: Mapping[str, GroupStats]  # GoalModality value -> stats
    by_subtask_index: Mapping[int, GroupStats]
    stop_reasons: Mapping[str, int] = field(default_factory=dict)  # how many subtasks ended each way
    failures: Mapping[str, int] = field(default_factory=dict)  # failed subtasks per failure class
    unclassified_failures: int = 0  # failed STOPs without a class (files written before the taxonomy)
    averaging: str = "per_episode"  # one of goat_suites.common.protocols.AVERAGING

    def to_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"failures": dict(self.failures)} if self.failures else {}
        if self.unclassified_failures:
            extra["unclassified_failures"] = self.unclassified_failures
        extra["averaging"] = self.averaging
        return {
            "success_rate": self.success_rate,
            "spl": self.spl,
            "by_modality": {k: v.to_json() for k, v in self.by_modality.items()},
            "by_subtask_index": {str(k): v.to_json() for k, v in self.by_subtask_index.items()},
            "num_subtasks": self.num_subtasks,
            "num_episodes": self.num_episodes,
            "stop_reasons": dict(self.stop_reasons),
            **extra,
        }


def _stats(records: Sequence[SubtaskRecord]) -> GroupStats:
    return GroupStats(
        success_rate=mean_over(records, lambda r: float(r.success)),
        spl=mean_over(records, lambda r: r.spl),
        count=len(records),
    )


def _episode_mean(episodes: Sequence[Sequence[SubtaskRecord]], value: Any, modality: Optional[GoalModality]) -> float:
    """Mean over episodes of each episode's mean of ``value`` over its subtasks (of ``modality``, if given).

    GOAT-Bench's ``{modality}_success`` (``goat_bench/measurements/nav.py`` l.300-305) is 0.0 for an episode
    without a subtask of that modality, and the trainer (``ppo_trainer_no_2d.py`` l.415-419) averages it over
    every episode: such episodes count as 0, as they do there.
    """
    per_episode = []
    for records in episodes:
        chosen = [r for r in records if modality is None or r.modality is modality]
        per_episode.append(mean_over(chosen, value) if chosen else 0.0)
    return mean(per_episode)


def _per_episode_stats(episodes: Sequence[Sequence[SubtaskRecord]], modality: Optional[GoalModality]) -> GroupStats:
    count = sum(1 for records in episodes for r in records if modality is None or r.modality is modality)
    return GroupStats(success_rate=_episode_mean(episodes, lambda r: float(r.success), modality),
                      spl=_episode_mean(episodes, lambda r: r.spl, modality), count=count)


def summarise(records: Iterable[SubtaskRecord], averaging: str = "per_episode") -> Summary:
    """Success rate and SPL overall, per modality and per subtask index; no records give zeros.

    ``averaging="per_episode"`` (GOAT-Bench's code, the default): overall and per-modality rates are means over
    episodes of per-episode means; ``"pooled"``: means over subtasks. Per subtask index both are the same
    (one subtask of each index per episode).
    """
    if averaging not in AVERAGING:
        raise InvalidResultError(f"averaging must be one of {AVERAGING}, got {averaging!r}")
    items = list(records)
    if not items:
        return Summary(0.0, 0.0, 0, 0, {}, {}, {reason: 0 for reason in STOP_REASONS}, count_failures(()),
                       averaging=averaging)
    by_modality = group_by(items, lambda r: r.modality)
    by_index = group_by(items, lambda r: r.index)
    if averaging == "per_episode":
        episodes = list(group_by(items, lambda r: (r.scene_id, r.episode_id)).values())
        overall = _per_episode_stats(episodes, None)
        modality_stats = {m.value: _per_episode_stats(episodes, m) for m in GoalModality if m in by_modality}
    else:
        overall = _stats(items)
        modality_stats = {m.value: _stats(by_modality[m]) for m in GoalModality if m in by_modality}
    return Summary(
        success_rate=overall.success_rate,
        spl=overall.spl,
        num_subtasks=len(items),
        num_episodes=len({(r.scene_id, r.episode_id) for r in items}),
        by_modality=modality_stats,
        by_subtask_index={i: _stats(by_index[i]) for i in sorted(by_index)},
        stop_reasons={reason: sum(r.stop_reason == reason for r in items) for reason in STOP_REASONS},
        failures=count_failures(r.failure for r in items),
        unclassified_failures=sum(not r.success and r.failure is None for r in items),
        averaging=averaging,
    )


@dataclass(frozen=True)
class ResultsFile:
    records: tuple[SubtaskRecord, ...]
    summary: Summary
    meta: Mapping[str, Any]


def _dumps(value: Any, indent: Optional[int]) -> str:
    try:
        return json.dumps(value, indent=indent, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidResultError(f"results must be plain JSON without NaN or infinity: {exc}") from None


def write_results_json(
    path: PathLike, records: Sequence[SubtaskRecord], summary: Summary, meta: Mapping[str, Any]
) -> None:
    """Write the results file atomically: readable summary and meta, one line per subtask record."""
    lines = ",\n".join("    " + _dumps(r.to_json(), None) for r in records)
    subtasks = f"[\n{lines}\n  ]" if records else "[]"
    summary_text = _dumps(summary.to_json(), 2).replace("\n", "\n  ")
    meta_text = _dumps(dict(meta), 2).replace("\n", "\n  ")
    text = f'{{\n  "summary": {summary_text},\n  "subtasks": {subtasks},\n  "meta": {meta_text}\n}}\n'
    atomic_write_bytes(path, text.encode("utf-8"))


def _close(a: Any, b: Any) -> bool:
    """JSON values equal up to float rounding (a summary written by another tool may round differently)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float))
                and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))
    return bool(a == b)


def read_results_json(path: PathLike) -> ResultsFile:
    """Read and validate a results file: structure, every record, and a summary that matches the records."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidResultError(f"{path}: cannot read results file: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidResultError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or set(data) != {"summary", "subtasks", "meta"}:
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise InvalidResultError(f"{path}: expected an object with summary, subtasks and meta, got {keys}")
    if not isinstance(data["subtasks"], list) or not isinstance(data["meta"], dict):
        raise InvalidResultError(f"{path}: subtasks must be a list and meta an object")
    records = []
    for i, raw in enumerate(data["subtasks"]):
        if not isinstance(raw, dict):
            raise InvalidResultError(f"{path}: subtasks[{i}]: expected an object, got {raw!r}")
        try:
            records.append(SubtaskRecord.from_json(raw))
        except InvalidResultError as exc:
            raise InvalidResultError(f"{path}: subtasks[{i}]: {exc}") from None
    stored_summary = data["summary"] if isinstance(data["summary"], dict) else {}
    summary = summarise(records, averaging=str(stored_summary.get("averaging", "pooled")))
    recomputed = summary.to_json()
    if "averaging" not in stored_summary:  # written before the averaging was recorded: pooled
        recomputed.pop("averaging")
    if "failures" not in data["summary"]:  # written before the failure taxonomy
        recomputed.pop("failures", None)
        recomputed.pop("unclassified_failures", None)
    if not _close(data["summary"], recomputed):
        raise InvalidResultError(
            f"{path}: summary does not match the subtask records; stored {data['summary']!r}, "
            f"recomputed {recomputed!r}"
        )
    return ResultsFile(records=tuple(records), summary=summary, meta=data["meta"])


def append_results_json(
    path: PathLike, new_records: Iterable[SubtaskRecord], meta: Optional[Mapping[str, Any]] = None,
    averaging: str = "per_episode",
) -> ResultsFile:
    """Add records (one finished episode) to the results file, creating it if needed, and re-summarise.

    ``meta`` replaces the stored meta when given. A record for a (scene, episode, subtask index) that is
    already in the file is refused: resuming a run must not count a subtask twice.
    """
    path = Path(path)
    old = read_results_json(path) if path.exists() else ResultsFile((), summarise((), averaging), {})
    seen = {(r.scene_id, r.episode_id, r.index) for r in old.records}
    added = list(new_records)
    for r in added:
        key = (r.scene_id, r.episode_id, r.index)
        if key in seen:
            raise InvalidResultError(
                f"{path}: subtask {r.index} of episode {r.episode_id!r} (scene {r.scene_id!r}) is already "
                "recorded"
            )
        seen.add(key)
    records = old.records + tuple(added)
    new_meta = dict(old.meta if meta is None else meta)
    result = ResultsFile(records=records, summary=summarise(records, averaging), meta=new_meta)
    write_results_json(path, result.records, result.summary, result.meta)
    return result


_RowKey = tuple[Optional[str], str, int]  # (scene_id, episode_id, subtask index)


def _suite_rows(meta: Mapping[str, Any], suite: str, key: str) -> dict[_RowKey, Mapping[str, Any]]:
    """The suite's per-subtask rows of ``meta[suite][key]`` by (scene_id, episode_id, index); {} when absent."""
    block = meta.get(suite)
    rows = block.get(key) if isinstance(block, Mapping) else None
    if not isinstance(rows, list):
        return {}
    return {(row.get("scene_id"), str(row["episode_id"]), row.get("index", 0)): row for row in rows
            if isinstance(row, Mapping) and "episode_id" in row and isinstance(row.get("index", 0), int)}
