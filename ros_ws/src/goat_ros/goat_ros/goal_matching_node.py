"""The goal_matching node: ranks the remembered instances against each goal, over topics.

A thin adapter over the core goal matcher (``goat_core.matching``: category synonyms, descriptions, image
keypoints; built by the controller's factory, ``build_stack``) and ``goat_core.matching.ranking.rank_instances``.
It keeps the latest ``goat_interfaces/InstanceMemory`` snapshot of the instance_mapping node and the current
``/goat/goal``, and publishes ``goat_interfaces/GoalMatches`` on ``/goat/goal_matches``: on every goal, and
again on every new snapshot while that goal is current (``rematch_on_update``).

Why snapshots rather than ``/goat/mapping/instances``: the matchers read more than the Instance summary carries
(surface points for spatial relations and counts, the mean colour, the stored views for image goals), so the
mapping node publishes the whole memory losslessly and this node rebuilds the core instances from it: the ranking
is then exactly the in-process matcher's on the same memory.

A bad goal (unknown modality, empty category or text, an image that is not rgb8/bgr8, too small, or whose byte
count does not match its size) is answered with a GoalMatches whose ``error`` says why; it is logged once and the
node keeps serving the next goal.
"""

from __future__ import annotations

from typing import Any, Optional

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from goat_core.errors import ConfigError, GoatError
from goat_core.matching.ranking import Ranking, RankingMatcher, rank_instances
from goat_core.types import Instance
from goat_core.vocabulary import OBJECT_LABELS
from goat_interfaces.msg import Goal as GoalMsg
from goat_interfaces.msg import GoalMatches, InstanceMemory
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.node_errors import error_text
from goat_ros.params import GoalMatchingParams, declare

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class GoalMatchingNode(Node):
    def __init__(self, name: str = "goal_matching", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, GoalMatchingParams)
        self.matcher, self.vocabulary = self._build_matcher()
        self._goal: Optional[GoalMsg] = None  # the current, valid goal
        self._instances: dict[int, Instance] = {}
        self._generation: Optional[int] = None  # of the snapshot held; a new one means ids were reused
        self._memory_stamp_ns = 0
        self._pub = self.create_publisher(GoalMatches, topics.GOAL_MATCHES, RELIABLE)
        self.create_subscription(GoalMsg, topics.GOAL, self._on_goal, RELIABLE)
        self.create_subscription(InstanceMemory, topics.MAPPING_MEMORY, self._on_memory, LATCHED)
        self.get_logger().info(f"goal_matching ready (matcher: {self.params.matcher})")

    def _build_matcher(self) -> tuple[RankingMatcher, list[str]]:
        """The configured goal matcher over the object vocabulary (the controller's)."""
        from goat_core.matching.matcher import MatcherConfig
        from goat_core.matching.selection import StackConfig, build_stack
        from goat_core.perception.factory import PerceptionConfig

        p = self.params
        if p.matcher == "cow":
            raise ConfigError("goal_matching cannot run the 'cow' matcher: it localises goals in camera frames "
                              "(it is its own perception backend), not in an instance memory")
        stack = StackConfig(perception=PerceptionConfig(device=p.device), matcher=p.matcher,
                            image_matcher=p.image_matcher, clip_model_dir=p.clip_model_dir or None)
        labels = list(OBJECT_LABELS)
        _, matcher = build_stack(stack, labels, MatcherConfig())  # the ground-truth backend it also builds is unused
        if not isinstance(matcher, RankingMatcher):
            raise ConfigError(f"goal matcher {p.matcher!r} cannot list its candidates")
        return matcher, labels

    # ---------------------------------------------------------------------------------------- callbacks
    def _on_goal(self, msg: GoalMsg) -> None:
        self._goal = None
        try:
            goal = cv.msg_to_goal(msg)
            self.matcher.set_goal(goal, self.vocabulary)
        except GoatError as exc:
            self.get_logger().warning(f"goal {msg.episode_id}/{msg.subtask_index} rejected: {exc}")
            self._pub.publish(cv.goal_matches_to_msg(msg, self._header(), None, self._instances,
                                                     self._generation or 0, error=str(exc)))
            return
        self._goal = msg
        self._answer()

    def _on_memory(self, msg: InstanceMemory) -> None:
        try:
            instances = cv.msg_to_instances(msg)
        except GoatError as exc:
            self.get_logger().error(f"instance memory snapshot not usable: {exc}")
            return
        if msg.generation != self._generation:
            self.matcher.reset()  # ids restart after a memory reset: per-instance caches must go
            self._generation = int(msg.generation)
        self._instances = instances
        self._memory_stamp_ns = cv.ns_from_time(msg.header.stamp)
        if self._goal is not None and self.params.rematch_on_update:
            self._answer()

    def _answer(self) -> None:
        goal = self._goal
        if goal is None:
            return
        try:
            ranking: Optional[Ranking] = rank_instances(self.matcher, self._instances)
            error = ""
        except Exception as exc:  # the node boundary: report it in the answer and keep serving goals
            error = error_text(exc)
            self.get_logger().error(f"goal {goal.episode_id}/{goal.subtask_index}: {error}")
            ranking, self._goal = None, None
        self._pub.publish(cv.goal_matches_to_msg(goal, self._header(), ranking, self._instances,
                                                 self._generation or 0, error=error))

    def _header(self) -> Any:
        return cv.header(self._memory_stamp_ns, topics.MAP_FRAME)


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([GoalMatchingNode], args)


if __name__ == "__main__":
    main()
