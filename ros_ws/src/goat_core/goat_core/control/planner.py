"""Geodesic planning with the fast marching method on the inflated occupancy grid.

One FMM (Sethian, PNAS 1996; scikit-fmm) per step gives the geodesic distance from the robot to every cell
of the planning crop; frontier costs, goal reachability and paths are all read from that one field. Unknown
cells are traversable (optimistic planning, as in frontier exploration since Yamauchi, CIRA 1997). Seen
obstacles and collision marks are inflated by the robot radius (impassable) and by a further margin in which
the front moves slower, like the decaying inflation cost of nav2's costmap: paths keep clear of obstacles
where there is room, yet a goal next to furniture or a tight gap stays reachable. The field is a travel time
in metres of clear floor. It is computed on cells ``downsample`` times coarser than the map to bound its cost
(FMM is O(n log n) in the number of cells); a coarse cell is passable only if all of its fine cells are, so
coarsening never opens a gap.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, cast

import cv2
import numpy as np
import skfmm

from goat_core.errors import GoatError, require_positive
from goat_core.mapping.occupancy import CropBox, OccupancyGrid
from goat_core.types import Pose2D

# Length of each of the 3x3 neighbour moves, in cells (the centre is never chosen).
_STEP_LEN = np.array([[math.sqrt(2.0), 1.0, math.sqrt(2.0)], [1.0, np.inf, 1.0], [math.sqrt(2.0), 1.0,
                                                                                   math.sqrt(2.0)]])


@dataclass(frozen=True)
class PlannerConfig:
    """Planning-grid and path-following parameters (the robot radius comes from the agent config)."""

    inflation_margin_m: float = 0.1  # clearance beyond the robot radius: absorbs the heading slack
    margin_speed: float = 0.25  # relative speed inside the margin: a metre there costs four
    downsample: int = 2  # plan on cells this many map cells wide (0.1 m at 5 cm maps)
    crop_margin_m: float = 1.0  # unknown space around the known map the planner may route through
    lookahead_m: float = 1.0  # farthest path point steered to, if in straight line of sight

    def __post_init__(self) -> None:
        require_positive(self, ("crop_margin_m", "lookahead_m"))
        if self.inflation_margin_m < 0.0:
            raise ValueError(f"PlannerConfig.inflation_margin_m must be >= 0, got {self.inflation_margin_m}")
        if not 0.0 < self.margin_speed <= 1.0:
            raise ValueError(f"PlannerConfig.margin_speed must be in (0, 1], got {self.margin_speed!r}")
        if self.downsample < 1:
            raise ValueError(f"PlannerConfig.downsample must be >= 1, got {self.downsample!r}")


def disk_kernel(radius_cells: float) -> np.ndarray:
    """A uint8 disk structuring element of the given radius (at least one cell wide)."""
    r = max(0, int(math.ceil(radius_cells - 1e-9)))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    return np.asarray((xx * xx + yy * yy <= radius_cells * radius_cells + 1e-9) | ((xx == 0) & (yy == 0)),
                      dtype=np.uint8)


def inflate(blocked: np.ndarray, radius_cells: float) -> np.ndarray:
    """Dilate a bool mask by a disk: the cells a robot centre of that radius cannot occupy."""
    if radius_cells <= 0:
        return blocked.copy()
    out = cv2.dilate(blocked.astype(np.uint8), disk_kernel(radius_cells))
    return np.asarray(out > 0)


def block_all(mask: np.ndarray, k: int) -> np.ndarray:
    """k x k blocks that are entirely True (shape must be divisible by k)."""
    if k == 1:
        return mask
    # k * k strided ANDs: an order of magnitude faster than a reduction over a reshaped view's axes.
    out = mask[0::k, 0::k].copy()
    for a in range(k):
        for b in range(k):
            if a or b:
                out &= mask[a::k, b::k]
    return out


def block_any(mask: np.ndarray, k: int) -> np.ndarray:
    """k x k blocks with any True cell (shape must be divisible by k)."""
    if k == 1:
        return mask
    out = mask[0::k, 0::k].copy()
    for a in range(k):
        for b in range(k):
            if a or b:
                out |= mask[a::k, b::k]
    return out


def geodesic_distance(traversable: np.ndarray, source: tuple[int, int], cell_m: float,
                      speed: np.ndarray | None = None, band_m: float = 0.0) -> np.ndarray:
    """Travel cost from ``source`` to every cell through traversable cells; inf where unreachable or blocked.

    Without ``speed`` the cost is the geodesic distance in metres; with a (h, w) relative speed in (0, 1] it
    is the travel time at unit top speed (metres of clear floor). A positive ``band_m`` stops the march once the
    front has passed that cost (scikit-fmm's narrow band): the cells it reached hold the values of the whole
    march (cells are accepted in increasing cost, each from cells accepted before it), the others inf.
    """
    i, j = source
    h, w = traversable.shape
    if not (0 <= i < h and 0 <= j < w):
        raise GoatError(f"planning source cell {source} lies outside the {h}x{w} planning grid")
    if not traversable[i, j]:
        raise GoatError(f"planning source cell {source} is not traversable")
    if not (
            (i > 0 and traversable[i - 1, j]) or (i + 1 < h and traversable[i + 1, j])
            or (j > 0 and traversable[i, j - 1]) or (j + 1 < w and traversable[i, j + 1])):
        # No traversable side neighbour (a drifting pose can put the robot in a pocket of its own map):
        # scikit-fmm finds no zero contour and raises; nothing is reachable from it.
        dist = np.full(traversable.shape, np.inf)
        dist[i, j] = 0.0
        return dist
    phi = np.ones(traversable.shape, dtype=np.float64)
    phi[i, j] = -1.0
    phi_masked = np.ma.MaskedArray(phi, mask=~traversable)
    if speed is None:
        field = skfmm.distance(phi_masked, dx=cell_m, narrow=band_m)
    else:
        field = skfmm.travel_time(phi_masked, speed, dx=cell_m, narrow=band_m)
    # scikit-fmm masks the cells the front never reaches (components cut off from the source).
    dist = np.ma.filled(field.astype(np.float64), np.inf)
    dist[~traversable] = np.inf
    dist[i, j] = 0.0
    return np.asarray(dist)


def descend(distance: np.ndarray, target: tuple[int, int]) -> np.ndarray:
    """Steepest descent of the distance field from ``target`` to the source: (K, 2) cells, source first.

    Each step moves to the 8-neighbour with the largest drop per unit length. Returns an empty array when the
    target is unreachable.
    """
    i, j = target
    if not np.isfinite(distance[i, j]):
        return np.empty((0, 2), dtype=np.int64)
    padded = np.pad(distance, 1, constant_values=np.inf)
    cells = [(i, j)]
    for _ in range(distance.size):
        here = padded[i + 1, j + 1]
        window = padded[i:i + 3, j:j + 3]
        slope = (window - here) / _STEP_LEN
        k = int(np.argmin(slope))
        if not slope.flat[k] < 0.0:
            break
        i, j = i + k // 3 - 1, j + k % 3 - 1
        cells.append((i, j))
    return np.array(cells[::-1], dtype=np.int64)


def line_of_sight(traversable: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """True if the segment between cell coordinates a and b (floats) crosses only traversable cells."""
    n = int(math.ceil(2.0 * float(np.max(np.abs(b - a))))) + 1
    t = np.linspace(0.0, 1.0, n + 1)[:, None]
    samples = np.floor(a + t * (b - a)).astype(np.int64)
    h, w = traversable.shape
    if np.any((samples < 0) | (samples >= (h, w))):
        return False
    return bool(np.all(traversable[samples[:, 0], samples[:, 1]]))


# How far past the cost a read asks for a banded march goes on: the read then relies on no cell of a cost up to
# its limit being left out of the band, which holds for a march that accepts cells in increasing cost; the slack
# covers the second-order scheme's small departures from that order.
BAND_SLACK_M = 0.5


class FieldDistances:
    """A field's FMM travel costs, marched when first read: over the whole crop (:meth:`full`), or, for a read
    that needs only the cells up to some cost, as far as that cost (:meth:`within`).

    Both are functions of the same inputs (traversable cells, source cell, cell size, speeds), so a field whose
    distances are never read runs no FMM, and one read only near the robot runs the part of the march that
    reaches that far. ``on_march`` is called before each march, banded or whole (benchmarks count them).
    """

    def __init__(self, traversable: np.ndarray, source: tuple[int, int], cell_m: float, speed: np.ndarray,
                 on_march: Optional[Callable[[], None]] = None) -> None:
        self.traversable = traversable
        self.source = source
        self.cell_m = cell_m
        self.speed = speed
        self._on_march = on_march
        self._full: Optional[np.ndarray] = None
        self._band: Optional[tuple[float, np.ndarray]] = None  # (limit, costs exact up to it, inf beyond)
        self._reachable: Optional[np.ndarray] = None

    def full(self) -> np.ndarray:
        """(h, w) travel cost from the source to every cell, inf where unreachable (read-only)."""
        if self._full is None:
            self._marching()
            full = geodesic_distance(self.traversable, self.source, self.cell_m, self.speed)
            full.setflags(write=False)
            self._full = full
        return self._full

    def within(self, limit_m: float) -> np.ndarray:
        """Costs that equal :meth:`full`'s at every cell whose cost is at most ``limit_m``; every other cell holds
        its cost or inf (read-only). The whole march's, once it ran; else a march that stops past the limit."""
        if self._full is not None:
            return self._full
        if self._band is not None and self._band[0] >= limit_m:
            return self._band[1]
        self._marching()
        band = geodesic_distance(self.traversable, self.source, self.cell_m, self.speed, limit_m + BAND_SLACK_M)
        band[band > limit_m] = np.inf  # the cells of the slack are left out: those beyond it were not reached
        band.setflags(write=False)
        self._band = (limit_m, band)
        return band

    def _marching(self) -> None:
        if self._on_march is not None:
            self._on_march()

    def for_descent(self, target: tuple[int, int]) -> np.ndarray:
        """Costs a descent from ``target`` can follow: a banded march's when it holds the target (every cell of a
        lower cost then holds its own, and a cell of a higher cost is never stepped to), else the whole march's."""
        if self._full is None and self._band is not None and np.isfinite(self._band[1][target]):
            return self._band[1]
        return self.full()

    def reachable(self) -> np.ndarray:
        """(h, w) bool: the cells of finite cost, without marching when no march ran (the source's 4-connected
        component of traversable cells, where the front of the march goes)."""
        if self._full is not None:
            return np.isfinite(self._full)
        if self._reachable is None:
            i, j = self.source
            h, w = self.traversable.shape
            open_side = ((i > 0 and self.traversable[i - 1, j]) or (i + 1 < h and self.traversable[i + 1, j])
                         or (j > 0 and self.traversable[i, j - 1]) or (j + 1 < w and self.traversable[i, j + 1]))
            if open_side:
                _, labels = cv2.connectedComponents(self.traversable.astype(np.uint8), connectivity=4)
                reach = labels == labels[i, j]
            else:  # as geodesic_distance: nothing is reachable from a cell without a traversable side
                reach = np.zeros(self.traversable.shape, dtype=bool)
                reach[i, j] = True
            reach.setflags(write=False)
            self._reachable = reach
        return self._reachable


@dataclass(eq=False)
class PlanningField:
    """One step's planning crop: traversable cells and the geodesic distance from the robot (coarse cells)."""

    box: CropBox  # the fine-grid crop this field covers
    origin_xy_m: np.ndarray  # (2,) episode xy of the crop's corner
    cell_m: float
    traversable: np.ndarray  # (h, w) bool: the base touches nothing
    clear: np.ndarray  # (h, w) bool: traversable and outside the safety margin
    distances: FieldDistances  # travel costs from the robot, marched when read (distance_m, or within a cost)
    robot_cell: tuple[int, int]
    robot_xy_m: np.ndarray  # (2,)
    blocked: np.ndarray  # (H, W) bool map-resolution crop: obstacle and collision cells
    touching: np.ndarray  # (H, W) bool map-resolution crop: a robot centred here touches an obstacle
    map_res_m: float
    margin_cells: int  # width of the safety margin in planning cells, rounded up

    @property
    def distance_m(self) -> np.ndarray:
        """(h, w) float travel cost from the robot, inf where unreachable (the whole FMM, run on first read)."""
        return self.distances.full()

    def forward_free(self, yaw_rad: float, distance_m: float) -> bool:
        """Whether the base can move ``distance_m`` along ``yaw_rad`` without touching a mapped obstacle.

        Samples the straight move every half map cell. A robot that already touches something (it grazed an
        obstacle) is only kept from driving its centre into an obstacle cell, so it can always back out. The
        map cell the robot's centre stands in is not checked: whatever the map holds there does not stop the
        base, which stands on it (large-furnished 1000-3: one obstacle cell under the robot blocked every
        heading, and it turned left and right in place for 2800 actions).
        """
        n = max(1, int(math.ceil(2.0 * distance_m / self.map_res_m)))
        t = np.linspace(0.0, distance_m, n + 1)
        xy = self.robot_xy_m + t[:, None] * np.array([math.cos(yaw_rad), math.sin(yaw_rad)])
        cells = np.floor((xy - self.origin_xy_m) / self.map_res_m).astype(np.int64)
        h, w = self.touching.shape
        if np.any((cells < 0) | (cells >= (h, w))):
            return False
        layer = self.blocked if self.touching[cells[0, 0], cells[0, 1]] else self.touching
        ahead = np.any(cells != cells[0], axis=1)
        return not bool(np.any(layer[cells[ahead, 0], cells[ahead, 1]]))

    def to_cells(self, xy_m: np.ndarray) -> np.ndarray:
        """(N, 2) episode xy -> (N, 2) crop cells (may fall outside the crop)."""
        rel = np.asarray(xy_m, dtype=np.float64) - self.origin_xy_m
        return np.floor(rel / self.cell_m).astype(np.int64)

    def to_xy(self, cells: np.ndarray) -> np.ndarray:
        """(N, 2) crop cells -> (N, 2) episode xy of the cell centres."""
        return (np.asarray(cells, dtype=np.float64) + 0.5) * self.cell_m + self.origin_xy_m

    def contains(self, cells: np.ndarray) -> np.ndarray:
        h, w = self.traversable.shape
        return np.asarray((cells[:, 0] >= 0) & (cells[:, 0] < h) & (cells[:, 1] >= 0) & (cells[:, 1] < w))

    def distance_to_m(self, xy_m: np.ndarray) -> Optional[np.ndarray]:
        """Straight-line distance (m) of every cell to the nearest cell of the points ``xy_m`` (N, 2) in the crop;
        None when none of them falls in it."""
        cells = self.to_cells(xy_m)
        cells = cells[self.contains(cells)]
        if cells.shape[0] == 0:
            return None
        away = np.ones(self.traversable.shape, dtype=np.uint8)
        away[cells[:, 0], cells[:, 1]] = 0
        return np.asarray(cv2.distanceTransform(away, cv2.DIST_L2, cv2.DIST_MASK_PRECISE) * self.cell_m)

    def path_xy(self, target_cell: tuple[int, int]) -> np.ndarray:
        """(K, 2) episode xy from the robot's cell to the target cell; empty if unreachable."""
        return self.to_xy(descend(self.distances.for_descent(target_cell), target_cell))

    def waypoint(self, path_xy_m: np.ndarray, lookahead_m: float) -> np.ndarray:
        """The farthest point within ``lookahead_m`` along the path reachable in a straight line.

        The straight line must stay in clear cells, except near the robot and the path's end, where the path
        itself may run inside the margin. Falls back to the first path point past the robot's own cell, so the
        robot always has somewhere to go.
        """
        if path_xy_m.shape[0] == 0:
            return self.robot_xy_m.copy()
        seg = np.linalg.norm(np.diff(path_xy_m, axis=0), axis=1)
        arc = np.concatenate([[0.0], np.cumsum(seg)])
        last = int(np.searchsorted(arc, lookahead_m, side="right")) - 1
        if last < 1:
            return np.asarray(path_xy_m[min(1, path_xy_m.shape[0] - 1)])
        allowed = self.clear.copy()
        robot_c = (self.robot_xy_m - self.origin_xy_m) / self.cell_m
        end_c = (path_xy_m[-1] - self.origin_xy_m) / self.cell_m
        for centre in (robot_c, end_c):
            disk = np.zeros(allowed.shape, dtype=np.uint8)
            cv2.circle(disk, (int(centre[1]), int(centre[0])), self.margin_cells + 1, 1, thickness=-1)
            allowed |= (disk > 0) & self.traversable
        for k in range(last, 0, -1):
            if line_of_sight(allowed, robot_c, (path_xy_m[k] - self.origin_xy_m) / self.cell_m):
                return np.asarray(path_xy_m[k])
        return np.asarray(path_xy_m[1])


def planning_box(grid: OccupancyGrid, pose: Pose2D, config: PlannerConfig,
                 include_xy_m: np.ndarray | None = None) -> CropBox:
    """The crop a field plans over: the known map, the robot and the ``include_xy_m`` points, plus a margin."""
    k = config.downsample
    pts = np.array([[pose.x_m, pose.y_m]])
    if include_xy_m is not None and len(include_xy_m):
        pts = np.concatenate([pts, np.asarray(include_xy_m, dtype=np.float64).reshape(-1, 2)])
    cells = grid.to_cells(pts)
    cells = cells[grid.in_grid(cells)]
    return grid.known_box(int(math.ceil(config.crop_margin_m / grid.resolution_m)), include=cells, multiple_of=k)


def build_field(grid: OccupancyGrid, pose: Pose2D, robot_radius_m: float, config: PlannerConfig,
                include_xy_m: np.ndarray | None = None) -> PlanningField:
    """Inflate, coarsen and run FMM from the robot over the known crop (plus ``include_xy_m`` points)."""
    box = planning_box(grid, pose, config, include_xy_m)
    return _field_in_box(grid, box, grid.blocked(box), grid.trail_crop(box), pose, robot_radius_m, config)


def _robot_cell(grid: OccupancyGrid, box: CropBox, pose: Pose2D, config: PlannerConfig
                ) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """The crop's corner (episode xy), the robot's xy and its planning cell."""
    origin = grid.origin_xy_m + np.array([box.i0, box.j0]) * grid.resolution_m
    robot_xy = np.array([pose.x_m, pose.y_m])
    rc = np.floor((robot_xy - origin) / (grid.resolution_m * config.downsample)).astype(np.int64)
    return origin, robot_xy, (int(rc[0]), int(rc[1]))


def _field_in_box(grid: OccupancyGrid, box: CropBox, blocked: np.ndarray, trail: np.ndarray, pose: Pose2D,
                  robot_radius_m: float, config: PlannerConfig,
                  reuse: Sequence[tuple[float, PlanningField]] = (),
                  on_march: Optional[Callable[[], None]] = None) -> PlanningField:
    """The field over ``box``; its distances are taken from a field of ``reuse`` ((margin_speed, field) pairs)
    whose FMM had the same inputs (crop, source cell, cell size, traversable cells, speeds) instead of run again."""
    k = config.downsample
    res = grid.resolution_m
    touching = inflate(blocked, robot_radius_m / res)
    blocked_k = block_any(blocked, k)
    # Where the robot's centre has been, it fits, whatever the inflated map says: keep the way back open.
    traversable = ~block_any(touching, k) | (block_any(trail, k) & ~blocked_k)
    clear = ~block_any(inflate(blocked, (robot_radius_m + config.inflation_margin_m) / res), k)
    origin, robot_xy, robot_cell = _robot_cell(grid, box, pose, config)
    cell_m = res * k
    margin_cells = int(math.ceil(config.inflation_margin_m / cell_m))
    if not traversable[robot_cell]:
        # The map says the base overlaps something (it grazed an obstacle, or depth noise): near itself, let
        # it move through any cell that is not an obstacle, so it can back out.
        disk = np.zeros(traversable.shape, dtype=np.uint8)
        r = int(math.ceil(robot_radius_m / cell_m)) + 1
        cv2.circle(disk, (robot_cell[1], robot_cell[0]), r, 1, thickness=-1)
        traversable = traversable | ((disk > 0) & ~blocked_k)
        traversable[robot_cell] = True
    # The FMM is a function of these inputs alone: a field that had the same ones has the same distances (a new
    # obstacle cell inside the inflation, or a trail cell where the base already fits, changes none of them).
    dist = next((old.distances for speed_of_old, old in reuse
                 if old.box == box and old.robot_cell == robot_cell and old.cell_m == cell_m
                 and speed_of_old == config.margin_speed and np.array_equal(old.traversable, traversable)
                 and np.array_equal(old.clear, clear)), None)
    if dist is None:
        dist = FieldDistances(traversable, robot_cell, cell_m, np.where(clear, 1.0, config.margin_speed), on_march)
    return PlanningField(box=box, origin_xy_m=origin, cell_m=cell_m, traversable=traversable, clear=clear,
                         distances=dist, robot_cell=robot_cell, robot_xy_m=robot_xy, blocked=blocked,
                         touching=touching, map_res_m=res, margin_cells=margin_cells)


class FieldCache:
    """:func:`build_field` that hands out a recent field again when that field's inputs are unchanged.

    A field is a function of its crop box, the blocked and trail cells in it, the robot's planning cell, the
    radius and the planner settings; the robot's exact xy only says where the base starts (``forward_free``,
    ``waypoint``). So a step that turned or tilted in place without mapping a new obstacle, and the second and
    third field one step asks for (the target's own, the cheapest instance's), get the distances of the FMM
    already run: the same arrays :func:`build_field` would compute, without computing them. Comparing the crops
    costs a fraction of a millisecond, the FMM over a large home's known map tens of milliseconds. The cached
    arrays are read-only, so no consumer can change a field another one reads later. A field whose crop did change
    still takes the distances of a kept field when the FMM's own inputs came out the same (``distances_reused``):
    a newly seen obstacle cell inside the inflation already there, or a trail cell where the base already fits.
    The FMM itself runs when a field's distances are first read (:class:`FieldDistances`), so ``misses`` counts
    fields set up and ``marches`` the marches that ran.
    """

    def __init__(self, size: int = 4) -> None:
        if size < 1:
            raise ValueError(f"FieldCache size must be >= 1, got {size!r}")
        self.size = size  # fields kept, most recent first (one step may ask for fields over 2-3 crops)
        self._entries: list[tuple[tuple[object, ...], np.ndarray, np.ndarray, PlanningField]] = []
        self.hits = 0  # fields handed out again (for benchmarks)
        self.misses = 0  # fields computed
        self.distances_reused = 0  # of the fields computed, those whose FMM inputs matched a kept field's
        self.marches = 0  # FMM marches run for the fields handed out, banded or whole (fields march when read)

    def build(self, grid: OccupancyGrid, pose: Pose2D, robot_radius_m: float, config: PlannerConfig,
              include_xy_m: np.ndarray | None = None) -> PlanningField:
        """What ``build_field(grid, pose, robot_radius_m, config, include_xy_m)`` returns."""
        box = planning_box(grid, pose, config, include_xy_m)
        blocked, trail = grid.blocked(box), grid.trail_crop(box)
        _, robot_xy, robot_cell = _robot_cell(grid, box, pose, config)
        key = (id(grid), box, robot_cell, robot_radius_m, config)
        for n, (k, old_blocked, old_trail, fld) in enumerate(self._entries):
            if k == key and np.array_equal(blocked, old_blocked) and np.array_equal(trail, old_trail):
                self.hits += 1
                self._entries.insert(0, self._entries.pop(n))
                return dataclasses.replace(fld, robot_xy_m=robot_xy)
        self.misses += 1
        kept = [(cast(PlannerConfig, k[4]).margin_speed, f) for k, _, _, f in self._entries]
        fld = _field_in_box(grid, box, blocked, trail, pose, robot_radius_m, config, kept, self._count_march)
        if any(fld.distances is f.distances for _, f in kept):
            self.distances_reused += 1
        for array in (fld.traversable, fld.clear, fld.blocked, fld.touching, trail):
            array.setflags(write=False)
        self._entries.insert(0, (key, blocked, trail, fld))
        del self._entries[self.size:]
        return fld

    def _count_march(self) -> None:
        self.marches += 1
