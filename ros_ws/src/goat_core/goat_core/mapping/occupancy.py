"""A 2D obstacle / explored grid in the episode frame, built from depth images.

Cell (i, j) covers x in [x0 + i res, x0 + (i + 1) res) and y in [y0 + j res, y0 + (j + 1) res): array axis 0
is episode x, axis 1 is episode y (so an image of a layer shows +x downwards and +y to the right). The grid is
allocated once, ``size_m`` square and centred on the episode origin; everything that scans layers works on
:meth:`OccupancyGrid.known_box`, the crop bounding what has been observed plus a margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from goat_core.errors import InvalidObservationError, require_positive
from goat_core.geometry import depth_to_episode_points, wrap_angles_rad
from goat_core.types import Observation, Pose2D

# cv2 polygon vertices carry this many fractional bits, so fan edges are placed at 1/8 cell precision.
_POLY_SHIFT = 3


@dataclass(frozen=True)
class OccupancyConfig:
    """Grid geometry and what counts as an obstacle."""

    resolution_m: float = 0.05
    size_m: float = 40.0  # side of the square grid, centred on the episode start
    obstacle_min_height_m: float = 0.1  # points below are floor
    obstacle_max_height_m: float = 1.5  # points above clear the 1.41 m Stretch and are ignored
    max_depth_m: float = 5.0  # depth beyond this is too noisy on a RealSense D435 to map
    depth_stride_px: int = 4  # back-project every 4th pixel in both directions
    # The floor between the robot and the nearest visible point of a view direction is assumed free when that
    # point is this close (the blind zone under a camera tilted down 30 deg ends 0.63 m ahead).
    blind_fill_max_m: float = 1.0
    # Points at or above this height (walls, tall furniture) hide what lies behind them from the head camera
    # (1.31 m on the Stretch): the sight layer that goal spots are checked against.
    sight_block_min_height_m: float = 1.2

    def __post_init__(self) -> None:
        positive = ("resolution_m", "size_m", "max_depth_m", "sight_block_min_height_m")
        require_positive(self, positive)
        if not 0.0 <= self.obstacle_min_height_m < self.obstacle_max_height_m:
            raise ValueError(
                "OccupancyConfig needs 0 <= obstacle_min_height_m < obstacle_max_height_m, got "
                f"{self.obstacle_min_height_m!r} and {self.obstacle_max_height_m!r}"
            )
        if self.depth_stride_px < 1:
            raise ValueError(f"OccupancyConfig.depth_stride_px must be >= 1, got {self.depth_stride_px!r}")


@dataclass(frozen=True)
class CropBox:
    """A window of grid cells: rows [i0, i1) along x, columns [j0, j1) along y."""

    i0: int
    i1: int
    j0: int
    j1: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.i1 - self.i0, self.j1 - self.j0)

    def slices(self) -> tuple[slice, slice]:
        return (slice(self.i0, self.i1), slice(self.j0, self.j1))


class OccupancyGrid:
    """Obstacle, explored and collision layers over a fixed square grid."""

    def __init__(self, config: OccupancyConfig) -> None:
        self.config = config
        self.resolution_m = config.resolution_m
        self.size_cells = int(math.ceil(config.size_m / config.resolution_m))
        # Episode coordinates of the corner of cell (0, 0): the grid is centred on the episode origin.
        self.origin_xy_m = np.full(2, -0.5 * self.size_cells * config.resolution_m)
        shape = (self.size_cells, self.size_cells)
        # uint8 layers (0/1) so cv2 can draw into them in place.
        self.obstacle = np.zeros(shape, dtype=np.uint8)
        self.explored = np.zeros(shape, dtype=np.uint8)
        self.collision = np.zeros(shape, dtype=np.uint8)
        # Cells the robot's centre has passed through: a centre there is feasible, whatever the inflated map says
        # (depth noise and the coarse planning grid can close a gap the robot has just driven through).
        self.trail = np.zeros(shape, dtype=np.uint8)
        # Cells with a point at or above sight_block_min_height_m: the camera cannot see past them.
        self.sight_block = np.zeros(shape, dtype=np.uint8)
        self._bounds = np.array([self.size_cells, -1, self.size_cells, -1])  # i_min, i_max, j_min, j_max

    def reset(self) -> None:
        """Forget everything (a new episode, or the no-memory ablation)."""
        self.obstacle.fill(0)
        self.explored.fill(0)
        self.collision.fill(0)
        self.trail.fill(0)
        self.sight_block.fill(0)
        self._bounds[:] = (self.size_cells, -1, self.size_cells, -1)

    def clear_collisions(self) -> bool:
        """Forget the collision marks (seen obstacles stay); True if there were any."""
        had = bool(self.collision.any())
        self.collision.fill(0)
        return had

    # ----------------------------------------------------------------------------------------- coordinates
    def to_cells(self, xy_m: np.ndarray) -> np.ndarray:
        """(N, 2) episode xy -> (N, 2) int cell indices (may lie outside the grid)."""
        return np.floor((np.asarray(xy_m, dtype=np.float64) - self.origin_xy_m) / self.resolution_m).astype(
            np.int64)

    def cell_of(self, x_m: float, y_m: float) -> tuple[int, int]:
        cell = self.to_cells(np.array([[x_m, y_m]]))[0]
        return int(cell[0]), int(cell[1])

    def to_xy(self, cells: np.ndarray) -> np.ndarray:
        """(N, 2) cell indices -> (N, 2) episode xy of the cell centres."""
        return (np.asarray(cells, dtype=np.float64) + 0.5) * self.resolution_m + self.origin_xy_m

    def in_grid(self, cells: np.ndarray) -> np.ndarray:
        return np.asarray(np.all((cells >= 0) & (cells < self.size_cells), axis=-1))

    def known_box(self, margin_cells: int, include: np.ndarray | None = None,
                  multiple_of: int = 1) -> CropBox:
        """The crop bounding everything observed (and the ``include`` (N, 2) cells) plus a margin.

        With ``multiple_of`` k the box starts and ends on multiples of k, so it can be block-reduced by k.
        """
        i_min, i_max, j_min, j_max = (int(v) for v in self._bounds)
        if include is not None and len(include):
            inc = np.asarray(include)
            i_min, i_max = min(i_min, int(inc[:, 0].min())), max(i_max, int(inc[:, 0].max()))
            j_min, j_max = min(j_min, int(inc[:, 1].min())), max(j_max, int(inc[:, 1].max()))
        if i_max < 0:  # nothing known yet: a box around the grid centre
            i_min = i_max = j_min = j_max = self.size_cells // 2
        k = multiple_of
        top = (self.size_cells // k) * k
        i0 = max(0, (i_min - margin_cells) // k * k)
        j0 = max(0, (j_min - margin_cells) // k * k)
        i1 = min(top, -(-(i_max + 1 + margin_cells) // k) * k)
        j1 = min(top, -(-(j_max + 1 + margin_cells) // k) * k)
        return CropBox(i0, i1, j0, j1)

    def recompute_bounds(self) -> None:
        """Rescan the layers for the known extent, after they were written directly (a map loaded from disk
        or from a message) rather than through the update methods."""
        known = (self.explored | self.obstacle | self.collision) > 0
        rows = np.flatnonzero(known.any(axis=1))
        cols = np.flatnonzero(known.any(axis=0))
        if rows.size == 0:
            self._bounds[:] = (self.size_cells, -1, self.size_cells, -1)
        else:
            self._bounds[:] = (rows[0], rows[-1], cols[0], cols[-1])

    def _grow_bounds(self, cells: np.ndarray) -> None:
        if len(cells) == 0:
            return
        b = self._bounds
        b[0] = min(b[0], int(cells[:, 0].min()))
        b[1] = max(b[1], int(cells[:, 0].max()))
        b[2] = min(b[2], int(cells[:, 1].min()))
        b[3] = max(b[3], int(cells[:, 1].max()))

    # --------------------------------------------------------------------------------------------- updates
    def update(self, obs: Observation) -> None:
        """Integrate one depth image: obstacle cells, floor cells, the free fan up to the first obstacle."""
        cfg = self.config
        pts = depth_to_episode_points(obs.depth_m, obs.intrinsics, obs.pose, obs.camera_height_m,
                                      obs.camera_tilt_rad, cfg.depth_stride_px, cfg.max_depth_m)
        xyz = pts.points_xyz_m
        cells = self.to_cells(xyz[:, :2])
        inside = self.in_grid(cells)
        z = xyz[:, 2]
        is_obstacle = (z >= cfg.obstacle_min_height_m) & (z <= cfg.obstacle_max_height_m)
        is_floor = z < cfg.obstacle_min_height_m
        obstacle_cells = cells[inside & is_obstacle]
        floor_cells = cells[inside & is_floor]
        self.obstacle[obstacle_cells[:, 0], obstacle_cells[:, 1]] = 1
        self.explored[obstacle_cells[:, 0], obstacle_cells[:, 1]] = 1
        self.explored[floor_cells[:, 0], floor_cells[:, 1]] = 1
        tall_cells = cells[inside & (z >= cfg.sight_block_min_height_m)]
        self.sight_block[tall_cells[:, 0], tall_cells[:, 1]] = 1
        self._grow_bounds(obstacle_cells)
        self._grow_bounds(floor_cells)
        # Two sampled columns per azimuth bin at the image centre: columns spread up to 1.7x wider at the
        # bottom of an image tilted down 30 deg, so no bin is left without a point of every image row.
        bin_rad = 2.0 * cfg.depth_stride_px / obs.intrinsics.fx
        self._fill_free_fan(obs.pose, xyz[:, :2], is_obstacle, is_floor, bin_rad)

    def _fill_free_fan(self, pose: Pose2D, xy: np.ndarray, is_obstacle: np.ndarray, is_floor: np.ndarray,
                       bin_rad: float) -> None:
        """Mark explored the floor each view direction crosses before its first obstacle.

        Points are binned by azimuth around the camera; in each bin the free segment runs from the nearest
        observed point (or from the robot, if that point is within ``blind_fill_max_m``) to the nearest
        obstacle point, or to the farthest floor point when the bin sees no obstacle. Each segment is drawn
        as a thin polygon between its bin edges (the classic ray-casting free-space update, vectorised per
        bin).
        """
        cfg = self.config
        rel = xy - np.array([pose.x_m, pose.y_m])
        rng_m = np.hypot(rel[:, 0], rel[:, 1])
        useful = is_obstacle | is_floor
        if not np.any(useful):
            return
        azimuth = wrap_angles_rad(np.arctan2(rel[:, 1], rel[:, 0]) - pose.yaw_rad)
        n_bins = int(math.ceil(2.0 * math.pi / bin_rad))
        bins = np.minimum(((azimuth + math.pi) / bin_rad).astype(np.int64), n_bins - 1)
        obstacle_min = np.full(n_bins, np.inf)
        np.minimum.at(obstacle_min, bins[is_obstacle], rng_m[is_obstacle])
        floor_max = np.zeros(n_bins)
        np.maximum.at(floor_max, bins[is_floor], rng_m[is_floor])
        nearest = np.full(n_bins, np.inf)
        np.minimum.at(nearest, bins[useful], rng_m[useful])
        far = np.where(np.isfinite(obstacle_min), obstacle_min, floor_max)
        near = np.where(nearest <= cfg.blind_fill_max_m, 0.0, nearest)
        seen = np.flatnonzero(np.isfinite(nearest) & (far > near))
        if seen.size == 0:
            return
        lo = (seen * bin_rad - math.pi) + pose.yaw_rad
        hi = lo + bin_rad
        centre = np.array([pose.x_m, pose.y_m])
        corners = np.stack([
            centre + near[seen, None] * np.stack([np.cos(lo), np.sin(lo)], axis=1),
            centre + far[seen, None] * np.stack([np.cos(lo), np.sin(lo)], axis=1),
            centre + far[seen, None] * np.stack([np.cos(hi), np.sin(hi)], axis=1),
            centre + near[seen, None] * np.stack([np.cos(hi), np.sin(hi)], axis=1),
        ], axis=1)  # (B, 4, 2) episode xy
        # cv2 points are (column, row) = (j, i); scale to fixed point with _POLY_SHIFT fractional bits.
        grid_ij = (corners - self.origin_xy_m) / self.resolution_m
        pts = np.round(grid_ij[:, :, ::-1] * (1 << _POLY_SHIFT)).astype(np.int32)
        cv2.fillPoly(self.explored, list(pts), 1, lineType=cv2.LINE_8, shift=_POLY_SHIFT)
        far_cells = self.to_cells(corners.reshape(-1, 2))
        self._grow_bounds(np.clip(far_cells, 0, self.size_cells - 1))

    def mark_disk_explored(self, x_m: float, y_m: float, radius_m: float) -> None:
        """The robot's footprint is free: it stands there."""
        i, j = self.cell_of(x_m, y_m)
        if not (0 <= i < self.size_cells and 0 <= j < self.size_cells):
            raise InvalidObservationError(
                f"pose ({x_m:.2f}, {y_m:.2f}) m lies outside the {self.config.size_m} m grid"
            )
        r = max(0, int(round(radius_m / self.resolution_m)))
        cv2.circle(self.explored, (j, i), r, 1, thickness=-1)
        self._grow_bounds(np.array([[i - r, j - r], [i + r, j + r]]).clip(0, self.size_cells - 1))

    def mark_trail(self, from_xy_m: np.ndarray, to_xy_m: np.ndarray) -> None:
        """The robot's centre moved straight from one point to the other: mark the cells it crossed.

        The line is 4-connected, so it stays connected on any coarser grid and for the planner's 4-neighbour FMM.
        """
        ends = self.to_cells(np.stack([from_xy_m, to_xy_m])).clip(0, self.size_cells - 1)
        cv2.line(self.trail, (int(ends[0, 1]), int(ends[0, 0])), (int(ends[1, 1]), int(ends[1, 0])), 1,
                 thickness=1, lineType=cv2.LINE_4)
        self._grow_bounds(ends)

    def mark_collision(self, pose: Pose2D, ahead_m: float, half_width_m: float) -> None:
        """Block a short segment across the heading ``ahead_m`` in front of the base (an unseen bump), except on
        the robot's trail: the base's centre stood there, so nothing is there, and a mark across the way the robot
        came would seal it in (large-furnished 5000-6 #6-#8: a bump beside the corridor it had just driven up
        marked it shut, and it gave up three subtasks in a pocket of its own marks)."""
        c, s = math.cos(pose.yaw_rad), math.sin(pose.yaw_rad)
        mid = np.array([pose.x_m + ahead_m * c, pose.y_m + ahead_m * s])
        side = np.array([-s, c]) * half_width_m
        ends = self.to_cells(np.stack([mid - side, mid + side])).clip(0, self.size_cells - 1)
        (i0, j0), (i1, j1) = ends.min(axis=0), ends.max(axis=0) + 1
        kept = self.collision[i0:i1, j0:j1].copy()
        cv2.line(self.collision, (int(ends[0, 1]), int(ends[0, 0])), (int(ends[1, 1]), int(ends[1, 0])), 1,
                 thickness=1)
        on_trail = self.trail[i0:i1, j0:j1] > 0
        self.collision[i0:i1, j0:j1][on_trail] = kept[on_trail]
        self._grow_bounds(ends)

    # -------------------------------------------------------------------------------------------- queries
    def blocked(self, box: CropBox) -> np.ndarray:
        """Bool crop of cells the robot cannot occupy: seen obstacles and collision marks."""
        sl = box.slices()
        return np.asarray((self.obstacle[sl] | self.collision[sl]) > 0)

    def sight_clear(self, from_xy_m: np.ndarray, to_xy_m: np.ndarray, skip_end_m: float) -> np.ndarray:
        """(N,) bool: no mapped sight-blocking cell on each segment from ``from_xy_m[k]`` toward ``to_xy_m[k]``.

        The last ``skip_end_m`` of each segment is not checked: the target's own cells (a tall wardrobe) and what
        it stands in (the shelf around a book) do not hide it. Segments are sampled every half cell; cells outside
        the grid do not block. Unobserved walls do not block either: the answer is what the map knows.
        """
        src = np.asarray(from_xy_m, dtype=np.float64).reshape(-1, 2)
        dst = np.asarray(to_xy_m, dtype=np.float64).reshape(-1, 2)
        if src.shape != dst.shape:
            raise ValueError(f"sight_clear needs as many start as end points, got {src.shape} and {dst.shape}")
        if src.shape[0] == 0:
            return np.zeros(0, dtype=bool)
        rel = dst - src
        length = np.hypot(rel[:, 0], rel[:, 1])
        checked = np.clip(length - skip_end_m, 0.0, None)
        step = 0.5 * self.resolution_m
        count = int(math.ceil(float(checked.max()) / step)) + 1
        frac = np.linspace(0.0, 1.0, count)[None, :] * checked[:, None]  # (N, S) metres along each segment
        unit = rel / np.maximum(length, 1e-9)[:, None]
        samples = src[:, None, :] + frac[..., None] * unit[:, None, :]
        cells = self.to_cells(samples.reshape(-1, 2))
        inside = self.in_grid(cells)
        hit = np.zeros(cells.shape[0], dtype=bool)
        hit[inside] = self.sight_block[cells[inside, 0], cells[inside, 1]] > 0
        return np.asarray(~hit.reshape(src.shape[0], count).any(axis=1))

    def trail_crop(self, box: CropBox) -> np.ndarray:
        """Bool crop of the cells the robot's centre has passed through."""
        return np.asarray(self.trail[box.slices()] > 0)

    def explored_crop(self, box: CropBox) -> np.ndarray:
        return np.asarray(self.explored[box.slices()] > 0)

    def explored_area_m2(self) -> float:
        box = self.known_box(0)
        return float(np.count_nonzero(self.explored[box.slices()])) * self.resolution_m ** 2

    def known_values(self, margin_cells: int) -> tuple[np.ndarray, tuple[float, float]]:
        """The observed part as int8 (100 obstacle, 0 explored free, -1 unknown; axis 0 x, axis 1 y) and the
        episode xy of its cell (0, 0)'s corner: what rviz's and Foxglove's occupancy displays draw."""
        box = self.known_box(margin_cells)
        values = np.full((box.i1 - box.i0, box.j1 - box.j0), -1, dtype=np.int8)
        values[self.explored[box.slices()] > 0] = 0
        values[self.obstacle[box.slices()] > 0] = 100
        return values, (float(self.origin_xy_m[0] + box.i0 * self.resolution_m),
                        float(self.origin_xy_m[1] + box.j0 * self.resolution_m))
