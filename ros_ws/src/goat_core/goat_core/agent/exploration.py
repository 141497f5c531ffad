"""Exploring: a step toward the nearest reachable frontier, giving up frontiers the robot cannot clear."""

from __future__ import annotations

from typing import Optional

import numpy as np

from goat_core.agent.context import AgentContext
from goat_core.control.planner import PlanningField
from goat_core.matching.base import MatchResult
from goat_core.types import DiscreteAction, Observation

MAX_FRONTIER_RETRIES = 4  # frontiers given up in one step before exploring is declared over for it


def explore_step(ctx: AgentContext, fld: PlanningField, obs: Observation, match: MatchResult
                 ) -> Optional[DiscreteAction]:
    """A step toward the chosen frontier; None when no reachable frontier is left.

    When the robot is stuck on the way, the current frontier is given up; a frontier still there when the robot
    stands on it cannot be observed from anywhere reachable and is given up too.
    """
    pose = obs.pose
    if ctx.motion.stuck():
        if ctx.explorer.current is not None:
            ctx.explorer.mark_failed(ctx.explorer.current.target_xy_m)
        ctx.motion.clear_stuck()
    frontier = ctx.explorer.choose(ctx.grid, fld)
    for _ in range(MAX_FRONTIER_RETRIES):
        if frontier is None:
            break
        if float(np.linalg.norm(frontier.target_xy_m - pose.xy())) > ctx.config.frontier_reached_m:
            break
        ctx.explorer.mark_failed(frontier.target_xy_m)
        frontier = ctx.explorer.choose(ctx.grid, fld)
    if frontier is None:
        return None
    path = fld.path_xy(frontier.target_cell)
    action = ctx.motion.drive(fld, path, pose, obs.sensing_exact)
    return ctx.emit(action, "explore", frontier.target_xy_m, path, None, match)
