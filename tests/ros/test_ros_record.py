"""The recorder node: `goat-nav bench --ros --record RUN` writes the bench graph's topics into a rosbag2 MCAP bag.

One tiny episode (three rooms, one subtask per goal modality, four actions each) runs through the graph with
recording on; the bag is read back with rosbags' AnyReader and the mcap library. Around it: the stamp extraction
from CDR bytes, the topics parameter, a bad --record path, and Ctrl-C on a recorder process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
import yaml

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from rosbags.highlevel import AnyReader  # noqa: E402

from goat_core.errors import GoatError  # noqa: E402
from goat_core.types import DiscreteAction, GoalModality, Pose2D  # noqa: E402
from goat_nav.cli import main  # noqa: E402
from goat_ros import record, topics  # noqa: E402
from goat_ros.params import DEFAULT_RECORDED_TOPICS  # noqa: E402
from goat_ros.recorder_node import LATCHED_TOPICS, TOPIC_TYPES, parse_topics  # noqa: E402
from goat_suites.common.episode_files import save_goat_dataset  # noqa: E402
from goat_suites.common.episodes import GoatDataset, GoatEpisode  # noqa: E402
from goat_suites.common.results import SubtaskRecord, read_results_json  # noqa: E402
from goat_suites.goat.generator import generate_dataset  # noqa: E402
from sim_bridge.embedded.home import HomeConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MAX_ACTIONS = 4
OBSERVATION_SET = (topics.RGB, topics.DEPTH, topics.CAMERA_INFO, topics.ODOM, topics.JOINT_STATES, topics.TF)
PER_ACT = (topics.MAP, topics.INSTANCES, topics.INSTANCE_MARKERS, topics.PATH)  # the controller's debug output


class Message(NamedTuple):
    topic: str
    msgtype: str
    log_ns: int
    msg: Any


class Run(NamedTuple):
    episode: GoatEpisode
    bag: Path
    records: list[SubtaskRecord]
    messages: list[Message]  # in the reader's (log time) order


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    episode = generate_dataset(1, seed=21, home_config=HomeConfig(num_rooms=3)).episodes[0]
    firsts: dict[GoalModality, Any] = {}
    for task in episode.tasks:
        firsts.setdefault(task.modality, task)
    assert len(firsts) == 3, "the generator should give every modality"
    episode = dataclasses.replace(episode, tasks=tuple(firsts.values()))
    root = tmp_path_factory.mktemp("ros_record")
    episodes_file = root / "episodes.json"
    save_goat_dataset(GoatDataset(episodes=(episode,)), episodes_file)
    # A process and ROS domain of its own: latched topics of graphs that earlier tests left in this process (or
    # domain) would otherwise reach the recorder too, as they would reach `ros2 bag record`.
    env = dict(os.environ, ROS_DOMAIN_ID=str((int(os.environ.get("ROS_DOMAIN_ID", "0")) + 101) % 200 + 1))
    proc = subprocess.run(
        [sys.executable, "-m", "goat_nav.cli", "bench", "--ros", "--episodes-file", str(episodes_file),
         "--max-actions", str(MAX_ACTIONS), "--quiet", "--record", str(root / "run.mcap"),
         "--out", str(root / "results.json")], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bag = root / "run"
    with AnyReader([bag]) as reader:
        messages = [Message(c.topic, c.msgtype, t, reader.deserialize(raw, c.msgtype))
                    for c, t, raw in reader.messages()]
    return Run(episode, bag, list(read_results_json(root / "results.json").records), messages)


def _by_topic(run: Run, topic: str) -> list[Message]:
    return [m for m in run.messages if m.topic == topic]


def _stamp_ns(stamp: Any) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


@pytest.mark.slow
def test_the_bag_is_a_rosbag2_mcap_folder_with_the_run_settings(run: Run) -> None:
    assert sorted(p.name for p in run.bag.iterdir()) == ["metadata.yaml", "run.mcap"]
    info = yaml.safe_load((run.bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["version"] == 9 and info["storage_identifier"] == "mcap"
    assert info["relative_file_paths"] == ["run.mcap"]
    entries = {t["topic_metadata"]["name"]: t for t in info["topics_with_message_count"]}
    assert set(entries) == set(DEFAULT_RECORDED_TOPICS.split())
    for name, entry in entries.items():
        meta = entry["topic_metadata"]
        assert meta["type"] == TOPIC_TYPES[name] and meta["serialization_format"] == "cdr", name
        assert meta["type_description_hash"].startswith("RIHS01_"), name
        latched = bool(meta["offered_qos_profiles"]) and meta["offered_qos_profiles"][0]["durability"] == \
            "transient_local"
        assert latched == (name in LATCHED_TOPICS), name
    assert sum(e["message_count"] for e in entries.values()) == info["message_count"] == len(run.messages)
    run_info = json.loads(info["custom_data"][record.RUN_INFO_KEY])
    assert run_info["runner"] == "ros_graph"
    assert run_info["run_config"]["max_actions_per_subtask"] == MAX_ACTIONS


@pytest.mark.slow
def test_counts_follow_the_step_protocol(run: Run) -> None:
    """One observation set per reset and per executed action (STOP is not executed); debug output per act."""
    assert len(run.records) == 3 and all(r.stop_reason != "error" for r in run.records)
    num_acts = sum(len(r.actions or ()) for r in run.records)
    executed = sum(a is not DiscreteAction.STOP for r in run.records for a in r.actions or ())
    counts = {t: len(_by_topic(run, t)) for t in DEFAULT_RECORDED_TOPICS.split()}
    for topic in OBSERVATION_SET:
        assert counts[topic] == 1 + executed, topic
    for topic in PER_ACT:
        assert counts[topic] == num_acts, topic
    assert counts[topics.GOAL] == counts[topics.OUTCOME] == counts[topics.RESULT] == len(run.records)
    # The bridge's camera_link -> optical frame and the controller's map -> odom (one per episode).
    static = sorted((t.header.frame_id, t.child_frame_id) for m in _by_topic(run, topics.TF_STATIC)
                    for t in m.msg.transforms)
    assert static == [(topics.CAMERA_FRAME, topics.OPTICAL_FRAME), (topics.MAP_FRAME, topics.ODOM_FRAME)]


@pytest.mark.slow
def test_images_decode_to_the_camera_size(run: Run) -> None:
    infos = _by_topic(run, topics.CAMERA_INFO)
    height, width = infos[0].msg.height, infos[0].msg.width
    assert (width, height) == (360, 640)  # GOAT-Bench Stretch: portrait 360 x 640
    for m in _by_topic(run, topics.RGB):
        assert (m.msg.encoding, m.msg.height, m.msg.width, m.msg.step) == ("rgb8", height, width, 3 * width)
        assert m.msg.header.frame_id == topics.OPTICAL_FRAME
        rgb = np.asarray(m.msg.data).reshape(height, width, 3)
        assert rgb.std() > 1.0  # a rendered room, not a blank frame
    for m in _by_topic(run, topics.DEPTH):
        assert (m.msg.encoding, m.msg.height, m.msg.width, m.msg.step) == ("32FC1", height, width, 4 * width)
        depth = np.frombuffer(np.asarray(m.msg.data).tobytes(), dtype="<f4").reshape(height, width)
        assert np.isfinite(depth).any() and np.nanmax(depth) > 0.1


@pytest.mark.slow
def test_goals_outcomes_and_results_match_the_episode(run: Run) -> None:
    goals = [m.msg for m in _by_topic(run, topics.GOAL)]
    assert [(g.episode_id, g.subtask_index, g.modality) for g in goals] == \
        [(run.episode.episode_id, i, t.modality.value) for i, t in enumerate(run.episode.tasks)]
    for goal, task in zip(goals, run.episode.tasks, strict=True):
        assert goal.max_actions == MAX_ACTIONS and goal.header.frame_id == topics.MAP_FRAME
        if task.modality is GoalModality.CATEGORY:
            assert goal.category and not goal.text
        elif task.modality is GoalModality.DESCRIPTION:
            assert goal.text and not goal.category
        else:
            assert goal.image.encoding == "rgb8" and goal.image.height * goal.image.width > 0
            assert len(goal.image.data) == goal.image.step * goal.image.height
    outcomes = [m.msg for m in _by_topic(run, topics.OUTCOME)]
    results = [m.msg for m in _by_topic(run, topics.RESULT)]
    for outcome, result, rec in zip(outcomes, results, run.records, strict=True):
        assert [int(a) for a in outcome.actions] == [int(a) for a in rec.actions or ()]
        assert (result.episode_id, result.subtask_index, result.stop_reason) == \
            (rec.episode_id, rec.index, rec.stop_reason)
        assert (result.success, result.num_actions) == (rec.success, rec.num_actions)
        assert result.spl == pytest.approx(rec.spl)


@pytest.mark.slow
def test_log_times_are_the_message_stamps(run: Run) -> None:
    """Headers give the log time; an observation set shares one stamp, which the goals of the episode carry."""
    for m in run.messages:
        if hasattr(m.msg, "header"):
            assert m.log_ns == _stamp_ns(m.msg.header.stamp), m.topic
        elif m.topic == topics.TF:
            assert m.log_ns == _stamp_ns(m.msg.transforms[0].header.stamp)
    set_stamps = [m.log_ns for m in _by_topic(run, topics.RGB)]
    assert set_stamps == sorted(set(set_stamps)), "one fresh, later stamp per observation set"
    for topic in OBSERVATION_SET:
        assert [m.log_ns for m in _by_topic(run, topic)] == set_stamps, topic
    # Every goal refers to the reset's observation set (the player stamps goals with it).
    assert {_stamp_ns(m.msg.header.stamp) for m in _by_topic(run, topics.GOAL)} == {set_stamps[0]}
    log_times = [m.log_ns for m in run.messages]
    assert log_times == sorted(log_times)


@pytest.mark.slow
def test_log_times_per_topic_do_not_decrease_in_file_order(run: Run) -> None:
    """Readers that stream the file without its index (mcap cat, a scan) see each topic in time order."""
    reader_mod = pytest.importorskip("mcap.reader", reason="the PyPI mcap package is not installed")
    last: dict[int, int] = {}
    with (run.bag / "run.mcap").open("rb") as f:
        for _, channel, message in reader_mod.make_reader(f).iter_messages(log_time_order=False):
            assert message.log_time >= last.get(channel.id, 0), channel.topic
            last[channel.id] = message.log_time
    assert len(last) == len(DEFAULT_RECORDED_TOPICS.split())


def test_a_bad_record_path_fails_before_the_graph_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import rclpy

    import goat_nav.ros_bench
    import goat_ros.spin
    from goat_nav.ros_bench import run_graph
    from goat_suites.common.runner import RunConfig

    def must_not_run(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the graph started despite a bad --record path")

    monkeypatch.setattr(goat_nav.ros_bench, "run_graph", must_not_run)
    monkeypatch.setattr(goat_ros.spin, "run_nodes", must_not_run)
    (tmp_path / "taken").mkdir()
    assert main(["bench", "--ros", "--episodes", "1", "--record", str(tmp_path / "taken.mcap")]) == 2
    assert "already exists" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["launch", "bench", "--episodes-file", "e.json", "--record", str(tmp_path / "file" / "run")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    ros_was_up = rclpy.ok()
    with pytest.raises(record.RecordError, match="already exists"):
        run_graph([], RunConfig(), record=tmp_path / "taken")
    assert rclpy.ok() == ros_was_up, "run_graph initialised ROS before checking the bag path"


@pytest.mark.parametrize("spec, error", [
    ("", "names no topic"),
    ("odom", "absolute topic"),
    ("/scan", "not a goat graph topic"),
    ("/scan:sensor_msgs/LaserScan", "pkg/msg/Type"),
    ("/odom /tf /odom", "named twice"),
])
def test_bad_topics_parameters_are_named(spec: str, error: str) -> None:
    with pytest.raises(GoatError, match=error):
        parse_topics(spec)


def test_topics_parameter_gives_graph_types_and_explicit_ones() -> None:
    assert parse_topics("/odom /scan:sensor_msgs/msg/LaserScan") == {
        "/odom": "nav_msgs/msg/Odometry", "/scan": "sensor_msgs/msg/LaserScan"}
    assert list(parse_topics(DEFAULT_RECORDED_TOPICS)) == DEFAULT_RECORDED_TOPICS.split()


def test_stamps_are_read_from_the_bytes_rclpy_sends() -> None:
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import Image
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import Marker, MarkerArray

    from goat_ros import conversions as cv

    store = record.make_typestore()

    def stamp(msg: Any, msgtype: str) -> Any:
        return record.cdr_stamp_ns(serialize_message(msg), record.stamp_location(store, msgtype))

    stamp_ns = 1_700_000_000_123_456_789
    hdr = cv.header(stamp_ns, "odom")
    assert stamp(Image(header=hdr, height=2, width=1, encoding="mono8", step=1, data=[1, 2]),
                 "sensor_msgs/msg/Image") == stamp_ns
    assert stamp(TFMessage(transforms=[cv.transform(hdr, "base_link", (1.0, 0.0, 0.0), cv.yaw_to_quaternion(0.3))]),
                 "tf2_msgs/msg/TFMessage") == stamp_ns
    assert stamp(MarkerArray(markers=[Marker(header=hdr)]), "visualization_msgs/msg/MarkerArray") == stamp_ns
    assert stamp(TFMessage(), "tf2_msgs/msg/TFMessage") is None  # empty: no stamp to take
    assert stamp(Image(), "sensor_msgs/msg/Image") is None  # zero stamp: unset
    assert stamp(String(data="x"), "std_msgs/msg/String") is None  # no header in the type


def test_the_writer_refuses_unknown_types_and_topics(tmp_path: Path) -> None:
    with pytest.raises(record.RecordError, match="unknown"):
        record.CdrBagWriter(tmp_path / "a", {"/x": "no_such_pkg/msg/Thing"})
    with pytest.raises(record.RecordError, match="not among the recorded"):
        record.CdrBagWriter(tmp_path / "b", {"/odom": "nav_msgs/msg/Odometry"}, latched=["/tf_static"])
    with record.CdrBagWriter(tmp_path / "c", {"/odom": "nav_msgs/msg/Odometry"}) as writer:
        with pytest.raises(record.RecordError, match="not recorded"):
            writer.write("/tf", b"\x00\x01\x00\x00", 1)
    with pytest.raises(record.RecordError, match="not open"):
        writer.write("/odom", b"\x00\x01\x00\x00", 1)


@pytest.mark.slow
def test_ctrl_c_closes_the_bag_of_a_recorder_process(tmp_path: Path) -> None:
    """``ros2 run goat_ros recorder`` stopped by SIGINT leaves a complete bag: latched and live messages in it."""
    import rclpy
    from nav_msgs.msg import Odometry
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    from goat_ros import conversions as cv

    bag = tmp_path / "ctrl_c"
    rclpy.init()
    node = rclpy.create_node("recorder_test_publisher")
    proc = None
    try:
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        done_pub = node.create_publisher(String, topics.EPISODES_DONE, latched)
        odom_pub = node.create_publisher(Odometry, topics.ODOM, QoSProfile(depth=10))
        before_ns = time.time_ns()
        done_pub.publish(String(data="published before the recorder started"))
        proc = subprocess.Popen([sys.executable, "-m", "goat_ros.recorder_node", "--ros-args", "-p",
                                 f"bag_path:={bag}", "-p", f"topics:='{topics.ODOM} {topics.EPISODES_DONE}'"],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 30.0
        while odom_pub.get_subscription_count() == 0 or done_pub.get_subscription_count() == 0:
            assert proc.poll() is None and time.monotonic() < deadline, "the recorder did not subscribe"
            rclpy.spin_once(node, timeout_sec=0.1)
        stamps = [10_000_000_000 + k * 250_000_000 for k in range(3)]
        for stamp_ns in stamps:
            odom_pub.publish(cv.odometry(Pose2D(stamp_ns * 1e-9, 0.0, 0.0), cv.header(stamp_ns, "odom"), "base_link"))
        time.sleep(1.5)  # delivery to the other process
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        after_ns = time.time_ns()
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        node.destroy_node()
        rclpy.try_shutdown()
    assert proc.returncode == 0, out
    assert (bag / "metadata.yaml").is_file(), out
    with AnyReader([bag]) as reader:
        got = [(c.topic, t) for c, t, _ in reader.messages()]
    assert [t for topic, t in got if topic == topics.ODOM] == stamps
    done = [t for topic, t in got if topic == topics.EPISODES_DONE]
    assert len(done) == 1 and before_ns <= done[0] <= after_ns  # no stamp: the receive time
