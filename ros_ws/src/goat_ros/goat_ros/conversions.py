"""Message <-> numpy/dataclass conversions, at the boundary of every node. Pure functions, no node state.

Conventions: images are row-major, row 0 at the top; ``rgb8`` is (H, W, 3) uint8; depth is ``32FC1`` metres along
the optical axis (``16UC1`` millimetres, as the RealSense driver publishes, is accepted on input); ground-truth
segmentation is ``32SC1`` instance ids with -1 = no instance. Poses are REP 103 (x forward, y left, yaw
counter-clockwise from +x).
"""

from __future__ import annotations

import array
import math
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, PoseStamped, Quaternion, TransformStamped
from geometry_msgs.msg import Pose2D as Pose2DMsg
from nav_msgs.msg import OccupancyGrid as OccupancyGridMsg
from nav_msgs.msg import Odometry, Path
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Header
from visualization_msgs.msg import Marker, MarkerArray

from goat_core.errors import GoatError, InvalidGoalError
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.matching.ranking import Ranking
from goat_core.types import (
    CameraIntrinsics,
    Goal,
    GoalModality,
    Instance,
    InstanceView,
    Pose2D,
    StopDecision,
)
from goat_interfaces.msg import Goal as GoalMsg
from goat_interfaces.msg import (
    GoalMatches,
    InstanceDetail,
    InstanceLabels,
    InstanceMemory,
    Instances,
    SubtaskOutcome,
)
from goat_interfaces.msg import Instance as InstanceMsg
from goat_interfaces.msg import InstanceView as InstanceViewMsg


class ConversionError(GoatError, ValueError):
    """A message cannot be converted: the text names the field and what was expected."""


# ------------------------------------------------------------------------------------------------- time


def time_from_ns(stamp_ns: int) -> Time:
    return Time(sec=int(stamp_ns // 1_000_000_000), nanosec=int(stamp_ns % 1_000_000_000))


def ns_from_time(stamp: Time) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def header(stamp_ns: int, frame_id: str) -> Header:
    return Header(stamp=time_from_ns(stamp_ns), frame_id=frame_id)


# ----------------------------------------------------------------------------------------------- images

_CHANNELS = {"rgb8": (np.uint8, 3), "bgr8": (np.uint8, 3), "32FC1": (np.float32, 1), "16UC1": (np.uint16, 1),
             "32SC1": (np.int32, 1), "mono8": (np.uint8, 1)}


def array_to_image(array: np.ndarray, encoding: str, hdr: Header) -> Image:
    """Pack a C-contiguous array as a sensor_msgs/Image of ``encoding`` (little-endian)."""
    dtype, channels = _CHANNELS[encoding]
    data = np.ascontiguousarray(array, dtype=dtype)
    expected_ndim = 3 if channels > 1 else 2
    if data.ndim != expected_ndim or (channels > 1 and data.shape[2] != channels):
        raise ConversionError(f"{encoding} image needs shape (H, W{', 3' if channels > 1 else ''}), "
                              f"got {data.shape}")
    height, width = data.shape[:2]
    msg = Image(header=hdr, height=height, width=width, encoding=encoding, is_bigendian=0,
                step=width * channels * data.itemsize)
    msg.data = data.tobytes()
    return msg


def image_to_array(msg: Image, encodings: Sequence[str]) -> np.ndarray:
    """Unpack an Image whose encoding is one of ``encodings``; raises ConversionError naming what is wrong."""
    if msg.encoding not in encodings:
        raise ConversionError(f"image encoding must be one of {list(encodings)}, got {msg.encoding!r}")
    dtype, channels = _CHANNELS[msg.encoding]
    itemsize = np.dtype(dtype).itemsize
    row_bytes = msg.width * channels * itemsize
    if msg.height == 0 or msg.width == 0:
        raise ConversionError(f"image is empty: {msg.width}x{msg.height}")
    if msg.step < row_bytes or len(msg.data) != msg.step * msg.height:
        raise ConversionError(f"image of {msg.width}x{msg.height} {msg.encoding} needs step >= {row_bytes} and "
                              f"step*height bytes, got step {msg.step} and {len(msg.data)} bytes")
    raw = np.frombuffer(msg.data, dtype=np.uint8).reshape(msg.height, msg.step)[:, :row_bytes]
    arr = raw.copy().view(np.dtype(dtype).newbyteorder(">" if msg.is_bigendian else "<")).astype(dtype)
    return arr.reshape((msg.height, msg.width, channels) if channels > 1 else (msg.height, msg.width))


def rgb_to_image(rgb: np.ndarray, hdr: Header) -> Image:
    return array_to_image(rgb, "rgb8", hdr)


def image_to_rgb(msg: Image) -> np.ndarray:
    """(H, W, 3) uint8 RGB from an rgb8 (or bgr8) image."""
    arr = image_to_array(msg, ("rgb8", "bgr8"))
    return np.ascontiguousarray(arr[:, :, ::-1]) if msg.encoding == "bgr8" else arr


def depth_to_image(depth_m: np.ndarray, hdr: Header) -> Image:
    return array_to_image(depth_m, "32FC1", hdr)


def image_to_depth(msg: Image) -> np.ndarray:
    """(H, W) float32 metres from 32FC1 (metres) or 16UC1 (millimetres, the RealSense driver's encoding)."""
    arr = image_to_array(msg, ("32FC1", "16UC1"))
    if msg.encoding == "16UC1":
        return arr.astype(np.float32) / np.float32(1000.0)
    return arr


def segmentation_to_image(segmentation: np.ndarray, hdr: Header) -> Image:
    return array_to_image(segmentation, "32SC1", hdr)


def image_to_segmentation(msg: Image) -> np.ndarray:
    return image_to_array(msg, ("32SC1",))


def labels_to_msg(categories: Mapping[int, str], hdr: Header) -> InstanceLabels:
    ids = sorted(categories)
    return InstanceLabels(header=hdr, ids=[int(i) for i in ids], categories=[categories[i] for i in ids])


def msg_to_labels(msg: InstanceLabels) -> dict[int, str]:
    if len(msg.ids) != len(msg.categories):
        raise ConversionError(f"InstanceLabels has {len(msg.ids)} ids but {len(msg.categories)} categories")
    return {int(i): str(c) for i, c in zip(msg.ids, msg.categories, strict=True)}


# ---------------------------------------------------------------------------------------------- camera


def intrinsics_to_camera_info(intr: CameraIntrinsics, hdr: Header) -> CameraInfo:
    """A distortion-free pinhole CameraInfo (plumb_bob with zero coefficients)."""
    k = [intr.fx, 0.0, intr.cx, 0.0, intr.fy, intr.cy, 0.0, 0.0, 1.0]
    p = [intr.fx, 0.0, intr.cx, 0.0, 0.0, intr.fy, intr.cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    return CameraInfo(header=hdr, height=intr.height, width=intr.width, distortion_model="plumb_bob",
                      d=[0.0] * 5, k=k, r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], p=p)


def camera_info_to_intrinsics(msg: CameraInfo) -> CameraIntrinsics:
    k = list(msg.k)
    if msg.width == 0 or msg.height == 0 or k[0] <= 0.0 or k[4] <= 0.0:
        raise ConversionError(f"camera_info needs a size and positive fx, fy; got {msg.width}x{msg.height}, "
                              f"fx={k[0]}, fy={k[4]}")
    return CameraIntrinsics(width=int(msg.width), height=int(msg.height), fx=float(k[0]), fy=float(k[4]),
                            cx=float(k[2]), cy=float(k[5]))


# ----------------------------------------------------------------------------------------------- poses


def yaw_to_quaternion(yaw_rad: float) -> Quaternion:
    return Quaternion(x=0.0, y=0.0, z=math.sin(yaw_rad / 2.0), w=math.cos(yaw_rad / 2.0))


def quaternion_to_yaw(q: Quaternion) -> float:
    """Yaw of a quaternion (rotation about z; roll and pitch ignored)."""
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def pitch_quaternion(pitch_rad: float) -> Quaternion:
    """Rotation about y; REP 103 pitch is positive nose-down, so a camera tilted up by t has pitch -t."""
    return Quaternion(x=0.0, y=math.sin(pitch_rad / 2.0), z=0.0, w=math.cos(pitch_rad / 2.0))


def pose2d_to_msg(pose: Pose2D) -> Pose2DMsg:
    return Pose2DMsg(x=float(pose.x_m), y=float(pose.y_m), theta=float(pose.yaw_rad))


def msg_to_pose2d(msg: Pose2DMsg) -> Pose2D:
    return Pose2D(float(msg.x), float(msg.y), float(msg.theta))


def odometry(pose: Pose2D, hdr: Header, child_frame: str) -> Odometry:
    msg = Odometry(header=hdr, child_frame_id=child_frame)
    msg.pose.pose.position.x = float(pose.x_m)
    msg.pose.pose.position.y = float(pose.y_m)
    msg.pose.pose.orientation = yaw_to_quaternion(pose.yaw_rad)
    return msg


def odometry_to_pose2d(msg: Odometry) -> Pose2D:
    p = msg.pose.pose
    return Pose2D(float(p.position.x), float(p.position.y), quaternion_to_yaw(p.orientation))


def transform(hdr: Header, child: str, xyz: Sequence[float], rotation: Quaternion) -> TransformStamped:
    t = TransformStamped(header=hdr, child_frame_id=child)
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (float(v) for v in xyz)
    t.transform.rotation = rotation
    return t


# ----------------------------------------------------------------------------------------------- goals


def goal_to_msg(goal: Goal, hdr: Header, episode_id: str, subtask_index: int, max_actions: int) -> GoalMsg:
    msg = GoalMsg(header=hdr, episode_id=episode_id, subtask_index=int(subtask_index),
                  modality=goal.modality.value, category=goal.category or "", text=goal.text or "",
                  image_hfov_rad=float(goal.image_hfov_rad or 0.0), level=goal.level or "",
                  target_id=goal.target_id or "", max_actions=int(max_actions))
    if goal.image is not None:
        msg.image = rgb_to_image(goal.image, hdr)
    return msg


def msg_to_goal(msg: GoalMsg) -> Goal:
    """The core Goal of a message; raises InvalidGoalError naming the bad field (modality, text, image)."""
    modality = GoalModality.parse(msg.modality)
    image: Optional[np.ndarray] = None
    if modality is GoalModality.IMAGE:
        try:
            image = image_to_rgb(msg.image)
        except ConversionError as exc:
            raise InvalidGoalError(f"image goal: {exc}") from None
    # Image goals may name their category too (GOAT-Bench tasks carry it); an empty string means none.
    named = modality is GoalModality.CATEGORY or (modality is GoalModality.IMAGE and msg.category.strip())
    return Goal(modality, category=msg.category if named else None,
                text=msg.text if modality is GoalModality.DESCRIPTION else None, image=image,
                image_hfov_rad=msg.image_hfov_rad if msg.image_hfov_rad > 0.0 else None,
                level=msg.level or None, target_id=msg.target_id or None)


def goal_summary(msg: GoalMsg) -> str:
    """A short text of a goal message for logs and the rviz goal marker."""
    if msg.modality in ("object", "category"):
        return f"object: {msg.category}"
    if msg.modality == "image":
        return f"image: {msg.image.width}x{msg.image.height}"
    return f"{msg.modality}: {msg.text}"


def goal_marker(msg: GoalMsg, hdr: Header) -> Marker:
    """The goal's text above the robot, for rviz (``/goat/current_goal``)."""
    marker = Marker(header=hdr, ns="goal", id=0, type=Marker.TEXT_VIEW_FACING, action=Marker.ADD,
                    text=goal_summary(msg))
    marker.pose.position.z = 1.8
    marker.pose.orientation.w = 1.0
    marker.scale.z = 0.2
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = 1.0, 0.8, 0.2, 1.0
    return marker


def map_to_odom(anchor: Pose2D, hdr: Header, odom_frame: str) -> TransformStamped:
    """map -> odom when the map frame is the odom pose ``anchor`` (the episode start): the anchor's inverse."""
    c, s = math.cos(anchor.yaw_rad), math.sin(anchor.yaw_rad)
    x, y = -(c * anchor.x_m + s * anchor.y_m), -(-s * anchor.x_m + c * anchor.y_m)
    return transform(hdr, odom_frame, (x, y, 0.0), yaw_to_quaternion(-anchor.yaw_rad))


# ------------------------------------------------------------------------------------ map and instances


def occupancy_to_msg(grid: OccupancyGrid, hdr: Header, margin_cells: int = 10) -> OccupancyGridMsg:
    """The observed part of the grid: 100 obstacle, 0 explored free, -1 unknown.

    The core grid's axis 0 is x and axis 1 is y; nav_msgs/OccupancyGrid is row-major with rows along +y, so
    the crop is transposed.
    """
    values, origin = grid.known_values(margin_cells)
    width, height = int(values.shape[0]), int(values.shape[1])
    msg = OccupancyGridMsg(header=hdr)
    msg.info.resolution = float(grid.resolution_m)
    msg.info.width = width  # cells along x
    msg.info.height = height  # cells along y
    msg.info.origin.position.x, msg.info.origin.position.y = origin
    msg.info.origin.orientation.w = 1.0
    msg.data = np.ascontiguousarray(values.T).tobytes()
    return msg


def _colour(key: int) -> tuple[float, float, float]:
    """A stable, distinct colour per id (golden-ratio hue steps)."""
    h = (key * 0.618033988749895) % 1.0
    i, f = int(h * 6.0), h * 6.0 % 1.0
    q, t = 1.0 - f, f
    return [(1.0, t, 0.0), (q, 1.0, 0.0), (0.0, 1.0, t), (0.0, q, 1.0), (t, 0.0, 1.0), (1.0, 0.0, q)][i % 6]


def instances_to_msg(instances: Iterable[Instance], hdr: Header,
                     scores: Optional[Mapping[int, float]] = None) -> Instances:
    out = Instances(header=hdr)
    for inst in instances:
        out.instances.append(instance_summary(inst, float((scores or {}).get(inst.instance_id, math.nan))))
    return out


def instance_summary(inst: Instance, score: float = math.nan) -> InstanceMsg:
    """The Instance message of one remembered instance (``score``: NaN when it is not the current match)."""
    lo, hi, c = inst.bbox_min_m, inst.bbox_max_m, inst.centroid_m
    m = InstanceMsg(instance_id=int(inst.instance_id), category=inst.category, score=float(score),
                    num_observations=int(inst.num_observations), num_views=len(inst.views),
                    first_seen_step=int(inst.first_seen_step), last_seen_step=int(inst.last_seen_step),
                    room_type=inst.room_type or "")
    m.centroid_m.x, m.centroid_m.y, m.centroid_m.z = (float(v) for v in c)
    m.extent_m.x, m.extent_m.y, m.extent_m.z = (float(v) for v in hi - lo)
    return m


def instance_memory_to_msg(instances: Iterable[Instance], hdr: Header, generation: int,
                           frames: int) -> InstanceMemory:
    """A full, lossless snapshot of the instance memory (points, colour and views of every instance)."""
    out = InstanceMemory(header=hdr, generation=int(generation), frames=int(frames))
    for inst in instances:
        detail = InstanceDetail(summary=instance_summary(inst))
        # array.array: rclpy takes it as is, where a list or numpy array is checked value by value.
        detail.points_xyz_m = array.array("d", np.ascontiguousarray(inst.points_xyz_m, dtype=np.float64).tobytes())
        if inst.mean_rgb is not None:
            detail.mean_rgb = array.array("d", np.asarray(inst.mean_rgb, dtype=np.float64).tobytes())
        for view in inst.views:
            detail.views.append(InstanceViewMsg(
                rgb=rgb_to_image(view.rgb, hdr), mask=array_to_image(view.mask.astype(np.uint8) * 255, "mono8", hdr),
                pixel_count=int(view.pixel_count), pose=pose2d_to_msg(view.pose), step=int(view.step)))
        out.instances.append(detail)
    return out


def msg_to_instances(msg: InstanceMemory) -> dict[int, Instance]:
    """The core instances of a snapshot, keyed by id: what instance_memory_to_msg was given, bit for bit."""
    out: dict[int, Instance] = {}
    for detail in msg.instances:
        s = detail.summary
        points = np.asarray(detail.points_xyz_m, dtype=np.float64)
        if points.size == 0 or points.size % 3:
            raise ConversionError(f"instance {s.instance_id} needs 3N > 0 point coordinates, got {points.size}")
        if len(detail.mean_rgb) not in (0, 3):
            raise ConversionError(f"instance {s.instance_id}: mean_rgb needs 0 or 3 values, got {len(detail.mean_rgb)}")
        views = []
        for v in detail.views:
            rgb, mask = image_to_rgb(v.rgb), image_to_array(v.mask, ("mono8",)) > 0
            if mask.shape != rgb.shape[:2]:
                raise ConversionError(f"instance {s.instance_id}: view mask {mask.shape} differs from its crop "
                                      f"{rgb.shape[:2]}")
            views.append(InstanceView(rgb=rgb, mask=mask, pixel_count=int(v.pixel_count),
                                      pose=msg_to_pose2d(v.pose), step=int(v.step)))
        out[int(s.instance_id)] = Instance(
            instance_id=int(s.instance_id), category=s.category, points_xyz_m=points.reshape(-1, 3).copy(),
            num_observations=int(s.num_observations), first_seen_step=int(s.first_seen_step),
            last_seen_step=int(s.last_seen_step), views=views,
            mean_rgb=np.asarray(detail.mean_rgb, dtype=np.float64).copy() if len(detail.mean_rgb) else None,
            room_type=s.room_type or None)
    return out


def goal_matches_to_msg(goal: GoalMsg, hdr: Header, ranking: Optional[Ranking],
                        instances: Mapping[int, Instance], generation: int, error: str = "") -> GoalMatches:
    """The answer to ``goal``: the ranking (None for a rejected goal, which carries ``error`` instead)."""
    msg = GoalMatches(header=hdr, episode_id=goal.episode_id, subtask_index=int(goal.subtask_index),
                      modality=goal.modality, best_id=-1, best_score=0.0, confident=False,
                      memory_generation=int(generation), num_instances=len(instances), error=error)
    if ranking is None:
        return msg
    msg.instance_ids = [int(c.instance_id) for c in ranking.ranked]
    msg.scores = [float(c.score) for c in ranking.ranked]
    msg.categories = [instances[c.instance_id].category for c in ranking.ranked]
    match = ranking.match
    if match.instance_id is not None:
        msg.best_id, msg.best_score, msg.confident = int(match.instance_id), float(match.score), bool(match.confident)
    return msg


def instances_to_markers(instances: Instances, target_id: Optional[int] = None) -> MarkerArray:
    """A box and a text label per instance; the current target is drawn opaque, the rest translucent."""
    array = MarkerArray(markers=[Marker(header=instances.header, action=Marker.DELETEALL)])
    for inst in instances.instances:
        r, g, b = _colour(inst.instance_id)
        box = Marker(header=instances.header, ns="instances", id=int(inst.instance_id), type=Marker.CUBE,
                     action=Marker.ADD)
        box.pose.position = _point(inst.centroid_m)
        box.pose.orientation.w = 1.0
        box.scale.x, box.scale.y, box.scale.z = (max(v, 0.02) for v in (inst.extent_m.x, inst.extent_m.y,
                                                                        inst.extent_m.z))
        box.color.r, box.color.g, box.color.b = r, g, b
        box.color.a = 0.9 if inst.instance_id == target_id else 0.35
        label = Marker(header=instances.header, ns="labels", id=int(inst.instance_id),
                       type=Marker.TEXT_VIEW_FACING, action=Marker.ADD, text=f"{inst.category} #{inst.instance_id}")
        label.pose.position = _point(inst.centroid_m)
        label.pose.position.z += 0.5 * inst.extent_m.z + 0.15
        label.pose.orientation.w = 1.0
        label.scale.z = 0.15
        label.color.r = label.color.g = label.color.b = label.color.a = 1.0
        array.markers.extend([box, label])
    return array


def _point(p: object) -> object:
    from geometry_msgs.msg import Point

    return Point(x=float(p.x), y=float(p.y), z=float(p.z))  # type: ignore[attr-defined]


def path_to_msg(path_xy_m: np.ndarray, hdr: Header) -> Path:
    msg = Path(header=hdr)
    for x, y in np.asarray(path_xy_m, dtype=np.float64).reshape(-1, 2):
        pose = PoseStamped(header=hdr)
        pose.pose.position.x, pose.pose.position.y = float(x), float(y)
        pose.pose.orientation.w = 1.0
        msg.poses.append(pose)
    return msg


# ------------------------------------------------------------------------------------------------ results


def stop_decision_fields(decision: Optional[StopDecision]) -> dict[str, Any]:
    """The ``SubtaskOutcome`` fields that carry the agent's account of its STOP (none: a STOP without one)."""
    if decision is None:
        return {}
    fields: dict[str, Any] = {"stop_detail": decision.reason, "stop_at_target": not decision.gave_up}
    if decision.target_xyz_m is not None:
        x, y, z = decision.target_xyz_m
        fields.update(stop_target_category=decision.category or "", stop_target_confident=decision.confident,
                      stop_target=Point(x=x, y=y, z=z))
    return fields


def msg_to_stop_decision(msg: SubtaskOutcome) -> Optional[StopDecision]:
    """The agent's account of its STOP from an outcome; None when the outcome carries none."""
    if not msg.stop_detail and not msg.stop_at_target:
        return None
    if not msg.stop_at_target:
        return StopDecision(gave_up=True, reason=msg.stop_detail)
    p = msg.stop_target
    return StopDecision(gave_up=False, reason=msg.stop_detail, category=msg.stop_target_category or None,
                        confident=bool(msg.stop_target_confident), target_xyz_m=(p.x, p.y, p.z))
