"""A subtask's result as a ROS message and back (goat_interfaces/SubtaskResult <-> SubtaskRecord).

Here, not in goat_ros.conversions, because the record is the benchmark's (goat_suites.common.results): the
evaluator and the robot operator publish it, the episode player and tests read it.
"""

from __future__ import annotations

import math
from typing import Optional

from std_msgs.msg import Header

from goat_core.types import DiscreteAction, GoalModality
from goat_interfaces.msg import SubtaskResult
from goat_suites.common.results import SubtaskRecord


def _nan_if_none(value: Optional[float]) -> float:
    return math.nan if value is None else float(value)


def _none_if_nan(value: float) -> Optional[float]:
    return None if math.isnan(value) else float(value)


def record_to_msg(record: SubtaskRecord, hdr: Header) -> SubtaskResult:
    return SubtaskResult(
        header=hdr, episode_id=record.episode_id, scene_id=record.scene_id or "", subtask_index=record.index,
        modality=record.modality.value, success=record.success, spl=float(record.spl),
        path_length_m=float(record.path_length_m), geodesic_m=_nan_if_none(record.geodesic_m),
        distance_to_goal_m=_nan_if_none(record.distance_to_goal_m), num_actions=record.num_actions,
        stop_reason=record.stop_reason, error=record.error or "",
        actions=[int(a) for a in (record.actions or ())], failure=record.failure or "",
        stop_detail=record.stop_detail or "")


def msg_to_record(msg: SubtaskResult) -> SubtaskRecord:
    return SubtaskRecord(
        episode_id=msg.episode_id, index=int(msg.subtask_index), modality=GoalModality.parse(msg.modality),
        success=bool(msg.success), spl=float(msg.spl), path_length_m=float(msg.path_length_m),
        geodesic_m=_none_if_nan(msg.geodesic_m), num_actions=int(msg.num_actions), stop_reason=msg.stop_reason,
        distance_to_goal_m=_none_if_nan(msg.distance_to_goal_m), error=msg.error or None,
        actions=tuple(DiscreteAction(int(a)) for a in msg.actions) if msg.stop_reason != "error" else None,
        scene_id=msg.scene_id or None, failure=msg.failure or None, stop_detail=msg.stop_detail or None)
