"""Frontier choice reads a field's FMM only as far as its answer needs, and gives the whole march's answer.

``FrontierExplorer.choose`` reads the nearest frontier and, while it keeps a target, the frontiers up to
``keep_bonus_m`` dearer: it marches a band and grows it until those are in it. ``any_reachable`` answers whether
any frontier is listed from the cells of finite cost, without a march. Both must answer as the whole march does.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_banded_field import closed_room_grid
from test_field_cache import R_M

from goat_core.control import frontier as frontier_module
from goat_core.control.frontier import FrontierConfig, FrontierExplorer
from goat_core.control.planner import PlannerConfig, PlanningField, build_field
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.types import Pose2D


def holed_grid(seed: int) -> OccupancyGrid:
    """``closed_room_grid`` with unknown patches of 1.2-2 m (frontiers all round) and short walls at random."""
    rng = np.random.default_rng(seed)
    grid = closed_room_grid()
    for _ in range(4):
        lo = rng.uniform(-3.0, 1.5, size=2)
        a, b = grid.cell_of(*lo), grid.cell_of(*(lo + rng.uniform(1.2, 2.0, size=2)))
        grid.explored[a[0]:b[0], a[1]:b[1]] = 0
    for _ in range(3):
        a = grid.cell_of(*rng.uniform(-3.0, 3.0, size=2))
        n = int(rng.integers(10, 40))
        if rng.random() < 0.5:
            grid.obstacle[a[0], a[1]:a[1] + n] = 1
        else:
            grid.obstacle[a[0]:a[0] + n, a[1]] = 1
    grid.recompute_bounds()
    return grid


def fields(grid: OccupancyGrid, pose: Pose2D) -> tuple[PlanningField, PlanningField]:
    """The same field twice: one not marched yet, one whose whole march ran."""
    lazy, whole = (build_field(grid, pose, R_M, PlannerConfig()) for _ in range(2))
    whole.distances.full()
    return lazy, whole


def same(got: list, want: list) -> None:  # type: ignore[type-arg]
    assert [(f.target_cell, f.distance_m, f.size_cells) for f in got] == \
        [(f.target_cell, f.distance_m, f.size_cells) for f in want]
    for f, g in zip(got, want, strict=True):
        np.testing.assert_array_equal(f.target_xy_m, g.target_xy_m)


POSES = [Pose2D(0.0, 0.0, 0.0), Pose2D(2.2, -2.3, 1.0), Pose2D(-0.4, 2.4, 0.0), Pose2D(2.5, 2.5, 0.0)]


# (FRONTIER_BAND_PER_M, FRONTIER_BAND_PAD_M): the defaults, and first bands far too short, so that every way the
# band grows is taken (no frontier reached; the nearest reached but not keep_bonus_m past it).
@pytest.mark.parametrize("guess", [None, (0.0, 0.0), (0.5, 0.0)])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_choosing_on_a_banded_field_gives_the_whole_marchs_frontier(
        seed: int, guess: tuple[float, float] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if guess is not None:
        monkeypatch.setattr(frontier_module, "FRONTIER_BAND_PER_M", guess[0])
        monkeypatch.setattr(frontier_module, "FRONTIER_BAND_PAD_M", guess[1])
    grid = holed_grid(seed)
    rng = np.random.default_rng(100 + seed)
    banded = compared = 0
    for pose in POSES:
        lazy_fld, whole_fld = fields(grid, pose)
        whole_list = FrontierExplorer(FrontierConfig()).candidates(grid, whole_fld)
        # the nearest first, and those up to the bonus past it: the whole list's entries that far, in order
        for beyond_m in (0.0, 1.0, 3.0):
            lazy_fld, whole_fld = fields(grid, pose)
            got = FrontierExplorer(FrontierConfig())._nearest_first(grid, lazy_fld, beyond_m)
            if not whole_list:
                assert got == []
                continue
            need_m = whole_list[0].distance_m + beyond_m
            assert len(got) >= sum(f.distance_m <= need_m for f in whole_list)
            same(got, whole_list[:len(got)])
        # whole choices: a kept target near each candidate in turn, and frontiers given up one after another
        for keep in [None] + whole_list[:6]:
            lazy_fld, whole_fld = fields(grid, pose)
            lazy, whole = FrontierExplorer(FrontierConfig()), FrontierExplorer(FrontierConfig())
            if keep is not None:  # a previous target a little off the candidate
                lazy.current = whole.current = dataclass_moved(keep, rng.uniform(-0.3, 0.3, size=2))
            for _ in range(3):
                got, want = lazy.choose(grid, lazy_fld), whole.choose(grid, whole_fld)
                assert (got is None) == (want is None)
                if want is None:
                    break
                same([got], [want])  # type: ignore[list-item]
                np.testing.assert_array_equal(lazy_fld.path_xy(got.target_cell),  # type: ignore[union-attr]
                                              whole_fld.path_xy(want.target_cell))
                compared += 1
                lazy.mark_failed(got.target_xy_m)  # type: ignore[union-attr]
                whole.mark_failed(want.target_xy_m)
            banded += lazy_fld.distances._full is None
    assert compared >= 20 and banded >= 4  # enough choices made on a band alone for the comparison to mean something


def dataclass_moved(f: frontier_module.Frontier, offset_m: np.ndarray) -> frontier_module.Frontier:
    return frontier_module.Frontier(target_xy_m=f.target_xy_m + offset_m, target_cell=f.target_cell,
                                    distance_m=f.distance_m, size_cells=f.size_cells)


@pytest.mark.parametrize("pose", POSES + [Pose2D(-2.0, -2.0, 0.0)])  # the last one inside the closed box
def test_whether_any_frontier_is_reachable_is_answered_without_a_march(pose: Pose2D) -> None:
    grid = holed_grid(0)
    lazy_fld, whole_fld = fields(grid, pose)
    explorer = FrontierExplorer(FrontierConfig())
    want = explorer.candidates(grid, whole_fld)
    assert explorer.any_reachable(grid, lazy_fld) == bool(want)
    assert (explorer.choose(grid, lazy_fld) is None) == (not want)
    if not want:  # nothing reachable: neither reader marched
        assert lazy_fld.distances._full is None and lazy_fld.distances._band is None
    assert (pose.x_m == -2.0) != bool(want)  # the box is closed; frontiers are reachable from the room
