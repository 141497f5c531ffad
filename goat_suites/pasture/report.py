"""PASTURE's part of a run's report: SR and SPL per split (uncommon, appearance, spatial, distractors, hidden)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

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
