"""Which remembered instance to head for: the matcher's answer, settled, and for category goals the cheapest.

Every instance of a category meets a category goal, so the agent prefers one within the stop radius, then the
one cheapest to reach, over the matcher's favourite (the one seen most). When a match cannot be reached it is
set aside for the subtask and the next best is tried.
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from goat_core.agent.approach import Approach
from goat_core.agent.context import AgentContext
from goat_core.control.planner import PlanningField
from goat_core.mapping.instance_memory import nearest_distance_2d_m
from goat_core.matching.base import MatchResult
from goat_core.types import DiscreteAction, Instance, Observation, Pose2D

MAX_FALLBACK_MATCHES = 4  # unreachable matches set aside in one step before the agent stops
MAX_SETTLE_CALLS = 10_000  # matcher calls to finish pending comparisons before giving up on a subtask


class Targets:
    """The choice of target instance among the matcher's candidates."""

    def __init__(self, ctx: AgentContext, approach: Approach) -> None:
        self.ctx = ctx
        self.approach = approach
        # Instance id -> (the points array it was taken from, xy min, xy max): an instance's box changes only when
        # memory gives it a new points array (every merge does), and a large home holds ~140 instances whose
        # boxes prefer_within_reach would otherwise reduce from up to 2,000 points each, at every call.
        self._xy_boxes: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def settle(self) -> tuple[MatchResult, Optional[Instance]]:
        """Ask the matcher until it has compared every remembered view (bounded: each call does some work)."""
        match, inst = self.ctx.match()
        for _ in range(MAX_SETTLE_CALLS):
            if not match.pending:
                break
            match, inst = self.ctx.match()
        return match, inst

    def goto_best(self, obs: Observation, match: MatchResult, inst: Optional[Instance],
                  confident_only: bool = False) -> tuple[Optional[DiscreteAction], MatchResult]:
        """A step to the best match that can be reached (only confident ones, if asked), setting aside those
        that cannot."""
        for _ in range(MAX_FALLBACK_MATCHES):
            if inst is None or (confident_only and not match.confident):
                break
            fld = self.ctx.field(obs.pose, inst.points_xyz_m[:, :2])
            action = self.approach.goto(inst, fld, obs, match)
            if action is not None:
                return action, match
            self.ctx.set_aside.add(inst.instance_id)
            match, inst = self.ctx.match()
        return None, match

    def nearest_of_category(self, obs: Observation, match: MatchResult, inst: Instance, fld: PlanningField
                            ) -> tuple[MatchResult, Instance, PlanningField]:
        """For a category goal, the remembered instance of the matched category that is cheapest to reach.

        Every instance of the category meets the goal, so walking to the matcher's favourite (the one seen most)
        when another is nearer only lengthens the path (and lowers SPL).
        """
        same = {k: v for k, v in self.ctx.memory.instances.items()
                if v.category == inst.category and k not in self.ctx.set_aside}
        if len(same) < 2:
            return match, inst, fld
        best = self.cheapest_to_reach(obs.pose, same)
        if best is None or best == inst.instance_id:
            return match, inst, fld
        nearest = same[best]
        return MatchResult(best, match.score, True), nearest, self.ctx.field(obs.pose, nearest.points_xyz_m[:, :2])

    def cheapest_to_reach(self, pose: Pose2D, instances: Mapping[int, Instance]) -> Optional[int]:
        """The instance whose goal spot is the shortest path away (lowest id among equals); None if none is
        reachable or none is given."""
        if not instances:
            return None
        points = np.concatenate([v.points_xyz_m[:, :2] for v in instances.values()])
        wide = self.ctx.field(pose, points)
        costs = []
        for k, v in instances.items():
            goal = self.approach.goal_cell(v, wide)
            if goal is not None:
                costs.append((float(wide.distance_m[goal[0]]), k))
        return min(costs)[1] if costs else None

    def prefer_within_reach(self, pose: Pose2D, match: MatchResult, inst: Optional[Instance]
                            ) -> tuple[MatchResult, Optional[Instance]]:
        """For a category goal, an instance within the stop radius that the matcher also accepts beats its
        favourite farther away: every instance of the category meets the goal, and this one costs no path."""
        r = self.ctx.config.stop_radius_m
        xy = pose.xy()
        instances = self.ctx.memory.instances
        near = {k: v for k, v in instances.items()
                if k not in self.ctx.set_aside and k != match.instance_id
                and self._near_box(k, v, xy, r) and nearest_distance_2d_m(v, pose.x_m, pose.y_m) <= r}
        for gone in self._xy_boxes.keys() - instances.keys():
            del self._xy_boxes[gone]
        if not near:
            return match, inst
        local = self.ctx.matcher.match(near)
        if local.confident and local.instance_id in near:
            return local, near[local.instance_id]
        return match, inst

    def _near_box(self, iid: int, inst: Instance, xy: np.ndarray, r: float) -> bool:
        """Whether ``xy`` lies within ``r`` of the instance's xy bounding box (its ``bbox_min_m`` and
        ``bbox_max_m``), the box reduced again only when the instance's points are a new array."""
        cached = self._xy_boxes.get(iid)
        if cached is None or cached[0] is not inst.points_xyz_m:
            points_xy = inst.points_xyz_m[:, :2]
            cached = (inst.points_xyz_m, points_xy.min(axis=0), points_xy.max(axis=0))
            self._xy_boxes[iid] = cached
        return bool(np.all(cached[1] - r <= xy) and np.all(xy <= cached[2] + r))
