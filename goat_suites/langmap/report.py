"""LangMap's part of a run's report: SR and SPL per goal level and per description style, and SeqSR@n."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from goat_suites.common.parts import ReportSection
from goat_suites.common.report_charts import _bar_chart, _series_chart, _stats_table, _value_table
from goat_suites.common.results import GroupStats, SubtaskRecord, _suite_rows
from goat_suites.common.suite_metrics import (
    LevelRecord,
    langmap_by_level,
    langmap_overall,
    seq_sr_table,
)


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


def styles_of(records: Sequence[SubtaskRecord], meta: Mapping[str, Any]) -> dict[str, GroupStats]:
    """SR and SPL per LangMap description style (``meta["langmap"]["subtasks"]``); empty when not known."""
    rows = _suite_rows(meta, "langmap", "subtasks")
    by_style: dict[str, list[LevelRecord]] = {}
    for r in records:
        row = rows.get((r.scene_id, r.episode_id, r.index))
        if r.level is not None and row is not None and row.get("style"):
            by_style.setdefault(str(row["style"]), []).append(LevelRecord(r.level, r.success, r.spl))
    return {style: langmap_overall(items) for style, items in sorted(by_style.items())}


def langmap_section(records: Sequence[SubtaskRecord], meta: Mapping[str, Any]) -> ReportSection:
    """LangMap's charts and tables on the report page (per level, SeqSR@n, per style), each when it has data; the
    episodes' tables get a level column when a record has a level."""
    levels = levels_of(records)
    seq_sr = seq_sr_of(records)
    styles = styles_of(records, meta)
    charts, tables = [], []
    if levels:
        charts.append(_bar_chart("By LangMap level", levels, "by-level"))
        tables.append(_stats_table("By LangMap level", "level", levels, "by-level"))
    if seq_sr:
        charts.append(_series_chart("LangMap SeqSR@n", {f"@{n}": [v] for n, v in seq_sr.items()}, ["SeqSR"],
                                    "seq-sr"))
    if styles:
        tables.append(_stats_table("By LangMap description style", "style", styles, "by-style"))
    if seq_sr:
        tables.append(_value_table("LangMap SeqSR@n (sequences whose first n goals all succeed)", "n",
                                   seq_sr, "SeqSR", "seq-sr"))
    return ReportSection(tuple(charts), tuple(tables), level_column=bool(levels))
