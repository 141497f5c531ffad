"""Closer looks at unsure candidates of image and description goals, from a side not seen yet.

An image goal that names its category looks at the remembered instances of it before exploring further; image
and description goals whose best match is not confident once the home is explored look at the likeliest
candidates first: the matcher's best, or (when its evidence cannot rank look-alikes apart, ``TiedCandidates``)
the cheapest to reach of those tied with it, then the instances whose colour is closest to the goal picture's
centre. Reaching a spot adds a view that the matcher scores on the next step.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from goat_core.agent.approach import Approach
from goat_core.agent.context import AgentContext, DebugState
from goat_core.agent.targets import Targets
from goat_core.control.planner import PlanningField
from goat_core.geometry import wrap_angle_rad
from goat_core.mapping.instance_memory import nearest_distance_2d_m
from goat_core.matching.base import MatchResult, TiedCandidates
from goat_core.types import DiscreteAction, Goal, Instance, Observation, Pose2D


def centre_colour(image: np.ndarray) -> np.ndarray:
    """Median RGB of the middle of a goal picture, where GOAT image goals frame their object."""
    h, w = image.shape[:2]
    centre = image[int(0.3 * h):int(0.7 * h), int(0.3 * w):int(0.7 * w)].reshape(-1, 3)
    return np.asarray(np.median(centre, axis=0), dtype=np.float64)


def chromaticity(rgb: np.ndarray) -> np.ndarray:
    """Colour with brightness divided out, plus a little lightness: shading changes brightness, not hue."""
    rgb = np.asarray(rgb, dtype=np.float64)
    total = float(rgb.sum()) + 1e-6
    return np.concatenate([rgb / total, [0.3 * total / 765.0]])


def bearing_rad(centre_xy: np.ndarray, pose: Pose2D) -> float:
    """Bearing (radians) from a point to a pose's position: the side of an object the pose looks at it from."""
    return math.atan2(pose.y_m - float(centre_xy[1]), pose.x_m - float(centre_xy[0]))


class Inspection:
    """The instances inspected for the current goal and, per instance under inspection, its sides and steps."""

    def __init__(self, ctx: AgentContext, approach: Approach, targets: Targets) -> None:
        self.ctx = ctx
        self.approach = approach
        self.targets = targets
        self.goal_rgb: Optional[np.ndarray] = None  # image goals: colour at the picture's centre
        self._inspected: set[int] = set()  # instances looked at closely for the current goal
        # Per instance under inspection: bearings (object -> camera) of its close stored views when the inspection
        # began, and the steps spent on it. The views it gains on the way must not move the goal spot (the side
        # being approached would count as seen and the robot would turn back and forth).
        self._seen: dict[int, list[float]] = {}
        self._steps: dict[int, int] = {}
        self._sides: dict[int, int] = {}  # per instance: sides looked at closely (spots reached)
        self._inspecting: Optional[int] = None  # the tied candidate chosen as cheapest, kept until inspected

    def start_subtask(self, goal: Goal) -> None:
        self.goal_rgb = centre_colour(goal.image) if goal.image is not None else None
        self._inspected = set()
        self._seen.clear()
        self._steps.clear()
        self._sides.clear()
        self._inspecting = None

    def step(self, obs: Observation, match: MatchResult) -> Optional[DiscreteAction]:
        """A step towards a not yet inspected candidate, from a side not seen yet; None when none is left.

        The instance counts as inspected once it was seen from ``inspect_image_sides`` sides (image goals; one
        side otherwise), when another side could change nothing (see ``_another_side_helps``), or after
        ``inspect_max_steps`` steps.
        """
        cfg = self.ctx.config
        sides = cfg.inspect_image_sides if self.goal_rgb is not None else 1
        for _ in range(cfg.inspect_max_instances):
            inst = self._next(match, obs.pose)
            if inst is None:
                return None
            iid = inst.instance_id
            centre = inst.points_xyz_m[:, :2].mean(axis=0)
            if iid not in self._seen:
                self._seen[iid] = [
                    bearing_rad(centre, v.pose) for v in inst.views
                    if nearest_distance_2d_m(inst, v.pose.x_m, v.pose.y_m) <= cfg.inspect_close_view_m]
            self._steps[iid] = self._steps.get(iid, 0) + 1
            fld = self.ctx.field(obs.pose, inst.points_xyz_m[:, :2])
            action = None
            if self._steps[iid] <= cfg.inspect_max_steps:
                action = self._side_step(inst, centre, fld, obs, match)
            if action is DiscreteAction.STOP:  # a side looked at: the next one, if any is left within reach
                self._sides[iid] = self._sides.get(iid, 0) + 1
                self._seen[iid].append(bearing_rad(centre, obs.pose))
                action = None
                if self._sides[iid] < sides and self._another_side_helps(iid, fld):
                    action = self._side_step(inst, centre, fld, obs, match)
            if action is None or action is DiscreteAction.STOP:
                self._inspected.add(iid)
                continue
            d = self.ctx.debug
            self.ctx.debug = DebugState("inspect", d.target_xy_m, d.path_xy_m, inst.instance_id, match)
            return action
        return None

    def _another_side_helps(self, instance_id: int, fld: PlanningField) -> bool:
        """Whether a further look at an unsure candidate can change what the agent does: not when it is the only
        candidate left and nothing is left to explore, for then the agent goes to it whatever the look shows."""
        ctx = self.ctx
        rivals = [k for k in ctx.admissible(ctx.memory.instances)
                  if k != instance_id and k not in ctx.set_aside and k not in self._inspected]
        return bool(rivals) or ctx.explorer.any_reachable(ctx.grid, fld)

    def _side_step(self, inst: Instance, centre_xy: np.ndarray, fld: PlanningField, obs: Observation,
                   match: MatchResult) -> Optional[DiscreteAction]:
        """A step of looking at ``inst`` from a side not seen closely yet: STOP once the robot is there and faces
        it, or when no such side is within reach (the spot chosen is on a seen side and the robot is at it)."""
        seen = self._seen[inst.instance_id]
        if not self._sides.get(inst.instance_id):
            return self.approach.goto(inst, fld, obs, match, seen)
        pose = obs.pose
        bearing = bearing_rad(centre_xy, pose)
        new_side = all(abs(wrap_angle_rad(bearing - b)) >= self.ctx.config.inspect_side_rad for b in seen)
        goal = self.approach.goal_cell(inst, fld, seen)
        if goal is None:
            return None
        spot_xy = fld.to_xy(np.array([goal[0]]))[0]
        at_spot = float(np.linalg.norm(spot_xy - pose.xy())) <= 0.5 * self.ctx.config.actions.forward_m
        if new_side or at_spot:
            return self.approach.goto(inst, fld, obs, match, seen)
        path = fld.path_xy(goal[0])
        return self.ctx.emit(self.ctx.motion.drive(fld, path, pose, obs.sensing_exact), "goto", spot_xy, path,
                             inst.instance_id, match)

    def _next(self, match: MatchResult, pose: Pose2D) -> Optional[Instance]:
        """The candidate under inspection, the cheapest to reach of those tied with the best, the matcher's best,
        then (image goals) the instance whose colour is closest to the goal picture's centre."""
        ctx = self.ctx
        if len(self._inspected) >= ctx.config.inspect_max_instances:
            return None
        pool = {k: v for k, v in ctx.admissible(ctx.memory.instances).items()
                if k not in self._inspected and k not in ctx.set_aside}
        if self._inspecting in pool:
            return pool[self._inspecting]
        if isinstance(ctx.matcher, TiedCandidates):
            tied = {k: pool[k] for k in ctx.matcher.tied_with_best(ctx.memory.instances) if k in pool}
            cheapest = self.targets.cheapest_to_reach(pose, tied) if len(tied) >= 2 else None
            if cheapest is not None:
                self._inspecting = cheapest
                return pool[cheapest]
        if match.instance_id in pool:
            return pool[match.instance_id]
        if self.goal_rgb is None:
            return None
        goal_chroma = chromaticity(self.goal_rgb)
        coloured = [(float(np.linalg.norm(chromaticity(v.mean_rgb) - goal_chroma)), k)
                    for k, v in pool.items() if v.mean_rgb is not None]
        if not coloured:
            return None
        return pool[min(coloured)[1]]
