"""The live_view node: the graph's topics served to Foxglove / Lichtblick over a Foxglove WebSocket (foxglove-sdk).

A thin adapter: each message is converted at the boundary and handed to ``goat_ros.live_view.LiveView``, which
``goat-nav bench --live`` feeds from the in-process run as well (one set of channels; docs/ros.md "Three ways to
watch a run"). ``goat-nav view`` runs this node alone next to a running graph; ``live_view:=true`` adds it to
sim.launch.py.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from nav_msgs.msg import OccupancyGrid, Odometry, Path
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, JointState
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker

from goat_core.types import Pose2D
from goat_interfaces.msg import Instances, SubtaskOutcome
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.live_view import InstanceBox, LiveView
from goat_ros.params import LiveViewParams, declare

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
TILT_JOINT = "joint_head_tilt"


class LiveViewNode(Node):
    def __init__(self, name: str = "live_view", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, LiveViewParams)
        p = self.params
        self.view = LiveView(p.host, p.port, name="goat_nav graph", jpeg_quality=p.jpeg_quality)
        self._tilt_rad = 0.0
        self._map_to_odom = Pose2D(0.0, 0.0, 0.0)
        subs: list[tuple[type, str, Any, QoSProfile]] = [
            (Image, topics.RGB, self._on_rgb, RELIABLE), (Image, topics.DEPTH, self._on_depth, RELIABLE),
            (Odometry, topics.ODOM, self._on_odom, RELIABLE), (JointState, topics.JOINT_STATES, self._on_joints,
                                                               RELIABLE),
            (TFMessage, topics.TF_STATIC, self._on_tf_static, LATCHED),
            (OccupancyGrid, topics.MAP, self._on_map, LATCHED),
            (OccupancyGrid, topics.MAPPING_MAP, self._on_map, LATCHED),
            (Instances, topics.INSTANCES, self._on_instances, RELIABLE), (Path, topics.PATH, self._on_path, RELIABLE),
            (Marker, topics.CURRENT_GOAL, self._on_goal, LATCHED),
            (SubtaskOutcome, topics.OUTCOME, self._on_outcome, RELIABLE)]
        for msg_type, topic, callback, qos in subs:
            self.create_subscription(msg_type, topic, self._wrap(topic, callback), qos)
        self.get_logger().info(f"live view: open Foxglove or Lichtblick at ws://{p.host}:{self.view.port}")

    def _wrap(self, topic: str, callback: Any) -> Any:
        return lambda msg: callback(topic, msg)

    def close(self) -> None:
        self.view.close()

    # -------------------------------------------------------------------------------------------- camera
    def _on_rgb(self, topic: str, msg: Image) -> None:
        self.view.log_rgb(cv.ns_from_time(msg.header.stamp), cv.image_to_rgb(msg), msg.header.frame_id)

    def _on_depth(self, topic: str, msg: Image) -> None:
        self.view.log_depth(cv.ns_from_time(msg.header.stamp), cv.image_to_depth(msg), msg.header.frame_id)

    def _on_joints(self, topic: str, msg: JointState) -> None:
        if TILT_JOINT in msg.name:
            self._tilt_rad = float(msg.position[list(msg.name).index(TILT_JOINT)])

    def _on_odom(self, topic: str, msg: Odometry) -> None:
        self.view.log_tf(cv.ns_from_time(msg.header.stamp), cv.odometry_to_pose2d(msg), self._tilt_rad,
                         self.params.camera_height_m, self._map_to_odom)

    def _on_tf_static(self, topic: str, msg: TFMessage) -> None:
        for t in msg.transforms:  # the controller's map -> odom (the episode start)
            if t.header.frame_id == topics.MAP_FRAME and t.child_frame_id == topics.ODOM_FRAME:
                tr = t.transform.translation
                self._map_to_odom = Pose2D(tr.x, tr.y, cv.quaternion_to_yaw(t.transform.rotation))

    # ------------------------------------------------------------------------------------ map and agent
    def _on_map(self, topic: str, msg: OccupancyGrid) -> None:
        rows = np.frombuffer(msg.data, dtype=np.int8).reshape(msg.info.height, msg.info.width)
        o = msg.info.origin.position
        self.view.log_map(cv.ns_from_time(msg.header.stamp), rows, msg.info.resolution, (o.x, o.y), topic=topic)

    def _on_instances(self, topic: str, msg: Instances) -> None:
        target = next((i.instance_id for i in msg.instances if not math.isnan(i.score)), None)
        self.view.log_instances(cv.ns_from_time(msg.header.stamp), [InstanceBox(
            int(i.instance_id), i.category, (i.centroid_m.x, i.centroid_m.y, i.centroid_m.z),
            (i.extent_m.x, i.extent_m.y, i.extent_m.z)) for i in msg.instances], target)

    def _on_path(self, topic: str, msg: Path) -> None:
        xy = np.array([(p.pose.position.x, p.pose.position.y) for p in msg.poses], dtype=np.float64)
        self.view.log_path(cv.ns_from_time(msg.header.stamp), xy)

    def _on_goal(self, topic: str, msg: Marker) -> None:
        self.view.log_goal(cv.ns_from_time(msg.header.stamp), {"text": msg.text})

    def _on_outcome(self, topic: str, msg: SubtaskOutcome) -> None:
        self.view.log_outcome(cv.ns_from_time(msg.header.stamp), {
            "episode_id": msg.episode_id, "subtask_index": int(msg.subtask_index), "stop_reason": msg.stop_reason,
            "error": msg.error, "actions": len(msg.actions), "stop_detail": msg.stop_detail,
            "stop_at_target": bool(msg.stop_at_target), "stop_target_category": msg.stop_target_category})


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([LiveViewNode], args)


if __name__ == "__main__":
    main()
