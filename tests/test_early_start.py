"""`goat-nav bench --workers 2` on generated episodes: a worker with no episode left to generate runs the longest
episode generated so far while the other generates its last one (goat_suites.common.parallel.WorkerPool.map's
``early``), and the run gives the serial run's records (issue 31, the 8-episode speed-up)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goat_nav.cli import main
from goat_suites.common.results import read_results_json

pytestmark = pytest.mark.slow

ARGS = ["bench", "--episodes", "2", "--seed", "4100", "--num-rooms", "3", "--max-actions", "12", "--quiet"]


def _values(line: str, label: str) -> list[float]:
    match = re.search(rf"{label} \[([-0-9., ]*)\]|{label} ([-0-9.]+) s", line)
    assert match, f"no {label!r} in {line}"
    return [float(x) for x in (match.group(1) or match.group(2)).split(",")]


def test_an_episode_starts_while_the_last_is_generated_and_the_records_are_the_serial_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*ARGS, "--workers", "2", "--out", str(tmp_path / "parallel.json")]) == 0
    timeline = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("timeline: "))
    assert main([*ARGS, "--out", str(tmp_path / "serial.json")]) == 0
    parallel, serial = read_results_json(tmp_path / "parallel.json"), read_results_json(tmp_path / "serial.json")
    assert [r.to_json() for r in parallel.records] == [r.to_json() for r in serial.records]
    # Two episodes on two workers: the worker whose episode was generated first starts it before the other's is.
    assert min(_values(timeline, "first episodes")) < _values(timeline, "generation ended")[0]
