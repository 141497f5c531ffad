"""A planning field marches when its distances are read, and a goal cell's read marches only as far as it needs.

``FieldDistances.within(limit)`` must hold the whole march's cost at every cell that costs at most ``limit``, its
``reachable()`` the cells of finite cost, and ``Approach.goal_cell`` and the path to its goal on a field that only
marched a band must be those of the whole march.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_agent import ORIGIN
from test_field_cache import R_M, room_grid
from test_goal_cell_window import two_rooms_with_instances

from goat_core.control.planner import FieldCache, PlannerConfig, build_field
from goat_core.types import Pose2D


def closed_room_grid():  # type: ignore[no-untyped-def]
    """``room_grid`` with a closed 1 m box of walls in a corner: its inside is traversable but cut off."""
    grid = room_grid()
    lo, hi = grid.cell_of(-2.5, -2.5), grid.cell_of(-1.5, -1.5)
    grid.obstacle[lo[0]:hi[0] + 1, lo[1]] = grid.obstacle[lo[0]:hi[0] + 1, hi[1]] = 1
    grid.obstacle[lo[0], lo[1]:hi[1] + 1] = grid.obstacle[hi[0], lo[1]:hi[1] + 1] = 1
    grid.recompute_bounds()
    return grid


@pytest.mark.parametrize("pose", [Pose2D(0.0, 0.0, 0.0), Pose2D(2.0, -2.0, 1.0), Pose2D(-0.3, 2.4, 0.0)])
def test_a_banded_march_holds_the_whole_marchs_costs_up_to_its_limit(pose: Pose2D) -> None:
    grid = closed_room_grid()
    whole = build_field(grid, pose, R_M, PlannerConfig()).distance_m
    assert np.isinf(whole).any() and np.isfinite(whole).any()  # the closed box is unreachable
    for limit_m in (0.3, 1.0, 2.5, 4.0, 20.0):
        fld = build_field(grid, pose, R_M, PlannerConfig())
        np.testing.assert_array_equal(fld.distances.reachable(), np.isfinite(whole))  # before any march
        band = fld.distances.within(limit_m)
        inside = whole <= limit_m
        np.testing.assert_array_equal(band[inside], whole[inside])
        assert np.all(np.isinf(band[~inside]) | (band[~inside] == whole[~inside]))
        if limit_m < float(whole[np.isfinite(whole)].max()):
            assert np.isinf(band).sum() > np.isinf(whole).sum()  # it did stop short
        np.testing.assert_array_equal(fld.distance_m, whole)  # the whole march, when asked for after it


def test_a_field_whose_distances_are_not_read_runs_no_fmm() -> None:
    grid, cache = room_grid(), FieldCache()
    fld = cache.build(grid, ORIGIN, R_M, PlannerConfig())
    assert cache.marches == 0 and fld.forward_free(0.0, 0.25)
    fld.distances.within(1.0)
    fld.distances.within(0.5)  # the band already reaches that far
    assert cache.marches == 1
    assert cache.build(grid, ORIGIN, R_M, PlannerConfig()).distance_m is fld.distance_m  # one whole march, shared
    assert cache.marches == 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_goal_cells_and_paths_on_a_banded_field_are_the_whole_marchs(seed: int) -> None:
    # remembered instances and made-up ones near and far, behind the wall too
    ctx, approach, instances, rng = two_rooms_with_instances(seed, 16, (-4.0, 6.0))
    banded_goals = 0
    for inst in instances:
        for seen in ((), (float(rng.uniform(-math.pi, math.pi)),)):
            lazy = build_field(ctx.grid, ORIGIN, ctx.config.robot_radius_m, ctx.config.planner,
                               inst.points_xyz_m[:, :2])
            whole = build_field(ctx.grid, ORIGIN, ctx.config.robot_radius_m, ctx.config.planner,
                                inst.points_xyz_m[:, :2])
            whole.distances.full()
            got, want = approach.goal_cell(inst, lazy, seen), approach.goal_cell(inst, whole, seen)
            assert got == want
            if want is None:
                continue
            banded_goals += lazy.distances._full is None
            np.testing.assert_array_equal(lazy.path_xy(got[0]), whole.path_xy(want[0]))
    assert banded_goals >= 4  # enough goals were found on a band alone for the comparison to mean something
