"""The files of a ``goat-nav bench --suite findingdory`` run: the results file and its frames file.

Results file (JSON): ``{"suite": "findingdory", "summary", "tasks": [task row, ...], "meta"}``; ``summary`` is
recomputed from the task rows when read (a file that does not add up is refused, naming it). ``meta`` names the
high-level policy and the perception that chose the frames (``meta["high_level"]``, ``meta["perception"]``).

Frames file (gzip JSON, named by ``meta["frames_file"]``, next to the results): small JPEG thumbnails of the
experience frames the report shows per task, the frames chosen next to the frames the oracle chose::

    {"format": "goat_nav.findingdory_frames", "version": 1,
     "episodes": {episode_id: {"<frame index>": base64 JPEG, ...}}}

Both the suite (which writes) and the report (which reads) use this module; neither imports the other.
"""

from __future__ import annotations

import base64
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from goat_suites.common.metrics import InvalidMetricInputError
from goat_suites.common.results import InvalidResultError, PathLike, atomic_write_bytes
from goat_suites.common.suite_metrics import FindingDoryRecord, findingdory_by_task_type, findingdory_stats

SUITE = "findingdory"
FRAMES_META_KEY = "frames_file"  # results meta: the frames file, relative to the results file
FRAMES_FORMAT = "goat_nav.findingdory_frames"
FRAMES_VERSION = 1
THUMBNAIL_WIDTH_PX = 90
_TASK_FIELDS = ("episode_id", "task_id", "task_type", "hl_success", "hl_dtg_success", "hl_sc_success",
                "ll_success", "hl_spl", "ll_spl")


@dataclass(frozen=True)
class FindingDoryResults:
    """A results file of ``goat-nav bench --suite findingdory``, checked."""

    records: tuple[FindingDoryRecord, ...]
    tasks: tuple[dict[str, Any], ...]  # the task rows as written
    meta: dict[str, Any]


def summary_of(records: Sequence[FindingDoryRecord]) -> dict[str, Any]:
    summary: dict[str, Any] = {"num_tasks": len(records)}
    if records:
        summary["overall"] = findingdory_stats(records).to_json()
        summary["by_task_type"] = {k: v.to_json() for k, v in findingdory_by_task_type(records).items()}
    return summary


def write_results(path: PathLike, records: Sequence[FindingDoryRecord], tasks: Sequence[Mapping[str, Any]],
                  meta: Mapping[str, Any]) -> None:
    """Write the results file atomically; ``tasks[i]`` is the row of ``records[i]``."""
    if len(records) != len(tasks):
        raise InvalidResultError(f"{len(records)} FindingDory records for {len(tasks)} task rows")
    body = {"suite": SUITE, "summary": summary_of(records), "tasks": [dict(t) for t in tasks], "meta": dict(meta)}
    atomic_write_bytes(path, (json.dumps(body, indent=1, allow_nan=False) + "\n").encode("utf-8"))


def is_results_file(data: Any) -> bool:
    """Whether parsed JSON is a FindingDory results file (its top-level ``suite`` says so)."""
    return isinstance(data, dict) and data.get("suite") == SUITE


def results_from_json(data: Any, source: str) -> FindingDoryResults:
    """Inverse of :func:`write_results`; InvalidResultError names ``source``, the task and the field."""
    if not is_results_file(data) or set(data) != {"suite", "summary", "tasks", "meta"}:
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise InvalidResultError(f"{source}: expected a FindingDory results file (suite, summary, tasks, meta), "
                                 f"got {keys}")
    if not isinstance(data["tasks"], list) or not isinstance(data["meta"], dict):
        raise InvalidResultError(f"{source}: tasks must be a list and meta an object")
    records = []
    for i, raw in enumerate(data["tasks"]):
        missing = [k for k in _TASK_FIELDS if not isinstance(raw, dict) or k not in raw]
        if missing:
            raise InvalidResultError(f"{source}: tasks[{i}]: missing fields {missing}")
        try:
            records.append(FindingDoryRecord(**{k: raw[k] for k in _TASK_FIELDS}))
        except (InvalidMetricInputError, TypeError) as exc:
            raise InvalidResultError(f"{source}: tasks[{i}]: {exc}") from None
    recomputed = json.loads(json.dumps(summary_of(records)))
    if data["summary"] != recomputed:
        raise InvalidResultError(f"{source}: summary does not match the task records; stored {data['summary']!r}, "
                                 f"recomputed {recomputed!r}")
    return FindingDoryResults(records=tuple(records), tasks=tuple(data["tasks"]), meta=data["meta"])


def read_results(path: PathLike) -> FindingDoryResults:
    """Read and check a results file written by :func:`write_results`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidResultError(f"{path}: cannot read results file: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidResultError(f"{path}: not valid JSON: {exc}") from None
    return results_from_json(data, str(path))


# ----------------------------------------------------------------------------------------------- frames file


def frames_path(results_path: PathLike) -> Path:
    """Where the thumbnails of ``results_path`` go: ``<stem>.frames.json.gz`` beside it."""
    p = Path(results_path)
    stem = p.stem if p.suffix == ".json" else p.name
    return p.with_name(f"{stem}.frames.json.gz")


def thumbnail_jpeg(rgb: np.ndarray, width_px: int = THUMBNAIL_WIDTH_PX, quality: int = 80) -> str:
    """A small base64 JPEG of an RGB frame, ``width_px`` wide."""
    h, w = rgb.shape[:2]
    size = (width_px, max(1, round(h * width_px / w)))
    small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(small[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise InvalidResultError(f"cannot encode a {rgb.shape} frame as a JPEG thumbnail")
    return base64.b64encode(buf.tobytes()).decode("ascii")


def write_frames(path: PathLike, frames: Mapping[str, Mapping[int, str]]) -> None:
    """Write the frames file: episode id -> frame index -> base64 JPEG thumbnail."""
    body = {"format": FRAMES_FORMAT, "version": FRAMES_VERSION,
            "episodes": {ep: {str(k): v for k, v in sorted(items.items())} for ep, items in frames.items()}}
    atomic_write_bytes(path, gzip.compress(json.dumps(body).encode("utf-8"), mtime=0))


def read_frames(path: PathLike) -> dict[str, dict[int, str]]:
    """Inverse of :func:`write_frames`; InvalidResultError names the file and the problem."""
    try:
        data = json.loads(gzip.decompress(Path(path).read_bytes()).decode("utf-8"))
    except OSError as exc:
        raise InvalidResultError(f"{path}: cannot read frames file: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, EOFError) as exc:
        raise InvalidResultError(f"{path}: not a gzip JSON frames file: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FRAMES_FORMAT or data.get("version") != FRAMES_VERSION:
        raise InvalidResultError(f"{path}: expected format {FRAMES_FORMAT!r} version {FRAMES_VERSION}")
    episodes = data.get("episodes")
    if not isinstance(episodes, dict):
        raise InvalidResultError(f"{path}: 'episodes' must be an object")
    out: dict[str, dict[int, str]] = {}
    for ep, items in episodes.items():
        if not isinstance(items, dict) or not all(k.isdigit() and isinstance(v, str) for k, v in items.items()):
            raise InvalidResultError(f"{path}: episode {ep!r} must map frame indices to base64 JPEG strings")
        out[str(ep)] = {int(k): v for k, v in items.items()}
    return out
