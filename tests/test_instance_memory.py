"""Lifelong instance memory: placement, merging, colour, best views and bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from goat_core.errors import InvalidObservationError
from goat_core.geometry import voxel_downsample
from goat_core.mapping.instance_memory import InstanceMemory, InstanceMemoryConfig, mask_pixels, nearest_distance_2d_m
from goat_core.types import CameraIntrinsics, Detection, Observation, Pose2D

K = CameraIntrinsics.from_hfov(90, 160, math.radians(42.0))
H_M = 1.31


ORIGIN = Pose2D(0.0, 0.0, 0.0)


def frame(depth_m: float, colour: tuple[int, int, int] = (200, 30, 30), pose: Pose2D = ORIGIN,
          step: int = 0) -> Observation:
    """A fronto-parallel surface ``depth_m`` ahead filling the view, coloured ``colour``."""
    rgb = np.zeros((K.height, K.width, 3), dtype=np.uint8)
    rgb[:] = colour
    return Observation(rgb=rgb, depth_m=np.full((K.height, K.width), depth_m, dtype=np.float32), pose=pose,
                       camera_tilt_rad=0.0, camera_height_m=H_M, intrinsics=K, step=step)


def detection(key: int, category: str, rows: slice, cols: slice) -> Detection:
    mask = np.zeros((K.height, K.width), dtype=bool)
    mask[rows, cols] = True
    return Detection(instance_key=key, category=category, mask=mask,
                     bbox_xyxy=(cols.start, rows.start, cols.stop, rows.stop))


CENTRE = (slice(70, 90), slice(35, 55))  # 20 x 20 px around the principal point


def test_detection_is_placed_where_the_pixels_are() -> None:
    memory = InstanceMemory(InstanceMemoryConfig())
    touched = memory.update([detection(5, "chair", *CENTRE)], frame(2.0, step=4))
    assert touched == [0]
    inst = memory.instances[0]
    assert inst.category == "chair"
    assert inst.first_seen_step == inst.last_seen_step == 4
    np.testing.assert_allclose(inst.centroid_m, (2.0, 0.0, H_M), atol=0.05)
    # 20 px at 2 m with f = 117 px is 0.34 m: a flat patch one voxel deep.
    assert inst.bbox_max_m[1] - inst.bbox_min_m[1] == pytest.approx(0.34, abs=0.06)
    assert nearest_distance_2d_m(inst, 0.0, 0.0) == pytest.approx(2.0, abs=0.01)


@pytest.mark.parametrize("voxel", [0.05, 0.1])
def test_same_key_merges_and_deduplicates(voxel: float) -> None:
    memory = InstanceMemory(InstanceMemoryConfig(voxel_m=voxel))
    memory.update([detection(5, "chair", *CENTRE)], frame(2.0, step=1))
    n_first = memory.instances[0].points_xyz_m.shape[0]
    memory.update([detection(5, "chair", *CENTRE)], frame(2.0, step=9))
    assert list(memory.instances) == [0]
    inst = memory.instances[0]
    assert inst.num_observations == 2
    assert (inst.first_seen_step, inst.last_seen_step) == (1, 9)
    assert inst.points_xyz_m.shape[0] == n_first  # the same surface adds no voxel
    keys = np.floor(inst.points_xyz_m / voxel)
    assert len({tuple(k) for k in keys}) == inst.points_xyz_m.shape[0]


def test_different_keys_are_different_instances() -> None:
    memory = InstanceMemory(InstanceMemoryConfig())
    memory.update([detection(5, "chair", *CENTRE), detection(6, "chair", slice(0, 20), slice(0, 20))],
                  frame(2.0))
    assert sorted(memory.instances) == [0, 1]


@pytest.mark.parametrize(("category", "second_depth", "merged"), [
    ("chair", 2.0, True),  # same voxels
    ("chair", 2.3, True),  # no shared voxel, centroid 0.3 m away
    ("chair", 3.0, False),  # 1 m away
    ("table", 2.0, False),  # other category
])
def test_detector_keys_merge_by_overlap_or_centroid(category: str, second_depth: float, merged: bool) -> None:
    memory = InstanceMemory(InstanceMemoryConfig(merge_centroid_distance_m=0.5))
    memory.update([detection(0, "chair", *CENTRE)], frame(2.0), persistent_keys=False)
    memory.update([detection(0, category, *CENTRE)], frame(second_depth), persistent_keys=False)
    assert len(memory.instances) == (1 if merged else 2)


def test_detector_keys_never_merge_by_key_alone() -> None:
    memory = InstanceMemory(InstanceMemoryConfig())
    memory.update([detection(0, "chair", *CENTRE)], frame(2.0), persistent_keys=False)
    memory.update([detection(0, "chair", *CENTRE)], frame(4.0), persistent_keys=False)
    assert len(memory.instances) == 2


def test_mean_colour_is_a_running_mean_over_pixels() -> None:
    memory = InstanceMemory(InstanceMemoryConfig(pixel_stride_px=1))
    memory.update([detection(1, "cup", slice(0, 10), slice(0, 10))], frame(2.0, (100, 0, 0)))
    memory.update([detection(1, "cup", slice(0, 30), slice(0, 10))], frame(2.0, (200, 60, 0)))
    mean = memory.instances[0].mean_rgb
    assert mean is not None
    np.testing.assert_allclose(mean, ((100 * 100 + 200 * 300) / 400, 60 * 300 / 400, 0.0))


def test_from_one_side_only_the_largest_view_is_kept_with_its_margin() -> None:
    memory = InstanceMemory(InstanceMemoryConfig(views_per_instance=2, view_margin_px=5))
    for step, side in enumerate([10, 30, 20, 5]):
        det = detection(1, "cup", slice(50, 50 + side), slice(20, 20 + side))
        memory.update([det], frame(2.0, step=step))
    views = memory.instances[0].views
    assert [v.pixel_count for v in views] == [900]
    assert [v.step for v in views] == [1]
    assert views[0].rgb.shape == (30 + 10, 30 + 10, 3)
    assert views[0].mask.sum() == 900
    assert views[0].rgb.dtype == np.uint8


def _view_from(memory: InstanceMemory, bearing_rad: float, side_px: int, step: int) -> None:
    """Look at the instance around (2, 0) from ``bearing_rad`` (as seen from the instance), 2 m away."""
    x, y = 2.0 + 2.0 * math.cos(bearing_rad), 2.0 * math.sin(bearing_rad)
    pose = Pose2D(x, y, bearing_rad + math.pi)
    det = detection(1, "cup", slice(80 - side_px // 2, 80 + side_px // 2), slice(45 - side_px // 2, 45 + side_px // 2))
    memory.update([det], frame(2.0, pose=pose, step=step))


def test_views_are_spread_over_the_sides_of_the_instance_best_first() -> None:
    memory = InstanceMemory(InstanceMemoryConfig(views_per_instance=3, view_sectors=6))
    for step, (bearing, side) in enumerate([(math.pi, 10), (math.pi, 20), (0.1, 8), (math.pi / 2, 14),
                                            (-math.pi / 2, 6)]):
        _view_from(memory, bearing, side, step)
    views = memory.instances[0].views
    # One view per side, the largest of that side; a fourth side replaces the smallest only if larger.
    assert [v.pixel_count for v in views] == [400, 196, 64]
    assert [v.step for v in views] == [1, 3, 2]


def test_views_now_are_this_frames_detections_kept_or_not() -> None:
    memory = InstanceMemory(InstanceMemoryConfig(view_margin_px=5))
    memory.update([detection(1, "cup", slice(50, 80), slice(20, 50))], frame(2.0, step=0))
    memory.update([detection(1, "cup", slice(50, 60), slice(20, 30)), detection(2, "plate", *CENTRE)],
                  frame(2.0, step=1))
    assert [v.step for v in memory.instances[0].views] == [0]  # the smaller view of the same side is not kept
    now = memory.views_now({0})
    assert [(iid, v.step, v.pixel_count) for iid, v in now] == [(0, 1, 100)]
    assert now[0][1].rgb.shape == (10 + 10, 10 + 10, 3)
    assert [iid for iid, _ in memory.views_now({0, 1})] == [0, 1]
    memory.clear()
    assert memory.views_now({0, 1}) == []


def test_view_crop_is_clipped_and_copied() -> None:
    memory = InstanceMemory(InstanceMemoryConfig(view_margin_px=16))
    obs = frame(2.0)
    memory.update([detection(1, "cup", slice(0, 8), slice(0, 8))], obs)
    view = memory.instances[0].views[0]
    assert view.rgb.shape == (8 + 16, 8 + 16, 3)
    obs.rgb[:] = 0
    assert view.rgb.max() > 0  # the view does not alias the frame


def test_points_are_capped() -> None:
    memory = InstanceMemory(InstanceMemoryConfig(max_points_per_instance=50, pixel_stride_px=1))
    memory.update([detection(1, "wall art", slice(0, 160), slice(0, 90))], frame(2.0))
    assert memory.instances[0].points_xyz_m.shape[0] == 50


def _capped(points: np.ndarray, cap: int) -> np.ndarray:
    return points if points.shape[0] <= cap else points[np.linspace(0, points.shape[0] - 1, cap).astype(np.int64)]


@pytest.mark.parametrize(("cap", "merges"), [(60, 12), (2000, 12), (60, 40), (400, 40)])
def test_merged_points_are_the_old_and_new_ones_deduplicated_then_capped(cap: int, merges: int) -> None:
    """Every merge equals ``voxel_downsample(concatenate([old, new]))`` capped, also after the points were set from
    elsewhere (with voxels twice over): the lookup of new voxels in the kept keys must not drop or reorder any.
    Many capped merges in a row check the sorted keys kept between merges (merged, not sorted again): a key the
    cap took out and left among them would keep its voxel's next point out."""
    rng = np.random.default_rng(3)
    memory = InstanceMemory(InstanceMemoryConfig(max_points_per_instance=cap))
    want = np.empty((0, 3))
    for step in range(merges):
        obs = frame(2.0, pose=Pose2D(float(rng.uniform(-0.3, 0.3)), float(rng.uniform(-0.3, 0.3)),
                                     float(rng.uniform(-0.2, 0.2))), step=step)
        obs.depth_m[:] += rng.uniform(-0.15, 0.15, size=obs.depth_m.shape).astype(np.float32)
        rows, cols = slice(int(rng.integers(0, 40)), int(rng.integers(60, 90))), slice(int(rng.integers(0, 60)), 160)
        memory.update([detection(5, "sofa", rows, cols)], obs)
        new = memory.last_points[0]
        want = _capped(new if step == 0 else voxel_downsample(np.concatenate([want, new]), 0.05), cap)
        inst = memory.instances[0]
        np.testing.assert_array_equal(inst.points_xyz_m, want)
        if step == 5:  # points from elsewhere, each twice: deduplicated in full at the next merge
            inst.points_xyz_m = want = np.concatenate([inst.points_xyz_m, inst.points_xyz_m + 0.001])
    assert inst.num_observations == merges


def test_a_frames_detections_back_projected_together_give_each_ones_own_points() -> None:
    """One back-projection for all of a frame's detections: each detection gets the points of its own pixels alone,
    also where pixels without a return or beyond range drop out between them (the split must count those)."""
    from goat_core.geometry import pixels_to_episode

    rng = np.random.default_rng(7)
    cfg = InstanceMemoryConfig(pixel_stride_px=2, min_points=10, max_depth_m=3.0)
    obs = frame(2.0)
    obs.depth_m[:] = rng.uniform(0.5, 3.5, size=obs.depth_m.shape).astype(np.float32)  # some beyond max_depth_m
    obs.depth_m[rng.random(obs.depth_m.shape) < 0.2] = 0.0  # holes
    obs.depth_m[120:130, :] = 0.0  # a detection with no return at all
    dets = [detection(1, "sofa", slice(0, 40), slice(0, 60)), detection(2, "cup", slice(50, 55), slice(70, 75)),
            detection(3, "lamp", slice(120, 130), slice(0, 90)), detection(4, "bed", slice(45, 90), slice(0, 60)),
            detection(5, "chair", slice(135, 160), slice(30, 90))]
    memory = InstanceMemory(cfg)
    touched = memory.update(dets, obs)
    want = {}
    for det in dets:
        rows, cols = mask_pixels(det.mask, det.bbox_xyxy, cfg.pixel_stride_px)
        if rows.shape[0] < cfg.min_points:
            rows, cols = mask_pixels(det.mask, det.bbox_xyxy, 1)
        pts = pixels_to_episode(obs.depth_m, rows, cols, K, ORIGIN, H_M, 0.0, cfg.max_depth_m).points_xyz_m
        if pts.shape[0] >= cfg.min_points:
            want[det.category] = voxel_downsample(pts, cfg.voxel_m)
    assert sorted(want) == ["bed", "chair", "cup", "sofa"]  # the lamp has no return; the cup used every pixel
    assert sorted(memory.last_categories[i] for i in touched) == sorted(want)
    for mem_id in touched:
        np.testing.assert_array_equal(memory.last_points[mem_id], want[memory.last_categories[mem_id]])


def test_detection_without_depth_is_skipped_and_bad_mask_raises() -> None:
    memory = InstanceMemory(InstanceMemoryConfig())
    assert memory.update([detection(1, "cup", *CENTRE)], frame(0.0)) == []
    assert memory.update([detection(1, "cup", *CENTRE)], frame(9.0)) == []  # beyond max_depth_m
    bad = Detection(instance_key=3, category="cup", mask=np.ones((5, 5), dtype=bool))
    with pytest.raises(InvalidObservationError, match=r"\(5, 5\)"):
        memory.update([bad], frame(2.0))


def test_clear_forgets_everything() -> None:
    memory = InstanceMemory(InstanceMemoryConfig())
    memory.update([detection(5, "chair", *CENTRE)], frame(2.0))
    memory.clear()
    assert memory.instances == {}
    memory.update([detection(5, "chair", *CENTRE)], frame(2.0))
    assert list(memory.instances) == [0]
    assert memory.instances[0].num_observations == 1


@pytest.mark.parametrize("kwargs", [{"voxel_m": 0.0}, {"max_points_per_instance": 0}, {"view_margin_px": -1},
                                    {"merge_overlap_ratio": 1.5}, {"views_per_instance": 0}])
def test_bad_config_raises(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        InstanceMemoryConfig(**kwargs)


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("box", [(17, 33, 52, 71), (18, 33, 52, 71), (17, 33, 51, 71), (17, 34, 52, 70),
                                 (0, 0, 0, 0), (0, 0, K.width, K.height)])
def test_mask_pixels_searched_in_the_box_are_the_whole_masks(stride: int, box: tuple[int, int, int, int]) -> None:
    """The box only narrows the search: a box that misses part of the mask (the exact box is the first) or is
    degenerate gives the same pixels, in the same raster order, as a search of the whole mask."""
    rng = np.random.default_rng(stride)
    mask = np.zeros((K.height, K.width), dtype=bool)
    mask[33:71, 17:52] = rng.random((38, 35)) < 0.6  # odd corners, so the stride's phase matters
    mask[33, 17] = mask[70, 51] = True
    want_rows, want_cols = np.nonzero(mask[::stride, ::stride])
    rows, cols = mask_pixels(mask, box, stride)
    assert np.array_equal(rows, want_rows * stride) and np.array_equal(cols, want_cols * stride)


def test_a_detection_whose_box_misses_part_of_its_mask_is_placed_from_all_of_it() -> None:
    exact, memory = InstanceMemory(InstanceMemoryConfig()), InstanceMemory(InstanceMemoryConfig())
    det = detection(5, "chair", *CENTRE)
    exact.update([det], frame(2.0))
    x0, y0, x1, y1 = det.bbox_xyxy
    memory.update([Detection(instance_key=5, category="chair", mask=det.mask, bbox_xyxy=(x0 + 5, y0, x1, y1 - 5))],
                  frame(2.0))
    np.testing.assert_array_equal(memory.instances[0].points_xyz_m, exact.instances[0].points_xyz_m)
