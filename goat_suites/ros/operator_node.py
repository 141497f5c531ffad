"""The operator evaluator: on the robot, a person confirms each STOP; it takes the simulator evaluator's place.

For every ``/goat/subtask_outcome`` that ended in STOP the node asks "did the robot stop at the goal?" on its
terminal (``prompt_on_stdin``) and through the ``/goat/operator_confirm`` service (std_srvs/SetBool, ``data``
true = success; e.g. ``ros2 service call /goat/operator_confirm std_srvs/srv/SetBool "{data: true}"`` from a
laptop), whichever answers first. Budget and error outcomes are recorded as failures without asking. Each record
is published as a ``SubtaskResult`` (so the episode player moves on), written to ``results_file`` (the results
JSON that ``goat-nav compare`` reads) and logged with its path to ``path_log_file`` (JSON lines).

Episode starts (the episode player's ``reset_mode: operator``): the node serves ResetEpisode on
``/goat/operator_reset_episode``. A request asks the person to place the robot at the episode's start pose (the map
frame is that pose); the node answers once they confirm on the terminal or through ``/goat/operator_placed``
(std_srvs/SetBool: true = the robot is there, false = it cannot be, and the episode's subtasks are recorded as
errors). The answer's observation stamp is the confirmation time, so the controller acts only on camera frames
taken after the robot was placed.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from pathlib import Path
from typing import Optional

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_srvs.srv import SetBool

from goat_core.errors import GoatError
from goat_interfaces.msg import SubtaskOutcome, SubtaskResult
from goat_interfaces.srv import ResetEpisode
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.params import OperatorParams, declare
from goat_suites.common.results import SubtaskRecord, summarise, write_results_json
from goat_suites.ros import result_msgs
from goat_suites.ros.episode_player_node import OPERATOR_RESET_SERVICE
from goat_suites.ros.operator import operator_record, path_log_entry

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
CONFIRM_SERVICE = "/goat/operator_confirm"  # std_srvs/SetBool: data true = the robot stopped at the goal
PLACED_SERVICE = "/goat/operator_placed"  # std_srvs/SetBool: data true = the robot is at the episode start


class OperatorNode(Node):
    def __init__(self, name: str = "operator", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, OperatorParams)
        self.records: list[SubtaskRecord] = []
        self._pending: deque[SubtaskOutcome] = deque()
        self._lock = threading.Lock()
        self._placement: Optional[Future] = None  # the pending episode start: True placed, False cannot be
        self._pub = self.create_publisher(SubtaskResult, topics.RESULT, RELIABLE)
        self.create_subscription(SubtaskOutcome, topics.OUTCOME, self._on_outcome, RELIABLE)
        self.create_service(SetBool, CONFIRM_SERVICE, self._on_confirm)
        # Its own callback group: a pending placement must not hold back the node's other callbacks (the answer
        # comes through one of them), and a second reset waits for the first.
        self.create_service(ResetEpisode, OPERATOR_RESET_SERVICE, self._on_reset_episode,
                            callback_group=MutuallyExclusiveCallbackGroup())
        self.create_service(SetBool, PLACED_SERVICE, self._on_placed)
        self.get_logger().info(f"operator evaluator ready: confirm each STOP on {CONFIRM_SERVICE}"
                               + (" or on this terminal" if self.params.prompt_on_stdin else ""))

    # ------------------------------------------------------------------------------------ episode starts
    async def _on_reset_episode(self, request: ResetEpisode.Request,
                                response: ResetEpisode.Response) -> ResetEpisode.Response:
        """The episode player's reset: wait (without blocking the executor) until the operator placed the robot."""
        placement = Future()
        with self._lock:
            self._placement = placement
        question = (f"Next episode (scene {request.scene_id or '?'}): place the robot at its start pose (the map "
                    "frame will be that pose).")
        self.get_logger().info(f"{question} Then answer with {PLACED_SERVICE} (true: placed, false: cannot)")
        if self.params.prompt_on_stdin:
            threading.Thread(target=self._prompt_placement, args=(placement, question), daemon=True).start()
        placed = bool(await placement)
        response.success = placed
        if placed:
            response.observation_stamp = cv.time_from_ns(self.get_clock().now().nanoseconds)
        else:
            response.message = "the operator could not place the robot at the episode start"
        return response

    def _prompt_placement(self, placement: Future, question: str) -> None:
        try:
            answer = input(f"{question} Is it there? [y/n] ").strip().lower()
        except EOFError:
            return
        self._resolve_placement(placement, answer.startswith("y"))

    def _on_placed(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        with self._lock:
            placement = self._placement
        if placement is None:
            response.success, response.message = False, "no episode start is waiting for the robot to be placed"
            return response
        self._resolve_placement(placement, bool(request.data))
        response.success = True
        response.message = "placed" if request.data else "not placed: the episode is skipped"
        return response

    def _resolve_placement(self, placement: Future, placed: bool) -> None:
        with self._lock:
            if self._placement is not placement:
                return  # answered already (the other channel was first)
            self._placement = None
        placement.set_result(placed)

    # ----------------------------------------------------------------------------------------- verdicts
    def _on_outcome(self, msg: SubtaskOutcome) -> None:
        if msg.stop_reason != SubtaskOutcome.STOP:
            self._finish(msg, confirmed=False, by="automatic (no STOP)")
            return
        with self._lock:
            self._pending.append(msg)
        question = (f"{msg.episode_id}/{msg.subtask_index} ({msg.modality}, target {msg.target_id or '?'}): the "
                    "robot stopped. Is it at the goal?")
        self.get_logger().info(f"{question} Answer with {CONFIRM_SERVICE}")
        if self.params.prompt_on_stdin:
            threading.Thread(target=self._prompt, args=(msg, question), daemon=True).start()

    def _prompt(self, msg: SubtaskOutcome, question: str) -> None:
        try:
            answer = input(f"{question} [y/n] ").strip().lower()
        except EOFError:
            return
        self._answer(msg, answer.startswith("y"), "terminal")

    def _on_confirm(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        with self._lock:
            msg = self._pending[0] if self._pending else None
        if msg is None:
            response.success, response.message = False, "no subtask is waiting for a verdict"
            return response
        self._answer(msg, bool(request.data), "service")
        response.success = True
        response.message = f"{msg.episode_id}/{msg.subtask_index}: {'success' if request.data else 'failure'}"
        return response

    def _answer(self, msg: SubtaskOutcome, confirmed: bool, by: str) -> None:
        with self._lock:
            if not self._pending or self._pending[0] is not msg:
                return  # answered already (the other channel was first)
            self._pending.popleft()
        self._finish(msg, confirmed, by)

    def _finish(self, msg: SubtaskOutcome, confirmed: bool, by: str) -> None:
        poses = [cv.msg_to_pose2d(p) for p in msg.poses]
        try:
            record = operator_record(msg.episode_id, int(msg.subtask_index), msg.modality, msg.stop_reason,
                                     list(msg.actions), poses, confirmed, msg.error or None,
                                     self.params.scene_id or None)
        except GoatError as exc:
            self.get_logger().error(f"{msg.episode_id}/{msg.subtask_index}: cannot record: {exc}")
            return
        self.records.append(record)
        if self.params.results_file:
            write_results_json(self.params.results_file, self.records, summarise(self.records),
                               {"source": "goat_stretch operator", "scene_id": self.params.scene_id})
        if self.params.path_log_file:
            with Path(self.params.path_log_file).open("a", encoding="utf-8") as log:
                log.write(json.dumps(path_log_entry(record, poses, by)) + "\n")
        self.get_logger().info(f"{record.episode_id}/{record.index}: success={record.success} ({by})")
        hdr = cv.header(self.get_clock().now().nanoseconds, topics.MAP_FRAME)
        self._pub.publish(result_msgs.record_to_msg(record, hdr))


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([OperatorNode], args)


if __name__ == "__main__":
    main()
