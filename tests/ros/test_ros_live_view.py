"""`goat-nav view` next to `goat-nav launch sim` (separate processes), seen by a real Foxglove-protocol client: the
channels are advertised, and a subscribed client decodes a colour frame and a map with no goal ever sent."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
pytest.importorskip("foxglove", reason="foxglove-sdk is not installed: pip install -e '.[live]'")
pytest.importorskip("websockets", reason="websockets is not installed: pip install -e '.[test]'")
from ros_skip import require_ros, stop_process  # noqa: E402

require_ros()

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # the protocol client shared with tests/test_live_view.py

from foxglove_client import FoxgloveClient  # noqa: E402
from test_live_view import CHANNELS, check_frame, grid_values  # noqa: E402

from goat_ros import live_view as lv  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_view_serves_the_running_graph(tmp_path: Path) -> None:
    port = _free_port()
    logs = {name: open(tmp_path / f"{name}.log", "w") for name in ("graph", "view")}
    graph = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", "launch", "sim"], cwd=ROOT,
                             stdout=logs["graph"], stderr=subprocess.STDOUT, text=True)
    view = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", "view", "--port", str(port)], cwd=ROOT,
                            stdout=logs["view"], stderr=subprocess.STDOUT, text=True)
    try:
        client = FoxgloveClient(f"ws://127.0.0.1:{port}", open_timeout_s=60.0)
        try:
            advertised = client.wait_for_topics(set(CHANNELS) | {lv.MAPPING_MAP_TOPIC}, 30.0)
            assert advertised[lv.RGB_TOPIC]["schemaName"] == "foxglove.CompressedImage"
            client.subscribe([lv.RGB_TOPIC, lv.MAPPING_MAP_TOPIC, lv.TF_TOPIC])
            # The bridge repeats its latest set at 2 Hz and the map is latched: both come without a goal.
            got = client.receive({lv.RGB_TOPIC, lv.MAPPING_MAP_TOPIC, lv.TF_TOPIC}, 60.0,
                                 accept=lambda topic, m: topic != lv.MAPPING_MAP_TOPIC or 100 in grid_values(m))
        finally:
            client.close()
    finally:
        stop_process(view)
        stop_process(graph)
        for log in logs.values():
            log.close()
    frame = check_frame(got[lv.RGB_TOPIC])
    assert frame.shape == (640, 360, 3) and frame.std() > 5.0
    values = grid_values(got[lv.MAPPING_MAP_TOPIC])
    assert set(np.unique(values)) <= {-1, 0, 100} and (values == 0).any()
    assert got[lv.MAPPING_MAP_TOPIC].frame_id == "map"
    pairs = {(t.parent_frame_id, t.child_frame_id) for t in got[lv.TF_TOPIC].transforms}
    assert ("odom", "base_link") in pairs
    assert view.returncode == 0, (tmp_path / "view.log").read_text()[-3000:]
