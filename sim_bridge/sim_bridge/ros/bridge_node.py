"""The simulator bridge node: a simulator behind the Stretch topic and action contract.

The simulator is the ``backend`` parameter's: ``embedded`` (MuJoCo homes, the default) or ``habitat``
(habitat_sim scenes); the node talks to it only through ``sim_bridge.backends.BridgeSim``.

Publishes what the Stretch driver and its RealSense publish (stretch_ros2 topic names), plus ground-truth
segmentation; serves ``ExecuteAction`` (one discrete action = exactly one world step and one fresh observation
set), ``ResetEpisode`` and ``RenderView``. Every observation set shares one header stamp, strictly increasing,
so a consumer can tell which set an action produced. While nothing moves, the newest set is repeated unchanged
(``republish_rate_hz``, ``sim_bridge.ros.stream``): a late subscriber sees the robot, as a Stretch streams it.
A request the backend cannot serve (an unknown scene, a view it cannot render) is answered with ``success: false``
and the reason.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any, Optional

from nav_msgs.msg import Odometry
from rclpy.action import ActionServer
from rclpy.node import Node

from goat_core.errors import GoatError
from goat_core.types import DiscreteAction, Observation
from goat_interfaces.action import ExecuteAction
from goat_interfaces.srv import RenderView, ResetEpisode
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.params import SimBridgeParams, declare
from goat_ros.spin import run_nodes
from sim_bridge.backends import BridgeSim, HabitatSceneSettings, make_scene_loader
from sim_bridge.embedded.realism import realism_profile
from sim_bridge.embedded.sim import SimConfig
from sim_bridge.ros.stream import ObservationStream, StreamSettings


class SimBridgeNode(Node):
    def __init__(self, name: str = "sim_bridge", cli_args: Optional[list[str]] = None,
                 sim_config: SimConfig = SimConfig()) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, SimBridgeParams)
        if self.params.realism != "ideal":  # the stretch profile: drifting /odom, noisy depth (docs/realism.md)
            realism = realism_profile(self.params.realism, seed=self.params.realism_seed)
            sim_config = replace(sim_config, realism=realism)
        # Fails here, before any interface exists, for an unknown backend or a missing habitat_sim.
        self._load = make_scene_loader(self.params.backend, sim_config, HabitatSceneSettings(
            scenes_dir=self.params.habitat_scenes_dir, scene_dataset_config=self.params.habitat_scene_dataset_config,
            gpu_device_id=self.params.habitat_gpu_device_id, semantic_sensor=self.params.publish_segmentation))
        self._sim: Optional[BridgeSim] = None
        self._scene_id = ""
        self._last_stamp_ns = 0
        self._stream = ObservationStream(self, StreamSettings(
            self.params.frame_prefix, self.params.publish_camera_tf, self.params.publish_segmentation), self._now_ns)
        # The truth, for evaluation: no agent node subscribes (the agent steers by /odom, as on the robot).
        self._pub_truth = (self.create_publisher(Odometry, topics.GROUND_TRUTH_ODOM, 10)
                           if self.params.publish_ground_truth else None)
        self.create_service(ResetEpisode, topics.RESET_EPISODE, self._on_reset)
        self.create_service(RenderView, topics.RENDER_VIEW, self._on_render)
        self._action_server = ActionServer(self, ExecuteAction, topics.EXECUTE_ACTION, self._on_execute)
        if self.params.publish_camera_tf:
            self._stream.publish_static_tf()
        if self.params.scene_id:
            self._load_scene(self.params.scene_id)
            # One observation set once subscribers had a moment to be discovered (actions publish the rest).
            self._first = self.create_timer(self.params.startup_publish_delay_s, self._publish_first)
        if self.params.republish_rate_hz > 0.0:  # the latest set again while the robot stands still
            period_s = 1.0 / self.params.republish_rate_hz
            self.create_timer(period_s, lambda: self._stream.republish_if_idle(period_s))
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
        stamp_ns = self._stream.publish(obs)
        true_pose = getattr(self._sim, "episode_pose", None)  # EmbeddedSim's truth; other backends: none
        if self._pub_truth is not None and callable(true_pose):
            header = cv.header(stamp_ns, self._frame(topics.ODOM_FRAME))
            self._pub_truth.publish(cv.odometry(true_pose(), header, self._frame(topics.BASE_FRAME)))
        return stamp_ns


def main(args: Optional[list[str]] = None) -> None:
    try:
        run_nodes([SimBridgeNode], args)
    except GoatError as exc:  # a start-up error (unknown backend, habitat_sim missing): its message, no traceback
        sys.exit(f"sim_bridge: {exc}")


if __name__ == "__main__":
    main()
