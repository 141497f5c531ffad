"""Frontier exploration (Yamauchi, CIRA 1997): go to the nearest reachable border of free and unknown space.

Frontier cells are explored, obstacle-free map cells with an unknown 4-neighbour. Unknown pockets fully
enclosed by explored cells and smaller than ``max_hole_m2`` (floor hidden behind furniture) are not
frontiers: looking at them again rarely reveals them and chasing them wastes steps. Frontier cells are
grouped by 8-connectivity; clusters shorter than ``min_cluster_cells`` are dropped. Each cluster is scored
by the geodesic distance to its nearest reachable cell (read from the step's FMM field), with a bonus for
the cluster the robot is already heading to, so near-ties do not make it dither. Frontiers the agent gave up
on are remembered and masked out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import cv2
import numpy as np

from goat_core.control.planner import PlanningField
from goat_core.mapping.occupancy import OccupancyGrid

_CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=np.uint8)

# How far `choose` first marches a field: this many times the straight distance to the nearest reachable frontier
# cell, plus the pad (a guess of the nearest frontier's cost; it changes how much is marched, never the choice).
FRONTIER_BAND_PER_M = 1.5
FRONTIER_BAND_PAD_M = 1.0
FRONTIER_BANDS = 3  # banded marches tried before the whole march decides


@dataclass(frozen=True)
class FrontierConfig:
    """Which frontiers count and how one is chosen."""

    min_cluster_cells: int = 5  # 0.25 m of frontier at 5 cm cells
    max_hole_m2: float = 1.0  # enclosed unknown pockets up to this area (behind furniture) are skipped
    failed_radius_m: float = 0.5  # frontier cells this close to a failed target are ignored
    keep_bonus_m: float = 1.0  # the current target's cluster looks this much nearer (hysteresis)
    keep_radius_m: float = 0.5  # a cluster within this distance of the current target is "the same"

    def __post_init__(self) -> None:
        if self.min_cluster_cells < 1:
            raise ValueError(f"FrontierConfig.min_cluster_cells must be >= 1, got {self.min_cluster_cells!r}")
        for name in ("max_hole_m2", "failed_radius_m", "keep_bonus_m", "keep_radius_m"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"FrontierConfig.{name} must be >= 0, got {getattr(self, name)!r}")


@dataclass(frozen=True, eq=False)
class Frontier:
    """One frontier cluster and where to go to explore it."""

    target_xy_m: np.ndarray  # (2,) the cluster's cell nearest to the robot along the geodesic
    target_cell: tuple[int, int]  # that cell in the planning field
    distance_m: float  # geodesic distance from the robot to the target
    size_cells: int  # frontier cells in the cluster (map cells)


def frontier_mask(grid: OccupancyGrid, field: PlanningField, max_hole_m2: float) -> np.ndarray:
    """Bool mask of frontier cells over the field's crop of the map (fine cells)."""
    box = field.box
    explored = grid.explored_crop(box)
    free = explored & ~grid.blocked(box)
    unknown = (~explored).astype(np.uint8)
    max_hole_cells = max_hole_m2 / grid.resolution_m ** 2
    _, labels, stats, _ = cv2.connectedComponentsWithStats(unknown, connectivity=4)
    h, w = unknown.shape
    x, y, bw, bh, area = (stats[:, c] for c in range(5))
    enclosed = (x > 0) & (y > 0) & (x + bw < w) & (y + bh < h) & (area <= max_hole_cells)
    enclosed[0] = False  # label 0 is the explored background
    if np.any(enclosed):
        unknown[enclosed[labels]] = 0
    near_unknown = cv2.dilate(unknown, _CROSS) > 0
    return np.asarray(free & near_unknown)


@dataclass(frozen=True, eq=False)
class _FrontierCells:
    """The frontier cells a ranking looks at (map cells of the crop) and what it needs of them."""

    fi: np.ndarray  # (N,) row of each cell
    fj: np.ndarray  # (N,) column
    lab: np.ndarray  # (N,) its cluster's label
    areas: np.ndarray  # (labels,) cells of each cluster
    coarse: tuple[np.ndarray, np.ndarray]  # each cell's planning cell (rows, columns)
    origin_xy_m: np.ndarray  # (2,) episode xy of the crop's first map cell's corner
    res_m: float  # map cell size


class FrontierExplorer:
    """Stateful frontier choice: remembers failed frontiers and the current target."""

    def __init__(self, config: FrontierConfig) -> None:
        self.config = config
        self.failed_xy_m: list[np.ndarray] = []
        self.current: Optional[Frontier] = None

    def reset(self) -> None:
        self.failed_xy_m.clear()
        self.current = None

    def mark_failed(self, xy_m: np.ndarray) -> None:
        """Never choose frontier cells near this point again (until reset)."""
        self.failed_xy_m.append(np.asarray(xy_m, dtype=np.float64).copy())
        self.current = None

    def _cells(self, grid: OccupancyGrid, field: PlanningField) -> _FrontierCells:
        """The frontier cells of clusters big enough, not near a failed target (whatever their cost)."""
        cfg = self.config
        mask = frontier_mask(grid, field, cfg.max_hole_m2)
        res = grid.resolution_m
        origin = grid.origin_xy_m + np.array([field.box.i0, field.box.j0]) * res
        if self.failed_xy_m:
            veto = np.zeros(mask.shape, dtype=np.uint8)
            r = int(math.ceil(cfg.failed_radius_m / res))
            for xy in self.failed_xy_m:
                c = np.floor((xy - origin) / res).astype(np.int64)
                cv2.circle(veto, (int(c[1]), int(c[0])), r, 1, thickness=-1)
            mask &= veto == 0
        _, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
        fi, fj = np.nonzero(mask)
        lab = labels[fi, fj]
        keep = stats[lab, cv2.CC_STAT_AREA] >= cfg.min_cluster_cells
        fi, fj, lab = fi[keep], fj[keep], lab[keep]
        k = field.box.shape[0] // field.traversable.shape[0]
        return _FrontierCells(fi, fj, lab, stats[:, cv2.CC_STAT_AREA], (fi // k, fj // k), origin, res)

    @staticmethod
    def _ranked(cells: _FrontierCells, costs: np.ndarray) -> list[Frontier]:
        """The clusters with a cell of finite cost in ``costs``, each at its cheapest cell, nearest first."""
        dist = costs[cells.coarse]
        keep = np.isfinite(dist)
        fi, fj, lab, dist = cells.fi[keep], cells.fj[keep], cells.lab[keep], dist[keep]
        if fi.size == 0:
            return []
        ci, cj = cells.coarse[0][keep], cells.coarse[1][keep]
        order = np.lexsort((fj, fi, dist, lab))
        first = order[np.flatnonzero(np.diff(lab[order], prepend=-1))]
        out = []
        for idx in first:
            cell = (int(ci[idx]), int(cj[idx]))
            xy = cells.origin_xy_m + (np.array([fi[idx], fj[idx]]) + 0.5) * cells.res_m
            out.append(Frontier(target_xy_m=xy, target_cell=cell, distance_m=float(dist[idx]),
                                size_cells=int(cells.areas[lab[idx]])))
        out.sort(key=lambda f: (f.distance_m, f.target_cell))
        return out

    def candidates(self, grid: OccupancyGrid, field: PlanningField) -> list[Frontier]:
        """Reachable frontier clusters, nearest first (ties broken by cell index, so the order is stable)."""
        return self._ranked(self._cells(grid, field), field.distance_m)

    def any_reachable(self, grid: OccupancyGrid, field: PlanningField) -> bool:
        """Whether :meth:`candidates` would list any frontier, without marching the field's FMM (the cells of
        finite cost are the source's component of traversable cells)."""
        cells = self._cells(grid, field)
        return bool(np.any(field.distances.reachable()[cells.coarse]))

    def _nearest_first(self, grid: OccupancyGrid, field: PlanningField, beyond_best_m: float) -> list[Frontier]:
        """:meth:`candidates`' first entries: all of them up to ``beyond_best_m`` past the nearest one's cost (the
        whole list when that is all there is), from the field's FMM marched only as far as that.

        A march stopped past a cost ``limit`` holds the whole march's cost at every cell that costs no more, and
        leaves the dearer ones out, so each cluster whose cheapest cell costs at most ``limit`` is ranked at that
        cell, ties included, and the others are left out: the list is the whole list's entries up to ``limit``.
        It is first marched to a guess (``FRONTIER_BAND_PER_M`` times the straight distance to the nearest
        reachable frontier cell, plus ``FRONTIER_BAND_PAD_M`` and ``beyond_best_m``), then, when that reached no
        frontier, twice as far, and when it reached one but not ``beyond_best_m`` past it, exactly that far; after
        ``FRONTIER_BANDS`` bands, the whole march decides.
        """
        cells = self._cells(grid, field)
        reach = field.distances.reachable()[cells.coarse]
        if not np.any(reach):
            return []
        xy = cells.origin_xy_m + (np.column_stack([cells.fi[reach], cells.fj[reach]]) + 0.5) * cells.res_m
        nearest_m = float(np.min(np.linalg.norm(xy - field.robot_xy_m, axis=1)))
        limit_m = FRONTIER_BAND_PER_M * nearest_m + FRONTIER_BAND_PAD_M + beyond_best_m
        for _ in range(FRONTIER_BANDS):
            ranked = self._ranked(cells, field.distances.within(limit_m))
            if ranked and ranked[0].distance_m + beyond_best_m <= limit_m:
                return ranked
            limit_m = ranked[0].distance_m + beyond_best_m if ranked else 2.0 * limit_m
        return self._ranked(cells, field.distance_m)

    def choose(self, grid: OccupancyGrid, field: PlanningField) -> Optional[Frontier]:
        """The frontier to explore now, or None when nothing reachable is left."""
        # it reads the nearest frontier and, when it keeps a target, those up to keep_bonus_m dearer
        cands = self._nearest_first(grid, field, 0.0 if self.current is None else self.config.keep_bonus_m)
        if not cands:
            self.current = None
            return None
        best = cands[0]
        if self.current is not None:
            cfg = self.config
            prev = self.current.target_xy_m
            for f in cands:
                near_prev = float(np.linalg.norm(f.target_xy_m - prev)) <= cfg.keep_radius_m
                if near_prev and f.distance_m - cfg.keep_bonus_m < best.distance_m:
                    best = f
                    break
        self.current = best
        return best
