"""`goat-nav compare`: two small results files written to tmp_path, paired per goal and per modality."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import pytest

from goat_nav.cli import main
from goat_nav.compare import compare, format_tables
from goat_suites.common.results import SubtaskRecord, read_results_json, summarise, write_results_json


def _record(episode: str, index: int, modality: str, success: bool, spl: float, actions: int) -> SubtaskRecord:
    return SubtaskRecord(episode_id=episode, index=index, modality=modality, success=success, spl=spl,
                         path_length_m=1.0, geodesic_m=1.0, num_actions=actions,
                         stop_reason="stop" if success else "budget", distance_to_goal_m=0.1 if success else 2.0,
                         scene_id="home_a")


def _write(path: Path, records: list[SubtaskRecord]) -> Path:
    write_results_json(path, records, summarise(records), {"run": path.stem})
    return path


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    sim = _write(tmp_path / "sim.json", [
        _record("ep1", 0, "object", True, 0.8, 20),
        _record("ep1", 1, "description", True, 0.5, 40),
        _record("ep1", 2, "image", False, 0.0, 500),
        _record("ep2", 0, "object", True, 0.9, 12),
    ])
    real = _write(tmp_path / "real.json", [
        _record("ep1", 0, "object", True, 0.6, 25),
        _record("ep1", 1, "description", False, 0.0, 120),
        _record("ep1", 2, "image", False, 0.0, 500),
    ])
    return sim, real


def test_compare_pairs_goals_and_summarises_modalities(runs: tuple[Path, Path]) -> None:
    c = compare(read_results_json(runs[0]), read_results_json(runs[1]))
    assert [p.agree for p in c.pairs] == [True, False, True, None]  # ep2 ran only in simulation
    rows = {r.modality: r for r in c.by_modality}
    assert rows["object"].count == 1 and rows["object"].sim_spl == pytest.approx(0.8)
    assert rows["object"].real_spl == pytest.approx(0.6)
    assert rows["description"].sim_sr == 1.0 and rows["description"].real_sr == 0.0
    assert rows["all"].count == 3 and rows["all"].agreement == pytest.approx(2 / 3)
    table = format_tables(c)
    assert "home_a/ep1" in table and "NO" in table and "1 goal(s) ran in only one" in table


def test_compare_shows_the_failure_classes_side_by_side(tmp_path: Path) -> None:
    sim = _write(tmp_path / "sim.json", [_record("ep1", 0, "object", True, 0.8, 20),
                                         _record("ep1", 1, "image", False, 0.0, 500)])
    wrong = dataclasses.replace(_record("ep1", 0, "object", False, 0.0, 30), stop_reason="stop",
                                failure="wrong_instance")
    gave_up = dataclasses.replace(_record("ep1", 1, "image", False, 0.0, 40), stop_reason="stop", failure="gave_up")
    real = _write(tmp_path / "real.json", [wrong, gave_up])
    c = compare(read_results_json(sim), read_results_json(real))
    classes = {name: (n_sim, n_real) for name, n_sim, n_real in c.failures}
    assert classes["budget"] == (1, 0) and classes["wrong_instance"] == (0, 1) and classes["gave_up"] == (0, 1)
    table = format_tables(c)
    assert "wrong_instance" in table and "gave_up" in table.splitlines()[2]  # per goal, then the class table


def test_compare_command_prints_tables_and_writes_plots(runs: tuple[Path, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "plots"
    assert main(["compare", str(runs[0]), str(runs[1]), "--out-dir", str(out_dir)]) == 0
    text = capsys.readouterr().out
    assert "modality" in text and "description" in text and "agree" in text
    for metric in ("sr", "spl"):
        svg = (out_dir / f"{metric}_by_modality.svg").read_text()
        assert svg.startswith("<svg") and svg.count("<rect") == 1 + 2 * 4  # background, sim + real x 4 rows
        png = cv2.imread(str(out_dir / f"{metric}_by_modality.png"))
        assert png is not None and png.shape == (320, 640, 3)


def test_compare_refuses_runs_without_common_goals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path / "a.json", [_record("ep1", 0, "object", True, 0.8, 20)])
    b = _write(tmp_path / "b.json", [_record("ep9", 0, "object", True, 0.8, 20)])
    assert main(["compare", str(a), str(b)]) == 2
    assert "no goal in common" in capsys.readouterr().err
