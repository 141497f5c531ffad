"""Linters and the type checker as tests: ruff on the tree, strict-ish mypy on goat_core."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
                    reason="ruff is not installed (pip install -e '.[dev]')")
def test_ruff_clean() -> None:
    ruff = str(Path(sys.executable).parent / "ruff") if (Path(sys.executable).parent / "ruff").exists() else "ruff"
    result = _run([ruff, "check", "ros_ws/src/goat_core", "ros_ws/src/goat_ros", "ros_ws/src/goat_stretch",
                   "sim_bridge", "goat_suites", "goat_nav", "tests", "benchmarks", "launch"])
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_core_clean() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[dev]')")
    result = _run([sys.executable, "-m", "mypy", "ros_ws/src/goat_core/goat_core", "goat_suites", "goat_nav",
                   "sim_bridge/sim_bridge", "ros_ws/src/goat_ros/goat_ros", "ros_ws/src/goat_stretch/goat_stretch"])
    assert result.returncode == 0, result.stdout + result.stderr
