"""What the agent's parts share: its map, memory, matcher, the current goal and the step's decision record."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, Mapping, Optional

import numpy as np

from goat_core.agent.config import AgentConfig
from goat_core.agent.motion import Motion
from goat_core.control.frontier import FrontierExplorer
from goat_core.control.planner import FieldCache, PlanningField
from goat_core.control.recovery import RecoveryLadder
from goat_core.mapping.instance_memory import InstanceMemory
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.matching.base import NO_MATCH, CandidateFilter, GoalMatcher, MatchResult
from goat_core.perception.base import PerceptionBackend
from goat_core.types import DiscreteAction, Instance, Pose2D, StopDecision

Mode = Literal["scan", "explore", "goto", "inspect", "recover", "stop"]
NO_PATH = np.empty((0, 2))


@dataclass(frozen=True, eq=False)
class DebugState:
    """What the agent decided on its last step, for reports and rviz."""

    mode: Mode
    target_xy_m: Optional[np.ndarray]  # (2,) episode xy it is heading to, if any
    path_xy_m: np.ndarray  # (K, 2) planned path, robot first; empty when not navigating
    target_instance_id: Optional[int]  # memory id of the instance it is heading to
    match: MatchResult = NO_MATCH


class AgentContext:
    """The agent's world model and the state of the current subtask that more than one part reads or writes."""

    def __init__(self, config: AgentConfig, perception: PerceptionBackend, matcher: GoalMatcher) -> None:
        self.config = config
        self.perception = perception
        self.matcher = matcher
        self.grid = OccupancyGrid(config.occupancy)
        self.memory = InstanceMemory(config.memory)
        self.explorer = FrontierExplorer(config.frontier)
        self.fields = FieldCache()  # a field whose inputs did not change is not planned again
        self.recovery = RecoveryLadder(config.recovery, config.full_circle_turns)
        self.motion = Motion(config)
        self.category_goal = False  # any instance the matcher accepts will do, so the nearest is best
        self.set_aside: set[int] = set()  # instances that proved unreachable this subtask
        self.seen_now: set[int] = set()  # instances detected in the current observation
        self.moved = False  # a forward move was made in this subtask
        self.stop: Optional[StopDecision] = None  # why the last STOP of this subtask was called
        self.debug = DebugState("stop", None, NO_PATH, None)

    def match(self) -> tuple[MatchResult, Optional[Instance]]:
        """The matcher's answer over the instances not set aside this subtask, and that instance."""
        instances = self.memory.instances
        if self.set_aside:
            instances = {k: v for k, v in instances.items() if k not in self.set_aside}
        match = self.matcher.match(instances)
        inst = instances.get(match.instance_id) if match.instance_id is not None else None
        return match, inst

    def admissible(self, instances: Mapping[int, Instance]) -> Mapping[int, Instance]:
        """The instances the matcher admits as the current goal at all (all of them, unless it filters)."""
        if isinstance(self.matcher, CandidateFilter):
            return self.matcher.admissible(instances)
        return instances

    def field(self, pose: Pose2D, include_xy_m: Optional[np.ndarray]) -> PlanningField:
        """The step's planning field; after the relax_inflation recovery, on the map grid, radius less a slack
        (the safety margin's cost stays: goat_core.control.recovery)."""
        cfg = self.config
        if not self.recovery.relaxed:
            return self.fields.build(self.grid, pose, cfg.robot_radius_m, cfg.planner, include_xy_m)
        relaxed = dataclasses.replace(cfg.planner, downsample=1)
        return self.fields.build(self.grid, pose, cfg.robot_radius_m - cfg.recovery.relaxed_radius_slack_m, relaxed,
                                 include_xy_m)

    def emit(self, action: DiscreteAction, mode: Mode, target_xy: Optional[np.ndarray] = None,
             path: np.ndarray = NO_PATH, instance_id: Optional[int] = None,
             match: MatchResult = NO_MATCH) -> DiscreteAction:
        """Record the step's decision and count turns in place (a dithering guard); returns ``action``."""
        self.debug = DebugState(mode, target_xy, path, instance_id, match)
        self.motion.count(action, navigating=mode in ("explore", "goto"))
        return action
