"""Rows of the results tables in ``docs/results.md``, rendered from the results files of ``goat-nav bench --out``.

Each row names the run (suite, episodes, source, memory), its numbers and the command that produced it: the
command line ``goat-nav bench`` writes into the file's meta (:data:`COMMAND_META_KEY`). A file without a command
(written before it was recorded) is refused, naming the file, unless ``--command`` supplies one.

    python scripts/results_table.py results.json [more.json ...]   # one Markdown row per file
    python scripts/results_table.py --header results.json           # with the table's header first
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from goat_suites.common.results import InvalidResultError, read_results_json
from goat_suites.common.resume import COMMAND_META_KEY
from goat_suites.findingdory.results import is_results_file, results_from_json

HEADER = "| run | numbers | command |\n| --- | --- | --- |"


def _f(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):.3f}"


def _pair(stats: Mapping[str, Any]) -> str:
    """``SR / SPL`` of a group's stats (``success_rate``/``spl`` or LangMap's ``sr``/``spl``)."""
    sr = stats.get("success_rate", stats.get("sr"))
    return f"{_f(sr)} / {_f(stats.get('spl'))}"


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _goat_numbers(summary: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
    parts = [f"SR {_f(summary['success_rate'])}, SPL {_f(summary['spl'])}"]
    modalities = summary.get("by_modality", {})
    if modalities:
        parts.append("(" + ", ".join(f"{m} {_pair(s)}" for m, s in modalities.items()) + ")")
    suite = meta.get("suite", "goat")
    tables = meta.get(suite, {}) if isinstance(meta.get(suite), dict) else {}
    if suite == "langmap" and "tables" in tables:
        levels = tables["tables"].get("by_level", {})
        parts = [f"SR {_f(summary['success_rate'])}, SPL {_f(summary['spl'])}"]
        if levels:
            parts.append("(" + ", ".join(f"{lv} {_pair(s)}" for lv, s in levels.items()) + ")")
        seq = tables["tables"].get("seq_sr", {})
        if seq:
            last = max(seq, key=int)
            parts.append(f"SeqSR@{last} {_f(seq[last])}")
    if suite == "pasture" and "by_category" in tables:
        parts = [f"SR {_f(summary['success_rate'])}, SPL {_f(summary['spl'])}"]
        parts.append("(" + ", ".join(f"{c} {_pair(s)}" for c, s in tables["by_category"].items()) + ")")
    failures = {k: v for k, v in summary.get("failures", {}).items() if v}
    if failures:
        parts[-1] += ";"
        parts.append("failures: " + ", ".join(f"{k} {v}" for k, v in failures.items()))
    return " ".join(parts)


def _findingdory_numbers(summary: Mapping[str, Any]) -> str:
    overall = summary.get("overall", {})
    names = (("hl_sr", "HL-SR"), ("ll_sr", "LL-SR"), ("hl_spl", "HL-SPL"), ("ll_spl", "LL-SPL"),
             ("dtg_sr", "DTG-SR"), ("sc_sr", "SC-SR"))
    return ", ".join(f"{label} {_f(overall.get(key))}" for key, label in names)


def _run_name(meta: Mapping[str, Any], count: str) -> str:
    suite = meta.get("suite", "goat")
    # use_memory sits in the agent's settings (older files: in the run's)
    memory = meta.get("agent_config", {}).get("use_memory", meta.get("run_config", {}).get("use_memory"))
    words = [str(suite), count, str(meta.get("source", "?"))]
    if meta.get("homes"):  # files written before the large homes became the default say nothing here
        words.append(f"homes {meta['homes']}")
    if memory is False:
        words.append("no memory")
    if meta.get("protocol"):  # files written before protocols were named say nothing here
        words.append(f"protocol {meta['protocol']}")
    if meta.get("complete") is False:
        words.append("PARTIAL")
    return ", ".join(words)


def row_of(path: Path, command: Optional[str] = None) -> str:
    """The Markdown table row of the results file ``path``; InvalidResultError names a file it cannot use."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidResultError(f"{path}: cannot read results file: {exc}") from None
    if is_results_file(data):
        fd = results_from_json(data, str(path))
        meta: Mapping[str, Any] = fd.meta
        summary = data["summary"]
        episodes = len({t["episode_id"] for t in fd.tasks})
        name = _run_name(meta, f"{episodes} episodes ({summary['num_tasks']} tasks)")
        numbers = _findingdory_numbers(summary)
    else:
        results = read_results_json(path)
        meta = results.meta
        summary_json = results.summary.to_json()
        name = _run_name(meta, f"{results.summary.num_episodes} episodes ({results.summary.num_subtasks} "
                               "subtasks)")
        numbers = _goat_numbers(summary_json, meta)
    command = command or meta.get(COMMAND_META_KEY)
    if not command:
        raise InvalidResultError(f"{path}: its meta has no {COMMAND_META_KEY!r} (written before goat-nav recorded "
                                 "its command line); pass the command with --command")
    return f"| {_cell(name)} | {_cell(numbers)} | `{_cell(str(command))}` |"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Markdown rows of docs/results.md from goat-nav results files.")
    parser.add_argument("files", nargs="+", type=Path, help="results files written by goat-nav bench --out")
    parser.add_argument("--header", action="store_true", help="print the table's header first")
    parser.add_argument("--command", help="the command of a file that does not record one (one file only)")
    args = parser.parse_args(argv)
    if args.command is not None and len(args.files) != 1:
        parser.error(f"--command names the command of one file, got {len(args.files)} files")
    try:
        rows = [row_of(path, args.command) for path in args.files]
    except InvalidResultError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.header:
        print(HEADER)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
