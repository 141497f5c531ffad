"""`goat-nav bench --record RUN.mcap`: the run as a rosbag2 bag with MCAP storage, written without ROS.

The bag is a rosbag2 folder, as ``ros2 bag record -s mcap`` writes it: ``RUN/metadata.yaml`` and ``RUN/RUN.mcap``
(``--record RUN.mcap`` and ``--record RUN`` both name the folder ``RUN``). ``ros2 bag info RUN``, ``ros2 bag play
RUN``, Foxglove and the ``mcap`` tools read it. Messages are serialised with the PyPI ``rosbags`` package, which
writes the same CDR bytes as rclpy; the goat_interfaces types are registered from their ``.msg`` files, so their
type hashes are those of the built package.

Topics follow the simulator bridge's contract (goat_ros.topics; a test keeps the names equal):

* per observation: RGB (rgb8) and depth (32FC1, metres) images and the camera info, stamped in the camera's
  optical frame; odometry odom -> base_link; ``/tf`` with map -> odom (identity: in the simulator the episode
  frame is both), odom -> base_link and base_link -> camera_link (head height and tilt); once on ``/tf_static``
  camera_link -> camera_color_optical_frame;
* per subtask: its goal (goat_interfaces/Goal) before the first action and its scored result
  (goat_interfaces/SubtaskResult) after the last;
* per action: the discrete action (goat_interfaces/action/ExecuteAction_Goal, the goal of the action server that
  executes it in the ROS graph).

Time is simulated, so two runs of the same episodes give identical bags: the clock starts at 0 and advances one
``step_period_ns`` per action. An observation is stamped with the time of the action taken on it, so an action
and the observation it answers share one stamp.

The ROS graph's ``recorder`` node (goat_ros.recorder_node, ``goat-nav bench --ros --record``) writes its bags
through :class:`CdrBagWriter`: the same folder layout, MCAP storage with zstd chunks, ``goat_nav.*`` custom data
and typestore (:func:`open_bag`, :func:`make_typestore`), filled with the CDR bytes that came over the wire.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Mapping, Optional, Protocol

import numpy as np
from rosbags.interfaces import (
    Connection,
    Nodetype,
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)

from goat_core.errors import GoatError
from goat_core.types import CameraIntrinsics, DiscreteAction, Goal, GoalModality, Observation, Pose2D

if TYPE_CHECKING:  # rosbags' writer and type system load only when a bag is written (a run without --record, and
    # every suite and command that imports this module for its paths and names, does without them: ~80 ms)
    from rosbags.rosbag2 import Writer
    from rosbags.typesys.store import Typestore

# Topic and frame names: the same strings as goat_ros.topics (which needs ROS on the path; this module does not).
RGB_TOPIC = "/camera/color/image_raw"
DEPTH_TOPIC = "/camera/aligned_depth_to_color/image_raw"
CAMERA_INFO_TOPIC = "/camera/color/camera_info"
ODOM_TOPIC = "/odom"
TF_TOPIC = "/tf"
TF_STATIC_TOPIC = "/tf_static"
GOAL_TOPIC = "/goat/goal"
RESULT_TOPIC = "/goat/subtask_result"
ACTION_TOPIC = "/goat/action"  # no graph topic: the graph sends actions as goals of /goat/execute_action
MAP_FRAME = "map"
ODOM_FRAME = "odom"
BASE_FRAME = "base_link"
CAMERA_FRAME = "camera_link"
OPTICAL_FRAME = "camera_color_optical_frame"

IMAGE_TYPE = "sensor_msgs/msg/Image"
CAMERA_INFO_TYPE = "sensor_msgs/msg/CameraInfo"
ODOM_TYPE = "nav_msgs/msg/Odometry"
TF_TYPE = "tf2_msgs/msg/TFMessage"
GOAL_TYPE = "goat_interfaces/msg/Goal"
RESULT_TYPE = "goat_interfaces/msg/SubtaskResult"
ACTION_TYPE = "goat_interfaces/action/ExecuteAction_Goal"

TOPICS: Mapping[str, str] = {
    RGB_TOPIC: IMAGE_TYPE, DEPTH_TOPIC: IMAGE_TYPE, CAMERA_INFO_TOPIC: CAMERA_INFO_TYPE, ODOM_TOPIC: ODOM_TYPE,
    TF_TOPIC: TF_TYPE, TF_STATIC_TOPIC: TF_TYPE, GOAL_TOPIC: GOAL_TYPE, RESULT_TOPIC: RESULT_TYPE,
    ACTION_TOPIC: ACTION_TYPE,
}

_ZERO = QosTime(0, 0)  # rmw's "default" duration: no deadline, infinite lifespan
# Static transforms are latched (as tf2_ros' static broadcaster offers them), so `ros2 bag play` latches them too.
LATCHED_QOS = Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL, _ZERO, _ZERO,
               QosLiveliness.AUTOMATIC, _ZERO, False)

RUN_INFO_KEY = "goat_nav.run"  # metadata.yaml custom_data: the run's settings as JSON (both writers)

DEFAULT_STEP_PERIOD_NS = 100_000_000  # 0.1 s of simulated time per action: 10 actions a second on playback

# goat_interfaces in the source tree: <repo>/ros_ws/src/goat_interfaces, beside this package (installed from <repo>).
INTERFACES_DIR = Path(__file__).resolve().parents[2] / "goat_interfaces"


class RecordError(GoatError, ValueError):
    """The bag cannot be written: the message names the path or the value at fault."""


def bag_folder(path: os.PathLike[str] | str) -> Path:
    """The rosbag2 folder of ``--record PATH``: PATH without a trailing ``.mcap``."""
    p = Path(path)
    return p.with_suffix("") if p.suffix == ".mcap" else p


def check_bag_path(path: os.PathLike[str] | str) -> Path:
    """The bag folder of ``path`` if a new bag can be created there; RecordError naming the problem if not.

    Called before a run starts, so that a bad path fails in a second rather than after the run.
    """
    folder = bag_folder(path)
    if not folder.name or folder.name in (".", ".."):
        raise RecordError(f"cannot record to {str(path)!r}: name a new bag folder or RUN.mcap")
    if folder.exists() or folder.is_symlink():
        raise RecordError(f"cannot record to {path}: {folder} already exists (a rosbag2 bag is never "
                          "overwritten; remove it or choose another name)")
    ancestor = folder.parent.absolute()
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise RecordError(f"cannot record to {path}: {ancestor} is not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise RecordError(f"cannot record to {path}: folder {ancestor} is not writable")
    return folder


def make_typestore(interfaces_dir: Path = INTERFACES_DIR) -> Typestore:
    """ROS 2 Jazzy's standard types plus goat_interfaces' messages and the goal of its ExecuteAction."""
    msg_dir, action_file = interfaces_dir / "msg", interfaces_dir / "action" / "ExecuteAction.action"
    msg_files = sorted(msg_dir.glob("*.msg"))
    if not msg_files or not action_file.is_file():
        raise RecordError(f"goat_interfaces definitions not found: expected {msg_dir}/*.msg and {action_file} "
                          "(recording needs the goat_nav source tree)")
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    types: dict[str, Any] = {}
    for f in msg_files:
        types.update(get_types_from_msg(f.read_text(encoding="utf-8"), f"goat_interfaces/msg/{f.stem}"))
    goal_part = action_file.read_text(encoding="utf-8").split("\n---")[0]  # request --- result --- feedback
    types.update(get_types_from_msg(goal_part, ACTION_TYPE))
    store.register(types)
    return store


def open_bag(folder: Path, custom_data: Mapping[str, str]) -> Writer:
    """A new rosbag2 bag at ``folder``, opened: MCAP storage, zstd chunks, ``custom_data`` for metadata.yaml.

    Both writers (:class:`RunRecorder`, :class:`CdrBagWriter`) create their bags here. RecordError if the folder
    cannot be created.
    """
    check_bag_path(folder)
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer, WriterError

    writer = Writer(folder, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP)
    # zstd chunks inside the MCAP file (rosbag2's mcap storage reads them); rendered frames shrink ~10x.
    writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    for key, value in custom_data.items():
        writer.set_custom_data(key, value)
    try:
        writer.open()
    except (OSError, WriterError) as exc:
        raise RecordError(f"cannot create bag {folder}: {exc}") from None
    return writer


def add_topic(writer: Writer, store: Typestore, topic: str, msgtype: str, latched: bool = False) -> Connection:
    """Register ``topic``; a latched topic is marked transient_local in metadata.yaml, so playback latches it."""
    return writer.add_connection(topic, msgtype, typestore=store, offered_qos_profiles=[LATCHED_QOS] if latched else [])


# ----------------------------------------------------------------------------- serialised messages (ROS graph)
HEADER_TYPE = "std_msgs/msg/Header"
_ENCAPSULATION_BYTES = 4  # CDR: 2-byte representation id (0x0000 big, 0x0001 little endian), 2 option bytes
_BYTE_ORDER = {b"\x00\x00": ">", b"\x00\x01": "<"}


@dataclass(frozen=True)
class StampLocation:
    """Where a type's own stamp lies in its CDR payload (offsets after the 4-byte encapsulation header)."""

    stamp_offset: int  # builtin_interfaces/Time: int32 sec, uint32 nanosec
    count_offset: Optional[int] = None  # the stamp is in a sequence's first element: the sequence length's offset


def stamp_location(store: Typestore, msgtype: str) -> Optional[StampLocation]:
    """The stamp of ``msgtype``: its leading std_msgs/Header, or that of the first element of a leading sequence
    (tf2_msgs/TFMessage, visualization_msgs/MarkerArray); None for a type without one (std_msgs/String).

    A leading field sits at payload offset 0 and a Header starts with an int32 (4-byte aligned), so a stamp is at
    0, or at 4 behind the uint32 length of a leading sequence.
    """
    fields = store.fielddefs[msgtype][1]
    if not fields:
        return None
    kind, detail = fields[0][1]
    if kind == Nodetype.NAME and isinstance(detail, str):
        return StampLocation(0) if detail == HEADER_TYPE else stamp_location(store, detail)
    if kind == Nodetype.SEQUENCE and isinstance(detail, tuple) and isinstance(detail[0], tuple):
        element_kind, element_type = detail[0]  # (element type, bound)
        if element_kind == Nodetype.NAME and isinstance(element_type, str):
            inner = stamp_location(store, element_type)
            if inner is not None and inner.count_offset is None:
                return StampLocation(4 + inner.stamp_offset, count_offset=0)
    return None


def cdr_stamp_ns(data: bytes | memoryview, location: Optional[StampLocation]) -> Optional[int]:
    """The stamp (ns) of one CDR-serialised message, or None: no stamp in the type, an empty leading sequence,
    a zero stamp (unset: tf2's static transforms are often sent so), or an encoding other than plain CDR."""
    if location is None or len(data) < _ENCAPSULATION_BYTES:
        return None
    order = _BYTE_ORDER.get(bytes(data[:2]))
    if order is None:
        return None
    if location.count_offset is not None:
        at = _ENCAPSULATION_BYTES + location.count_offset
        if len(data) < at + 4 or struct.unpack_from(f"{order}I", data, at)[0] == 0:
            return None
    at = _ENCAPSULATION_BYTES + location.stamp_offset
    if len(data) < at + 8:
        return None
    sec, nanosec = struct.unpack_from(f"{order}iI", data, at)
    stamp_ns = sec * 1_000_000_000 + nanosec
    return stamp_ns if stamp_ns > 0 else None


class CdrBagWriter:
    """Writes messages that arrive serialised (CDR, as rclpy hands them over with ``raw=True``) into a new bag.

    The storage side of the ROS graph's recorder node; use as a context manager or call :meth:`open` and
    :meth:`close` (the bag is readable only once closed: MCAP footer and metadata.yaml).

    Log time of a message: its own stamp (the leading header's, see :func:`stamp_location`) where it has a non-zero
    one, else ``receive_ns``. Stamps make a bag of the bench graph reproducible: an observation set's messages and
    the goal that refers to it share one stamp, and the order of the bag follows the graph's step protocol, not the
    order in which DDS delivered the topics to the recorder.
    """

    def __init__(self, path: os.PathLike[str] | str, topics: Mapping[str, str], latched: Collection[str] = (),
                 custom_data: Optional[Mapping[str, str]] = None, interfaces_dir: Path = INTERFACES_DIR) -> None:
        self.folder = check_bag_path(path)
        if not topics:
            raise RecordError("no topics to record")
        stray = sorted(set(latched) - set(topics))
        if stray:
            raise RecordError(f"latched topics {stray} are not among the recorded topics {sorted(topics)}")
        self.topics = dict(topics)
        self.latched = frozenset(latched)
        self._custom_data = dict(custom_data or {})
        self._store = make_typestore(interfaces_dir)
        for topic, msgtype in self.topics.items():
            if msgtype not in self._store.fielddefs:
                raise RecordError(f"cannot record {topic}: message type {msgtype!r} is unknown (known: the standard "
                                  "ROS 2 Jazzy types and goat_interfaces)")
        self._stamps = {topic: stamp_location(self._store, msgtype) for topic, msgtype in self.topics.items()}
        self._writer: Optional[Writer] = None
        self._connections: dict[str, Connection] = {}
        self.message_counts: dict[str, int] = {topic: 0 for topic in self.topics}

    @property
    def is_open(self) -> bool:
        return self._writer is not None

    def open(self) -> None:
        if self._writer is not None:
            raise RecordError(f"bag {self.folder} is already open")
        writer = open_bag(self.folder, self._custom_data)
        self._writer = writer
        self._connections = {topic: add_topic(writer, self._store, topic, msgtype, latched=topic in self.latched)
                             for topic, msgtype in self.topics.items()}

    def close(self) -> None:
        """Finish the MCAP file and write metadata.yaml; closing a closed writer does nothing."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def __enter__(self) -> CdrBagWriter:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write(self, topic: str, data: bytes | memoryview, receive_ns: int) -> int:
        """Store one serialised message of ``topic``; return the log time it got (ns)."""
        if self._writer is None:
            raise RecordError(f"bag {self.folder} is not open")
        if topic not in self._connections:
            raise RecordError(f"topic {topic!r} is not recorded in {self.folder}; recorded: {sorted(self.topics)}")
        stamp_ns = cdr_stamp_ns(data, self._stamps[topic])
        log_ns = stamp_ns if stamp_ns is not None else receive_ns
        if log_ns < 0:
            raise RecordError(f"{topic}: log time must not be negative, got {log_ns} ns")
        self._writer.write(self._connections[topic], log_ns, data)
        self.message_counts[topic] += 1
        return log_ns


class MessageFactory:
    """ROS 2 messages of the simulator bridge's contract, as ``rosbags`` objects of one typestore.

    Shared by the run recorder and the experience bag writer (goat_suites.findingdory.experience_bag)."""

    def __init__(self, store: Typestore) -> None:
        self.store = store

    def msg(self, msgtype: str, **fields: Any) -> Any:
        return self.store.types[msgtype](**fields)

    def header(self, stamp_ns: int, frame_id: str) -> Any:
        stamp = self.msg("builtin_interfaces/msg/Time", sec=stamp_ns // 1_000_000_000,
                         nanosec=stamp_ns % 1_000_000_000)
        return self.msg("std_msgs/msg/Header", stamp=stamp, frame_id=frame_id)

    def image(self, array: np.ndarray, encoding: str, header: Any) -> Any:
        """An Image of a C-contiguous little-endian array (rgb8: (H, W, 3) uint8; 32FC1: (H, W) float32)."""
        data = np.ascontiguousarray(array, dtype=np.uint8 if encoding == "rgb8" else "<f4")
        height, width = data.shape[:2]
        return self.msg(IMAGE_TYPE, header=header, height=height, width=width, encoding=encoding,
                        is_bigendian=0, step=data.strides[0], data=data.view(np.uint8).reshape(-1))

    def camera_info(self, intr: CameraIntrinsics, header: Any) -> Any:
        """A distortion-free pinhole CameraInfo (plumb_bob, zero coefficients), as the simulator bridge sends."""
        k = np.array([intr.fx, 0.0, intr.cx, 0.0, intr.fy, intr.cy, 0.0, 0.0, 1.0])
        p = np.array([intr.fx, 0.0, intr.cx, 0.0, 0.0, intr.fy, intr.cy, 0.0, 0.0, 0.0, 1.0, 0.0])
        roi = self.msg("sensor_msgs/msg/RegionOfInterest", x_offset=0, y_offset=0, height=0, width=0,
                       do_rectify=False)
        return self.msg(CAMERA_INFO_TYPE, header=header, height=intr.height, width=intr.width,
                        distortion_model="plumb_bob", d=np.zeros(5), k=k, r=np.eye(3).reshape(-1), p=p,
                        binning_x=0, binning_y=0, roi=roi)

    def vector(self, x: float, y: float, z: float) -> Any:
        return self.msg("geometry_msgs/msg/Vector3", x=float(x), y=float(y), z=float(z))

    def quaternion(self, x: float, y: float, z: float, w: float) -> Any:
        return self.msg("geometry_msgs/msg/Quaternion", x=float(x), y=float(y), z=float(z), w=float(w))

    def yaw(self, yaw_rad: float) -> Any:
        return self.quaternion(0.0, 0.0, math.sin(yaw_rad / 2.0), math.cos(yaw_rad / 2.0))

    def transform(self, header: Any, child: str, xyz: tuple[float, float, float], rotation: Any) -> Any:
        transform = self.msg("geometry_msgs/msg/Transform", translation=self.vector(*xyz), rotation=rotation)
        return self.msg("geometry_msgs/msg/TransformStamped", header=header, child_frame_id=child,
                        transform=transform)

    def optical_transform(self) -> Any:
        # camera_link (x forward, z up) -> optical frame (z forward, x right, y down): roll -90 deg, yaw -90 deg.
        return self.transform(self.header(0, CAMERA_FRAME), OPTICAL_FRAME, (0.0, 0.0, 0.0),
                              self.quaternion(-0.5, 0.5, -0.5, 0.5))

    def odometry(self, pose: Pose2D, header: Any) -> Any:
        point = self.msg("geometry_msgs/msg/Point", x=float(pose.x_m), y=float(pose.y_m), z=0.0)
        with_cov = self.msg("geometry_msgs/msg/PoseWithCovariance",
                            pose=self.msg("geometry_msgs/msg/Pose", position=point, orientation=self.yaw(pose.yaw_rad)),
                            covariance=np.zeros(36))
        twist = self.msg("geometry_msgs/msg/Twist", linear=self.vector(0, 0, 0), angular=self.vector(0, 0, 0))
        return self.msg(ODOM_TYPE, header=header, child_frame_id=BASE_FRAME, pose=with_cov,
                        twist=self.msg("geometry_msgs/msg/TwistWithCovariance", twist=twist, covariance=np.zeros(36)))

    def camera_pose(self, pose: Pose2D, camera_tilt_rad: float, camera_height_m: float, intrinsics: CameraIntrinsics,
                    stamp_ns: int) -> dict[str, Any]:
        """Odometry, the /tf chain map -> odom -> base_link -> camera_link and the camera info of one view."""
        odom = self.header(stamp_ns, ODOM_FRAME)
        # REP 103 pitch is positive nose-down, so a head tilted up by t has pitch -t (rotation about y).
        half = -camera_tilt_rad / 2.0
        transforms = [
            self.transform(self.header(stamp_ns, MAP_FRAME), ODOM_FRAME, (0.0, 0.0, 0.0),
                           self.quaternion(0.0, 0.0, 0.0, 1.0)),
            self.transform(odom, BASE_FRAME, (pose.x_m, pose.y_m, 0.0), self.yaw(pose.yaw_rad)),
            self.transform(self.header(stamp_ns, BASE_FRAME), CAMERA_FRAME, (0.0, 0.0, camera_height_m),
                           self.quaternion(0.0, math.sin(half), 0.0, math.cos(half))),
        ]
        return {ODOM_TOPIC: self.odometry(pose, odom), TF_TOPIC: self.msg(TF_TYPE, transforms=transforms),
                CAMERA_INFO_TOPIC: self.camera_info(intrinsics, self.header(stamp_ns, OPTICAL_FRAME))}


@dataclass(frozen=True, eq=False)
class RecordedGoal:
    """A subtask goal as /goat/goal carries it (goat_interfaces/Goal); unset fields stay empty."""

    episode_id: str
    subtask_index: int
    modality: GoalModality
    category: str = ""  # object goals: the words the agent is given
    text: str = ""  # description goals
    image: Optional[np.ndarray] = None  # image goals: (H, W, 3) uint8 RGB picture, when it is at hand
    image_hfov_rad: float = 0.0  # image goals; 0 = unknown
    level: str = ""  # LangMap level, "" = none
    target_id: str = ""  # benchmark-side id of the goal, for scoring only
    max_actions: int = 0  # action budget of the subtask, STOP included; 0 = no limit

    @classmethod
    def from_goal(cls, goal: Goal, episode_id: str, subtask_index: int, max_actions: int) -> RecordedGoal:
        return cls(episode_id=episode_id, subtask_index=subtask_index, modality=goal.modality,
                   category=goal.category or "", text=goal.text or "", image=goal.image,
                   image_hfov_rad=float(goal.image_hfov_rad or 0.0), level=goal.level or "",
                   target_id=goal.target_id or "", max_actions=max_actions)


class ResultRecord(Protocol):
    """What /goat/result carries of a scored subtask (goat_interfaces/SubtaskResult). The benchmark's record,
    goat_suites.common.results.SubtaskRecord, is one; read-only fields, as on that frozen dataclass."""

    @property
    def episode_id(self) -> str: ...
    @property
    def scene_id(self) -> Optional[str]: ...
    @property
    def index(self) -> int: ...
    @property
    def modality(self) -> GoalModality: ...
    @property
    def success(self) -> bool: ...
    @property
    def spl(self) -> float: ...
    @property
    def path_length_m(self) -> float: ...
    @property
    def geodesic_m(self) -> Optional[float]: ...
    @property
    def distance_to_goal_m(self) -> Optional[float]: ...
    @property
    def num_actions(self) -> int: ...
    @property
    def stop_reason(self) -> str: ...
    @property
    def error(self) -> Optional[str]: ...
    @property
    def actions(self) -> Optional[tuple[DiscreteAction, ...]]: ...
    @property
    def failure(self) -> Optional[str]: ...
    @property
    def stop_detail(self) -> Optional[str]: ...


class RunRecorder:
    """Writes one run into a new rosbag2 MCAP bag; use as a context manager (the bag is closed on any exit).

    Call :meth:`on_goal` when a subtask starts, :meth:`on_step` for every action with the observation it was
    chosen on, and :meth:`on_result` when the subtask is scored. A run cut short (an error, Ctrl-C) still leaves
    a complete, readable bag of what was recorded.
    """

    def __init__(self, path: os.PathLike[str] | str, step_period_ns: int = DEFAULT_STEP_PERIOD_NS,
                 run_info: Optional[Mapping[str, Any]] = None, interfaces_dir: Path = INTERFACES_DIR) -> None:
        if isinstance(step_period_ns, bool) or not isinstance(step_period_ns, int) or step_period_ns <= 0:
            raise RecordError(f"step_period_ns must be a positive integer, got {step_period_ns!r}")
        self.folder = check_bag_path(path)
        self.step_period_ns = step_period_ns
        self._run_info = json.dumps(dict(run_info or {}), sort_keys=True, default=str)
        self._store = make_typestore(interfaces_dir)
        self._make = MessageFactory(self._store)
        self._writer: Optional[Writer] = None
        self._connections: dict[str, Any] = {}
        self._num_actions = 0  # the simulated clock: actions recorded so far
        self._last_obs: Optional[Observation] = None
        self.message_counts: dict[str, int] = {topic: 0 for topic in TOPICS}

    # ------------------------------------------------------------------------------------------- lifetime
    @property
    def mcap_path(self) -> Path:
        """The MCAP file inside the bag folder."""
        return self.folder / f"{self.folder.name}.mcap"

    def open(self) -> None:
        if self._writer is not None:
            raise RecordError(f"bag {self.folder} is already open")
        writer = open_bag(self.folder, {RUN_INFO_KEY: self._run_info,
                                        "goat_nav.step_period_ns": str(self.step_period_ns)})
        self._writer = writer
        self._connections = {
            topic: add_topic(writer, self._store, topic, msgtype, latched=topic == TF_STATIC_TOPIC)
            for topic, msgtype in TOPICS.items()}
        self._write(TF_STATIC_TOPIC, 0, self._msg(TF_TYPE, transforms=[self._optical_transform()]))

    def close(self) -> None:
        """Finish the MCAP file and write metadata.yaml; closing a closed recorder does nothing."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def __enter__(self) -> RunRecorder:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def now_ns(self) -> int:
        """Simulated time: the stamp of the next action."""
        return self._num_actions * self.step_period_ns

    @property
    def typestore(self) -> Typestore:
        return self._store

    def append(self, topic: str, stamp_ns: int, msg: Any) -> None:
        """Write a message built elsewhere (a worker's episode, goat_suites.common.bag_merge) with log time
        ``stamp_ns``."""
        self._write(topic, stamp_ns, msg)

    def advance_clock(self, num_actions: int) -> None:
        """Move the simulated clock on by ``num_actions`` actions recorded elsewhere (goat_suites.common.bag_merge)."""
        self._num_actions += num_actions

    # ------------------------------------------------------------------------------------------ callbacks
    def on_goal(self, goal: RecordedGoal) -> None:
        self._write(GOAL_TOPIC, self.now_ns, self._goal_msg(goal, self.now_ns))

    def on_step(self, obs: Observation, action: DiscreteAction) -> None:
        """Record the observation (once: after STOP the next subtask starts on the same one) and the action."""
        stamp_ns = self.now_ns
        if obs is not self._last_obs:
            self._write_observation(obs, stamp_ns)
            self._last_obs = obs
        self._write(ACTION_TOPIC, stamp_ns, self._msg(ACTION_TYPE, action=int(action)))
        self._num_actions += 1

    def on_result(self, record: ResultRecord) -> None:
        actions = np.array([int(a) for a in record.actions or ()], dtype=np.uint8)

        def unknown_is_nan(value: Optional[float]) -> float:
            return math.nan if value is None else float(value)

        msg = self._msg(RESULT_TYPE, header=self._header(self.now_ns, MAP_FRAME), episode_id=record.episode_id,
                        scene_id=record.scene_id or "", subtask_index=record.index,
                        modality=record.modality.value, success=record.success, spl=float(record.spl),
                        path_length_m=float(record.path_length_m), geodesic_m=unknown_is_nan(record.geodesic_m),
                        distance_to_goal_m=unknown_is_nan(record.distance_to_goal_m),
                        num_actions=record.num_actions, stop_reason=record.stop_reason, error=record.error or "",
                        actions=actions, failure=record.failure or "", stop_detail=record.stop_detail or "")
        self._write(RESULT_TOPIC, self.now_ns, msg)

    # ---------------------------------------------------------------------------------------- messages
    def _write(self, topic: str, stamp_ns: int, msg: Any) -> None:
        if self._writer is None:
            raise RecordError(f"bag {self.folder} is not open; use the recorder as a context manager")
        self._writer.write(self._connections[topic], stamp_ns, self._store.serialize_cdr(msg, TOPICS[topic]))
        self.message_counts[topic] += 1

    def _msg(self, msgtype: str, **fields: Any) -> Any:
        return self._make.msg(msgtype, **fields)

    def _header(self, stamp_ns: int, frame_id: str) -> Any:
        return self._make.header(stamp_ns, frame_id)

    def _image(self, array: np.ndarray, encoding: str, header: Any) -> Any:
        return self._make.image(array, encoding, header)

    def _optical_transform(self) -> Any:
        return self._make.optical_transform()

    def _write_observation(self, obs: Observation, stamp_ns: int) -> None:
        optical = self._header(stamp_ns, OPTICAL_FRAME)
        for topic, msg in self._make.camera_pose(obs.pose, obs.camera_tilt_rad, obs.camera_height_m,
                                                 obs.intrinsics, stamp_ns).items():
            self._write(topic, stamp_ns, msg)
        self._write(DEPTH_TOPIC, stamp_ns, self._image(obs.depth_m, "32FC1", optical))
        self._write(RGB_TOPIC, stamp_ns, self._image(obs.rgb, "rgb8", optical))

    def _goal_msg(self, goal: RecordedGoal, stamp_ns: int) -> Any:
        header = self._header(stamp_ns, MAP_FRAME)
        if goal.image is not None:
            image = self._image(goal.image, "rgb8", header)  # the goal's header, as goat_ros sends it
        else:  # an empty Image, as a default-constructed message is
            image = self._msg(IMAGE_TYPE, header=self._header(0, ""), height=0, width=0, encoding="",
                              is_bigendian=0, step=0, data=np.zeros(0, dtype=np.uint8))
        return self._msg(GOAL_TYPE, header=header, episode_id=goal.episode_id, subtask_index=goal.subtask_index,
                         modality=goal.modality.value, category=goal.category, text=goal.text, image=image,
                         image_hfov_rad=float(goal.image_hfov_rad), level=goal.level, target_id=goal.target_id,
                         max_actions=goal.max_actions)
