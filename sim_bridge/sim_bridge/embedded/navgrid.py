"""Navigable grid of a home and geodesic distances on it (the embedded simulator's navmesh).

Cells are squares of ``resolution_m``; cell (row, col) covers x in [ox + col * res, ox + (col + 1) * res) and
y in [oy + row * res, oy + (row + 1) * res), world frame. Rows grow with y, so a plotted grid needs
``origin="lower"``. A cell is navigable when the robot disk centred on it touches no obstacle and it belongs
to the largest connected free region. Geodesic distances come from the fast marching method (scikit-fmm) on
the navigable cells, as in the FMM planners of SemExp (Chaplot et al., NeurIPS 2020) and home-robot.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Union

import numpy as np
import skfmm
from scipy import ndimage

from goat_core.errors import SceneGenerationError, UnreachableGoalError
from sim_bridge.embedded.furnishing import furnisher
from sim_bridge.embedded.home_types import Home, ObjectSpec

DEFAULT_GRID_RESOLUTION_M = 0.05
# Models: only their faces up to this height block the robot (the Stretch is 1.41 m tall; the agent's map counts
# depth points up to 1.5 m as obstacles). Primitive objects block their whole bounding box.
MODEL_OBSTACLE_HEIGHT_M = 1.5
# Objects on the floor whose top (world z; the floor is z = 0) is below this height do not block the robot: it
# drives over them (a book, a bowl, a flat basket). 0.1 m is what the agent's depth map cannot tell from the floor
# (goat_core OccupancyConfig.obstacle_min_height_m: points below 0.1 m are floor), so no obstacle is invisible to
# the agent; about the Stretch's drive wheel diameter (0.1016 m). Habitat, which GOAT-Bench runs on, is more lenient:
# its navmesh steps over anything below NavMeshSettings.agent_max_climb, 0.2 m by default. docs/homes.md.
FLOOR_CLIMB_HEIGHT_M = 0.1
PointLike = Union[Sequence[float], np.ndarray]
GRID_PAD_CELLS = 2  # blocked border around the home, so every free cell has all its neighbours in the grid


class NavGrid:
    """Obstacles, walls and the navigable free space of a home on a regular grid."""

    def __init__(self, obstacle: np.ndarray, wall: np.ndarray, origin_xy_m: PointLike,
                 resolution_m: float, robot_radius_m: float) -> None:
        """``obstacle`` and ``wall`` are (H, W) bool; walls (and the outside) also block line of sight."""
        if not (math.isfinite(resolution_m) and resolution_m > 0.0):
            raise SceneGenerationError(f"grid resolution_m must be a positive number, got {resolution_m!r}")
        if not (math.isfinite(robot_radius_m) and robot_radius_m >= 0.0):
            raise SceneGenerationError(f"robot_radius_m must be a number >= 0, got {robot_radius_m!r}")
        obstacle = np.asarray(obstacle, dtype=bool)
        wall = np.asarray(wall, dtype=bool)
        if obstacle.ndim != 2 or wall.shape != obstacle.shape:
            raise SceneGenerationError(
                f"obstacle and wall grids must be 2D of one shape, got {obstacle.shape} and {wall.shape}")
        self.resolution_m = float(resolution_m)
        self.robot_radius_m = float(robot_radius_m)
        self.origin_xy_m = np.asarray(origin_xy_m, dtype=np.float64).reshape(2)
        self.obstacle = obstacle | wall
        self.wall = wall
        # Distance from a cell centre to the nearest obstacle cell's boundary (half a cell nearer than its
        # centre): the robot disk on a navigable cell centre clears every obstacle cell.
        res = self.resolution_m
        clearance_m = ndimage.distance_transform_edt(~self.obstacle) * res - res / 2
        self.navigable = _largest_component(clearance_m > self.robot_radius_m)
        if not self.navigable.any():
            raise SceneGenerationError(
                f"scene has no navigable free space for a robot of radius {self.robot_radius_m} m on a "
                f"{obstacle.shape[0]}x{obstacle.shape[1]} grid of {self.resolution_m} m cells")
        self._navigable_flat = np.flatnonzero(self.navigable)
        # For every cell, the nearest navigable cell: points snap there, as habitat snaps to its navmesh.
        _, nearest = ndimage.distance_transform_edt(~self.navigable, return_indices=True)
        self._nearest_rows, self._nearest_cols = nearest[0], nearest[1]

    @classmethod
    def from_home(cls, home: Home, resolution_m: float = DEFAULT_GRID_RESOLUTION_M,
                  robot_radius_m: Optional[float] = None) -> NavGrid:
        """Walls, the outside and the footprints of objects standing on the floor are obstacles (a model's
        footprint: the cells under its faces up to MODEL_OBSTACLE_HEIGHT_M; a primitive's: its bounding box).
        Floor objects whose top is below FLOOR_CLIMB_HEIGHT_M are driven over: they block nothing."""
        if not (math.isfinite(resolution_m) and resolution_m > 0.0):
            raise SceneGenerationError(f"grid resolution_m must be a positive number, got {resolution_m!r}")
        pad = GRID_PAD_CELLS * resolution_m
        lo = np.floor((np.asarray(home.bounds_min_xy_m) - pad) / resolution_m) * resolution_m
        hi = np.asarray(home.bounds_max_xy_m) + pad
        cols, rows = (np.ceil((hi - lo) / resolution_m)).astype(int)
        raster = _Rasteriser(lo, resolution_m, rows, cols)
        inside = np.zeros((rows, cols), dtype=bool)
        t = home.config.wall_thickness_m
        for room in home.rooms:
            for (x0, y0), (x1, y1) in room.rects:
                # The room with its share of the surrounding walls, so door gaps are inside the home.
                raster.fill(inside, x0 - t, y0 - t, x1 + t, y1 + t)
        wall = ~inside
        for box in home.walls:
            raster.fill(wall, box.min_m[0], box.min_m[1], box.max_m[0], box.max_m[1])
        obstacle = wall.copy()
        for obj in home.objects:
            if obj.receptacle_id is not None or obj.bbox_max_m[2] < FLOOR_CLIMB_HEIGHT_M:
                continue
            if obj.model is not None:
                fur = furnisher(home.config.furniture_libraries, home.config.furniture_dir)
                raster.mark(obstacle, fur.footprint_xy(obj.model, obj.position_m, obj.yaw_rad,
                                                       MODEL_OBSTACLE_HEIGHT_M))
            else:
                (x0, y0, _), (x1, y1, _) = obj.bbox_min_m, obj.bbox_max_m
                raster.fill(obstacle, x0, y0, x1, y1)
        radius = home.config.robot_radius_m if robot_radius_m is None else robot_radius_m
        return cls(obstacle, wall, lo, resolution_m, radius)

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.navigable.shape[0]), int(self.navigable.shape[1])

    def world_to_cell(self, xy_m: PointLike) -> tuple[int, int]:
        """(row, col) of the cell holding the point; may lie outside the grid."""
        col = math.floor((float(xy_m[0]) - self.origin_xy_m[0]) / self.resolution_m)
        row = math.floor((float(xy_m[1]) - self.origin_xy_m[1]) / self.resolution_m)
        return row, col

    def world_to_cells(self, xy_m: np.ndarray) -> np.ndarray:
        """(N, 2) int (row, col) of (N, 2) world points."""
        xy = np.asarray(xy_m, dtype=np.float64).reshape(-1, 2)
        return np.floor((xy - self.origin_xy_m) / self.resolution_m)[:, ::-1].astype(np.int64)

    def cell_to_world(self, row: int, col: int) -> np.ndarray:
        """World (x, y) of the cell centre."""
        return self.origin_xy_m + (np.array([col, row], dtype=np.float64) + 0.5) * self.resolution_m

    def in_grid(self, row: int, col: int) -> bool:
        return 0 <= row < self.navigable.shape[0] and 0 <= col < self.navigable.shape[1]

    def is_navigable(self, xy_m: PointLike) -> bool:
        row, col = self.world_to_cell(xy_m)
        return self.in_grid(row, col) and bool(self.navigable[row, col])

    def snap(self, xy_m: PointLike) -> tuple[int, int]:
        """The navigable cell nearest to the point (points off the grid are clamped onto it first)."""
        row, col = self.world_to_cell(xy_m)
        row = min(max(row, 0), self.navigable.shape[0] - 1)
        col = min(max(col, 0), self.navigable.shape[1] - 1)
        return int(self._nearest_rows[row, col]), int(self._nearest_cols[row, col])

    def distance_field(self, targets_xy_m: np.ndarray) -> np.ndarray:
        """(H, W) geodesic metres from every cell to the nearest target; inf off the navigable space.

        Targets are snapped to their nearest navigable cell; several targets make one multi-source field.
        """
        targets = np.asarray(targets_xy_m, dtype=np.float64).reshape(-1, 2)
        if targets.shape[0] == 0 or not np.isfinite(targets).all():
            raise UnreachableGoalError(f"distance_field needs finite (N, 2) target points, got {targets!r}")
        phi = np.ones(self.navigable.shape, dtype=np.float64)
        for xy in targets:
            phi[self.snap(xy)] = 0.0
        # Non-navigable cells are masked out of the march, so distances go around obstacles.
        distance = skfmm.distance(np.ma.MaskedArray(phi, mask=~self.navigable), dx=self.resolution_m)
        return np.ma.filled(distance.astype(np.float64), np.inf)

    def geodesic_distance(self, a_xy_m: PointLike, b_xy_m: PointLike) -> float:
        """Shortest navigable path length between the points, in metres (inf when unreachable)."""
        field = self.distance_field(np.asarray(b_xy_m, dtype=np.float64).reshape(1, 2))
        return float(field[self.snap(a_xy_m)])

    def sample_navigable(self, rng: np.random.Generator) -> np.ndarray:
        """World (x, y) of a navigable cell centre, uniformly over the navigable cells."""
        flat = int(self._navigable_flat[int(rng.integers(self._navigable_flat.size))])
        row, col = divmod(flat, self.navigable.shape[1])
        return self.cell_to_world(row, col)

    def view_points(self, obj: ObjectSpec, radius_m: float = 1.0, spacing_m: float = 0.25) -> np.ndarray:
        """(K, 2) navigable points from which the object is within reach and in sight.

        Points lie on a ``spacing_m`` grid aligned with the world origin, within ``radius_m`` of the object's
        footprint (distance to its 2D bounding box), with no wall cell on the segment from the point to the
        nearest point of the footprint (the GOAT-Bench view points play this role).
        """
        if not (radius_m > 0.0 and spacing_m > 0.0):
            raise SceneGenerationError(f"view_points needs radius_m > 0 and spacing_m > 0, got {radius_m!r}, "
                                       f"{spacing_m!r}")
        lo = np.asarray(obj.bbox_min_m[:2], dtype=np.float64)
        hi = np.asarray(obj.bbox_max_m[:2], dtype=np.float64)
        first = np.ceil((lo - radius_m) / spacing_m)
        last = np.floor((hi + radius_m) / spacing_m)
        axes = [np.arange(first[i], last[i] + 1) * spacing_m for i in (0, 1)]
        points = np.stack(np.meshgrid(axes[0], axes[1], indexing="xy"), axis=-1).reshape(-1, 2)
        nearest = np.clip(points, lo, hi)
        points = points[np.linalg.norm(points - nearest, axis=1) <= radius_m]
        points = points[self._navigable_mask(points)]
        points = points[self._in_sight(points, np.clip(points, lo, hi))]
        if points.shape[0] == 0:
            raise UnreachableGoalError(
                f"object {obj.object_id} ({obj.category}) has no navigable view point within {radius_m} m")
        return points

    def _navigable_mask(self, points: np.ndarray) -> np.ndarray:
        cells = self.world_to_cells(points)
        ok = (cells[:, 0] >= 0) & (cells[:, 0] < self.navigable.shape[0]) & (cells[:, 1] >= 0) \
            & (cells[:, 1] < self.navigable.shape[1])
        ok[ok] = self.navigable[cells[ok, 0], cells[ok, 1]]
        return ok

    def _in_sight(self, points: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """True where no wall cell lies on the segment point -> target (its last cell is not checked)."""
        if points.shape[0] == 0:
            return np.zeros(0, dtype=bool)
        step = self.resolution_m / 2
        length = np.linalg.norm(targets - points, axis=1)
        # Samples every half cell up to one cell short of the target: the target's own cell may touch a wall.
        count = int(np.ceil(length.max() / step)) + 1
        frac = np.linspace(0.0, 1.0, count)[None, :] * np.clip(length - self.resolution_m, 0.0, None)[:, None]
        direction = (targets - points) / np.maximum(length, 1e-9)[:, None]
        samples = points[:, None, :] + frac[..., None] * direction[:, None, :]
        cells = self.world_to_cells(samples.reshape(-1, 2))
        rows = np.clip(cells[:, 0], 0, self.wall.shape[0] - 1)
        cols = np.clip(cells[:, 1], 0, self.wall.shape[1] - 1)
        return ~self.wall[rows, cols].reshape(points.shape[0], count).any(axis=1)


class _Rasteriser:
    """Marks the cells that overlap an axis-aligned rectangle."""

    def __init__(self, origin_xy_m: np.ndarray, resolution_m: float, rows: int, cols: int) -> None:
        self._origin = origin_xy_m
        self._res = resolution_m
        self._rows, self._cols = rows, cols

    def fill(self, grid: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> None:
        c0 = max(math.floor((x0 - self._origin[0]) / self._res), 0)
        c1 = min(math.ceil((x1 - self._origin[0]) / self._res), self._cols)
        r0 = max(math.floor((y0 - self._origin[1]) / self._res), 0)
        r1 = min(math.ceil((y1 - self._origin[1]) / self._res), self._rows)
        grid[r0:r1, c0:c1] = True

    def mark(self, grid: np.ndarray, points_xy_m: np.ndarray) -> None:
        """Marks the cells holding the (N, 2) points."""
        cells = np.floor((np.asarray(points_xy_m).reshape(-1, 2) - self._origin) / self._res).astype(np.int64)
        ok = (cells[:, 0] >= 0) & (cells[:, 0] < self._cols) & (cells[:, 1] >= 0) & (cells[:, 1] < self._rows)
        grid[cells[ok, 1], cells[ok, 0]] = True


def _largest_component(free: np.ndarray) -> np.ndarray:
    """The largest 4-connected region of ``free`` (all False when there is none)."""
    labels, count = ndimage.label(free)
    if count == 0:
        return np.zeros_like(free)
    sizes = np.bincount(labels.ravel())
    sizes[0] = 0
    return np.asarray(labels == int(np.argmax(sizes)))
