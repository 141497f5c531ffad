"""A running graph (`goat-nav launch bench`, its own process) seen from a plain rclpy subscriber process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from goat_suites.common.episode_files import save_goat_dataset  # noqa: E402
from goat_suites.common.episodes import GoatDataset  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.mark.slow
def test_plain_subscriber_receives_images_info_odom_tf_and_map(tmp_path: Path) -> None:
    episodes = generate_dataset(1, 5, config=EpisodeGenConfig(min_subtasks=2, max_subtasks=2)).episodes
    episodes_file = tmp_path / "episodes.json"
    save_goat_dataset(GoatDataset(episodes=episodes), episodes_file)
    subscriber = subprocess.Popen([sys.executable, str(HERE / "plain_subscriber.py"), "90"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert subscriber.stderr is not None
    first_line = subscriber.stderr.readline()  # "ready": its subscriptions exist before the graph starts
    assert first_line.strip() == "ready", first_line
    graph = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", "launch", "bench", "--episodes-file",
                              str(episodes_file), "--param", "episode_player.max_actions_per_subtask=8",
                              "--param", "episode_player.start_delay_s=2.0"],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, err = subscriber.communicate(timeout=120)
    finally:
        graph.send_signal(signal.SIGINT)
        try:
            graph_log, _ = graph.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            graph.kill()
            graph_log, _ = graph.communicate()
        if subscriber.poll() is None:
            subscriber.kill()
    assert out.strip(), f"subscriber printed nothing; stderr:\n{err}\ngraph log:\n{graph_log[-3000:]}"
    report = json.loads(out.strip().splitlines()[-1])
    assert subscriber.returncode == 0, f"{report}\ngraph log:\n{graph_log[-3000:]}"
    found = report["found"]
    assert (found["/camera/color/image_raw"]["width"], found["/camera/color/image_raw"]["height"]) == (360, 640)
    assert found["/camera/color/camera_info"]["width"] == 360
    assert found["/odom"] == {"frame": "odom", "child": "base_link"}
    assert ["odom", "base_link"] in found["/tf"]["pairs"]
    assert found["/goat/map"]["frame"] == "map"
    assert graph.returncode == 0, graph_log[-3000:]
