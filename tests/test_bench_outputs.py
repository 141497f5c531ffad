"""`goat-nav bench` checks and claims its output files before the first episode (issue 16), through the real CLI.

Bad ``--out``/``--report`` paths fail with rc 2 and one line before any episode runs; an existing results file is
not overwritten without ``--force``; a second run on the ``--out`` of a running one fails at once; an interrupted
run's file says it is partial, and so does its report.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from goat_nav.cli import main
from goat_suites.common.outputs import lock_path
from goat_suites.common.results import read_results_json

TINY = ["bench", "--episodes", "1", "--seed", "5", "--max-actions", "6", "--quiet", "--homes", "small"]


def _fails_at_once(argv: list[str], capsys: pytest.CaptureFixture[str], *expected: str) -> None:
    started = time.monotonic()
    assert main(argv) == 2
    assert time.monotonic() - started < 5.0, "the check came after work (a tiny episode takes ~15 s)"
    out, err = capsys.readouterr()
    assert out == ""  # no summary: no episode ran
    assert len(err.strip().splitlines()) == 1, err
    for text in expected:
        assert text in err, err


def test_an_out_under_a_file_or_naming_a_folder_fails_before_any_episode(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    _fails_at_once([*TINY, "--out", str(blocker / "results.json")], capsys, "is a file, not a folder")
    _fails_at_once([*TINY, "--out", str(tmp_path)], capsys, "is a folder; name a file")
    _fails_at_once([*TINY, "--report", str(blocker / "sub" / "report.html")], capsys, "--report",
                   "is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]  # nothing stray left behind


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders: nothing to refuse")
def test_a_read_only_folder_fails_before_any_episode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        _fails_at_once([*TINY, "--out", str(folder / "r.json")], capsys, "not writable")
        _fails_at_once([*TINY, "--report", str(folder / "r.html")], capsys, "--report", "not writable")
    finally:
        folder.chmod(0o755)


def test_an_existing_results_file_is_kept_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    out.write_text('{"an": "earlier run"}')
    _fails_at_once([*TINY, "--out", str(out)], capsys, "already there", "--force")
    assert out.read_text() == '{"an": "earlier run"}'
    assert not lock_path(out).exists()
    assert main([*TINY, "--out", str(out), "--force"]) == 0
    meta = read_results_json(out).meta
    assert (meta["planned_episodes"], meta["complete"]) == (1, True)
    assert meta["planned_subtasks"] == len(read_results_json(out).records) > 0
    assert not lock_path(out).exists()


def test_a_second_run_on_the_same_out_fails_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    first = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", *TINY[:2], "3", *TINY[3:], "--out", str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60.0
        while not lock_path(out).exists() or not lock_path(out).read_text().strip():
            assert first.poll() is None, first.communicate()[1]
            assert time.monotonic() < deadline, "the first run never claimed its --out"
            time.sleep(0.1)
        _fails_at_once([*TINY, "--out", str(out), "--force"], capsys, "another run is writing it",
                       f"pid {first.pid}")
    finally:
        first.kill()
        first.wait()
    assert main([*TINY, "--out", str(out), "--force"]) == 0  # the kernel dropped the killed run's lock


@pytest.mark.slow
def test_an_interrupted_run_reads_as_partial_and_its_report_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    # Three episodes long enough (200 actions a subtask) that the 2nd is still running when Ctrl-C arrives.
    argv = ["bench", "--homes", "small", "--episodes", "3", "--seed", "5", "--max-actions", "200", "--quiet",
            "--out", str(out)]
    run = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", *argv],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120.0
        while not out.exists():  # the first episode's results
            assert run.poll() is None, run.communicate()[1]
            assert time.monotonic() < deadline, "the run wrote no results"
            time.sleep(0.1)
        run.send_signal(signal.SIGINT)  # Ctrl-C
        assert run.wait(timeout=60) == 130
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    partial = read_results_json(out)
    meta = partial.meta
    assert (meta["planned_episodes"], meta["complete"]) == (3, False)
    assert 0 < len(partial.records) < meta["planned_subtasks"]
    report = tmp_path / "report.html"
    assert main(["report", str(out), "--out", str(report)]) == 0
    err = capsys.readouterr().err
    assert (f"PARTIAL RUN: {len(partial.records)} of {meta['planned_subtasks']} planned subtasks (3 episodes "
            "planned)") in err, err
    assert "<h1>goat_nav benchmark report (PARTIAL RUN:" in report.read_text()
