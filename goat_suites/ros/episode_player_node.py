"""The episode player node: replays a GOAT-Bench episode file as goal messages.

Per episode: reset the world to the episode start, then per subtask publish one ``Goal`` (stamped with the
reset's observation stamp) and wait for the evaluator's ``SubtaskResult`` before the next. Image goals are
rendered by the simulator from their stored camera poses (``/sim/render_view``), as GOAT-Bench's image goal sensor
does. When the file is done it publishes the file name on ``/goat/episodes_done`` (latched).

Budget (``goat_suites.ros.episode_budget``): GOAT-Bench's 5000 actions per episode by default, shared by its subtasks;
each goal carries the actions left in its episode (``max_actions``), and a subtask that finds the episode spent
is reported on ``/goat/outcome`` as ended by budget without its goal being sent (the evaluator scores it where
the robot stands), as the in-process runner does. ``max_actions_per_subtask`` adds a per-goal cap.

``reset_mode`` says who resets: ``sim`` calls the simulator's ``/sim/reset_episode``; ``operator`` (the physical
robot, which has no reset service) calls the same ResetEpisode service on ``/goat/operator_reset_episode``, which
goat_stretch's operator node answers once a person has placed the robot at the start. Without a simulator there
is no ``/sim/render_view``, so on the robot an image goal ends its subtask as an error unless one is running.

No wait is without a deadline (``*_timeout_s``): a peer still missing after ``peers_timeout_s`` is logged and the
replay starts anyway; a reset, a rendering or a subtask result that does not come in time ends the subtask as an
``error`` naming what did not answer (published on ``/goat/outcome`` for the evaluator), and the replay goes on.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_msgs.msg import String

from goat_core.errors import ConfigError, GoatError
from goat_core.frames import habitat_quaternion_to_tilt, habitat_quaternion_to_yaw, habitat_to_ros_position
from goat_core.types import GoalModality
from goat_interfaces.msg import Goal as GoalMsg
from goat_interfaces.msg import SubtaskOutcome, SubtaskResult
from goat_interfaces.srv import RenderView, ResetEpisode
from goat_ros import topics
from goat_ros.params import EpisodePlayerParams, declare
from goat_suites.common.episode_files import load_goat_dataset
from goat_suites.common.episodes import GoatEpisode, GoatTask, image_goal_for_task, task_goal_text
from goat_suites.ros.episode_budget import EpisodeActions, budget_from_params

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# ResetEpisode served by goat_stretch's operator node: answered once the operator placed the robot at the start.
OPERATOR_RESET_SERVICE = "/goat/operator_reset_episode"
RESET_SERVICES = {"sim": topics.RESET_EPISODE, "operator": OPERATOR_RESET_SERVICE}  # reset_mode -> service


class EpisodePlayerNode(Node):
    def __init__(self, name: str = "episode_player", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, EpisodePlayerParams)
        if not self.params.episodes_file:
            raise GoatError("episode_player needs the episodes_file parameter")
        if self.params.reset_mode not in RESET_SERVICES:
            raise ConfigError(f"episode_player reset_mode must be one of {', '.join(RESET_SERVICES)}, got "
                              f"{self.params.reset_mode!r}")
        self._operator_resets = self.params.reset_mode == "operator"
        self._budget = budget_from_params(self.params.max_actions_per_episode, self.params.max_actions_per_subtask)
        episodes = load_goat_dataset(self.params.episodes_file).episodes
        self.episodes = episodes[: self.params.max_episodes] if self.params.max_episodes > 0 else episodes
        self._reset = self.create_client(ResetEpisode, RESET_SERVICES[self.params.reset_mode])
        self._render = self.create_client(RenderView, topics.RENDER_VIEW)
        self._pub_goal = self.create_publisher(GoalMsg, topics.GOAL, RELIABLE)
        self._pub_outcome = self.create_publisher(SubtaskOutcome, topics.OUTCOME, RELIABLE)
        self._pub_done = self.create_publisher(String, topics.EPISODES_DONE, LATCHED)
        self.create_subscription(SubtaskResult, topics.RESULT, self._on_result, RELIABLE)
        self._waiting: Optional[tuple[str, int]] = None
        self._result_future: Optional[Future] = None
        self.done = False
        self._ready_since: Optional[float] = None
        self._started_s = self._now_s()
        self._start_timer = self.create_timer(0.1, self._wait_for_peers)
        self.get_logger().info(f"episode_player: {len(self.episodes)} episodes from {self.params.episodes_file}")

    # ------------------------------------------------------------------------------------------ start-up
    def _missing_peers(self) -> list[str]:
        # On the robot nothing serves /sim/render_view: image goals fail one by one instead of blocking the start.
        missing = [] if self._reset.service_is_ready() else [self._reset.srv_name]
        if not (self._operator_resets or self._render.service_is_ready()):
            missing.append(topics.RENDER_VIEW)
        if self.count_subscribers(topics.GOAL) == 0:
            missing.append(f"a subscriber of {topics.GOAL} (the controller)")
        if self.count_publishers(topics.RESULT) == 0:
            missing.append(f"a publisher of {topics.RESULT} (the evaluator)")
        return missing

    def _now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _wait_for_peers(self) -> None:
        now_s = self._now_s()
        missing = self._missing_peers()
        if missing and now_s - self._started_s < self.params.peers_timeout_s:
            self._ready_since = None
            return
        if self._ready_since is None:
            self._ready_since = now_s
        if missing or now_s - self._ready_since >= self.params.start_delay_s:
            if missing:
                self.get_logger().error(f"starting without {', '.join(missing)}: not there "
                                        f"{self.params.peers_timeout_s} s after start-up")
            self.destroy_timer(self._start_timer)
            self.executor.create_task(self._play())  # type: ignore[union-attr]

    # ------------------------------------------------------------------------------------------- replay
    async def _play(self) -> None:
        for episode in self.episodes:
            await self._play_episode(episode)
        self.done = True
        self._pub_done.publish(String(data=self.params.episodes_file))
        self.get_logger().info("all episodes replayed")

    async def _play_episode(self, episode: GoatEpisode) -> None:
        start = habitat_to_ros_position(episode.start_position)
        request = ResetEpisode.Request(scene_id=episode.scene_id, start_x_m=float(start[0]),
                                       start_y_m=float(start[1]),
                                       start_yaw_rad=habitat_quaternion_to_yaw(episode.start_rotation))
        if self._operator_resets:
            self.get_logger().info(f"episode {episode.episode_id} (scene {episode.scene_id}): waiting for the "
                                   "operator to place the robot at its start")
        response = await self._within(self._reset.call_async(request), self.params.reset_timeout_s)
        actions = EpisodeActions(self._budget)
        for index, task in enumerate(episode.tasks):
            max_actions = actions.next_subtask()
            if response is None:
                self._publish_error(episode, index, task, f"{self._reset.srv_name} did not answer within "
                                                          f"{self.params.reset_timeout_s} s")
            elif not response.success:
                what = "the operator reset" if self._operator_resets else "reset_episode"
                self._publish_error(episode, index, task, f"{what} failed: {response.message}")
            elif max_actions == 0:
                self._publish_spent(episode, index, task)
            else:
                try:
                    goal = await self._goal_msg(episode, index, task, response.observation_stamp, max_actions)
                except GoatError as exc:
                    self._publish_error(episode, index, task, str(exc))
                else:
                    self._pub_goal.publish(goal)
            actions.add(await self._wait_result(episode, index, task))

    async def _goal_msg(self, episode: GoatEpisode, index: int, task: GoatTask, stamp: Any,
                        max_actions: int) -> GoalMsg:
        from goat_suites.common.episodes import goals_for_task

        goals = goals_for_task(episode, task)
        target = task.object_id or (goals[0].object_id if goals else "")
        msg = GoalMsg(episode_id=episode.episode_id, subtask_index=index, modality=task.modality.value,
                      target_id=target or "", max_actions=max_actions)
        msg.header.stamp = stamp
        msg.header.frame_id = topics.MAP_FRAME
        if task.modality is GoalModality.CATEGORY:
            msg.category = task_goal_text(episode, index, task)
        elif task.modality is GoalModality.DESCRIPTION:
            msg.text = task_goal_text(episode, index, task)
        else:
            spec = image_goal_for_task(episode, task)
            if self._operator_resets and not self._render.service_is_ready():
                raise GoatError(f"image goals are rendered by the simulator's {topics.RENDER_VIEW}, which does not "
                                "run on the robot (reset_mode: operator)")
            position = habitat_to_ros_position(spec.position)
            render = await self._within(self._render.call_async(RenderView.Request(
                x_m=float(position[0]), y_m=float(position[1]), yaw_rad=habitat_quaternion_to_yaw(spec.rotation),
                tilt_rad=habitat_quaternion_to_tilt(spec.rotation))), self.params.render_timeout_s)
            if render is None:
                raise GoatError(f"{topics.RENDER_VIEW} did not answer within {self.params.render_timeout_s} s")
            if not render.success:
                raise GoatError(f"rendering the image goal failed: {render.message}")
            msg.image = render.image
            msg.image_hfov_rad = math.radians(self.params.image_hfov_deg)
            if self.params.image_goal_category and task.category:
                msg.category = task.category
        return msg

    def _publish_error(self, episode: GoatEpisode, index: int, task: GoatTask, error: str) -> None:
        """The goal could not be built: report it as the subtask's outcome, for the evaluator to record."""
        self.get_logger().error(f"{episode.episode_id}/{index}: {error}")
        self._pub_outcome.publish(SubtaskOutcome(
            episode_id=episode.episode_id, subtask_index=index, modality=task.modality.value,
            target_id=task.object_id or "", stop_reason=SubtaskOutcome.ERROR, error=error))

    def _publish_spent(self, episode: GoatEpisode, index: int, task: GoatTask) -> None:
        """The episode's budget is spent: the subtask ends by budget with no action, its goal unsent (the
        evaluator scores it where the previous subtask left the robot)."""
        self.get_logger().info(f"{episode.episode_id}/{index}: the episode's {self._budget.describe()} are spent; "
                               "the subtask ends by budget unstarted")
        self._pub_outcome.publish(SubtaskOutcome(
            episode_id=episode.episode_id, subtask_index=index, modality=task.modality.value,
            target_id=task.object_id or "", stop_reason=SubtaskOutcome.BUDGET))

    async def _within(self, future: Future, timeout_s: float) -> Any:
        """The future's result, or None if ``timeout_s`` passes first (then the future is cancelled)."""
        timer = self.create_timer(timeout_s, future.cancel)
        try:
            return await future
        finally:
            self.destroy_timer(timer)

    async def _wait_result(self, episode: GoatEpisode, index: int, task: GoatTask) -> Optional[int]:
        """Until the evaluator's result for this subtask; at the deadline the subtask ends as an error instead.
        Returns the actions the subtask took (None: no result came)."""
        result = await self._result(episode.episode_id, index)
        if result is not None:
            return int(result.num_actions)
        missing = self._missing_peers()
        why = f"; missing: {', '.join(missing)}" if missing else ""
        self._publish_error(episode, index, task, f"no subtask result within {self.params.result_timeout_s} s of "
                                                  f"the goal{why}")
        # The evaluator scores that error outcome; without one in the graph, go on at once.
        if self.count_publishers(topics.RESULT) > 0:
            await self._result(episode.episode_id, index)
        return None

    async def _result(self, episode_id: str, index: int) -> Optional[SubtaskResult]:
        self._waiting = (episode_id, index)
        self._result_future = Future()
        try:
            return await self._within(self._result_future, self.params.result_timeout_s)
        finally:
            self._waiting = None

    def _on_result(self, msg: SubtaskResult) -> None:
        if self._waiting == (msg.episode_id, msg.subtask_index) and self._result_future is not None:
            self._result_future.set_result(msg)


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([EpisodePlayerNode], args)


if __name__ == "__main__":
    main()
