"""The pieces of the HTML reports: tables, SVG charts (bars, lines, series) and the top-down map of an episode.

Everything is inline: charts are SVG, maps are PNG data URIs, there is no script and no external asset, so a report
opens anywhere (a browser offline, a CI artifact viewer).
"""

from __future__ import annotations

import base64
import html
from typing import Any, Mapping, Optional, Sequence

import cv2
import numpy as np

from goat_suites.common.results import (
    GroupStats,
    SubtaskRecord,
)
from goat_suites.common.runner import Trajectory

_MODALITY_COLOURS_BGR = {"object": (200, 120, 30), "description": (40, 160, 40), "image": (40, 40, 200)}

_CHART_H, _PAD_L, _PAD_B, _PAD_T = 220, 40, 34, 12


_SR_COLOUR, _SPL_COLOUR = "#3b7dd8", "#e39b2d"


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


def _value_table(title: str, key_name: str, values: Mapping[Any, float], value_name: str, table_id: str) -> str:
    rows = [[k, f"{v:.3f}"] for k, v in values.items()]
    return f"<h2>{html.escape(title)}</h2>{_table(rows, [key_name, value_name], table_id)}"


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
