"""Looking around: the head's navigation tilt and full circles in place.

At the start of an episode (and of every subtask in the no-memory ablation) the robot turns a full circle:
turns cost no path length, so they are free for SPL, and they fill the map and memory before the first move. A
later subtask with memory looks around again where the last one ended when memory holds no confident match
(the remembered views of this spot came from elsewhere), or, for a category goal, when memory's confident match
is out of reach (``AgentConfig.rescan_when_sure``).

Under approximate sensing (``Observation.sensing_exact`` False: the pose is localised wheel odometry) a look around
takes one turn more, the whole circle, so that its last view repeats its first: the localiser closes the loop of
the spin against that view and learns the odometry's turn scale (goat_core.localisation). Without it the spin's
heading drifts by the scale error, the map is drawn rotated, and nothing later corrects it. Under exact sensing
the start view is already known and the circle stops one turn short, as before.
"""

from __future__ import annotations

import math
from typing import Optional

import cv2
import numpy as np

from goat_core.agent.context import AgentContext
from goat_core.control.policy import tilt_action
from goat_core.mapping.instance_memory import nearest_distance_2d_m
from goat_core.matching.base import MatchResult
from goat_core.types import DiscreteAction, Instance, Observation, Pose2D

RAYS = 72  # directions :meth:`Scanning.view_mapped` checks
MAPPED_RAYS = 0.95  # share of them that must show mapped floor up to an obstacle or the radius
WALL_GROW_CELLS = 2  # mapped obstacles are grown by this many cells before the rays meet them


class Scanning:
    """Turns still to make in the current look around, and whether the head can reach the navigation tilt."""

    def __init__(self, ctx: AgentContext) -> None:
        self.ctx = ctx
        self.turns_left = 0
        self.live_views = False  # the matcher compares the current frame's views for this goal: ask it each turn
        self._rescan = False  # this subtask may still look around first
        self._last_tilt_rad = 0.0
        self._tilt_limited = False  # a look action left the head where it was: stop asking for the tilt
        self._closing_turn = False  # the look around under way may add the turn that closes its circle

    def reset_episode(self) -> None:
        self.turns_left = self.full_scan_turns()
        self._closing_turn = True
        self._tilt_limited = False

    def start_subtask(self, forgot: bool, live_views: bool) -> None:
        """``forgot``: map and memory were just cleared (the no-memory ablation), so scan as at an episode start."""
        if forgot:
            self.turns_left = self.full_scan_turns()
            self._closing_turn = True
        self.live_views = live_views
        self._rescan = self.turns_left == 0

    def full_scan_turns(self) -> int:
        """Turns that show every heading once: a full circle minus the start view."""
        return self.ctx.config.full_circle_turns - 1

    def note_tilt(self, obs: Observation) -> None:
        """After each observation: a look action that left the head where it was means the tilt is out of reach."""
        if self.ctx.motion.last_action in (DiscreteAction.LOOK_UP, DiscreteAction.LOOK_DOWN):
            self._tilt_limited |= abs(obs.camera_tilt_rad - self._last_tilt_rad) < 1e-6
        self._last_tilt_rad = obs.camera_tilt_rad

    def step(self, obs: Observation) -> Optional[DiscreteAction]:
        """A step of tilting the head to the navigation tilt or of a scan under way, else None. While scanning for
        a matcher that compares the current frame (image goals), it is asked each step, so that every heading's
        view is compared."""
        cfg = self.ctx.config
        look = tilt_action(obs.camera_tilt_rad, cfg.navigation_tilt_rad, cfg.actions.look_rad)
        if look is not None and not self._tilt_limited:
            return self.ctx.emit(look, "scan")
        if self.turns_left == 0 and self._closing_turn:
            self._closing_turn = False
            if not obs.sensing_exact:
                self.turns_left = 1  # the turn back to the first view: the localiser closes the spin's loop
        if self.turns_left > 0:
            self.turns_left -= 1
            if self.live_views:
                self.ctx.match()
            return self.ctx.emit(DiscreteAction.TURN_LEFT, "scan")
        return None

    def start_rescan(self, match: MatchResult, inst: Optional[Instance], pose: Pose2D, exact: bool = True) -> bool:
        """True when this subtask starts a look around now: memory holds no confident match, or (category goals,
        ``rescan_when_sure``) its confident match is out of reach from here. The caller emits the first turn.
        Under approximate sensing (``exact`` False) not where the map already covers the view
        (``AgentConfig.approximate_rescan_mapped_m``, :meth:`view_mapped`), unless the matcher compares live views."""
        cfg = self.ctx.config
        if not self._rescan or cfg.full_circle_turns < 2:
            return False
        if not exact and not self.live_views and self.view_mapped(pose):
            self._rescan = False
            return False
        if match.confident:
            reach_m = min(cfg.start_stop_radius_m, cfg.max_stop_radius_m)
            if (not cfg.rescan_when_sure or not self.ctx.category_goal or inst is None
                    or nearest_distance_2d_m(inst, pose.x_m, pose.y_m) <= reach_m):
                return False
        self._rescan = False
        self.turns_left = cfg.full_circle_turns - 2  # and the turn the caller emits now
        self._closing_turn = True
        return True

    def view_mapped(self, pose: Pose2D) -> bool:
        """Whether the map shows the floor from ``pose`` in nearly every direction (``MAPPED_RAYS`` of rays every
        5 deg, sampled every half cell) out to ``approximate_rescan_mapped_m`` or to the first mapped obstacle
        (grown by ``WALL_GROW_CELLS``: the face of a wall is often left unknown between floor and wall cells);
        False for a radius of 0."""
        radius_m = self.ctx.config.approximate_rescan_mapped_m
        if radius_m <= 0.0:
            return False
        grid = self.ctx.grid
        angles = np.linspace(0.0, 2.0 * math.pi, RAYS, endpoint=False)
        dist = np.arange(0.0, radius_m, 0.5 * grid.resolution_m)
        xy = np.stack([pose.x_m + np.cos(angles)[:, None] * dist[None, :],
                       pose.y_m + np.sin(angles)[:, None] * dist[None, :]], axis=-1)
        cells = grid.to_cells(xy.reshape(-1, 2))
        inside = grid.in_grid(cells)
        lo = np.clip(cells[inside].min(axis=0) - WALL_GROW_CELLS, 0, None) if inside.any() else np.zeros(2, int)
        hi = cells[inside].max(axis=0) + WALL_GROW_CELLS + 1 if inside.any() else np.zeros(2, int)
        near = (grid.obstacle[lo[0]:hi[0], lo[1]:hi[1]] | grid.sight_block[lo[0]:hi[0], lo[1]:hi[1]])
        walls = cv2.dilate(near, np.ones((2 * WALL_GROW_CELLS + 1,) * 2, dtype=np.uint8))
        explored = np.zeros(cells.shape[0], dtype=bool)
        wall = np.zeros(cells.shape[0], dtype=bool)
        i, j = cells[inside, 0], cells[inside, 1]
        explored[inside] = grid.explored[i, j] > 0
        wall[inside] = walls[i - lo[0], j - lo[1]] > 0
        before_wall = np.cumsum(wall.reshape(RAYS, -1), axis=1) == 0  # samples short of each ray's first obstacle
        clean = np.all(explored.reshape(RAYS, -1) | ~before_wall, axis=1)
        return bool(np.count_nonzero(clean) >= MAPPED_RAYS * RAYS)
