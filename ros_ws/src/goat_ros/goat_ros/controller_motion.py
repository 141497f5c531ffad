"""How the controller node moves the robot: discrete actions through the robot's ExecuteAction server and, with
``motion_mode: nav2`` (docs/robot.md section 8), final approaches through Nav2 (the goal sender, the events of its
worker thread brought onto the executor's thread, and the hand-over)."""

from __future__ import annotations

import queue
import time
from typing import TYPE_CHECKING, Any, Callable, Optional

from rclpy.action import ActionClient

from goat_core.errors import ConfigError
from goat_core.types import DiscreteAction, Pose2D
from goat_interfaces.action import ExecuteAction
from goat_ros import topics
from goat_ros.controller_session import Nav2Done, Subtask, plan_handover
from goat_ros.params import ControllerParams

if TYPE_CHECKING:
    from rclpy.node import Node

    from goat_core.agent import Agent


class ActionSender:
    """Sends ``node``'s discrete actions to ``/goat/execute_action``; while the server is not discovered yet it
    retries until ``timeout_s``. Answers for a subtask that is no longer ``current()`` are dropped; the result
    future of an accepted action goes to ``on_result``, a failure's text to ``on_error``."""

    def __init__(self, node: Node, timeout_s: float, current: Callable[[], Optional[Subtask]],
                 on_result: Callable[[Subtask, Any], None], on_error: Callable[[str], None]) -> None:
        self._node, self._timeout_s = node, timeout_s
        self._current, self._on_result, self._on_error = current, on_result, on_error
        self._client = ActionClient(node, ExecuteAction, topics.EXECUTE_ACTION)

    def close(self) -> None:
        """Destroy the action client (the controller's lifecycle cleanup)."""
        self._client.destroy()

    def send(self, sub: Subtask, action: DiscreteAction) -> None:
        if sub is not self._current():
            return
        if not self._client.server_is_ready():
            if time.monotonic() - sub.action_sent_s > self._timeout_s:
                self._on_error(f"action server {topics.EXECUTE_ACTION} is not available")
                return

            def retry() -> None:
                self._node.destroy_timer(timer)
                self.send(sub, action)

            timer = self._node.create_timer(0.05, retry)
            return
        future = self._client.send_goal_async(ExecuteAction.Goal(action=int(action)))
        future.add_done_callback(lambda f: self._on_goal_response(sub, f))

    def _on_goal_response(self, sub: Subtask, future: Any) -> None:
        handle = future.result()
        if sub is not self._current():
            return
        if not handle.accepted:
            self._on_error("the robot rejected the action")
            return
        handle.get_result_async().add_done_callback(lambda f: self._on_result(sub, f))


class Nav2Handover:
    """Sends approach poses to Nav2 for ``node``; each ended Nav2 goal goes to ``on_done`` on the executor's
    thread. GoatError at once without goat_stretch (nav2_simple_commander)."""

    def __init__(self, node: Node, params: ControllerParams, navigator: Any,
                 on_done: Callable[[Nav2Done], None]) -> None:
        try:
            from goat_ros.nav2_start import build_sender
        except ImportError as exc:
            raise ConfigError(f"motion_mode nav2 needs the goat_stretch package (ros_ws/src/goat_stretch): {exc}"
                              ) from None
        self._node, self._params, self._on_done = node, params, on_done
        self._events: queue.SimpleQueue[Nav2Done | str] = queue.SimpleQueue()
        # BasicNavigator's calls block while they spin their own node; run on this node's executor they would
        # stall every sensor, goal and timer callback for a whole drive (and spinning from inside a callback is not
        # supported). So the sender calls them in a worker thread, which only posts what happened to this queue and
        # triggers the guard condition: the executor thread handles it, and all controller state stays on that
        # one thread.
        self._wake = node.create_guard_condition(self._on_events)
        self._sender = build_sender(node, params, navigator)  # amcl: the initial pose, or localisation's

    def start_waiting(self) -> None:
        """Wait for Nav2 to become active (in the sender's thread); approaches are discrete until then."""
        self._node.get_logger().info(f"motion_mode nav2: waiting for Nav2 (localizer {self._params.nav2_localizer}); "
                                     "until it is active, approaches are discrete")
        self._sender.start_waiting_until_active(self._post)

    def _post(self, event: Nav2Done | str) -> None:
        """From the sender's worker thread: queue the event and wake the executor."""
        self._events.put(event)
        try:
            self._wake.trigger()
        except RuntimeError:  # rclpy's InvalidHandle: the node was destroyed (shutdown) while Nav2 was still busy
            pass

    def _on_events(self) -> None:
        while not self._events.empty():
            event = self._events.get()
            if isinstance(event, str):
                if event:
                    self._node.get_logger().error(f"waiting for Nav2 failed ({event}); approaches stay discrete")
                else:
                    self._node.get_logger().info("Nav2 is active: final approaches go to Nav2")
            else:
                self._on_done(event)

    def hand_over(self, sub: Subtask, agent: Agent, pose: Pose2D, action: DiscreteAction,
                  anchor: Optional[Pose2D]) -> bool:
        """Send the approach pose of the instance the agent heads for to Nav2, when it is time; True if sent."""
        from goat_ros.nav2_mode import NoApproachPoseError

        try:
            plan = plan_handover(agent, sub, pose, self._params, anchor,
                                 nav2_ready=self._sender.ready and not self._sender.busy)
        except NoApproachPoseError as exc:
            self.fall_back(sub, str(exc))
            return False
        if plan is None:
            return False
        sub.hand_over(action, plan.instance)
        sent, instance = plan.goal, plan.instance
        self._node.get_logger().info(
            f"subtask {sub.name}: approach of instance {instance.instance_id} ({instance.category}) handed to "
            f"Nav2: ({sent.x_m:.2f}, {sent.y_m:.2f}) m, {sent.yaw_rad:.2f} rad in {self._params.nav2_frame_id}")
        self._sender.start(sent, self._params.nav2_timeout_s,
                           lambda outcome, detail: self._post(Nav2Done(sub, outcome, detail)))
        return True

    def fall_back(self, sub: Subtask, why: str) -> None:
        """Discrete actions for the rest of ``sub``."""
        sub.nav2_fell_back = True
        self._node.get_logger().warning(f"subtask {sub.name}: {why}; discrete actions for the rest of this subtask")

    def cancel(self) -> None:
        self._sender.cancel()

    def close(self) -> None:
        """Cancel a running Nav2 goal and release the navigator."""
        self._sender.close()
