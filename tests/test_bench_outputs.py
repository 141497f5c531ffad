"""`goat-nav bench` checks its output files before the first episode (issue 16), through the real CLI.

Bad ``--out``/``--report`` paths fail with rc 2 and one line before any episode runs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from goat_nav.cli import main

TINY = ["bench", "--episodes", "1", "--seed", "5", "--max-actions", "6", "--quiet"]


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
