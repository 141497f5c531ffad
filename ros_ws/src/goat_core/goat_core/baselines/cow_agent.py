"""CLIP on Wheels (CoW; Gadre et al., "CoWs on Pasture", CVPR 2023) as a second agent of the GOAT harness.

GOAT-Bench (Khanna et al., CVPR 2024, Table 2) compares its Modular GOAT agent with a Modular CoW: the same
kind of modular stack without GOAT's instance memory and instance matching. This module is that CoW, built the
way its paper and code (github.com/columbia-ai-robotics/cow, ``src/models/agent_fbe.py`` and
``exploration/frontier_based_exploration.py``) define the agent, over this core's occupancy grid, FMM planner,
frontier explorer and discrete-action policy:

1. **spin**: at the start of every subtask, a full circle of turns in place (CoW turns until it has seen all
   around: (360 deg - FOV) / 30 deg turns; with the Stretch's 42 deg HFOV that is 11 turns, a full circle less
   the start view, as the GOAT agent's scan);
2. **localize** in every frame: the localizer's output for the goal, back-projected with depth, marks the
   target's points (CoW's "regions of interest" in its voxel map);
3. **exploit** once the target has been localized: go to the localized target nearest to the robot (CoW sorts
   its regions of interest by distance); within ``found_radius_m`` (CoW's ``TARGET_OBJECT_FOUND_M``, 1 m) of its
   nearest point, turn to face it and STOP;
4. **explore** otherwise: the nearest reachable frontier;
5. **confused** (nothing reachable to explore, no reachable target): CoW forgets its map and spins again; here
   that is done ``confused_restarts`` times per subtask, then the agent STOPs, giving up.

**No memory across subtasks**: CoW is a single-goal agent; every subtask of a GOAT episode starts it afresh, map
and localized targets forgotten (GOAT-Bench's Modular CoW keeps no memory). The head is tilted to the same
navigation tilt as the GOAT agent's, so that the two differ in method, not in camera.

**Localizer with ground-truth perception** (the GOAT-GTSem setting both agents are compared in): CoW's
relevance map for a goal becomes the ground-truth segmentation of the goal's category in the current frame (what
the CoW code's ``agent_fbe_gt`` / ``MaskGt`` localizer uses: the target-category mask); every pixel of it is
relevant. How each goal modality names that category:

* **category** goals: the goal's words resolved to a perception label (exact label, WordNet link or sentence
  embedding, ``goat_core.matching.category.CategoryResolver``: "couch" -> "sofa");
* **description** goals: the category the description names as its target (the first object phrase before a
  relation, ``goat_core.matching.description.DescriptionParser``: "the white book on the coffee table" ->
  "book"); colour, room and spatial relation are not used: CoW's localizer finds the category, any instance;
* **image** goals: the category GOAT-Bench tasks carry with the picture ([category, modality, object_id,
  image_idx]); the picture itself is not compared with anything. An image goal without its category cannot be
  localized with ground truth and is refused (InvalidGoalError).

So for description and image goals CoW goes to the nearest instance of the right category, whichever instance
the goal means: what GOAT-Bench found ("CLIP alone struggles with instance-specific goals").

Beyond the paper, two safeguards that the GOAT agent has as well: a blocked MOVE_FORWARD marks the cells ahead
as an obstacle (CoW's voxel map misses low obstacles the same way; its code avoids repeating a failed action),
and a target the robot gets stuck on twice is set aside for the subtask.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Protocol

import numpy as np

from goat_core.agent import DebugState, Mode
from goat_core.control.frontier import FrontierConfig, FrontierExplorer
from goat_core.control.planner import FieldCache, PlannerConfig, PlanningField
from goat_core.control.policy import (
    check_drive_settings,
    drive_step,
    heading_error_rad,
    tilt_action,
    turn_toward,
    went_nowhere,
)
from goat_core.errors import ConfigError, InvalidGoalError, require_at_least, require_positive
from goat_core.mapping.instance_memory import InstanceMemory, InstanceMemoryConfig, nearest_distance_2d_m
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.matching.base import NO_MATCH, MatchResult
from goat_core.matching.category import CategoryResolver, vocabulary_resolver
from goat_core.matching.cow import CowPerception
from goat_core.matching.description import DescriptionMatcherConfig
from goat_core.matching.description_parser import DescriptionParser
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.perception.base import PerceptionBackend
from goat_core.types import (
    ActionSizes,
    Detection,
    DiscreteAction,
    Goal,
    GoalModality,
    Instance,
    Observation,
    Pose2D,
    StopDecision,
)

_NO_PATH = np.empty((0, 2))
_MAX_STRIKES = 2  # times the robot got stuck heading for one target before it is set aside for the subtask


@dataclass(frozen=True)
class CowAgentConfig:
    """Every CoW agent parameter, each with its one default (sub-configs hold their own)."""

    occupancy: OccupancyConfig = field(default_factory=OccupancyConfig)
    memory: InstanceMemoryConfig = field(default_factory=InstanceMemoryConfig)  # the localized targets' points
    planner: PlannerConfig = field(default_factory=PlannerConfig)
    frontier: FrontierConfig = field(default_factory=FrontierConfig)
    actions: ActionSizes = field(default_factory=ActionSizes)
    robot_radius_m: float = 0.17  # Stretch base
    # CoW's TARGET_OBJECT_FOUND_M: STOP once this close (planar) to the localized target's nearest point.
    found_radius_m: float = 1.0
    goal_margin_m: float = 0.15  # plan to cells this far inside the found radius (cell size, step overshoot)
    navigation_tilt_rad: float = -math.radians(30.0)  # the GOAT agent's navigation tilt (negative looks down)
    # CoW's "agent confused" (no path to a frontier or a target): forget the map and spin again, this many times
    # per subtask; then STOP, giving up (the paper's agent would spin on until the budget runs out).
    confused_restarts: int = 1
    collision_ahead_m: float = 0.1  # a bump is marked this far past the front of the base
    collision_half_width_m: float = 0.1
    stuck_collisions: int = 3  # blocked moves in a row before the current frontier or target counts as stuck
    no_progress_steps: int = 20  # moves without ``progress_m`` of net displacement count as stuck too
    progress_m: float = 0.3
    frontier_reached_m: float = 0.3  # a frontier still there when the robot is this close is unobservable
    heading_tolerance_turns: float = 0.6  # see goat_core.control.policy.drive_along

    def __post_init__(self) -> None:
        require_positive(self, ("robot_radius_m", "found_radius_m", "progress_m", "frontier_reached_m"))
        if not 0.0 <= self.goal_margin_m < self.found_radius_m:
            raise ConfigError(f"CowAgentConfig.goal_margin_m must be in [0, found_radius_m), got "
                              f"{self.goal_margin_m!r}")
        check_drive_settings(self)
        require_at_least(self, 1, ("stuck_collisions", "no_progress_steps"))
        if self.confused_restarts < 0:
            raise ConfigError(f"CowAgentConfig.confused_restarts must be >= 0, got {self.confused_restarts!r}")


class TargetLocalizer(Protocol):
    """CoW's localizer: where the current goal is in a frame."""

    persistent_keys: bool  # detections' instance keys name the same object in every frame

    def set_goal(self, goal: Goal) -> str:
        """Look for ``goal`` from now on; returns what is looked for (for logs)."""
        ...

    def localize(self, obs: Observation) -> list[Detection]:
        """The goal's detections in this frame (empty when it is not in view)."""
        ...


class GroundTruthLocalizer:
    """CoW's localizer over ground-truth perception: the goal category's detections in the frame.

    Which category each goal modality names is the module docstring's list.
    """

    def __init__(self, perception: PerceptionBackend, embedder: SentenceEmbedder,
                 description: Optional[DescriptionMatcherConfig] = None) -> None:
        """``description``: whose ``anchor_min_similarity`` the description parser uses (default: the matcher's)."""
        self.perception = perception
        self.persistent_keys = bool(perception.persistent_keys)
        self._embedder = embedder
        self._anchor_min_similarity = (description or DescriptionMatcherConfig()).anchor_min_similarity
        self._resolvers: dict[tuple[str, ...], CategoryResolver] = {}
        self.category: Optional[str] = None  # the perception label looked for

    def category_of(self, goal: Goal) -> str:
        """The perception label a goal names (see the module docstring)."""
        resolver = vocabulary_resolver(self._embedder, self.perception.labels, self._resolvers)
        if goal.modality is GoalModality.DESCRIPTION:
            assert goal.text is not None  # Goal checks it
            return DescriptionParser(resolver, self._anchor_min_similarity).parse(goal.text).target.category
        if goal.category is None:  # an image goal without its category
            raise InvalidGoalError("CoW with ground-truth perception localizes a category: the image goal "
                                   f"{goal.describe()!r} carries none (run without --image-without-category)")
        return resolver.resolve(goal.category).category

    def set_goal(self, goal: Goal) -> str:
        self.category = self.category_of(goal)
        return self.category

    def localize(self, obs: Observation) -> list[Detection]:
        if self.category is None:
            return []
        return [d for d in self.perception.detect(obs) if d.category == self.category]


class RelevanceLocalizer:
    """CoW's open-vocabulary localizer (goat_core.matching.cow.CowPerception): OWL-ViT / OWLv2 boxes or CLIP crop
    cosines for the goal's query, reduced to the centre pixel of the most relevant region.

    The query is the category prompt, the description's text or the goal picture itself (no category needed),
    as the paper's CoW queries its localizer. Detections are per frame (keys are not persistent): the instance
    memory merges them by 3D overlap.
    """

    persistent_keys = False

    def __init__(self, perception: CowPerception) -> None:
        self.perception = perception

    def set_goal(self, goal: Goal) -> str:
        return self.perception.set_goal(goal).key

    def localize(self, obs: Observation) -> list[Detection]:
        return self.perception.detect(obs)


class CowAgent:
    """The CoW agent: spin, explore frontiers, go to the localized target and STOP near it; no memory kept."""

    def __init__(self, config: CowAgentConfig, localizer: TargetLocalizer) -> None:
        self.config = config
        self._localizer = localizer
        self._grid = OccupancyGrid(config.occupancy)
        self._targets = InstanceMemory(config.memory)  # what the localizer found in this subtask
        self._explorer = FrontierExplorer(config.frontier)
        self._fields = FieldCache()  # a field whose inputs did not change is not planned again
        self.goal_note: Optional[str] = None  # the runner prints it; CoW has no warnings to give
        self.looking_for: Optional[str] = None  # what the localizer looks for in this subtask
        self._has_goal = False
        self._spin_left = 0
        self._restarts_left = 0
        self._tilt_limited = False  # a look action left the head where it was: stop asking for the tilt
        self._last_tilt_rad = 0.0
        self._last_action: Optional[DiscreteAction] = None
        self._prev_xy: Optional[np.ndarray] = None
        self._collisions_in_row = 0
        self._recent_xy: list[np.ndarray] = []
        self._commit_yaw: Optional[float] = None
        self._target_id: Optional[int] = None
        self._set_aside: set[int] = set()
        self._strikes: dict[int, int] = {}
        self._stop: Optional[StopDecision] = None
        self._debug = DebugState("stop", None, _NO_PATH, None)
        self.reset_episode()

    # ---------------------------------------------------------------------------------------------- API
    @property
    def occupancy(self) -> OccupancyGrid:
        return self._grid

    @property
    def memory(self) -> InstanceMemory:
        """The targets localized in the current subtask (CoW remembers nothing else, and nothing longer)."""
        return self._targets

    def debug_state(self) -> DebugState:
        return self._debug

    @property
    def last_stop(self) -> Optional[StopDecision]:
        """Why the agent called STOP in the current subtask; None until it has."""
        return self._stop

    def reset_episode(self) -> None:
        """Forget everything; the next subtask starts afresh (as every subtask does)."""
        self._forget()
        self._has_goal = False
        self._tilt_limited = False
        self._prev_xy = None

    def start_subtask(self, goal: Goal) -> None:
        """Set the goal and start as a new CoW episode: map and localized targets forgotten, a spin first."""
        self.looking_for = self._localizer.set_goal(goal)
        self._forget()
        self._spin_left = self._spin_turns()
        self._restarts_left = self.config.confused_restarts
        self._stop = None
        self._has_goal = True

    def act(self, obs: Observation) -> DiscreteAction:
        """Integrate one observation and choose the next action."""
        if not self._has_goal:
            raise InvalidGoalError("CowAgent.act() called before start_subtask(goal): no goal to act on")
        obs.validate()
        self._integrate(obs)
        action = self._decide(obs)
        self._last_action = action
        return action

    # ------------------------------------------------------------------------------------------- sensing
    def _spin_turns(self) -> int:
        """Turns that show every heading once: a full circle less the start view."""
        return int(math.ceil(2.0 * math.pi / self.config.actions.turn_rad - 1e-9)) - 1

    def _forget(self) -> None:
        self._grid.reset()
        self._targets.clear()
        self._explorer.reset()
        self._target_id = None
        self._set_aside.clear()
        self._strikes.clear()
        self._last_action = None
        self._clear_stuck()
        self._commit_yaw = None

    def _clear_stuck(self) -> None:
        self._collisions_in_row = 0
        self._recent_xy.clear()

    def _integrate(self, obs: Observation) -> None:
        cfg = self.config
        pose = obs.pose
        if self._last_action is DiscreteAction.MOVE_FORWARD:
            if self._prev_xy is not None:
                self._grid.mark_trail(self._prev_xy, pose.xy())
            if obs.collided:
                self._collisions_in_row += 1
                self._grid.mark_collision(pose, cfg.robot_radius_m + cfg.collision_ahead_m,
                                          cfg.collision_half_width_m)
            else:
                self._collisions_in_row = 0
            self._recent_xy.append(pose.xy())
            del self._recent_xy[:-cfg.no_progress_steps - 1]
        if self._last_action in (DiscreteAction.LOOK_UP, DiscreteAction.LOOK_DOWN):
            self._tilt_limited |= abs(obs.camera_tilt_rad - self._last_tilt_rad) < 1e-6
        self._last_tilt_rad = obs.camera_tilt_rad
        self._prev_xy = pose.xy()
        self._grid.update(obs)
        self._grid.mark_disk_explored(pose.x_m, pose.y_m, cfg.robot_radius_m)
        before = set(self._targets.instances)
        self._targets.update(self._localizer.localize(obs), obs, self._localizer.persistent_keys)
        if self._target_id is None or set(self._targets.instances) - before:
            self._choose_target(pose)  # CoW re-sorts its targets by distance when a new one is localized

    def _choose_target(self, pose: Pose2D) -> None:
        """The localized target nearest to the robot (lowest id among equals), None when there is none."""
        dists = [(nearest_distance_2d_m(inst, pose.x_m, pose.y_m), k)
                 for k, inst in self._targets.instances.items() if k not in self._set_aside]
        self._target_id = min(dists)[1] if dists else None

    def _stuck(self) -> bool:
        """Too many blocked moves in a row, or the last moves went nowhere."""
        cfg = self.config
        if self._collisions_in_row >= cfg.stuck_collisions:
            return True
        return went_nowhere(self._recent_xy, cfg.no_progress_steps, cfg.progress_m)

    # ------------------------------------------------------------------------------------------ deciding
    def _decide(self, obs: Observation) -> DiscreteAction:
        cfg = self.config
        look = tilt_action(obs.camera_tilt_rad, cfg.navigation_tilt_rad, cfg.actions.look_rad)
        if look is not None and not self._tilt_limited:
            return self._emit(look, "scan")
        if self._spin_left > 0:
            self._spin_left -= 1
            return self._emit(DiscreteAction.TURN_LEFT, "scan")
        while self._target_id is not None:
            target = self._targets.instances[self._target_id]
            action = self._goto(target, obs)
            if action is not None:
                return action
            if self._target_id in self._set_aside:  # stuck on the way to it too often: the next nearest
                self._choose_target(obs.pose)
                continue
            break  # not reachable on the map yet: explore, the map grows (CoW heads for a frontier then too)
        action = self._explore(obs)
        if action is not None:
            return action
        if self._restarts_left > 0:  # CoW's "agent confused": forget the map and spin again
            self._restarts_left -= 1
            self._forget()
            self._spin_left = self._spin_turns() - 1  # and the turn emitted now
            return self._emit(DiscreteAction.TURN_LEFT, "recover")
        self._stop = StopDecision(gave_up=True, reason=f"nothing left to explore and no reachable "
                                                       f"{self.looking_for} localized; map reset "
                                                       f"{self.config.confused_restarts} time(s)")
        return self._emit(DiscreteAction.STOP, "stop")

    def _goto(self, target: Instance, obs: Observation) -> Optional[DiscreteAction]:
        """Face the target and STOP when within the found radius, else a step towards it; None if unreachable."""
        cfg = self.config
        pose = obs.pose
        match = MatchResult(target.instance_id, 1.0, True)  # every localized target is the goal to CoW
        distance_m = nearest_distance_2d_m(target, pose.x_m, pose.y_m)
        if distance_m <= cfg.found_radius_m:
            rel = target.points_xyz_m[:, :2] - pose.xy()
            nearest = target.points_xyz_m[int(np.argmin(np.einsum("ij,ij->i", rel, rel))), :2]
            turn = turn_toward(heading_error_rad(pose, nearest), 0.5 * cfg.actions.turn_rad)
            if turn is not None:
                return self._emit(turn, "goto", nearest, _NO_PATH, target.instance_id, match)
            self._stop = StopDecision.at(target, True, f"within {distance_m:.2f} m of the localized "
                                                       f"{target.category} #{target.instance_id}")
            return self._emit(DiscreteAction.STOP, "stop", None, _NO_PATH, target.instance_id, match)
        fld = self._field(pose, target.points_xyz_m[:, :2])
        goal = self._goal_cell(target, fld)
        if goal is None:
            return None
        if self._stuck():
            strikes = self._strikes.get(target.instance_id, 0) + 1
            self._strikes[target.instance_id] = strikes
            self._clear_stuck()
            if strikes >= _MAX_STRIKES:
                self._set_aside.add(target.instance_id)
                return None
            self._grid.mark_collision(pose, cfg.robot_radius_m + cfg.collision_ahead_m, cfg.collision_half_width_m)
        path = fld.path_xy(goal)
        return self._emit(self._drive(fld, path, pose), "goto", fld.to_xy(np.array([goal]))[0], path,
                          target.instance_id, match)

    def _goal_cell(self, target: Instance, fld: PlanningField) -> Optional[tuple[int, int]]:
        """The reachable planning cell nearest to the robot within the found radius (less the margin) of the
        target's points; None when there is none."""
        cfg = self.config
        dist_m = fld.distance_to_m(target.points_xyz_m[:, :2])
        if dist_m is None:
            return None
        candidates = np.isfinite(fld.distance_m) & (dist_m <= cfg.found_radius_m - cfg.goal_margin_m)
        if not candidates.any():
            return None
        cost = np.where(candidates, fld.distance_m, np.inf)
        i, j = divmod(int(np.argmin(cost)), cost.shape[1])
        return (i, j)

    def _explore(self, obs: Observation) -> Optional[DiscreteAction]:
        """A step toward the nearest reachable frontier; None when none is left."""
        cfg = self.config
        pose = obs.pose
        fld = self._field(pose, None)
        if self._stuck():
            if self._explorer.current is not None:
                self._explorer.mark_failed(self._explorer.current.target_xy_m)
            self._clear_stuck()
        frontier = self._explorer.choose(self._grid, fld)
        while frontier is not None and float(np.linalg.norm(frontier.target_xy_m - pose.xy())) <= \
                cfg.frontier_reached_m:
            # Standing on a frontier that does not go away: nothing more can be seen from here.
            self._explorer.mark_failed(frontier.target_xy_m)
            frontier = self._explorer.choose(self._grid, fld)
        if frontier is None:
            return None
        path = fld.path_xy(frontier.target_cell)
        return self._emit(self._drive(fld, path, pose), "explore", frontier.target_xy_m, path)

    def _field(self, pose: Pose2D, include_xy_m: Optional[np.ndarray]) -> PlanningField:
        cfg = self.config
        return self._fields.build(self._grid, pose, cfg.robot_radius_m, cfg.planner, include_xy_m)

    def _drive(self, fld: PlanningField, path: np.ndarray, pose: Pose2D) -> DiscreteAction:
        action, self._commit_yaw = drive_step(self.config, fld, path, pose, self._commit_yaw)
        return action

    def _emit(self, action: DiscreteAction, mode: Mode, target_xy: Optional[np.ndarray] = None,
              path: np.ndarray = _NO_PATH, instance_id: Optional[int] = None,
              match: MatchResult = NO_MATCH) -> DiscreteAction:
        self._debug = DebugState(mode, target_xy, path, instance_id, match)
        return action


def build_cow_agent(config: CowAgentConfig, perception: PerceptionBackend, embedder: SentenceEmbedder,
                    ) -> CowAgent:
    """The CoW agent over a ground-truth perception backend (see :class:`GroundTruthLocalizer`)."""
    return CowAgent(config, GroundTruthLocalizer(perception, embedder))

