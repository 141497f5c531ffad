"""Driving along a planned path and noticing when the robot is stuck."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from goat_core.agent.config import AgentConfig
from goat_core.control.planner import PlanningField
from goat_core.control.policy import drive_along, drive_step, went_nowhere
from goat_core.geometry import wrap_angle_rad
from goat_core.types import DiscreteAction, Pose2D


class Motion:
    """Recent moves (blocked moves in a row, turns in place, positions) and the committed detour heading."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.last_action: Optional[DiscreteAction] = None
        self.collisions_in_row = 0
        self.turns_in_row = 0  # turns in place while navigating (a dithering guard)
        self.recent_xy: list[np.ndarray] = []  # positions after each recent forward move
        self.prev_xy: Optional[np.ndarray] = None  # position at the previous observation (episode frame)
        self.commit_yaw: Optional[float] = None  # heading chosen to get around a blocked move ahead
        # Poses (this subtask) at which the path's direction was refused (a detour began), and the pose of a
        # refusal that repeats an earlier one: see :meth:`drive`.
        self.detour_poses: list[Pose2D] = []
        self.refused_again: Optional[Pose2D] = None

    def reset(self) -> None:
        """A new subtask or episode: no recent moves (the previous position is kept for the trail)."""
        self.last_action = None
        self.commit_yaw = None
        self.detour_poses.clear()
        self.refused_again = None
        self.clear_stuck()

    def clear_stuck(self) -> None:
        self.collisions_in_row = 0
        self.turns_in_row = 0
        self.recent_xy.clear()

    def note_forward(self, xy: np.ndarray, collided: bool) -> None:
        """The outcome of a forward move: where it ended and whether it was blocked."""
        self.collisions_in_row = self.collisions_in_row + 1 if collided else 0
        self.recent_xy.append(xy)
        del self.recent_xy[:-self.config.no_progress_steps - 1]

    def count(self, action: DiscreteAction, navigating: bool) -> None:
        """Count turns in place while navigating; a forward move ends the count."""
        if action is DiscreteAction.MOVE_FORWARD:
            self.turns_in_row = 0
        elif navigating and action in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT):
            self.turns_in_row += 1

    def stuck(self) -> bool:
        """Too many blocked moves in a row, two circles of turns in place, or the last moves went nowhere."""
        cfg = self.config
        if self.collisions_in_row >= cfg.stuck_collisions:
            return True
        if self.turns_in_row > 2 * cfg.full_circle_turns:
            return True
        return went_nowhere(self.recent_xy, cfg.no_progress_steps, cfg.progress_m)

    def drive(self, fld: PlanningField, path: np.ndarray, pose: Pose2D, exact: bool = True) -> DiscreteAction:
        """A step along the path (goat_core.control.policy.drive_along), keeping the committed detour heading.

        A new detour means the move along the path's direction was refused (the map says the base would touch
        something, though the planner routes there: a gap narrower than the turn steps can thread, or one kept
        open by the robot's trail). When that happens again where a detour already began this subtask, at the
        same heading, the detour led back to the same refusal (six turns, a step, six turns back, a step, ...):
        ``refused_again`` keeps the pose, for the agent to mark the refused move as a bump (:meth:`take_refused`).
        Under approximate sensing (``exact`` False) the turn tolerances are
        ``AgentConfig.approximate_heading_tolerance_turns``.
        """
        if exact:
            action, commit = drive_step(self.config, fld, path, pose, self.commit_yaw)
        else:
            cfg = self.config
            loose = cfg.approximate_heading_tolerance_turns
            action, commit = drive_along(fld, path, pose, self.commit_yaw, cfg.actions.turn_rad,
                                         cfg.actions.forward_m, cfg.planner.lookahead_m,
                                         max(loose, cfg.heading_tolerance_turns), loose)
        if commit is not None and commit != self.commit_yaw:
            if any(self._same_pose(pose, p) for p in self.detour_poses):
                self.refused_again = pose
            self.detour_poses.append(pose)
        self.commit_yaw = commit
        return action

    def _same_pose(self, a: Pose2D, b: Pose2D) -> bool:
        """Within half a forward step and half a turn step of each other."""
        sizes = self.config.actions
        return (math.hypot(a.x_m - b.x_m, a.y_m - b.y_m) < 0.5 * sizes.forward_m
                and abs(wrap_angle_rad(a.yaw_rad - b.yaw_rad)) < 0.5 * sizes.turn_rad)

    def take_refused(self) -> Optional[Pose2D]:
        """The pose of a refusal that repeats an earlier one (and forget it), else None; its detour is dropped,
        so that the next step follows the path planned around the mark."""
        pose, self.refused_again = self.refused_again, None
        if pose is not None:
            self.commit_yaw = None
        return pose
