"""Send one goal to a running graph and wait for its outcome: what ``goat-nav goal`` does (no ``ros2 topic pub``).

Not a graph node: a short-lived client. It waits until the controller subscribes to ``/goat/goal``, publishes the
goal, and waits for the ``SubtaskOutcome`` of that episode id and subtask index (and, where an evaluator runs, as
in the bench bringup, its scored ``SubtaskResult``). ``cancel`` asks the controller to end the subtask
(``/goat/cancel_goal``).
"""

from __future__ import annotations

import time
from typing import Callable, Optional

import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from goat_core.errors import GoatError
from goat_core.types import Goal
from goat_interfaces.msg import Goal as GoalMsg
from goat_interfaces.msg import SubtaskOutcome, SubtaskResult
from goat_ros import conversions as cv
from goat_ros import topics

GOAL_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
RESULT_WAIT_S = 2.0  # after the outcome, how long a scored result (an evaluator in the graph) is waited for


class GoalClient:
    def __init__(self, name: str = "goat_nav_goal") -> None:
        self.node: Node = rclpy.create_node(name)
        self._pub = self.node.create_publisher(GoalMsg, topics.GOAL, GOAL_QOS)
        self._pub_cancel = self.node.create_publisher(String, topics.CANCEL_GOAL, GOAL_QOS)
        self._key: Optional[tuple[str, int]] = None
        self.outcome: Optional[SubtaskOutcome] = None
        self.result: Optional[SubtaskResult] = None
        self.node.create_subscription(SubtaskOutcome, topics.OUTCOME, self._on_outcome, GOAL_QOS)
        self.node.create_subscription(SubtaskResult, topics.RESULT, self._on_result, GOAL_QOS)

    def _mine(self, episode_id: str, subtask_index: int) -> bool:
        return self._key == (episode_id, int(subtask_index))

    def _on_outcome(self, msg: SubtaskOutcome) -> None:
        if self._mine(msg.episode_id, msg.subtask_index):
            self.outcome = msg

    def _on_result(self, msg: SubtaskResult) -> None:
        if self._mine(msg.episode_id, msg.subtask_index):
            self.result = msg

    def _spin_until(self, done: Callable[[], bool], deadline: float) -> bool:
        while not done() and time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.05)
        return done()

    def send(self, goal: Goal, episode_id: str, subtask_index: int, max_actions: int, connect_timeout_s: float) -> None:
        """Publish the goal once the controller listens; GoatError if no subscriber appears in time."""
        if not self._spin_until(lambda: self._pub.get_subscription_count() > 0 and
                                self._pub_cancel.get_subscription_count() > 0,
                                time.monotonic() + connect_timeout_s):
            raise GoatError(f"no controller subscribes to {topics.GOAL} after {connect_timeout_s:.0f} s: is a graph "
                            "running (goat-nav launch sim) with the same ROS_DOMAIN_ID?")
        self._key = (episode_id, int(subtask_index))
        self.outcome = self.result = None
        # Stamp 0: act on the newest observation set (a live graph has no reset whose stamp the goal could name).
        self._pub.publish(cv.goal_to_msg(goal, cv.header(0, topics.MAP_FRAME), episode_id, subtask_index,
                                         max_actions))

    def wait(self, timeout_s: float) -> Optional[SubtaskOutcome]:
        """The outcome (None after ``timeout_s``); then a scored result for up to RESULT_WAIT_S, if one comes."""
        if not self._spin_until(lambda: self.outcome is not None, time.monotonic() + timeout_s):
            return None
        self._spin_until(lambda: self.result is not None, time.monotonic() + RESULT_WAIT_S)
        return self.outcome

    def cancel(self, timeout_s: float = 5.0) -> Optional[SubtaskOutcome]:
        """Ask the controller to end this goal; its (cancelled) outcome, or None if none came in ``timeout_s``."""
        if self._key is None:
            return None
        self._pub_cancel.publish(String(data=self._key[0]))
        return self.wait(timeout_s)

    def close(self) -> None:
        self.node.destroy_node()
