"""The obstacle / explored grid built from analytic depth images of a floor and a wall."""

from __future__ import annotations

import math

import numpy as np
import pytest

from goat_core.errors import InvalidObservationError
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.types import CameraIntrinsics, Observation, Pose2D

K = CameraIntrinsics.from_hfov(90, 160, math.radians(42.0))
H_M = 1.31


def wall_and_floor(pose: Pose2D, tilt_rad: float, wall_ahead_m: float,
                   wall_top_m: float = 2.5) -> Observation:
    """Depth of a floor and of an infinite wall ``wall_ahead_m`` in front of the robot, in its own frame.

    Ray per pixel in the level base frame: forward (cos t, 0, sin t) + x_n * right (0, -1, 0) + y_n * down
    (sin t, 0, -cos t); depth is the ray parameter of the first hit, as the ray's optical-axis component is 1.
    """
    v, u = np.mgrid[0:K.height, 0:K.width].astype(np.float64)
    y_n = (v - K.cy) / K.fy
    c, s = math.cos(tilt_rad), math.sin(tilt_rad)
    ray_x = c + y_n * s
    ray_z = s - y_n * c
    with np.errstate(divide="ignore", invalid="ignore"):
        t_floor = np.where(ray_z < -1e-9, H_M / -ray_z, np.inf)
        t_wall = np.where(ray_x > 1e-9, wall_ahead_m / ray_x, np.inf)
        t_wall = np.where(H_M + t_wall * ray_z <= wall_top_m, t_wall, np.inf)
    depth = np.minimum(t_floor, t_wall)
    depth = np.where(np.isfinite(depth), depth, 0.0).astype(np.float32)
    return Observation(rgb=np.zeros((K.height, K.width, 3), dtype=np.uint8), depth_m=depth, pose=pose,
                       camera_tilt_rad=tilt_rad, camera_height_m=H_M, intrinsics=K)


def layer_at(grid: OccupancyGrid, layer: np.ndarray, xy: tuple[float, float]) -> int:
    i, j = grid.cell_of(*xy)
    return int(layer[i, j])


def obstacle_near(grid: OccupancyGrid, xy: tuple[float, float], radius_m: float = 0.06) -> bool:
    """Any obstacle cell within ``radius_m`` (a wall face on a cell border may land in either cell)."""
    i, j = grid.cell_of(*xy)
    r = int(math.ceil(radius_m / grid.resolution_m))
    return bool(grid.obstacle[i - r:i + r + 1, j - r:j + r + 1].any())


def to_world(pose: Pose2D, forward_m: float, left_m: float) -> tuple[float, float]:
    c, s = math.cos(pose.yaw_rad), math.sin(pose.yaw_rad)
    return (pose.x_m + c * forward_m - s * left_m, pose.y_m + s * forward_m + c * left_m)


@pytest.mark.parametrize("tilt_deg", [-30.0, 0.0])
@pytest.mark.parametrize("pose", [Pose2D(0.0, 0.0, 0.0), Pose2D(2.0, 1.0, math.pi / 2), Pose2D(-1, 3, -2.5)])
def test_wall_is_obstacle_floor_before_it_is_free_behind_is_unknown(tilt_deg: float, pose: Pose2D) -> None:
    grid = OccupancyGrid(OccupancyConfig())
    grid.update(wall_and_floor(pose, math.radians(tilt_deg), wall_ahead_m=3.0))
    assert obstacle_near(grid, to_world(pose, 3.0, 0.0))
    assert obstacle_near(grid, to_world(pose, 3.0, 0.8))  # inside the 21 deg half-FOV (1.15 m at 3 m)
    assert not obstacle_near(grid, to_world(pose, 3.0, 1.5))  # outside it
    # A level camera first sees the floor 1.92 m ahead; looking down 30 deg, 0.63 m ahead.
    for forward in ((1.0, 2.0, 2.8) if tilt_deg < 0 else (2.0, 2.8)):
        assert layer_at(grid, grid.explored, to_world(pose, forward, 0.0)) == 1
        assert layer_at(grid, grid.obstacle, to_world(pose, forward, 0.0)) == 0
    assert layer_at(grid, grid.explored, to_world(pose, 3.6, 0.0)) == 0
    assert layer_at(grid, grid.explored, to_world(pose, -1.0, 0.0)) == 0  # behind the robot


def test_blind_zone_is_filled_only_when_near() -> None:
    pose = Pose2D(0.0, 0.0, 0.0)
    # Level camera: the floor is first seen 1.92 m ahead (1.31 / tan(34.3 deg)), beyond blind_fill_max_m.
    level = OccupancyGrid(OccupancyConfig(blind_fill_max_m=1.0))
    level.update(wall_and_floor(pose, 0.0, wall_ahead_m=4.0))
    assert layer_at(level, level.explored, (1.0, 0.0)) == 0
    assert layer_at(level, level.explored, (2.5, 0.0)) == 1
    # Looking down 30 deg the floor starts 0.63 m ahead, so the gap to the robot is filled.
    down = OccupancyGrid(OccupancyConfig(blind_fill_max_m=1.0))
    down.update(wall_and_floor(pose, math.radians(-30.0), wall_ahead_m=4.0))
    assert layer_at(down, down.explored, (0.3, 0.0)) == 1


@pytest.mark.parametrize(("top_m", "is_obstacle"), [(0.05, False), (0.6, True), (1.0, True)])
def test_obstacle_height_band(top_m: float, is_obstacle: bool) -> None:
    grid = OccupancyGrid(OccupancyConfig(obstacle_min_height_m=0.1, obstacle_max_height_m=1.5))
    grid.update(wall_and_floor(Pose2D(0, 0, 0), math.radians(-30.0), wall_ahead_m=2.0, wall_top_m=top_m))
    assert obstacle_near(grid, (2.0, 0.0)) == is_obstacle


def test_far_returns_are_not_mapped() -> None:
    grid = OccupancyGrid(OccupancyConfig(max_depth_m=2.5))
    grid.update(wall_and_floor(Pose2D(0, 0, 0), 0.0, wall_ahead_m=4.0))
    assert not np.any(grid.obstacle)
    assert layer_at(grid, grid.explored, (3.0, 0.0)) == 0


def test_collision_marks_cells_ahead_only() -> None:
    grid = OccupancyGrid(OccupancyConfig())
    pose = Pose2D(1.0, 1.0, math.pi / 2)
    grid.mark_collision(pose, ahead_m=0.27, half_width_m=0.1)
    assert layer_at(grid, grid.collision, (1.0, 1.27)) == 1
    assert layer_at(grid, grid.collision, (1.08, 1.27)) == 1
    assert layer_at(grid, grid.collision, (1.0, 0.73)) == 0
    box = grid.known_box(0)
    assert grid.blocked(box).sum() == grid.collision.sum()


def test_collision_mark_spares_the_robots_trail() -> None:
    """A bump beside the corridor the robot just drove up must not mark the corridor shut: the base's centre stood
    on the trail cells (large-furnished 5000-6 #6-#8 gave up in a pocket sealed by such marks)."""
    grid = OccupancyGrid(OccupancyConfig())
    grid.mark_trail(np.array([1.1, 0.0]), np.array([1.1, 2.0]))  # drove north along x = 1.1
    grid.mark_collision(Pose2D(1.0, 1.5, -math.pi / 2), ahead_m=0.27, half_width_m=0.2)  # bumped heading south
    assert layer_at(grid, grid.trail, (1.1, 1.23)) == 1
    assert layer_at(grid, grid.collision, (1.1, 1.23)) == 0  # on the trail: not marked
    assert layer_at(grid, grid.collision, (0.9, 1.23)) == 1  # beside it: marked
    assert layer_at(grid, grid.collision, (1.0, 1.23)) == 1
    grid.mark_collision(Pose2D(0.5, 1.5, -math.pi / 2), ahead_m=0.27, half_width_m=0.1)  # away from the trail
    assert layer_at(grid, grid.collision, (0.5, 1.23)) == 1


def test_known_box_bounds_observations_with_margin_and_alignment() -> None:
    grid = OccupancyGrid(OccupancyConfig())
    grid.update(wall_and_floor(Pose2D(0, 0, 0), math.radians(-30.0), wall_ahead_m=3.0))
    box = grid.known_box(margin_cells=7, multiple_of=4)
    assert box.i0 % 4 == 0 and box.i1 % 4 == 0 and box.j0 % 4 == 0 and box.j1 % 4 == 0
    inner = grid.known_box(margin_cells=0)
    assert box.i0 <= inner.i0 - 7 and box.i1 >= inner.i1 + 7
    marked = np.argwhere(grid.explored | grid.obstacle)
    assert marked[:, 0].min() >= inner.i0 and marked[:, 0].max() < inner.i1
    assert marked[:, 1].min() >= inner.j0 and marked[:, 1].max() < inner.j1
    # Everything the layers hold is inside the crop, so crop-only processing loses nothing.
    assert grid.explored_crop(box).sum() == grid.explored.sum()
    assert inner.shape[0] * 0.05 < 4.0  # about 3 m of view plus a cell, not the 40 m grid


def test_known_box_includes_extra_cells() -> None:
    grid = OccupancyGrid(OccupancyConfig())
    far = np.array([grid.cell_of(5.0, -4.0)])
    box = grid.known_box(margin_cells=0, include=far)
    assert box.i0 <= far[0, 0] < box.i1 and box.j0 <= far[0, 1] < box.j1


def test_footprint_and_reset() -> None:
    grid = OccupancyGrid(OccupancyConfig())
    grid.mark_disk_explored(0.5, -0.5, 0.17)
    assert layer_at(grid, grid.explored, (0.5, -0.5)) == 1
    assert layer_at(grid, grid.explored, (0.62, -0.5)) == 1
    assert layer_at(grid, grid.explored, (0.8, -0.5)) == 0
    grid.update(wall_and_floor(Pose2D(0, 0, 0), 0.0, wall_ahead_m=2.0))
    grid.mark_collision(Pose2D(0, 0, 0), 0.3, 0.1)
    grid.reset()
    assert not grid.explored.any() and not grid.obstacle.any() and not grid.collision.any()
    assert grid.explored_area_m2() == 0.0


def test_pose_outside_grid_raises() -> None:
    grid = OccupancyGrid(OccupancyConfig(size_m=10.0))
    with pytest.raises(InvalidObservationError, match="30.00"):
        grid.mark_disk_explored(30.0, 0.0, 0.17)


@pytest.mark.parametrize("kwargs", [{"resolution_m": 0.0}, {"size_m": -1.0}, {"depth_stride_px": 0},
                                    {"obstacle_min_height_m": 1.0, "obstacle_max_height_m": 0.5}])
def test_bad_config_raises(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        OccupancyConfig(**kwargs)


def test_coordinates_round_trip() -> None:
    grid = OccupancyGrid(OccupancyConfig())
    xy = np.array([[0.0, 0.0], [1.234, -5.678], [-19.9, 19.9]])
    back = grid.to_xy(grid.to_cells(xy))
    assert np.all(np.abs(back - xy) <= 0.5 * grid.resolution_m + 1e-12)
    assert grid.cell_of(0.0, 0.0) == (grid.size_cells // 2, grid.size_cells // 2)


@pytest.mark.parametrize(("top_m", "blocks_sight"), [(0.9, False), (2.5, True)])
def test_a_wall_taller_than_the_sight_height_hides_what_lies_behind_it(top_m: float, blocks_sight: bool) -> None:
    grid = OccupancyGrid(OccupancyConfig(sight_block_min_height_m=1.2))
    grid.update(wall_and_floor(Pose2D(0, 0, 0), math.radians(-30.0), wall_ahead_m=2.0, wall_top_m=top_m))
    assert obstacle_near(grid, (2.0, 0.0))  # an obstacle either way: a table top or a wall
    across = grid.sight_clear(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[3.0, 0.0], [1.8, 0.0]]), 0.1)
    assert across.tolist() == [not blocks_sight, True]  # the second line stops short of the wall


def test_sight_clear_skips_the_end_of_each_line_and_checks_every_cell_before() -> None:
    grid = OccupancyGrid(OccupancyConfig())
    i, j = grid.cell_of(1.0, 0.0)
    grid.sight_block[i, j] = 1  # one tall cell, [1.0, 1.05) m along x
    starts = np.zeros((4, 2))
    ends = np.array([[1.1, 0.0], [1.2, 0.0], [1.0, 0.5], [3.0, 0.0]])
    # Ends 0.1 m past the cell: unchecked with a 0.15 m skip, checked with 0.05 m; a line beside it is clear.
    assert grid.sight_clear(starts, ends, 0.15).tolist() == [True, False, True, False]
    assert grid.sight_clear(starts, ends, 0.05).tolist() == [False, False, True, False]
    grid.reset()
    assert grid.sight_clear(starts, ends, 0.05).all()
    assert grid.sight_clear(np.zeros((0, 2)), np.zeros((0, 2)), 0.1).shape == (0,)
    with pytest.raises(ValueError, match="as many start as end points"):
        grid.sight_clear(starts, ends[:2], 0.1)
