"""The embedded simulator with real MuJoCo rendering: sensors, geometry, actions, collisions, determinism."""

from __future__ import annotations

import gc
import math
from typing import Iterator

import numpy as np
import pytest
from scipy import ndimage

from goat_core.errors import SceneGenerationError, UnreachableGoalError
from goat_core.types import DiscreteAction, Observation
from goat_core.vocabulary import COLOURS
from sim_bridge.embedded.home import Home, HomeConfig, ObjectSpec, generate_home, home_config_for
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig
from sim_bridge.embedded.world import Renderer, camera_rotation, object_texture

A = DiscreteAction
CAMERA_HEIGHT_M = SimConfig().camera_height_m


@pytest.fixture(scope="module")
def home() -> Home:
    return generate_home(7, HomeConfig(furniture="primitive"))  # the geometry and colours of primitive parts


@pytest.fixture(scope="module")
def sim(home: Home) -> Iterator[EmbeddedSim]:
    with EmbeddedSim(home) as simulator:
        yield simulator


def _free_run_cells(sim: EmbeddedSim, xy: np.ndarray, step_cols: int) -> int:
    """Navigable cells in a row from ``xy`` towards -x (step_cols = -1) or +x (step_cols = 1)."""
    grid = sim.navgrid
    row, col = grid.world_to_cell(xy)
    count = 0
    while grid.navigable[row, col + step_cols * (count + 1)]:
        count += 1
    return count


def _start_facing_wall(sim: EmbeddedSim) -> tuple[np.ndarray, int]:
    """A navigable cell centre 0.75-2 m from a wall towards -x, with the strip between them free for 1 m
    towards +y (room to slide); returns it and the column of the last free cell before the wall."""
    grid = sim.navgrid
    rng = np.random.default_rng(0)
    for _ in range(5000):
        xy = grid.sample_navigable(rng)
        run = _free_run_cells(sim, xy, -1)
        if not 15 <= run <= 40:
            continue
        row, col = grid.world_to_cell(xy)
        last = col - run
        blocker = last - 1
        while not grid.obstacle[row, blocker]:
            blocker -= 1
        strip_free = grid.navigable[row:row + 20, last:col + 1].all()
        if grid.wall[row, blocker] and strip_free and not grid.navigable[row:row + 20, last - 1].any():
            return xy, last
    raise AssertionError("no start facing a wall found")


def _open_start(sim: EmbeddedSim) -> np.ndarray:
    """A navigable point with every point within 0.8 m navigable too, so any short move is free."""
    grid = sim.navgrid
    blocked_m = ndimage.distance_transform_edt(grid.navigable) * grid.resolution_m
    rows, cols = np.nonzero(blocked_m > 0.8)
    assert rows.size, "the home has no open floor"
    return grid.cell_to_world(int(rows[0]), int(cols[0]))


def test_observation_shapes_and_types(sim: EmbeddedSim) -> None:
    obs = sim.reset(_open_start(sim), 0.0)
    obs.validate()
    assert obs.rgb.shape == (640, 360, 3) and obs.rgb.dtype == np.uint8
    assert obs.depth_m.shape == (640, 360) and obs.depth_m.dtype == np.float32
    assert obs.segmentation is not None
    assert obs.segmentation.shape == (640, 360) and obs.segmentation.dtype == np.int32
    assert obs.intrinsics.fx == pytest.approx(180.0 / math.tan(math.radians(21.0)))
    assert obs.intrinsics.hfov_rad == pytest.approx(math.radians(42.0))
    assert obs.camera_height_m == CAMERA_HEIGHT_M and obs.camera_tilt_rad == 0.0
    assert obs.step == 0 and not obs.collided
    assert (obs.pose.x_m, obs.pose.y_m, obs.pose.yaw_rad) == (0.0, 0.0, 0.0)
    assert obs.rgb.std() > 5.0, "the frame shows structure, not a blank image"
    assert np.all(obs.depth_m[obs.depth_m > 0] > 0.02)


def test_instance_categories_list_the_ids_in_frame(sim: EmbeddedSim, home: Home) -> None:
    obj = next(o for o in home.objects if o.receptacle_id is None)
    point = sim.navgrid.view_points(obj)[0]
    centre = np.asarray(obj.position_m)
    sim.reset(point, math.atan2(centre[1] - point[1], centre[0] - point[0]))
    obs = sim.step(A.LOOK_DOWN)
    assert obs.segmentation is not None
    ids = set(np.unique(obs.segmentation).tolist()) - {-1}
    assert obj.instance_id in ids
    assert set(obs.instance_categories) == ids
    for iid, name in obs.instance_categories.items():
        assert sim.object_by_instance_id(iid).category == name


def test_floor_depth_straight_down_is_the_camera_height(sim: EmbeddedSim) -> None:
    view = sim.render_view(_open_start(sim), 0.3, -math.pi / 2)
    centre = view.depth_m[300:340, 160:200]
    assert centre == pytest.approx(CAMERA_HEIGHT_M, abs=0.005)
    assert np.all(view.segmentation[300:340, 160:200] == -1)


def _clear_spot_on_top(home: Home, support: ObjectSpec) -> np.ndarray | None:
    """A point of the receptacle's top at least 10 cm from its edges and from anything standing on it."""
    on_top = [o for o in home.objects if o.receptacle_id == support.object_id]
    for x in np.linspace(support.bbox_min_m[0] + 0.1, support.bbox_max_m[0] - 0.1, 7):
        for y in np.linspace(support.bbox_min_m[1] + 0.1, support.bbox_max_m[1] - 0.1, 7):
            if all(not (o.bbox_min_m[0] - 0.1 < x < o.bbox_max_m[0] + 0.1
                        and o.bbox_min_m[1] - 0.1 < y < o.bbox_max_m[1] + 0.1) for o in on_top):
                return np.array([x, y])
    return None


def test_depth_and_segment_of_a_receptacle_top_match_its_geometry(sim: EmbeddedSim, home: Home) -> None:
    checked = 0
    for support in home.objects:
        if not support.is_receptacle or support.bbox_max_m[2] > 1.1:
            continue
        spot = _clear_spot_on_top(home, support)
        if spot is None:
            continue
        # Looking straight down at a horizontal top, depth along the optical axis is the same at every pixel.
        view = sim.render_view(spot, 0.0, -math.pi / 2)
        patch = (slice(315, 325), slice(175, 185))
        assert view.depth_m[patch] == pytest.approx(CAMERA_HEIGHT_M - support.bbox_max_m[2], abs=0.01)
        assert np.all(view.segmentation[patch] == support.instance_id)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("pose_seed", [0, 1, 2])
def test_depth_and_segmentation_agree_with_ray_casting(sim: EmbeddedSim, pose_seed: int) -> None:
    rng = np.random.default_rng(pose_seed)
    xy = sim.navgrid.sample_navigable(rng)
    yaw, tilt = rng.uniform(-math.pi, math.pi), rng.uniform(-1.2, 0.5)
    view = sim.render_view(xy, yaw, tilt)
    rotation = camera_rotation(yaw, tilt)
    k = sim.intrinsics
    depth_errors, same_segment = [], []
    for v in range(8, 640, 40):
        for u in range(8, 360, 30):
            # Pixel ray with unit length along the optical axis (camera looks along -z, image v grows down),
            # so the ray parameter at the hit is the depth along the axis.
            ray = rotation @ np.array([(u - k.cx) / k.fx, -(v - k.cy) / k.fy, -1.0])
            distance, instance = sim.renderer.cast_ray((xy[0], xy[1], CAMERA_HEIGHT_M), ray)
            depth_errors.append(abs(float(view.depth_m[v, u]) - distance))
            same_segment.append(int(view.segmentation[v, u]) == instance)
    assert np.quantile(depth_errors, 0.98) < 0.02
    assert np.mean(same_segment) > 0.98


@pytest.mark.parametrize(
    "actions, pose, tilt_deg",
    [
        ([A.MOVE_FORWARD], (0.25, 0.0, 0.0), 0.0),
        ([A.MOVE_FORWARD] * 3, (0.75, 0.0, 0.0), 0.0),
        ([A.TURN_LEFT], (0.0, 0.0, 30.0), 0.0),
        ([A.TURN_RIGHT, A.TURN_RIGHT], (0.0, 0.0, -60.0), 0.0),
        ([A.TURN_LEFT, A.MOVE_FORWARD], (0.25 * math.cos(math.radians(30)), 0.125, 30.0), 0.0),
        ([A.LOOK_UP], (0.0, 0.0, 0.0), 30.0),
        ([A.LOOK_UP, A.LOOK_UP], (0.0, 0.0, 0.0), 30.0),
        ([A.LOOK_DOWN] * 4, (0.0, 0.0, 0.0), -90.0),
        ([A.LOOK_DOWN, A.LOOK_UP], (0.0, 0.0, 0.0), 0.0),
        ([A.STOP], (0.0, 0.0, 0.0), 0.0),
    ],
)
def test_action_semantics(sim: EmbeddedSim, actions: list[DiscreteAction], pose: tuple[float, float, float],
                          tilt_deg: float) -> None:
    start = _open_start(sim)
    start_yaw = 0.7
    sim.reset(start, start_yaw)
    for action in actions:
        obs = sim.step(action)
    assert obs.step == len(actions)
    assert not obs.collided
    assert obs.pose.x_m == pytest.approx(pose[0], abs=1e-9)
    assert obs.pose.y_m == pytest.approx(pose[1], abs=1e-9)
    assert math.degrees(obs.pose.yaw_rad) == pytest.approx(pose[2], abs=1e-9)
    assert math.degrees(obs.camera_tilt_rad) == pytest.approx(tilt_deg, abs=1e-9)
    # GPS+compass is the world pose expressed in the episode frame anchored at the reset pose.
    world = sim.base_pose_world
    c, s = math.cos(start_yaw), math.sin(start_yaw)
    assert world.x_m == pytest.approx(start[0] + c * pose[0] - s * pose[1], abs=1e-9)
    assert world.y_m == pytest.approx(start[1] + s * pose[0] + c * pose[1], abs=1e-9)


def test_forward_into_a_wall_collides_and_stays_navigable(sim: EmbeddedSim) -> None:
    start, last_free_col = _start_facing_wall(sim)
    sim.reset(start, math.pi)
    collided_at = None
    for i in range(12):
        obs = sim.step(A.MOVE_FORWARD)
        assert sim.navgrid.is_navigable(sim.base_pose_world.xy())
        if obs.collided:
            collided_at = i
            break
    assert collided_at is not None
    _, col = sim.navgrid.world_to_cell(sim.base_pose_world.xy())
    assert col == last_free_col, "the robot stops in the last free cell before the wall"
    assert obs.pose.x_m < 0.25 * (collided_at + 1)
    assert abs(sim.base_pose_world.y_m - start[1]) < 1e-9, "head-on: nothing to slide along"
    # Pushing on: no motion, still a collision.
    before = sim.base_pose_world
    assert sim.step(A.MOVE_FORWARD).collided
    assert sim.base_pose_world == before


def test_oblique_push_slides_along_the_wall_only_with_sliding_on(sim: EmbeddedSim, home: Home) -> None:
    start, last_free_col = _start_facing_wall(sim)
    heading = math.pi - math.radians(10.0)  # mostly -x, a little +y
    with EmbeddedSim(home, SimConfig(allow_sliding=True)) as sliding:
        sliding.reset(start, heading)
        for _ in range(12):
            obs = sliding.step(A.MOVE_FORWARD)
            if obs.collided:
                break
        assert obs.collided
        before = sliding.base_pose_world
        obs = sliding.step(A.MOVE_FORWARD)
        assert obs.collided
        # Against the wall the blocked x component of every increment is dropped and the y component is kept.
        assert sliding.base_pose_world.x_m == before.x_m
        slid_m = sliding.base_pose_world.y_m - before.y_m
        assert slid_m == pytest.approx(0.25 * math.sin(math.radians(10.0)), abs=1e-6)
    # The default is GOAT-Bench's allow_sliding: False: a blocked step stops at the wall and stays there.
    assert sim.config.allow_sliding is False
    sim.reset(start, heading)
    for _ in range(12):
        sim.step(A.MOVE_FORWARD)
    stuck = sim.base_pose_world
    assert sim.step(A.MOVE_FORWARD).collided
    assert sim.base_pose_world == stuck


def test_same_actions_give_the_same_poses_and_images(sim: EmbeddedSim) -> None:
    actions = [A(int(a)) for a in np.random.default_rng(5).integers(1, 6, size=12)]
    start = _open_start(sim)
    runs = []
    for _ in range(2):
        frames = [sim.reset(start, 1.0)] + [sim.step(a) for a in actions]
        runs.append(frames)
    for a, b in zip(*runs, strict=True):
        assert a.pose == b.pose and a.collided == b.collided and a.camera_tilt_rad == b.camera_tilt_rad
        assert np.array_equal(a.rgb, b.rgb)
        assert np.array_equal(a.depth_m, b.depth_m)
        assert a.segmentation is not None and b.segmentation is not None
        assert np.array_equal(a.segmentation, b.segmentation)


def test_render_view_does_not_move_the_robot_and_sees_objects(sim: EmbeddedSim, home: Home) -> None:
    sim.reset(_open_start(sim), 0.2)
    before = (sim.base_pose_world, sim.camera_tilt_rad)
    seen = 0
    objects = home.objects[:12]
    for obj in objects:
        point = sim.navgrid.view_points(obj)[0]
        centre = np.asarray(obj.position_m)
        distance = float(np.linalg.norm(centre[:2] - point))
        view = sim.render_view(point, math.atan2(centre[1] - point[1], centre[0] - point[0]),
                               math.atan2(centre[2] - CAMERA_HEIGHT_M, distance))
        assert view.rgb.shape == (640, 360, 3) and view.segmentation.shape == (640, 360)
        seen += bool(np.any(view.segmentation == obj.instance_id))
    assert seen >= 0.8 * len(objects)
    assert (sim.base_pose_world, sim.camera_tilt_rad) == before


def test_rendered_colours_stay_close_to_their_names(sim: EmbeddedSim, home: Home) -> None:
    close = []
    for obj in home.objects:
        if obj.receptacle_id is not None:
            continue
        point = sim.navgrid.view_points(obj, radius_m=1.5)[0]
        centre = np.asarray(obj.position_m)
        view = sim.render_view(point, math.atan2(centre[1] - point[1], centre[0] - point[0]), -0.5)
        mask = view.segmentation == obj.instance_id
        if mask.sum() < 500:
            continue
        median = np.median(view.rgb[mask].astype(float), axis=0)
        close.append(np.abs(median - np.asarray(COLOURS[obj.colour])).max() < 45.0)
    assert len(close) >= 5
    assert np.mean(close) >= 0.8


@pytest.mark.parametrize("colour", sorted(COLOURS))
def test_object_textures_keep_the_base_colour_and_differ_per_instance(colour: str) -> None:
    base = np.asarray(COLOURS[colour], dtype=float)
    a = object_texture(np.random.default_rng([1, 2]), COLOURS[colour])
    b = object_texture(np.random.default_rng([1, 3]), COLOURS[colour])
    assert np.array_equal(a, object_texture(np.random.default_rng([1, 2]), COLOURS[colour]))
    for texture in (a, b):
        near_base = np.abs(texture.astype(float) - base).max(axis=2) < 25.0
        assert near_base.mean() >= 0.6
        assert near_base.mean() <= 0.9, "patterns give SIFT something to find"
    assert np.mean(np.abs(a.astype(float) - b.astype(float)).max(axis=2) > 25.0) > 0.2


def test_reset_off_the_navigable_space_raises(sim: EmbeddedSim, home: Home) -> None:
    outside = np.asarray(home.bounds_min_xy_m) - 1.0
    with pytest.raises(UnreachableGoalError, match="not navigable"):
        sim.reset(outside, 0.0)
    with pytest.raises(UnreachableGoalError):
        sim.reset((float("nan"), 1.0), 0.0)


def test_unknown_instance_id_is_named(sim: EmbeddedSim) -> None:
    with pytest.raises(SceneGenerationError, match="9999"):
        sim.object_by_instance_id(9999)
    assert all(o.category == "chair" for o in sim.objects_of_category("chair"))


@pytest.mark.parametrize(
    "field, value",
    [("width_px", 0), ("height_px", -5), ("hfov_deg", 190.0), ("camera_height_m", 0.0),
     ("robot_radius_m", float("nan")), ("grid_resolution_m", -0.05), ("max_tilt_rad", -0.1),
     ("min_tilt_rad", 0.2)],
)
def test_bad_sim_config_names_the_field(field: str, value: float) -> None:
    with pytest.raises(SceneGenerationError, match=field):
        SimConfig(**{field: value})


def _segmentations_both_ways(simulator: EmbeddedSim, objects: tuple[ObjectSpec, ...]) -> int:
    """Render each object's view both ways (the segmentation pass alone first, then the full frame) and check they
    agree; the views jump between objects, so the culled geoms change between calls. The objects seen."""
    seen = 0
    for obj in objects:
        point = simulator.navgrid.view_points(obj)[0]
        centre = np.asarray(obj.position_m)
        yaw = math.atan2(centre[1] - point[1], centre[0] - point[0])
        tilt = math.atan2(centre[2] - CAMERA_HEIGHT_M, float(np.linalg.norm(centre[:2] - point)))
        alone = simulator.render_segmentation(point, yaw, tilt)
        full = simulator.render_view(point, yaw, tilt)
        np.testing.assert_array_equal(alone, full.segmentation)
        np.testing.assert_array_equal(simulator.render_segmentation(point, yaw + 0.5, tilt),
                                      simulator.render_view(point, yaw + 0.5, tilt).segmentation)
        seen += bool(np.any(alone == obj.instance_id))
    return seen


def test_segmentation_alone_is_the_full_frames_segmentation(sim: EmbeddedSim, home: Home) -> None:
    objects = home.objects[:8]
    assert _segmentations_both_ways(sim, objects) >= 0.8 * len(objects)


def test_segmentation_alone_matches_in_a_large_home_with_room_culling() -> None:
    large = generate_home(11, home_config_for("large"))
    with EmbeddedSim(large) as simulator:
        objects = large.objects[::max(1, len(large.objects) // 8)][:8]
        assert _segmentations_both_ways(simulator, objects) >= 0.8 * len(objects)


def test_close_is_idempotent_and_render_after_close_fails(home: Home) -> None:
    simulator = EmbeddedSim(home)
    observation: Observation = simulator.observe()
    assert observation.rgb.shape == (640, 360, 3)
    simulator.close()
    simulator.close()
    with pytest.raises(RuntimeError, match="closed"):
        simulator.observe()
    with pytest.raises(RuntimeError, match="render_segmentation.*closed"):
        simulator.render_segmentation((0.0, 0.0), 0.0)


def test_a_renderer_nobody_closed_does_not_break_another_when_collected(sim: EmbeddedSim) -> None:
    """OpenGL object names are per context: a renderer freed by the garbage collector while another one's context is
    current must free its own framebuffers, not the other's (whose frames then came back stale)."""
    start = _open_start(sim)
    before = [sim.reset(start, yaw) for yaw in (0.0, 1.0)]
    other = Renderer(generate_home(8, HomeConfig(furniture="primitive")), 64, 48, 1.0)
    other.render((0.0, 0.0, 1.3), 0.0, 0.0)
    sim.reset(start, 0.0)  # the simulator's context is current again
    del other
    gc.collect()
    after = [sim.reset(start, yaw) for yaw in (0.0, 1.0)]
    for a, b in zip(before, after, strict=True):
        assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.depth_m, b.depth_m)
        assert a.segmentation is not None and b.segmentation is not None
        assert np.array_equal(a.segmentation, b.segmentation)
