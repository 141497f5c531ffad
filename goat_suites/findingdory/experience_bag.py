"""A FindingDory experience video as a rosbag2 MCAP bag, and back.

One bag per experience (``goat-nav bench --suite findingdory --experience-bags DIR``: ``DIR/<episode id>/``),
written with the run recorder's bag layout and messages (:mod:`goat_ros.record`: MCAP storage, zstd chunks,
goat_interfaces typestore). Stamps are the experience's clock: the frame's time of day in nanoseconds since the
day's midnight. Per frame:

* ``/camera/color/image_raw/compressed`` (sensor_msgs/CompressedImage, ``"rgb8; jpeg compressed bgr8"``: what
  image_transport's compressed plugin writes) and ``/camera/aligned_depth_to_color/image_raw/compressedDepth``
  (``"16UC1; compressedDepth png"``: compressed_depth_image_transport's 12-byte header, then a 16-bit PNG of
  millimetres), both in the camera's optical frame; ``/camera/color/camera_info``;
* ``/odom`` and ``/tf`` (map -> odom -> base_link -> camera_link with the head tilt) as the simulator bridge
  publishes them; ``/joint_states`` with ``joint_head_pan`` and ``joint_head_tilt``;
* the gripper: ``/goat/gripper/closed`` and ``/goat/gripper/holding`` (std_msgs/Bool; holding = a grasp
  succeeded);
* with ground-truth perception only, ``/goat/ground_truth/segmentation/compressed`` (a 16-bit PNG of instance id
  + 1), and the simulator's annotation of those instances in ``metadata.yaml`` (custom data
  ``goat_nav.instance_annotation``: JSON ``{id: [category, colour, material]}``).

Size: the frames are stored as the video holds them (JPEG quality 90, lossless PNG depth), so a 405-frame
experience makes a ~40 MB bag (zstd adds little to compressed images), where raw images made ~230 MB.
:func:`read_experience_bag` rebuilds the :class:`~goat_suites.findingdory.experience_video.ExperienceVideo` byte for
byte (images; poses to float precision), so a memory can be built from a recorded bag (a robot's, with the
same topics) as from a run.
"""

from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np
import yaml
from rosbags.rosbag2 import Reader, ReaderError

from goat_core.types import CameraIntrinsics, Pose2D
from goat_ros.record import (
    CAMERA_INFO_TOPIC,
    CAMERA_INFO_TYPE,
    ODOM_TOPIC,
    ODOM_TYPE,
    OPTICAL_FRAME,
    RUN_INFO_KEY,
    TF_STATIC_TOPIC,
    TF_TOPIC,
    TF_TYPE,
    MessageFactory,
    RecordError,
    add_topic,
    make_typestore,
    open_bag,
)
from goat_suites.findingdory.experience_video import ExperienceVideo, InstanceAnnotation, Proprioception, VideoFrame

RGB_COMPRESSED_TOPIC = "/camera/color/image_raw/compressed"
DEPTH_COMPRESSED_TOPIC = "/camera/aligned_depth_to_color/image_raw/compressedDepth"
SEGMENTATION_TOPIC = "/goat/ground_truth/segmentation/compressed"
JOINT_STATES_TOPIC = "/joint_states"
GRIPPER_CLOSED_TOPIC = "/goat/gripper/closed"
GRIPPER_HOLDING_TOPIC = "/goat/gripper/holding"
COMPRESSED_TYPE = "sensor_msgs/msg/CompressedImage"
JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
BOOL_TYPE = "std_msgs/msg/Bool"
RGB_FORMAT = "rgb8; jpeg compressed bgr8"
DEPTH_FORMAT = "16UC1; compressedDepth png"
SEGMENTATION_FORMAT = "16UC1; png compressed mono16"
ANNOTATION_KEY = "goat_nav.instance_annotation"
# compressed_depth_image_transport's ConfigHeader: int32 format (INV_DEPTH = 0), float32 depthParam[2] (unused for
# 16-bit depth), little endian as the publishing machine writes it.
_DEPTH_HEADER = struct.Struct("<iff")
HEAD_JOINTS = ("joint_head_pan", "joint_head_tilt")

TOPICS: Mapping[str, str] = {
    RGB_COMPRESSED_TOPIC: COMPRESSED_TYPE, DEPTH_COMPRESSED_TOPIC: COMPRESSED_TYPE,
    CAMERA_INFO_TOPIC: CAMERA_INFO_TYPE, ODOM_TOPIC: ODOM_TYPE, TF_TOPIC: TF_TYPE, TF_STATIC_TOPIC: TF_TYPE,
    JOINT_STATES_TOPIC: JOINT_STATE_TYPE, GRIPPER_CLOSED_TOPIC: BOOL_TYPE, GRIPPER_HOLDING_TOPIC: BOOL_TYPE,
    SEGMENTATION_TOPIC: COMPRESSED_TYPE,
}


def _stamp_ns(time_s: float) -> int:
    return int(round(time_s * 1e9))


def write_experience_bag(path: os.PathLike[str] | str, video: ExperienceVideo,
                         run_info: Optional[Mapping[str, Any]] = None) -> Path:
    """Write ``video`` into a new bag folder ``path``; returns the folder. RecordError names a bad path."""
    store = make_typestore()
    make = MessageFactory(store)
    topics = {t: m for t, m in TOPICS.items() if t != SEGMENTATION_TOPIC or video.has_segmentation}
    annotation = {str(k): [a.category, a.colour, a.material] for k, a in sorted(video.annotation.items())}
    custom = {RUN_INFO_KEY: json.dumps(dict(run_info or {}), sort_keys=True, default=str)}
    if video.has_segmentation:
        custom[ANNOTATION_KEY] = json.dumps(annotation, sort_keys=True)
    writer = open_bag(Path(path), custom)
    try:
        conns = {t: add_topic(writer, store, t, m, latched=t == TF_STATIC_TOPIC) for t, m in topics.items()}

        def write(topic: str, stamp_ns: int, msg: Any) -> None:
            writer.write(conns[topic], stamp_ns, store.serialize_cdr(msg, topics[topic]))

        first_ns = _stamp_ns(video.frames[0].time_s) if video.frames else 0
        write(TF_STATIC_TOPIC, first_ns, make.msg(TF_TYPE, transforms=[make.optical_transform()]))
        for frame in video.frames:
            stamp = _stamp_ns(frame.time_s)
            optical = make.header(stamp, OPTICAL_FRAME)
            for topic, msg in make.camera_pose(frame.pose, frame.camera_tilt_rad, frame.camera_height_m,
                                               frame.intrinsics, stamp).items():
                write(topic, stamp, msg)
            write(JOINT_STATES_TOPIC, stamp, make.msg(
                JOINT_STATE_TYPE, header=make.header(stamp, ""), name=list(HEAD_JOINTS),
                position=np.array([0.0, frame.camera_tilt_rad]), velocity=np.zeros(0), effort=np.zeros(0)))
            write(GRIPPER_CLOSED_TOPIC, stamp, make.msg(BOOL_TYPE, data=frame.proprioception.gripper_closed))
            write(GRIPPER_HOLDING_TOPIC, stamp, make.msg(BOOL_TYPE, data=frame.proprioception.holding))
            write(DEPTH_COMPRESSED_TOPIC, stamp, _compressed(make, optical, DEPTH_FORMAT,
                                                             _DEPTH_HEADER.pack(0, 0.0, 0.0) + frame.depth_png))
            if frame.segmentation_png is not None:
                write(SEGMENTATION_TOPIC, stamp, _compressed(make, optical, SEGMENTATION_FORMAT,
                                                             frame.segmentation_png))
            write(RGB_COMPRESSED_TOPIC, stamp, _compressed(make, optical, RGB_FORMAT, frame.rgb_jpeg))
    finally:
        writer.close()
    return Path(path)


def _compressed(make: MessageFactory, header: Any, fmt: str, data: bytes) -> Any:
    return make.msg(COMPRESSED_TYPE, header=header, format=fmt, data=np.frombuffer(data, dtype=np.uint8))


# ----------------------------------------------------------------------------------------------- reading


def read_experience_bag(path: os.PathLike[str] | str) -> ExperienceVideo:
    """The experience video a bag holds (written by :func:`write_experience_bag`, or recorded with its topics).

    A frame is a stamp that has a colour image; its depth, camera info, odometry, head tilt and gripper state are
    the messages of the same stamp. RecordError names the bag, the stamp and what is missing."""
    folder = Path(path)
    store = make_typestore()
    by_stamp: dict[int, dict[str, Any]] = {}  # stamp -> topic -> message
    try:
        with Reader(folder) as reader:
            wanted = [c for c in reader.connections if c.topic in TOPICS and c.topic != TF_STATIC_TOPIC]
            for conn, stamp, raw in reader.messages(connections=wanted):
                by_stamp.setdefault(stamp, {})[conn.topic] = store.deserialize_cdr(raw, conn.msgtype)
    except (OSError, KeyError, ValueError, ReaderError) as exc:
        raise RecordError(f"cannot read experience bag {folder}: {exc}") from None
    info = yaml.safe_load((folder / "metadata.yaml").read_text(encoding="utf-8"))["rosbag2_bagfile_information"]
    annotation = _annotation((info.get("custom_data") or {}).get(ANNOTATION_KEY), folder)
    frames: list[VideoFrame] = []
    for stamp in sorted(by_stamp):
        if RGB_COMPRESSED_TOPIC in by_stamp[stamp]:
            frames.append(_frame(len(frames), stamp, by_stamp[stamp], folder))
    return ExperienceVideo(tuple(frames), annotation)


def _annotation(raw: Optional[str], folder: Path) -> dict[int, InstanceAnnotation]:
    if raw is None:
        return {}
    try:
        table = json.loads(raw)
        return {int(k): InstanceAnnotation(str(v[0]), str(v[1]), str(v[2])) for k, v in table.items()}
    except (json.JSONDecodeError, AttributeError, ValueError, IndexError, TypeError) as exc:
        raise RecordError(f"{folder}: metadata custom data {ANNOTATION_KEY} is not an annotation table: {exc}"
                          ) from None


def _frame(index: int, stamp: int, parts: dict[str, Any], folder: Path) -> VideoFrame:
    missing = [t for t in (DEPTH_COMPRESSED_TOPIC, CAMERA_INFO_TOPIC, ODOM_TOPIC, TF_TOPIC, GRIPPER_CLOSED_TOPIC,
                           GRIPPER_HOLDING_TOPIC) if t not in parts]
    if missing:
        raise RecordError(f"{folder}: the frame stamped {stamp} ns has a colour image but no {missing}")
    depth = bytes(parts[DEPTH_COMPRESSED_TOPIC].data)
    if not parts[DEPTH_COMPRESSED_TOPIC].format.endswith("compressedDepth png") or len(depth) <= _DEPTH_HEADER.size:
        raise RecordError(f"{folder}: depth at {stamp} ns is not {DEPTH_FORMAT!r} but "
                          f"{parts[DEPTH_COMPRESSED_TOPIC].format!r}")
    info = parts[CAMERA_INFO_TOPIC]
    intrinsics = CameraIntrinsics(width=int(info.width), height=int(info.height), fx=float(info.k[0]),
                                  fy=float(info.k[4]), cx=float(info.k[2]), cy=float(info.k[5]))
    odom = parts[ODOM_TOPIC].pose.pose
    q = odom.orientation
    pose = Pose2D(float(odom.position.x), float(odom.position.y),
                  math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z)))
    camera = next((t for t in parts[TF_TOPIC].transforms if t.child_frame_id == "camera_link"), None)
    if camera is None:
        raise RecordError(f"{folder}: /tf at {stamp} ns has no base_link -> camera_link transform")
    # camera_link's pitch p (REP 103, positive nose-down) is minus the head tilt; rotation about y only.
    rot = camera.transform.rotation
    tilt = -2.0 * math.atan2(float(rot.y), float(rot.w))
    seg = parts.get(SEGMENTATION_TOPIC)
    return VideoFrame(index=index, time_s=stamp / 1e9, pose=pose, camera_tilt_rad=tilt,
                      camera_height_m=float(camera.transform.translation.z), intrinsics=intrinsics,
                      proprioception=Proprioception(bool(parts[GRIPPER_CLOSED_TOPIC].data),
                                                    bool(parts[GRIPPER_HOLDING_TOPIC].data)),
                      rgb_jpeg=bytes(parts[RGB_COMPRESSED_TOPIC].data), depth_png=depth[_DEPTH_HEADER.size:],
                      segmentation_png=None if seg is None else bytes(seg.data))
