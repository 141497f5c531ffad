"""Driving along a planned path and noticing when the robot is stuck."""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np

from goat_core.agent.config import AgentConfig
from goat_core.control.lattice import STATS as LATTICE_STATS
from goat_core.control.lattice import LatticePlan, plan_actions, plan_blocked
from goat_core.control.planner import PlanningField
from goat_core.control.policy import cheapest_drive, drive_along, drive_step, went_nowhere
from goat_core.geometry import wrap_angle_rad
from goat_core.types import DiscreteAction, Pose2D

MAX_ESCAPES = 3  # escapes (:meth:`Motion.start_escape`) per subtask; after them the stuck guards decide alone
DEPARTURES_KEPT = 4  # positions that forward moves left from, kept for an escape
REFUSED_NEAR = 0.05  # of a forward step: a refused move that went no farther went nowhere (Motion.refused_at)
# Under approximate sensing, of a turn step: a heading error the path follower drives on with rather than undo its
# last turn in place (Motion._no_turn_back)
TURN_BACK_TOLERANCE = 0.8
# Under approximate sensing: how far along the path (metres) the path follower looks past its waypoint for the
# direction the path takes next (Motion._no_turn_against_bend)
BEND_AHEAD_M = 1.5
# Under approximate sensing with AgentConfig.approximate_lattice_drive (Motion._lattice_step): a plan's next action
# is taken while the believed pose is within these of the pose the plan expected; a path end that moved farther
# than PLAN_GOAL_MOVED_M is a new goal. The search (goat_core.control.lattice.plan_actions) ends within
# PLAN_GOAL_RADIUS_STEPS forward steps of the path's end, weights its heuristic by PLAN_EPSILON and expands at most
# PLAN_MAX_EXPANSIONS states.
PLAN_POSE_TOLERANCE_M = 0.15
PLAN_YAW_TOLERANCE_RAD = math.radians(15.0)  # stop 45: 10 deg; 15 deg, half a turn step: stop 46
PLAN_GOAL_MOVED_M = 0.3
PLAN_GOAL_RADIUS_STEPS = 1.0
PLAN_EPSILON = 1.0
PLAN_MAX_EXPANSIONS = 6000
# Stop 46: a pose off the plan's next state goes on from the state of the plan's remainder it is nearest (within
# the tolerances above, or a turn away from one: that turn is taken first) before a new search is asked for
# (Motion._rejoin); a search asked for because the path's end moved keeps the plan under way unless the new plan is
# cheaper by PLAN_KEEP_MARGIN_TURNS turn costs; the search expands first, among states whose estimated totals
# round to the same PLAN_TIE_M, the one reached with fewer turns.
PLAN_KEEP_MARGIN_TURNS = 2.0
PLAN_TIE_M = 0.01


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
        # Turns in place that reversed the previous turn since the last forward move (an oscillation guard), the
        # positions that the last forward moves left from and arrived at unblocked (episode frame; kept across
        # subtasks: a robot stuck at the end of one subtask starts the next there), the queued steps of an escape
        # and the escapes started this subtask: see :meth:`start_escape`.
        self.reversals = 0
        self._last_turn: Optional[DiscreteAction] = None
        self.departures: list[np.ndarray] = []
        self.escape: list[DiscreteAction] = []
        self.escapes = 0
        # Poses (this subtask) where a forward move ended refused, and how often a forward move from one of them
        # was turned away (:meth:`refused_at`, ``Agent._not_into_refusal``).
        self.refused_poses: list[Pose2D] = []
        self.refusals_kept = 0
        # Under approximate sensing: the believed heading before the path follower's turn in place of the step
        # just taken, and that turn (see :meth:`_no_turn_back`); kept for one counted action.
        self._turned_from: Optional[tuple[float, DiscreteAction]] = None
        self._turn_fresh = False
        self._plan: Optional[LatticePlan] = None  # approximate_lattice_drive's plan under way

    def reset(self) -> None:
        """A new subtask or episode: no recent moves (the previous position is kept for the trail)."""
        self.last_action = None
        self.commit_yaw = None
        self.detour_poses.clear()
        self.refused_again = None
        self.escape.clear()
        self.escapes = 0
        self.refused_poses.clear()
        self.refusals_kept = 0
        self._turned_from = None
        self._plan = None
        self.clear_stuck()

    def forget_departures(self) -> None:
        """A new episode: no way back is known."""
        self.departures.clear()

    def clear_stuck(self) -> None:
        self.collisions_in_row = 0
        self.turns_in_row = 0
        self.reversals = 0
        self._last_turn = None
        self.recent_xy.clear()

    def note_forward(self, xy: np.ndarray, collided: bool) -> None:
        """The outcome of a forward move: where it ended and whether it was blocked."""
        self.collisions_in_row = self.collisions_in_row + 1 if collided else 0
        if not collided and self.prev_xy is not None:
            self.departures.append(self.prev_xy)
            del self.departures[:-DEPARTURES_KEPT]
        self.recent_xy.append(xy)
        del self.recent_xy[:-self.config.no_progress_steps - 1]

    def note_refused(self, pose: Pose2D) -> None:
        """A forward move ended refused at ``pose`` (the simulator's or the bumper's collision); kept when it
        went nowhere (less than ``REFUSED_NEAR`` of a forward step from where it began): a refused move that
        still made headway (a base that slides or creeps along furniture) may make more."""
        if self.prev_xy is None or math.hypot(pose.x_m - float(self.prev_xy[0]), pose.y_m - float(
                self.prev_xy[1])) < REFUSED_NEAR * self.config.actions.forward_m:
            self.refused_poses.append(pose)

    def refused_at(self, pose: Pose2D) -> bool:
        """A forward move from ``pose`` was refused before in this subtask: within ``REFUSED_NEAR`` of a forward
        step and a quarter of a turn step of a pose where one ended refused, having gone nowhere. Nothing the
        robot does changes what stopped it, so the same move from there is refused again (ideal 1000-9 #6 in
        stop 41: 457 refusals in a row at one spot, in goto and inspect modes)."""
        sizes = self.config.actions
        return any(math.hypot(pose.x_m - p.x_m, pose.y_m - p.y_m) < REFUSED_NEAR * sizes.forward_m
                   and abs(wrap_angle_rad(pose.yaw_rad - p.yaw_rad)) < 0.25 * sizes.turn_rad
                   for p in self.refused_poses)

    def count(self, action: DiscreteAction, navigating: bool) -> None:
        """Count turns in place while navigating, and turns that reverse the previous one in any mode; a forward
        move ends both counts."""
        if self._turn_fresh:  # the path follower's turn of this step: its heading before is kept for the next
            self._turn_fresh = False
        else:
            self._turned_from = None
        if action is DiscreteAction.MOVE_FORWARD:
            self.turns_in_row = 0
            self.reversals = 0
            self._last_turn = None
        elif action in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT):
            if navigating:
                self.turns_in_row += 1
            if self._last_turn is not None and action is not self._last_turn:
                self.reversals += 1
            self._last_turn = action

    def oscillating(self) -> bool:
        """Left and right in place, a full circle's worth of reversals (``full_circle_turns``) without a forward
        move: two decisions that disagree about the heading, and nothing changes while the robot stands still
        (large-furnished 1000-3: 2800 actions of it). Looks that alternate sides (the arrival check's) take a
        few reversals at most."""
        return self.reversals >= self.config.full_circle_turns

    def start_escape(self, pose: Pose2D) -> bool:
        """Queue a move back to where the last unblocked forward moves left from (known free: the base stood
        there), turning to face it first; True when queued, False when none is left this subtask
        (``MAX_ESCAPES``) or no such place is known.

        For a robot held in place by its own map (an obstacle cell under it, marks on every side, plans that all
        fail) or by two decisions that disagree: the map, read from another spot, may read otherwise. The
        forward step is not checked against the map (the map is what holds the robot); the simulator or the
        robot's bumper refuses it if something is really there.
        """
        if self.escapes >= MAX_ESCAPES:
            return False
        here = pose.xy()
        back = [xy for xy in reversed(self.departures)
                if float(np.linalg.norm(xy - here)) >= 0.5 * self.config.actions.forward_m]
        if not back:
            return False
        self.escapes += 1
        target = back[0]
        turn_rad = self.config.actions.turn_rad
        bearing = math.atan2(float(target[1]) - pose.y_m, float(target[0]) - pose.x_m)
        turns = int(round(wrap_angle_rad(bearing - pose.yaw_rad) / turn_rad))
        side = DiscreteAction.TURN_LEFT if turns > 0 else DiscreteAction.TURN_RIGHT
        self.escape = [side] * abs(turns) + [DiscreteAction.MOVE_FORWARD]
        self.commit_yaw = None
        self.clear_stuck()
        return True

    def escape_step(self) -> Optional[DiscreteAction]:
        """The next queued step of an escape under way, or None."""
        return self.escape.pop(0) if self.escape else None

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
        ``AgentConfig.approximate_heading_tolerance_turns``, and with ``AgentConfig.approximate_cost_drive`` the
        step outside a detour is the cheapest short plan's (goat_core.control.policy.cheapest_drive), where one
        has a free move.
        """
        if exact:
            action, commit = drive_step(self.config, fld, path, pose, self.commit_yaw)
        else:
            cfg = self.config
            loose = cfg.approximate_heading_tolerance_turns
            action, commit = drive_along(fld, path, pose, self.commit_yaw, cfg.actions.turn_rad,
                                         cfg.actions.forward_m, cfg.planner.lookahead_m,
                                         max(loose, cfg.heading_tolerance_turns), loose)
            choice = (cheapest_drive(fld, path, pose, cfg.actions.turn_rad, cfg.actions.forward_m, cfg.turn_cost_m,
                                     max(loose, cfg.heading_tolerance_turns) * cfg.actions.turn_rad,
                                     cfg.planner.lookahead_m, waypoint_off_rad=cfg.actions.turn_rad)
                      if cfg.approximate_cost_drive and commit is None and self.commit_yaw is None else None)
            planned = (self._lattice_step(fld, path, pose)
                       if cfg.approximate_lattice_drive and commit is None and self.commit_yaw is None else None)
            if planned is not None:
                action = planned
            elif choice is not None:
                action = self._no_turn_back(fld, path, pose, choice)
            elif commit is None:
                action = self._no_turn_against_bend(fld, path, pose, self._no_turn_back(fld, path, pose, action))
            turned = commit is None and action in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT)
            self._turned_from = (pose.yaw_rad, action) if turned else None
            self._turn_fresh = turned
        if commit is not None and commit != self.commit_yaw:
            if any(self._same_pose(pose, p) for p in self.detour_poses):
                self.refused_again = pose
            self.detour_poses.append(pose)
        self.commit_yaw = commit
        return action

    def _lattice_step(self, fld: PlanningField, path: np.ndarray, pose: Pose2D) -> Optional[DiscreteAction]:
        """Under approximate sensing with ``AgentConfig.approximate_lattice_drive``: the next action of a plan over
        the robot's own actions to the path's end (goat_core.control.lattice), or None for main's follower to step
        (no path, the robot within the plan's goal radius of its end, or no plan found).

        The plan under way goes on while its goal is the path's end (within ``PLAN_GOAL_MOVED_M``), the believed
        pose is within ``PLAN_POSE_TOLERANCE_M`` and ``PLAN_YAW_TOLERANCE_RAD`` of the pose it expected, and the
        forward moves it has still to take are free on the map now (the next one from the pose itself); otherwise
        a new plan is searched from the pose.
        """
        if path.shape[0] < 2:
            self._plan = None
            return None
        cfg = self.config
        goal = path[-1]
        plan = self._plan
        why = "new" if plan is None else self._plan_ended(fld, goal, pose, plan)
        keep: Optional[LatticePlan] = None
        if plan is not None and why == "pose off":
            joined = self._rejoin(fld, pose, plan)
            if joined is not None:
                LATTICE_STATS.rejoins += 1
                plan.next, turn = joined
                if turn is not None:
                    LATTICE_STATS.steps += 1
                    return turn
                why = None
            else:
                planned = plan.poses[plan.next]
                place = math.hypot(pose.x_m - planned[0], pose.y_m - planned[1]) > PLAN_POSE_TOLERANCE_M
                why = "pose off (place)" if place else "pose off (heading)"
        elif (plan is not None and why == "goal moved" and self._near_planned(pose, plan.poses[plan.next])
              and not self._blocked_from(fld, pose, plan)):
            keep = plan
        if why is not None:
            LATTICE_STATS.replans[why] = LATTICE_STATS.replans.get(why, 0) + 1
            plan = plan_actions(fld, (pose.x_m, pose.y_m, pose.yaw_rad), goal, cfg.actions.turn_rad,
                                cfg.actions.forward_m, cfg.turn_cost_m,
                                PLAN_GOAL_RADIUS_STEPS * cfg.actions.forward_m, cfg.planner.margin_speed,
                                PLAN_EPSILON, PLAN_MAX_EXPANSIONS, tie_m=PLAN_TIE_M, keep=keep,
                                keep_margin_m=PLAN_KEEP_MARGIN_TURNS * cfg.turn_cost_m)
        self._plan = plan
        if plan is None:
            return None
        action = plan.actions[plan.next]
        plan.next += 1
        LATTICE_STATS.steps += 1
        return action

    def _rejoin(self, fld: PlanningField, pose: Pose2D, plan: LatticePlan
                ) -> Optional[tuple[int, Optional[DiscreteAction]]]:
        """The state of the plan's remainder (its index) that the pose is within the tolerances of, or a turn in
        place away from (the turn to take first), fewest turns then nearest, later states first on ties; None when
        there is none or the plan's forward moves from it are not free on the map."""
        sizes = self.config.actions
        best: Optional[tuple[float, int, Optional[DiscreteAction]]] = None
        for j in range(plan.next, len(plan.actions)):
            x, y, yaw = plan.poses[j]
            dist = math.hypot(pose.x_m - x, pose.y_m - y)
            if dist > PLAN_POSE_TOLERANCE_M:
                continue
            off = wrap_angle_rad(pose.yaw_rad - yaw)
            turn: Optional[DiscreteAction] = None
            if abs(off) > PLAN_YAW_TOLERANCE_RAD:
                if abs(abs(off) - sizes.turn_rad) > PLAN_YAW_TOLERANCE_RAD:
                    continue
                turn = DiscreteAction.TURN_RIGHT if off > 0.0 else DiscreteAction.TURN_LEFT
            score = (self.config.turn_cost_m if turn is not None else 0.0) + dist
            if best is None or score <= best[0]:
                best = (score, j, turn)
        if best is None:
            return None
        _, j, turn = best
        rest = dataclasses.replace(plan, next=j)
        if plan_blocked(fld, rest, sizes.forward_m) or (
                turn is None and plan.actions[j] is DiscreteAction.MOVE_FORWARD
                and not fld.forward_free(pose.yaw_rad, sizes.forward_m)):
            return None
        return j, turn

    def _blocked_from(self, fld: PlanningField, pose: Pose2D, plan: LatticePlan) -> bool:
        """Whether the plan's next move is a forward one the map refuses from the pose, or a later forward move is
        not free from the pose the plan expects it at."""
        forward_m = self.config.actions.forward_m
        return ((plan.actions[plan.next] is DiscreteAction.MOVE_FORWARD and not fld.forward_free(pose.yaw_rad,
                                                                                                  forward_m))
                or plan_blocked(fld, plan, forward_m))

    def _plan_ended(self, fld: PlanningField, goal: np.ndarray, pose: Pose2D, plan: LatticePlan) -> Optional[str]:
        """Why the plan under way is not followed on (see :meth:`_lattice_step`), or None when it is."""
        if plan.next >= len(plan.actions):
            return "done"
        if float(np.linalg.norm(plan.goal_xy_m - goal)) > PLAN_GOAL_MOVED_M:
            return "goal moved"
        if not self._near_planned(pose, plan.poses[plan.next]):
            return "pose off"
        if self._blocked_from(fld, pose, plan):
            return "blocked"
        return None

    @staticmethod
    def _near_planned(pose: Pose2D, planned: tuple[float, float, float]) -> bool:
        return (math.hypot(pose.x_m - planned[0], pose.y_m - planned[1]) <= PLAN_POSE_TOLERANCE_M
                and abs(wrap_angle_rad(pose.yaw_rad - planned[2])) <= PLAN_YAW_TOLERANCE_RAD)

    def _no_turn_back(self, fld: PlanningField, path: np.ndarray, pose: Pose2D,
                      action: DiscreteAction) -> DiscreteAction:
        """Under approximate sensing: a forward move instead of a turn in place that would undo the path
        follower's turn of the last step, where the heading it would return to points no closer to the path's
        waypoint than the heading now, or the heading now is within ``TURN_BACK_TOLERANCE`` turn steps of it, and
        the move ahead is free.

        A turn of the stretch profile is 30 deg with a few degrees of noise (stop 42's trace of 1000-15/1: 26-38
        deg), so a turn from just past the waypoint tolerance (0.6 turn steps, 18 deg) can land past it on the
        other side; the turn back then returns to the heading already found too far off, and the robot swings
        left and right in place (every such turn moves the base about 3 cm, and GOAT-Bench counts it). In that
        trace the waypoint's bearing also moved 4-5 deg between the two decisions (the turn moved the base, the
        path was planned again on the noisy map): 82 deg was too far right, 113 deg then too far left, and the
        robot drove on at 86 deg after a turn back. Exact sensing never gets here.
        """
        last = self._turned_from
        if (last is None or self.last_action is not last[1] or action is last[1]
                or action not in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT)):
            return action
        waypoint = fld.waypoint(path, self.config.planner.lookahead_m)
        bearing = math.atan2(float(waypoint[1]) - pose.y_m, float(waypoint[0]) - pose.x_m)
        now = abs(wrap_angle_rad(bearing - pose.yaw_rad))
        before = abs(wrap_angle_rad(bearing - last[0]))
        sizes = self.config.actions
        if (before >= now or now <= TURN_BACK_TOLERANCE * sizes.turn_rad) and fld.forward_free(pose.yaw_rad,
                                                                                               sizes.forward_m):
            return DiscreteAction.MOVE_FORWARD
        return action

    def _no_turn_against_bend(self, fld: PlanningField, path: np.ndarray, pose: Pose2D,
                              action: DiscreteAction) -> DiscreteAction:
        """Under approximate sensing: a forward move instead of a single corrective turn in place (the waypoint is
        off by more than the tolerance but at most one turn step) where the path, ``BEND_AHEAD_M`` along it, lies
        within the tolerance of the heading now or on the other side of it, and the move ahead is free.

        The waypoint is the farthest path point in line of sight within the planner's lookahead; beside furniture
        it is often a corner a few tenths of a metre away, and its bearing swings with every few centimetres of
        pose. A turn toward it that the path's next bend takes back costs two turns, each of which moves the base
        about 3 cm under the stretch profile (SPL counts it); the ideal agent's turns cost nothing.
        """
        if action not in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT) or path.shape[0] < 2:
            return action
        cfg = self.config
        tolerance = max(cfg.approximate_heading_tolerance_turns, cfg.heading_tolerance_turns) * cfg.actions.turn_rad
        waypoint = fld.waypoint(path, cfg.planner.lookahead_m)
        near = wrap_angle_rad(math.atan2(float(waypoint[1]) - pose.y_m, float(waypoint[0]) - pose.x_m) - pose.yaw_rad)
        if not tolerance < abs(near) <= cfg.actions.turn_rad:
            return action
        arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
        ahead = path[min(int(np.searchsorted(arc, BEND_AHEAD_M)), path.shape[0] - 1)]
        far = wrap_angle_rad(math.atan2(float(ahead[1]) - pose.y_m, float(ahead[0]) - pose.x_m) - pose.yaw_rad)
        if (abs(far) <= tolerance or far * near < 0.0) and fld.forward_free(pose.yaw_rad, cfg.actions.forward_m):
            return DiscreteAction.MOVE_FORWARD
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
