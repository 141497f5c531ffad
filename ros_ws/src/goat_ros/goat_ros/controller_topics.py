"""The controller node's topics: their QoS, the sensor subscriptions of a perception backend and its publishers
(outcomes, and the agent's state for rviz: map, instances, path, current goal, the map -> odom transform)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nav_msgs.msg import OccupancyGrid, Odometry, Path
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, JointState
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from goat_interfaces.msg import InstanceLabels, Instances, SubtaskOutcome
from goat_ros import controller_msgs as msgs
from goat_ros import topics
from goat_ros.lifecycle import ManagedEntities

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
GOAL_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def sensor_topics(perception_backend: str) -> list[tuple[str, type, str]]:
    """(part of an observation, message type, topic) the controller subscribes to; ground truth adds the
    segmentation and its labels."""
    subs: list[tuple[str, type, str]] = [
        ("rgb", Image, topics.RGB), ("depth", Image, topics.DEPTH), ("info", CameraInfo, topics.CAMERA_INFO),
        ("joints", JointState, topics.JOINT_STATES), ("odom", Odometry, topics.ODOM)]
    if perception_backend == "ground_truth":
        subs += [("segmentation", Image, topics.SEGMENTATION), ("labels", InstanceLabels, topics.INSTANCE_LABELS)]
    return subs


@dataclass(frozen=True)
class ControllerPublishers:
    """What the controller publishes."""

    outcome: Any
    map: Any
    instances: Any
    markers: Any
    path: Any
    goal_marker: Any
    tf_static: Any

    @classmethod
    def make(cls, made: ManagedEntities) -> ControllerPublishers:
        return cls(outcome=made.publisher(SubtaskOutcome, topics.OUTCOME, GOAL_QOS),
                   map=made.publisher(OccupancyGrid, topics.MAP, LATCHED),
                   instances=made.publisher(Instances, topics.INSTANCES, RELIABLE),
                   markers=made.publisher(MarkerArray, topics.INSTANCE_MARKERS, RELIABLE),
                   path=made.publisher(Path, topics.PATH, RELIABLE),
                   goal_marker=made.publisher(Marker, topics.CURRENT_GOAL, LATCHED),
                   tf_static=made.publisher(TFMessage, topics.TF_STATIC, LATCHED))

    def publish_debug(self, agent: Any, stamp_ns: int) -> None:
        """The agent's state for rviz, stamped with the newest observation set."""
        debug = msgs.debug_msgs(agent, stamp_ns)
        self.map.publish(debug.grid)
        self.instances.publish(debug.instances)
        self.markers.publish(debug.markers)
        self.path.publish(debug.path)
