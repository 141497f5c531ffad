"""The controller node: goals in, one discrete action at a time out, through the robot's ExecuteAction server.

It owns the ``goat_core.agent.Agent`` (perception, the occupancy grid, lifelong instance memory, goal matching and
the policy in one process, exactly as the in-process benchmark loop runs them; docs/ros.md says why) and publishes
each stage's output for rviz and other consumers (``/goat/instances``, ``/goat/map``, ``/goat/path``, ...).

Per-subtask state, the protocol per goal and its decisions: :mod:`goat_ros.controller_session`; moving the robot
(ExecuteAction, Nav2): :mod:`goat_ros.controller_motion`; what is published: :mod:`goat_ros.controller_msgs`.

A lifecycle node (:mod:`goat_ros.lifecycle`): *configure* builds the agent (its models) and the node's topics,
*activate* lets it take goals and act, *deactivate* pauses it (the running subtask ends as an error ``paused``, an
in-flight action completes; the newest goal that arrives while inactive waits and starts at *activate*, so a
client that saw the goal subscription before activation loses nothing; the agent and its map are kept),
*cleanup* drops the agent. ``autostart`` (the default) configures and activates it at start-up.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Optional

from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from goat_core.errors import GoatError
from goat_core.types import DiscreteAction, StopDecision
from goat_interfaces.msg import Goal as GoalMsg
from goat_interfaces.msg import SubtaskOutcome
from goat_ros import controller_msgs as msgs
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.controller_motion import ActionSender, Nav2Handover
from goat_ros.controller_session import ControllerSession, Nav2Done, Subtask, build_agent, timeout_error
from goat_ros.controller_topics import GOAL_QOS, RELIABLE, ControllerPublishers, sensor_topics
from goat_ros.lifecycle import ReleasedAtTeardown
from goat_ros.node_errors import error_text
from goat_ros.params import ControllerParams, check_controller_params, declare


class ControllerNode(ReleasedAtTeardown, LifecycleNode):
    def __init__(self, name: str = "controller", cli_args: Optional[list[str]] = None,
                 nav2_navigator: Any = None) -> None:
        """``nav2_navigator``: with ``motion_mode: nav2``, the BasicNavigator-like object to drive with (tests pass
        a stand-in); None builds nav2_simple_commander's BasicNavigator."""
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, ControllerParams)
        check_controller_params(self.params)
        self._nav2_navigator = nav2_navigator
        self._nav2: Optional[Nav2Handover] = None
        self._sender: Optional[ActionSender] = None
        self.agent: Any = None
        self._s: Any = None
        self._held_goal: Optional[GoalMsg] = None  # the newest goal that came while inactive
        self._pub_tf: Any = None  # map -> odom on /tf, with the localiser (params.localise / filter_depth)
        self._start_lifecycle()

    # ----------------------------------------------------------------------------------------- lifecycle
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.start_error = None
        try:
            self._configure()
        except Exception as exc:  # rclpy would swallow it: log it, keep it for autostart
            self.get_logger().error(f"configure failed: {type(exc).__name__}: {exc}")
            self.start_error = exc
            self._release_configured()
            return TransitionCallbackReturn.FAILURE
        return TransitionCallbackReturn.SUCCESS

    def _configure(self) -> None:
        if self.params.motion_mode == "nav2":  # before the agent
            self._nav2 = Nav2Handover(self, self.params, self._nav2_navigator, self._on_nav2_done)
        self.agent = build_agent(self.params)
        self._s = ControllerSession(self.params, self.agent)
        made = self._entities
        for part, msg_type, topic in sensor_topics(self.params.perception_backend):
            made.subscription(msg_type, topic, functools.partial(self._on_part, part), RELIABLE)
        made.subscription(GoalMsg, topics.GOAL, self._on_goal, GOAL_QOS)
        made.subscription(String, topics.CANCEL_GOAL, self._on_cancel, GOAL_QOS)
        self._pub = ControllerPublishers.make(made)
        # With the localiser, map -> odom moves: it goes on /tf after every act instead of once on /tf_static.
        self._pub_tf = made.publisher(TFMessage, topics.TF, RELIABLE) if self._s.localiser is not None else None
        self._sender = ActionSender(self, self.params.action_timeout_s, lambda: self._s.subtask, self._on_result,
                                    lambda error: self._finish(SubtaskOutcome.ERROR, error))
        made.timer(1.0, self._check_timeout)
        if self._nav2 is not None:
            self._nav2.start_waiting()

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = True
        self.get_logger().info(f"controller ready (perception: {self.params.perception_backend}, "
                               f"motion: {self.params.motion_mode})")
        held, self._held_goal = self._held_goal, None
        if held is not None:  # a goal that came while inactive (a client that saw the subscription early)
            self._on_goal(held)
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = False
        self._finish(SubtaskOutcome.ERROR, "paused: the controller was deactivated")
        self.get_logger().info("controller paused: goals end as errors until it is activated again")
        return TransitionCallbackReturn.SUCCESS

    def _release_configured(self) -> None:
        """What configure made: the topics, the action client, the Nav2 handover and the agent."""
        self._active = False
        self.close()
        if self._sender is not None:
            self._sender.close()
            self._sender = None
        self._entities.destroy_all()
        self.agent = self._s = self._pub_tf = None
        self._held_goal = None

    def close(self) -> None:
        """Cancel a running Nav2 goal and release the navigator (run_nodes calls this before destroy_node)."""
        if self._nav2 is not None:
            self._nav2.close()
            self._nav2 = None

    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _on_part(self, part: str, msg: Any) -> None:
        if self._s.sync.add(part, cv.ns_from_time(msg.header.stamp), msg):
            self._try_act()

    def _on_goal(self, msg: GoalMsg) -> None:
        """Start a subtask; a goal that arrives while another runs ends that one (an in-flight action completes)."""
        if not self._active:  # configured, not yet (or no longer) active: the newest goal waits for activate
            if self._held_goal is not None:
                self._pub.outcome.publish(msgs.outcome_msg(Subtask(goal=self._held_goal), SubtaskOutcome.ERROR,
                                                           "preempted by a new goal while the controller was inactive",
                                                           None, self._now_ns()))
            self._held_goal = msg
            self.get_logger().info(f"goal {msg.episode_id}/{msg.subtask_index} held until the controller is active")
            return
        if self._s.subtask is not None:
            self._finish(SubtaskOutcome.ERROR, "preempted by a new goal")
        try:
            self._s.start(msg)
        except GoatError as exc:
            self.get_logger().warning(f"goal {msg.episode_id}/{msg.subtask_index} rejected: {exc}")
            self._finish(SubtaskOutcome.ERROR, str(exc))
            return
        if self.agent.goal_note is not None:
            self.get_logger().warning(f"goal {msg.episode_id}/{msg.subtask_index}: {self.agent.goal_note}")
        self._pub.goal_marker.publish(msgs.goal_marker(msg, self._now_ns()))
        self._try_act()

    def _on_cancel(self, msg: String) -> None:
        """End the running subtask (its in-flight action completes); ``data``: its episode id, or empty for any."""
        if self._s.subtask is not None and msg.data in ("", self._s.subtask.goal.episode_id):
            self._finish(SubtaskOutcome.ERROR, "cancelled")

    def _try_act(self) -> None:
        if not self._active:
            return
        sub = self._s.ready()
        if sub is None:
            return
        if self._s.anchor_episode() and self._pub_tf is None:
            self._pub.tf_static.publish(msgs.map_to_odom_tf(self._s.anchor, self._now_ns()))
        try:
            pose, action = self._s.act(sub)
        except Exception as exc:  # the node boundary: report the subtask as failed and keep serving goals
            self.get_logger().error(f"subtask {sub.name}: {error_text(exc)}")
            self._finish(SubtaskOutcome.ERROR, error_text(exc))
            return
        if self._pub_tf is not None:  # the localiser's correction, stamped with the set it came from
            self._pub_tf.publish(msgs.map_to_odom_tf(self._s.map_anchor(), self._s.sync.latest_stamp_ns))
        if (self._nav2 is not None and action is not DiscreteAction.STOP
                and self._nav2.hand_over(sub, self.agent, pose, action, self._s.map_anchor())):
            if self.params.publish_debug:
                self._publish_debug()
            return
        self._take(sub, action)

    def _take(self, sub: Subtask, action: DiscreteAction) -> None:
        """Record the agent's action: STOP ends the subtask, any other goes to the robot."""
        sub.record(action)
        if action is not DiscreteAction.STOP:
            assert self._sender is not None  # configured
            self._sender.send(sub, action)
        if self.params.publish_debug:  # while the robot executes the action
            self._publish_debug()
        if action is DiscreteAction.STOP:
            self._finish(SubtaskOutcome.STOP, decision=self.agent.last_stop)

    def _on_result(self, sub: Subtask, future: Any) -> None:
        if sub is not self._s.subtask:
            return
        result = future.result().result
        sub.waiting_for_result = False
        if not result.success:
            self._finish(SubtaskOutcome.ERROR, f"the robot failed the action: {result.message}")
            return
        self._s.action_done(sub, result)
        if sub.budget_spent():
            self._finish(SubtaskOutcome.BUDGET)
            return
        self._try_act()

    def _check_timeout(self) -> None:
        error = timeout_error(self._s.subtask, time.monotonic(), self.params.action_timeout_s)
        if error is not None:
            self._finish(SubtaskOutcome.ERROR, error)

    def _finish(self, stop_reason: str, error: str = "", decision: Optional[StopDecision] = None) -> None:
        sub = self._s.end()
        if sub is None:
            return
        if sub.nav2_active and self._nav2 is not None:
            self._nav2.cancel()  # its CANCELLED report then finds no subtask of its own
        self._pub.outcome.publish(msgs.outcome_msg(sub, stop_reason, error, decision, self._now_ns()))

    def _on_nav2_done(self, done: Nav2Done) -> None:
        sub = done.sub
        if sub is not self._s.subtask or self._nav2 is None:
            return  # a new goal or shutdown ended that subtask, and cancelled the Nav2 goal
        action = sub.nav2_ended()
        if done.succeeded:  # Nav2 stops at the goal: the newest odometry is where the robot ended
            self._finish(SubtaskOutcome.STOP,
                         decision=sub.nav2_reached(self._s.sync.odom_pose(), self._s.map_anchor()))
            return
        self._nav2.fall_back(sub, done.failure())
        step = self._s.resume_after_nav2(action, self.params.sync_tolerance_s > 0.0, self._now_ns())
        if step is None:
            self._try_act()
        else:
            self._take(sub, step)

    def _publish_debug(self) -> None:
        self._pub.publish_debug(self.agent, self._s.sync.latest_stamp_ns)


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([ControllerNode], args)


if __name__ == "__main__":
    main()
