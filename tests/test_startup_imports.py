"""What `goat-nav bench` imports before its first episode (issue 31: the command's start-up).

A parallel run's workers start after the command has imported its modules, so every module a plain GOAT bench run
imports and never uses is paid on the run's longest path (and by the serial run alike). The modules of other
suites, of recording, of the realism profiles and of the CoW baseline load where they are used; those the agent
and the simulator use (numpy, scipy, OpenCV, MuJoCo) are imported as before: moving them would only move their cost.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# A GOAT bench run on the small homes, as benchmarks/bench_parallel.py starts it: parsed and checked as the command
# does before it opens its pool.
_START = """
import json, sys
from goat_nav.cli import _check_bench_args, build_parser
import goat_nav.bench_cmd, goat_nav.bench_outputs
args = build_parser().parse_args({argv!r})
_check_bench_args(args)
print(json.dumps(sorted(sys.modules)))
"""

GOAT_BENCH = ["bench", "--episodes", "8", "--seed", "5000", "--quiet", "--homes", "small", "--workers", "2"]

# Imported at start-up before, used by none of a plain GOAT run's parts (module -> who needs it).
NOT_AT_START = {
    "rosbags.rosbag2": "--record (the bag writer) and merging the workers' bags",
    "rosbags.typesys": "--record (the bag's message types)",
    "goat_suites.findingdory.memory": "--suite findingdory (its memory selector)",
    "goat_suites.findingdory.experience_memory": "--suite findingdory (its experience memory)",
    "goat_core.localisation.localiser": "--realism with drifting odometry or noisy depth",
    "goat_core.baselines.cow_agent": "--agent cow",
    "yaml": "--agent-config (the agent's settings file)",
}


def _modules_at_start(argv: list[str]) -> set[str]:
    result = subprocess.run([sys.executable, "-c", _START.format(argv=argv)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return set(json.loads(result.stdout.splitlines()[-1]))


@pytest.fixture(scope="module")
def goat_start() -> set[str]:
    return _modules_at_start(GOAT_BENCH)


@pytest.mark.parametrize("module", sorted(NOT_AT_START))
def test_a_goat_bench_start_does_not_import_what_it_does_not_use(goat_start: set[str], module: str) -> None:
    assert module not in goat_start, f"{module} is imported at start-up; only {NOT_AT_START[module]} needs it"


def test_what_the_run_uses_is_still_imported_before_the_workers_fork(goat_start: set[str]) -> None:
    # The workers are forked with what the command imported: the simulator and the agent are there once for all.
    assert {"mujoco", "cv2", "scipy.ndimage", "goat_suites.common.runner", "goat_core.agent"} <= goat_start
