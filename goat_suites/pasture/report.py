"""PASTURE's part of a run's report: SR and SPL per split (uncommon, appearance, spatial, distractors, hidden)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from goat_suites.common.parts import ReportSection
from goat_suites.common.report_charts import _bar_chart, _stats_table
from goat_suites.common.results import GroupStats, SubtaskRecord, _suite_rows
from goat_suites.common.suite_metrics import (
    PASTURE_CATEGORIES,
    PastureRecord,
    pasture_by_category,
)


def pasture_splits_of(records: Sequence[SubtaskRecord], meta: Mapping[str, Any]) -> dict[str, GroupStats]:
    """SR and SPL per PASTURE split (``meta["pasture"]["episodes"]``, PASTURE order); empty when not known."""
    rows = _suite_rows(meta, "pasture", "episodes")
    items = []
    for r in records:
        row = rows.get((r.scene_id, r.episode_id, 0))
        if row is not None and row.get("category") in PASTURE_CATEGORIES:
            items.append(PastureRecord(f"{r.scene_id}/{r.episode_id}", str(row["category"]), r.success, r.spl))
    return pasture_by_category(items)


def pasture_section(records: Sequence[SubtaskRecord], meta: Mapping[str, Any]) -> ReportSection:
    """PASTURE's chart and table on the report page: SR and SPL per split, when the meta names the splits."""
    splits = pasture_splits_of(records, meta)
    if not splits:
        return ReportSection()
    return ReportSection((_bar_chart("By PASTURE split", splits, "by-pasture-split"),),
                         (_stats_table("By PASTURE split", "split", splits, "by-pasture-split"),))
