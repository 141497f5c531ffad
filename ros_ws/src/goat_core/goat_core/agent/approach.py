"""Going to an instance and the STOP decision there.

The goal spot is the reachable planning cell nearest to the robot among those within ``stop_radius_m`` (less a
margin) of the instance's nearest point, preferring spots with nothing tall in between on the map. There the
robot faces the instance and STOPs once it is detected (or cannot be in view from there); if it should be in view
but is not, a wall is in between: the spot is remembered as a blocked view and another cell is tried. When the
map says reachable but the robot gets stuck, the cells ahead are blocked and, the second time, the instance is
set aside for the subtask.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import cv2
import numpy as np
from scipy.spatial import cKDTree

from goat_core.agent.context import NO_PATH, AgentContext, Mode
from goat_core.agent.verification import ArrivalCheck
from goat_core.control.planner import PlanningField
from goat_core.control.policy import heading_error_rad, turn_toward
from goat_core.geometry import episode_to_pixels, wrap_angles_rad
from goat_core.mapping.instance_memory import nearest_distance_2d_m
from goat_core.matching.base import MatchResult
from goat_core.types import DiscreteAction, Instance, Observation, StopDecision

SIGHT_EDGE_PX = 2  # a target's mask this close to the image's bottom edge may hide its nearest part below it
MAX_STRIKES = 2  # stuck episodes on the way to one instance before it is set aside for the subtask
# The first guess of a goal cell's cost, as far as the FMM first marches for it (goal_cell; a miss marches the whole
# crop, so these change only how much is marched, never the goal): so much per metre of straight line, plus a pad.
GOAL_BAND_PER_M = 1.5
GOAL_BAND_PAD_M = 1.0


def stop_at(inst: Instance, match: MatchResult) -> StopDecision:
    """The record of a STOP at ``inst``, the instance the agent went to for ``match``."""
    kind = "confident match" if match.confident else "best remaining match, not confident"
    return StopDecision.at(inst, match.confident, f"at {inst.category} #{inst.instance_id} ({kind}, "
                                                  f"score {match.score:.2f})")


class Approach:
    """Goal spots of instances, the walk there and the check by sight before STOP."""

    def __init__(self, ctx: AgentContext) -> None:
        self.ctx = ctx
        self._blocked_views: dict[int, list[np.ndarray]] = {}  # per instance: xy where a wall hid it
        self._strikes: dict[int, int] = {}  # per instance: times heading for it got the robot stuck
        self._sight_steps: dict[int, int] = {}  # per instance: steps of the approach by sight (approximate sensing)
        self.check = ArrivalCheck(ctx)  # a second opinion before STOP when detections may be wrong

    def reset(self) -> None:
        self._blocked_views.clear()
        self._strikes.clear()
        self._sight_steps.clear()
        self.check.reset()

    def goto(self, inst: Instance, fld: PlanningField, obs: Observation, match: MatchResult,
             seen_bearings_rad: Sequence[float] = ()) -> Optional[DiscreteAction]:
        """STOP if close enough, else a step along the path to the instance; None if it cannot be reached.

        ``seen_bearings_rad`` (object -> camera) make spots on those sides of the instance cost more (inspections
        look at it from a side not seen yet).
        """
        ctx, cfg = self.ctx, self.ctx.config
        pose = obs.pose
        goal = self.goal_cell(inst, fld, seen_bearings_rad)
        stop_radius_m = cfg.stop_radius_m if goal is None else goal[1]
        if not ctx.moved:  # still where the subtask started: see AgentConfig.start_stop_radius_m
            stop_radius_m = max(stop_radius_m, min(cfg.start_stop_radius_m, cfg.max_stop_radius_m))
        arrived = nearest_distance_2d_m(inst, pose.x_m, pose.y_m) <= stop_radius_m and bool(
            self.in_sight_of(inst, pose.xy()[None])[0])
        if not arrived and goal is not None:
            # Within half a step of the goal spot: a step would overshoot it, and the way back overshoots again.
            spot_xy = fld.to_xy(np.array([goal[0]]))[0]
            arrived = float(np.linalg.norm(spot_xy - pose.xy())) <= 0.5 * cfg.actions.forward_m
        if arrived and not obs.sensing_exact:
            closer = self._approach_by_sight(inst, fld, obs)
            if closer is not None:
                return ctx.emit(closer, "goto", None, NO_PATH, inst.instance_id, match)
        if arrived:
            action = self._confirm_by_sight(inst, obs)
            if action is None and inst.instance_id in ctx.set_aside:
                return None  # the looks at arrival said "not here"
            if action is not None:
                mode: Mode = "stop" if action is DiscreteAction.STOP else "goto"
                if action is DiscreteAction.STOP:
                    ctx.stop = stop_at(inst, match)
                return ctx.emit(action, mode, None, NO_PATH, inst.instance_id, match)
            goal = self.goal_cell(inst, fld, seen_bearings_rad)  # this spot is now a blocked view
        if goal is None:
            return None
        target = goal[0]
        if ctx.motion.stuck():
            # The map says reachable but the robot cannot get there: block what is ahead and replan next step;
            # when that happens again, set the instance aside for this subtask.
            strikes = self._strikes.get(inst.instance_id, 0) + 1
            self._strikes[inst.instance_id] = strikes
            ctx.motion.clear_stuck()
            if strikes >= MAX_STRIKES:
                ctx.set_aside.add(inst.instance_id)
                return None
            ctx.grid.mark_collision(pose, cfg.robot_radius_m + cfg.collision_ahead_m, cfg.collision_half_width_m)
        path = fld.path_xy(target)
        action = ctx.motion.drive(fld, path, pose, obs.sensing_exact)
        return ctx.emit(action, "goto", fld.to_xy(np.array([target]))[0], path, inst.instance_id, match)

    def _approach_by_sight(self, inst: Instance, fld: PlanningField, obs: Observation) -> Optional[DiscreteAction]:
        """At the goal spot under approximate sensing: a turn or a step toward the target while the frame seen now
        puts it farther than the stop radius less ``sight_stop_margin_m``; None to go on to the STOP decision.

        The map's instance was placed at the poses believed when it was seen, and the pose believed now may be off
        too; the offset of the target from the camera in the current frame is measured, so it decides the last
        steps, as a robot servoing on its target would. Nothing to measure (the target is not in view, or the
        bottom of the image cuts it), a step the map blocks, or ``sight_approach_max_steps`` spent: None.
        """
        ctx, cfg = self.ctx, self.ctx.config
        points = ctx.memory.last_points.get(inst.instance_id)
        steps = self._sight_steps.get(inst.instance_id, 0)
        if points is None or points.shape[0] == 0 or steps >= cfg.sight_approach_max_steps:
            return None
        masks = [mask for mask, iid in ctx.memory.last_labelled if iid == inst.instance_id]
        if any(mask[-SIGHT_EDGE_PX:].any() for mask in masks):
            return None  # cut by the bottom of the image: its nearest part may be out of view
        pose = obs.pose
        rel = points[:, :2] - pose.xy()
        gaps_m = np.hypot(rel[:, 0], rel[:, 1])
        nearest = int(np.argmin(gaps_m))
        # A subtask that starts at its target keeps its wider radius (moving costs its whole SPL).
        radius_m = cfg.stop_radius_m - cfg.sight_stop_margin_m if ctx.moved else \
            min(cfg.start_stop_radius_m, cfg.max_stop_radius_m)
        if float(gaps_m[nearest]) <= radius_m:
            return None
        action = turn_toward(heading_error_rad(pose, points[nearest, :2]), cfg.turn_tolerance_rad(exact=False))
        if action is None:
            if obs.collided or not fld.forward_free(pose.yaw_rad, cfg.actions.forward_m):
                return None
            action = DiscreteAction.MOVE_FORWARD
        self._sight_steps[inst.instance_id] = steps + 1
        return action

    def _confirm_by_sight(self, inst: Instance, obs: Observation) -> Optional[DiscreteAction]:
        """Within the stop radius: STOP if the target is in view (and, with evidence on, the looks at it confirm
        it: goat_core.agent.verification) or cannot be, else turn to it.

        Returns None when the target should be in view but is not detected: the spot is remembered as a
        blocked view and the caller plans to another goal cell; or when the looks say "not here".
        """
        cfg = self.ctx.config
        if inst.instance_id in self.ctx.seen_now:
            return self.check.step(inst) if self.check.active else DiscreteAction.STOP
        pose = obs.pose
        blocked = self._blocked_views.setdefault(inst.instance_id, [])
        gaps_m = [float(np.linalg.norm(xy - pose.xy())) for xy in blocked]
        if any(gap <= cfg.blocked_view_radius_m for gap in gaps_m):
            # Already found blocked around here: keep going to another goal cell. This spot joins the blocked
            # ones unless it is next to one, so that the next goal cell is not back here again.
            if min(gaps_m) > 0.5 * cfg.blocked_view_radius_m:
                blocked.append(pose.xy())
            return None
        view_m = cfg.approximate_start_stop_view_m
        if not obs.sensing_exact and not self.ctx.moved and not self.check.active and view_m > 0.0 and any(
                math.hypot(v.pose.x_m - pose.x_m, v.pose.y_m - pose.y_m) <= view_m for v in inst.views):
            return DiscreteAction.STOP  # seen from here; turns to look cost path (approximate_start_stop_view_m)
        rel = inst.points_xyz_m[:, :2] - pose.xy()
        nearest = inst.points_xyz_m[int(np.argmin(np.einsum("ij,ij->i", rel, rel))), :2]
        turn = turn_toward(heading_error_rad(pose, nearest), cfg.turn_tolerance_rad(obs.sensing_exact))
        if turn is not None:
            return turn
        uv, depth = episode_to_pixels(inst.points_xyz_m, obs.intrinsics, pose, obs.camera_height_m,
                                      obs.camera_tilt_rad)
        k = obs.intrinsics
        inside = (depth > 0) & (uv[:, 0] >= 0) & (uv[:, 0] < k.width) & (uv[:, 1] >= 0) & (uv[:, 1] < k.height)
        if float(inside.mean()) < cfg.expected_view_fraction:
            return DiscreteAction.STOP  # out of the camera's vertical field here: distance has to do
        if self.check.active:
            look = self.check.missed(inst)  # a detector's miss, perhaps: look again before leaving the spot
            if look is not None:
                return look
        blocked.append(pose.xy())
        return None

    def goal_cell(self, inst: Instance, fld: PlanningField, seen_bearings_rad: Sequence[float] = ()
                  ) -> Optional[tuple[tuple[int, int], float]]:
        """Where to go for ``inst`` and the stop radius that goes with it, or None if it cannot be reached.

        The goal is the reachable planning cell nearest to the robot among those within the goal radius
        (stop radius less the goal margin) of the instance, or, when none is that close, among those within a
        cell of the closest reachable distance, up to ``max_stop_radius_m``. Spots where a wall hid the
        instance are excluded.
        """
        cfg = self.ctx.config
        cells = fld.to_cells(inst.points_xyz_m[:, :2])
        cells = cells[fld.contains(cells)]
        if cells.shape[0] == 0:
            return None
        # Only cells within max_stop_radius_m of the instance can be the goal: the work is done in a window
        # around it, the same answer as over the whole crop (any reachable cell outside is farther than the
        # largest radius, and row-major order, which breaks ties, is the crop's within a window).
        pad = int(math.ceil(cfg.max_stop_radius_m / fld.cell_m)) + 2
        h, w = fld.traversable.shape
        i0, j0 = (max(0, int(v) - pad) for v in cells.min(axis=0))
        i1, j1 = (int(v) + pad + 1 for v in cells.max(axis=0))
        i1, j1 = min(h, i1), min(w, j1)
        corner = np.array([i0, j0])
        reachable = fld.distances.reachable()[i0:i1, j0:j1].copy()  # the cells of finite cost, unmarched
        away = np.ones(reachable.shape, dtype=np.uint8)
        away[cells[:, 0] - i0, cells[:, 1] - j0] = 0
        dist_m = cv2.distanceTransform(away, cv2.DIST_L2, cv2.DIST_MASK_PRECISE) * fld.cell_m
        radius = int(math.ceil(cfg.blocked_view_radius_m / fld.cell_m))
        for xy in self._blocked_views.get(inst.instance_id, []):
            c = fld.to_cells(xy[None])[0] - corner
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
            visible = self.in_sight_of(inst, fld.to_xy(cells_in_reach + corner))
            if visible.any():  # else the map cannot tell: the check by sight on arrival decides
                candidates[tuple(cells_in_reach[~visible].T)] = False
        penalty = self._seen_side_penalty(inst, seen_bearings_rad, fld, corner, candidates.shape) \
            if seen_bearings_rad else None
        cost = self._goal_costs(fld, candidates, corner, penalty)
        i, j = divmod(int(np.argmin(cost)), cost.shape[1])
        return (i0 + i, j0 + j), goal_radius_m + cfg.goal_margin_m

    @staticmethod
    def _goal_costs(fld: PlanningField, candidates: np.ndarray, corner: np.ndarray,
                    penalty: Optional[np.ndarray]) -> np.ndarray:
        """The cost of each candidate goal cell of a window (its first cell ``corner``), inf elsewhere.

        The goal is the candidate of least cost, so the FMM first marches only as far as a guess of that cost
        (``GOAL_BAND_PER_M`` times the straight distance to the nearest candidate plus ``GOAL_BAND_PAD_M``): every
        candidate it did not reach costs more than the guess, so when one it reached costs no more than the guess,
        the least cost and its cell are the whole march's (a descent from it needs only cheaper cells, reached
        too). Otherwise, or with a negative penalty, the whole march decides.
        """
        window = (slice(int(corner[0]), int(corner[0]) + candidates.shape[0]),
                  slice(int(corner[1]), int(corner[1]) + candidates.shape[1]))
        extra = 0.0 if penalty is None else penalty
        if penalty is None or float(penalty.min()) >= 0.0:
            cells_xy = fld.to_xy(np.argwhere(candidates) + corner)
            nearest_m = float(np.min(np.linalg.norm(cells_xy - fld.robot_xy_m, axis=1)))
            limit_m = GOAL_BAND_PER_M * nearest_m + GOAL_BAND_PAD_M
            cost = np.where(candidates, fld.distances.within(limit_m)[window], np.inf) + extra
            if float(cost.min()) <= limit_m:
                return np.asarray(cost)
        return np.asarray(np.where(candidates, fld.distance_m[window], np.inf) + extra)

    def in_sight_of(self, inst: Instance, xy_m: np.ndarray) -> np.ndarray:
        """(N,) bool: the map shows nothing tall between each episode point and the instance's nearest point."""
        cfg = self.ctx.config
        if not cfg.goal_in_sight:
            return np.ones(xy_m.shape[0], dtype=bool)
        _, nearest = cKDTree(inst.points_xyz_m[:, :2]).query(xy_m)
        return self.ctx.grid.sight_clear(xy_m, inst.points_xyz_m[nearest, :2], cfg.sight_skip_end_m)

    def _seen_side_penalty(self, inst: Instance, seen_bearings_rad: Sequence[float], fld: PlanningField,
                           corner: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """Extra cost (metres) of the planning cells of a window (its first cell ``corner``, its ``shape``) at a
        bearing (object -> cell) the instance was already viewed from."""
        cfg = self.ctx.config
        centre = inst.points_xyz_m[:, :2].mean(axis=0)
        rows, cols = np.indices(shape[:2])
        cells = np.stack([rows.ravel(), cols.ravel()], axis=1) + corner
        xy = fld.to_xy(cells).reshape(shape[0], shape[1], 2)
        bearing = np.arctan2(xy[..., 1] - centre[1], xy[..., 0] - centre[0])
        seen = np.zeros(shape[:2], dtype=bool)
        for b in seen_bearings_rad:
            seen |= np.abs(wrap_angles_rad(bearing - b)) < cfg.inspect_side_rad
        return np.where(seen, cfg.inspect_new_side_penalty_m, 0.0)
