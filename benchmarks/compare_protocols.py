"""Old protocol vs official, side by side, from two results files of ``goat-nav bench --out`` (issue 28).

    python benchmarks/compare_protocols.py --official official.json --old old.json [--markdown]

Both files must come from the same suite and seed. Only the episodes both runs finished are compared (a run cut
short by a deadline leaves a PARTIAL file; the count says how many were compared). Printed per run: SR and SPL
as per-episode means (GOAT-Bench's averaging, the official one) and pooled over subtasks (how the old protocol
averaged), the stop reasons and the failure classes (gave up, wrong object, near miss, budget). For LangMap the
old run's success is also given with STOP required (the old rule; the runner scores LangMap without STOP since
``langmap v1``, so the flags alone cannot bring it back).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional, Sequence

from goat_suites.common.results import SubtaskRecord, read_results_json, summarise

FAILURES = ("gave_up", "wrong_instance", "near_miss", "budget", "error")


def _by_episode(records: Sequence[SubtaskRecord]) -> dict[str, list[SubtaskRecord]]:
    """Records by episode, in file order. ``goat-nav bench --out`` rewrites its file after each finished episode,
    so every episode in a file (partial or not) has all its subtasks."""
    by_episode: dict[str, list[SubtaskRecord]] = {}
    for record in records:
        by_episode.setdefault(record.episode_id, []).append(record)
    return by_episode


def _with_stop_required(records: Sequence[SubtaskRecord]) -> list[SubtaskRecord]:
    """The records as a STOP-requiring rule scores them: a success without STOP fails (as a budget end)."""
    out = []
    for r in records:
        if r.success and r.stop_reason != "stop":
            r = replace(r, success=False, spl=0.0, failure="budget")
        out.append(r)
    return out


def _row(name: str, records: Sequence[SubtaskRecord]) -> dict[str, Any]:
    per_episode, pooled = summarise(records, "per_episode"), summarise(records, "pooled")
    return {"run": name, "subtasks": len(records), "per_episode": (per_episode.success_rate, per_episode.spl),
            "pooled": (pooled.success_rate, pooled.spl),
            "stops": {k: v for k, v in pooled.stop_reasons.items() if v},
            "failures": {k: v for k, v in pooled.failures.items() if v and k in FAILURES}}


def _text(row: dict[str, Any]) -> str:
    pe, po = row["per_episode"], row["pooled"]
    failures = ", ".join(f"{k} {v}" for k, v in row["failures"].items()) or "none"
    return (f"{row['run']:<34} n {row['subtasks']:>4}  per-episode {pe[0]:.3f} / {pe[1]:.3f}  pooled "
            f"{po[0]:.3f} / {po[1]:.3f}  failures: {failures}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--official", type=Path, required=True, help="results file of the official run")
    parser.add_argument("--old", type=Path, required=True, help="results file of the old-protocol run")
    args = parser.parse_args(argv)
    official, old = read_results_json(args.official), read_results_json(args.old)
    suite = official.meta.get("suite", "goat")
    if (suite, official.meta.get("seed")) != (old.meta.get("suite", "goat"), old.meta.get("seed")):
        print(f"error: {args.official} and {args.old} are not the same suite and seed", file=sys.stderr)
        return 2
    a, b = _by_episode(official.records), _by_episode(old.records)
    common = [e for e in a if e in b]
    if not common:
        print("error: the two files share no finished episode", file=sys.stderr)
        return 2
    off_records = [r for e in common for r in a[e]]
    old_records = [r for e in common for r in b[e]]
    print(f"{suite}, seed {official.meta.get('seed')}: {len(common)} episodes both runs finished")
    print(f"official: {official.meta.get('protocol')}\nold:      {old.meta.get('protocol')}")
    rows = [_row("official", off_records), _row("old", old_records)]
    if suite == "langmap":
        rows.append(_row("old, STOP required", _with_stop_required(old_records)))
    for row in rows:
        print(_text(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
