"""benchmarks/compare_protocols.py: old vs official from two results files, over the episodes both finished."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from goat_suites.common.results import SubtaskRecord, summarise, write_results_json

ROOT = Path(__file__).resolve().parents[1]


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("compare_protocols", ROOT / "benchmarks" / "compare_protocols.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _records(episode_id: str, outcomes: str) -> list[SubtaskRecord]:
    """``outcomes``: one letter per subtask: S success with STOP, B success at the end without STOP, F failure."""
    out = []
    for i, c in enumerate(outcomes):
        ok = c in "SB"
        out.append(SubtaskRecord(
            episode_id=episode_id, scene_id="s", index=i, modality="object", success=ok, spl=1.0 if ok else 0.0,
            path_length_m=2.0, geodesic_m=2.0, num_actions=10, stop_reason="budget" if c == "B" else "stop",
            distance_to_goal_m=0.1 if ok else 3.0, failure=None if ok else "wrong_instance"))
    return out


def _file(path: Path, records: list[SubtaskRecord], suite: str) -> Path:
    write_results_json(path, records, summarise(records), {"suite": suite, "seed": 7, "protocol": suite})
    return path


def test_only_common_episodes_are_compared_with_both_averagings(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # official: episodes a (9/10) and b (1/5); old finished only a: b is left out of both
    official = _file(tmp_path / "o.json", _records("a", "S" * 9 + "F") + _records("b", "SFFFF"), "goat")
    old = _file(tmp_path / "x.json", _records("a", "S" * 8 + "FF"), "goat")
    assert _script().main(["--official", str(official), "--old", str(old)]) == 0
    out = capsys.readouterr().out
    assert "1 episodes both runs finished" in out
    assert "official" in out and "n   10  per-episode 0.900 / 0.900  pooled 0.900 / 0.900" in out
    assert "n   10  per-episode 0.800 / 0.800  pooled 0.800 / 0.800  failures: wrong_instance 2" in out


def test_langmap_old_is_also_scored_with_stop_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    official = _file(tmp_path / "o.json", _records("a", "SSSSB") + _records("b", "SFFFF"), "langmap")
    old = _file(tmp_path / "x.json", _records("a", "SSSBB") + _records("b", "SSFFF"), "langmap")
    assert _script().main(["--official", str(official), "--old", str(old)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].startswith("old ") and "per-episode 0.700" in lines[-2] and "pooled 0.700" in lines[-2]
    stop_required = lines[-1]
    assert stop_required.startswith("old, STOP required") and "pooled 0.500" in stop_required
    assert "budget 2" in stop_required


def test_files_of_different_suites_are_refused(tmp_path: Path) -> None:
    a = _file(tmp_path / "o.json", _records("a", "S"), "goat")
    b = _file(tmp_path / "x.json", _records("a", "S"), "langmap")
    assert _script().main(["--official", str(a), "--old", str(b)]) == 2
