"""`goat-nav launch sim` streams like the robot: with no goal ever sent, a plain rclpy subscriber in its own process
sees colour, depth, camera info, odometry, TF and the map; one that starts late still does (the bridge repeats the
latest observation set while the robot stands still)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, stop_process  # noqa: E402

require_ros()

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MAPPING_MAP = "/goat/mapping/map"  # instance_mapping's map: built from every observation set, goal or not


def _subscribe(timeout_s: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, str(HERE / "plain_subscriber.py"), str(timeout_s), MAPPING_MAP],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first_line = proc.stderr.readline()  # "ready": its subscriptions exist
    assert first_line.strip() == "ready", first_line
    return proc


def _report(proc: subprocess.Popen[str], graph_log: Any) -> dict[str, Any]:
    out, err = proc.communicate(timeout=120)
    assert out.strip(), f"subscriber printed nothing; stderr:\n{err}\ngraph log:\n{graph_log()}"
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert proc.returncode == 0, f"{report}\ngraph log:\n{graph_log()}"
    return report


@pytest.mark.slow
def test_launch_sim_streams_before_any_goal(tmp_path: Path) -> None:
    early = _subscribe(60.0)  # started before the graph, as the user did
    log_path = tmp_path / "graph.log"
    with open(log_path, "w") as log:
        graph = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", "launch", "sim"], cwd=ROOT, stdout=log,
                                 stderr=subprocess.STDOUT, text=True)
    try:
        report = _report(early, lambda: log_path.read_text()[-3000:])
        found = report["found"]
        assert (found["/camera/color/image_raw"]["width"], found["/camera/color/image_raw"]["height"]) == (360, 640)
        assert found["/camera/aligned_depth_to_color/image_raw"]["width"] == 360
        assert found["/camera/color/camera_info"]["fx"] > 0
        assert found["/odom"] == {"frame": "odom", "child": "base_link"}
        assert ["odom", "base_link"] in found["/tf"]["pairs"]
        assert found[MAPPING_MAP]["frame"] == "map"
        # A subscriber that joins once the first set is long published still sees the robot within a few
        # republish periods (2 Hz): images are not latched, so only the republication can deliver them.
        late = _report(_subscribe(20.0), lambda: log_path.read_text()[-3000:])
        assert not late["missing"], late
        assert late["elapsed_s"] < 15.0, late
    finally:
        stop_process(graph)
        if early.poll() is None:
            early.kill()
    assert graph.returncode == 0, log_path.read_text()[-3000:]
