"""`goat-nav bench --ros` writes the results JSON that `goat-nav bench` writes for the same episodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from goat_nav.cli import main  # noqa: E402


@pytest.mark.slow
def test_bench_ros_writes_the_in_process_results(tmp_path: Path) -> None:
    # Primitive homes: the graph and in-process SPL of furnished homes differ in the 16th digit (see issue 14's note).
    common = ["bench", "--episodes", "1", "--seed", "5", "--max-actions", "6", "--quiet", "--homes", "primitive"]
    assert main([*common, "--out", str(tmp_path / "local.json")]) == 0
    assert main([*common, "--ros", "--out", str(tmp_path / "graph.json")]) == 0
    local = json.loads((tmp_path / "local.json").read_text())
    graph = json.loads((tmp_path / "graph.json").read_text())
    assert graph["meta"]["runner"] == "ros_graph"
    assert graph["summary"] == local["summary"]
    assert len(graph["subtasks"]) == len(local["subtasks"]) > 0
    for got, ref in zip(graph["subtasks"], local["subtasks"], strict=True):
        assert set(got) == set(ref)
        for key, value in ref.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value, abs=1e-9), key
            else:
                assert got[key] == value, key
