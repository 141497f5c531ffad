"""A self-contained HTML report of a benchmark run: metric tables, charts and a top-down map per episode.

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
import sys
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import cv2
import numpy as np

from goat_core.bench.results import (
    GroupStats,
    InvalidResultError,
    PathLike,
    SubtaskRecord,
    Summary,
    atomic_write_bytes,
    read_results_json,
    summarise,
)
from goat_core.bench.suite_metrics import LevelRecord, langmap_by_level
from goat_nav.runner import Trajectory

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


# ------------------------------------------------------------------------------------------------ charts


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str], table_id: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
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


def _figure(title: str, width: int, body: str, chart_class: str) -> str:
    return (f'<figure class="chart {chart_class}"><figcaption>{html.escape(title)} '
            f'(<span style="color:{_SR_COLOUR}">SR</span>, <span style="color:{_SPL_COLOUR}">SPL</span>)'
            f'</figcaption><svg width="{width}" height="{_CHART_H}" role="img">{_axes(width)}{body}</svg></figure>')


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
figcaption{font-size:0.9em;margin-bottom:0.3em}p.note{color:#666}"""

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
                     trajectory: Optional[Trajectory], with_levels: bool) -> str:
    rows = [[r.index, r.modality.value] + ([r.level or ""] if with_levels else [])
            + ["yes" if r.success else "no", f"{r.spl:.2f}", f"{r.path_length_m:.1f}",
               "" if r.geodesic_m is None else f"{r.geodesic_m:.1f}", r.num_actions, r.stop_reason]
            for r in records]
    header = ["#", "modality"] + (["level"] if with_levels else []) + ["success", "SPL", "path m", "geodesic m",
                                                                        "actions", "end"]
    if trajectory is not None and trajectory.navigable is not None:
        picture = (f'<img class="map" alt="top-down map of episode {html.escape(episode_id)}" '
                   f'src="{_png_data_uri(render_topdown(trajectory, records))}">')
    else:
        picture = ('<p class="note">No map: the results hold no trajectory for this episode (run with '
                   '<code>goat-nav bench --out</code> to store them).</p>')
    scene = scene_id if scene_id is not None else (trajectory.scene_id if trajectory is not None else "?")
    return (f'<section class="episode"><h3>Episode {html.escape(episode_id)} ({html.escape(scene)})</h3>'
            f"{picture}{_table(rows, header)}</section>")


def render_html_report(records: Sequence[SubtaskRecord], summary: Summary, meta: Mapping[str, Any],
                       trajectories: Sequence[Trajectory]) -> str:
    """The report page. Trajectories are drawn from their stored form (see the module docstring)."""
    stored = trajectories_from_json(trajectories_to_json(trajectories))
    levels = levels_of(records)
    by_index = dict(sorted(summary.by_subtask_index.items()))
    overall_rows: list[list[Any]] = [["SR", f"{summary.success_rate:.3f}"], ["SPL", f"{summary.spl:.3f}"],
                                      ["subtasks", summary.num_subtasks], ["episodes", summary.num_episodes]]
    overall_rows += [[f"ended by {k}", v] for k, v in summary.stop_reasons.items()]
    overall = _table(overall_rows, ["metric", "value"], "overall")
    charts = [_bar_chart("By modality", dict(summary.by_modality), "by-modality")]
    if levels:
        charts.append(_bar_chart("By LangMap level", levels, "by-level"))
    charts.append(_line_chart("By subtask index", by_index, "by-subtask-index"))
    tables = [_stats_table("By modality", "modality", summary.by_modality, "by-modality")]
    if levels:
        tables.append(_stats_table("By LangMap level", "level", levels, "by-level"))
    tables.append(_stats_table("By subtask index", "subtask index", by_index, "by-subtask-index"))
    episodes = [_episode_section(scene, ep, [r for r in records if (r.scene_id, r.episode_id) == (scene, ep)],
                                 _find_trajectory(stored, scene, ep), bool(levels))
                for scene, ep in _episode_keys(records)]
    run = html.escape(json.dumps(dict(meta), indent=2, default=str))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>goat_nav benchmark report</title>
<style>{_STYLE}</style></head>
<body><h1>goat_nav benchmark report</h1>
<h2>Overall</h2>{overall}
<div class="charts">{"".join(charts)}</div>
{"".join(tables)}
<h2>Episodes</h2>{_LEGEND}{"".join(episodes)}
<h2>Run</h2><pre>{run}</pre>
</body></html>
"""


def write_html_report(path: Path, records: Sequence[SubtaskRecord], summary: Summary, meta: Mapping[str, Any],
                      trajectories: Sequence[Trajectory]) -> None:
    """Write the report page atomically."""
    atomic_write_bytes(path, render_html_report(records, summary, meta, trajectories).encode("utf-8"))


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
    results = read_results_json(args.results)
    trajectories = load_run_trajectories(args.results, results.meta)
    out = args.out if args.out is not None else Path(args.results).with_suffix(".html")
    write_html_report(out, results.records, summarise(results.records), results.meta, trajectories)
    print(f"report: {out}")
    return 0
