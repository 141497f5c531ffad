"""Assemble one core Observation from the messages of one observation set. No rclpy.

The simulator bridge publishes rgb, depth, camera info, joint states, odometry and (simulator only)
segmentation and its labels with one stamp per set. Sets arrive part by part and possibly interleaved; a set is
complete when every required part of its stamp is in. Only the newest complete set is kept.

Real sensors do not share stamps: the head camera, the joint states and the wheel odometry run on their own
clocks and rates. With ``max_skew_s > 0`` a set is built around each colour image instead (approximate-time
matching, as message_filters' ApproximateTime does for a pivot topic): every other part contributes its message
nearest in time to the image, and the set is complete when all of them lie within ``max_skew_s`` of it. The set
takes the image's stamp.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from goat_core.frames import relative_pose2d
from goat_core.types import Observation, Pose2D
from goat_ros import conversions as cv

PARTS_BASE = ("rgb", "depth", "info", "joints", "odom")
PARTS_GT = ("segmentation", "labels")
MAX_PENDING_SETS = 8  # incomplete sets older than the newest this many are dropped
MAX_BUFFERED_PER_PART = 30  # approximate-time matching: messages kept per part (1 s of 30 Hz joint states)
TILT_JOINT = "joint_head_tilt"


def to_episode_frame(odom_pose: Pose2D, anchor: Optional[Pose2D]) -> Pose2D:
    """An odom-frame pose in the episode frame, whose origin is the odom pose ``anchor`` at the episode start.

    An identity anchor (the simulator re-anchors odom at every reset) returns the pose unchanged, bit for bit.
    """
    if anchor is None or (anchor.x_m, anchor.y_m, anchor.yaw_rad) == (0.0, 0.0, 0.0):
        return odom_pose
    return relative_pose2d(odom_pose, anchor)


@dataclass
class ActionFeedback:
    """What the robot reported with the action that produced an observation set (exact values)."""

    stamp_ns: int
    pose: Pose2D
    collided: bool
    step: int


@dataclass
class _Set:
    parts: dict[str, Any] = field(default_factory=dict)


class ObservationSync:
    def __init__(self, with_segmentation: bool, camera_height_m: float, max_skew_s: float = 0.0) -> None:
        if not max_skew_s >= 0.0:
            raise ValueError(f"max_skew_s must be >= 0 (0: exact stamps), got {max_skew_s!r}")
        self._required = PARTS_BASE + (PARTS_GT if with_segmentation else ())
        self._camera_height_m = camera_height_m
        self._max_skew_ns = int(round(max_skew_s * 1e9))
        self._pending: dict[int, _Set] = {}
        self._buffers: dict[str, list[tuple[int, Any]]] = {p: [] for p in self._required}
        self.latest_stamp_ns = -1
        self._latest: Optional[_Set] = None

    def add(self, part: str, stamp_ns: int, msg: Any) -> bool:
        """Store one part; True when it completed a set newer than the newest complete one."""
        if self._max_skew_ns > 0:
            return self._add_approximate(part, stamp_ns, msg)
        if stamp_ns <= self.latest_stamp_ns:
            return False
        entry = self._pending.setdefault(stamp_ns, _Set())
        entry.parts[part] = msg
        if not all(p in entry.parts for p in self._required):
            if len(self._pending) > MAX_PENDING_SETS:
                del self._pending[min(self._pending)]
            return False
        self.latest_stamp_ns, self._latest = stamp_ns, entry
        for old in [s for s in self._pending if s <= stamp_ns]:
            del self._pending[old]
        return True

    def _add_approximate(self, part: str, stamp_ns: int, msg: Any) -> bool:
        buffer = self._buffers.setdefault(part, [])
        buffer.append((stamp_ns, msg))
        buffer.sort(key=lambda item: item[0])  # sensors may deliver slightly out of order
        del buffer[:-MAX_BUFFERED_PER_PART]
        # Newest image first: the freshest set that can be completed now wins.
        for image_ns, _ in reversed(self._buffers["rgb"]):
            if image_ns <= self.latest_stamp_ns:
                return False
            parts = self._nearest_parts(image_ns)
            if parts is not None:
                self.latest_stamp_ns, self._latest = image_ns, _Set(parts)
                return True
        return False

    def _nearest_parts(self, image_ns: int) -> Optional[dict[str, Any]]:
        """Every required part's message nearest to ``image_ns``, or None if one has none within the skew."""
        parts: dict[str, Any] = {}
        for name in self._required:
            candidates = self._buffers.get(name, [])
            if not candidates:
                return None
            stamp_ns, msg = min(candidates, key=lambda item: (abs(item[0] - image_ns), item[0]))
            if abs(stamp_ns - image_ns) > self._max_skew_ns:
                return None
            parts[name] = msg
        return parts

    def observation(self, feedback: Optional[ActionFeedback], anchor: Optional[Pose2D]) -> Observation:
        """The newest complete set as an Observation in the episode frame (``anchor`` = odom pose at start).

        The pose comes from the action result when that action produced this set (exact floats), else from
        odometry. With an identity anchor the odometry frame is the episode frame and is used as is.
        """
        if self._latest is None:
            raise RuntimeError("no complete observation set yet")
        parts = self._latest.parts
        exact = feedback is not None and feedback.stamp_ns == self.latest_stamp_ns
        pose = feedback.pose if exact and feedback is not None else cv.odometry_to_pose2d(parts["odom"])
        pose = to_episode_frame(pose, anchor)
        joints = parts["joints"]
        tilt = float(joints.position[list(joints.name).index(TILT_JOINT)]) if TILT_JOINT in joints.name else 0.0
        seg = cv.image_to_segmentation(parts["segmentation"]) if "segmentation" in parts else None
        labels = cv.msg_to_labels(parts["labels"]) if "labels" in parts else {}
        obs = Observation(
            rgb=cv.image_to_rgb(parts["rgb"]), depth_m=cv.image_to_depth(parts["depth"]), pose=pose,
            camera_tilt_rad=tilt, camera_height_m=self._camera_height_m,
            intrinsics=cv.camera_info_to_intrinsics(parts["info"]),
            collided=bool(feedback.collided) if exact and feedback is not None else False,
            step=feedback.step if exact and feedback is not None else 0, segmentation=seg,
            instance_categories=labels)
        obs.validate()
        return obs

    def odom_pose(self) -> Optional[Pose2D]:
        if self._latest is None:
            return None
        return cv.odometry_to_pose2d(self._latest.parts["odom"])
