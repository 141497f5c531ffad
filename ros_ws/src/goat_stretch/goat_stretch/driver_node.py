"""The Stretch driver node: serves ``/goat/execute_action`` through stretch_body, with the executor's safety stops.

    ros2 run goat_stretch stretch_driver --ros-args --params-file config/stretch_driver.yaml

The node owns the stretch_body ``Robot`` (only one process can: stop stretch_ros2's ``stretch_driver`` first,
keep its camera launch). It subscribes to the head camera's aligned depth and camera info (upright: the
head_camera relay turns them) for the forward-step obstacle check, and with ``publish_state`` publishes ``/odom``,
``/joint_states`` and the odom -> base_link TF from stretch_body's status (what stretch_ros2's driver would
publish). An action's result carries the stamp of the first depth frame captured after the motion ended, so the
controller acts on an observation of the new pose (:mod:`goat_stretch.driver_io` holds that frame).

A refusal or a safety stop is logged once and reported in the result (``message``); runstop, timeout, no depth,
not homed and busy abort the goal (``success`` false), an obstacle refusal or a contact stop succeed with
``collided`` true, as a bump does in the simulator. The node refuses to start when the robot is not homed or does
not start.

With ``accept_cmd_vel`` the node also subscribes to ``/cmd_vel`` (geometry_msgs/Twist: ``linear.x`` m/s forward,
``angular.z`` rad/s counter-clockwise, REP 103; what Nav2's controller server publishes) and hands each command to
:class:`goat_stretch.velocity.VelocityController`; a timer at ``cmd_vel_check_rate_hz`` calls its ``tick`` (stale
commands, runstop, the path ahead). Whoever has the base keeps it: a discrete action waits up to
``cmd_vel_timeout_s`` plus one check for a non-zero velocity in effect to end and is refused (``busy``) if it does
not, and velocity commands are ignored while a discrete action runs. Each change of what the velocity path does is
logged once (a warning for a safety rule), not every message.

The node is a lifecycle node (``rclpy.lifecycle``, as nav2's nodes are): *configure* takes the robot (stretch_body
or the stand-in), checks it is homed and creates the subscriptions, the state publishers and the action server;
*activate* accepts actions and velocity commands; *deactivate* pauses it: the running action is cancelled, the base
stopped, velocity commands ignored and new actions refused (``inactive``), while the state is still published;
*cleanup* stops the base and releases stretch_body. With ``autostart`` (the default) the node configures and
activates itself at start-up, as before; ``goat-nav launch`` and the launch files set it false and let the
lifecycle manager (:mod:`goat_ros.lifecycle_manager_node`) drive the transitions.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from geometry_msgs.msg import Twist
from rclpy.action import CancelResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image

from goat_core.types import DiscreteAction
from goat_interfaces.action import ExecuteAction
from goat_ros import topics
from goat_ros.lifecycle import ReleasedAtTeardown
from goat_ros.params import StretchDriverParams, declare
from goat_stretch.body import RobotLike, base_pose
from goat_stretch.bringup import executor_config, head_calibration, make_robot, shutdown_exceptions, velocity_config
from goat_stretch.driver import DepthSnapshot, DiscreteActionExecutor, MonotonicClock
from goat_stretch.driver_io import STATE_TOPICS, DepthCache, action_result, log_at, refusal, state_msgs
from goat_stretch.velocity import VelocityController, VelocityLog, VelocityOutcome, VelocityReason

SENSOR_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
CMD_VEL = "/cmd_vel"  # Nav2's default output; stretch_ros2's driver listens on /stretch/cmd_vel (remap if needed)


class StretchDriverNode(ReleasedAtTeardown, LifecycleNode):
    def __init__(self, name: str = "stretch_driver", cli_args: Optional[list[str]] = None,
                 robot: Optional[RobotLike] = None) -> None:
        """``robot``: a started robot to drive (tests); None makes one of ``robot_backend`` at *configure*."""
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, StretchDriverParams)
        self._calibration = head_calibration(self.params)  # a bad file fails before the robot is taken
        self._given_robot = robot
        self._robot: Any = None
        self._executor: Any = None
        self._head: Any = None
        self._depth = DepthCache(lambda: self.get_clock().now().nanoseconds)
        self._step = 0
        self._busy = threading.Lock()  # one action at a time; cancel requests may arrive while it runs
        self._wall_clock = MonotonicClock()  # the robot's time base for cmd_vel staleness (not sim time)
        self._velocity: Optional[VelocityController] = None
        self._velocity_log = VelocityLog()
        self._start_lifecycle()

    # ----------------------------------------------------------------------------------------- lifecycle
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.start_error = None
        try:
            self._robot = self._given_robot if self._given_robot is not None else make_robot(self.params.robot_backend)
            self._executor = DiscreteActionExecutor(self._robot, executor_config(self.params), MonotonicClock(),
                                                    self._calibration)
            self._head = self._executor.head  # calibrated angles, as stretch_ros2 publishes them
            self._executor.check_ready()
        except Exception as exc:  # rclpy would swallow it: log it, keep it for autostart
            self.get_logger().error(f"refusing to start: {exc}")
            if self._robot is not None:
                self._robot.stop()
            self._executor = self._head = None
            self.start_error = exc
            return TransitionCallbackReturn.FAILURE
        sensors = ReentrantCallbackGroup()
        made = self._entities
        made.subscription(Image, topics.DEPTH, self._depth.on_depth, SENSOR_QOS, callback_group=sensors)
        made.subscription(CameraInfo, topics.CAMERA_INFO, self._depth.on_info, SENSOR_QOS, callback_group=sensors)
        if self.params.publish_state:
            self._pub_state = [made.publisher(msg_type, topic, SENSOR_QOS) for msg_type, topic in STATE_TOPICS]
            made.timer(1.0 / self.params.state_rate_hz, self._publish_state, callback_group=sensors)
        made.action_server(ExecuteAction, topics.EXECUTE_ACTION, self._on_execute,
                           callback_group=ReentrantCallbackGroup(), cancel_callback=self._on_cancel)
        if self.params.accept_cmd_vel:
            velocity_group = MutuallyExclusiveCallbackGroup()
            made.subscription(Twist, CMD_VEL, self._on_cmd_vel, 1, callback_group=velocity_group)
            made.timer(1.0 / self.params.cmd_vel_check_rate_hz, self._on_velocity_tick,
                       callback_group=velocity_group)
        self.get_logger().info(f"stretch_driver configured ({self.params.robot_backend})")
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        serving = topics.EXECUTE_ACTION
        if self.params.accept_cmd_vel:
            self._velocity = VelocityController(self._executor, velocity_config(self.params))
            serving += f" and {CMD_VEL}"
        self._active = True
        self.get_logger().info(f"stretch_driver ready ({self.params.robot_backend}): serving {serving}")
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._pause()
        self.get_logger().info("stretch_driver paused: actions refused, cmd_vel ignored, the base stopped")
        return TransitionCallbackReturn.SUCCESS

    def _pause(self) -> None:
        """Refuse new actions, end the running one and the velocity path, stop the base."""
        self._active = False
        if self._executor is None:
            return
        self._executor.cancel()  # a running action stops and halts the base
        with self._busy:  # until it has
            if self._velocity is not None:
                self._log_velocity(self._velocity.close())  # later cmd_vel messages are ignored
                self._velocity = None
            self._executor.stop_base()

    def _release_configured(self) -> None:
        """Stop the base, drop what *configure* made and release stretch_body."""
        configured = self._executor is not None
        try:
            if self._active:
                self._pause()
            self._entities.destroy_all()
        finally:
            self._executor = self._head = None
            if configured:
                self._robot.stop()  # the reference stays: the last robot, released

    def _fresh_depth(self) -> Optional[DepthSnapshot]:
        return self._depth.snapshot(self.params.max_depth_age_s, self._head.tilt_rad, self.params.camera_height_m)

    # ----------------------------------------------------------------------------------------- action
    def _on_execute(self, goal_handle: Any) -> ExecuteAction.Result:
        if not self._active:
            goal_handle.abort()
            return refusal("inactive: the driver is paused (lifecycle state inactive); activate it first")
        try:
            action = DiscreteAction(int(goal_handle.request.action))
        except ValueError:
            goal_handle.abort()
            return refusal(f"unknown action {goal_handle.request.action!r}")
        if not self._busy.acquire(blocking=False):
            goal_handle.abort()
            return refusal("busy: another action is running")
        try:
            outcome = self._executor.execute(action, self._fresh_depth())
        finally:
            self._busy.release()
        self._step += 1
        end_ns = self.get_clock().now().nanoseconds
        log_at(self.get_logger(), f"{action.name}: {outcome.reason.value}: {outcome.message}",
               error=not outcome.success, warning=outcome.collided, info=False)
        stamp_ns = self._depth.stamp_after(end_ns, self.params.observation_wait_s)
        result = action_result(outcome, stamp_ns if stamp_ns is not None else end_ns, self._step)
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif outcome.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def _on_cancel(self, goal_handle: Any) -> CancelResponse:
        """Accept every cancel request: the running motion stops and the base halts."""
        self._executor.cancel()
        return CancelResponse.ACCEPT

    # ----------------------------------------------------------------------------------------- velocity
    def _on_cmd_vel(self, msg: Twist) -> None:
        if self._velocity is None:  # not active
            return
        outcome = self._velocity.command(msg.linear.x, msg.angular.z, self._wall_clock.now_s(), self._fresh_depth)
        self._log_velocity(outcome)

    def _on_velocity_tick(self) -> None:
        if self._velocity is None:  # not active
            return
        outcome = self._velocity.tick(self._wall_clock.now_s(), self._fresh_depth)
        if outcome is not None:
            self._log_velocity(outcome)

    def _log_velocity(self, outcome: VelocityOutcome) -> None:
        """Log what the velocity path does when it changes (commands arrive at 20 Hz: not every message)."""
        if self._velocity_log.changed(outcome):
            log_at(self.get_logger(), f"cmd_vel: {outcome.reason.value}: {outcome.message}",
                   error=outcome.reason is VelocityReason.ERROR, warning=outcome.safety)

    # ----------------------------------------------------------------------------------------- state
    def _publish_state(self) -> None:
        pose, tilt = base_pose(self._robot), self._head.tilt_rad()
        for publisher, msg in zip(self._pub_state, state_msgs(pose, self._head.pan_rad(), tilt,
                                                              self.get_clock().now().nanoseconds), strict=True):
            publisher.publish(msg)

    def close(self) -> None:
        """Stop the base (velocity mode too) and release stretch_body (node shut-down), in any lifecycle state."""
        self._release_configured()


def main(args: Optional[list[str]] = None) -> None:
    """``ros2 run goat_stretch stretch_driver``: a multi-threaded executor, so sensors arrive during a motion."""
    import rclpy
    from rclpy.executors import MultiThreadedExecutor

    from goat_ros.spin import stop_threaded_executor

    rclpy.init(args=args)
    node: Optional[StretchDriverNode] = None
    executor = MultiThreadedExecutor(num_threads=4)  # sensors, an action, cmd_vel and its check, cancels
    try:
        node = StretchDriverNode()
        executor.add_node(node)
        executor.spin()
    except shutdown_exceptions():  # Ctrl-C, also as stretch_body's own ThreadServiceExit
        pass
    finally:
        if node is not None:
            node.close()  # the base stops first; callbacks still running then end before the node goes
        stop_threaded_executor(executor)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
