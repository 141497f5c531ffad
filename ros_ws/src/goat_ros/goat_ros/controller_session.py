"""The controller's per-subtask state and decisions, without rclpy; goat_ros/controller_node.py wires them to the
goal topics, the ExecuteAction client and Nav2 (docs/ros.md).

Protocol per goal: wait for an observation set not older than the goal's stamp, ``act``; STOP ends the subtask,
any other action is sent to ``/goat/execute_action``; its result names the stamp of the observation set it
produced, and the controller acts again once that set is complete. One ``SubtaskOutcome`` per goal.

``motion_mode: nav2`` (the physical robot, docs/robot.md section 8): the agent still decides every step, and
scanning and exploring still go through ``/goat/execute_action``; when it heads for a confident match
(``goat_ros.nav2_mode.handover_instance``), that instance's approach pose goes to Nav2 instead, and Nav2's
success ends the subtask with STOP. A Nav2 failure, a timeout or no free approach pose leave the rest of the
subtask to discrete actions.

``localise`` / ``filter_depth`` (the robot, the simulator's stretch realism; docs/realism.md): every observation set
passes through the core localiser before the agent sees it, as ``goat-nav bench`` does in process, so the agent
acts on the corrected pose; the node publishes the localiser's ``map -> odom``.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from goat_core.localisation.localiser import Localiser, compose, inverse
from goat_core.types import DiscreteAction, Instance, Observation, Pose2D, StopDecision
from goat_core.vocabulary import OBJECT_LABELS
from goat_interfaces.msg import Goal as GoalMsg
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.observation_sync import ActionFeedback, ObservationSync, to_episode_frame
from goat_ros.params import ControllerParams

if TYPE_CHECKING:
    from goat_core.agent import Agent, AgentConfig
    from goat_ros.nav2_mode import Nav2Outcome


@dataclass
class Subtask:
    """One goal's run: the actions taken, the poses passed and where a Nav2 hand-over stands."""

    goal: GoalMsg
    actions: list[int] = field(default_factory=list)
    poses: list[Pose2D] = field(default_factory=list)  # episode frame
    waiting_for_result: bool = False
    action_sent_s: float = field(default_factory=time.monotonic)  # last progress: goal start or action sent
    nav2_active: bool = False  # Nav2 drives the final approach
    nav2_fell_back: bool = False  # Nav2 failed or had no pose: discrete actions for the rest of the subtask
    held_action: Optional[DiscreteAction] = None  # the agent's step that the Nav2 handover replaced
    nav2_target: Optional[Instance] = None  # the instance whose approach Nav2 drives

    @property
    def name(self) -> str:
        """``episode_id/subtask_index``, for log lines."""
        return f"{self.goal.episode_id}/{self.goal.subtask_index}"

    def record(self, action: DiscreteAction) -> None:
        """The agent took ``action``: any but STOP now waits for the robot's result."""
        self.actions.append(int(action))
        if action is not DiscreteAction.STOP:
            self.waiting_for_result = True
            self.action_sent_s = time.monotonic()

    def budget_spent(self) -> bool:
        """The goal's ``max_actions`` (0: no budget) is used up."""
        budget = int(self.goal.max_actions)
        return bool(budget) and len(self.actions) >= budget

    def hand_over(self, held_action: DiscreteAction, target: Instance) -> None:
        """Nav2 now drives the approach of ``target`` in place of the agent's ``held_action``."""
        self.nav2_active, self.held_action, self.nav2_target = True, held_action, target

    def nav2_ended(self) -> Optional[DiscreteAction]:
        """Nav2's goal ended: progress restarts now; returns the step the hand-over held back."""
        self.nav2_active = False
        self.action_sent_s = time.monotonic()
        action, self.held_action = self.held_action, None
        return action

    def nav2_reached(self, odom: Optional[Pose2D], anchor: Optional[Pose2D]) -> Optional[StopDecision]:
        """Nav2 reached the approach pose: record where the robot stopped (``odom``, the newest odometry) and
        STOP; the decision names the target."""
        if odom is not None:
            self.poses.append(to_episode_frame(odom, anchor))
        self.actions.append(int(DiscreteAction.STOP))
        target = self.nav2_target
        return None if target is None else StopDecision.at(
            target, True, f"Nav2 reached the approach pose of {target.category} #{target.instance_id}")


@dataclass(frozen=True)
class Nav2Done:
    """A Nav2 goal ended (posted by the sender's worker thread, handled on the executor's)."""

    sub: Subtask
    outcome: Nav2Outcome
    detail: str

    @property
    def succeeded(self) -> bool:
        from goat_ros.nav2_mode import Nav2Outcome

        return self.outcome is Nav2Outcome.SUCCEEDED

    def failure(self) -> str:
        """Why the subtask falls back to discrete actions."""
        return f"Nav2 {self.outcome.value}{': ' + self.detail if self.detail else ''}"


class ControllerSession:
    """What the controller keeps between callbacks: the agent, the observation sync, the running subtask and the
    episode frame (``anchor``: the odom pose at the episode start, the map frame's origin)."""

    def __init__(self, params: ControllerParams, agent: Agent) -> None:
        self.agent = agent
        self.sync = ObservationSync(with_segmentation=params.perception_backend == "ground_truth",
                                    camera_height_m=params.camera_height_m, max_skew_s=params.sync_tolerance_s)
        self.subtask: Optional[Subtask] = None
        self.episode_id: Optional[str] = None
        self.anchor: Optional[Pose2D] = None
        self.need_stamp_ns = 0  # the next act needs an observation set at least this new
        self.feedback: Optional[ActionFeedback] = None
        # The agent's localiser (off by default: the simulator's ideal /odom is the true pose).
        self.localiser = (Localiser(register=params.localise, filter_depth_images=params.filter_depth)
                          if params.localise or params.filter_depth else None)
        self._localised: Optional[tuple[int, Observation]] = None  # each set is localised once (by its stamp)

    def start(self, msg: GoalMsg) -> None:
        """Make ``msg`` the running subtask; a new episode resets the agent. Raises GoatError for a goal the agent
        rejects (the subtask is then running, to be finished as an error)."""
        new_episode = msg.episode_id != self.episode_id or msg.subtask_index == 0
        self.need_stamp_ns = max(self.need_stamp_ns, cv.ns_from_time(msg.header.stamp))
        self.subtask = Subtask(goal=msg)
        goal = cv.msg_to_goal(msg)
        if new_episode:
            self.agent.reset_episode()
            self.episode_id = msg.episode_id
            self.anchor = None
            if self.localiser is not None:
                self.localiser.reset()
            self._localised = None
        self.agent.start_subtask(goal)

    def ready(self) -> Optional[Subtask]:
        """The subtask to act for now: none waits for a result or Nav2, and a new enough observation set is in."""
        sub = self.subtask
        if sub is None or sub.waiting_for_result or self.sync.latest_stamp_ns < self.need_stamp_ns:
            return None
        return None if sub.nav2_active else sub  # Nav2 drives; its report decides what comes next

    def anchor_episode(self) -> bool:
        """Fix the episode frame at the current odometry, once per episode; True when it was fixed now."""
        if self.anchor is not None:
            return False
        self.anchor = self.sync.odom_pose()
        return True

    def act(self, sub: Subtask) -> tuple[Pose2D, DiscreteAction]:
        """The agent's step on the newest observation set, and the pose it was taken at (episode frame)."""
        obs = self.localised(self.sync.observation(self.feedback, self.anchor))
        if not sub.poses:
            sub.poses.append(obs.pose)
        return obs.pose, self.agent.act(obs)

    def localised(self, obs: Observation) -> Observation:
        """``obs`` as the localiser corrects it (the same set twice, as a new subtask's first act: localised once)."""
        if self.localiser is None:
            return obs
        stamp = self.sync.latest_stamp_ns
        if self._localised is None or self._localised[0] != stamp:
            self._localised = (stamp, self.localiser.localise(obs))
        return self._localised[1]

    def map_anchor(self) -> Optional[Pose2D]:
        """The odom pose that the map frame's origin has now: the episode anchor, corrected by the localiser
        (``map -> odom`` is its inverse)."""
        if self.localiser is None or self.anchor is None:
            return self.anchor
        return compose(self.anchor, inverse(self.localiser.map_to_odom))

    def action_done(self, sub: Subtask, result: Any) -> None:
        """A successful ExecuteAction ``result``: act next on the set it names, from the pose it reports."""
        self.feedback = ActionFeedback(stamp_ns=cv.ns_from_time(result.observation_stamp),
                                       pose=cv.msg_to_pose2d(result.pose), collided=bool(result.collided),
                                       step=int(result.step))
        self.need_stamp_ns = self.feedback.stamp_ns
        sub.poses.append(to_episode_frame(self.feedback.pose, self.map_anchor()))  # as the agent believes

    def resume_after_nav2(self, action: Optional[DiscreteAction], streaming: bool,
                          now_ns: int) -> Optional[DiscreteAction]:
        """After a Nav2 failure: the step to take now (the one the hand-over held back), or None to act afresh."""
        if streaming or action is None:
            # Streaming sensors: the robot may have moved under Nav2, so act afresh on a set taken after it stopped.
            self.need_stamp_ns = max(self.need_stamp_ns, now_ns)
            return None
        # The simulator bridge publishes one observation set per action, so nothing newer comes: take the step
        # the agent chose from the current one, as the discrete mode would have.
        return action

    def end(self) -> Optional[Subtask]:
        """The running subtask, which ends now (None if none runs)."""
        sub, self.subtask = self.subtask, None
        return sub


@dataclass(frozen=True)
class Handover:
    """What goes to Nav2: the approach pose of ``instance``, in the frame ``nav2_frame_id`` names."""

    instance: Instance
    goal: Pose2D


def timeout_error(sub: Optional[Subtask], now_s: float, action_timeout_s: float) -> Optional[str]:
    """The error that ends ``sub`` when it made no progress for ``action_timeout_s`` (plus 1 s), else None."""
    if sub is None or sub.nav2_active:  # Nav2 has its own timeout, nav2_timeout_s
        return None
    if now_s - sub.action_sent_s <= action_timeout_s + 1.0:
        return None
    if sub.waiting_for_result:
        return f"no action result within {action_timeout_s} s"
    return (f"no complete observation set within {action_timeout_s} s "
            f"(are {topics.RGB} and the other camera topics published?)")


def plan_handover(agent: Agent, sub: Subtask, pose: Pose2D, params: ControllerParams, anchor: Optional[Pose2D],
                  nav2_ready: bool) -> Optional[Handover]:
    """The Nav2 goal for the instance the agent heads for, when it is time to hand over; None to step on.

    Raises goat_ros.nav2_mode.NoApproachPoseError when no free approach pose is found.
    """
    from goat_ros.nav2_mode import episode_to_odom, handover_instance, instance_goal_pose, occupancy_is_free

    instance = handover_instance(agent.debug_state(), agent.memory.instances, nav2_ready=nav2_ready,
                                 fell_back=sub.nav2_fell_back)
    if instance is None:
        return None
    goal = instance_goal_pose(instance, pose, params.nav2_standoff_m,
                              occupancy_is_free(agent.occupancy, agent.config.robot_radius_m))
    if params.nav2_frame_id == topics.ODOM_FRAME:
        goal = episode_to_odom(goal, anchor or Pose2D(0.0, 0.0, 0.0))
    return Handover(instance, goal)


def build_agent(params: ControllerParams) -> Agent:
    """The agent over the configured perception backend and matcher; model folders are checked first."""
    from goat_core.agent import Agent, AgentConfig
    from goat_core.agent.config_file import load_agent_config
    from goat_core.mapping.evidence import evidence_wanted
    from goat_core.matching.matcher import MatcherConfig
    from goat_core.matching.selection import StackConfig, build_stack
    from goat_core.perception.factory import PerceptionConfig
    from goat_core.perception.model_folder import check_model_folder

    p = params
    stack = StackConfig(perception=PerceptionConfig(backend=p.perception_backend, model_dir=p.model_dir or None,
                                                    device=p.device, errors=p.perception_errors,
                                                    errors_seed=p.perception_errors_seed),
                        matcher=p.matcher, image_matcher=p.image_matcher, clip_model_dir=p.clip_model_dir or None)
    if p.perception_backend != "ground_truth":
        check_model_folder(p.model_dir or None, p.perception_backend)
    # Every backend names the categories of the object vocabulary, as the in-process run does.
    perception, matcher = build_stack(stack, list(OBJECT_LABELS), MatcherConfig())
    agent_config = load_agent_config(p.agent_config) if p.agent_config else AgentConfig()
    return Agent(with_evidence(agent_config, evidence_wanted(p.evidence, p.perception_errors)), perception, matcher)


def with_evidence(config: AgentConfig, enabled: bool) -> AgentConfig:
    """``config`` with the instance memory's evidence over views on or off (goat-nav bench --evidence)."""
    if config.memory.evidence.enabled == enabled:
        return config
    evidence = dataclasses.replace(config.memory.evidence, enabled=enabled)
    return dataclasses.replace(config, memory=dataclasses.replace(config.memory, evidence=evidence))
