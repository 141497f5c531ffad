"""`goat-nav bench --workers/--ray-address/--resume`: what is refused at once, before any episode is generated.

These need no Ray runtime (tests/test_parallel.py runs the real thing)."""

from __future__ import annotations

import sys

import pytest

from goat_nav.cli import main
from goat_suites.common.parallel import INSTALL_HINT


def test_cuda_workers_without_ray_fail_at_once_with_the_install_command(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """CUDA workers share the GPUs through a local Ray runtime (CPU workers are forked: tests/test_process_pool.py
    runs them without Ray)."""
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails here as where Ray is not installed
    assert main(["bench", "--episodes", "50", "--workers", "2", "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert "--workers 2 needs Ray" in err and INSTALL_HINT in err
    assert "generating episodes" not in err  # refused before anything was generated


def test_a_cluster_address_without_ray_names_the_address(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main(["bench", "--episodes", "1", "--ray-address", "auto"]) == 2
    assert "--ray-address auto needs Ray" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--ros", "--workers", "2"], "--ros runs with one worker only"),
    (["--resume"], "--resume needs --out"),
    (["--live", "127.0.0.1:0", "--workers", "2"], "--live serves the run of this process"),
    (["--workers", "0"], "--workers must be >= 1, got 0"),
])
def test_combinations_that_cannot_run_are_refused_at_once(argv: list[str], message: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--episodes", "50", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "generating episodes" not in err
