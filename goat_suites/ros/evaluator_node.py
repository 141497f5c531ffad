"""The evaluator node: scores every ``SubtaskOutcome`` with the GOAT-Bench metrics and publishes the result.

Outcomes of goals that are not in the episode file (for example goals published by hand) are recorded unscored;
error outcomes (a rejected goal, a failed action) are recorded with their message, as the in-process run does.
With ``results_file`` set, the results JSON is rewritten after every subtask. A subtask of the episode file is
scored once: a later outcome for it (the controller finishing after the episode player gave up on it at its
deadline) is logged and dropped.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from goat_core.errors import GoatError
from goat_core.types import Pose2D
from goat_interfaces.msg import SubtaskOutcome, SubtaskResult
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.params import EvaluatorParams, declare
from goat_suites.common.episode_files import load_goat_dataset
from goat_suites.common.outputs import run_progress
from goat_suites.common.results import SubtaskRecord, summarise, write_results_json
from goat_suites.registry import check_episodes_suite, suite_parts
from goat_suites.ros import result_msgs
from goat_suites.ros.scoring import SubtaskScorer, unscored_error

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


class EvaluatorNode(Node):
    def __init__(self, name: str = "evaluator", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, EvaluatorParams)
        episodes = load_goat_dataset(self.params.episodes_file).episodes if self.params.episodes_file else ()
        self._episodes = tuple(episodes)
        check_episodes_suite(self.params.suite, self._episodes)
        self._scorer = SubtaskScorer(episodes, self.params.success_metric, self.params.success_distance_m,
                                     parts=suite_parts(self.params.suite))
        self.records: list[SubtaskRecord] = []
        self.results: list[SubtaskResult] = []  # everything published, including unscorable outcomes
        self._scored: set[tuple[str, int]] = set()  # (episode, subtask) of the file already scored
        self._pub = self.create_publisher(SubtaskResult, topics.RESULT, RELIABLE)
        # score_from_ground_truth: the true poses of the observation sets since the last outcome (one per stamp).
        self._truth: list[Pose2D] = []
        self._truth_stamp_ns: Optional[int] = None
        self._truth_final: Optional[Pose2D] = None  # where the last scored subtask ended
        if self.params.score_from_ground_truth:
            self.create_subscription(Odometry, topics.GROUND_TRUTH_ODOM, self._on_truth, RELIABLE)
        self.create_subscription(SubtaskOutcome, topics.OUTCOME, self._on_outcome, RELIABLE)
        self.get_logger().info(f"evaluator ready ({len(episodes)} episodes known)")

    def write_results(self) -> None:
        """Rewrite ``results_file``. With an episode file its meta says how much of the plan is scored
        (``complete`` false until every subtask of the file has its record, as a ``goat-nav bench`` run's file):
        a graph stopped early leaves a file that reads as partial (``goat-nav report`` says PARTIAL RUN)."""
        meta: dict[str, Any] = {"source": "goat_ros evaluator", "episodes_file": self.params.episodes_file}
        if self._episodes:
            meta.update(run_progress(self._episodes, len(self._scored)))
        write_results_json(self.params.results_file, self.records, summarise(self.records), meta)

    def _record(self, msg: SubtaskOutcome) -> Optional[SubtaskRecord]:
        episode = self._scorer.episode(msg.episode_id)
        if episode is None or msg.subtask_index >= len(episode.tasks):
            error = msg.error or "goal is not in the evaluator's episode file: not scored"
            return unscored_error(msg.episode_id, msg.subtask_index, msg.modality, error)
        poses = [cv.msg_to_pose2d(p) for p in msg.poses]
        if self.params.score_from_ground_truth:
            truth = self._truth_of_subtask(msg.subtask_index)
            if len(truth) == len(poses):
                poses = truth
            else:
                self.get_logger().warning(f"{msg.episode_id}/{msg.subtask_index}: {len(truth)} true poses for "
                                          f"{len(poses)} reported: scored by the reported poses")
        return self._scorer.score(episode, msg.subtask_index, msg.stop_reason, list(msg.actions), poses,
                                  msg.error or None, cv.msg_to_stop_decision(msg))

    def _on_truth(self, msg: Odometry) -> None:
        stamp_ns = cv.ns_from_time(msg.header.stamp)
        if stamp_ns != self._truth_stamp_ns:  # a set published again (same stamp) adds no pose
            self._truth_stamp_ns = stamp_ns
            self._truth.append(cv.odometry_to_pose2d(msg))

    def _truth_of_subtask(self, index: int) -> list[Pose2D]:
        """The true poses of the subtask that just ended: where the previous one ended (a later subtask starts
        there, on the same observation set) and one per set since; an episode's first starts at its reset."""
        poses = ([self._truth_final] if index > 0 and self._truth_final is not None else []) + self._truth
        self._truth = []
        if poses:
            self._truth_final = poses[-1]
        return poses

    def _on_outcome(self, msg: SubtaskOutcome) -> None:
        key = (msg.episode_id, msg.subtask_index)
        if key in self._scored:
            self.get_logger().warning(f"{msg.episode_id}/{msg.subtask_index}: already scored; a later "
                                      f"{msg.stop_reason} outcome is dropped ({msg.error or 'no error'})")
            return
        hdr = cv.header(self.get_clock().now().nanoseconds, topics.MAP_FRAME)
        try:
            record = self._record(msg)
        except GoatError as exc:
            record = unscored_error(msg.episode_id, msg.subtask_index, msg.modality, f"scoring failed: {exc}")
        if record is None:  # an unknown modality: nothing to file it under, but still reported
            result = SubtaskResult(header=hdr, episode_id=msg.episode_id, subtask_index=msg.subtask_index,
                                   modality=msg.modality, success=False, spl=0.0, path_length_m=0.0,
                                   geodesic_m=math.nan, distance_to_goal_m=math.nan, stop_reason="error",
                                   error=msg.error)
        else:
            if self._scorer.episode(msg.episode_id) is not None:
                self._scored.add(key)
            self.records.append(record)
            result = result_msgs.record_to_msg(record, hdr)
            if self.params.results_file:
                self.write_results()
        text = (f"{result.episode_id}/{result.subtask_index} {result.modality}: {result.stop_reason} "
                f"success={result.success} spl={result.spl:.3f} {result.error}")
        if result.stop_reason == "error":  # rclpy loggers keep one severity per call site: two calls
            self.get_logger().warning(text)
        else:
            self.get_logger().info(text)
        self.results.append(result)
        self._pub.publish(result)


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([EvaluatorNode], args)


if __name__ == "__main__":
    main()
