"""Geodesic distances for success and SPL, checked against analytic distances (issue 28: ~1 cm)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from goat_core.errors import UnreachableGoalError
from sim_bridge.embedded.geodesic import GoalDistance, in_sight
from sim_bridge.embedded.navgrid import NavGrid

RES_M = 0.05
SIZE = 160  # cells: an 8 m x 8 m room with a one-cell border of wall


def _room(wall_col: int | None = None, wall_rows: int = 120) -> NavGrid:
    blocked = np.zeros((SIZE, SIZE), dtype=bool)
    blocked[0, :] = blocked[-1, :] = blocked[:, 0] = blocked[:, -1] = True
    if wall_col is not None:  # a wall of one cell from y = 0 up to y = wall_rows * RES_M, open above
        blocked[:wall_rows, wall_col] = True
    return NavGrid(blocked, blocked.copy(), (0.0, 0.0), RES_M, robot_radius_m=0.0)


def test_in_sight_distances_are_exact_euclidean() -> None:
    grid = _room()
    target = np.array([3.013, 4.021])  # off every cell centre and corner
    distance = GoalDistance(grid, target[None, :])
    rng = np.random.default_rng(0)
    for xy in rng.uniform(0.3, 7.7, size=(200, 2)):
        assert distance.distance_m(xy) == pytest.approx(float(np.linalg.norm(xy - target)), abs=1e-9)


def test_the_success_threshold_is_decided_to_the_millimetre() -> None:
    """A stop 0.249 m from a view point succeeds under GOAT's < 0.25 m, one 0.251 m away does not; the old
    cell-quantised field could not tell them apart (both ends snapped to 5 cm cells)."""
    grid = _room()
    target = np.array([3.013, 4.021])
    distance = GoalDistance(grid, target[None, :])
    for d_m in (0.249, 0.251):
        for angle in np.linspace(0.0, 2 * math.pi, 12, endpoint=False):
            xy = target + d_m * np.array([math.cos(angle), math.sin(angle)])
            assert (distance.distance_m(xy) < 0.25) is (d_m < 0.25)


def test_the_field_is_within_half_a_centimetre_in_the_open() -> None:
    grid = _room()
    target = np.array([3.013, 4.021])
    field = GoalDistance(grid, target[None, :]).field
    fine = RES_M / 4
    rows, cols = np.mgrid[0:field.shape[0], 0:field.shape[1]]
    truth = np.hypot((cols + 0.5) * fine - target[0], (rows + 0.5) * fine - target[1])
    finite = np.isfinite(field)
    assert np.abs(field - truth)[finite].max() < 0.005


def test_behind_a_wall_the_path_bends_at_its_end_within_about_two_centimetres() -> None:
    """Wall cells at x in [4.0, 4.05), y < 6.0: from the left side to the right the shortest path goes over the
    wall's end, touching its corners (4.0, 6.0) and (4.05, 6.0)."""
    grid = _room(wall_col=80)
    target = np.array([2.013, 2.021])
    distance = GoalDistance(grid, target[None, :])
    left, right = np.array([4.0, 6.0]), np.array([4.05, 6.0])
    old_field = grid.distance_field(target[None, :])
    worst_new, worst_old = 0.0, 0.0
    for xy in np.random.default_rng(1).uniform([4.3, 0.3], [7.7, 5.5], size=(60, 2)):
        truth = float(np.linalg.norm(target - left) + RES_M + np.linalg.norm(xy - right))
        worst_new = max(worst_new, abs(distance.distance_m(xy) - truth))
        worst_old = max(worst_old, abs(float(old_field[grid.world_to_cell(xy)]) - truth))
    assert worst_new < 0.025
    assert worst_old > 0.03  # what the 5 cm field gave (the reason for this module)


def test_nearest_of_several_targets_and_unreachable_points() -> None:
    grid = _room()
    near, far = np.array([1.0, 1.0]), np.array([6.0, 6.0])
    distance = GoalDistance(grid, np.stack([near, far]))
    assert distance.distance_m(np.array([1.5, 1.0])) == pytest.approx(0.5, abs=1e-9)
    assert distance.distance_m(np.array([6.0, 5.0])) == pytest.approx(1.0, abs=1e-9)
    split = _room(wall_col=80, wall_rows=SIZE)  # the wall splits the room; NavGrid keeps the larger (left) part
    only_left = GoalDistance(split, near[None, :])
    assert math.isinf(only_left.distance_m(np.array([6.0, 5.0])))
    assert math.isinf(only_left.distance_m(np.array([-5.0, 1.0])))  # off the grid
    assert not in_sight(split, np.array([1.0, 1.0]), far[None, :])[0]
    with pytest.raises(UnreachableGoalError, match="finite"):
        GoalDistance(grid, np.array([[np.nan, 1.0]]))
