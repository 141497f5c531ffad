"""`goat-nav bench` with an open-vocabulary perception backend from a local model folder (tiny random OWL-ViT)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goat_nav.cli import main


def test_a_missing_model_folder_fails_before_any_episode_is_generated(capsys, tmp_path: Path) -> None:
    code = main(["bench", "--episodes", "50", "--perception", "owlvit", "--model-dir", str(tmp_path / "nope")])
    err = capsys.readouterr().err
    assert code == 2
    assert "nope" in err and "save_pretrained" in err
    assert "generating episodes" not in err  # failed at start-up, nothing generated


def test_open_vocabulary_backends_are_refused_where_they_are_not_wired(capsys) -> None:
    assert main(["bench", "--suite", "langmap", "--perception", "owlvit", "--model-dir", "x"]) == 2
    assert "in-process GOAT suite only" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_runs_end_to_end_on_a_tiny_owlvit_folder(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch", reason="needs the openvocab extra (pip install -e '.[openvocab]')")
    pytest.importorskip("transformers", reason="needs the openvocab extra (pip install -e '.[openvocab]')")
    from goat_core.perception.tiny_models import save_tiny_model

    model = save_tiny_model(tmp_path / "owlvit", "owlvit", seed=0)
    out = tmp_path / "results.json"
    code = main(["bench", "--episodes", "1", "--seed", "11", "--num-rooms", "3", "--max-actions", "6",
                 "--perception", "owlvit", "--model-dir", str(model), "--quiet", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    data = json.loads(out.read_text())
    assert data["meta"]["perception"] == "owlvit"
    assert data["meta"]["stack"].startswith("perception=owlvit matcher=structured")
    assert data["subtasks"] and all(r["num_actions"] <= 6 for r in data["subtasks"])


def test_perception_errors_are_refused_where_they_are_not_wired(capsys) -> None:
    assert main(["bench", "--suite", "langmap", "--perception-errors", "mild"]) == 2
    assert "detector over ground truth" in capsys.readouterr().err
    assert main(["bench", "--perception", "owlvit", "--model-dir", "x", "--perception-errors", "mild"]) == 2


@pytest.mark.slow
def test_bench_with_perception_errors_records_the_preset_and_turns_evidence_on(tmp_path: Path, capsys) -> None:
    out = tmp_path / "results.json"
    code = main(["bench", "--episodes", "1", "--seed", "11", "--num-rooms", "3", "--max-actions", "8",
                 "--perception-errors", "detic-like", "--quiet", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    meta = json.loads(out.read_text())["meta"]
    assert meta["perception_errors"]["preset"] == "detic-like" and meta["perception_errors"]["seed"] == 11
    assert meta["perception_errors"]["phantoms_per_frame"] > 0
    assert meta["stack"].startswith("perception=ground_truth+errors:detic-like")
    assert meta["agent_config"]["memory"]["evidence"]["enabled"] is True


def test_default_bench_has_no_perception_errors_and_no_evidence() -> None:
    from goat_core.agent import AgentConfig
    from goat_nav.bench_cmd import stack_config
    from goat_nav.cli import build_parser
    from goat_suites.common.suite import agent_config_from_args

    args = build_parser().parse_args(["bench"])
    assert stack_config(args).perception.errors == "off"
    assert agent_config_from_args(args).memory == AgentConfig().memory
    on = build_parser().parse_args(["bench", "--perception-errors", "harsh", "--evidence", "off"])
    assert not agent_config_from_args(on).memory.evidence.enabled
    assert stack_config(on).perception.errors == "harsh" and stack_config(on).perception.errors_seed == 1000
