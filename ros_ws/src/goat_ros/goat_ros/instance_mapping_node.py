"""The instance_mapping node: the lifelong map (occupancy grid + instance memory) built from the robot topics.

A thin adapter over ``goat_core.mapping.lifelong.LifelongMapper``: each complete observation set (the same
``ObservationSync`` the controller uses) is converted once and integrated; the node publishes the map, the
instances and their markers under ``/goat/mapping/`` (its own names: the controller keeps publishing its agent's
map on ``/goat/map``), and a full, lossless snapshot of the instance memory (``goat_interfaces/InstanceMemory``:
points, colour and stored views of every instance) that the goal_matching node matches goals against.

Use: watching the lifelong map build up while the robot is teleoperated or while the controller drives it, and
feeding goal_matching. The controller does not read this node: it composes the same stages inside its agent,
which is what keeps ROS runs action-identical to in-process runs (docs/ros.md).

The map frame is the episode frame, as the controller's: its origin is the odom pose of the first observation set
after a reset. The memory is reset by the ``/goat/mapping/reset`` service and, with ``reset_on_new_episode``,
when a goal of a new episode arrives (new episode id or subtask 0, the controller's rule).
"""

from __future__ import annotations

import functools
import time
from typing import Any, Optional

from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from goat_core.types import Pose2D
from goat_core.vocabulary import OBJECT_LABELS
from goat_interfaces.msg import Goal as GoalMsg
from goat_interfaces.msg import InstanceLabels, InstanceMemory, Instances
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.node_errors import SetFailures
from goat_ros.observation_sync import ObservationSync
from goat_ros.params import InstanceMappingParams, declare

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
# The map and the memory snapshot are latched: a late subscriber (rviz, goal_matching) gets the last one.
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class InstanceMappingNode(Node):
    def __init__(self, name: str = "instance_mapping", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, InstanceMappingParams)
        self.mapper = self._build_mapper()
        gt = self.params.perception_backend == "ground_truth"
        self._sync = ObservationSync(with_segmentation=gt, camera_height_m=self.params.camera_height_m,
                                     max_skew_s=self.params.sync_tolerance_s)
        self._anchor: Optional[Pose2D] = None  # odom pose of the first set after a reset (the map origin)
        self._episode_id: Optional[str] = None
        self._min_stamp_ns = 0  # sets older than the last episode start are not integrated
        self._stamp_ns = 0  # stamp of the set integrated last
        self._dirty = True  # something changed since the last publication
        self._last_publish_s = -float("inf")
        self._failures = SetFailures(self.get_logger(), "observation set not integrated")  # logged once a run
        self._pub_map = self.create_publisher(OccupancyGrid, topics.MAPPING_MAP, LATCHED)
        self._pub_instances = self.create_publisher(Instances, topics.MAPPING_INSTANCES, RELIABLE)
        self._pub_markers = self.create_publisher(MarkerArray, topics.MAPPING_INSTANCE_MARKERS, RELIABLE)
        self._pub_memory = self.create_publisher(InstanceMemory, topics.MAPPING_MEMORY, LATCHED)
        subs: list[tuple[str, type, str]] = [
            ("rgb", Image, topics.RGB), ("depth", Image, topics.DEPTH), ("info", CameraInfo, topics.CAMERA_INFO),
            ("joints", JointState, topics.JOINT_STATES), ("odom", Odometry, topics.ODOM)]
        if gt:
            subs += [("segmentation", Image, topics.SEGMENTATION), ("labels", InstanceLabels, topics.INSTANCE_LABELS)]
        for part, msg_type, topic in subs:
            self.create_subscription(msg_type, topic, functools.partial(self._on_part, part), RELIABLE)
        if self.params.reset_on_new_episode:
            self.create_subscription(GoalMsg, topics.GOAL, self._on_goal, RELIABLE)
        self.create_service(Trigger, topics.MAPPING_RESET, self._on_reset)
        if self.params.publish_period_s > 0.0:
            self.create_timer(self.params.publish_period_s, self._publish_if_due)
        self._publish()  # an empty memory right away: goal_matching can answer (with no candidates)
        self.get_logger().info(f"instance_mapping ready (perception: {self.params.perception_backend})")

    def _build_mapper(self) -> Any:
        """The core mapper over the configured perception backend (the controller's factory and vocabulary)."""
        from goat_core.agent import AgentConfig
        from goat_core.mapping.evidence import evidence_wanted
        from goat_core.mapping.lifelong import LifelongMapper
        from goat_core.perception.factory import PerceptionConfig, build_perception
        from goat_ros.controller_session import with_evidence

        p = self.params
        perception = build_perception(PerceptionConfig(backend=p.perception_backend, model_dir=p.model_dir or None,
                                                       device=p.device, errors=p.perception_errors,
                                                       errors_seed=p.perception_errors_seed), list(OBJECT_LABELS))
        # The agent's grid, memory and footprint settings: one map, built the same way (evidence as the controller)
        agent = with_evidence(AgentConfig(), evidence_wanted(p.evidence, p.perception_errors))
        return LifelongMapper(perception, agent.occupancy, agent.memory, agent.robot_radius_m)

    # ---------------------------------------------------------------------------------------- callbacks
    def _on_part(self, part: str, msg: Any) -> None:
        stamp_ns = cv.ns_from_time(msg.header.stamp)
        if self._sync.add(part, stamp_ns, msg) and self._sync.latest_stamp_ns >= self._min_stamp_ns:
            self._integrate_latest()

    def _integrate_latest(self) -> None:
        if self._anchor is None:
            self._anchor = self._sync.odom_pose()
        try:
            self.mapper.integrate(self._sync.observation(None, self._anchor))
        except Exception as exc:  # the node boundary: skip this set, keep mapping the next ones
            self._failures.failed(exc)
            return
        self._failures.succeeded()
        self._stamp_ns = self._sync.latest_stamp_ns
        self._dirty = True
        self._publish_if_due()

    def _on_goal(self, msg: GoalMsg) -> None:
        """A goal of a new episode: the robot was reset to a new start, so the old map no longer applies."""
        if msg.episode_id == self._episode_id and msg.subtask_index != 0:
            return
        self._episode_id = msg.episode_id
        self._reset(cv.ns_from_time(msg.header.stamp))
        if self._sync.latest_stamp_ns >= self._min_stamp_ns:  # the episode's first set came before its goal
            self._integrate_latest()

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        forgotten = len(self.mapper.memory.instances)
        self._reset(self._sync.latest_stamp_ns + 1)
        response.success = True
        response.message = f"forgot {forgotten} instances; the map restarts at the next observation set"
        return response

    def _reset(self, min_stamp_ns: int) -> None:
        self.mapper.reset()
        self._anchor = None
        self._min_stamp_ns = min_stamp_ns
        self._stamp_ns = 0
        self._dirty = True
        self._publish()

    # ---------------------------------------------------------------------------------------- publishing
    def _publish_if_due(self) -> None:
        period = self.params.publish_period_s
        if self._dirty and time.monotonic() - self._last_publish_s >= period:
            self._publish()

    def _publish(self) -> None:
        self._dirty = False
        self._last_publish_s = time.monotonic()
        hdr = cv.header(self._stamp_ns, topics.MAP_FRAME)
        mapper = self.mapper
        instances = list(mapper.memory.instances.values())
        self._pub_map.publish(cv.occupancy_to_msg(mapper.grid, hdr))
        summary = cv.instances_to_msg(instances, hdr)
        self._pub_instances.publish(summary)
        self._pub_markers.publish(cv.instances_to_markers(summary))
        self._pub_memory.publish(cv.instance_memory_to_msg(instances, hdr, mapper.generation, mapper.frames))


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([InstanceMappingNode], args)


if __name__ == "__main__":
    main()
