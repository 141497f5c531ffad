"""The live view (foxglove-sdk's WebSocket server) seen by a real Foxglove-protocol client: the channels are
advertised with their schemas, and a subscribed client decodes a JPEG frame and an occupancy grid. Also
`goat-nav bench --live` end to end (no ROS)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("foxglove", reason="foxglove-sdk is not installed: pip install -e '.[live]'")
pytest.importorskip("websockets", reason="websockets is not installed: pip install -e '.[test]'")

import cv2  # noqa: E402
from foxglove_client import FoxgloveClient  # noqa: E402

from goat_core.errors import GoatError  # noqa: E402
from goat_core.types import Pose2D  # noqa: E402
from goat_ros import live_view as lv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHANNELS = {lv.RGB_TOPIC: "foxglove.CompressedImage", lv.DEPTH_TOPIC: "foxglove.RawImage",
            lv.MAP_TOPIC: "foxglove.Grid", lv.MARKERS_TOPIC: "foxglove.SceneUpdate",
            lv.PATH_TOPIC: "foxglove.PosesInFrame", lv.TF_TOPIC: "foxglove.FrameTransforms"}


def check_frame(msg: object) -> np.ndarray:
    assert msg.format == "jpeg"  # type: ignore[attr-defined]
    image = cv2.imdecode(np.frombuffer(msg.data, np.uint8), cv2.IMREAD_COLOR)  # type: ignore[attr-defined]
    assert image is not None, "the frame does not decode as JPEG"
    return np.asarray(image[:, :, ::-1])


def grid_values(msg: object) -> np.ndarray:
    m = msg
    assert [f.name for f in m.fields] == ["occupancy"] and m.cell_stride == 1  # type: ignore[attr-defined]
    values = np.frombuffer(m.data, dtype=np.int8)  # type: ignore[attr-defined]
    return values.reshape(-1, m.column_count)  # type: ignore[attr-defined]


def test_client_sees_channels_and_decodes_a_frame_and_a_map() -> None:
    rgb = np.zeros((64, 48, 3), np.uint8)
    rgb[:, :24] = (200, 30, 30)  # left half red, right half black
    rows = np.full((5, 7), -1, np.int8)
    rows[1:4, 1:6] = 0
    rows[2, 3] = 100
    with lv.LiveView("127.0.0.1", 0) as view:
        client = FoxgloveClient(f"ws://127.0.0.1:{view.port}")
        try:
            advertised = client.wait_for_topics(set(CHANNELS) | {lv.GOAL_TOPIC, lv.OUTCOME_TOPIC}, 10.0)
            assert client.server_info.get("op") == "serverInfo"
            for topic, schema in CHANNELS.items():
                assert advertised[topic]["schemaName"] == schema and advertised[topic]["encoding"] == "protobuf"
            assert advertised[lv.OUTCOME_TOPIC]["encoding"] == "json"
            client.subscribe([lv.RGB_TOPIC, lv.MAP_TOPIC, lv.OUTCOME_TOPIC, lv.TF_TOPIC])
            stop = threading.Event()

            def publish() -> None:  # a live source: keeps logging until the client has what it waits for
                while not stop.wait(0.05):
                    view.log_rgb(1_000_000_123, rgb)
                    view.log_map(1_000_000_123, rows, 0.05, (-1.0, 2.0))
                    view.log_outcome(1_000_000_123, {"success": True, "actions": 3})
                    view.log_tf(1_000_000_123, Pose2D(1.0, 2.0, 0.5), 0.1, 1.31)

            thread = threading.Thread(target=publish, daemon=True)
            thread.start()
            got = client.receive({lv.RGB_TOPIC, lv.MAP_TOPIC, lv.OUTCOME_TOPIC, lv.TF_TOPIC}, 10.0)
            stop.set()
            thread.join()
        finally:
            client.close()
    frame = check_frame(got[lv.RGB_TOPIC])
    assert frame.shape == (64, 48, 3)
    assert frame[:, :20, 0].mean() > 150 and frame[:, 28:].mean() < 30  # colours survive, not swapped
    assert (got[lv.RGB_TOPIC].timestamp.seconds, got[lv.RGB_TOPIC].timestamp.nanos) == (1, 123)
    assert np.array_equal(grid_values(got[lv.MAP_TOPIC]), rows)
    assert got[lv.MAP_TOPIC].pose.position.x == -1.0 and got[lv.MAP_TOPIC].cell_size.x == pytest.approx(0.05)
    assert got[lv.OUTCOME_TOPIC] == {"success": True, "actions": 3}
    pairs = [(t.parent_frame_id, t.child_frame_id) for t in got[lv.TF_TOPIC].transforms]
    assert ("odom", "base_link") in pairs and ("camera_link", "camera_color_optical_frame") in pairs


def test_bad_settings_are_named() -> None:
    with pytest.raises(GoatError, match="70000"):
        lv.LiveView("127.0.0.1", 70000)
    with pytest.raises(GoatError, match="HOST:PORT"):
        lv.parse_address("localhost:http")
    assert lv.parse_address("9000") == ("127.0.0.1", 9000)
    with lv.LiveView("127.0.0.1", 0) as view:
        with pytest.raises(GoatError, match="cannot serve"):
            lv.LiveView("127.0.0.1", view.port)  # the port is taken


@pytest.mark.slow
def test_bench_live_serves_the_in_process_run() -> None:
    bench = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", "bench", "--homes", "small", "--episodes", "3",
                              "--seed", "1000", "--live", "127.0.0.1:0", "--quiet"], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert bench.stderr is not None
        line = bench.stderr.readline()
        match = re.search(r"ws://127\.0\.0\.1:(\d+)", line)
        assert match, line + bench.stderr.read()
        client = FoxgloveClient(f"ws://127.0.0.1:{match.group(1)}")
        try:
            client.wait_for_topics(set(CHANNELS), 30.0)
            client.subscribe([lv.RGB_TOPIC, lv.MAP_TOPIC, lv.DEPTH_TOPIC])
            got = client.receive({lv.RGB_TOPIC, lv.MAP_TOPIC, lv.DEPTH_TOPIC}, 60.0,
                                 accept=lambda topic, m: topic != lv.MAP_TOPIC or 100 in grid_values(m))
        finally:
            client.close()
    finally:
        bench.send_signal(signal.SIGINT)
        try:
            bench.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            bench.kill()
            bench.communicate()
    frame = check_frame(got[lv.RGB_TOPIC])
    assert frame.shape == (640, 360, 3) and frame.std() > 5.0  # the simulator's head camera, not a blank
    values = grid_values(got[lv.MAP_TOPIC])
    assert set(np.unique(values)) <= {-1, 0, 100} and (values == 0).any() and (values == 100).any()
    depth = got[lv.DEPTH_TOPIC]
    assert depth.encoding == "32FC1" and len(depth.data) == 4 * depth.width * depth.height


def test_the_shipped_layout_shows_channels_the_view_serves() -> None:
    import json

    layout = json.loads((ROOT / "config" / "foxglove_layout.json").read_text())
    panels = layout["configById"]
    served = set(CHANNELS) | {lv.MAPPING_MAP_TOPIC, lv.GOAL_TOPIC, lv.OUTCOME_TOPIC}
    shown = {p["imageMode"]["imageTopic"] for k, p in panels.items() if k.startswith("Image!")}
    shown |= {p["topicPath"] for k, p in panels.items() if k.startswith("RawMessages!")}
    shown |= set(panels["3D!goat"]["topics"])
    assert shown <= served, sorted(shown - served)
    assert {lv.RGB_TOPIC, lv.MAP_TOPIC, lv.MARKERS_TOPIC, lv.PATH_TOPIC} <= shown  # camera, map, markers, path

    def leaves(node: object) -> set[str]:
        return {node} if isinstance(node, str) else set().union(*(leaves(node[k]) for k in ("first", "second")))

    assert leaves(layout["layout"]) == set(panels)  # every panel is placed, none is missing
