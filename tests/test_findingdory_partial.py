"""An interrupted FindingDory run leaves a results file that says so: ``complete`` false with its planned and
finished episodes, and ``goat-nav report`` prints PARTIAL RUN and puts it in the page's title (the rule of a GOAT
run's file, tests/test_bench_outputs.py). A finished run's file reads as complete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goat_nav.cli import main
from goat_suites.findingdory import run as findingdory

RUN = ["bench", "--suite", "findingdory", "--episodes", "2", "--seed", "3000", "--num-rooms", "3",
       "--max-actions", "10", "--quiet"]


@pytest.mark.slow
def test_an_interrupted_findingdory_run_reads_as_partial_and_a_finished_one_as_complete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real_run_unit = findingdory.FindingDoryWorker.run_unit
    calls = []

    def interrupted_at_the_second(self: Any, unit: Any, recorder: Any, emit: Any) -> Any:
        calls.append(unit.key)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second episode runs
        return real_run_unit(self, unit, recorder, emit)

    out = tmp_path / "results.json"
    with monkeypatch.context() as patch:
        patch.setattr(findingdory.FindingDoryWorker, "run_unit", interrupted_at_the_second)
        assert main([*RUN, "--out", str(out)]) == 130
    meta = json.loads(out.read_text())["meta"]
    assert (meta["planned_episodes"], meta["finished_episodes"], meta["complete"]) == (2, 1, False)
    capsys.readouterr()
    report = tmp_path / "report.html"
    assert main(["report", str(out), "--out", str(report)]) == 0
    assert "PARTIAL RUN: 1 of 2 planned episodes" in capsys.readouterr().err
    assert "<h1>goat_nav FindingDory report (PARTIAL RUN: 1 of 2 planned episodes" in report.read_text()

    assert main([*RUN, "--out", str(out), "--resume"]) == 0  # the rest of the run: now complete
    meta = json.loads(out.read_text())["meta"]
    assert (meta["planned_episodes"], meta["finished_episodes"], meta["complete"]) == (2, 2, True)
    assert main(["report", str(out), "--out", str(report)]) == 0
    assert "PARTIAL" not in capsys.readouterr().err and "PARTIAL" not in report.read_text()
