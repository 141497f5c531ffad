"""`goat-nav launch bench --isolated` (one process per node) scores an episode without stalling.

Issue 16: camera images are larger than Fast DDS's default shared-memory segment, so they went as UDP fragments that
overflowed the socket every topic of a process shares; the dropped messages waited for a 3 s heartbeat, up to 6 s
per action. config/fastdds.xml gives the node processes a segment that holds them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from goat_ros.graph import FASTDDS_PROFILE, dds_environment, repo_config_dir  # noqa: E402

CLI = [sys.executable, "-m", "goat_nav.cli"]


def test_node_processes_get_the_fastdds_profile_unless_the_user_names_one() -> None:
    folder = repo_config_dir()
    profile = folder / FASTDDS_PROFILE
    segment = ET.parse(profile).getroot().find(".//{*}transport_descriptor/{*}segment_size")
    assert segment is not None and int(segment.text or 0) >= 8 * 1024 * 1024  # a whole observation set fits
    assert dds_environment(folder, {}) == {"FASTRTPS_DEFAULT_PROFILES_FILE": str(profile)}
    assert dds_environment(folder, {"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}) != {}
    assert dds_environment(folder, {"FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"}) == {}
    assert dds_environment(folder, {"FASTRTPS_DEFAULT_PROFILES_FILE": "/mine.xml"}) == {}
    assert dds_environment(folder, {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) == {}


@pytest.mark.slow
def test_the_isolated_bench_graph_scores_every_subtask(tmp_path: Path) -> None:
    episodes, results = tmp_path / "ep.json", tmp_path / "results.json"
    subprocess.run([*CLI, "generate", "--homes", "small", "--episodes", "1", "--seed", "7", "--out", str(episodes)],
                   check=True, capture_output=True)
    planned = len(json.loads(episodes.read_text())["episodes"][0]["tasks"])
    env = {k: v for k, v in os.environ.items() if k not in ("FASTRTPS_DEFAULT_PROFILES_FILE",
                                                             "FASTDDS_DEFAULT_PROFILES_FILE")}
    launch = subprocess.Popen([*CLI, "launch", "bench", "--isolated", "--episodes-file", str(episodes),
                               "--param", f"evaluator.results_file={results}",
                               "--param", "episode_player.max_actions_per_subtask=20"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                              start_new_session=True)
    # Start-up takes ~15 s here; then ~140 actions at ~0.15 s each. Before the fix a third of the observation sets
    # waited 3-6 s, and this took over 3 minutes.
    deadline = time.monotonic() + 100.0
    scored = 0
    try:
        while scored < planned:
            assert launch.poll() is None, f"the launch ended early:\n{launch.communicate()[0][-3000:]}"
            assert time.monotonic() < deadline, f"only {scored} of {planned} subtasks scored in 100 s (stalled?)"
            time.sleep(1.0)
            if results.exists():
                scored = len(json.loads(results.read_text())["subtasks"])
    finally:
        os.killpg(launch.pid, signal.SIGINT)  # Ctrl-C
        try:
            launch.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.communicate()
    stops = [s["stop_reason"] for s in json.loads(results.read_text())["subtasks"]]
    assert "error" not in stops, stops
