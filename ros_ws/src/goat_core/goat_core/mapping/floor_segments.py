"""Rooms of the agent's own map: the explored free floor cut at its narrow passages (doorways).

The agent knows no floor plan, but its occupancy grid holds the walls it has seen. Eroding the explored free
floor by a little more than half a doorway's width disconnects rooms that are joined only through doors (a
morphological room segmentation); each connected piece left is a segment. An instance belongs to the segment
nearest to its points when that is within ``assign_radius_m`` (objects stand on obstacles: tables, shelves),
else to none (seen from afar, across floor not yet explored).

Furniture can also cut a room into several segments, and an unexplored doorway leaves two rooms in one piece
until it is seen, so segments are evidence, not a floor plan: room votes (goat_core.matching.rooms) weigh
instances of another segment down rather than dropping them.

:mod:`goat_suites.findingdory.room_segments` cuts rooms too, for FindingDory's experience memory, but it is not this
with other settings: it builds grids of its own from the depth frames (a wall band, so low furniture cannot split
a room), labels every cell (a flood from the cores) and labels frames; this one reads the agent's obstacle map and
leaves floor far from every segment unlabelled. Each was tuned on its own task (descriptions' rooms here, the
frames' rooms there); one in place of the other would give other segments, and so other room votes or frame
rooms, which would need measuring again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from goat_core.errors import require_positive
from goat_core.mapping.occupancy import CropBox, OccupancyGrid

NO_SEGMENT = 0  # the segment of an instance too far from every segment


@dataclass(frozen=True)
class FloorSegmentConfig:
    """How the free floor is cut into segments."""

    # Passages narrower than twice this separate segments: a 1.0 m doorway (the embedded homes', and about a
    # real interior door's 0.8-0.9 m clear width plus its frame) and the floor a door's frame hides.
    passage_half_width_m: float = 0.55
    assign_radius_m: float = 1.0  # an instance farther than this from every segment has none

    def __post_init__(self) -> None:
        require_positive(self, ("passage_half_width_m", "assign_radius_m"))


class FloorSegments:
    """Segment labels of one map snapshot; :meth:`segment_of` places instances in them."""

    def __init__(self, grid: OccupancyGrid, box: CropBox, labels: np.ndarray, config: FloorSegmentConfig) -> None:
        self.box = box
        self.labels = labels  # (rows, cols) int32 crop: 0 outside every segment, else the segment's label
        self.count = int(labels.max())
        self._origin_xy_m = grid.origin_xy_m + np.array([box.i0, box.j0]) * grid.resolution_m
        self._cell_m = grid.resolution_m
        self._assign_cells = config.assign_radius_m / grid.resolution_m
        core = labels > 0
        self._nearest_cells: np.ndarray  # distance (cells) of each cell to the nearest segment cell
        self._nearest_label: np.ndarray  # that segment cell's label
        if not core.any():
            self._nearest_cells = np.full(labels.shape, np.inf, dtype=np.float32)
            self._nearest_label = np.zeros(labels.shape, dtype=np.int32)
            return
        # Distance of every cell to the nearest segment cell, and which cell that is (labelled in raster order).
        dist, nearest = cv2.distanceTransformWithLabels((~core).astype(np.uint8), cv2.DIST_L2, cv2.DIST_MASK_5,
                                                        labelType=cv2.DIST_LABEL_PIXEL)
        label_of_cell = np.concatenate([[NO_SEGMENT], labels.ravel()[np.flatnonzero(core.ravel())]])
        self._nearest_cells = np.asarray(dist)
        self._nearest_label = label_of_cell[np.asarray(nearest)]

    def segment_of(self, points_xy_m: np.ndarray) -> int:
        """The segment nearest to any of the points (episode xy), NO_SEGMENT when none is within reach."""
        cells = np.floor((np.asarray(points_xy_m, dtype=np.float64).reshape(-1, 2) - self._origin_xy_m)
                         / self._cell_m).astype(np.int64)
        rows, cols = self.labels.shape
        inside = (cells[:, 0] >= 0) & (cells[:, 0] < rows) & (cells[:, 1] >= 0) & (cells[:, 1] < cols)
        cells = cells[inside]
        if cells.shape[0] == 0:
            return NO_SEGMENT
        dist = self._nearest_cells[cells[:, 0], cells[:, 1]]
        k = int(np.argmin(dist))
        if not dist[k] <= self._assign_cells:
            return NO_SEGMENT
        return int(self._nearest_label[cells[k, 0], cells[k, 1]])


def segment_floor(grid: OccupancyGrid, config: FloorSegmentConfig = FloorSegmentConfig()) -> FloorSegments:
    """Segments of the explored free floor of ``grid`` (seen obstacles and collision marks are not free)."""
    box, free = free_floor(grid, config)
    return cut_floor(grid, box, free, config)


def free_floor(grid: OccupancyGrid, config: FloorSegmentConfig = FloorSegmentConfig()) -> tuple[CropBox, np.ndarray]:
    """The crop :func:`segment_floor` cuts and its explored free floor (uint8, 1 where free): the cut is a function
    of these (and the grid's geometry) alone, so a caller may keep a cut while they stay the same."""
    margin = int(math.ceil(config.assign_radius_m / grid.resolution_m)) + 1
    box = grid.known_box(margin)
    return box, (grid.explored_crop(box) & ~grid.blocked(box)).astype(np.uint8)


def cut_floor(grid: OccupancyGrid, box: CropBox, free: np.ndarray,
              config: FloorSegmentConfig = FloorSegmentConfig()) -> FloorSegments:
    """The segments of the free floor ``free`` of the crop ``box`` of ``grid`` (from :func:`free_floor`)."""
    radius = config.passage_half_width_m / grid.resolution_m
    size = 2 * int(math.ceil(radius)) + 1
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
    core = cv2.erode(free, kernel, borderType=cv2.BORDER_CONSTANT, borderValue=0)
    _, labels = cv2.connectedComponents(core, connectivity=8)
    return FloorSegments(grid, box, labels.astype(np.int32), config)
