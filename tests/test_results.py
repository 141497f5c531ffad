"""Subtask records, their summary and the results JSON file (round trip, validation, atomic appends)."""

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from goat_core.types import DiscreteAction, GoalModality
from goat_suites.common import results
from goat_suites.common.results import (
    InvalidResultError,
    SubtaskRecord,
    append_results_json,
    read_results_json,
    summarise,
    write_results_json,
)


def _record(**overrides: Any) -> SubtaskRecord:
    fields: dict[str, Any] = dict(
        episode_id="0", index=0, modality=GoalModality.CATEGORY, success=True, spl=0.5, path_length_m=8.0,
        geodesic_m=4.0, num_actions=40, stop_reason="stop", distance_to_goal_m=0.1, scene_id="TEEsavR23oF",
    )
    fields.update(overrides)
    return SubtaskRecord(**fields)


# Two episodes; hand-computed, pooled over subtasks: SR = 3/5, SPL = (0.5 + 1.0 + 0.25) / 5 = 0.35; per episode
# (GOAT-Bench): SR = (2/3 + 1/2) / 2 = 7/12, SPL = ((0.5 + 1.0) / 3 + 0.25 / 2) / 2 = 0.3125.
RECORDS = (
    _record(index=0, modality="object", success=True, spl=0.5),
    _record(index=1, modality="description", success=False, spl=0.0, stop_reason="budget", num_actions=500),
    _record(index=2, modality="image", success=True, spl=1.0,
            actions=(DiscreteAction.TURN_LEFT, DiscreteAction.MOVE_FORWARD, DiscreteAction.STOP)),
    _record(episode_id="1", index=0, modality="object", success=True, spl=0.25),
    _record(episode_id="1", index=1, modality="image", success=False, spl=0.0, stop_reason="error",
            error="UnreachableGoalError: bed_7", geodesic_m=None, distance_to_goal_m=None),
)


def test_summary_hand_computed() -> None:
    summary = summarise(RECORDS, averaging="pooled")
    assert (summary.success_rate, summary.spl) == (pytest.approx(0.6), pytest.approx(0.35))
    official = summarise(RECORDS)
    assert (official.success_rate, official.spl) == (pytest.approx(7 / 12), pytest.approx(0.3125))
    assert (summary.num_subtasks, summary.num_episodes) == (5, 2)
    assert list(summary.by_modality) == ["object", "description", "image"]
    assert summary.by_modality["object"].to_json() == {"success_rate": 1.0, "spl": 0.375, "count": 2}
    assert summary.by_modality["image"].to_json() == {"success_rate": 0.5, "spl": 0.5, "count": 2}
    assert summary.by_subtask_index[0].to_json() == {"success_rate": 1.0, "spl": 0.375, "count": 2}
    assert summary.by_subtask_index[1].to_json() == {"success_rate": 0.0, "spl": 0.0, "count": 2}
    assert summary.by_subtask_index[2].count == 1
    assert summary.stop_reasons == {"stop": 3, "budget": 1, "error": 1}


def test_empty_summary() -> None:
    summary = summarise([])
    assert (summary.success_rate, summary.spl, summary.num_subtasks) == (0.0, 0.0, 0)
    assert dict(summary.by_modality) == {} and dict(summary.by_subtask_index) == {}


def test_write_read_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "run" / "results.json"
    meta = {"agent": "goat", "seed": 7, "success_distance_m": 0.25}
    write_results_json(path, RECORDS, summarise(RECORDS), meta)
    stored = json.loads(path.read_text())
    assert list(stored) == ["summary", "subtasks", "meta"]
    assert set(stored["summary"]) >= {"success_rate", "spl", "by_modality", "by_subtask_index",
                                      "num_subtasks"}
    assert list(stored["summary"]["by_subtask_index"]) == ["0", "1", "2"]
    assert stored["subtasks"][2]["actions"] == ["TURN_LEFT", "MOVE_FORWARD", "STOP"]
    assert stored["subtasks"][4]["geodesic_m"] is None
    assert len(path.read_text().splitlines()) > len(RECORDS)  # readable: one line per subtask, not one blob
    back = read_results_json(path)
    assert back.records == RECORDS
    assert back.summary == summarise(RECORDS)
    assert back.meta == meta


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"spl": 1.5}, "spl must be a number in"),
        ({"success": False, "spl": 0.3}, "spl must be 0 for a failed subtask"),
        ({"stop_reason": "timeout"}, "stop_reason must be one of"),
        ({"index": -1}, "index must be an integer"),
        ({"num_actions": 2.5}, "num_actions must be an integer"),
        ({"path_length_m": -1.0}, "path_length_m must be a finite length"),
        ({"geodesic_m": float("inf")}, "geodesic_m must be a finite length"),
        ({"modality": "smell"}, "unknown goal modality 'smell'"),
        ({"episode_id": ""}, "episode_id must be a non-empty string"),
        ({"success": 1}, "success must be a bool"),
        ({"failure": "gave_up"}, "failure must be None for a successful subtask"),
        ({"success": False, "spl": 0.0, "failure": "lost"}, "failure must be one of"),
        ({"success": False, "spl": 0.0, "failure": "budget"}, "failure 'budget' does not fit stop_reason 'stop'"),
        ({"success": False, "spl": 0.0, "stop_reason": "budget", "failure": "near_miss"}, "does not fit"),
    ],
)
def test_record_validation_names_the_field(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidResultError, match=message):
        _record(**overrides)


def _write_raw(path: Path, payload: Any) -> Path:
    path.write_text(json.dumps(payload))
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("meta"), "expected an object with summary, subtasks and meta"),
        (lambda d: d["subtasks"][1].update(stop_reason="crash"), r"subtasks\[1\]: stop_reason must be"),
        (lambda d: d["subtasks"][0].pop("spl"), r"subtasks\[0\]: missing fields \['spl'\]"),
        (lambda d: d["subtasks"][2].update(actions=["JUMP"]), r"subtasks\[2\]: actions must name"),
        (lambda d: d["summary"].update(success_rate=0.9), "summary does not match the subtask records"),
        (lambda d: d["summary"]["by_subtask_index"].pop("2"), "summary does not match"),
    ],
)
def test_read_rejects_inconsistent_files(tmp_path: Path, edit: Any, message: str) -> None:
    path = tmp_path / "results.json"
    write_results_json(path, RECORDS, summarise(RECORDS), {})
    payload = json.loads(path.read_text())
    edit(payload)
    with pytest.raises(InvalidResultError, match=message):
        read_results_json(_write_raw(path, payload))


def test_read_rejects_truncated_json(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    write_results_json(path, RECORDS, summarise(RECORDS), {})
    path.write_text(path.read_text()[:-30])
    with pytest.raises(InvalidResultError, match="not valid JSON"):
        read_results_json(path)


def test_append_per_episode(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    first = append_results_json(path, RECORDS[:3], meta={"agent": "goat"})
    assert first.summary.num_subtasks == 3
    second = append_results_json(path, RECORDS[3:])
    assert second.records == RECORDS
    assert second.meta == {"agent": "goat"}  # kept when not given
    assert read_results_json(path).summary == summarise(RECORDS)
    with pytest.raises(InvalidResultError, match="subtask 0 of episode '1' .* already recorded"):
        append_results_json(path, [RECORDS[3]])
    # The same episode id in another scene is a different subtask (GOAT-Bench ids repeat across scenes).
    assert append_results_json(path, [replace(RECORDS[3], scene_id="HaxA7YrQdEC")]).summary.num_episodes == 3


def test_failed_write_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.json"
    append_results_json(path, RECORDS[:3])
    before = path.read_bytes()

    def crash(src: str, dst: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(results.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        append_results_json(path, RECORDS[3:])
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["results.json"]  # no temporary file left behind


def test_meta_must_be_plain_json(tmp_path: Path) -> None:
    with pytest.raises(InvalidResultError, match="plain JSON"):
        write_results_json(tmp_path / "r.json", RECORDS, summarise(RECORDS), {"started": object()})
    assert not (tmp_path / "r.json").exists()


def test_results_file_gets_ordinary_permissions(tmp_path: Path) -> None:
    import stat

    path = tmp_path / "perm.json"
    results.atomic_write_bytes(path, b"{}")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


# ------------------------------------------------------------------------------------------ failure taxonomy


def test_failure_classes_in_records_summary_and_file(tmp_path: Path) -> None:
    """Budget and error failures are filled in from the stop reason; a failed STOP carries its class."""
    records = RECORDS + (
        _record(episode_id="2", index=0, success=False, spl=0.0, failure="wrong_instance",
                stop_detail="at chair #4 (confident match, score 0.64)"),
        _record(episode_id="2", index=1, success=False, spl=0.0, failure="gave_up",
                stop_detail="nothing left to explore; recoveries tried: all"),
        _record(episode_id="2", index=2, success=False, spl=0.0, failure="near_miss"),
    )
    assert records[1].failure == "budget" and records[4].failure == "error" and records[0].failure is None
    summary = summarise(records)
    assert dict(summary.failures) == {"gave_up": 1, "wrong_instance": 1, "near_miss": 1, "budget": 1, "error": 1}
    path = tmp_path / "results.json"
    write_results_json(path, records, summary, {})
    stored = json.loads(path.read_text())
    assert stored["summary"]["failures"]["gave_up"] == 1
    assert "failure" not in stored["subtasks"][0]  # a success has none
    assert stored["subtasks"][5]["failure"] == "wrong_instance"
    assert stored["subtasks"][5]["stop_detail"].startswith("at chair #4")
    assert read_results_json(path).records == records


def test_a_file_from_before_the_taxonomy_still_reads(tmp_path: Path) -> None:
    """No "failure" fields and no "failures" in the summary: read as before, failed STOPs unclassified."""
    records = RECORDS + (_record(episode_id="2", index=0, success=False, spl=0.0),)
    path = tmp_path / "old.json"
    write_results_json(path, records, summarise(records), {})
    payload = json.loads(path.read_text())
    for raw in payload["subtasks"]:
        raw.pop("failure", None)
    payload["summary"].pop("failures")
    payload["summary"].pop("unclassified_failures")
    back = read_results_json(_write_raw(path, payload))
    assert back.records[5].failure is None and back.summary.unclassified_failures == 1
    assert back.records[1].failure == "budget"
