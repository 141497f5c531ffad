"""Point-goal navigation to a remembered pose: FindingDory's low-level policy.

In FindingDory the high-level policy names frames of the experience video and the low-level policy drives the
robot back to the poses of those frames (Yadav et al. 2025, arXiv:2506.15635, Sec. 4). This navigator does
that with the project's mapping and planning: an occupancy grid built from depth (it can first watch the
experience frames, so it starts with the map of the home it walked through), FMM geodesic planning on the
inflated grid with unknown space optimistic (``control.planner``), and the GOAT agent's discrete driving rule:
face the lookahead waypoint, move, detour by whole turns where the way ahead is mapped blocked. At the goal it
turns to the frame's heading and STOPs; when the goal cell itself is blocked on the map it goes to the nearest
reachable cell instead.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from goat_core.control.planner import PlannerConfig, PlanningField, build_field
from goat_core.control.policy import check_drive_settings, drive_step, tilt_action, turn_toward, went_nowhere
from goat_core.errors import ConfigError, InvalidGoalError, require_at_least, require_positive
from goat_core.geometry import wrap_angle_rad
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.types import ActionSizes, DiscreteAction, Observation, Pose2D


@dataclass(frozen=True)
class PoseNavConfig:
    """Every parameter of the pose navigator, each with its one default."""

    occupancy: OccupancyConfig = field(default_factory=OccupancyConfig)
    planner: PlannerConfig = field(default_factory=PlannerConfig)
    actions: ActionSizes = field(default_factory=ActionSizes)  # must match the robot's / simulator's
    robot_radius_m: float = 0.17  # Stretch base
    # Goal position reached within this distance. At least half a forward step, so a step toward the goal
    # from farther away always lands nearer than it started.
    arrive_radius_m: float = 0.2
    camera_tilt_rad: float = -math.radians(30.0)  # FindingDory's fixed head tilt (task config camera_tilt)
    heading_tolerance_turns: float = 0.6  # drive on while the waypoint is within this many turn steps
    collision_ahead_m: float = 0.1  # a bump is marked this far past the front of the base
    collision_half_width_m: float = 0.1
    no_progress_steps: int = 20  # moves without ``progress_m`` of net displacement count as stuck
    progress_m: float = 0.3
    max_strikes: int = 2  # stuck episodes before the navigator settles for where it is

    def __post_init__(self) -> None:
        require_positive(self, ("robot_radius_m", "arrive_radius_m", "progress_m"))
        if self.arrive_radius_m < 0.5 * self.actions.forward_m:
            raise ConfigError(f"PoseNavConfig.arrive_radius_m must be at least half a forward step "
                              f"({0.5 * self.actions.forward_m} m), got {self.arrive_radius_m!r}")
        check_drive_settings(self)
        require_at_least(self, 1, ("no_progress_steps", "max_strikes"))


class PoseGoalNavigator:
    """Drives to (x, y, yaw) goals in the episode frame, one discrete action per observation."""

    def __init__(self, config: PoseNavConfig = PoseNavConfig()) -> None:
        self.config = config
        self._grid = OccupancyGrid(config.occupancy)
        self._goal: Optional[Pose2D] = None
        self._aim_xy: Optional[np.ndarray] = None  # where it drives: the goal, or the nearest reachable cell
        self._arrived = False
        self._last_action: Optional[DiscreteAction] = None
        self._last_tilt_rad = 0.0
        self._tilt_limited = False
        self._recent_xy: list[np.ndarray] = []
        self._strikes = 0
        self._commit_yaw: Optional[float] = None

    @property
    def grid(self) -> OccupancyGrid:
        return self._grid

    # ------------------------------------------------------------------------------------------------ map
    def observe(self, obs: Observation) -> None:
        """Add one observation to the map without acting (watching the experience video)."""
        obs.validate()
        self._grid.update(obs)
        self._grid.mark_disk_explored(obs.pose.x_m, obs.pose.y_m, self.config.robot_radius_m)

    def snapshot(self) -> OccupancyGrid:
        """A copy of the map, to start several tasks from the same one."""
        return copy.deepcopy(self._grid)

    def restore(self, grid: OccupancyGrid) -> None:
        """Continue from a copy of ``grid`` (see :meth:`snapshot`)."""
        self._grid = copy.deepcopy(grid)

    def clear_map(self) -> None:
        self._grid.reset()

    # ---------------------------------------------------------------------------------------------- goals
    def start_goal(self, goal: Pose2D) -> None:
        """Drive to ``goal`` (episode frame) and STOP there facing its heading."""
        if not all(math.isfinite(v) for v in (goal.x_m, goal.y_m, goal.yaw_rad)):
            raise InvalidGoalError(f"pose goal must be finite, got {goal!r}")
        self._goal = goal
        self._aim_xy = goal.xy()
        self._arrived = False
        self._last_action = None
        self._recent_xy.clear()
        self._strikes = 0
        self._commit_yaw = None

    def act(self, obs: Observation) -> DiscreteAction:
        """Integrate ``obs`` and choose the next action."""
        if self._goal is None or self._aim_xy is None:
            raise InvalidGoalError("PoseGoalNavigator.act() called before start_goal(goal)")
        self._integrate(obs)
        action = self._decide(obs, self._goal, self._aim_xy)
        self._last_action = action
        return action

    # ------------------------------------------------------------------------------------------- internals
    def _integrate(self, obs: Observation) -> None:
        cfg = self.config
        if self._last_action is DiscreteAction.MOVE_FORWARD:
            if obs.collided:
                self._grid.mark_collision(obs.pose, cfg.robot_radius_m + cfg.collision_ahead_m,
                                          cfg.collision_half_width_m)
            self._recent_xy.append(obs.pose.xy())
            del self._recent_xy[:-cfg.no_progress_steps - 1]
        if self._last_action in (DiscreteAction.LOOK_UP, DiscreteAction.LOOK_DOWN):
            self._tilt_limited |= abs(obs.camera_tilt_rad - self._last_tilt_rad) < 1e-6
        self._last_tilt_rad = obs.camera_tilt_rad
        self.observe(obs)

    def _decide(self, obs: Observation, goal: Pose2D, aim: np.ndarray) -> DiscreteAction:
        cfg = self.config
        pose = obs.pose
        look = tilt_action(obs.camera_tilt_rad, cfg.camera_tilt_rad, cfg.actions.look_rad)
        if look is not None and not self._tilt_limited:
            return look
        if self._arrived or float(np.linalg.norm(pose.xy() - aim)) <= cfg.arrive_radius_m:
            self._arrived = True
            turn = turn_toward(wrap_angle_rad(goal.yaw_rad - pose.yaw_rad), 0.5 * cfg.actions.turn_rad)
            return DiscreteAction.STOP if turn is None else turn
        if self._stuck():
            self._strikes += 1
            self._recent_xy.clear()
            if self._strikes >= cfg.max_strikes:
                self._arrived = True  # as close as it gets: face the goal heading and stop here
                return self._decide(obs, goal, aim)
            self._grid.mark_collision(pose, cfg.robot_radius_m + cfg.collision_ahead_m, cfg.collision_half_width_m)
        fld = build_field(self._grid, pose, cfg.robot_radius_m, cfg.planner, goal.xy()[None])
        target = self._target_cell(fld, goal.xy())
        if target is None or target == fld.robot_cell:
            self._arrived = True  # nothing reachable is nearer the goal than here
            return self._decide(obs, goal, aim)
        self._aim_xy = fld.to_xy(np.array([target]))[0] if target != _cell(fld, goal.xy()) else goal.xy()
        return self._drive(fld, fld.path_xy(target), pose)

    @staticmethod
    def _target_cell(fld: PlanningField, goal_xy: np.ndarray) -> Optional[tuple[int, int]]:
        """The goal's planning cell when reachable, else the reachable cell nearest to it (None if none)."""
        cell = _cell(fld, goal_xy)
        h, w = fld.distance_m.shape
        if 0 <= cell[0] < h and 0 <= cell[1] < w and np.isfinite(fld.distance_m[cell]):
            return cell
        reachable = np.argwhere(np.isfinite(fld.distance_m))
        if reachable.shape[0] == 0:
            return None
        gap = np.linalg.norm(fld.to_xy(reachable) - goal_xy[None], axis=1)
        k = int(np.argmin(gap))
        return int(reachable[k, 0]), int(reachable[k, 1])

    def _stuck(self) -> bool:
        return went_nowhere(self._recent_xy, self.config.no_progress_steps, self.config.progress_m)

    def _drive(self, fld: PlanningField, path: np.ndarray, pose: Pose2D) -> DiscreteAction:
        """A step along the path (goat_core.control.policy.drive_along), keeping the committed detour heading."""
        action, self._commit_yaw = drive_step(self.config, fld, path, pose, self._commit_yaw)
        return action


def _cell(fld: PlanningField, xy_m: np.ndarray) -> tuple[int, int]:
    c = fld.to_cells(np.asarray(xy_m, dtype=np.float64)[None])[0]
    return int(c[0]), int(c[1])
