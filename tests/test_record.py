"""`goat-nav bench --record RUN.mcap`: a rosbag2 MCAP bag of the run, read back with standard readers."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest
import yaml
from rosbags.highlevel import AnyReader

from goat_core.types import CameraIntrinsics, DiscreteAction, Goal, GoalModality, Observation, Pose2D
from goat_nav.cli import main
from goat_ros import record
from goat_ros.record import RecordedGoal, RecordError, RunRecorder
from goat_suites.common.episode_files import save_goat_dataset
from goat_suites.common.episodes import GoatDataset
from goat_suites.common.results import SubtaskRecord, read_results_json
from goat_suites.goat.generator import generate_dataset
from sim_bridge.embedded.home import HomeConfig

MAX_ACTIONS = 3


@pytest.fixture(scope="module")
def episodes_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small home, one subtask of each modality."""
    episode = generate_dataset(1, seed=21, home_config=HomeConfig(num_rooms=3)).episodes[0]
    firsts = {}
    for task in episode.tasks:
        firsts.setdefault(task.modality, task)
    assert len(firsts) == 3, "the generator should give every modality"
    path = tmp_path_factory.mktemp("eps") / "one.json.gz"
    save_goat_dataset(GoatDataset(episodes=(dataclasses.replace(episode, tasks=tuple(firsts.values())),)), path)
    return path


def _bench(episodes_file: Path, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir()
    bag, results = out_dir / "run.mcap", out_dir / "results.json"
    code = main(["bench", "--episodes-file", str(episodes_file), "--max-actions", str(MAX_ACTIONS), "--quiet",
                 "--record", str(bag), "--out", str(results)])
    assert code == 0
    return out_dir / "run", results


@pytest.fixture(scope="module")
def two_runs(episodes_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two runs of the same episodes: (first bag folder, second bag folder, first results file)."""
    root = tmp_path_factory.mktemp("runs")
    bag_a, results = _bench(episodes_file, root / "a")
    bag_b, _ = _bench(episodes_file, root / "b")
    return bag_a, bag_b, results


def _messages(bag: Path) -> list[tuple[str, str, int, Any]]:
    """(topic, type, log time, decoded message) of every message, decoded with the bag's own definitions."""
    with AnyReader([bag]) as reader:
        return [(c.topic, c.msgtype, t, reader.deserialize(raw, c.msgtype)) for c, t, raw in reader.messages()]


def _observations_acted_on(records: Sequence[SubtaskRecord]) -> int:
    """Observation sets an agent acted on: a fresh one per episode start and per action that moved the sim."""
    count, fresh, episode = 0, True, None
    for r in records:
        if (r.scene_id, r.episode_id) != episode:
            episode, fresh = (r.scene_id, r.episode_id), True
        for action in r.actions or ():
            count += fresh
            fresh = action is not DiscreteAction.STOP
    return count


@pytest.mark.slow
def test_the_bag_folder_is_what_ros2_bag_info_reads(two_runs: tuple[Path, Path, Path]) -> None:
    bag, _, _ = two_runs
    assert sorted(p.name for p in bag.iterdir()) == ["metadata.yaml", "run.mcap"]
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["version"] == 9 and info["storage_identifier"] == "mcap"
    assert info["relative_file_paths"] == ["run.mcap"] and info["files"][0]["path"] == "run.mcap"
    topics = {t["topic_metadata"]["name"]: t for t in info["topics_with_message_count"]}
    assert set(topics) == set(record.TOPICS)
    for name, entry in topics.items():
        meta = entry["topic_metadata"]
        assert meta["type"] == record.TOPICS[name] and meta["serialization_format"] == "cdr"
        assert meta["type_description_hash"].startswith("RIHS01_")
    assert sum(t["message_count"] for t in topics.values()) == info["message_count"]
    assert topics["/tf_static"]["topic_metadata"]["offered_qos_profiles"][0]["durability"] == "transient_local"
    assert json.loads(info["custom_data"]["goat_nav.run"])["run_config"]["max_actions_per_subtask"] == MAX_ACTIONS


def test_topics_types_and_counts(two_runs: tuple[Path, Path, Path]) -> None:
    bag, _, results_path = two_runs
    records = read_results_json(results_path).records
    messages = _messages(bag)
    counts: dict[str, int] = {}
    for topic, msgtype, _, _ in messages:
        assert msgtype == record.TOPICS[topic]
        counts[topic] = counts.get(topic, 0) + 1
    n_obs = _observations_acted_on(records)
    assert n_obs > 0
    for topic in (record.RGB_TOPIC, record.DEPTH_TOPIC, record.CAMERA_INFO_TOPIC, record.ODOM_TOPIC, record.TF_TOPIC):
        assert counts[topic] == n_obs, topic
    assert counts[record.ACTION_TOPIC] == sum(r.num_actions for r in records)
    assert counts[record.GOAL_TOPIC] == counts[record.RESULT_TOPIC] == len(records) == 3
    assert counts[record.TF_STATIC_TOPIC] == 1


def test_actions_goals_and_results_match_the_run(two_runs: tuple[Path, Path, Path]) -> None:
    bag, _, results_path = two_runs
    records = read_results_json(results_path).records
    messages = _messages(bag)
    actions = [m.action for topic, _, _, m in messages if topic == record.ACTION_TOPIC]
    assert actions == [int(a) for r in records for a in r.actions or ()]
    goals = [m for topic, _, _, m in messages if topic == record.GOAL_TOPIC]
    assert [(g.subtask_index, g.modality) for g in goals] == [(r.index, r.modality.value) for r in records]
    for g in goals:
        assert g.max_actions == MAX_ACTIONS and g.target_id and g.episode_id == records[0].episode_id
        filled = {"object": g.category, "description": g.text, "image": g.image_hfov_rad}[g.modality]
        assert filled, g.modality
        if g.modality == "image":  # the picture the agent was given travels with the goal
            assert (g.image.height, g.image.width, g.image.encoding) == (640, 360, "rgb8")
    results = [m for topic, _, _, m in messages if topic == record.RESULT_TOPIC]
    for msg, r in zip(results, records, strict=True):
        assert (msg.subtask_index, msg.success, msg.stop_reason, msg.num_actions) == (
            r.index, r.success, r.stop_reason, r.num_actions)
        assert msg.spl == pytest.approx(r.spl) and list(msg.actions) == [int(a) for a in r.actions or ()]


def test_images_decode_to_the_camera_size(two_runs: tuple[Path, Path, Path]) -> None:
    bag, _, _ = two_runs
    messages = _messages(bag)
    rgb = next(m for topic, _, _, m in messages if topic == record.RGB_TOPIC)
    depth = next(m for topic, _, _, m in messages if topic == record.DEPTH_TOPIC)
    info = next(m for topic, _, _, m in messages if topic == record.CAMERA_INFO_TOPIC)
    assert (rgb.encoding, rgb.height, rgb.width, rgb.step) == ("rgb8", 640, 360, 360 * 3)  # GOAT-Bench portrait
    pixels = np.asarray(rgb.data).reshape(rgb.height, rgb.width, 3)
    assert pixels.std() > 5.0, "a rendered room is not one flat colour"
    assert (depth.encoding, depth.height, depth.width, depth.step, depth.is_bigendian) == ("32FC1", 640, 360,
                                                                                          360 * 4, 0)
    metres = np.asarray(depth.data).view("<f4").reshape(640, 360)
    assert np.isfinite(metres).all() and 0.1 < float(np.median(metres)) < 20.0
    assert (info.width, info.height) == (360, 640) and info.k[0] > 0 and info.header.frame_id == record.OPTICAL_FRAME
    assert rgb.header.frame_id == depth.header.frame_id == record.OPTICAL_FRAME


def test_timestamps_are_the_simulated_clock(two_runs: tuple[Path, Path, Path]) -> None:
    bag, _, _ = two_runs
    messages = _messages(bag)
    times = [t for _, _, t, _ in messages]
    assert times == sorted(times)
    period = record.DEFAULT_STEP_PERIOD_NS
    action_times = [t for topic, _, t, _ in messages if topic == record.ACTION_TOPIC]
    assert action_times == [k * period for k in range(len(action_times))]
    for topic, _, t, m in messages:
        if hasattr(m, "header"):  # header stamps equal the log time
            assert m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec == t, topic
    tf = next(m for topic, _, _, m in messages if topic == record.TF_TOPIC)
    assert [(x.header.frame_id, x.child_frame_id) for x in tf.transforms] == [
        ("map", "odom"), ("odom", "base_link"), ("base_link", "camera_link")]


def test_two_runs_of_the_same_episodes_give_identical_bags(two_runs: tuple[Path, Path, Path]) -> None:
    bag_a, bag_b, _ = two_runs
    assert (bag_a / "run.mcap").read_bytes() == (bag_b / "run.mcap").read_bytes()
    assert (bag_a / "metadata.yaml").read_text() == (bag_b / "metadata.yaml").read_text()


def test_the_mcap_file_reads_with_the_mcap_library(two_runs: tuple[Path, Path, Path]) -> None:
    reader_mod = pytest.importorskip("mcap.reader", reason="the PyPI mcap package is not installed")
    bag, _, _ = two_runs
    with (bag / "run.mcap").open("rb") as f:
        reader = reader_mod.make_reader(f)
        assert reader.get_header().profile == "ros2"
        summary = reader.get_summary()
        channels = {c.topic: c for c in summary.channels.values()}
        assert set(channels) == set(record.TOPICS)
        for topic, c in channels.items():
            schema = summary.schemas[c.schema_id]
            assert (c.message_encoding, schema.encoding, schema.name) == ("cdr", "ros2msg", record.TOPICS[topic])
        definition = summary.schemas[channels[record.RGB_TOPIC].schema_id].data.decode()
        assert "uint32 height" in definition and "MSG: std_msgs/Header" in definition  # self-describing
        n = sum(1 for _ in reader.iter_messages())
        assert n == summary.statistics.message_count > 0
        assert [m.name for m in reader.iter_metadata()] == ["rosbag2"]


# ------------------------------------------------------------------------------------------ bad paths


def test_an_existing_bag_folder_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run").mkdir()
    assert main(["bench", "--episodes", "1", "--record", str(tmp_path / "run.mcap")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'run'} already exists" in err
    assert "generating" not in err  # it failed before any episode was generated


def test_a_bag_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(RecordError, match="notes.txt is not a folder"):
        RunRecorder(tmp_path / "notes.txt" / "sub" / "run.mcap")


@pytest.mark.parametrize("period", [0, -5, 0.1, True])
def test_a_bad_step_period_is_named(tmp_path: Path, period: Any) -> None:
    with pytest.raises(RecordError, match="step_period_ns must be a positive integer"):
        RunRecorder(tmp_path / "run.mcap", step_period_ns=period)


def test_writing_to_a_closed_recorder_is_an_error(tmp_path: Path) -> None:
    recorder = RunRecorder(tmp_path / "run")
    with pytest.raises(RecordError, match="not open"):
        recorder.on_step(_observation(), DiscreteAction.STOP)
    with recorder:
        pass
    assert (tmp_path / "run" / "metadata.yaml").exists()


# ------------------------------------------------------------------------------- the same bytes as ROS


def _observation() -> Observation:
    intr = CameraIntrinsics.from_hfov(6, 4, math.radians(42.0))
    rng = np.random.default_rng(0)
    return Observation(rgb=rng.integers(0, 255, (4, 6, 3), dtype=np.uint8),
                       depth_m=rng.uniform(0.5, 4.0, (4, 6)).astype(np.float32), pose=Pose2D(1.5, -0.25, 0.7),
                       camera_tilt_rad=-0.5, camera_height_m=1.31, intrinsics=intr, step=3)


def test_topic_and_frame_names_are_the_graph_names() -> None:
    topics = pytest.importorskip("goat_ros.topics", reason="goat_ros is not on the path")
    for name in ("RGB", "DEPTH", "CAMERA_INFO", "ODOM", "TF", "TF_STATIC", "GOAL", "RESULT"):
        assert getattr(record, f"{name}_TOPIC") == getattr(topics, name)
    for name in ("MAP", "ODOM", "BASE", "CAMERA", "OPTICAL"):
        assert getattr(record, f"{name}_FRAME") == getattr(topics, f"{name}_FRAME")


def test_rclpy_reads_the_messages_goat_ros_would_send(tmp_path: Path) -> None:
    """rclpy deserialises every recorded message to what goat_ros' conversions build for the same data.

    (Compared as messages, not bytes: CDR alignment padding is unspecified and rclpy leaves junk in it.)
    """
    serialization = pytest.importorskip("rclpy.serialization", reason="rclpy is not installed")
    cv = pytest.importorskip("goat_ros.conversions", reason="goat_interfaces is not built (scripts/setup_ros.sh)")
    result_msgs = pytest.importorskip("goat_suites.ros.result_msgs", reason="goat_interfaces is not built")
    tf2 = pytest.importorskip("tf2_msgs.msg", reason="tf2_msgs is not available (scripts/setup_ros.sh)")
    from geometry_msgs.msg import Quaternion

    from goat_interfaces.action import ExecuteAction

    obs = _observation()
    goal = Goal(GoalModality.IMAGE, image=np.full((40, 48, 3), 7, np.uint8), image_hfov_rad=0.73, target_id="o1")
    rec = SubtaskRecord("ep", 0, GoalModality.IMAGE, False, 0.0, 0.5, 2.5, 2, "budget", 1.25,
                        actions=(DiscreteAction.TURN_LEFT, DiscreteAction.MOVE_FORWARD), scene_id="s")
    with RunRecorder(tmp_path / "run.mcap") as recorder:
        recorder.on_goal(RecordedGoal.from_goal(goal, "ep", 0, 500))
        recorder.on_step(obs, DiscreteAction.TURN_LEFT)
        recorder.on_result(rec)
    with AnyReader([tmp_path / "run"]) as reader:
        raw = {c.topic: bytes(data) for c, _, data in reader.messages()}

    def hdr(frame: str) -> Any:
        return cv.header(0, frame)

    tilt = cv.pitch_quaternion(-obs.camera_tilt_rad)
    expected = {
        record.GOAL_TOPIC: cv.goal_to_msg(goal, hdr("map"), "ep", 0, 500),
        record.RGB_TOPIC: cv.rgb_to_image(obs.rgb, hdr(record.OPTICAL_FRAME)),
        record.DEPTH_TOPIC: cv.depth_to_image(obs.depth_m, hdr(record.OPTICAL_FRAME)),
        record.CAMERA_INFO_TOPIC: cv.intrinsics_to_camera_info(obs.intrinsics, hdr(record.OPTICAL_FRAME)),
        record.ODOM_TOPIC: cv.odometry(obs.pose, hdr("odom"), "base_link"),
        record.TF_TOPIC: tf2.TFMessage(transforms=[
            cv.transform(hdr("map"), "odom", (0.0, 0.0, 0.0), Quaternion(w=1.0)),
            cv.transform(hdr("odom"), "base_link", (obs.pose.x_m, obs.pose.y_m, 0.0), cv.yaw_to_quaternion(0.7)),
            cv.transform(hdr("base_link"), "camera_link", (0.0, 0.0, 1.31), tilt)]),
        record.TF_STATIC_TOPIC: tf2.TFMessage(transforms=[
            cv.transform(hdr("camera_link"), record.OPTICAL_FRAME, (0.0, 0.0, 0.0),
                         Quaternion(x=-0.5, y=0.5, z=-0.5, w=0.5))]),
        record.ACTION_TOPIC: ExecuteAction.Goal(action=int(DiscreteAction.TURN_LEFT)),
    }
    result_hdr = cv.header(record.DEFAULT_STEP_PERIOD_NS, "map")  # after the one action
    expected[record.RESULT_TOPIC] = result_msgs.record_to_msg(rec, result_hdr)
    assert set(raw) == set(expected)
    for topic, msg in expected.items():
        assert serialization.deserialize_message(raw[topic], type(msg)) == msg, topic


def test_goat_interfaces_type_hashes_are_those_of_the_built_package() -> None:
    share = record.INTERFACES_DIR.parents[1] / "install" / "share" / "goat_interfaces"
    if not share.is_dir():
        pytest.skip(f"goat_interfaces is not built ({share} is missing; run scripts/setup_ros.sh)")
    store = record.make_typestore()
    for msgtype in (record.GOAL_TYPE, record.RESULT_TYPE, record.ACTION_TYPE):
        _, kind, name = msgtype.split("/")
        description = json.loads((share / kind / f"{name.removesuffix('_Goal')}.json").read_text())
        hashes = {h["type_name"]: h["hash_string"] for h in description["type_hashes"]}
        assert store.hash_rihs01(msgtype) == hashes[msgtype]
