"""docs/results.md's rows come from results files: ``goat-nav bench`` records its command line in the results'
meta, and ``scripts/results_table.py`` renders a row with that command beside the numbers."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from goat_nav.cli import main
from goat_nav.results_table import HEADER, row_of
from goat_nav.results_table import main as table_main
from goat_suites.common.results import read_results_json
from goat_suites.common.suite_metrics import FindingDoryRecord
from goat_suites.findingdory.results import write_results

ROOT = Path(__file__).resolve().parents[1]


def test_a_bench_run_records_its_command_and_the_table_row_shows_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    argv = ["bench", "--homes", "small", "--episodes", "1", "--seed", "5", "--max-actions", "6", "--quiet", "--out",
            str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    assert "homes: small, 1 home\n" in capsys.readouterr().out  # the homes it ran in, printed and in the meta
    results = read_results_json(out)
    assert results.meta["command"] == shlex.join(["goat-nav", *argv])
    assert results.meta["homes"] == "small, 1 home"
    row = row_of(out)
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert len(cells) == 3, row
    assert cells[0].startswith("goat, 1 episodes (") and "procedural seed=5" in cells[0]
    assert "protocol " in cells[0]  # the protocol the run was scored under
    assert "homes small, 1 home" in cells[0]
    assert f"SR {results.summary.success_rate:.3f}, SPL {results.summary.spl:.3f}" in cells[1]
    assert cells[2] == f"`{shlex.join(['goat-nav', *argv])}`"

    capsys.readouterr()
    assert table_main(["--header", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [*HEADER.splitlines(), row]


def test_a_file_without_a_command_is_refused_by_name_unless_one_is_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "old.json"
    records = [FindingDoryRecord(episode_id="e0", task_id="task_0", task_type="single_object", hl_success=True,
                                 hl_dtg_success=True, hl_sc_success=True, ll_success=False, hl_spl=0.5, ll_spl=0.0)]
    write_results(out, records, [{"episode_id": "e0", "task_id": "task_0", "task_type": "single_object",
                                  "hl_success": True, "hl_dtg_success": True, "hl_sc_success": True,
                                  "ll_success": False, "hl_spl": 0.5, "ll_spl": 0.0}],
                  {"suite": "findingdory", "source": "procedural seed=3"})
    assert table_main([str(out)]) == 2
    err = capsys.readouterr().err
    assert str(out) in err and "'command'" in err and "--command" in err

    assert table_main([str(out), "--command", "goat-nav bench --suite findingdory --episodes 1 --seed 3"]) == 0
    row = capsys.readouterr().out.strip()
    assert row.startswith("| findingdory, 1 episodes (1 tasks), procedural seed=3 | HL-SR 1.000, LL-SR 0.000")
    assert row.endswith("| `goat-nav bench --suite findingdory --episodes 1 --seed 3` |")


def test_a_file_that_is_no_results_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"summary": {}}))
    assert table_main([str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err


def test_the_script_runs_from_the_repository_root(tmp_path: Path) -> None:
    bad = tmp_path / "missing.json"
    done = subprocess.run([sys.executable, "scripts/results_table.py", str(bad)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and str(bad) in done.stderr, done.stderr
