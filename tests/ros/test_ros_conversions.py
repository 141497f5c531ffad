"""Message <-> core conversions, built from messages directly (no node, no rclpy.init)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

from sensor_msgs.msg import Image  # noqa: E402

from goat_core.errors import InvalidGoalError  # noqa: E402
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid  # noqa: E402
from goat_core.types import CameraIntrinsics, DiscreteAction, Goal, GoalModality, Pose2D, StopDecision  # noqa: E402
from goat_interfaces.msg import Goal as GoalMsg  # noqa: E402
from goat_interfaces.msg import SubtaskOutcome  # noqa: E402
from goat_ros import conversions as cv  # noqa: E402
from goat_suites.common.results import SubtaskRecord  # noqa: E402
from goat_suites.ros import result_msgs  # noqa: E402

HDR = cv.header(1_500_000_123, "camera_color_optical_frame")


@pytest.mark.parametrize("encoding,dtype,shape", [("rgb8", np.uint8, (6, 4, 3)), ("32FC1", np.float32, (6, 4)),
                                                  ("32SC1", np.int32, (6, 4)), ("16UC1", np.uint16, (6, 4))])
def test_image_round_trip(encoding: str, dtype: type, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    array = (rng.random(shape) * 200 - (50 if encoding == "32SC1" else 0)).astype(dtype)
    msg = cv.array_to_image(array, encoding, HDR)
    assert (msg.height, msg.width, msg.encoding) == (shape[0], shape[1], encoding)
    back = cv.image_to_array(msg, (encoding,))
    assert back.dtype == dtype and np.array_equal(back, array)


def test_image_with_row_padding_and_bgr() -> None:
    rgb = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    padded = np.zeros((2, 12), np.uint8)
    padded[:, :9] = rgb[:, :, ::-1].reshape(2, 9)
    msg = Image(height=2, width=3, encoding="bgr8", step=12)
    msg.data = padded.tobytes()
    assert np.array_equal(cv.image_to_rgb(msg), rgb)


def test_depth_in_millimetres() -> None:
    msg = cv.array_to_image(np.array([[1000, 2500]], np.uint16), "16UC1", HDR)
    assert np.allclose(cv.image_to_depth(msg), [[1.0, 2.5]])


@pytest.mark.parametrize("encoding,size,nbytes", [("mono8", (64, 64), 64 * 64), ("rgb8", (64, 64), 100)])
def test_bad_images_name_the_problem(encoding: str, size: tuple[int, int], nbytes: int) -> None:
    msg = Image(height=size[0], width=size[1], encoding=encoding, step=size[1] * 3)
    msg.data = bytes(nbytes)
    with pytest.raises(cv.ConversionError, match="encoding|bytes"):
        cv.image_to_rgb(msg)


def test_camera_info_round_trip() -> None:
    intr = CameraIntrinsics.from_hfov(360, 640, math.radians(42.0))
    assert cv.camera_info_to_intrinsics(cv.intrinsics_to_camera_info(intr, HDR)) == intr


@pytest.mark.parametrize("yaw", [0.0, 0.3, -2.0, math.pi - 1e-9])
def test_odometry_round_trip(yaw: float) -> None:
    pose = cv.odometry_to_pose2d(cv.odometry(Pose2D(1.5, -2.0, yaw), HDR, "base_link"))
    assert (pose.x_m, pose.y_m) == (1.5, -2.0) and pose.yaw_rad == pytest.approx(yaw, abs=1e-12)
    assert cv.msg_to_pose2d(cv.pose2d_to_msg(Pose2D(1.0, 2.0, yaw))) == Pose2D(1.0, 2.0, yaw)


def test_time_round_trip() -> None:
    assert cv.ns_from_time(cv.time_from_ns(12_345_678_901)) == 12_345_678_901


@pytest.mark.parametrize("goal", [
    Goal(GoalModality.CATEGORY, category="sofa", target_id="sofa_1"),
    Goal(GoalModality.DESCRIPTION, text="the red mug on the table", level="instance"),
    Goal(GoalModality.IMAGE, image=np.full((64, 48, 3), 7, np.uint8), image_hfov_rad=0.7),
    Goal(GoalModality.IMAGE, image=np.full((64, 48, 3), 7, np.uint8), image_hfov_rad=0.7, category="couch"),
])
def test_goal_round_trip(goal: Goal) -> None:
    back = cv.msg_to_goal(cv.goal_to_msg(goal, HDR, "ep", 2, 500))
    assert (back.modality, back.category, back.text, back.level, back.target_id) == \
        (goal.modality, goal.category, goal.text, goal.level, goal.target_id)
    if goal.image is not None:
        assert back.image is not None and np.array_equal(back.image, goal.image)
        assert back.image_hfov_rad == goal.image_hfov_rad


@pytest.mark.parametrize("msg,match", [
    (GoalMsg(modality="smell"), "unknown goal modality"),
    (GoalMsg(modality="description", text="  "), "non-empty text"),
    (GoalMsg(modality="object"), "non-empty category"),
    (GoalMsg(modality="image", image=Image(height=64, width=64, encoding="mono8", step=64, data=bytes(4096))),
     "encoding"),
    (GoalMsg(modality="image", image=Image(height=8, width=8, encoding="rgb8", step=24, data=bytes(192))),
     "too small"),
])
def test_bad_goal_messages_raise_invalid_goal(msg: GoalMsg, match: str) -> None:
    with pytest.raises(InvalidGoalError, match=match):
        cv.msg_to_goal(msg)


def test_occupancy_grid_layout() -> None:
    grid = OccupancyGrid(OccupancyConfig(resolution_m=0.1, size_m=4.0))
    i, j = grid.cell_of(0.55, -0.25)  # x, y
    grid.obstacle[i, j] = 1
    grid.explored[i, j] = 1
    grid.explored[i - 1, j] = 1
    grid.recompute_bounds()
    msg = cv.occupancy_to_msg(grid, HDR, margin_cells=2)
    data = np.asarray(msg.data, dtype=np.int8).reshape(msg.info.height, msg.info.width)  # rows along y
    col = int((0.55 - msg.info.origin.position.x) / msg.info.resolution)
    row = int((-0.25 - msg.info.origin.position.y) / msg.info.resolution)
    assert data[row, col] == 100 and data[row, col - 1] == 0
    assert (data == -1).sum() == data.size - 2


def test_subtask_record_round_trip() -> None:
    record = SubtaskRecord(episode_id="e", index=1, modality=GoalModality.IMAGE, success=True, spl=0.5,
                           path_length_m=2.0, geodesic_m=1.0, num_actions=3, stop_reason="stop",
                           distance_to_goal_m=0.1, actions=(DiscreteAction.TURN_LEFT, DiscreteAction.MOVE_FORWARD,
                                                            DiscreteAction.STOP), scene_id="s")
    assert result_msgs.msg_to_record(result_msgs.record_to_msg(record, HDR)) == record
    failed = SubtaskRecord(episode_id="e", index=2, modality=GoalModality.CATEGORY, success=False, spl=0.0,
                           path_length_m=2.0, geodesic_m=1.0, num_actions=1, stop_reason="stop",
                           distance_to_goal_m=3.0, actions=(DiscreteAction.STOP,), scene_id="s",
                           failure="wrong_instance", stop_detail="at chair #3 (confident match, score 0.64)")
    msg = result_msgs.record_to_msg(failed, HDR)
    assert msg.failure == "wrong_instance" and msg.stop_detail.startswith("at chair #3")
    assert result_msgs.msg_to_record(msg) == failed


@pytest.mark.parametrize("decision", [
    StopDecision(gave_up=False, reason="at sofa #2 (confident match, score 1.00)", category="sofa",
                 confident=True, target_xyz_m=(1.5, -0.25, 0.4)),
    StopDecision(gave_up=True, reason="nothing left to explore; recoveries tried: clear_collisions"),
])
def test_the_agents_account_of_its_stop_round_trips(decision: StopDecision) -> None:
    back = cv.msg_to_stop_decision(SubtaskOutcome(**cv.stop_decision_fields(decision)))
    assert back == decision


def test_an_outcome_without_an_account_has_none() -> None:
    assert cv.stop_decision_fields(None) == {}
    assert cv.msg_to_stop_decision(SubtaskOutcome(stop_reason="stop")) is None


# --------------------------------------------------------------------------------- approximate-time sync


def _part_msgs() -> dict[str, object]:
    """One message of every base part (their content is not read by add())."""
    return {part: object() for part in ("rgb", "depth", "info", "joints", "odom")}


def test_exact_sync_needs_one_stamp_for_every_part() -> None:
    from goat_ros.observation_sync import ObservationSync

    sync = ObservationSync(with_segmentation=False, camera_height_m=1.31)
    parts = _part_msgs()
    completed = [sync.add(p, 1000 if p != "odom" else 1001, m) for p, m in parts.items()]
    assert not any(completed)  # odometry one nanosecond off: never a set


def test_approximate_sync_groups_parts_around_each_image() -> None:
    from goat_ros.observation_sync import ObservationSync

    ms = 1_000_000
    sync = ObservationSync(with_segmentation=False, camera_height_m=1.31, max_skew_s=0.05)
    odom_msgs = {t: object() for t in (0, 33 * ms, 66 * ms, 100 * ms)}
    for t, m in odom_msgs.items():  # 30 Hz odometry
        assert not sync.add("odom", t, m)
    assert not sync.add("joints", 90 * ms, object())
    assert not sync.add("depth", 71 * ms, object())
    assert not sync.add("info", 70 * ms, object())
    assert sync.add("rgb", 70 * ms, "image")  # every part within 50 ms of the image: a set
    assert sync.latest_stamp_ns == 70 * ms
    assert sync._latest is not None and sync._latest.parts["odom"] is odom_msgs[66 * ms]  # the nearest one
    assert not sync.add("rgb", 60 * ms, "older image")  # older than the newest set: ignored
    assert not sync.add("rgb", 200 * ms, "later image")  # nothing else near it yet
    assert sync.add("depth", 190 * ms, object()) is False
    assert sync.add("info", 200 * ms, object()) is False
    assert sync.add("joints", 210 * ms, object()) is False
    assert sync.add("odom", 160 * ms, object()) is True  # the last part within 50 ms completes the 200 ms set
    assert sync.latest_stamp_ns == 200 * ms


def test_a_negative_tolerance_is_refused() -> None:
    from goat_ros.observation_sync import ObservationSync

    with pytest.raises(ValueError, match="max_skew_s"):
        ObservationSync(with_segmentation=False, camera_height_m=1.31, max_skew_s=-0.1)


def test_the_robot_bringup_syncs_approximately_and_user_overrides_win() -> None:
    from goat_ros.graph import SIM_SCENE_ID, bringup_overrides
    from goat_ros.params import ControllerParams

    assert ControllerParams().sync_tolerance_s == 0.0  # the simulator's exact sets are the default
    merged = bringup_overrides("stretch", {"controller": {"agent_config": "config/agent_no_memory.yaml"}})
    assert merged["controller"] == {"sync_tolerance_s": 0.05, "agent_config": "config/agent_no_memory.yaml"}
    assert bringup_overrides("stretch", {"controller": {"sync_tolerance_s": 0.1}})["controller"] == {
        "sync_tolerance_s": 0.1}
    assert bringup_overrides("sim", {}) == {"sim_bridge": {"scene_id": SIM_SCENE_ID}}  # streams at start-up
    assert bringup_overrides("sim", {"sim_bridge": {"scene_id": ""}}) == {"sim_bridge": {"scene_id": ""}}
