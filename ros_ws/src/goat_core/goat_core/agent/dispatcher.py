"""The GOAT agent: perception -> occupancy grid and instance memory -> goal matching -> frontier or goal
navigation, as a dispatcher over its parts.

One call of :meth:`Agent.act` per observation. The decision, in order:

1. look around (``scanning``): the head to the navigation tilt, a full circle at the start of an episode, and
   at the start of a later subtask when memory is unsure;
2. a recovery under way continues (``goat_core.control.recovery``);
3. if the matcher is confident about an instance (``targets``: for category goals the nearest instance of the
   category), go there and STOP in sight of it (``approach``);
4. an image goal that names its category looks closer at the remembered instances of it (``inspection``);
5. otherwise explore the nearest reachable frontier (``exploration``);
6. with nothing left to explore (:meth:`Agent._when_explored`): inspect unsure image and description matches,
   try the recoveries, with evidence over views trust every remembered instance, go to the best remaining match,
   with evidence recall the instances forgotten earlier, or STOP and give up.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, cast

import numpy as np

from goat_core.agent.approach import Approach
from goat_core.agent.config import AgentConfig
from goat_core.agent.context import AgentContext, DebugState
from goat_core.agent.exploration import explore_step
from goat_core.agent.inspection import Inspection
from goat_core.agent.recovering import Recovering
from goat_core.agent.scanning import Scanning
from goat_core.agent.targets import Targets
from goat_core.errors import InvalidGoalError
from goat_core.mapping.instance_memory import InstanceMemory
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.matching.base import GoalMatcher, GoalNoter, LiveViewObserver, MapObserver, MatchResult
from goat_core.perception.base import PerceptionBackend
from goat_core.types import DiscreteAction, Goal, GoalModality, Instance, Observation, StopDecision

MAX_REDECISIONS = 8  # refusals a step notes without the move (Agent._not_into_refusal) before it turns away


class Agent:
    """A lifelong GOAT agent over one perception backend and one goal matcher."""

    def __init__(self, config: AgentConfig, perception: PerceptionBackend, matcher: GoalMatcher) -> None:
        self.config = config
        self._perception = perception
        self._matcher = matcher
        self._ctx = AgentContext(config, perception, matcher)
        if isinstance(matcher, MapObserver):
            matcher.observe_map(self._ctx.grid)
        self._scanning = Scanning(self._ctx)
        self._approach = Approach(self._ctx)
        self._targets = Targets(self._ctx, self._approach)
        self._inspection = Inspection(self._ctx, self._approach, self._targets)
        self._recovering = Recovering(self._ctx, self._approach)
        self._has_goal = False
        self._subtask_actions = 0  # actions of the current subtask (AgentConfig.max_subtask_actions)
        self.goal_note: Optional[str] = None  # see start_subtask
        self._named_image_goal = False  # an image goal that also names its category
        self._description_goal = False
        self._settle_first = False  # the next decision first lets the matcher finish comparing memory
        self._recalled = False  # the forgotten instances were recalled in this subtask (_recall_forgotten_once)
        self.reset_episode()

    # ---------------------------------------------------------------------------------------------- API
    @property
    def occupancy(self) -> OccupancyGrid:
        return self._ctx.grid

    @property
    def memory(self) -> InstanceMemory:
        return self._ctx.memory

    def debug_state(self) -> DebugState:
        return self._ctx.debug

    @property
    def last_stop(self) -> Optional[StopDecision]:
        """Why the agent called STOP in the current subtask; None unless its last action was that STOP."""
        return self._ctx.stop

    def reset_episode(self) -> None:
        """Forget the map and all instances; the next subtask starts with a scan."""
        self._forget()
        self._ctx.motion.prev_xy = None
        self._ctx.motion.forget_departures()
        self._has_goal = False
        self._scanning.reset_episode()
        self._ctx.motion.reset()

    def start_subtask(self, goal: Goal) -> None:
        """Set the goal; memory is kept across subtasks unless ``use_memory`` is False."""
        ctx = self._ctx
        if not self.config.use_memory:
            self._forget()
        self._matcher.set_goal(goal, self._perception.labels)
        # A warning for the user's log (an unknown category), read by the runner and the controller node.
        self.goal_note = self._matcher.goal_note if isinstance(self._matcher, GoalNoter) else None
        ctx.category_goal = goal.modality is GoalModality.CATEGORY
        self._named_image_goal = goal.modality is GoalModality.IMAGE and goal.category is not None
        self._description_goal = goal.modality is GoalModality.DESCRIPTION
        live_views = isinstance(self._matcher, LiveViewObserver) and self._matcher.wants_live_views()
        self._scanning.start_subtask(not self.config.use_memory, live_views)
        self._inspection.start_subtask(goal)
        self._approach.reset()
        self._settle_first = True
        ctx.recovery.reset()
        ctx.explorer.current = None
        ctx.set_aside.clear()
        ctx.memory.relax_trust(False)  # evidence: the last resort of the previous subtask ends with it
        ctx.motion.reset()
        ctx.stop = None
        ctx.moved = False
        self._subtask_actions = 0
        self._recalled = False
        self._has_goal = True

    def _forget(self) -> None:
        """Drop the map and every instance; matcher caches keyed on instance ids must go with them."""
        self._ctx.grid.reset()
        self._ctx.memory.clear()
        self._ctx.explorer.reset()
        self._matcher.reset()

    def act(self, obs: Observation) -> DiscreteAction:
        """Integrate one observation and choose the next action."""
        if not self._has_goal:
            raise InvalidGoalError("Agent.act() called before start_subtask(goal): no goal to act on")
        obs.validate()
        self._integrate(obs)
        self._subtask_actions += 1
        if self._subtask_actions >= self.config.max_subtask_actions:
            action = self._stop_at_action_limit()
        else:
            action = self._not_into_refusal(obs, self._decide(obs))
        refused = self._ctx.motion.take_refused()
        if refused is not None:
            # The path's direction was refused again where a detour began before: a bump there, so that the next
            # plan goes another way (the clear_collisions recovery forgets it with the real ones).
            cfg = self.config
            self._ctx.grid.mark_collision(refused, cfg.robot_radius_m + cfg.collision_ahead_m,
                                          cfg.collision_half_width_m)
        if action is DiscreteAction.STOP and self._ctx.stop is not None and self._ctx.motion.refusals_kept:
            stop = self._ctx.stop
            self._ctx.stop = dataclasses.replace(stop, reason=f"{stop.reason}; forward moves into a refusal not "
                                                              f"made: {self._ctx.motion.refusals_kept}")
        if action is not DiscreteAction.STOP:
            # A part's STOP that another part turned into a further step (an inspection's look at one side of a
            # candidate is a STOP of the approach) leaves no record: last_stop names only a STOP the agent called.
            self._ctx.stop = None
        self._ctx.motion.last_action = action
        return action

    def _not_into_refusal(self, obs: Observation, action: DiscreteAction) -> DiscreteAction:
        """``action``, unless it is a forward move from where one was refused before in this subtask (any mode:
        :meth:`goat_core.agent.motion.Motion.refused_at`). Such a move is refused again, so it is not made: the
        observation it would bring (the same frame, refused) is taken in as the simulator's would be (a collision
        mark ahead, a blocked move for the stuck guards, which then mark, strike, set aside and give up as they
        intend) and the step decided again, up to ``MAX_REDECISIONS`` times; still forward after that, a turn
        left, the step's target given up (its instance set aside for the subtask, an exploration frontier marked
        failed). A map that says free
        where the world refused (a mark spared by the trail, a gap the planner's field keeps open) otherwise
        sends the robot into the same refusal again and again (ideal 1000-9/6 in stop 41: 457 times)."""
        ctx = self._ctx
        pose = obs.pose
        refused = dataclasses.replace(obs, collided=True)  # what the simulator would answer: the same frame
        for _ in range(MAX_REDECISIONS):
            if action is not DiscreteAction.MOVE_FORWARD or not ctx.motion.refused_at(pose):
                return action
            ctx.motion.refusals_kept += 1
            ctx.motion.last_action = action
            self._integrate(refused)
            action = self._decide(refused)
        if action is not DiscreteAction.MOVE_FORWARD or not ctx.motion.refused_at(pose):
            return action
        target = ctx.debug.target_instance_id
        if target is not None:
            ctx.set_aside.add(target)
        elif ctx.debug.mode == "explore" and ctx.explorer.current is not None:
            ctx.explorer.mark_failed(ctx.explorer.current.target_xy_m)
        return ctx.emit(DiscreteAction.TURN_LEFT, "recover")

    def _stop_at_action_limit(self) -> DiscreteAction:
        """STOP where the robot stands, naming the best match memory holds (never confident: a confident one
        would have been reached)."""
        ctx = self._ctx
        match, inst = ctx.match()
        reason = f"subtask action limit ({self.config.max_subtask_actions}) reached: stopped where it stood"
        ctx.stop = (StopDecision.at(inst, confident=False, reason=reason) if inst is not None
                    else StopDecision(gave_up=True, reason=reason + " with no candidate"))
        return ctx.emit(DiscreteAction.STOP, "stop", match=match)

    # ------------------------------------------------------------------------------------------- sensing
    def _integrate(self, obs: Observation) -> None:
        ctx, cfg = self._ctx, self.config
        pose = obs.pose
        if ctx.motion.last_action is DiscreteAction.MOVE_FORWARD:
            ctx.moved = True
            if ctx.motion.prev_xy is not None:
                ctx.grid.mark_trail(ctx.motion.prev_xy, pose.xy())
            if obs.collided:
                ctx.grid.mark_collision(pose, cfg.robot_radius_m + cfg.collision_ahead_m, cfg.collision_half_width_m)
                ctx.motion.note_refused(pose)
            ctx.motion.note_forward(pose.xy(), obs.collided)
        self._scanning.note_tilt(obs)
        ctx.motion.prev_xy = pose.xy()
        ctx.grid.update(obs)
        ctx.grid.mark_disk_explored(pose.x_m, pose.y_m, cfg.robot_radius_m)
        detections = self._perception.detect(obs)
        ctx.seen_now = set(ctx.memory.update(detections, obs, self._perception.persistent_keys))
        if self._scanning.live_views:
            admissible = ctx.admissible(ctx.memory.instances)
            cast(LiveViewObserver, self._matcher).observe_live_views(ctx.memory.views_now(admissible))

    # ------------------------------------------------------------------------------------------ deciding
    def _decide(self, obs: Observation) -> DiscreteAction:
        ctx = self._ctx
        step = self._queued_step(obs)
        if step is not None:
            return step
        if self._settle_first:
            # The first decision of a subtask waits for the matcher to compare everything already remembered with
            # the new goal (image goals spread that over steps): moving before it has would walk away from a goal
            # that memory already holds. It costs compute once per subtask, no actions.
            self._settle_first = False
            match, inst = self._targets.settle()
            if self._scanning.start_rescan(match, inst, obs.pose, obs.sensing_exact):
                self._settle_first = True  # the views the turn brings are compared before the next decision
                return ctx.emit(DiscreteAction.TURN_LEFT, "scan")
        else:
            match, inst = ctx.match()
        if ctx.category_goal and match.confident:
            match, inst = self._targets.prefer_within_reach(obs.pose, match, inst)
        include = inst.points_xyz_m[:, :2] if inst is not None else None
        fld = ctx.field(obs.pose, include)
        if ctx.category_goal and match.confident and inst is not None:
            match, inst, fld = self._targets.nearest_of_category(obs, match, inst, fld)
        if inst is not None and match.confident:
            action = self._approach.goto(inst, fld, obs, match)
            if action is not None:
                return action
        if self._named_image_goal and not match.confident and not match.pending:
            action = self._inspection.step(obs, match)
            if action is not None:
                return action
        action = explore_step(ctx, fld, obs, match)
        if action is not None:
            return action
        return self._when_explored(obs, match, inst)

    def _when_explored(self, obs: Observation, match: MatchResult, inst: Optional[Instance]) -> DiscreteAction:
        """Nothing left to explore: let the matcher finish comparing what memory holds, look closer at the
        likeliest instances of an image or description goal, go to a confident match that can be reached; else
        try the recoveries and, once they are exhausted, go to the best remaining match, confident or not,
        setting aside unreachable ones; with evidence over views recall what was forgotten; STOP (giving up) when
        none is left."""
        if match.pending:
            match, inst = self._targets.settle()
        inspects = self._inspection.goal_rgb is not None or self._description_goal
        if not match.confident and inspects:
            action = self._inspection.step(obs, match)
            if action is not None:
                return action
        action, match = self._targets.goto_best(obs, match, inst, confident_only=True)
        if action is not None:
            return action
        action = self._recovering.recover(obs, before_fallback=inst is not None)
        if action is not None:
            return action
        if self._trust_all_once():
            match, inst = self._targets.settle()
            action, match = self._targets.goto_best(obs, match, inst, confident_only=True)
            if action is not None:
                return action
        match, inst = self._ctx.match()
        action, match = self._targets.goto_best(obs, match, inst)
        if action is not None:
            return action
        action = self._recovering.recover(obs)  # every candidate proved unreachable: the rest of the recoveries
        if action is not None:
            return action
        if self._recall_forgotten_once():
            match, inst = self._targets.settle()
            action, match = self._targets.goto_best(obs, match, inst)
            if action is not None:
                return action
        return self._give_up(obs, match)

    def _queued_step(self, obs: Observation) -> Optional[DiscreteAction]:
        """A step that comes before any decision: an escape (under way, or started now by an oscillation in
        place), the look around, a recovery under way."""
        step = self._escape_step(obs, self._ctx.motion.oscillating())
        if step is None:
            step = self._scanning.step(obs)
        if step is None:
            step = self._recovering.step(obs)
        return step

    def _give_up(self, obs: Observation, match: MatchResult) -> DiscreteAction:
        """STOP, giving up; unless the robot's own map holds it where it stands and an escape can start."""
        step = self._escape_step(obs, self._held_by_own_map(obs))
        if step is not None:
            return step
        self._ctx.stop = StopDecision(gave_up=True, reason="nothing left to explore and no candidate it can "
                                                           "reach; " + self._ctx.recovery.describe())
        return self._ctx.emit(DiscreteAction.STOP, "stop", match=match)

    def _escape_step(self, obs: Observation, start: bool) -> Optional[DiscreteAction]:
        """The next step of an escape under way, or of one started now when ``start`` (an in-place oscillation,
        or a robot its own map holds): back to where the last forward moves left from
        (:meth:`goat_core.agent.motion.Motion.start_escape`). None when none is under way or can start."""
        motion = self._ctx.motion
        if not motion.escape and not (start and motion.start_escape(obs.pose)):
            return None
        step = motion.escape_step()
        return None if step is None else self._ctx.emit(step, "recover")

    def _held_by_own_map(self, obs: Observation) -> bool:
        """The map says the base overlaps an obstacle where it stands (a mapped point under or beside it, the
        marks of bumps around it): plans from a pose the map calls blocked fail, and a move back to where the
        robot came from may free it (large-furnished 5000-6 in stop 38: wedged 0.13 m from a toilet)."""
        fld = self._ctx.field(obs.pose, None)
        cell = np.floor((obs.pose.xy() - fld.origin_xy_m) / fld.map_res_m).astype(np.int64)
        h, w = fld.touching.shape
        return bool(0 <= cell[0] < h and 0 <= cell[1] < w and fld.touching[cell[0], cell[1]])

    def _trust_all_once(self) -> bool:
        """With evidence on, the first time in a subtask that nothing is left to explore and no trusted match can
        be reached: trust every instance memory still holds (EvidenceConfig.trust_all_before_giving_up), so that a
        goal seen once or with low scores is walked to and looked at again before the agent settles for a match
        it is not confident in, or gives up. True when it did so now."""
        memory = self._ctx.memory
        evidence = self.config.memory.evidence
        if not evidence.enabled or not evidence.trust_all_before_giving_up or memory.trust_all:
            return False
        memory.relax_trust(True)
        return True

    def _recall_forgotten_once(self) -> bool:
        """With evidence on, the first time in a subtask that the agent would give up: bring back the instances
        forgotten earlier in the episode that the matcher admits (EvidenceConfig.recall_forgotten_before_giving_up).
        A detector that misses a small goal in most frames gets it forgotten, and a home explored once then holds
        no candidate at all; recalled, it is walked to and the arrival check judges it. True when any came back."""
        ctx = self._ctx
        evidence = self.config.memory.evidence
        if not evidence.enabled or not evidence.recall_forgotten_before_giving_up or self._recalled:
            return False
        self._recalled = True
        if not ctx.memory.recall(ctx.admissible(ctx.memory.forgotten)):
            return False
        ctx.memory.relax_trust(True)  # what comes back is shown, trusted or not, as in the last resort above
        return True
