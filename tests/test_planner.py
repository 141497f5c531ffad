"""FMM planning, path extraction, frontier choice and discrete steering."""

from __future__ import annotations

import math

import numpy as np
import pytest

from goat_core.control.frontier import FrontierConfig, FrontierExplorer, frontier_mask
from goat_core.control.planner import (
    PlannerConfig,
    block_all,
    block_any,
    build_field,
    descend,
    disk_kernel,
    geodesic_distance,
    inflate,
    line_of_sight,
)
from goat_core.control.policy import free_heading, heading_error_rad, tilt_action, turn_toward
from goat_core.errors import GoatError
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.types import DiscreteAction, Pose2D

R_M = 0.17


def open_grid(n: int = 60) -> np.ndarray:
    return np.ones((n, n), dtype=bool)


@pytest.mark.parametrize("target", [(5, 50), (50, 5), (40, 40), (10, 12)])
def test_open_space_distance_is_euclidean(target: tuple[int, int]) -> None:
    dist = geodesic_distance(open_grid(), (10, 10), 0.1)
    euclid = 0.1 * math.hypot(target[0] - 10, target[1] - 10)
    # The front starts on the source cell's boundary, half a cell from its centre.
    assert dist[target] == pytest.approx(euclid, rel=0.03, abs=0.06)
    assert dist[10, 10] == 0.0


def test_wall_with_gap_forces_a_detour_and_cut_off_cells_are_unreachable() -> None:
    grid = open_grid()
    grid[30, :] = False
    grid[30, 50] = True  # a one-cell gap
    dist = geodesic_distance(grid, (5, 5), 0.1)
    assert dist[50, 5] > 0.1 * (math.hypot(25, 45) + math.hypot(20, 45)) - 0.2
    assert np.isinf(dist[30, 0])
    grid[30, 50] = False
    dist = geodesic_distance(grid, (5, 5), 0.1)
    assert np.all(np.isinf(dist[31:]))


def test_slow_cells_cost_more_and_are_avoided_when_there_is_room() -> None:
    grid = open_grid()
    speed = np.ones(grid.shape)
    speed[:, 28:33] = 0.25
    dist = geodesic_distance(grid, (30, 10), 0.1, speed)
    assert dist[30, 50] == pytest.approx(0.1 * (40 + 3 * 5), rel=0.05)
    speed[:, 28:33] = 1.0
    speed[20:40, 28:33] = 0.25  # now a detour around the slow patch is cheaper
    path = descend(geodesic_distance(grid, (30, 10), 0.1, speed), (30, 50))
    assert not np.any(speed[path[:, 0], path[:, 1]] < 1.0)


@pytest.mark.parametrize("source", [(-1, 3), (60, 0), (30, 30)])
def test_bad_source_raises(source: tuple[int, int]) -> None:
    grid = open_grid()
    grid[30, 30] = False
    with pytest.raises(GoatError, match=str(source[0])):
        geodesic_distance(grid, source, 0.1)


@pytest.mark.parametrize("diagonals", [False, True])
def test_a_source_without_side_neighbours_reaches_nothing(diagonals: bool) -> None:
    """A drifting pose can put the robot in a pocket of its own map; scikit-fmm would raise (no zero contour)."""
    grid = np.zeros((20, 20), dtype=bool)
    grid[10, 10] = True
    if diagonals:
        grid[9, 9] = grid[11, 11] = True
    dist = geodesic_distance(grid, (10, 10), 0.05)
    assert dist[10, 10] == 0.0 and np.isinf(np.delete(dist.ravel(), 10 * 20 + 10)).all()
    with_speed = geodesic_distance(grid, (10, 10), 0.05, np.ones((20, 20)))
    assert np.isinf(with_speed).sum() == 399


@pytest.mark.parametrize("target", [(50, 50), (5, 55), (55, 2)])
def test_descend_gives_a_connected_monotone_path(target: tuple[int, int]) -> None:
    grid = open_grid()
    grid[30, 10:60] = False
    dist = geodesic_distance(grid, (10, 20), 0.1)
    path = descend(dist, target)
    assert tuple(path[0]) == (10, 20) and tuple(path[-1]) == target
    steps = np.abs(np.diff(path, axis=0))
    assert np.all(steps.max(axis=1) == 1)  # 8-connected moves
    values = dist[path[:, 0], path[:, 1]]
    assert np.all(np.diff(values) > 0)
    assert np.all(grid[path[:, 0], path[:, 1]])


def test_descend_to_unreachable_is_empty() -> None:
    dist = np.full((5, 5), np.inf)
    dist[0, 0] = 0.0
    assert descend(dist, (4, 4)).shape == (0, 2)


@pytest.mark.parametrize(("a", "b", "visible"), [
    ((5.5, 5.5), (5.5, 50.5), False), ((5.5, 5.5), (25.5, 5.5), True), ((35.5, 5.5), (35.5, 50.5), True),
    ((5.5, 5.5), (-3.0, 5.5), False),
])
def test_line_of_sight(a: tuple[float, float], b: tuple[float, float], visible: bool) -> None:
    grid = open_grid()
    grid[0:30, 30] = False
    assert line_of_sight(grid, np.array(a), np.array(b)) is visible


@pytest.mark.parametrize("radius", [0.0, 1.0, 2.5, 4.0])
def test_inflate_is_a_disk(radius: float) -> None:
    blocked = np.zeros((21, 21), dtype=bool)
    blocked[10, 10] = True
    out = inflate(blocked, radius)
    yy, xx = np.mgrid[-10:11, -10:11]
    np.testing.assert_array_equal(out, (xx * xx + yy * yy <= radius * radius + 1e-9))
    assert disk_kernel(radius).shape[0] == 2 * math.ceil(radius) + 1


def test_block_reductions() -> None:
    mask = np.zeros((4, 4), dtype=bool)
    mask[0, 0] = True
    mask[2:4, 2:4] = True
    np.testing.assert_array_equal(block_any(mask, 2), [[True, False], [False, True]])
    np.testing.assert_array_equal(block_all(mask, 2), [[False, False], [False, True]])


def walled_grid() -> OccupancyGrid:
    """An explored 4 m x 4 m room around the origin with a wall 1 m ahead of the robot."""
    grid = OccupancyGrid(OccupancyConfig())
    lo, hi = grid.cell_of(-2.0, -2.0), grid.cell_of(2.0, 2.0)
    grid.explored[lo[0]:hi[0], lo[1]:hi[1]] = 1
    i = grid.cell_of(1.0, 0.0)[0]
    j0, j1 = grid.cell_of(0.0, -1.0)[1], grid.cell_of(0.0, 1.0)[1]
    grid.obstacle[i, j0:j1] = 1
    grid.mark_disk_explored(0.0, 0.0, R_M)
    grid.recompute_bounds()
    return grid


def test_field_routes_around_the_wall() -> None:
    grid = walled_grid()
    fld = build_field(grid, Pose2D(0.0, 0.0, 0.0), R_M, PlannerConfig())
    target = tuple(int(v) for v in fld.to_cells(np.array([[1.6, 0.0]]))[0])
    path = fld.path_xy(target)
    assert np.abs(path[:, 1]).max() > 1.0  # it goes around a wall that spans |y| < 1
    assert fld.distance_m[target] > 2.0
    assert fld.forward_free(0.0, 0.25)
    assert not fld.forward_free(0.0, 0.9)  # the base would touch the wall
    wp = fld.waypoint(path, 1.0)
    assert 0.0 < np.linalg.norm(wp) <= 1.0 + fld.cell_m
    assert line_of_sight(fld.traversable, np.array(fld.robot_cell) + 0.5, fld.to_cells(wp[None])[0] + 0.5)


def test_robot_inside_the_inflation_can_still_plan() -> None:
    grid = walled_grid()
    pose = Pose2D(0.9, 0.0, 0.0)  # base 0.1 m from the wall: overlapping it on the map
    fld = build_field(grid, pose, R_M, PlannerConfig())
    assert fld.traversable[fld.robot_cell]
    back = tuple(int(v) for v in fld.to_cells(np.array([[-1.0, 0.0]]))[0])
    assert np.isfinite(fld.distance_m[back])
    assert fld.forward_free(math.pi, 0.25)  # backing away is allowed
    assert not fld.forward_free(0.0, 0.25)  # driving into the wall is not


def test_an_obstacle_cell_under_the_robot_does_not_block_every_heading() -> None:
    """Large-furnished 1000-3: one obstacle cell under the robot's centre made every move 'blocked', and the agent
    turned left and right in place to the subtask limit. The cell it stands on cannot stop the base."""
    grid = walled_grid()
    pose = Pose2D(0.0, 0.0, 0.0)
    i, j = grid.cell_of(pose.x_m, pose.y_m)
    grid.obstacle[i, j] = 1
    fld = build_field(grid, pose, R_M, PlannerConfig())
    assert fld.forward_free(math.pi, 0.25)
    assert fld.forward_free(0.5 * math.pi, 0.25)
    assert not fld.forward_free(0.0, 1.2)  # driving the centre into the wall is still refused
    grid.obstacle[i - 2, j] = 1  # an obstacle a cell past the robot's own still does
    fld = build_field(grid, pose, R_M, PlannerConfig())
    assert not fld.forward_free(math.pi, 0.25)


def test_the_way_the_robot_came_stays_open() -> None:
    """A gap the robot fits through (0.42 m between two tables for a 0.34 m base) is closed on the inflated, 2x
    coarsened planning grid: standing in it the robot reaches nothing. The cells its centre crossed on the way in
    stay traversable, so it can leave the way it came (seed 1000's episode 1000-18 sealed itself in so)."""
    grid = OccupancyGrid(OccupancyConfig())
    lo, hi = grid.cell_of(-2.0, -2.0), grid.cell_of(2.0, 2.0)
    grid.explored[lo[0]:hi[0], lo[1]:hi[1]] = 1
    for y0, y1 in ((-2.0, -0.21), (0.21, 2.0)):  # two tables, 0.42 m apart, along x in [0, 1] m
        a, b = grid.cell_of(0.0, y0), grid.cell_of(1.0, y1)
        grid.obstacle[a[0]:b[0] + 1, a[1]:b[1] + 1] = 1
    grid.recompute_bounds()
    inside = Pose2D(0.5, 0.0, math.pi)
    outside = tuple(int(v) for v in build_field(grid, inside, R_M, PlannerConfig()).to_cells(
        np.array([[-1.0, 0.0]]))[0])
    sealed = build_field(grid, inside, R_M, PlannerConfig())
    assert np.isinf(sealed.distance_m[outside]) and np.isfinite(sealed.distance_m).sum() < 40  # the gap alone
    grid.mark_trail(np.array([-1.0, 0.0]), np.array([-0.25, 0.0]))
    grid.mark_trail(np.array([-0.25, 0.0]), np.array([0.5, 0.0]))
    fld = build_field(grid, inside, R_M, PlannerConfig())
    assert np.isfinite(fld.distance_m[outside])
    path = fld.path_xy(outside)
    assert float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum()) == pytest.approx(1.5, abs=0.3)  # straight out
    grid.reset()
    assert not grid.trail.any()


def test_the_trail_is_four_connected() -> None:
    grid = OccupancyGrid(OccupancyConfig())
    grid.mark_trail(np.array([0.0, 0.0]), np.array([0.73, 0.41]))
    rows, cols = np.nonzero(grid.trail)
    cells = set(zip(rows.tolist(), cols.tolist(), strict=True))
    for i, j in cells:  # every cell but the ends has a 4-neighbour on the line
        assert sum((i + di, j + dj) in cells for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1))) >= 1
    assert grid.cell_of(0.0, 0.0) in cells and grid.cell_of(0.73, 0.41) in cells


def frontier_grid() -> OccupancyGrid:
    """Explored corridor x in [-1, 3] m, y in [-0.5, 0.5] m: unknown beyond both ends and the sides."""
    grid = OccupancyGrid(OccupancyConfig())
    lo, hi = grid.cell_of(-1.0, -0.5), grid.cell_of(3.0, 0.5)
    grid.explored[lo[0]:hi[0], lo[1]:hi[1]] = 1
    grid.recompute_bounds()
    return grid


def test_frontiers_are_free_cells_next_to_unknown() -> None:
    grid = frontier_grid()
    fld = build_field(grid, Pose2D(0.0, 0.0, 0.0), R_M, PlannerConfig())
    mask = frontier_mask(grid, fld, max_hole_m2=1.0)
    explored = grid.explored_crop(fld.box)
    assert np.all(explored[mask])
    assert mask.sum() == 2 * (80 + 20) - 4  # the corridor's rim


def walled_corridor() -> OccupancyGrid:
    """The corridor with walls along both long sides, so only its two ends are frontiers."""
    grid = frontier_grid()
    i0, i1 = grid.cell_of(-1.0, 0.0)[0], grid.cell_of(3.0, 0.0)[0]
    for y in (-0.525, 0.525):  # cell centres just outside the explored band
        j = grid.cell_of(0.0, y)[1]
        grid.obstacle[i0:i1, j] = 1
        grid.explored[i0:i1, j] = 1
    grid.recompute_bounds()
    return grid


def test_nearest_frontier_first_and_failed_ones_skipped() -> None:
    grid = walled_corridor()
    fld = build_field(grid, Pose2D(0.0, 0.0, 0.0), R_M, PlannerConfig())
    explorer = FrontierExplorer(FrontierConfig())
    cands = explorer.candidates(grid, fld)
    assert len(cands) == 2
    assert cands[0].target_xy_m[0] < 0.0 < cands[1].target_xy_m[0]  # the x = -1 end is nearer
    assert cands[0].distance_m < cands[1].distance_m
    explorer.mark_failed(cands[0].target_xy_m)
    chosen = explorer.choose(grid, fld)
    assert chosen is not None and chosen.target_xy_m[0] > 2.5
    explorer.reset()
    again = explorer.choose(grid, fld)
    assert again is not None and again.target_xy_m[0] < 0.0


@pytest.mark.parametrize(("keep_bonus_m", "kept"), [(1.5, True), (0.0, False)])
def test_hysteresis_keeps_the_current_frontier(keep_bonus_m: float, kept: bool) -> None:
    grid = walled_corridor()
    explorer = FrontierExplorer(FrontierConfig(keep_bonus_m=keep_bonus_m))
    first = explorer.choose(grid, build_field(grid, Pose2D(2.0, 0.0, 0.0), R_M, PlannerConfig()))
    assert first is not None and first.target_xy_m[0] > 2.5
    # From x = 0.8 the x = -1 end is 0.4 m nearer than the x = 3 end.
    second = explorer.choose(grid, build_field(grid, Pose2D(0.8, 0.0, 0.0), R_M, PlannerConfig()))
    assert second is not None
    assert bool(second.target_xy_m[0] > 2.5) is kept


def test_small_enclosed_unknown_pockets_are_not_frontiers() -> None:
    grid = OccupancyGrid(OccupancyConfig())
    lo, hi = grid.cell_of(-2.0, -2.0), grid.cell_of(2.0, 2.0)
    grid.explored[lo[0]:hi[0], lo[1]:hi[1]] = 1
    grid.obstacle[lo[0], lo[1]:hi[1]] = 1
    grid.obstacle[hi[0] - 1, lo[1]:hi[1]] = 1
    grid.obstacle[lo[0]:hi[0], lo[1]] = 1
    grid.obstacle[lo[0]:hi[0], hi[1] - 1] = 1
    hole = grid.cell_of(1.0, 1.0)
    grid.explored[hole[0]:hole[0] + 6, hole[1]:hole[1] + 6] = 0  # 0.09 m2 pocket
    grid.recompute_bounds()
    fld = build_field(grid, Pose2D(0.0, 0.0, 0.0), R_M, PlannerConfig())
    assert not frontier_mask(grid, fld, max_hole_m2=1.0).any()
    assert frontier_mask(grid, fld, max_hole_m2=0.05).sum() > 0
    assert FrontierExplorer(FrontierConfig()).choose(grid, fld) is None


@pytest.mark.parametrize(("yaw_deg", "target", "expected_deg"), [
    (0.0, (1.0, 1.0), 45.0), (90.0, (1.0, 0.0), -90.0), (180.0, (1.0, 0.0), -180.0),
    (-170.0, (-1.0, 0.0), -10.0), (170.0, (-1.0, 0.0), 10.0), (-90.0, (0.0, 1.0), -180.0),
])
def test_heading_error(yaw_deg: float, target: tuple[float, float], expected_deg: float) -> None:
    err = heading_error_rad(Pose2D(0.0, 0.0, math.radians(yaw_deg)), np.array(target))
    assert err == pytest.approx(math.radians(expected_deg))


@pytest.mark.parametrize(("err_deg", "expected"), [
    (0.0, None), (17.0, None), (-17.0, None), (19.0, DiscreteAction.TURN_LEFT),
    (-19.0, DiscreteAction.TURN_RIGHT), (179.0, DiscreteAction.TURN_LEFT),
])
def test_turn_toward(err_deg: float, expected: DiscreteAction | None) -> None:
    assert turn_toward(math.radians(err_deg), math.radians(18.0)) is expected


def test_free_heading_picks_the_nearest_open_heading() -> None:
    pose = Pose2D(0.0, 0.0, 0.0)
    turn = math.radians(30.0)
    blocked = {0, 1, -1}  # the three headings around +x are blocked

    def free(yaw: float) -> bool:
        return round(yaw / turn) % 12 not in {b % 12 for b in blocked}

    best = free_heading(pose, math.radians(20.0), turn, free)
    assert best == pytest.approx(2 * turn)
    assert free_heading(pose, 0.0, turn, lambda yaw: False) is None


@pytest.mark.parametrize(("tilt_deg", "expected"), [
    (0.0, DiscreteAction.LOOK_DOWN), (-30.0, None), (-60.0, DiscreteAction.LOOK_UP), (-20.0, None),
])
def test_tilt_action(tilt_deg: float, expected: DiscreteAction | None) -> None:
    assert tilt_action(math.radians(tilt_deg), math.radians(-30.0), math.radians(30.0)) is expected


@pytest.mark.parametrize("kwargs", [{"downsample": 0}, {"margin_speed": 0.0}, {"lookahead_m": 0.0},
                                    {"inflation_margin_m": -0.1}])
def test_bad_planner_config_raises(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        PlannerConfig(**kwargs)
