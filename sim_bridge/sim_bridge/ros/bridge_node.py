"""The simulator bridge node: a simulator behind the Stretch topic and action contract.

The simulator is the ``backend`` parameter's: ``embedded`` (MuJoCo homes, the default) or ``habitat``
(habitat_sim scenes); the node talks to it only through ``sim_bridge.backends.BridgeSim``.

Publishes what the Stretch driver and its RealSense publish (stretch_ros2 topic names), plus ground-truth
segmentation; serves ``ExecuteAction`` (one discrete action = exactly one world step and one fresh observation
set), ``ResetEpisode`` and ``RenderView``. Every observation set shares one header stamp, strictly increasing,
so a consumer can tell which set an action produced. A request the backend cannot serve (an unknown scene, a
view it cannot render) is answered with ``success: false`` and the reason.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

from geometry_msgs.msg import Quaternion
from nav_msgs.msg import Odometry
from rclpy.action import ActionServer
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from goat_core.errors import GoatError
from goat_core.types import DiscreteAction, Observation
from goat_interfaces.action import ExecuteAction
from goat_interfaces.msg import InstanceLabels
from goat_interfaces.srv import RenderView, ResetEpisode
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.params import SimBridgeParams, declare
from goat_ros.spin import run_nodes
from sim_bridge.backends import BridgeSim, HabitatSceneSettings, make_scene_loader
from sim_bridge.embedded.sim import SimConfig

SENSOR_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
HEAD_JOINTS = ("joint_head_pan", "joint_head_tilt")  # stretch_ros2 names; tilt > 0 looks up


class SimBridgeNode(Node):
    def __init__(self, name: str = "sim_bridge", cli_args: Optional[list[str]] = None,
                 sim_config: SimConfig = SimConfig()) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, SimBridgeParams)
        # Fails here, before any interface exists, for an unknown backend or a missing habitat_sim.
        self._load = make_scene_loader(self.params.backend, sim_config, HabitatSceneSettings(
            scenes_dir=self.params.habitat_scenes_dir, scene_dataset_config=self.params.habitat_scene_dataset_config,
            gpu_device_id=self.params.habitat_gpu_device_id, semantic_sensor=self.params.publish_segmentation))
        self._sim: Optional[BridgeSim] = None
        self._scene_id = ""
        self._last_stamp_ns = 0
        self._pub_rgb = self.create_publisher(Image, topics.RGB, SENSOR_QOS)
        self._pub_depth = self.create_publisher(Image, topics.DEPTH, SENSOR_QOS)
        self._pub_info = self.create_publisher(CameraInfo, topics.CAMERA_INFO, SENSOR_QOS)
        self._pub_odom = self.create_publisher(Odometry, topics.ODOM, SENSOR_QOS)
        self._pub_joints = self.create_publisher(JointState, topics.JOINT_STATES, SENSOR_QOS)
        self._pub_tf = self.create_publisher(TFMessage, topics.TF, SENSOR_QOS)
        self._pub_tf_static = self.create_publisher(TFMessage, topics.TF_STATIC, LATCHED_QOS)
        self._pub_seg = self.create_publisher(Image, topics.SEGMENTATION, SENSOR_QOS)
        self._pub_labels = self.create_publisher(InstanceLabels, topics.INSTANCE_LABELS, SENSOR_QOS)
        self.create_service(ResetEpisode, topics.RESET_EPISODE, self._on_reset)
        self.create_service(RenderView, topics.RENDER_VIEW, self._on_render)
        self._action_server = ActionServer(self, ExecuteAction, topics.EXECUTE_ACTION, self._on_execute)
        if self.params.publish_camera_tf:
            self._publish_static_tf()
        if self.params.scene_id:
            self._load_scene(self.params.scene_id)
            # One observation set once subscribers had a moment to be discovered (actions publish the rest).
            self._first = self.create_timer(self.params.startup_publish_delay_s, self._publish_first)
        self.get_logger().info(f"sim_bridge ready ({self.params.backend} backend)")

    def _publish_first(self) -> None:
        self.destroy_timer(self._first)
        self._publish(self._sim_or_raise().observe())

    def _frame(self, name: str) -> str:
        return self.params.frame_prefix + name

    # ------------------------------------------------------------------------------------------- world
    def _load_scene(self, scene_id: str) -> BridgeSim:
        if self._sim is None or scene_id != self._scene_id:
            build = self._load(scene_id)  # a bad scene id fails here and leaves the loaded scene as it is
            if self._sim is not None:
                self._sim.close()
                self._sim = None
            self._sim = build()
            self._scene_id = scene_id
            self.get_logger().info(f"loaded scene {scene_id}")
        return self._sim

    def _sim_or_raise(self) -> BridgeSim:
        if self._sim is None:
            raise GoatError("no scene loaded: call the reset_episode service first")
        return self._sim

    def close(self) -> None:
        if self._sim is not None:
            self._sim.close()
            self._sim = None

    # -------------------------------------------------------------------------------------- interfaces
    def _on_reset(self, request: ResetEpisode.Request, response: ResetEpisode.Response) -> ResetEpisode.Response:
        try:
            sim = self._load_scene(request.scene_id)
            obs = sim.reset_world((request.start_x_m, request.start_y_m), request.start_yaw_rad)
        except GoatError as exc:
            self.get_logger().error(f"reset_episode failed: {exc}")
            response.success, response.message = False, str(exc)
            return response
        response.success = True
        response.observation_stamp = cv.time_from_ns(self._publish(obs))
        return response

    def _on_render(self, request: RenderView.Request, response: RenderView.Response) -> RenderView.Response:
        try:
            rgb = self._sim_or_raise().render_rgb((request.x_m, request.y_m), request.yaw_rad, request.tilt_rad)
        except GoatError as exc:
            response.success, response.message = False, str(exc)
            return response
        response.success = True
        response.image = cv.rgb_to_image(rgb, cv.header(self._now_ns(), self._frame(topics.OPTICAL_FRAME)))
        return response

    def _on_execute(self, goal_handle: Any) -> ExecuteAction.Result:
        result = ExecuteAction.Result()
        try:
            action = DiscreteAction(int(goal_handle.request.action))
            sim = self._sim_or_raise()
            # STOP moves nothing; it still yields one fresh observation set, as every action does.
            obs = sim.observe() if action is DiscreteAction.STOP else sim.step(action)
        except (ValueError, GoatError) as exc:
            goal_handle.abort()
            result.success, result.message = False, str(exc)
            return result
        result.observation_stamp = cv.time_from_ns(self._publish(obs))
        result.success = True
        result.collided = bool(obs.collided)
        result.pose = cv.pose2d_to_msg(obs.pose)
        result.camera_tilt_rad = float(obs.camera_tilt_rad)
        result.step = int(obs.step)
        goal_handle.succeed()
        return result

    # -------------------------------------------------------------------------------------- publishing
    def _now_ns(self) -> int:
        stamp = max(self.get_clock().now().nanoseconds, self._last_stamp_ns + 1)
        self._last_stamp_ns = stamp
        return stamp

    def _publish(self, obs: Observation) -> int:
        """Publish one observation set, every message with the same fresh stamp; return the stamp."""
        stamp_ns = self._now_ns()
        optical = cv.header(stamp_ns, self._frame(topics.OPTICAL_FRAME))
        odom_hdr = cv.header(stamp_ns, self._frame(topics.ODOM_FRAME))
        self._pub_odom.publish(cv.odometry(obs.pose, odom_hdr, self._frame(topics.BASE_FRAME)))
        self._pub_joints.publish(JointState(header=cv.header(stamp_ns, ""), name=list(HEAD_JOINTS),
                                            position=[0.0, float(obs.camera_tilt_rad)]))
        transforms = [cv.transform(odom_hdr, self._frame(topics.BASE_FRAME), (obs.pose.x_m, obs.pose.y_m, 0.0),
                                   cv.yaw_to_quaternion(obs.pose.yaw_rad))]
        if self.params.publish_camera_tf:
            base_hdr = cv.header(stamp_ns, self._frame(topics.BASE_FRAME))
            transforms.append(cv.transform(base_hdr, self._frame(topics.CAMERA_FRAME), (0.0, 0.0, obs.camera_height_m),
                                           cv.pitch_quaternion(-obs.camera_tilt_rad)))
        self._pub_tf.publish(TFMessage(transforms=transforms))
        if self.params.publish_segmentation and obs.segmentation is not None:
            self._pub_seg.publish(cv.segmentation_to_image(obs.segmentation, optical))
            self._pub_labels.publish(cv.labels_to_msg(obs.instance_categories, optical))
        self._pub_info.publish(cv.intrinsics_to_camera_info(obs.intrinsics, optical))
        self._pub_depth.publish(cv.depth_to_image(obs.depth_m, optical))
        self._pub_rgb.publish(cv.rgb_to_image(obs.rgb, optical))  # last: its arrival completes the set
        return stamp_ns

    def _publish_static_tf(self) -> None:
        # camera_link (x forward, z up) -> optical frame (z forward, x right, y down): roll -90 deg, yaw -90 deg.
        hdr = Header(frame_id=self._frame(topics.CAMERA_FRAME))
        self._pub_tf_static.publish(TFMessage(transforms=[
            cv.transform(hdr, self._frame(topics.OPTICAL_FRAME), (0.0, 0.0, 0.0),
                         Quaternion(x=-0.5, y=0.5, z=-0.5, w=0.5)),
        ]))


def main(args: Optional[list[str]] = None) -> None:
    try:
        run_nodes([SimBridgeNode], args)
    except GoatError as exc:  # a start-up error (unknown backend, habitat_sim missing): its message, no traceback
        sys.exit(f"sim_bridge: {exc}")


if __name__ == "__main__":
    main()
