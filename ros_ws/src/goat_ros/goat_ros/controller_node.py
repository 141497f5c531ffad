"""The controller node: goals in, one discrete action at a time out, through the robot's ExecuteAction server.

It owns the ``goat_core.agent.Agent``, which composes ground-truth perception, the occupancy grid and lifelong
instance memory, goal matching and the discrete-action policy, exactly as the in-process benchmark loop does.
Running those stages inside one node (rather than as separate perception / instance_mapping / goal_matching
processes) keeps the action sequence identical to the in-process run and avoids sending full-size masks
between processes every step; this node publishes each stage's output for rviz and other consumers
(``/goat/instances``, ``/goat/map``, ``/goat/path``, ...). See docs/ros.md.

Protocol per goal: wait for an observation set not older than the goal's stamp, ``act``; STOP ends the subtask,
any other action is sent to ``/goat/execute_action``; its result names the stamp of the observation set it
produced, and the controller acts again once that set is complete. One ``SubtaskOutcome`` per goal.

``motion_mode: nav2`` (the physical robot, docs/robot.md section 8): the agent still decides every step, and
scanning and exploring still go through ``/goat/execute_action``; when it heads for a confident match
(``goat_stretch.nav2_mode.handover_instance``), that instance's approach pose goes to Nav2 instead, and Nav2's
success ends the subtask with STOP. A Nav2 failure, a timeout or no free approach pose leave the rest of the
subtask to discrete actions.
"""

from __future__ import annotations

import functools
import queue
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from nav_msgs.msg import OccupancyGrid, Odometry, Path
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from goat_core.errors import ConfigError, GoatError
from goat_core.types import DiscreteAction, Instance, Pose2D, StopDecision
from goat_interfaces.action import ExecuteAction
from goat_interfaces.msg import Goal as GoalMsg
from goat_interfaces.msg import InstanceLabels, Instances, SubtaskOutcome
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.observation_sync import ActionFeedback, ObservationSync, to_episode_frame
from goat_ros.params import ControllerParams, check_controller_params, declare

if TYPE_CHECKING:
    from goat_stretch.nav2_mode import Nav2GoalSender, Nav2Outcome

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
GOAL_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


@dataclass
class _Subtask:
    goal: GoalMsg
    actions: list[int] = field(default_factory=list)
    poses: list[Pose2D] = field(default_factory=list)
    waiting_for_result: bool = False
    action_sent_s: float = field(default_factory=time.monotonic)  # last progress: goal start or action sent
    nav2_active: bool = False  # Nav2 drives the final approach
    nav2_fell_back: bool = False  # Nav2 failed or had no pose: discrete actions for the rest of the subtask
    held_action: Optional[DiscreteAction] = None  # the agent's step that the Nav2 handover replaced
    nav2_target: Optional[Instance] = None  # the instance whose approach Nav2 drives


@dataclass(frozen=True)
class _Nav2Done:
    """A Nav2 goal ended (posted by the sender's worker thread, handled on the executor's)."""

    sub: _Subtask
    outcome: Nav2Outcome
    detail: str


class ControllerNode(Node):
    def __init__(self, name: str = "controller", cli_args: Optional[list[str]] = None,
                 nav2_navigator: Any = None) -> None:
        """``nav2_navigator``: with ``motion_mode: nav2``, the BasicNavigator-like object to drive with (tests pass
        a stand-in); None builds nav2_simple_commander's BasicNavigator."""
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, ControllerParams)
        check_controller_params(self.params)
        self._nav2 = self._build_nav2(nav2_navigator) if self.params.motion_mode == "nav2" else None
        self.agent = self._build_agent()
        self._sync = ObservationSync(with_segmentation=self.params.perception_backend == "ground_truth",
                                     camera_height_m=self.params.camera_height_m,
                                     max_skew_s=self.params.sync_tolerance_s)
        self._subtask: Optional[_Subtask] = None
        self._episode_id: Optional[str] = None
        self._anchor: Optional[Pose2D] = None  # odom pose at the episode start (the map frame's origin)
        self._need_stamp_ns = 0  # the next act needs an observation set at least this new
        self._feedback: Optional[ActionFeedback] = None
        self._add_sensor_subscriptions()
        self.create_subscription(GoalMsg, topics.GOAL, self._on_goal, GOAL_QOS)
        self.create_subscription(String, topics.CANCEL_GOAL, self._on_cancel, GOAL_QOS)
        self._pub_outcome = self.create_publisher(SubtaskOutcome, topics.OUTCOME, GOAL_QOS)
        self._pub_map = self.create_publisher(OccupancyGrid, topics.MAP, LATCHED)
        self._pub_instances = self.create_publisher(Instances, topics.INSTANCES, RELIABLE)
        self._pub_markers = self.create_publisher(MarkerArray, topics.INSTANCE_MARKERS, RELIABLE)
        self._pub_path = self.create_publisher(Path, topics.PATH, RELIABLE)
        self._pub_goal_marker = self.create_publisher(Marker, topics.CURRENT_GOAL, LATCHED)
        self._pub_tf_static = self.create_publisher(TFMessage, topics.TF_STATIC, LATCHED)
        self._action_client = ActionClient(self, ExecuteAction, topics.EXECUTE_ACTION)
        self.create_timer(1.0, self._check_timeout)
        if self._nav2 is not None:
            self.get_logger().info(f"motion_mode nav2: waiting for Nav2 (localizer {self.params.nav2_localizer}); "
                                   "until it is active, approaches are discrete")
            self._nav2.start_waiting_until_active(self._post_nav2_event)
        self.get_logger().info(f"controller ready (perception: {self.params.perception_backend}, "
                               f"motion: {self.params.motion_mode})")

    def _build_nav2(self, navigator: Any) -> Nav2GoalSender:
        """The Nav2 sender, before the agent is built: GoatError at once without nav2_simple_commander."""
        try:
            from goat_stretch.nav2_start import build_sender
        except ImportError as exc:
            raise ConfigError(f"motion_mode nav2 needs the goat_stretch package (ros_ws/src/goat_stretch): {exc}"
                              ) from None
        self._nav2_events: queue.SimpleQueue[_Nav2Done | str] = queue.SimpleQueue()
        # BasicNavigator's calls block while they spin their own node; run on this node's executor they would
        # stall every sensor, goal and timer callback for a whole drive (and spinning from inside a callback is not
        # supported). So the sender calls them in a worker thread, which only posts what happened to this queue and
        # triggers the guard condition: the executor thread handles it, and all controller state stays on that
        # one thread.
        self._nav2_wake = self.create_guard_condition(self._on_nav2_events)
        return build_sender(self, self.params, navigator)  # amcl: the initial pose, or localisation's

    def _post_nav2_event(self, event: _Nav2Done | str) -> None:
        """From the sender's worker thread: queue the event and wake the executor."""
        self._nav2_events.put(event)
        try:
            self._nav2_wake.trigger()
        except RuntimeError:  # rclpy's InvalidHandle: the node was destroyed (shutdown) while Nav2 was still busy
            pass

    def close(self) -> None:
        """Cancel a running Nav2 goal and release the navigator (run_nodes calls this before destroy_node)."""
        if self._nav2 is not None:
            self._nav2.close()

    def _build_agent(self) -> Any:
        """The agent over the configured perception backend and matcher; model folders are checked first."""
        from goat_core.agent import AgentConfig
        from goat_core.matching.matcher import MatcherConfig
        from goat_core.matching.selection import StackConfig
        from goat_core.perception.factory import PerceptionConfig
        from goat_core.perception.model_folder import check_model_folder
        from goat_nav.runner import build_agent
        from sim_bridge.embedded.catalogue import CATALOGUE

        p = self.params
        stack = StackConfig(perception=PerceptionConfig(backend=p.perception_backend, model_dir=p.model_dir or None,
                                                        device=p.device),
                            matcher=p.matcher, image_matcher=p.image_matcher, clip_model_dir=p.clip_model_dir or None)
        if p.perception_backend != "ground_truth":
            check_model_folder(p.model_dir or None, p.perception_backend)
        # Every backend names the categories of the simulator's catalogue (GOAT's object vocabulary), as the
        # in-process run does.
        return build_agent(AgentConfig(use_memory=p.use_memory), MatcherConfig(), [spec.name for spec in CATALOGUE],
                           stack=stack)

    def _add_sensor_subscriptions(self) -> None:
        subs: list[tuple[str, type, str]] = [
            ("rgb", Image, topics.RGB), ("depth", Image, topics.DEPTH), ("info", CameraInfo, topics.CAMERA_INFO),
            ("joints", JointState, topics.JOINT_STATES), ("odom", Odometry, topics.ODOM)]
        if self.params.perception_backend == "ground_truth":
            subs += [("segmentation", Image, topics.SEGMENTATION), ("labels", InstanceLabels, topics.INSTANCE_LABELS)]
        for part, msg_type, topic in subs:
            self.create_subscription(msg_type, topic, functools.partial(self._on_part, part), RELIABLE)

    # ---------------------------------------------------------------------------------------- callbacks
    def _on_part(self, part: str, msg: Any) -> None:
        if self._sync.add(part, cv.ns_from_time(msg.header.stamp), msg):
            self._try_act()

    def _on_goal(self, msg: GoalMsg) -> None:
        """Start a subtask; a goal that arrives while another runs ends that one (an in-flight action completes)."""
        if self._subtask is not None:
            self._finish(SubtaskOutcome.ERROR, "preempted by a new goal")
        new_episode = msg.episode_id != self._episode_id or msg.subtask_index == 0
        self._need_stamp_ns = max(self._need_stamp_ns, cv.ns_from_time(msg.header.stamp))
        self._subtask = _Subtask(goal=msg)
        try:
            goal = cv.msg_to_goal(msg)
            if new_episode:
                self.agent.reset_episode()
                self._episode_id = msg.episode_id
                self._anchor = None
            self.agent.start_subtask(goal)
        except GoatError as exc:
            self.get_logger().warning(f"goal {msg.episode_id}/{msg.subtask_index} rejected: {exc}")
            self._finish(SubtaskOutcome.ERROR, str(exc))
            return
        if self.agent.goal_note is not None:
            self.get_logger().warning(f"goal {msg.episode_id}/{msg.subtask_index}: {self.agent.goal_note}")
        self._publish_goal_marker(msg)
        self._try_act()

    def _on_cancel(self, msg: String) -> None:
        """End the running subtask (its in-flight action completes); ``data``: its episode id, or empty for any."""
        if self._subtask is not None and msg.data in ("", self._subtask.goal.episode_id):
            self._finish(SubtaskOutcome.ERROR, "cancelled")

    def _try_act(self) -> None:
        sub = self._subtask
        if sub is None or sub.waiting_for_result or self._sync.latest_stamp_ns < self._need_stamp_ns:
            return
        if sub.nav2_active:  # Nav2 drives; its report decides what comes next
            return
        if self._anchor is None:
            self._anchor = self._sync.odom_pose()
            self._publish_map_to_odom()
        try:
            obs = self._sync.observation(self._feedback, self._anchor)
            if not sub.poses:
                sub.poses.append(obs.pose)
            action = self.agent.act(obs)
        except Exception as exc:  # the node boundary: report the subtask as failed and keep serving goals
            kind = "" if isinstance(exc, GoatError) else f"internal error {type(exc).__name__}: "
            self.get_logger().error(f"subtask {sub.goal.episode_id}/{sub.goal.subtask_index}: {kind}{exc}")
            self._finish(SubtaskOutcome.ERROR, f"{kind}{exc}")
            return
        if self._nav2 is not None and action is not DiscreteAction.STOP and self._hand_over(sub, obs.pose, action):
            return
        self._take(sub, action)

    def _take(self, sub: _Subtask, action: DiscreteAction) -> None:
        """Record the agent's action: STOP ends the subtask, any other goes to the robot."""
        sub.actions.append(int(action))
        if action is not DiscreteAction.STOP:
            sub.waiting_for_result = True
            sub.action_sent_s = time.monotonic()
            self._send(sub, action)
        if self.params.publish_debug:  # while the robot executes the action
            self._publish_debug(self._sync.latest_stamp_ns)
        if action is DiscreteAction.STOP:
            self._finish(SubtaskOutcome.STOP, decision=self.agent.last_stop)

    def _send(self, sub: _Subtask, action: DiscreteAction) -> None:
        """Send the action; while the server is not discovered yet, retry until action_timeout_s."""
        if sub is not self._subtask:
            return
        if not self._action_client.server_is_ready():
            if time.monotonic() - sub.action_sent_s > self.params.action_timeout_s:
                self._finish(SubtaskOutcome.ERROR, f"action server {topics.EXECUTE_ACTION} is not available")
                return

            def retry() -> None:
                self.destroy_timer(timer)
                self._send(sub, action)

            timer = self.create_timer(0.05, retry)
            return
        future = self._action_client.send_goal_async(ExecuteAction.Goal(action=int(action)))
        future.add_done_callback(lambda f: self._on_goal_response(sub, f))

    def _on_goal_response(self, sub: _Subtask, future: Any) -> None:
        handle = future.result()
        if sub is not self._subtask:
            return
        if not handle.accepted:
            self._finish(SubtaskOutcome.ERROR, "the robot rejected the action")
            return
        handle.get_result_async().add_done_callback(lambda f: self._on_result(sub, f))

    def _on_result(self, sub: _Subtask, future: Any) -> None:
        if sub is not self._subtask:
            return
        result = future.result().result
        sub.waiting_for_result = False
        if not result.success:
            self._finish(SubtaskOutcome.ERROR, f"the robot failed the action: {result.message}")
            return
        stamp_ns = cv.ns_from_time(result.observation_stamp)
        self._feedback = ActionFeedback(stamp_ns=stamp_ns, pose=cv.msg_to_pose2d(result.pose),
                                        collided=bool(result.collided), step=int(result.step))
        self._need_stamp_ns = stamp_ns
        sub.poses.append(to_episode_frame(cv.msg_to_pose2d(result.pose), self._anchor))
        budget = int(sub.goal.max_actions)
        if budget and len(sub.actions) >= budget:
            self._finish(SubtaskOutcome.BUDGET)
            return
        self._try_act()

    def _check_timeout(self) -> None:
        sub = self._subtask
        if sub is None or sub.nav2_active:  # Nav2 has its own timeout, nav2_timeout_s
            return
        if time.monotonic() - sub.action_sent_s <= self.params.action_timeout_s + 1.0:
            return
        if sub.waiting_for_result:
            self._finish(SubtaskOutcome.ERROR, f"no action result within {self.params.action_timeout_s} s")
        else:
            self._finish(SubtaskOutcome.ERROR, f"no complete observation set within {self.params.action_timeout_s} s "
                                               f"(are {topics.RGB} and the other camera topics published?)")

    def _finish(self, stop_reason: str, error: str = "", decision: Optional[StopDecision] = None) -> None:
        sub = self._subtask
        if sub is None:
            return
        self._subtask = None
        if sub.nav2_active and self._nav2 is not None:
            self._nav2.cancel()  # its CANCELLED report then finds no subtask of its own
        g = sub.goal
        msg = SubtaskOutcome(header=cv.header(self.get_clock().now().nanoseconds, topics.MAP_FRAME),
                             episode_id=g.episode_id, subtask_index=g.subtask_index, modality=g.modality,
                             target_id=g.target_id, stop_reason=stop_reason, error=error, actions=sub.actions,
                             poses=[cv.pose2d_to_msg(p) for p in sub.poses], **cv.stop_decision_fields(decision))
        self._pub_outcome.publish(msg)

    # ------------------------------------------------------------------------------------------- Nav2
    def _hand_over(self, sub: _Subtask, pose: Pose2D, action: DiscreteAction) -> bool:
        """Send the approach pose of the instance the agent heads for to Nav2, when it is time; True if sent."""
        from goat_stretch.nav2_mode import (
            NoApproachPoseError,
            episode_to_odom,
            handover_instance,
            instance_goal_pose,
            occupancy_is_free,
        )

        nav2 = self._nav2
        assert nav2 is not None
        instance = handover_instance(self.agent.debug_state(), self.agent.memory.instances,
                                     nav2_ready=nav2.ready and not nav2.busy, fell_back=sub.nav2_fell_back)
        if instance is None:
            return False
        try:
            goal = instance_goal_pose(instance, pose, self.params.nav2_standoff_m,
                                      occupancy_is_free(self.agent.occupancy, self.agent.config.robot_radius_m))
        except NoApproachPoseError as exc:
            self._fall_back(sub, str(exc))
            return False
        sent = goal
        if self.params.nav2_frame_id == topics.ODOM_FRAME:
            sent = episode_to_odom(goal, self._anchor or Pose2D(0.0, 0.0, 0.0))
        sub.nav2_active, sub.held_action, sub.nav2_target = True, action, instance
        self.get_logger().info(
            f"subtask {sub.goal.episode_id}/{sub.goal.subtask_index}: approach of instance {instance.instance_id} "
            f"({instance.category}) handed to Nav2: ({sent.x_m:.2f}, {sent.y_m:.2f}) m, {sent.yaw_rad:.2f} rad in "
            f"{self.params.nav2_frame_id}")
        nav2.start(sent, self.params.nav2_timeout_s,
                   lambda outcome, detail: self._post_nav2_event(_Nav2Done(sub, outcome, detail)))
        if self.params.publish_debug:
            self._publish_debug(self._sync.latest_stamp_ns)
        return True

    def _fall_back(self, sub: _Subtask, why: str) -> None:
        sub.nav2_fell_back = True
        self.get_logger().warning(f"subtask {sub.goal.episode_id}/{sub.goal.subtask_index}: {why}; discrete "
                                  "actions for the rest of this subtask")

    def _on_nav2_events(self) -> None:
        while not self._nav2_events.empty():
            event = self._nav2_events.get()
            if isinstance(event, str):
                if event:
                    self.get_logger().error(f"waiting for Nav2 failed ({event}); approaches stay discrete")
                else:
                    self.get_logger().info("Nav2 is active: final approaches go to Nav2")
            else:
                self._on_nav2_done(event)

    def _on_nav2_done(self, done: _Nav2Done) -> None:
        from goat_stretch.nav2_mode import Nav2Outcome

        sub = done.sub
        if sub is not self._subtask:
            return  # a new goal or shutdown ended that subtask, and cancelled the Nav2 goal
        sub.nav2_active = False
        sub.action_sent_s = time.monotonic()
        action, sub.held_action = sub.held_action, None
        if done.outcome is Nav2Outcome.SUCCEEDED:
            # Nav2 stops at the goal: the odometry of the newest observation set is where the robot ended.
            odom = self._sync.odom_pose()
            if odom is not None:
                sub.poses.append(to_episode_frame(odom, self._anchor))
            sub.actions.append(int(DiscreteAction.STOP))
            target = sub.nav2_target
            self._finish(SubtaskOutcome.STOP, decision=None if target is None else StopDecision.at(
                target, True, f"Nav2 reached the approach pose of {target.category} #{target.instance_id}"))
            return
        self._fall_back(sub, f"Nav2 {done.outcome.value}{': ' + done.detail if done.detail else ''}")
        if self.params.sync_tolerance_s > 0.0 or action is None:
            # Streaming sensors: the robot may have moved under Nav2, so act afresh on a set taken after it stopped.
            self._need_stamp_ns = max(self._need_stamp_ns, self.get_clock().now().nanoseconds)
            self._try_act()
        else:
            # The simulator bridge publishes one observation set per action, so nothing newer comes: take the step
            # the agent chose from the current one, as the discrete mode would have.
            self._take(sub, action)

    # ------------------------------------------------------------------------------------------- rviz
    def _publish_debug(self, stamp_ns: int) -> None:
        hdr = cv.header(stamp_ns, topics.MAP_FRAME)
        state = self.agent.debug_state()
        self._pub_map.publish(cv.occupancy_to_msg(self.agent.occupancy, hdr))
        match = state.match
        scores = {match.instance_id: match.score} if match.instance_id is not None else {}
        instances = cv.instances_to_msg(self.agent.memory.instances.values(), hdr, scores)
        self._pub_instances.publish(instances)
        self._pub_markers.publish(cv.instances_to_markers(instances, state.target_instance_id))
        self._pub_path.publish(cv.path_to_msg(state.path_xy_m, hdr))

    def _publish_goal_marker(self, msg: GoalMsg) -> None:
        self._pub_goal_marker.publish(cv.goal_marker(msg, cv.header(self.get_clock().now().nanoseconds,
                                                                    topics.BASE_FRAME)))

    def _publish_map_to_odom(self) -> None:
        """map = the episode frame: the odom pose at the episode start."""
        hdr = cv.header(self.get_clock().now().nanoseconds, topics.MAP_FRAME)
        self._pub_tf_static.publish(TFMessage(transforms=[
            cv.map_to_odom(self._anchor or Pose2D(0.0, 0.0, 0.0), hdr, topics.ODOM_FRAME)]))


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([ControllerNode], args)


if __name__ == "__main__":
    main()
