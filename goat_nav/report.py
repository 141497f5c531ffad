"""A self-contained HTML report of a benchmark run: metric tables, charts and a top-down map per episode."""

from __future__ import annotations

import argparse
import base64
import html
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from goat_core.bench.results import GroupStats, SubtaskRecord, Summary, read_results_json, summarise
from goat_nav.runner import Trajectory

_MODALITY_COLOURS_BGR = {"object": (200, 120, 30), "description": (40, 160, 40), "image": (40, 40, 200)}


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _bar_chart(title: str, groups: Mapping[str, GroupStats]) -> str:
    """Inline SVG: SR and SPL bars per group (no JavaScript, renders in any browser)."""
    names = list(groups)
    width, height, pad = max(320, 70 * len(names) + 60), 200, 30
    bars = []
    for i, name in enumerate(names):
        x0 = pad + i * 70
        for j, (key, colour) in enumerate((("success_rate", "#3b7dd8"), ("spl", "#e39b2d"))):
            value = float(getattr(groups[name], key))
            h = value * (height - 2 * pad)
            bars.append(f'<rect x="{x0 + j * 26}" y="{height - pad - h:.1f}" width="24" height="{h:.1f}" '
                        f'fill="{colour}"><title>{html.escape(name)} {key} {value:.3f}</title></rect>')
        bars.append(f'<text x="{x0 + 25}" y="{height - 10}" font-size="11" text-anchor="middle">'
                    f"{html.escape(name)}</text>")
    return (f'<figure><figcaption>{html.escape(title)} (blue SR, orange SPL)</figcaption>'
            f'<svg width="{width}" height="{height}" role="img"><line x1="{pad}" y1="{height - pad}" '
            f'x2="{width}" y2="{height - pad}" stroke="#444"/>{"".join(bars)}</svg></figure>')


def render_topdown(trajectory: Trajectory, records: Sequence[SubtaskRecord], scale_px_per_m: float = 40.0,
                   ) -> np.ndarray:
    """A BGR top-down picture: navigable space, the path, subtask starts and goal positions."""
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
    for k, start in enumerate(trajectory.subtask_starts):
        modality = records[k].modality.value if k < len(records) else "object"
        colour = _MODALITY_COLOURS_BGR.get(modality, (0, 0, 0))
        cv2.circle(img, to_px(trajectory.positions_xy_m[start]), 5, colour, -1, cv2.LINE_AA)
        for goal_xy in trajectory.goal_positions_xy_m[k]:
            c = to_px(goal_xy)
            ok = k < len(records) and records[k].success
            cv2.drawMarker(img, c, colour, cv2.MARKER_STAR if ok else cv2.MARKER_TILTED_CROSS, 14, 2)
            cv2.putText(img, str(k), (c[0] + 6, c[1] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1,
                        cv2.LINE_AA)
    return img


def _png_data_uri(img_bgr: np.ndarray) -> str:
    ok, buf = cv2.imencode(".png", img_bgr)
    if not ok:
        raise ValueError("could not encode the top-down map as PNG")
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode("ascii")


def write_html_report(path: Path, records: Sequence[SubtaskRecord], summary: Summary, meta: Mapping[str, Any],
                      trajectories: Sequence[Trajectory]) -> None:
    """Write one HTML file with everything inlined (images as data URIs, charts as SVG)."""
    overall = _table([["SR", f"{summary.success_rate:.3f}"], ["SPL", f"{summary.spl:.3f}"],
                      ["subtasks", summary.num_subtasks]], ["metric", "value"])
    by_mod_items = sorted(summary.by_modality.items())
    by_mod = _table([[m, f"{g.success_rate:.3f}", f"{g.spl:.3f}", g.count] for m, g in by_mod_items],
                    ["modality", "SR", "SPL", "n"])
    by_idx_items = sorted(summary.by_subtask_index.items())
    by_idx = _table([[i, f"{g.success_rate:.3f}", f"{g.spl:.3f}", g.count] for i, g in by_idx_items],
                    ["subtask index", "SR", "SPL", "n"])
    episodes_html = []
    for traj in trajectories:
        ep_records = [r for r in records if r.episode_id == traj.episode_id]
        rows = [[r.index, r.modality.value, "yes" if r.success else "no", f"{r.spl:.2f}", f"{r.path_length_m:.1f}",
                 f"{r.geodesic_m:.1f}", r.num_actions, r.stop_reason] for r in ep_records]
        picture = ""
        if traj.navigable is not None:
            picture = (f'<img alt="top-down map of episode {html.escape(traj.episode_id)}" '
                       f'src="{_png_data_uri(render_topdown(traj, ep_records))}">')
        episodes_html.append(
            f"<section><h3>Episode {html.escape(traj.episode_id)} ({html.escape(traj.scene_id)})</h3>"
            f"{picture}"
            + _table(rows, ["#", "modality", "success", "SPL", "path m", "geodesic m", "actions", "end"])
            + "</section>")
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>goat_nav benchmark report</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #bbb;padding:3px 8px;text-align:right}}img{{max-width:100%;border:1px solid #ccc}}
section{{margin:2em 0}}figure{{display:inline-block;margin:1em}}</style></head>
<body><h1>goat_nav benchmark report</h1>
<h2>Overall</h2>{overall}
<div>{_bar_chart("By modality", {m: g for m, g in by_mod_items})}
{_bar_chart("By subtask index", {str(i): g for i, g in by_idx_items})}</div>
<h2>By modality</h2>{by_mod}<h2>By subtask index</h2>{by_idx}
<h2>Run</h2><pre>{html.escape(json.dumps(dict(meta), indent=2, default=str))}</pre>
<h2>Episodes</h2>{"".join(episodes_html)}
<p>Legend: dots mark subtask starts, stars reached goals, crosses missed goals; blue object, green
description, red image goals.</p></body></html>
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(doc, encoding="utf-8")
    tmp.replace(path)


def run_report(args: argparse.Namespace) -> int:
    """``goat-nav report results.json``: the report of a finished (or interrupted) run, from its results JSON."""
    results = read_results_json(args.results)
    out = args.out if args.out is not None else Path(args.results).with_suffix(".html")
    write_html_report(out, results.records, summarise(results.records), results.meta, [])
    print(f"report: {out}")
    return 0
