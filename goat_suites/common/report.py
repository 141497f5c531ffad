"""A self-contained HTML report of a benchmark run: metric tables, charts and a top-down map per episode.

Every suite's results file reports: GOAT (SR / SPL by modality and subtask index), LangMap (also by level, by
description style and SeqSR@n), PASTURE (also by split) and FindingDory, whose results file is its own
(``goat_suites.findingdory.results``: HL-SR, LL-SR, HL-SPL, LL-SPL, DTG-SR, SC-SR overall and per task
type, a table per episode, a map per task and, per task, the frames the high level chose next to the oracle's).

Everything is inline: charts are SVG, maps are PNG data URIs, there is no script and no external asset, so the
file opens anywhere (a browser offline, a CI artifact viewer).

The maps need what the results JSON does not hold: the path and the navigable space of each episode. ``goat-nav
bench --out results.json`` stores them next to the results, in ``results.trajectories.json.gz`` (named by the
results' ``meta["trajectories_file"]``), so ``goat-nav report results.json`` draws the same maps as ``goat-nav
bench --report``; both draw from the stored form, so for one run the two HTML files are byte-identical.

Trajectories file layout (gzip JSON)::

    {"format": "goat_nav.trajectories", "version": 1,
     "grids": {scene_id: {"shape": [H, W], "origin_xy_m": [x, y], "resolution_m": r,
                          "navigable_png": base64 PNG, 255 = navigable, row 0 at the lowest y}},
     "episodes": [{"episode_id", "scene_id", "positions_xy_m": [[x, y], ...], "subtask_starts": [i, ...],
                   "goal_positions_xy_m": [[[x, y], ...], ...]}]}     (world frame, metres, 0.1 mm steps)
"""

from __future__ import annotations

import argparse
import base64
import gzip
import html
import json
import re
import sys
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import cv2
import numpy as np

from goat_core.types import GoalModality
from goat_suites.common.outputs import partial_run_note
from goat_suites.common.realism import realism_line
from goat_suites.common.results import (
    GroupStats,
    InvalidResultError,
    PathLike,
    SubtaskRecord,
    Summary,
    atomic_write_bytes,
    read_results_json,
    summarise,
)
from goat_suites.common.runner import Trajectory
from goat_suites.common.suite_metrics import (
    PASTURE_CATEGORIES,
    FindingDoryRecord,
    FindingDoryStats,
    LevelRecord,
    PastureRecord,
    findingdory_by_task_type,
    findingdory_stats,
    langmap_by_level,
    langmap_overall,
    pasture_by_category,
    seq_sr_table,
)
from goat_suites.findingdory.results import FRAMES_META_KEY, read_frames, read_results

TRAJECTORIES_FORMAT = "goat_nav.trajectories"
TRAJECTORIES_VERSION = 1
TRAJECTORIES_META_KEY = "trajectories_file"  # results meta: the trajectories file, relative to the results file
_POSITION_DECIMALS = 4  # 0.1 mm: far below a map pixel, keeps the file small

_MODALITY_COLOURS_BGR = {"object": (200, 120, 30), "description": (40, 160, 40), "image": (40, 40, 200)}
_SR_COLOUR, _SPL_COLOUR = "#3b7dd8", "#e39b2d"


# -------------------------------------------------------------------------------------- trajectories file


def trajectories_path(results_path: PathLike) -> Path:
    """Where ``goat-nav bench`` stores the trajectories of ``results_path``: ``<stem>.trajectories.json.gz``."""
    p = Path(results_path)
    stem = p.stem if p.suffix == ".json" else p.name
    return p.with_name(f"{stem}.trajectories.json.gz")


def _grid_to_json(traj: Trajectory) -> dict[str, Any]:
    assert traj.navigable is not None
    grid = np.asarray(traj.navigable, dtype=bool)
    ok, png = cv2.imencode(".png", np.where(grid, 255, 0).astype(np.uint8))
    if not ok:
        raise ValueError(f"could not encode the navigable grid of scene {traj.scene_id!r} as PNG")
    return {"shape": list(grid.shape), "origin_xy_m": [float(v) for v in traj.grid_origin_xy_m],
            "resolution_m": float(traj.grid_resolution_m),
            "navigable_png": base64.b64encode(png.tobytes()).decode("ascii")}


def _xy(point: Sequence[float]) -> list[float]:
    return [round(float(point[0]), _POSITION_DECIMALS), round(float(point[1]), _POSITION_DECIMALS)]


def trajectories_to_json(trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    """The stored form of ``trajectories``; each scene's grid is stored once."""
    grids = {t.scene_id: _grid_to_json(t) for t in trajectories if t.navigable is not None}
    episodes = [{"episode_id": t.episode_id, "scene_id": t.scene_id,
                 "positions_xy_m": [_xy(p) for p in t.positions_xy_m],
                 "subtask_starts": [int(i) for i in t.subtask_starts],
                 "goal_positions_xy_m": [[_xy(g) for g in goals] for goals in t.goal_positions_xy_m]}
                for t in trajectories]
    return {"format": TRAJECTORIES_FORMAT, "version": TRAJECTORIES_VERSION, "grids": grids, "episodes": episodes}


def _points(value: Any, where: str) -> list[tuple[float, float]]:
    try:
        array = np.asarray(value, dtype=np.float64).reshape(-1, 2)
    except (TypeError, ValueError):
        raise InvalidResultError(f"{where} must be a list of [x, y] pairs, got {str(value)[:80]}") from None
    if len(array) != len(value) or not np.isfinite(array).all():
        raise InvalidResultError(f"{where} must be a list of finite [x, y] pairs, got {str(value)[:80]}")
    return [(float(x), float(y)) for x, y in array]


def _grid_from_json(raw: Any, where: str) -> tuple[np.ndarray, tuple[float, float], float]:
    try:
        shape = tuple(int(v) for v in raw["shape"])
        origin = _points([raw["origin_xy_m"]], f"{where}.origin_xy_m")[0]
        resolution = float(raw["resolution_m"])
        png = np.frombuffer(base64.b64decode(raw["navigable_png"], validate=True), dtype=np.uint8)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidResultError(f"{where}: expected shape, origin_xy_m, resolution_m and navigable_png; "
                                 f"{type(exc).__name__}: {exc}") from None
    image = cv2.imdecode(png, cv2.IMREAD_GRAYSCALE) if png.size else None
    if image is None or image.shape != shape:
        got = "an undecodable PNG" if image is None else f"a PNG of shape {image.shape}"
        raise InvalidResultError(f"{where}.navigable_png: expected a grey PNG of shape {shape}, got {got}")
    if not resolution > 0.0:
        raise InvalidResultError(f"{where}.resolution_m must be > 0, got {resolution!r}")
    return image > 127, origin, resolution


def _episode_from_json(raw: Any, grids: Mapping[str, Any], where: str) -> Trajectory:
    if not isinstance(raw, dict):
        raise InvalidResultError(f"{where}: expected an object, got {str(raw)[:80]}")
    missing = [k for k in ("episode_id", "scene_id", "positions_xy_m", "subtask_starts", "goal_positions_xy_m")
               if k not in raw]
    if missing:
        raise InvalidResultError(f"{where}: missing fields {missing}")
    positions = _points(raw["positions_xy_m"], f"{where}.positions_xy_m")
    starts = raw["subtask_starts"]
    if not isinstance(starts, list) or not all(isinstance(i, int) and 0 <= i < len(positions) for i in starts):
        raise InvalidResultError(f"{where}.subtask_starts must be indices into positions_xy_m, got {starts!r}")
    goals = raw["goal_positions_xy_m"]
    if not isinstance(goals, list):
        raise InvalidResultError(f"{where}.goal_positions_xy_m must be a list per subtask, got {str(goals)[:80]}")
    goal_xy = [_points(g, f"{where}.goal_positions_xy_m[{k}]") for k, g in enumerate(goals)]
    traj = Trajectory(str(raw["episode_id"]), str(raw["scene_id"]), positions_xy_m=positions,
                      subtask_starts=list(starts), goal_positions_xy_m=goal_xy)
    if traj.scene_id in grids:
        traj.navigable, traj.grid_origin_xy_m, traj.grid_resolution_m = grids[traj.scene_id]
    return traj


def trajectories_from_json(data: Any, source: str = "trajectories") -> list[Trajectory]:
    """Inverse of :func:`trajectories_to_json`; InvalidResultError names ``source`` and the bad field."""
    if not isinstance(data, dict) or data.get("format") != TRAJECTORIES_FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise InvalidResultError(f"{source}: not a goat_nav trajectories file (format {got!r}, expected "
                                 f"{TRAJECTORIES_FORMAT!r})")
    if data.get("version") != TRAJECTORIES_VERSION:
        raise InvalidResultError(f"{source}: trajectories version {data.get('version')!r} is not supported "
                                 f"(this goat_nav reads version {TRAJECTORIES_VERSION})")
    raw_grids, raw_episodes = data.get("grids"), data.get("episodes")
    if not isinstance(raw_grids, dict) or not isinstance(raw_episodes, list):
        raise InvalidResultError(f"{source}: grids must be an object and episodes a list")
    grids = {scene: _grid_from_json(g, f"{source}: grids[{scene!r}]") for scene, g in raw_grids.items()}
    return [_episode_from_json(e, grids, f"{source}: episodes[{i}]") for i, e in enumerate(raw_episodes)]


def write_trajectories(path: PathLike, trajectories: Sequence[Trajectory]) -> None:
    """Write the trajectories file atomically (gzip without a timestamp: one run, one file)."""
    text = json.dumps(trajectories_to_json(trajectories), separators=(",", ":"), allow_nan=False)
    atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))


def read_trajectories(path: PathLike) -> list[Trajectory]:
    try:
        data = json.loads(gzip.decompress(Path(path).read_bytes()))
    except OSError as exc:  # a missing file, or gzip.BadGzipFile
        raise InvalidResultError(f"{path}: cannot read trajectories: {getattr(exc, 'strerror', None) or exc}") \
            from None
    except (EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidResultError(f"{path}: trajectories are not gzip JSON: {exc}") from None
    return trajectories_from_json(data, str(path))


def stored_trajectories(results_path: Path, meta: Mapping[str, Any]) -> list[Trajectory]:
    """The trajectories of the results file ``results_path`` (meta ``meta``): none if it names no file or the
    file is not there."""
    name = meta.get(TRAJECTORIES_META_KEY)
    path = results_path.parent / str(name) if name else None
    return read_trajectories(path) if path is not None and path.exists() else []


# ------------------------------------------------------------------------------------------------ charts


class _Markup(str):
    """A table cell that is HTML already (a link), written as it is."""


def _cell(value: Any) -> str:
    return value if isinstance(value, _Markup) else html.escape(str(value))


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str], table_id: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    attr = f' id="{table_id}"' if table_id else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _stats_table(title: str, key_name: str, groups: Mapping[Any, GroupStats], table_id: str) -> str:
    rows = [[k, f"{g.success_rate:.3f}", f"{g.spl:.3f}", g.count] for k, g in groups.items()]
    return f"<h2>{html.escape(title)}</h2>{_table(rows, [key_name, 'SR', 'SPL', 'n'], table_id)}"


_CHART_H, _PAD_L, _PAD_B, _PAD_T = 220, 40, 34, 12


def _axes(width: int) -> str:
    """Y axis from 0 to 1 with grid lines at quarters."""
    plot_h = _CHART_H - _PAD_T - _PAD_B
    parts = []
    for k in range(5):
        value = k / 4
        y = _CHART_H - _PAD_B - value * plot_h
        parts.append(f'<line x1="{_PAD_L}" y1="{y:.1f}" x2="{width - 8}" y2="{y:.1f}" stroke="#ddd"/>'
                     f'<text x="{_PAD_L - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{value:g}</text>')
    parts.append(f'<line x1="{_PAD_L}" y1="{_CHART_H - _PAD_B}" x2="{width - 8}" y2="{_CHART_H - _PAD_B}" '
                 'stroke="#444"/>')
    return "".join(parts)


def _y(value: float) -> float:
    return _CHART_H - _PAD_B - value * (_CHART_H - _PAD_T - _PAD_B)


def _figure(title: str, width: int, body: str, chart_class: str,
            series: Sequence[tuple[str, str]] = (("SR", _SR_COLOUR), ("SPL", _SPL_COLOUR))) -> str:
    """A chart with its caption; ``series`` (name, colour) make the caption's legend."""
    legend = ", ".join(f'<span style="color:{colour}">{html.escape(name)}</span>' for name, colour in series)
    return (f'<figure class="chart {chart_class}"><figcaption>{html.escape(title)} ({legend})'
            f'</figcaption><svg width="{width}" height="{_CHART_H}" role="img">{_axes(width)}{body}</svg></figure>')


_SERIES_COLOURS = (_SR_COLOUR, _SPL_COLOUR, "#4caf50", "#9c27b0", "#795548", "#607d8b")


def _series_chart(title: str, groups: Mapping[str, Sequence[Optional[float]]], series: Sequence[str],
                  chart_class: str, counts: Optional[Mapping[str, int]] = None) -> str:
    """Bars of several series (fractions in [0, 1]) per group; an undefined value (None) gets no bar."""
    bar_w = max(8, 50 // max(1, len(series)))
    longest = max((len(name) for name in groups), default=0)
    step = max(bar_w * len(series) + 26, 7 * longest + 10)  # room for the group labels (11 px sans: ~6.5 px/char)
    width = max(240, _PAD_L + step * len(groups) + 16)
    colours = dict(zip(series, _SERIES_COLOURS, strict=False))
    parts = []
    for i, (name, values) in enumerate(groups.items()):
        x0 = _PAD_L + 12 + i * step
        for j, (key, value) in enumerate(zip(series, values, strict=True)):
            if value is None:
                continue
            top = _y(value)
            parts.append(f'<rect x="{x0 + j * bar_w}" y="{top:.1f}" width="{bar_w - 2}" '
                         f'height="{_CHART_H - _PAD_B - top:.1f}" fill="{colours.get(key, "#999")}"><title>'
                         f'{html.escape(name)} {html.escape(key)} {value:.3f}</title></rect>')
        middle = x0 + bar_w * len(series) // 2
        parts.append(f'<text x="{middle}" y="{_CHART_H - _PAD_B + 14}" font-size="11" text-anchor="middle">'
                     f'{html.escape(name)}</text>')
        if counts is not None and name in counts:
            parts.append(f'<text x="{middle}" y="{_CHART_H - _PAD_B + 27}" font-size="9" fill="#666" '
                         f'text-anchor="middle">n={counts[name]}</text>')
    return _figure(title, width, "".join(parts), chart_class,
                   [(key, colours.get(key, "#999")) for key in series])


def _bar_chart(title: str, groups: Mapping[str, GroupStats], chart_class: str) -> str:
    """SR and SPL bars per group."""
    step = 76
    width = max(240, _PAD_L + step * len(groups) + 16)
    parts = []
    for i, (name, g) in enumerate(groups.items()):
        x0 = _PAD_L + 12 + i * step
        for j, (key, colour, value) in enumerate((("SR", _SR_COLOUR, g.success_rate), ("SPL", _SPL_COLOUR, g.spl))):
            top = _y(value)
            parts.append(f'<rect x="{x0 + j * 27}" y="{top:.1f}" width="25" height="{_CHART_H - _PAD_B - top:.1f}" '
                         f'fill="{colour}"><title>{html.escape(name)} {key} {value:.3f} (n={g.count})</title></rect>')
        parts.append(f'<text x="{x0 + 26}" y="{_CHART_H - _PAD_B + 14}" font-size="11" text-anchor="middle">'
                     f'{html.escape(name)}</text><text x="{x0 + 26}" y="{_CHART_H - _PAD_B + 27}" font-size="9" '
                     f'fill="#666" text-anchor="middle">n={g.count}</text>')
    return _figure(title, width, "".join(parts), chart_class)


def _line_chart(title: str, groups: Mapping[int, GroupStats], chart_class: str) -> str:
    """SR and SPL against subtask index: one line each (SPL dashed, as it often lies on SR), a marker per index."""
    step = 48
    width = max(240, _PAD_L + step * len(groups) + 24)
    xs = {index: _PAD_L + 20 + i * step for i, index in enumerate(groups)}
    parts = []
    for key, colour, line, radius in (("SR", _SR_COLOUR, 'stroke-width="3"', 5),
                                      ("SPL", _SPL_COLOUR, 'stroke-width="2" stroke-dasharray="6 4"', 3)):
        points = [(xs[i], g.success_rate if key == "SR" else g.spl, i, g) for i, g in groups.items()]
        path = " ".join(f"{x},{_y(v):.1f}" for x, v, _, _ in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" {line}/>')
        parts.extend(f'<circle cx="{x}" cy="{_y(v):.1f}" r="{radius}" fill="{colour}"><title>subtask {i} {key} '
                     f'{v:.3f} (n={g.count})</title></circle>' for x, v, i, g in points)
    parts.extend(f'<text x="{x}" y="{_CHART_H - _PAD_B + 14}" font-size="11" text-anchor="middle">{i}</text>'
                 for i, x in xs.items())
    parts.append(f'<text x="{(_PAD_L + width) // 2}" y="{_CHART_H - 4}" font-size="10" text-anchor="middle">'
                 "subtask index</text>")
    return _figure(title, width, "".join(parts), chart_class)


def levels_of(records: Sequence[SubtaskRecord]) -> dict[str, GroupStats]:
    """SR and SPL per LangMap level of the records that carry one (LangMap order); empty when none does."""
    return langmap_by_level(LevelRecord(r.level, r.success, r.spl) for r in records if r.level is not None)


def seq_sr_of(records: Sequence[SubtaskRecord]) -> dict[int, float]:
    """LangMap's SeqSR@1..n of a run whose every record has a level (an episode is a sequence, n its longest);
    empty otherwise."""
    if not records or any(r.level is None for r in records):
        return {}
    levels = [LevelRecord(str(r.level), r.success, r.spl, sequence_id=f"{r.scene_id}/{r.episode_id}", index=r.index)
              for r in records]
    return seq_sr_table(levels, max(r.index for r in records) + 1)


_RowKey = tuple[Optional[str], str, int]  # (scene_id, episode_id, subtask index)


def _suite_rows(meta: Mapping[str, Any], suite: str, key: str) -> dict[_RowKey, Mapping[str, Any]]:
    """The suite's per-subtask rows of ``meta[suite][key]`` by (scene_id, episode_id, index); {} when absent."""
    block = meta.get(suite)
    rows = block.get(key) if isinstance(block, Mapping) else None
    if not isinstance(rows, list):
        return {}
    return {(row.get("scene_id"), str(row["episode_id"]), row.get("index", 0)): row for row in rows
            if isinstance(row, Mapping) and "episode_id" in row and isinstance(row.get("index", 0), int)}


def styles_of(records: Sequence[SubtaskRecord], meta: Mapping[str, Any]) -> dict[str, GroupStats]:
    """SR and SPL per LangMap description style (``meta["langmap"]["subtasks"]``); empty when not known."""
    rows = _suite_rows(meta, "langmap", "subtasks")
    by_style: dict[str, list[LevelRecord]] = {}
    for r in records:
        row = rows.get((r.scene_id, r.episode_id, r.index))
        if r.level is not None and row is not None and row.get("style"):
            by_style.setdefault(str(row["style"]), []).append(LevelRecord(r.level, r.success, r.spl))
    return {style: langmap_overall(items) for style, items in sorted(by_style.items())}


def pasture_splits_of(records: Sequence[SubtaskRecord], meta: Mapping[str, Any]) -> dict[str, GroupStats]:
    """SR and SPL per PASTURE split (``meta["pasture"]["episodes"]``, PASTURE order); empty when not known."""
    rows = _suite_rows(meta, "pasture", "episodes")
    items = []
    for r in records:
        row = rows.get((r.scene_id, r.episode_id, 0))
        if row is not None and row.get("category") in PASTURE_CATEGORIES:
            items.append(PastureRecord(f"{r.scene_id}/{r.episode_id}", str(row["category"]), r.success, r.spl))
    return pasture_by_category(items)


def _value_table(title: str, key_name: str, values: Mapping[Any, float], value_name: str, table_id: str) -> str:
    rows = [[k, f"{v:.3f}"] for k, v in values.items()]
    return f"<h2>{html.escape(title)}</h2>{_table(rows, [key_name, value_name], table_id)}"


# ------------------------------------------------------------------------------------------------ maps


def render_topdown(trajectory: Trajectory, records: Sequence[SubtaskRecord], scale_px_per_m: float = 40.0,
                   ) -> np.ndarray:
    """A BGR top-down picture: navigable space, the path, subtask starts, goal positions and a 1 m scale bar."""
    grid = trajectory.navigable
    if grid is None:
        raise ValueError(f"episode {trajectory.episode_id} has no navigable grid to draw on")
    res = trajectory.grid_resolution_m
    ox, oy = trajectory.grid_origin_xy_m
    grey = np.where(grid, 235, 90).astype(np.uint8)
    # Rows of the grid go along +y; flip so that +y points up in the picture.
    img: np.ndarray = cv2.cvtColor(np.ascontiguousarray(np.flipud(grey)), cv2.COLOR_GRAY2BGR)
    factor = scale_px_per_m * res
    img = cv2.resize(img, None, fx=factor, fy=factor, interpolation=cv2.INTER_NEAREST)
    h = img.shape[0]

    def to_px(xy: Sequence[float]) -> tuple[int, int]:
        return (int(round((xy[0] - ox) * scale_px_per_m)), int(round(h - (xy[1] - oy) * scale_px_per_m)))

    pts = np.array([to_px(p) for p in trajectory.positions_xy_m], dtype=np.int32)
    if len(pts) > 1:
        cv2.polylines(img, [pts.reshape(-1, 1, 2)], False, (60, 60, 60), 2, cv2.LINE_AA)
    by_index = {r.index: r for r in records}
    for k, start in enumerate(trajectory.subtask_starts):
        record = by_index.get(k)
        colour = _MODALITY_COLOURS_BGR.get(record.modality.value if record else "", (0, 0, 0))
        cv2.circle(img, to_px(trajectory.positions_xy_m[start]), 5, colour, -1, cv2.LINE_AA)
        goals = trajectory.goal_positions_xy_m[k] if k < len(trajectory.goal_positions_xy_m) else []
        for goal_xy in goals:
            c = to_px(goal_xy)
            ok = record is not None and record.success
            cv2.drawMarker(img, c, colour, cv2.MARKER_STAR if ok else cv2.MARKER_TILTED_CROSS, 14, 2)
            cv2.putText(img, str(k), (c[0] + 6, c[1] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)
    if trajectory.positions_xy_m:  # the episode start: a ring around the first subtask's dot
        cv2.circle(img, to_px(trajectory.positions_xy_m[0]), 9, (0, 0, 0), 2, cv2.LINE_AA)
    bar = int(round(scale_px_per_m))
    cv2.line(img, (10, h - 12), (10 + bar, h - 12), (0, 0, 0), 3)
    cv2.putText(img, "1 m", (14 + bar, h - 8), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    return img


def _png_data_uri(img_bgr: np.ndarray) -> str:
    ok, buf = cv2.imencode(".png", img_bgr)
    if not ok:
        raise ValueError("could not encode the top-down map as PNG")
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode("ascii")


# ------------------------------------------------------------------------------------------------ page

_STYLE = """body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}
th{background:#f0f0f0}img.map{max-width:100%;border:1px solid #ccc;display:block;margin:0.5em 0}
section.episode{margin:2em 0;border-top:1px solid #ccc}figure.chart{display:inline-block;margin:0.5em 1em 0.5em 0}
figcaption{font-size:0.9em;margin-bottom:0.3em}p.note{color:#666}
div.goal-views{display:flex;flex-wrap:wrap;gap:0.5em}figure.goal-view{margin:0;width:120px;font-size:0.8em}"""

_LEGEND = ("<p class=\"note\">Maps: light grey is navigable, dark grey is not; the line is the path; dots mark "
           "subtask starts (the ringed one the episode start), stars reached goals and crosses missed goals, "
           "numbered by subtask; blue object, green description, red image goals.</p>")


def _episode_keys(records: Sequence[SubtaskRecord]) -> list[tuple[Optional[str], str]]:
    """(scene_id, episode_id) of each episode, in order of first appearance."""
    return list(dict.fromkeys((r.scene_id, r.episode_id) for r in records))


def _find_trajectory(trajectories: Sequence[Trajectory], scene_id: Optional[str],
                     episode_id: str) -> Optional[Trajectory]:
    for t in trajectories:
        if t.episode_id == episode_id and (scene_id is None or t.scene_id == scene_id):
            return t
    return None


def _episode_section(scene_id: Optional[str], episode_id: str, records: Sequence[SubtaskRecord],
                     trajectory: Optional[Trajectory], with_levels: bool, extra: str = "") -> str:
    rows = [[r.index, r.modality.value] + ([r.level or ""] if with_levels else [])
            + ["yes" if r.success else "no", f"{r.spl:.2f}", f"{r.path_length_m:.1f}",
               "" if r.geodesic_m is None else f"{r.geodesic_m:.1f}", r.num_actions, r.stop_reason, r.failure or ""]
            for r in records]
    header = ["#", "modality"] + (["level"] if with_levels else []) + ["success", "SPL", "path m", "geodesic m",
                                                                        "actions", "end", "failure"]
    if trajectory is not None and trajectory.navigable is not None:
        picture = (f'<img class="map" alt="top-down map of episode {html.escape(episode_id)}" '
                   f'src="{_png_data_uri(render_topdown(trajectory, records))}">')
    else:
        picture = ('<p class="note">No map: the results hold no trajectory for this episode (run with '
                   '<code>goat-nav bench --out</code> to store them).</p>')
    scene = scene_id if scene_id is not None else (trajectory.scene_id if trajectory is not None else "?")
    return (f'<section class="episode" id="{_episode_anchor(scene_id, episode_id)}">'
            f"<h3>Episode {html.escape(episode_id)} ({html.escape(scene)})</h3>{picture}{_table(rows, header)}"
            f"{extra}</section>")


def _episode_anchor(scene_id: Optional[str], episode_id: str) -> str:
    """The HTML id of an episode's section (letters, digits, '-' and '_' only)."""
    return "episode-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{scene_id or ''}-{episode_id}").strip("-")


def _failure_section(records: Sequence[SubtaskRecord], summary: Summary) -> str:
    """How the failed subtasks split by class, then each one with a link to its episode's map."""
    failed = [r for r in records if not r.success]
    if not failed:
        return ""
    counts = [[name, n] for name, n in summary.failures.items()]
    if summary.unclassified_failures:
        counts.append(["unclassified (older file)", summary.unclassified_failures])
    def link(r: SubtaskRecord) -> _Markup:
        return _Markup(f'<a href="#{_episode_anchor(r.scene_id, r.episode_id)}">{html.escape(r.episode_id)}</a>')

    rows = [[link(r), r.index, r.modality.value, r.failure or "?",
             "" if r.distance_to_goal_m is None else f"{r.distance_to_goal_m:.2f}", r.num_actions,
             r.stop_detail or r.error or ""] for r in failed]
    header = ["episode", "#", "modality", "failure", "distance to goal m", "actions", "the agent's account"]
    return (f"<h2>Failures ({len(failed)} of {len(records)} subtasks)</h2>"
            f"{_table(counts, ['class', 'subtasks'], 'failure-classes')}"
            f"{_table(rows, header, 'failures')}")


def render_html_report(records: Sequence[SubtaskRecord], summary: Summary, meta: Mapping[str, Any],
                       trajectories: Sequence[Trajectory],
                       episode_extras: Optional[Mapping[tuple[Optional[str], str], str]] = None,
                       sections: Sequence[str] = ()) -> str:
    """The report page. Trajectories are drawn from their stored form (see the module docstring).

    ``episode_extras``: HTML added to an episode's section by (scene_id, episode_id) (goal views,
    goat_suites.common.report_views); ``sections``: HTML sections before the run settings (model credits).
    """
    stored = trajectories_from_json(trajectories_to_json(trajectories))
    levels = levels_of(records)
    by_index = dict(sorted(summary.by_subtask_index.items()))
    overall_rows: list[list[Any]] = [["SR", f"{summary.success_rate:.3f}"], ["SPL", f"{summary.spl:.3f}"],
                                      ["subtasks", summary.num_subtasks], ["episodes", summary.num_episodes]]
    overall_rows.append(["realism", realism_line(meta)])  # ideal, or the simulated Stretch's noise (docs/realism.md)
    overall_rows += [[f"ended by {k}", v] for k, v in summary.stop_reasons.items()]
    overall = _table(overall_rows, ["metric", "value"], "overall")
    seq_sr = seq_sr_of(records)
    styles = styles_of(records, meta)
    splits = pasture_splits_of(records, meta)
    charts = [_bar_chart("By modality", dict(summary.by_modality), "by-modality")]
    if levels:
        charts.append(_bar_chart("By LangMap level", levels, "by-level"))
    if seq_sr:
        charts.append(_series_chart("LangMap SeqSR@n", {f"@{n}": [v] for n, v in seq_sr.items()}, ["SeqSR"],
                                    "seq-sr"))
    if splits:
        charts.append(_bar_chart("By PASTURE split", splits, "by-pasture-split"))
    charts.append(_line_chart("By subtask index", by_index, "by-subtask-index"))
    tables = [_stats_table("By modality", "modality", summary.by_modality, "by-modality")]
    if levels:
        tables.append(_stats_table("By LangMap level", "level", levels, "by-level"))
    if styles:
        tables.append(_stats_table("By LangMap description style", "style", styles, "by-style"))
    if seq_sr:
        tables.append(_value_table("LangMap SeqSR@n (sequences whose first n goals all succeed)", "n",
                                   seq_sr, "SeqSR", "seq-sr"))
    if splits:
        tables.append(_stats_table("By PASTURE split", "split", splits, "by-pasture-split"))
    tables.append(_stats_table("By subtask index", "subtask index", by_index, "by-subtask-index"))
    episodes = [_episode_section(scene, ep, [r for r in records if (r.scene_id, r.episode_id) == (scene, ep)],
                                 _find_trajectory(stored, scene, ep), bool(levels),
                                 (episode_extras or {}).get((scene, ep), ""))
                for scene, ep in _episode_keys(records)]
    run = html.escape(json.dumps(dict(meta), indent=2, default=str))
    partial = partial_run_note(meta, len(records))
    title = "goat_nav benchmark report" + ("" if partial is None else f" ({html.escape(partial)})")
    # The protocol the numbers were scored under: "custom (...)" names every deviation (docs/protocols.md)
    protocol = (f'<p class="protocol">protocol: <b>{html.escape(str(meta["protocol"]))}</b></p>'
                if "protocol" in meta else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{_STYLE}</style></head>
<body><h1>{title}</h1>
{protocol}<h2>Overall</h2>{overall}
<div class="charts">{"".join(charts)}</div>
{"".join(tables)}
{_failure_section(records, summary)}
<h2>Episodes</h2>{_LEGEND}{"".join(episodes)}
{"".join(sections)}
<h2>Run</h2><pre>{run}</pre>
</body></html>
"""


def write_html_report(path: Path, records: Sequence[SubtaskRecord], summary: Summary, meta: Mapping[str, Any],
                      trajectories: Sequence[Trajectory],
                      episode_extras: Optional[Mapping[tuple[Optional[str], str], str]] = None,
                      sections: Sequence[str] = ()) -> None:
    """Write the report page atomically (extras: see :func:`render_html_report`)."""
    page = render_html_report(records, summary, meta, trajectories, episode_extras, sections)
    atomic_write_bytes(path, page.encode("utf-8"))


# ------------------------------------------------------------------------------------------------ FindingDory

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


def _suite_of(results_path: PathLike) -> Optional[str]:
    """The top-level ``suite`` of a results file that names one (FindingDory's own layout); None otherwise, and
    for a file that cannot be read (the reader then names the problem)."""
    try:
        data = json.loads(Path(results_path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    suite = data.get("suite") if isinstance(data, dict) else None
    return suite if isinstance(suite, str) else None


def load_run_trajectories(results_path: PathLike, meta: Mapping[str, Any]) -> list[Trajectory]:
    """The stored trajectories of a results file; none when its meta names no file (older results).

    A named file that is missing gives a warning and no maps; a file that is not ours is an error.
    """
    name = meta.get(TRAJECTORIES_META_KEY)
    if name is None:
        return []
    if not isinstance(name, str) or not name:
        raise InvalidResultError(f"{results_path}: meta.{TRAJECTORIES_META_KEY} must be a file name, got {name!r}")
    path = Path(results_path).parent / name
    if not path.exists():
        print(f"warning: {path} (named by {results_path}) is missing; the report has no maps", file=sys.stderr)
        return []
    return read_trajectories(path)


def run_report(args: argparse.Namespace) -> int:
    """``goat-nav report results.json``: the report of a finished (or interrupted) run, from its files."""
    out = args.out if args.out is not None else Path(args.results).with_suffix(".html")
    if _suite_of(args.results) == "findingdory":
        found = read_results(args.results)
        frames_name = found.meta.get(FRAMES_META_KEY)
        frames_file = Path(args.results).parent / frames_name if isinstance(frames_name, str) else None
        frames = {}
        if frames_file is not None and not frames_file.exists():
            print(f"warning: {frames_file} (named by {args.results}) is missing; the report has no frames",
                  file=sys.stderr)
        elif frames_file is not None:
            frames = read_frames(frames_file)
        partial = partial_run_note(found.meta, len(found.records))
        if partial is not None:
            print(f"{args.results}: {partial}", file=sys.stderr)
        write_findingdory_report(out, found.records, found.tasks, found.meta,
                                 load_run_trajectories(args.results, found.meta), frames)
        print(f"report: {out}")
        return 0
    results = read_results_json(args.results)
    partial = partial_run_note(results.meta, len(results.records))
    if partial is not None:
        print(f"{args.results}: {partial}", file=sys.stderr)
    trajectories = load_run_trajectories(args.results, results.meta)
    write_html_report(out, results.records, summarise(results.records), results.meta, trajectories)
    print(f"report: {out}")
    return 0
