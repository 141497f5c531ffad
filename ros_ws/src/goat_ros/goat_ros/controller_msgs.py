"""The messages the controller node publishes, built from the agent and the subtask (no rclpy): the outcome, the
rviz debug set, the goal marker and the map -> odom transform."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from nav_msgs.msg import OccupancyGrid, Path
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from goat_core.types import Pose2D, StopDecision
from goat_interfaces.msg import Goal as GoalMsg
from goat_interfaces.msg import Instances, SubtaskOutcome
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.controller_session import Subtask

if TYPE_CHECKING:
    from goat_core.agent import Agent


def outcome_msg(sub: Subtask, stop_reason: str, error: str, decision: Optional[StopDecision],
                stamp_ns: int) -> SubtaskOutcome:
    """What the controller did for ``sub``'s goal (unscored)."""
    g = sub.goal
    return SubtaskOutcome(header=cv.header(stamp_ns, topics.MAP_FRAME),
                          episode_id=g.episode_id, subtask_index=g.subtask_index, modality=g.modality,
                          target_id=g.target_id, stop_reason=stop_reason, error=error, actions=sub.actions,
                          poses=[cv.pose2d_to_msg(p) for p in sub.poses], **cv.stop_decision_fields(decision))


@dataclass(frozen=True)
class DebugMsgs:
    """The agent's state for rviz: ``/goat/map``, ``/goat/instances``, ``/goat/instance_markers``, ``/goat/path``."""

    grid: OccupancyGrid
    instances: Instances
    markers: MarkerArray
    path: Path


def debug_msgs(agent: Agent, stamp_ns: int) -> DebugMsgs:
    """The debug set in the map frame; the matched instance carries its score."""
    hdr = cv.header(stamp_ns, topics.MAP_FRAME)
    state = agent.debug_state()
    match = state.match
    scores = {match.instance_id: match.score} if match.instance_id is not None else {}
    instances = cv.instances_to_msg(agent.memory.instances.values(), hdr, scores)
    return DebugMsgs(grid=cv.occupancy_to_msg(agent.occupancy, hdr), instances=instances,
                     markers=cv.instances_to_markers(instances, state.target_instance_id),
                     path=cv.path_to_msg(state.path_xy_m, hdr))


def goal_marker(msg: GoalMsg, stamp_ns: int) -> Marker:
    """``/goat/current_goal``: the goal's text above the robot."""
    return cv.goal_marker(msg, cv.header(stamp_ns, topics.BASE_FRAME))


def map_to_odom_tf(anchor: Optional[Pose2D], stamp_ns: int) -> TFMessage:
    """map = the episode frame: the odom pose at the episode start (``anchor``; None: the odom origin)."""
    hdr = cv.header(stamp_ns, topics.MAP_FRAME)
    return TFMessage(transforms=[cv.map_to_odom(anchor or Pose2D(0.0, 0.0, 0.0), hdr, topics.ODOM_FRAME)])
