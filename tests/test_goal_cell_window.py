"""Approach.goal_cell works in a window around the instance: the same goal spot as over the whole planning crop.

The reference below is the whole-crop computation goal_cell made before it was windowed (a distance transform,
the reachable cells, the blocked-view vetoes, the sight check and the seen-side penalty over every cell).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import cv2
import numpy as np
import pytest
from test_agent import ORIGIN, BoxWorld, two_rooms
from test_agent_parts import _context, _look_around

from goat_core.agent.approach import Approach
from goat_core.agent.context import AgentContext
from goat_core.agent.inspection import bearing_rad
from goat_core.control.planner import PlanningField
from goat_core.geometry import wrap_angles_rad
from goat_core.types import Instance, Pose2D


def whole_crop_goal_cell(approach: Approach, inst: Instance, fld: PlanningField,
                         seen_bearings_rad: Sequence[float] = ()) -> Optional[tuple[tuple[int, int], float]]:
    cfg = approach.ctx.config
    cells = fld.to_cells(inst.points_xyz_m[:, :2])
    cells = cells[fld.contains(cells)]
    if cells.shape[0] == 0:
        return None
    away = np.ones(fld.traversable.shape, dtype=np.uint8)
    away[cells[:, 0], cells[:, 1]] = 0
    dist_m = cv2.distanceTransform(away, cv2.DIST_L2, cv2.DIST_MASK_PRECISE) * fld.cell_m
    reachable = np.isfinite(fld.distance_m)
    radius = int(math.ceil(cfg.blocked_view_radius_m / fld.cell_m))
    for xy in approach._blocked_views.get(inst.instance_id, []):
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
        visible = approach.in_sight_of(inst, fld.to_xy(cells_in_reach))
        if visible.any():
            candidates[tuple(cells_in_reach[~visible].T)] = False
    cost = np.where(candidates, fld.distance_m, np.inf)
    if seen_bearings_rad:
        centre = inst.points_xyz_m[:, :2].mean(axis=0)
        rows, cols = np.indices(cost.shape)
        xy = fld.to_xy(np.stack([rows.ravel(), cols.ravel()], axis=1)).reshape(cost.shape[0], cost.shape[1], 2)
        bearing = np.arctan2(xy[..., 1] - centre[1], xy[..., 0] - centre[0])
        seen = np.zeros(cost.shape, dtype=bool)
        for b in seen_bearings_rad:
            seen |= np.abs(wrap_angles_rad(bearing - b)) < cfg.inspect_side_rad
        cost = cost + np.where(seen, cfg.inspect_new_side_penalty_m, 0.0)
    i, j = divmod(int(np.argmin(cost)), cost.shape[1])
    return (i, j), goal_radius_m + cfg.goal_margin_m


def two_rooms_with_instances(seed: int, made_up: int, span_m: tuple[float, float]
                             ) -> tuple[AgentContext, Approach, list[Instance], np.random.Generator]:
    """An agent that looked around in two rooms, its Approach, its remembered instances and ``made_up`` more
    anywhere in ``span_m`` on both axes, on and off the map (1-40 points spread up to 1 m), and the generator."""
    ctx = _context()
    _look_around(ctx, BoxWorld(two_rooms()))
    rng = np.random.default_rng(seed)
    instances = list(ctx.memory.instances.values())
    for k in range(made_up):
        centre = rng.uniform(span_m[0], span_m[1], size=2)
        points = centre + rng.uniform(-0.5, 0.5, size=(int(rng.integers(1, 40)), 2))
        instances.append(Instance(100 + k, "chair", np.column_stack([points, np.full(len(points), 0.5)])))
    return ctx, Approach(ctx), instances, rng


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_windowed_goal_spot_is_the_whole_crops(seed: int) -> None:
    ctx, approach, instances, rng = two_rooms_with_instances(seed, 12, (-4.0, 4.0))
    compared = 0
    for inst in instances:
        fld = ctx.field(ORIGIN, inst.points_xyz_m[:, :2])
        for seen in ((), (float(rng.uniform(-math.pi, math.pi)),)):
            got, want = approach.goal_cell(inst, fld, seen), whole_crop_goal_cell(approach, inst, fld, seen)
            assert got == want
            compared += want is not None
        if (spot := approach.goal_cell(inst, fld)) is not None:
            # A wall hid it from that spot: the next spot, windowed and whole, agree too.
            approach._blocked_views.setdefault(inst.instance_id, []).append(fld.to_xy(np.array([spot[0]]))[0])
            assert approach.goal_cell(inst, fld) == whole_crop_goal_cell(approach, inst, fld)
            centre = inst.points_xyz_m[:, :2].mean(axis=0)
            xy = fld.to_xy(np.array([spot[0]]))[0]
            seen_b = [bearing_rad(centre, Pose2D(float(xy[0]), float(xy[1]), 0.0))]
            assert approach.goal_cell(inst, fld, seen_b) == whole_crop_goal_cell(approach, inst, fld, seen_b)
    assert compared >= 4  # enough instances had a goal spot for the comparison to mean something
