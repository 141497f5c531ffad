"""``goat-nav report results.json``: the HTML report of a finished (or interrupted) run, from its files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

from goat_suites.common.outputs import partial_run_note
from goat_suites.common.parts import EPISODE_SCHEMA
from goat_suites.common.report import (
    write_html_report,
)
from goat_suites.common.results import (
    PathLike,
    read_results_json,
    summarise,
)
from goat_suites.common.trajectories import load_run_trajectories
from goat_suites.findingdory.report import write_findingdory_report
from goat_suites.findingdory.results import FRAMES_META_KEY, read_frames, read_results
from goat_suites.registry import SUITE_PARTS


def _suite_of(results_path: PathLike) -> Optional[str]:
    """The top-level ``suite`` of a results file that names one (FindingDory's own layout); None otherwise, and
    for a file that cannot be read (the reader then names the problem)."""
    try:
        data = json.loads(Path(results_path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    suite = data.get("suite") if isinstance(data, dict) else None
    return suite if isinstance(suite, str) else None


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
    # the suite's own charts and tables (LangMap's levels, PASTURE's splits), by the suite its meta names
    parts = SUITE_PARTS.get(str(results.meta.get("suite", "goat")), EPISODE_SCHEMA)
    write_html_report(out, results.records, summarise(results.records), results.meta, trajectories, parts=parts)
    print(f"report: {out}")
    return 0
