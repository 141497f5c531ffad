"""Driving along a planned path and noticing when the robot is stuck."""

from __future__ import annotations

from typing import Optional

import numpy as np

from goat_core.agent.config import AgentConfig
from goat_core.control.planner import PlanningField
from goat_core.control.policy import drive_step, went_nowhere
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

    def reset(self) -> None:
        """A new subtask or episode: no recent moves (the previous position is kept for the trail)."""
        self.last_action = None
        self.commit_yaw = None
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

    def drive(self, fld: PlanningField, path: np.ndarray, pose: Pose2D) -> DiscreteAction:
        """A step along the path (goat_core.control.policy.drive_along), keeping the committed detour heading."""
        action, self.commit_yaw = drive_step(self.config, fld, path, pose, self.commit_yaw)
        return action
