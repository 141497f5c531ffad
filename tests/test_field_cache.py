"""FieldCache: a planning field handed out again only when build_field would compute the very same one."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from goat_core.control.planner import FieldCache, PlannerConfig, PlanningField, build_field
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.types import Pose2D

R_M = 0.17


def room_grid() -> OccupancyGrid:
    """A 6 x 6 m explored room with a wall across it that has a gap."""
    grid = OccupancyGrid(OccupancyConfig())
    lo, hi = grid.cell_of(-3.0, -3.0), grid.cell_of(3.0, 3.0)
    grid.explored[lo[0]:hi[0], lo[1]:hi[1]] = 1
    i = grid.cell_of(1.0, 0.0)[0]
    grid.obstacle[i, grid.cell_of(0.0, -3.0)[1]:grid.cell_of(0.0, 1.5)[1]] = 1
    grid.recompute_bounds()
    return grid


def assert_same_field(got: PlanningField, want: PlanningField) -> None:
    assert got.box == want.box and got.robot_cell == want.robot_cell
    np.testing.assert_array_equal(got.robot_xy_m, want.robot_xy_m)
    np.testing.assert_array_equal(got.origin_xy_m, want.origin_xy_m)
    for name in ("traversable", "clear", "distance_m", "blocked", "touching"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    assert (got.cell_m, got.map_res_m, got.margin_cells) == (want.cell_m, want.map_res_m, want.margin_cells)


def test_turning_in_place_reuses_the_field_and_moving_to_another_cell_does_not() -> None:
    grid, cache, config = room_grid(), FieldCache(), PlannerConfig()
    first = cache.build(grid, Pose2D(0.0, 0.0, 0.0), R_M, config)
    turned = cache.build(grid, Pose2D(0.0, 0.0, math.radians(30.0)), R_M, config)
    assert (cache.misses, cache.hits) == (1, 1)
    assert turned.distance_m is first.distance_m  # no FMM run
    assert_same_field(turned, build_field(grid, Pose2D(0.0, 0.0, math.radians(30.0)), R_M, config))
    # 2 cm on, in the same 0.1 m planning cell: the same distances, the base's own xy moved.
    nudged = cache.build(grid, Pose2D(0.02, 0.01, 0.0), R_M, config)
    assert cache.hits == 2
    assert_same_field(nudged, build_field(grid, Pose2D(0.02, 0.01, 0.0), R_M, config))
    moved = cache.build(grid, Pose2D(0.25, 0.0, 0.0), R_M, config)
    assert cache.misses == 2
    assert_same_field(moved, build_field(grid, Pose2D(0.25, 0.0, 0.0), R_M, config))


def test_a_new_obstacle_a_trail_or_a_wider_crop_plans_again() -> None:
    grid, cache, config = room_grid(), FieldCache(), PlannerConfig()
    pose = Pose2D(-1.0, 0.0, 0.0)
    cache.build(grid, pose, R_M, config)
    i, j = grid.cell_of(-0.5, 1.0)
    grid.obstacle[i, j] = 1  # one cell, in the known crop
    assert_same_field(cache.build(grid, pose, R_M, config), build_field(grid, pose, R_M, config))
    grid.mark_trail(np.array([-2.0, 0.0]), np.array([-1.0, 0.0]))
    assert_same_field(cache.build(grid, pose, R_M, config), build_field(grid, pose, R_M, config))
    far = np.array([[6.0, 6.0]])  # an instance outside the known map widens the crop
    assert_same_field(cache.build(grid, pose, R_M, config, far), build_field(grid, pose, R_M, config, far))
    relaxed = dataclasses.replace(config, inflation_margin_m=0.0, downsample=1)
    assert_same_field(cache.build(grid, pose, R_M - 0.02, relaxed), build_field(grid, pose, R_M - 0.02, relaxed))
    assert (cache.misses, cache.hits) == (5, 0)
    # Each of those is still held (4 of them): asking again for the unchanged ones runs no FMM.
    cache.build(grid, pose, R_M, config, far)
    cache.build(grid, pose, R_M, config)
    assert (cache.misses, cache.hits) == (5, 2)


def test_a_new_obstacle_inside_the_inflation_reuses_the_distances_and_one_outside_does_not() -> None:
    """The crop changed, the FMM's inputs did not: the field is built again (its blocked cells are new) with the
    distances of the kept one; a cell that narrows the free space runs the FMM again. Both equal build_field's."""
    grid, cache, config = room_grid(), FieldCache(), PlannerConfig()
    ci, cj = grid.cell_of(-1.5, 2.0)
    grid.obstacle[ci - 2:ci + 3, cj - 2:cj + 3] = 1
    grid.obstacle[ci, cj] = 0  # a hole in a 5 x 5 block: filling it inflates no cell more
    pose = Pose2D(-1.0, -1.0, 0.0)
    first = cache.build(grid, pose, R_M, config)
    grid.obstacle[ci, cj] = 1
    filled = cache.build(grid, pose, R_M, config)
    assert (cache.misses, cache.hits, cache.distances_reused) == (2, 0, 1)
    assert filled.distance_m is first.distance_m
    assert not np.array_equal(filled.blocked, first.blocked)
    assert_same_field(filled, build_field(grid, pose, R_M, config))
    grid.obstacle[ci + 3, cj] = 1  # one cell beyond the block: the inflation grows
    grown = cache.build(grid, pose, R_M, config)
    assert (cache.misses, cache.distances_reused) == (3, 1)
    assert not np.array_equal(grown.traversable, first.traversable)
    assert_same_field(grown, build_field(grid, pose, R_M, config))


def test_random_map_updates_always_give_what_build_field_gives() -> None:
    """A walk of turns, short moves and new obstacles: every field equals build_field's, and most turns hit."""
    rng = np.random.default_rng(7)
    grid, cache, config = room_grid(), FieldCache(size=2), PlannerConfig()
    x, y = -1.5, -1.0
    for step in range(60):
        kind = rng.integers(3)
        if kind == 0:
            x = float(np.clip(x + rng.normal(0.0, 0.15), -2.5, 0.5))
            y = float(np.clip(y + rng.normal(0.0, 0.15), -2.5, 2.5))
        elif kind == 1:
            i, j = grid.cell_of(float(rng.uniform(-3.0, 3.0)), float(rng.uniform(-3.0, 3.0)))
            grid.obstacle[i, j] = 1
        pose = Pose2D(x, y, float(rng.uniform(-math.pi, math.pi)))
        include = rng.uniform(-4.0, 4.0, size=(3, 2)) if step % 5 == 0 else None
        assert_same_field(cache.build(grid, pose, R_M, config, include), build_field(grid, pose, R_M, config, include))
    assert cache.hits >= 10 and cache.misses + cache.hits == 60


def test_cached_arrays_are_read_only_and_the_size_is_checked() -> None:
    grid, cache = room_grid(), FieldCache()
    fld = cache.build(grid, Pose2D(0.0, 0.0, 0.0), R_M, PlannerConfig())
    with pytest.raises(ValueError):
        fld.distance_m[0, 0] = 0.0
    with pytest.raises(ValueError, match="size must be >= 1, got 0"):
        FieldCache(size=0)
