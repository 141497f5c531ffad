"""The detector error model: each kind of error at its configured rate, deterministic under a seed."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from goat_core.errors import ConfigError
from goat_core.perception.confusions import (
    LookAlikeRule,
    build_confusion_table,
    load_confusion_table,
    parse_confusion_table,
    size_ratio,
)
from goat_core.perception.detector_errors import (
    ERROR_PRESETS,
    INVENTED_KEY_BASE,
    DetectorErrorConfig,
    DetectorErrorModel,
    describe_errors,
    hidden_outline_fraction,
    miss_probability,
)
from goat_core.perception.factory import PerceptionConfig, build_perception
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import CameraIntrinsics, Observation, Pose2D

H, W = 60, 80
LABELS = ("chair", "armchair", "office chair", "mug", "cup", "plant")
CONFUSIONS = {"chair": [("armchair", 0.6), ("office chair", 0.4)], "mug": [("cup", 1.0)]}
FRAMES = 3000


def _obs(objects: dict[int, tuple[str, tuple[int, int, int, int]]], step: int, depth_m: float = 2.0,
         x_m: float = 0.0) -> Observation:
    """A frame with a flat wall at ``depth_m`` and box-shaped instances id -> (category, (v0, v1, u0, u1))."""
    seg = np.full((H, W), -1, dtype=np.int32)
    for inst, (_, (v0, v1, u0, u1)) in objects.items():
        seg[v0:v1, u0:u1] = inst
    return Observation(rgb=np.zeros((H, W, 3), np.uint8), depth_m=np.full((H, W), depth_m, np.float32),
                       pose=Pose2D(x_m, 0.0, 0.0), camera_tilt_rad=0.0, camera_height_m=1.31,
                       intrinsics=CameraIntrinsics.from_hfov(W, H, math.radians(42.0)), step=step,
                       segmentation=seg, instance_categories={k: c for k, (c, _) in objects.items()})


def _model(seed: int = 7, min_pixels: int = 10, **rates: float) -> DetectorErrorModel:
    return DetectorErrorModel(LABELS, DetectorErrorConfig(**rates), seed, CONFUSIONS, min_pixels=min_pixels)


ONE_CHAIR = {3: ("chair", (20, 40, 30, 50))}  # 400 pixels, away from the border


def _rate(hits: int, n: int, expected: float) -> None:
    """``hits`` of ``n`` within 4 standard deviations of ``expected``."""
    sd = math.sqrt(expected * (1 - expected) / n)
    assert abs(hits / n - expected) < 4 * sd + 1e-9, f"rate {hits / n:.4f}, expected {expected:.4f}"


def test_all_zero_rates_give_ground_truth() -> None:
    model = _model()
    gt = GroundTruthPerception(LABELS, min_pixels=10)
    for step in range(20):
        obs = _obs(ONE_CHAIR, step)
        got, want = model.detect(obs), gt.detect(obs)
        assert [(d.instance_key, d.category) for d in got] == [(d.instance_key, d.category) for d in want]
        assert all(np.array_equal(a.mask, b.mask) for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("rates, pixels_box, depth_m, expected", [
    ({"miss_base": 0.2}, (20, 40, 30, 50), 2.0, 0.2),
    ({"miss_small": 0.5, "miss_small_pixels": 400.0}, (20, 40, 30, 50), 2.0, 0.25),  # 400 px: half of 0.5
    ({"miss_far_per_m": 0.1, "miss_far_from_m": 3.0}, (20, 40, 30, 50), 5.0, 0.2),
    ({"miss_base": 0.1, "miss_far_per_m": 0.1, "miss_far_from_m": 3.0}, (20, 40, 30, 50), 5.0, 1 - 0.9 * 0.8),
])
def test_misses_at_their_configured_rate(rates: dict[str, float], pixels_box: tuple[int, int, int, int],
                                         depth_m: float, expected: float) -> None:
    model = _model(**rates)
    missed = sum(not model.detect(_obs({3: ("chair", pixels_box)}, step, depth_m)) for step in range(FRAMES))
    _rate(missed, FRAMES, expected)


def test_small_far_and_hidden_objects_are_missed_more() -> None:
    cfg = ERROR_PRESETS["detic-like"]
    assert miss_probability(cfg, 200, 2.0, 0.0) > miss_probability(cfg, 5000, 2.0, 0.0)
    assert miss_probability(cfg, 2000, 6.0, 0.0) > miss_probability(cfg, 2000, 2.0, 0.0)
    assert miss_probability(cfg, 2000, 2.0, 0.5) > miss_probability(cfg, 2000, 2.0, 0.0)


def test_hidden_outline_counts_the_image_border_and_nearer_occluders() -> None:
    depth = np.full((H, W), 3.0, np.float32)
    mask = np.zeros((H, W), bool)
    mask[20:30, 0:10] = True  # a 10 x 10 square on the left border: 10 of its 36 outline pixels lie on it
    assert hidden_outline_fraction(mask, depth) == pytest.approx(10 / 36)
    mask[:] = False
    mask[20:30, 30:40] = True
    assert hidden_outline_fraction(mask, depth) == 0.0
    depth[20:30, 40:45] = 1.0  # a nearer object against its right side
    assert hidden_outline_fraction(mask, depth) == pytest.approx(10 / 36)
    depth[20:30, 25:30] = 5.0  # a farther surface on the left hides nothing
    assert hidden_outline_fraction(mask, depth) == pytest.approx(10 / 36)


def test_hidden_objects_are_missed_at_the_configured_rate() -> None:
    model = _model(miss_hidden=0.9)
    box = {3: ("chair", (20, 30, 0, 10))}  # on the border: hidden fraction 10/36
    missed = sum(not model.detect(_obs(box, step)) for step in range(FRAMES))
    _rate(missed, FRAMES, 0.9 * 10 / 36)


def test_confusions_at_their_rate_and_only_with_look_alikes() -> None:
    model = _model(confusion=0.3)
    names = [model.detect(_obs(ONE_CHAIR, step))[0].category for step in range(FRAMES)]
    confused = [n for n in names if n != "chair"]
    _rate(len(confused), FRAMES, 0.3)
    assert set(confused) == {"armchair", "office chair"}
    _rate(confused.count("armchair"), len(confused), 0.6)
    plant = {4: ("plant", (20, 40, 30, 50))}  # no look-alike in the table: never confused
    assert all(d.category == "plant" for step in range(200) for d in model.detect(_obs(plant, step)))


def test_a_fraction_of_instances_is_confused_persistently() -> None:
    model = _model(confusion_sticky_fraction=0.25, confusion_sticky=1.0)
    chairs = {k: ("chair", (2 + 4 * (k // 16), 5 + 4 * (k // 16), 2 + 5 * (k % 16), 6 + 5 * (k % 16)))
              for k in range(160)}
    model = DetectorErrorModel(LABELS, model.config, 7, CONFUSIONS, min_pixels=5)
    first = {d.instance_key: d.category for d in model.detect(_obs(chairs, 0))}
    second = {d.instance_key: d.category for d in model.detect(_obs(chairs, 1, x_m=1.0))}
    assert first.keys() == second.keys() == set(chairs)
    assert {k for k, c in first.items() if c != "chair"} == {k for k, c in second.items() if c != "chair"}
    _rate(sum(c != "chair" for c in first.values()), len(chairs), 0.25)


def test_phantoms_per_frame_at_their_rate_on_surfaces() -> None:
    model = _model(phantoms_per_frame=0.5, phantom_pixels=(40, 80))
    counts, keys = [], set()
    for step in range(FRAMES):
        phantoms = [d for d in model.detect(_obs(ONE_CHAIR, step)) if d.instance_key != 3]
        counts.append(len(phantoms))
        keys |= {d.instance_key for d in phantoms}
        assert all(d.category in LABELS and d.score < 1.0 for d in phantoms)
    # Poisson mean 0.5; a blob clipped by the border below min_pixels is dropped, so a little fewer.
    mean = float(np.mean(counts))
    assert 0.42 < mean <= 0.5 + 4 * math.sqrt(0.5 / FRAMES)
    assert min(keys) >= INVENTED_KEY_BASE  # never an existing instance's key


def test_phantom_on_an_object_is_named_as_its_look_alike() -> None:
    big_mug = {5: ("mug", (0, H, 0, W))}
    model = _model(phantoms_per_frame=1.0, phantom_pixels=(40, 80))
    names = {d.category for step in range(300) for d in model.detect(_obs(big_mug, step)) if d.instance_key != 5}
    assert names == {"cup"}


def test_masks_eroded_or_dilated_at_their_rate() -> None:
    model = _model(mask_error=0.4, mask_error_max_px=2)
    truth = np.zeros((H, W), bool)
    truth[20:40, 30:50] = True
    grown = shrunk = 0
    for step in range(FRAMES):
        mask = model.detect(_obs(ONE_CHAIR, step))[0].mask
        grown += int(mask.sum() > truth.sum())
        shrunk += int(mask.sum() < truth.sum())
        assert (mask & ~truth).any() == (mask.sum() > truth.sum())
    _rate(grown + shrunk, FRAMES, 0.4)
    _rate(grown, grown + shrunk, 0.5)


def test_ids_split_at_their_rate() -> None:
    model = _model(id_split=0.05)
    keys = [model.detect(_obs(ONE_CHAIR, step))[0].instance_key for step in range(1, FRAMES + 1)]
    changes = sum(a != b for a, b in zip(keys[:-1], keys[1:], strict=True))
    _rate(changes, FRAMES - 1, 0.05)
    assert keys[0] == 3 or keys[0] >= INVENTED_KEY_BASE
    assert model.detect(_obs(ONE_CHAIR, 0))[0].instance_key in (3, INVENTED_KEY_BASE)  # a new episode starts over


def test_ids_merge_at_their_rate_and_stay_merged() -> None:
    two = {3: ("chair", (10, 20, 10, 20)), 4: ("chair", (30, 40, 40, 50))}
    model = _model(id_merge=0.2)
    merged = 0
    for episode in range(FRAMES):
        first = model.detect(_obs(two, 0, x_m=float(episode)))
        if first[0].instance_key == first[1].instance_key:
            merged += 1
            later = model.detect(_obs(two, 1, x_m=float(episode)))
            assert later[0].instance_key == later[1].instance_key == 3  # the tracker keeps the merge
    _rate(merged, FRAMES, 0.2)


def test_same_seed_same_detections_other_seed_other_detections() -> None:
    def run(seed: int) -> list[tuple[int, str, float, int]]:
        model = DetectorErrorModel(LABELS, ERROR_PRESETS["harsh"], seed, CONFUSIONS, min_pixels=10)
        two = {3: ("chair", (10, 30, 10, 30)), 4: ("mug", (30, 50, 40, 60))}
        return [(d.instance_key, d.category, d.score, int(d.mask.sum()))
                for step in range(200) for d in model.detect(_obs(two, step, x_m=0.01 * step))]

    assert run(11) == run(11)
    assert run(11) != run(12)


def test_detections_do_not_depend_on_what_ran_before() -> None:
    model_a, model_b = (DetectorErrorModel(LABELS, ERROR_PRESETS["harsh"], 5, CONFUSIONS, 10) for _ in range(2))
    for step in range(30):
        model_a.detect(_obs(ONE_CHAIR, step, x_m=9.0))  # another episode first
    got_a = [(d.instance_key, d.category, d.score) for step in range(30) for d in model_a.detect(_obs(ONE_CHAIR, step))]
    got_b = [(d.instance_key, d.category, d.score) for step in range(30) for d in model_b.detect(_obs(ONE_CHAIR, step))]
    assert got_a == got_b


def test_config_checks_name_the_bad_value() -> None:
    with pytest.raises(ConfigError, match="confusion"):
        DetectorErrorConfig(confusion=1.5)
    with pytest.raises(ConfigError, match="phantom_pixels"):
        DetectorErrorConfig(phantom_pixels=(50, 10))
    with pytest.raises(ConfigError, match="'sloppy'"):
        PerceptionConfig(errors="sloppy")
    with pytest.raises(ConfigError, match="owlv2"):
        PerceptionConfig(backend="owlv2", model_dir="/nowhere", errors="mild")


def test_factory_wraps_ground_truth_only_when_asked() -> None:
    assert isinstance(build_perception(PerceptionConfig(), LABELS), GroundTruthPerception)
    model = build_perception(PerceptionConfig(errors="detic-like", errors_seed=4), LABELS)
    assert isinstance(model, DetectorErrorModel) and model.seed == 4
    assert model.config == ERROR_PRESETS["detic-like"]
    assert describe_errors("off", 4) == {"preset": "off"}
    assert describe_errors("mild", 4)["miss_base"] == ERROR_PRESETS["mild"].miss_base


def test_presets_grow_harsher() -> None:
    mild, detic, harsh = (dataclasses.asdict(ERROR_PRESETS[n]) for n in ("mild", "detic-like", "harsh"))
    for name in ("miss_base", "miss_small", "miss_hidden", "confusion", "phantoms_per_frame", "mask_error",
                 "id_split", "id_merge"):
        assert mild[name] < detic[name] < harsh[name], name


def test_shipped_confusion_table_pairs_look_alikes() -> None:
    table = load_confusion_table()
    assert "armchair" in dict(table["chair"]) and "cup" in dict(table["mug"])
    for name, row in table.items():
        assert abs(sum(w for _, w in row) - 1.0) < 1e-3 and name not in dict(row)


def test_confusion_table_keeps_related_names_of_similar_size() -> None:
    vectors = np.array([[1.0, 0.0], [0.8, 0.6], [0.8, 0.6], [0.0, 1.0]])
    names = ["chair", "armchair", "desk", "plant"]
    sizes = [(0.5, 0.5, 0.9), (0.8, 0.8, 0.9), (1.6, 0.8, 0.75), (0.3, 0.3, 1.0)]
    table = build_confusion_table(names, vectors, sizes, LookAlikeRule(min_name_cosine=0.5, min_size_ratio=0.6))
    assert [o for o, _ in table["chair"]] == ["armchair"]
    assert "plant" not in table
    assert size_ratio((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)) == 1.0
    with pytest.raises(ConfigError, match="chair"):
        parse_confusion_table({"chair": [["armchair", 0.4]]})
