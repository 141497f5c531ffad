"""The HTML report of a FindingDory run, from its own results file (goat_suites.findingdory.results).

HL-SR, LL-SR, HL-SPL, LL-SPL, DTG-SR, SC-SR overall and per task type, a table per episode, a map per task and, per
task, the frames the high level chose next to the oracle's.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from goat_core.types import GoalModality
from goat_suites.common.outputs import partial_run_note
from goat_suites.common.report import (
    _STYLE,
    _find_trajectory,
)
from goat_suites.common.report_charts import _png_data_uri, _series_chart, _table, render_topdown
from goat_suites.common.results import (
    SubtaskRecord,
    atomic_write_bytes,
)
from goat_suites.common.runner import Trajectory
from goat_suites.common.suite_metrics import (
    FindingDoryRecord,
    FindingDoryStats,
    findingdory_by_task_type,
    findingdory_stats,
)
from goat_suites.common.trajectories import trajectories_from_json, trajectories_to_json

FINDINGDORY_COLUMNS = ("HL-SR", "LL-SR", "HL-SPL", "LL-SPL", "DTG-SR", "SC-SR")


def _findingdory_values(stats: FindingDoryStats) -> list[Optional[float]]:
    return [stats.hl_sr, stats.ll_sr, stats.hl_spl, stats.ll_spl, stats.dtg_sr, stats.sc_sr]


def _percent(value: Optional[float]) -> str:
    """FindingDory's tables are in percent; an undefined value (HL-SPL of multi-goal tasks only) is "-"."""
    return "-" if value is None else f"{100.0 * value:.1f}"


def _yes(value: Any) -> str:
    return "yes" if value else "no"


def _task_map(trajectory: Trajectory, task: Mapping[str, Any]) -> str:
    """The top-down map of one task: every goal is coloured as a description goal, starred if the task succeeded
    at the low level (FindingDory scores the task, not its goals)."""
    draw = [SubtaskRecord(episode_id=trajectory.episode_id, index=k, modality=GoalModality.DESCRIPTION,
                          success=bool(task.get("ll_success")), spl=0.0, path_length_m=0.0, geodesic_m=None,
                          num_actions=0, stop_reason="stop", distance_to_goal_m=None)
            for k in range(len(trajectory.subtask_starts))]
    image = _png_data_uri(render_topdown(trajectory, draw, scale_px_per_m=25.0))
    name = html.escape(str(task.get("task_id", "")))
    return (f'<figure class="task-map"><figcaption>{name}</figcaption><img class="map" '
            f'alt="top-down map of {html.escape(trajectory.episode_id)}" src="{image}"></figure>')


def _thumbs(frames: Any, thumbnails: Mapping[int, str], label: str) -> str:
    if not isinstance(frames, list) or not frames:
        return f'<span class="note">{label}: none</span>'
    cells = []
    for k in frames:
        data = thumbnails.get(int(k)) if isinstance(k, int) else None
        image = (f'<img alt="frame {k}" src="data:image/jpeg;base64,{data}">' if data is not None
                 else '<span class="note">(no thumbnail)</span>')
        cells.append(f"<figure>{image}<figcaption>{html.escape(str(k))}</figcaption></figure>")
    return f'<div class="strip"><span>{label}</span>{"".join(cells)}</div>'


def _frame_strips(tasks: Sequence[Mapping[str, Any]], thumbnails: Mapping[int, str]) -> str:
    """Per task: the frames the high level chose, then the oracle's (a correct answer), as thumbnails."""
    rows = []
    for t in tasks:
        mark = "ok" if t.get("hl_success") else "wrong"
        rows.append(f'<div class="frames {mark}"><b>{html.escape(str(t.get("task_id", "")))}</b> '
                    f'{html.escape(str(t.get("lang", "")))} (high level {mark})'
                    f'{_thumbs(t.get("selected_frames"), thumbnails, "chosen")}'
                    f'{_thumbs(t.get("reference_frames"), thumbnails, "oracle")}</div>')
    return "".join(rows)


def _findingdory_episode(episode_id: str, tasks: Sequence[Mapping[str, Any]],
                         trajectories: Sequence[Trajectory], thumbnails: Mapping[int, str]) -> str:
    header = ["task", "type", "instruction", "HL", "DTG", "SC", "LL", "HL-SPL", "LL-SPL", "actions", "path m",
              "error"]
    rows = [[t.get("task_id", ""), t.get("task_type", ""), t.get("lang", ""), _yes(t.get("hl_success")),
             _yes(t.get("hl_dtg_success")), _yes(t.get("hl_sc_success")), _yes(t.get("ll_success")),
             "-" if t.get("hl_spl") is None else f"{float(t['hl_spl']):.2f}", f"{float(t.get('ll_spl', 0.0)):.2f}",
             t.get("num_actions", ""), f"{float(t.get('path_length_m', 0.0)):.1f}", t.get("error") or ""]
            for t in tasks]
    maps = []
    for t in tasks:
        trajectory = _find_trajectory(trajectories, None, f"{episode_id}/{t.get('task_id')}")
        if trajectory is not None and trajectory.navigable is not None:
            maps.append(_task_map(trajectory, t))
    pictures = "".join(maps) if maps else ('<p class="note">No maps: the results hold no trajectories for this '
                                           'episode (run with <code>goat-nav bench --out</code> to store them).</p>')
    strips = _frame_strips(tasks, thumbnails) if thumbnails else (
        '<p class="note">No frames: the results hold no thumbnails for this episode (run with <code>goat-nav bench '
        '--out</code> to store them).</p>')
    return (f'<section class="episode"><h3>Episode {html.escape(episode_id)}</h3>{_table(rows, header)}'
            f"<div>{pictures}</div>{strips}</section>")


_FINDINGDORY_LEGEND = ("<p class=\"note\">Maps, one per task: light grey is navigable, dark grey is not; the line is "
                       "the low-level drive from the experience start (ringed); crosses mark each goal's valid "
                       "targets, stars when the task succeeded; a task the high level failed has no drive.</p>")


_FRAMES_LEGEND = ("<p class=\"note\">Frames, one row per task: the experience frames the high level chose (one per "
                  "goal) and those the oracle selector chose over the simulator's log (a correct answer), labelled "
                  "with their frame index.</p>")


def render_findingdory_report(records: Sequence[FindingDoryRecord], tasks: Sequence[Mapping[str, Any]],
                              meta: Mapping[str, Any], trajectories: Sequence[Trajectory],
                              frames: Optional[Mapping[str, Mapping[int, str]]] = None) -> str:
    """The report page of a FindingDory run: ``records[i]`` is the record of ``tasks[i]`` (the results file's
    task rows); trajectories (``<episode>/<task>``) are drawn from their stored form; ``frames``: per episode the
    thumbnails of the frames the tasks name (goat_suites.findingdory.results)."""
    if len(records) != len(tasks):
        raise ValueError(f"{len(records)} FindingDory records for {len(tasks)} task rows")
    stored = trajectories_from_json(trajectories_to_json(trajectories))
    overall = findingdory_stats(records) if records else None
    by_type = findingdory_by_task_type(records)
    overall_rows: list[list[Any]] = []
    if overall is not None:
        overall_rows = [[name, _percent(v)] for name, v in zip(FINDINGDORY_COLUMNS, _findingdory_values(overall),
                                                                strict=True)]
    overall_rows += [["tasks", len(records)], ["episodes", len({r.episode_id for r in records})]]
    type_rows = [[name] + [_percent(v) for v in _findingdory_values(stats)] + [stats.count]
                 for name, stats in by_type.items()]
    groups = ({"overall": _findingdory_values(overall)} if overall is not None else {}) | {
        name: _findingdory_values(stats) for name, stats in by_type.items()}
    counts = ({"overall": overall.count} if overall is not None else {}) | {n: s.count for n, s in by_type.items()}
    chart = _series_chart("FindingDory metrics, overall and by task type", groups, FINDINGDORY_COLUMNS,
                          "findingdory-by-task-type", counts)
    by_episode: dict[str, list[Mapping[str, Any]]] = {}
    for task in tasks:
        by_episode.setdefault(str(task.get("episode_id")), []).append(task)
    episodes = [_findingdory_episode(ep, items, stored, (frames or {}).get(ep, {})) for ep, items in by_episode.items()]
    run = html.escape(json.dumps(dict(meta), indent=2, default=str))
    high = meta.get("high_level")
    selector = high.get("selector", "?") if isinstance(high, dict) else str(high)
    source = (f'<p>High level: <b>{html.escape(str(selector))}</b>, perception: '
              f'<b>{html.escape(str(meta.get("perception", "?")))}</b></p>')
    partial = partial_run_note(meta, len(records))
    title = "goat_nav FindingDory report" + ("" if partial is None else f" ({html.escape(partial)})")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{_STYLE}
figure.task-map{{display:inline-block;margin:0.5em 1em 0.5em 0;vertical-align:top}}
div.frames{{margin:0.6em 0}}div.frames.wrong b{{color:#b00}}
div.strip{{display:inline-block;margin:0.2em 1.5em 0 0;vertical-align:top}}
div.strip>span{{display:inline-block;width:3.5em;vertical-align:top}}
div.strip figure{{display:inline-block;margin:0 0.3em;text-align:center;font-size:0.8em}}</style></head>
<body><h1>{title}</h1>{source}
<h2>Overall (%)</h2>{_table(overall_rows, ["metric", "value"], "findingdory-overall")}
<div class="charts">{chart}</div>
<h2>By task type (%)</h2>{_table(type_rows, ["task type", *FINDINGDORY_COLUMNS, "n"], "findingdory-by-task-type")}
<h2>Episodes</h2>{_FINDINGDORY_LEGEND}{_FRAMES_LEGEND}{"".join(episodes)}
<h2>Run</h2><pre>{run}</pre>
</body></html>
"""


def write_findingdory_report(path: Path, records: Sequence[FindingDoryRecord], tasks: Sequence[Mapping[str, Any]],
                             meta: Mapping[str, Any], trajectories: Sequence[Trajectory],
                             frames: Optional[Mapping[str, Mapping[int, str]]] = None) -> None:
    """Write the FindingDory report page atomically."""
    atomic_write_bytes(path, render_findingdory_report(records, tasks, meta, trajectories, frames).encode("utf-8"))
