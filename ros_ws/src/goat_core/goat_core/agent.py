"""The GOAT agent: perception -> occupancy grid and instance memory -> goal matching -> frontier or goal
navigation.

One call of :meth:`Agent.act` per observation. The decision, in order:

1. bring the head to the navigation tilt (looking down so that near obstacles and floor are mapped);
2. at the start of an episode (and of every subtask in the no-memory ablation) turn a full circle in place:
   turns cost no path length, so they are free for SPL, and they fill the map and memory before the first
   move;
3. if the matcher is confident about an instance: follow the geodesic path to the nearest reachable cell
   within ``stop_radius_m`` of its nearest point; there, face it and STOP once it is detected (or cannot be
   in view from there); if it should be in view but is not, a wall is in between: try another cell;
4. otherwise explore the nearest reachable frontier;
5. with nothing left to explore, go to the best non-confident match, or STOP.

Stuck handling: every blocked MOVE_FORWARD marks the cells ahead as an obstacle (the planner then routes
around them); after ``stuck_collisions`` blocked moves in a row, or no net progress over
``no_progress_steps`` moves, the current frontier is given up, or, when heading for an instance, the cells
ahead are blocked and, the second time, that instance is set aside for the subtask.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Literal, Mapping, Optional, cast

import cv2
import numpy as np
from scipy.spatial import cKDTree

from goat_core.control.frontier import FrontierConfig, FrontierExplorer
from goat_core.control.planner import PlannerConfig, PlanningField, build_field
from goat_core.control.policy import drive_along, heading_error_rad, tilt_action, turn_toward
from goat_core.control.recovery import RecoveryConfig, RecoveryLadder
from goat_core.errors import InvalidGoalError
from goat_core.geometry import episode_to_pixels, wrap_angle_rad, wrap_angles_rad
from goat_core.mapping.instance_memory import InstanceMemory, InstanceMemoryConfig, nearest_distance_2d_m
from goat_core.mapping.keyframes import KeyframeConfig, KeyframeMemory
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.matching.base import (
    NO_MATCH,
    CandidateFilter,
    GoalMatcher,
    GoalNoter,
    KeyframeObserver,
    LiveViewObserver,
    MapObserver,
    MatchResult,
    TiedCandidates,
)
from goat_core.perception.base import PerceptionBackend
from goat_core.types import (
    ActionSizes,
    DiscreteAction,
    Goal,
    GoalModality,
    Instance,
    Observation,
    Pose2D,
    StopDecision,
)

Mode = Literal["scan", "explore", "goto", "inspect", "recover", "stop"]


def _centre_colour(image: np.ndarray) -> np.ndarray:
    """Median RGB of the middle of a goal picture, where GOAT image goals frame their object."""
    h, w = image.shape[:2]
    centre = image[int(0.3 * h):int(0.7 * h), int(0.3 * w):int(0.7 * w)].reshape(-1, 3)
    return np.asarray(np.median(centre, axis=0), dtype=np.float64)


def _chromaticity(rgb: np.ndarray) -> np.ndarray:
    """Colour with brightness divided out, plus a little lightness: shading changes brightness, not hue."""
    rgb = np.asarray(rgb, dtype=np.float64)
    total = float(rgb.sum()) + 1e-6
    return np.concatenate([rgb / total, [0.3 * total / 765.0]])


@dataclass(frozen=True)
class AgentConfig:
    """Every agent parameter, each with its one default (sub-configs hold their own)."""

    occupancy: OccupancyConfig = field(default_factory=OccupancyConfig)
    memory: InstanceMemoryConfig = field(default_factory=InstanceMemoryConfig)
    keyframes: KeyframeConfig = field(default_factory=KeyframeConfig)
    planner: PlannerConfig = field(default_factory=PlannerConfig)
    frontier: FrontierConfig = field(default_factory=FrontierConfig)
    recovery: RecoveryConfig = field(default_factory=RecoveryConfig)
    actions: ActionSizes = field(default_factory=ActionSizes)
    robot_radius_m: float = 0.17  # Stretch base
    # STOP within this planar distance of the target's nearest point. GOAT-Bench's view points reach 1 m from
    # the object and a STOP within 0.25 m of one succeeds, so spots nearer than that only add path. Measured on
    # seeds 1000 / 5000 (20 episodes, memory): 0.8 m SPL 0.757 / 0.737, 0.9 m 0.769 / 0.756, 1.0 m 0.793 / 0.766
    # with SR 0.942 / 0.936 at both 0.9 and 1.0 m (see README, "Where the agent stops").
    stop_radius_m: float = 1.0
    # When no reachable cell is that close (an object at the back of a deep counter), STOP at the closest
    # reachable spot if it is within this distance (GOAT-Bench view points reach 1 m from the object).
    max_stop_radius_m: float = 1.1
    goal_margin_m: float = 0.15  # plan to cells this far inside the stop radius (cell size, step overshoot)
    # A subtask that starts near its target (the last subtask ended there) STOPs without moving when the target
    # is within this distance (at least ``stop_radius_m``, at most ``max_stop_radius_m``) and in view: a view
    # point is within reach already, and any move would cost the subtask's whole SPL (its shortest path is about
    # zero). On a walk the tighter ``stop_radius_m`` holds.
    start_stop_radius_m: float = 1.05
    navigation_tilt_rad: float = -math.radians(30.0)  # head tilt while navigating (negative looks down)
    initial_scan: bool = True  # turn a full circle at episode start
    # With memory, a later subtask whose goal memory holds no confident match starts by turning a full circle
    # where the last one ended: the remembered views of this spot came from elsewhere, turns cost no path, and
    # a close view of the goal here saves a walk to a weaker candidate or across the home.
    rescan_when_unsure: bool = True
    # ... and, for a category goal, when memory's confident match is out of reach from here: another instance of
    # the category may stand right behind the robot, unseen (memory holds what was seen, not all there is), any
    # instance meets the goal, and a turn costs no path. For description and image goals the turn is not made: it
    # found such goals (5000-15 #1, a stool 0.5 m behind the start) but the new views moved as many later subtasks
    # the other way (SPL of subtasks 2+ 0.849 -> 0.859 on seed 1000, 0.822 -> 0.814 and one give-up on seed 5000);
    # for category goals alone: 0.844 -> 0.850 and 0.823 -> 0.824 (20 episodes, memory).
    rescan_when_sure: bool = True
    use_memory: bool = True  # False: the no-memory ablation, map and instances cleared at every subtask
    collision_ahead_m: float = 0.1  # a bump is marked this far past the front of the base
    collision_half_width_m: float = 0.1
    stuck_collisions: int = 3  # blocked moves in a row before the current target is given up
    no_progress_steps: int = 20  # moves without ``progress_m`` of net displacement before giving up
    progress_m: float = 0.3
    frontier_reached_m: float = 0.3  # a frontier still there when the robot is this close is unobservable
    # Drive on while the waypoint is within this many turn steps of the heading; above one half, turning
    # never overshoots, and the slack above it saves turns when the path runs between two headings.
    heading_tolerance_turns: float = 0.6
    # Before STOP, face the target: if enough of it should be in view but it is not detected, something (a
    # wall) is in between, and spots within ``blocked_view_radius_m`` are not used as goals again.
    verify_by_sight: bool = True
    # Image goals that no remembered view matches once the home is explored: visit the most similar-looking
    # instances (goal picture centre colour vs instance colour) from a side not seen yet, up to this many.
    inspect_max_instances: int = 8
    # An image goal that names its category: look closer at the remembered instances of it before exploring
    # further (the category narrows the look-alikes to a few, and a close view settles the picture match).
    inspect_before_explore: bool = True
    # A description goal whose best match is not confident once the home is explored (the matcher offers the
    # named hiding place of a target it never saw, or a look-alike): look at that instance from a side not seen
    # yet before stopping there; what it hides or what tells it apart may come into view.
    inspect_descriptions: bool = True
    inspect_new_side_penalty_m: float = 3.0  # extra path cost of a spot on a side the instance was seen from
    inspect_side_rad: float = math.radians(60.0)  # spots within this bearing of a stored view count as seen
    inspect_max_steps: int = 80  # actions spent on one instance's inspection before it counts as inspected
    # Image goals: sides (spots at least ``inspect_side_rad`` apart in bearing) an instance is looked at from before
    # it counts as inspected. A goal picture is taken from a view point within 1 m of its object on a random side;
    # one close look matches it only when it happens to face the picture's side.
    inspect_image_sides: int = 2
    # Only stored views taken this close to the instance (its nearest point) make their side count as seen: from
    # farther, a crop of the object is too small to match a picture taken from a view point.
    inspect_close_view_m: float = 1.6
    # When the matcher's evidence cannot rank the look-alikes apart (TiedCandidates: only colour, within a small
    # margin), inspect the one cheapest to reach first, not the leader: a close look at it may settle the goal.
    inspect_cheapest_tie: bool = True
    expected_view_fraction: float = 0.2  # share of the target's points inside the image that means "in view"
    blocked_view_radius_m: float = 0.5
    # Goal spots from which the map shows a wall or tall furniture in front of the instance are not used while
    # others are in reach, and a spot across such a cell does not count as arrived: a goal's nearest points may
    # lie just across a wall, and a walk there ends with a check by sight that turns the robot away. The last
    # ``sight_skip_end_m`` of the line (the instance's own cells, the shelf around a book) is not checked.
    goal_in_sight: bool = True
    sight_skip_end_m: float = 0.1

    def __post_init__(self) -> None:
        positive = ("robot_radius_m", "stop_radius_m", "progress_m", "frontier_reached_m", "sight_skip_end_m",
                    "blocked_view_radius_m", "start_stop_radius_m", "inspect_close_view_m")
        for name in positive:
            if not getattr(self, name) > 0.0:
                raise ValueError(f"AgentConfig.{name} must be positive, got {getattr(self, name)!r}")
        if not 0.5 <= self.heading_tolerance_turns < 1.0:
            raise ValueError(
                f"AgentConfig.heading_tolerance_turns must be in [0.5, 1), got {self.heading_tolerance_turns}"
            )
        if not 0.0 < self.expected_view_fraction <= 1.0:
            raise ValueError(
                f"AgentConfig.expected_view_fraction must be in (0, 1], got {self.expected_view_fraction}"
            )
        if self.max_stop_radius_m < self.stop_radius_m:
            raise ValueError(
                f"AgentConfig.max_stop_radius_m must be >= stop_radius_m, got {self.max_stop_radius_m!r}"
            )
        if not 0.0 <= self.goal_margin_m < self.stop_radius_m:
            raise ValueError(
                f"AgentConfig.goal_margin_m must be in [0, stop_radius_m), got {self.goal_margin_m!r}"
            )
        for name in ("stuck_collisions", "no_progress_steps", "inspect_max_steps", "inspect_image_sides"):
            if getattr(self, name) < 1:
                raise ValueError(f"AgentConfig.{name} must be >= 1, got {getattr(self, name)!r}")


@dataclass(frozen=True, eq=False)
class DebugState:
    """What the agent decided on its last step, for reports and rviz."""

    mode: Mode
    target_xy_m: Optional[np.ndarray]  # (2,) episode xy it is heading to, if any
    path_xy_m: np.ndarray  # (K, 2) planned path, robot first; empty when not navigating
    target_instance_id: Optional[int]  # memory id of the instance it is heading to
    match: MatchResult = NO_MATCH


_NO_PATH = np.empty((0, 2))
_MAX_STRIKES = 2  # stuck episodes on the way to one instance before it is set aside for the subtask
_MAX_FRONTIER_RETRIES = 4  # frontiers given up in one step before exploring is declared over for it
_MAX_FALLBACK_MATCHES = 4  # unreachable matches set aside in one step before the agent stops
_MAX_SETTLE_CALLS = 10_000  # matcher calls to finish pending comparisons before giving up on a subtask


def _bearing_rad(centre_xy: np.ndarray, pose: Pose2D) -> float:
    """Bearing (radians) from a point to a pose's position: the side of an object the pose looks at it from."""
    return math.atan2(pose.y_m - float(centre_xy[1]), pose.x_m - float(centre_xy[0]))


def _stop_at(inst: Instance, match: MatchResult) -> StopDecision:
    """The record of a STOP at ``inst``, the instance the agent went to for ``match``."""
    kind = "confident match" if match.confident else "best remaining match, not confident"
    return StopDecision.at(inst, match.confident, f"at {inst.category} #{inst.instance_id} ({kind}, "
                                                  f"score {match.score:.2f})")


class Agent:
    """A lifelong GOAT agent over one perception backend and one goal matcher."""

    def __init__(self, config: AgentConfig, perception: PerceptionBackend, matcher: GoalMatcher) -> None:
        self.config = config
        self._perception = perception
        self._matcher = matcher
        self._grid = OccupancyGrid(config.occupancy)
        self._memory = InstanceMemory(config.memory)
        self._keyframes = KeyframeMemory(config.keyframes)
        if isinstance(matcher, KeyframeObserver):
            matcher.observe_keyframes(self._keyframes.keyframes)
        if isinstance(matcher, MapObserver):
            matcher.observe_map(self._grid)
        self._explorer = FrontierExplorer(config.frontier)
        self._has_goal = False
        self.goal_note: Optional[str] = None  # see start_subtask
        self._scan_left = 0
        self._last_action: Optional[DiscreteAction] = None
        self._collisions_in_row = 0
        self._turns_in_row = 0  # turns in place while navigating (a dithering guard)
        self._strikes: dict[int, int] = {}  # per instance: times heading for it got the robot stuck
        self._last_tilt_rad = 0.0
        self._tilt_limited = False  # a look action left the head where it was: stop asking for the tilt
        self._recent_xy: list[np.ndarray] = []  # positions after each recent forward move
        self._prev_xy: Optional[np.ndarray] = None  # position at the previous observation (episode frame)
        self._commit_yaw: Optional[float] = None  # heading chosen to get around a blocked move ahead
        self._set_aside: set[int] = set()  # instances that proved unreachable this subtask
        self._blocked_views: dict[int, list[np.ndarray]] = {}  # per instance: xy where a wall hid it
        self._seen_now: set[int] = set()  # instances detected in the current observation
        self._goal_rgb: Optional[np.ndarray] = None  # image goals: colour at the picture's centre
        self._inspected: set[int] = set()  # instances looked at closely for the current image goal
        # Per instance under inspection: bearings (object -> camera) of its stored views when the inspection began,
        # and the steps spent on it. The views it gains on the way must not move the goal spot (the side being
        # approached would count as seen and the robot would turn back and forth).
        self._inspect_seen: dict[int, list[float]] = {}
        self._inspect_steps: dict[int, int] = {}
        self._inspect_sides: dict[int, int] = {}  # per instance: sides looked at closely (spots reached)
        self._inspecting: Optional[int] = None  # the tied candidate chosen as cheapest, kept until inspected
        self._category_goal = False  # any instance the matcher accepts will do, so the nearest is best
        self._named_image_goal = False  # an image goal that also names its category
        self._description_goal = False
        self._settle_first = False  # the next decision first lets the matcher finish comparing memory
        self._rescan = False  # this subtask may still look around first (see AgentConfig.rescan_when_unsure)
        self._live_views = False  # the matcher compares the current frame's views for this goal
        self._debug = DebugState("stop", None, _NO_PATH, None)
        self._stop: Optional[StopDecision] = None  # why the last STOP of this subtask was called
        self._moved = False  # a forward move was made in this subtask
        self._recovery = RecoveryLadder(config.recovery, self._full_circle_turns())
        self.reset_episode()

    # ---------------------------------------------------------------------------------------------- API
    @property
    def occupancy(self) -> OccupancyGrid:
        return self._grid

    @property
    def memory(self) -> InstanceMemory:
        return self._memory

    @property
    def keyframes(self) -> KeyframeMemory:
        return self._keyframes

    def debug_state(self) -> DebugState:
        return self._debug

    @property
    def last_stop(self) -> Optional[StopDecision]:
        """Why the agent called STOP in the current subtask; None until it has."""
        return self._stop

    def reset_episode(self) -> None:
        """Forget the map and all instances; the next subtask starts with a scan."""
        self._forget()
        self._prev_xy = None
        self._has_goal = False
        self._scan_left = self._scan_turns()
        self._tilt_limited = False
        self._reset_motion_state()

    def start_subtask(self, goal: Goal) -> None:
        """Set the goal; memory is kept across subtasks unless ``use_memory`` is False."""
        if not self.config.use_memory:
            self._forget()
            self._scan_left = self._scan_turns()
        self._matcher.set_goal(goal, self._perception.labels)
        # A warning for the user's log (an unknown category), read by the runner and the controller node.
        self.goal_note = self._matcher.goal_note if isinstance(self._matcher, GoalNoter) else None
        self._category_goal = goal.modality is GoalModality.CATEGORY
        self._named_image_goal = goal.modality is GoalModality.IMAGE and goal.category is not None
        self._description_goal = goal.modality is GoalModality.DESCRIPTION
        self._live_views = isinstance(self._matcher, LiveViewObserver) and self._matcher.wants_live_views()
        self._goal_rgb = _centre_colour(goal.image) if goal.image is not None else None
        self._inspected = set()
        self._inspect_seen.clear()
        self._inspect_steps.clear()
        self._inspect_sides.clear()
        self._inspecting = None
        self._settle_first = True
        self._rescan = self.config.rescan_when_unsure and self._scan_left == 0
        self._recovery.reset()
        self._explorer.current = None
        self._set_aside.clear()
        self._blocked_views.clear()
        self._strikes.clear()
        self._reset_motion_state()
        self._stop = None
        self._moved = False
        self._has_goal = True

    def _forget(self) -> None:
        """Drop the map and every instance; matcher caches keyed on instance ids must go with them."""
        self._grid.reset()
        self._memory.clear()
        self._keyframes.clear()
        self._explorer.reset()
        self._matcher.reset()

    def act(self, obs: Observation) -> DiscreteAction:
        """Integrate one observation and choose the next action."""
        if not self._has_goal:
            raise InvalidGoalError("Agent.act() called before start_subtask(goal): no goal to act on")
        obs.validate()
        self._integrate(obs)
        action = self._decide(obs)
        self._last_action = action
        return action

    # ------------------------------------------------------------------------------------------- sensing
    def _full_circle_turns(self) -> int:
        return int(math.ceil(2.0 * math.pi / self.config.actions.turn_rad - 1e-9))

    def _scan_turns(self) -> int:
        """Turns that show every heading once: a full circle minus the start view."""
        return self._full_circle_turns() - 1 if self.config.initial_scan else 0

    def _reset_motion_state(self) -> None:
        self._last_action = None
        self._collisions_in_row = 0
        self._turns_in_row = 0
        self._recent_xy.clear()
        self._commit_yaw = None

    def _clear_stuck(self) -> None:
        self._collisions_in_row = 0
        self._turns_in_row = 0
        self._recent_xy.clear()

    def _integrate(self, obs: Observation) -> None:
        cfg = self.config
        pose = obs.pose
        if self._last_action is DiscreteAction.MOVE_FORWARD:
            self._moved = True
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
        detections = self._perception.detect(obs)
        self._seen_now = set(self._memory.update(detections, obs, self._perception.persistent_keys))
        self._keyframes.offer(obs, self._memory.last_labelled)
        if self._live_views:
            admissible = self._admissible(self._memory.instances)
            cast(LiveViewObserver, self._matcher).observe_live_views(self._memory.views_now(admissible))

    def _stuck(self) -> bool:
        """Too many blocked moves in a row, two circles of turns in place, or the last moves went nowhere."""
        cfg = self.config
        if self._collisions_in_row >= cfg.stuck_collisions:
            return True
        if self._turns_in_row > 2 * (self._full_circle_turns()):
            return True
        if len(self._recent_xy) <= cfg.no_progress_steps:
            return False
        start = self._recent_xy[0]
        spread = max(float(np.linalg.norm(p - start)) for p in self._recent_xy)
        return spread < cfg.progress_m

    # ------------------------------------------------------------------------------------------ deciding
    def _decide(self, obs: Observation) -> DiscreteAction:
        cfg = self.config
        scan = self._scan_step(obs)
        if scan is not None:
            return scan
        step = self._recovery_step(obs)
        if step is not None:
            return step
        if self._settle_first:
            # The first decision of a subtask waits for the matcher to compare everything already remembered with
            # the new goal (image goals spread that over steps): moving before it has would walk away from a goal
            # that memory already holds. It costs compute once per subtask, no actions.
            self._settle_first = False
            match, inst = self._settle_match()
            if self._start_rescan(match, inst, obs.pose):
                return self._emit(DiscreteAction.TURN_LEFT, "scan")
        else:
            match, inst = self._match()
        if self._category_goal and match.confident:
            match, inst = self._prefer_within_reach(obs.pose, match, inst)
        include = inst.points_xyz_m[:, :2] if inst is not None else None
        fld = self._field(obs.pose, include)
        if self._category_goal and match.confident and inst is not None:
            match, inst, fld = self._nearest_of_category(obs, match, inst, fld)
        if inst is not None and match.confident:
            action = self._goto(inst, fld, obs, match)
            if action is not None:
                return action
        if self._named_image_goal and cfg.inspect_before_explore and not match.confident and not match.pending:
            action = self._inspect(obs, match)
            if action is not None:
                return action
        action = self._explore(fld, obs, match)
        if action is not None:
            return action
        return self._when_explored(obs, match, inst)

    def _scan_step(self, obs: Observation) -> Optional[DiscreteAction]:
        """A step of tilting the head to the navigation tilt or of a scan under way, else None. While scanning for
        a matcher that compares the current frame (image goals), it is asked each step, so that every heading's
        view is compared."""
        cfg = self.config
        look = tilt_action(obs.camera_tilt_rad, cfg.navigation_tilt_rad, cfg.actions.look_rad)
        if look is not None and not self._tilt_limited:
            return self._emit(look, "scan")
        if self._scan_left > 0:
            self._scan_left -= 1
            if self._live_views:
                self._match()
            return self._emit(DiscreteAction.TURN_LEFT, "scan")
        return None

    def _start_rescan(self, match: MatchResult, inst: Optional[Instance], pose: Pose2D) -> bool:
        """True when this subtask starts a look around (AgentConfig.rescan_when_unsure): memory holds no confident
        match, or (AgentConfig.rescan_when_sure, category goals) its confident match is out of reach from here. The
        views the turn brings are compared before the next decision."""
        if not self._rescan or self._full_circle_turns() < 2:
            return False
        if match.confident:
            reach_m = min(self.config.start_stop_radius_m, self.config.max_stop_radius_m)
            if (not self.config.rescan_when_sure or not self._category_goal or inst is None
                    or nearest_distance_2d_m(inst, pose.x_m, pose.y_m) <= reach_m):
                return False
        self._rescan = False
        self._scan_left = self._full_circle_turns() - 2  # and the turn the caller emits now
        self._settle_first = True
        return True

    def _when_explored(self, obs: Observation, match: MatchResult, inst: Optional[Instance]) -> DiscreteAction:
        """Nothing left to explore: let the matcher finish comparing what memory holds, look closer at the
        likeliest instances of an image or description goal, go to a confident match that can be reached; else
        try the recoveries (goat_core.control.recovery) and, once they are exhausted, go to the best remaining
        match, confident or not, setting aside unreachable ones; STOP (giving up) when none is left."""
        if match.pending:
            match, inst = self._settle_match()
        inspects = self._goal_rgb is not None or (self._description_goal and self.config.inspect_descriptions)
        if not match.confident and inspects:
            action = self._inspect(obs, match)
            if action is not None:
                return action
        action, match = self._goto_best(obs, match, inst, confident_only=True)
        if action is not None:
            return action
        action = self._recover(obs, before_fallback=inst is not None)
        if action is not None:
            return action
        match, inst = self._match()
        action, match = self._goto_best(obs, match, inst)
        if action is not None:
            return action
        action = self._recover(obs)  # every candidate proved unreachable: the rest of the recoveries
        if action is not None:
            return action
        self._stop = StopDecision(gave_up=True, reason="nothing left to explore and no candidate it can reach; "
                                                       + self._recovery.describe())
        return self._emit(DiscreteAction.STOP, "stop", match=match)

    def _recover(self, obs: Observation, before_fallback: bool = False) -> Optional[DiscreteAction]:
        """Start the next recoveries until one gives an action (a queued turn, or a decision the changed map or
        planner now allows); None when all were tried (``before_fallback``: all that come before settling for
        an unconfident match)."""
        while True:
            name = self._recovery.start_next(before_fallback)
            if name is None:
                return None
            if name == "clear_collisions":
                self._grid.clear_collisions()
            elif name == "explore_again":
                self._explorer.reset()
            self._set_aside.clear()
            self._clear_stuck()
            step = self._recovery_step(obs)
            if step is not None:
                return step
            action = self._decide_again(obs)
            if action is not None:
                return action

    def _recovery_step(self, obs: Observation) -> Optional[DiscreteAction]:
        """The next queued step of a recovery under way; a forward step the map says is blocked ends it."""
        step = self._recovery.next_step()
        if step is DiscreteAction.MOVE_FORWARD:
            fld = self._field(obs.pose, None)
            if not fld.forward_free(obs.pose.yaw_rad, self.config.actions.forward_m):
                self._recovery.abort()
                return None
        return None if step is None else self._emit(step, "recover")

    def _decide_again(self, obs: Observation) -> Optional[DiscreteAction]:
        """After an instant recovery: a confident match or a frontier that is reachable now, else None."""
        match, inst = self._match()
        include = inst.points_xyz_m[:, :2] if inst is not None else None
        fld = self._field(obs.pose, include)
        if inst is not None and match.confident:
            action = self._goto(inst, fld, obs, match)
            if action is not None:
                return action
        return self._explore(fld, obs, match)

    def _field(self, pose: Pose2D, include_xy_m: Optional[np.ndarray]) -> PlanningField:
        """The step's planning field; after the relax_inflation recovery, on the map grid, radius less a slack."""
        cfg = self.config
        if not self._recovery.relaxed:
            return build_field(self._grid, pose, cfg.robot_radius_m, cfg.planner, include_xy_m)
        relaxed = dataclasses.replace(cfg.planner, inflation_margin_m=0.0, downsample=1)
        return build_field(self._grid, pose, cfg.robot_radius_m - cfg.recovery.relaxed_radius_slack_m, relaxed,
                           include_xy_m)

    def _match(self) -> tuple[MatchResult, Optional[Instance]]:
        """The matcher's answer over the instances not set aside this subtask, and that instance."""
        instances = self._memory.instances
        if self._set_aside:
            instances = {k: v for k, v in instances.items() if k not in self._set_aside}
        match = self._matcher.match(instances)
        inst = instances.get(match.instance_id) if match.instance_id is not None else None
        return match, inst

    def _inspect(self, obs: Observation, match: MatchResult) -> Optional[DiscreteAction]:
        """A step towards a not yet inspected look-alike of the goal picture, from a side not seen yet.

        Reaching it (the instance in view from within the stop radius) adds a new view that the matcher scores
        on the next step; the instance then counts as inspected once it was seen from ``inspect_image_sides``
        sides (image goals; one side otherwise) or when another side could change nothing (see
        ``_another_side_helps``). None when nothing is left to inspect.
        """
        cfg = self.config
        sides = cfg.inspect_image_sides if self._goal_rgb is not None else 1
        for _ in range(cfg.inspect_max_instances):
            inst = self._next_to_inspect(match, obs.pose)
            if inst is None:
                return None
            iid = inst.instance_id
            centre = inst.points_xyz_m[:, :2].mean(axis=0)
            if iid not in self._inspect_seen:
                self._inspect_seen[iid] = [
                    _bearing_rad(centre, v.pose) for v in inst.views
                    if nearest_distance_2d_m(inst, v.pose.x_m, v.pose.y_m) <= cfg.inspect_close_view_m]
            self._inspect_steps[iid] = self._inspect_steps.get(iid, 0) + 1
            fld = self._field(obs.pose, inst.points_xyz_m[:, :2])
            action = None
            if self._inspect_steps[iid] <= cfg.inspect_max_steps:
                action = self._inspect_step(inst, centre, fld, obs, match)
            if action is DiscreteAction.STOP:  # a side looked at: the next one, if any is left within reach
                self._inspect_sides[iid] = self._inspect_sides.get(iid, 0) + 1
                self._inspect_seen[iid].append(_bearing_rad(centre, obs.pose))
                action = None
                if self._inspect_sides[iid] < sides and self._another_side_helps(iid, fld):
                    action = self._inspect_step(inst, centre, fld, obs, match)
            if action is None or action is DiscreteAction.STOP:
                self._inspected.add(iid)
                continue
            self._debug = DebugState("inspect", self._debug.target_xy_m, self._debug.path_xy_m,
                                     inst.instance_id, match)
            return action
        return None

    def _another_side_helps(self, instance_id: int, fld: PlanningField) -> bool:
        """Whether a further look at an unsure candidate can change what the agent does: not when it is the only
        candidate left and nothing is left to explore, for then the agent goes to it whatever the look shows."""
        rivals = [k for k in self._admissible(self._memory.instances)
                  if k != instance_id and k not in self._set_aside and k not in self._inspected]
        return bool(rivals) or bool(self._explorer.candidates(self._grid, fld))

    def _inspect_step(self, inst: Instance, centre_xy: np.ndarray, fld: PlanningField, obs: Observation,
                      match: MatchResult) -> Optional[DiscreteAction]:
        """A step of looking at ``inst`` from a side not seen closely yet: STOP once the robot is there and faces
        it, or when no such side is within reach (the spot chosen is on a seen side and the robot is at it)."""
        if not self._inspect_sides.get(inst.instance_id):
            return self._goto(inst, fld, obs, match, new_side=True)
        pose = obs.pose
        bearing = _bearing_rad(centre_xy, pose)
        new_side = all(abs(wrap_angle_rad(bearing - b)) >= self.config.inspect_side_rad
                       for b in self._inspect_seen[inst.instance_id])
        goal = self._goal_cell(inst, fld, new_side=True)
        if goal is None:
            return None
        spot_xy = fld.to_xy(np.array([goal[0]]))[0]
        at_spot = float(np.linalg.norm(spot_xy - pose.xy())) <= 0.5 * self.config.actions.forward_m
        if new_side or at_spot:
            return self._goto(inst, fld, obs, match, new_side=True)
        path = fld.path_xy(goal[0])
        return self._emit(self._drive(fld, path, pose), "goto", spot_xy, path, inst.instance_id, match)

    def _next_to_inspect(self, match: MatchResult, pose: Pose2D) -> Optional[Instance]:
        """The matcher's current best, or the cheapest to reach of those it cannot tell from the best (see
        ``inspect_cheapest_tie``), then (image goals) the instances whose colour is closest to the goal picture's
        centre."""
        if len(self._inspected) >= self.config.inspect_max_instances:
            return None
        pool = {k: v for k, v in self._admissible(self._memory.instances).items()
                if k not in self._inspected and k not in self._set_aside}
        if self._inspecting in pool:
            return pool[self._inspecting]
        if self.config.inspect_cheapest_tie and isinstance(self._matcher, TiedCandidates):
            tied = {k: pool[k] for k in self._matcher.tied_with_best(self._memory.instances) if k in pool}
            cheapest = self._cheapest_to_reach(pose, tied) if len(tied) >= 2 else None
            if cheapest is not None:
                self._inspecting = cheapest
                return pool[cheapest]
        if match.instance_id in pool:
            return pool[match.instance_id]
        if self._goal_rgb is None:
            return None
        coloured = [(float(np.linalg.norm(_chromaticity(v.mean_rgb) - _chromaticity(self._goal_rgb))), k)
                    for k, v in pool.items() if v.mean_rgb is not None]
        if not coloured:
            return None
        return pool[min(coloured)[1]]

    def _admissible(self, instances: Mapping[int, Instance]) -> Mapping[int, Instance]:
        """The instances the matcher admits as the current goal at all (all of them, unless it filters)."""
        if isinstance(self._matcher, CandidateFilter):
            return self._matcher.admissible(instances)
        return instances

    def _goto_best(self, obs: Observation, match: MatchResult, inst: Optional[Instance],
                   confident_only: bool = False) -> tuple[Optional[DiscreteAction], MatchResult]:
        """A step to the best match that can be reached (only confident ones, if asked), setting aside those
        that cannot."""
        for _ in range(_MAX_FALLBACK_MATCHES):
            if inst is None or (confident_only and not match.confident):
                break
            fld = self._field(obs.pose, inst.points_xyz_m[:, :2])
            action = self._goto(inst, fld, obs, match)
            if action is not None:
                return action, match
            self._set_aside.add(inst.instance_id)
            match, inst = self._match()
        return None, match

    def _settle_match(self) -> tuple[MatchResult, Optional[Instance]]:
        """Ask the matcher until it has compared every remembered view (bounded: each call does some work)."""
        match, inst = self._match()
        for _ in range(_MAX_SETTLE_CALLS):
            if not match.pending:
                break
            match, inst = self._match()
        return match, inst

    def _nearest_of_category(self, obs: Observation, match: MatchResult, inst: Instance, fld: PlanningField
                             ) -> tuple[MatchResult, Instance, PlanningField]:
        """For a category goal, the remembered instance of the matched category that is cheapest to reach.

        Every instance of the category meets the goal, so walking to the matcher's favourite (the one seen most)
        when another is nearer only lengthens the path (and lowers SPL).
        """
        same = {k: v for k, v in self._memory.instances.items()
                if v.category == inst.category and k not in self._set_aside}
        if len(same) < 2:
            return match, inst, fld
        best = self._cheapest_to_reach(obs.pose, same)
        if best is None or best == inst.instance_id:
            return match, inst, fld
        nearest = same[best]
        return MatchResult(best, match.score, True), nearest, self._field(obs.pose, nearest.points_xyz_m[:, :2])

    def _cheapest_to_reach(self, pose: Pose2D, instances: Mapping[int, Instance]) -> Optional[int]:
        """The instance whose goal spot is the shortest path away (lowest id among equals); None if none is
        reachable or none is given."""
        if not instances:
            return None
        points = np.concatenate([v.points_xyz_m[:, :2] for v in instances.values()])
        wide = self._field(pose, points)
        costs = []
        for k, v in instances.items():
            goal = self._goal_cell(v, wide)
            if goal is not None:
                costs.append((float(wide.distance_m[goal[0]]), k))
        return min(costs)[1] if costs else None

    def _prefer_within_reach(self, pose: Pose2D, match: MatchResult, inst: Optional[Instance]
                             ) -> tuple[MatchResult, Optional[Instance]]:
        """For a category goal, an instance within the stop radius that the matcher also accepts beats its
        favourite farther away: every instance of the category meets the goal, and this one costs no path."""
        r = self.config.stop_radius_m
        xy = pose.xy()
        near = {k: v for k, v in self._memory.instances.items()
                if k not in self._set_aside and k != match.instance_id
                and np.all(v.bbox_min_m[:2] - r <= xy) and np.all(xy <= v.bbox_max_m[:2] + r)
                and nearest_distance_2d_m(v, pose.x_m, pose.y_m) <= r}
        if not near:
            return match, inst
        local = self._matcher.match(near)
        if local.confident and local.instance_id in near:
            return local, near[local.instance_id]
        return match, inst

    def _emit(self, action: DiscreteAction, mode: Mode, target_xy: Optional[np.ndarray] = None,
              path: np.ndarray = _NO_PATH, instance_id: Optional[int] = None,
              match: MatchResult = NO_MATCH) -> DiscreteAction:
        self._debug = DebugState(mode, target_xy, path, instance_id, match)
        if action is DiscreteAction.MOVE_FORWARD:
            self._turns_in_row = 0
        elif mode in ("explore", "goto") and action in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT):
            self._turns_in_row += 1
        return action

    def _goto(self, inst: Instance, fld: PlanningField, obs: Observation, match: MatchResult,
              new_side: bool = False) -> Optional[DiscreteAction]:
        """STOP if close enough, else a step along the path to the instance; None if it cannot be reached.

        ``new_side`` prefers spots that see the instance from a side none of its stored views shows.
        """
        cfg = self.config
        pose = obs.pose
        goal = self._goal_cell(inst, fld, new_side)
        stop_radius_m = cfg.stop_radius_m if goal is None else goal[1]
        if not self._moved:  # still where the subtask started: see AgentConfig.start_stop_radius_m
            stop_radius_m = max(stop_radius_m, min(cfg.start_stop_radius_m, cfg.max_stop_radius_m))
        arrived = nearest_distance_2d_m(inst, pose.x_m, pose.y_m) <= stop_radius_m and bool(
            self._in_sight_of(inst, pose.xy()[None])[0])
        if not arrived and goal is not None:
            # Within half a step of the goal spot: a step would overshoot it, and the way back overshoots again.
            spot_xy = fld.to_xy(np.array([goal[0]]))[0]
            arrived = float(np.linalg.norm(spot_xy - pose.xy())) <= 0.5 * cfg.actions.forward_m
        if arrived:
            action = self._confirm_by_sight(inst, obs)
            if action is not None:
                mode: Mode = "stop" if action is DiscreteAction.STOP else "goto"
                if action is DiscreteAction.STOP:
                    self._stop = _stop_at(inst, match)
                return self._emit(action, mode, None, _NO_PATH, inst.instance_id, match)
            goal = self._goal_cell(inst, fld, new_side)  # this spot is now a blocked view
        if goal is None:
            return None
        target = goal[0]
        if self._stuck():
            # The map says reachable but the robot cannot get there: block what is ahead and replan next step;
            # when that happens again, set the instance aside for this subtask.
            strikes = self._strikes.get(inst.instance_id, 0) + 1
            self._strikes[inst.instance_id] = strikes
            self._clear_stuck()
            if strikes >= _MAX_STRIKES:
                self._set_aside.add(inst.instance_id)
                return None
            self._grid.mark_collision(pose, cfg.robot_radius_m + cfg.collision_ahead_m,
                                      cfg.collision_half_width_m)
        path = fld.path_xy(target)
        action = self._drive(fld, path, pose)
        return self._emit(action, "goto", fld.to_xy(np.array([target]))[0], path, inst.instance_id, match)

    def _confirm_by_sight(self, inst: Instance, obs: Observation) -> Optional[DiscreteAction]:
        """Within the stop radius: STOP if the target is in view or cannot be, else turn to it.

        Returns None when the target should be in view but is not detected: the spot is remembered as a
        blocked view and the caller plans to another goal cell.
        """
        cfg = self.config
        if not cfg.verify_by_sight or inst.instance_id in self._seen_now:
            return DiscreteAction.STOP
        pose = obs.pose
        blocked = self._blocked_views.setdefault(inst.instance_id, [])
        gaps_m = [float(np.linalg.norm(xy - pose.xy())) for xy in blocked]
        if any(gap <= cfg.blocked_view_radius_m for gap in gaps_m):
            # Already found blocked around here: keep going to another goal cell. This spot joins the blocked
            # ones unless it is next to one, so that the next goal cell is not back here again.
            if min(gaps_m) > 0.5 * cfg.blocked_view_radius_m:
                blocked.append(pose.xy())
            return None
        rel = inst.points_xyz_m[:, :2] - pose.xy()
        nearest = inst.points_xyz_m[int(np.argmin(np.einsum("ij,ij->i", rel, rel))), :2]
        turn = turn_toward(heading_error_rad(pose, nearest), 0.5 * cfg.actions.turn_rad)
        if turn is not None:
            return turn
        uv, depth = episode_to_pixels(inst.points_xyz_m, obs.intrinsics, pose, obs.camera_height_m,
                                      obs.camera_tilt_rad)
        k = obs.intrinsics
        inside = (depth > 0) & (uv[:, 0] >= 0) & (uv[:, 0] < k.width) & (uv[:, 1] >= 0) & (uv[:, 1] < k.height)
        if float(inside.mean()) < cfg.expected_view_fraction:
            return DiscreteAction.STOP  # out of the camera's vertical field here: distance has to do
        blocked.append(pose.xy())
        return None

    def _goal_cell(self, inst: Instance, fld: PlanningField, new_side: bool = False
                   ) -> Optional[tuple[tuple[int, int], float]]:
        """Where to go for ``inst`` and the stop radius that goes with it, or None if it cannot be reached.

        The goal is the reachable planning cell nearest to the robot among those within the goal radius
        (stop radius less the goal margin) of the instance, or, when none is that close, among those within a
        cell of the closest reachable distance, up to ``max_stop_radius_m``. Spots where a wall hid the
        instance are excluded.
        """
        cfg = self.config
        cells = fld.to_cells(inst.points_xyz_m[:, :2])
        cells = cells[fld.contains(cells)]
        if cells.shape[0] == 0:
            return None
        away = np.ones(fld.traversable.shape, dtype=np.uint8)
        away[cells[:, 0], cells[:, 1]] = 0
        dist_m = cv2.distanceTransform(away, cv2.DIST_L2, cv2.DIST_MASK_PRECISE) * fld.cell_m
        reachable = np.isfinite(fld.distance_m)
        radius = int(math.ceil(cfg.blocked_view_radius_m / fld.cell_m))
        for xy in self._blocked_views.get(inst.instance_id, []):
            c = fld.to_cells(xy[None])[0]
            veto = np.zeros(reachable.shape, dtype=np.uint8)
            cv2.circle(veto, (int(c[1]), int(c[0])), radius, 1, thickness=-1)
            reachable &= veto == 0
        if not reachable.any():
            return None
        goal_radius_m = max(cfg.stop_radius_m - cfg.goal_margin_m, float(dist_m[reachable].min()) + fld.cell_m)
        if goal_radius_m + cfg.goal_margin_m > cfg.max_stop_radius_m + 1e-9:
            return None
        candidates = reachable & (dist_m <= goal_radius_m)
        if cfg.goal_in_sight and candidates.any():
            cells_in_reach = np.argwhere(candidates)
            visible = self._in_sight_of(inst, fld.to_xy(cells_in_reach))
            if visible.any():  # else the map cannot tell: the check by sight on arrival decides
                candidates[tuple(cells_in_reach[~visible].T)] = False
        cost = np.where(candidates, fld.distance_m, np.inf)
        seen_bearings = self._inspect_seen.get(inst.instance_id, [])
        if new_side and seen_bearings:
            cost = cost + self._seen_side_penalty(inst, seen_bearings, fld, cost.shape)
        i, j = divmod(int(np.argmin(cost)), cost.shape[1])
        return (i, j), goal_radius_m + cfg.goal_margin_m

    def _in_sight_of(self, inst: Instance, xy_m: np.ndarray) -> np.ndarray:
        """(N,) bool: the map shows nothing tall between each episode point and the instance's nearest point."""
        if not self.config.goal_in_sight:
            return np.ones(xy_m.shape[0], dtype=bool)
        _, nearest = cKDTree(inst.points_xyz_m[:, :2]).query(xy_m)
        return self._grid.sight_clear(xy_m, inst.points_xyz_m[nearest, :2], self.config.sight_skip_end_m)

    def _seen_side_penalty(self, inst: Instance, seen_bearings_rad: list[float], fld: PlanningField,
                           shape: tuple[int, ...]) -> np.ndarray:
        """Extra cost (metres) of planning cells at a bearing (object -> cell) the instance was already viewed from."""
        cfg = self.config
        centre = inst.points_xyz_m[:, :2].mean(axis=0)
        rows, cols = np.indices(shape[:2])
        xy = fld.to_xy(np.stack([rows.ravel(), cols.ravel()], axis=1)).reshape(shape[0], shape[1], 2)
        bearing = np.arctan2(xy[..., 1] - centre[1], xy[..., 0] - centre[0])
        seen = np.zeros(shape[:2], dtype=bool)
        for b in seen_bearings_rad:
            seen |= np.abs(wrap_angles_rad(bearing - b)) < cfg.inspect_side_rad
        return np.where(seen, cfg.inspect_new_side_penalty_m, 0.0)

    def _explore(self, fld: PlanningField, obs: Observation, match: MatchResult) -> Optional[DiscreteAction]:
        """A step toward the chosen frontier; None when no reachable frontier is left."""
        cfg = self.config
        pose = obs.pose
        if self._stuck():
            if self._explorer.current is not None:
                self._explorer.mark_failed(self._explorer.current.target_xy_m)
            self._clear_stuck()
        frontier = self._explorer.choose(self._grid, fld)
        for _ in range(_MAX_FRONTIER_RETRIES):
            if frontier is None:
                break
            if float(np.linalg.norm(frontier.target_xy_m - pose.xy())) > cfg.frontier_reached_m:
                break
            # Standing on a frontier that does not go away: nothing more can be seen from here.
            self._explorer.mark_failed(frontier.target_xy_m)
            frontier = self._explorer.choose(self._grid, fld)
        if frontier is None:
            return None
        path = fld.path_xy(frontier.target_cell)
        action = self._drive(fld, path, pose)
        return self._emit(action, "explore", frontier.target_xy_m, path, None, match)

    def _drive(self, fld: PlanningField, path: np.ndarray, pose: Pose2D) -> DiscreteAction:
        """A step along the path (goat_core.control.policy.drive_along), keeping the committed detour heading."""
        cfg = self.config
        action, self._commit_yaw = drive_along(fld, path, pose, self._commit_yaw, cfg.actions.turn_rad,
                                               cfg.actions.forward_m, cfg.planner.lookahead_m,
                                               cfg.heading_tolerance_turns)
        return action
