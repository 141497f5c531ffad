"""Scoring a subtask on the physical robot from the operator's verdict. No ROS in this module.

On the robot there is no ground truth: the operator says whether the robot stopped at the goal. The record then
holds that verdict, the path the odometry measured, and an SPL whose shortest path is the straight line from where
the subtask began to where the robot stopped (the true shortest path is unknown, and at least that long, so this
SPL is an upper bound of the true one; it is comparable between runs of the same goals). Every verdict is also
logged with its path (:func:`path_log_entry`) so a run can be audited afterwards.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from goat_core.types import DiscreteAction, GoalModality, Pose2D
from goat_suites.common.metrics import spl as spl_of
from goat_suites.common.results import SubtaskRecord


def path_length_m(poses: Sequence[Pose2D]) -> float:
    return float(sum(math.hypot(b.x_m - a.x_m, b.y_m - a.y_m) for a, b in zip(poses[:-1], poses[1:], strict=True)))


def operator_record(episode_id: str, index: int, modality: str, stop_reason: str, actions: Sequence[int],
                    poses: Sequence[Pose2D], confirmed: bool, error: Optional[str] = None,
                    scene_id: Optional[str] = None) -> SubtaskRecord:
    """The subtask record of a robot run; only a STOP the operator confirmed is a success."""
    success = bool(confirmed) and stop_reason == "stop"
    travelled_m = path_length_m(poses)
    straight_m = math.hypot(poses[-1].x_m - poses[0].x_m, poses[-1].y_m - poses[0].y_m) if poses else 0.0
    return SubtaskRecord(
        episode_id=episode_id, index=index, modality=GoalModality.parse(modality), success=success,
        spl=spl_of(success, straight_m, travelled_m) if success else 0.0, path_length_m=travelled_m,
        geodesic_m=straight_m if poses else None, num_actions=len(actions), stop_reason=stop_reason,
        distance_to_goal_m=None, error=error, actions=tuple(DiscreteAction(a) for a in actions), scene_id=scene_id)


def path_log_entry(record: SubtaskRecord, poses: Sequence[Pose2D], confirmed_by: str) -> dict[str, Any]:
    """One JSON line of the operator log: the verdict, who gave it, and the map-frame path."""
    return {"episode_id": record.episode_id, "scene_id": record.scene_id, "index": record.index,
            "modality": record.modality.value, "stop_reason": record.stop_reason, "success": record.success,
            "confirmed_by": confirmed_by, "path_xy_yaw": [[p.x_m, p.y_m, p.yaw_rad] for p in poses]}
