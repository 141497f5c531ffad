"""Open-vocabulary detection with OWL-ViT (Minderer et al., ECCV 2022) and OWLv2 (Minderer et al., NeurIPS 2023).

Both predict, for every patch of a ViT image encoder, one box and a class embedding; a box's score for a text
query is the sigmoid of the (learned shift and scale of the) cosine between the patch's class embedding and the
query's text embedding. The label set is fixed at start-up, so the text embeddings are computed once and each
frame costs one pass of the image encoder plus the two small heads.

Post-processing (as transformers' ``post_process_object_detection``): each patch keeps its best label, boxes
under ``score_threshold`` are dropped; then greedy non-maximum suppression across labels (one object, one
label) and at most ``max_detections``. A box becomes a Detection mask for the instance memory, which
back-projects it exactly as it does ground-truth segments: either the whole box, or (default) the box pixels
whose depth lies within ``depth_band_m`` of the median depth of the box's central part, which keeps the object
and drops the wall behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional, Sequence

import numpy as np

from goat_core.errors import ConfigError, InvalidObservationError
from goat_core.perception.image_prep import (
    cxcywh_to_xyxy_px,
    owl_box_scale,
    owlv2_pixels,
    owlvit_pixels,
    pixel_box,
)
from goat_core.perception.model_folder import ModelFolder, check_model_folder
from goat_core.perception.torch_runtime import (
    OPENVOCAB_INSTALL_HINT,
    load_pretrained,
    load_tokenizer,
    resolve_device,
    to_numpy,
    torch_for,
)
from goat_core.types import Detection, Observation

OWL_VARIANTS = ("owlvit", "owlv2")
MaskMode = Literal["box", "depth_band"]


@dataclass(frozen=True)
class DetectorConfig:
    """Post-processing of the open-vocabulary detector."""

    score_threshold: float = 0.1  # transformers' OWL-ViT examples use 0.1; raise it for OWLv2 (~0.2-0.3)
    nms_iou: float = 0.3  # boxes overlapping a better one by more than this IoU are dropped
    max_detections: int = 20
    min_box_side_px: int = 4
    prompt_template: str = "a photo of a {}"  # the CLIP prompt; OWL-ViT was trained with such prompts too
    mask_mode: MaskMode = "depth_band"
    depth_band_m: float = 0.3  # depth_band: keep box pixels within this distance of the object's depth
    core_fraction: float = 0.5  # depth_band: the object's depth is the median over this central share of the box

    def __post_init__(self) -> None:
        if not 0.0 <= self.score_threshold <= 1.0:
            raise ConfigError(f"DetectorConfig.score_threshold must be in [0, 1], got {self.score_threshold!r}")
        if not 0.0 < self.nms_iou <= 1.0:
            raise ConfigError(f"DetectorConfig.nms_iou must be in (0, 1], got {self.nms_iou!r}")
        if self.max_detections < 1 or self.min_box_side_px < 1:
            raise ConfigError("DetectorConfig.max_detections and min_box_side_px must be >= 1, got "
                              f"{self.max_detections!r} and {self.min_box_side_px!r}")
        if self.mask_mode not in ("box", "depth_band"):
            raise ConfigError(f"DetectorConfig.mask_mode must be 'box' or 'depth_band', got {self.mask_mode!r}")
        if not self.depth_band_m > 0.0 or not 0.0 < self.core_fraction <= 1.0:
            raise ConfigError("DetectorConfig.depth_band_m must be > 0 and core_fraction in (0, 1], got "
                              f"{self.depth_band_m!r} and {self.core_fraction!r}")
        if "{}" not in self.prompt_template:
            raise ConfigError(f"DetectorConfig.prompt_template must contain '{{}}', got {self.prompt_template!r}")


@dataclass(frozen=True, eq=False)
class OwlPrediction:
    """Raw detector output for one frame."""

    scores: np.ndarray  # (P, Q) float32 sigmoid scores of each patch's box for each query
    boxes_xyxy_px: np.ndarray  # (P, 4) float64 boxes in frame pixels, clipped to the frame


class OwlModel:
    """An OWL-ViT or OWLv2 detector loaded from a local model folder, on one device."""

    def __init__(self, folder: ModelFolder, device: str = "cpu", torch_threads: int = 1) -> None:
        if folder.family.key not in OWL_VARIANTS:
            raise ConfigError(f"OwlModel needs an OWL-ViT or OWLv2 folder, got a {folder.family.title} folder "
                              f"({folder.path})")
        self.folder = folder
        self.variant = folder.family.key
        self._torch = torch_for(f"{folder.family.title} detection", torch_threads)
        self.device = resolve_device(self._torch, device)
        hint = folder.family.how_to_obtain()
        self._model = load_pretrained(folder.family.model_class, folder.path, self.device, hint)
        self._tokenizer = load_tokenizer(folder.path, hint)
        self._core = self._model.owlv2 if self.variant == "owlv2" else self._model.owlvit
        self._side_px = int(self._model.config.vision_config.image_size)  # position embeddings are fixed to it
        self._max_tokens = int(self._model.config.text_config.max_position_embeddings)  # 16 for OWL-ViT/OWLv2

    @classmethod
    def load(cls, variant: str, model_dir: Optional[str], device: str = "cpu", torch_threads: int = 1) -> OwlModel:
        """Check the folder first (fast, clear errors), then load the weights."""
        if variant not in OWL_VARIANTS:
            raise ConfigError(f"OWL variant must be one of {OWL_VARIANTS}, got {variant!r}")
        return cls(check_model_folder(model_dir, variant), device, torch_threads)

    def _pixels(self, rgb: np.ndarray) -> Any:
        prep = owlv2_pixels if self.variant == "owlv2" else owlvit_pixels
        array = prep(rgb, self._side_px, self.folder.normalisation)
        return self._torch.from_numpy(array)[None].to(self.device)

    def encode_texts(self, texts: Sequence[str]) -> Any:
        """(Q, D) text query embeddings (a tensor on the model's device)."""
        if isinstance(texts, str) or not texts:
            raise ConfigError(f"encode_texts needs a non-empty sequence of strings, got {texts!r}")
        tokens = self._tokenizer(list(texts), padding="max_length", truncation=True,
                                 max_length=self._max_tokens, return_tensors="pt")
        with self._torch.inference_mode():
            out = self._core.get_text_features(input_ids=tokens["input_ids"].to(self.device),
                                               attention_mask=tokens["attention_mask"].to(self.device))
        return getattr(out, "pooler_output", out)

    def encode_image_query(self, rgb: np.ndarray) -> Optional[Any]:
        """(1, D) query embedding of the object a picture shows (the model's image-conditioned detection)."""
        with self._torch.inference_mode():
            feature_map, _ = self._model.image_embedder(pixel_values=self._pixels(rgb))
            b, h, w, d = feature_map.shape
            try:
                query, _, _ = self._model.embed_image_query(feature_map.reshape(b, h * w, d), feature_map)
            except NameError as exc:  # transformers defines OWL-ViT's box helper only when Pillow is installed
                raise ConfigError(f"OWL image queries need Pillow ({exc}); {OPENVOCAB_INSTALL_HINT}") from exc
        return None if query is None else query.reshape(1, -1)

    def predict(self, rgb: np.ndarray, queries: Any) -> OwlPrediction:
        """Every patch's box and its score for each of the (Q, D) query embeddings."""
        height, width = rgb.shape[:2]
        with self._torch.inference_mode():
            feature_map, _ = self._model.image_embedder(pixel_values=self._pixels(rgb))
            b, h, w, d = feature_map.shape
            feats = feature_map.reshape(b, h * w, d)
            logits, _ = self._model.class_predictor(feats, queries[None], None)
            boxes = self._model.box_predictor(feats, feature_map)
            scores = self._torch.sigmoid(logits)
        xyxy = cxcywh_to_xyxy_px(to_numpy(boxes[0]), owl_box_scale(self.variant, width, height), width, height)
        return OwlPrediction(scores=to_numpy(scores[0]).astype(np.float32), boxes_xyxy_px=xyxy)


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    x0 = np.maximum(box[0], others[:, 0])
    y0 = np.maximum(box[1], others[:, 1])
    x1 = np.minimum(box[2], others[:, 2])
    y1 = np.minimum(box[3], others[:, 3])
    inter = np.clip(x1 - x0, 0.0, None) * np.clip(y1 - y0, 0.0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    return np.asarray(inter / np.maximum(area + areas - inter, 1e-9))


def select_boxes(scores: np.ndarray, boxes_xyxy_px: np.ndarray,
                 config: DetectorConfig) -> list[tuple[int, int, float]]:
    """(patch, label, score) of the kept boxes, best first: best label per patch, threshold, size, NMS."""
    if scores.ndim != 2 or scores.shape[0] != boxes_xyxy_px.shape[0]:
        raise ValueError(f"scores (P, Q) and boxes (P, 4) disagree: {scores.shape} vs {boxes_xyxy_px.shape}")
    if scores.shape[1] == 0:
        return []
    labels = np.argmax(scores, axis=1)
    best = scores[np.arange(scores.shape[0]), labels]
    sides = np.minimum(boxes_xyxy_px[:, 2] - boxes_xyxy_px[:, 0], boxes_xyxy_px[:, 3] - boxes_xyxy_px[:, 1])
    candidates = np.flatnonzero((best >= config.score_threshold) & (sides >= config.min_box_side_px))
    order = candidates[np.lexsort((candidates, -best[candidates]))]  # score descending, then patch index
    kept: list[int] = []
    for patch in order.tolist():
        if kept and float(_iou(boxes_xyxy_px[patch], boxes_xyxy_px[kept]).max()) > config.nms_iou:
            continue
        kept.append(patch)
        if len(kept) == config.max_detections:
            break
    return [(p, int(labels[p]), float(best[p])) for p in kept]


def box_mask(depth_m: np.ndarray, box: tuple[int, int, int, int], config: DetectorConfig) -> np.ndarray:
    """(H, W) bool mask of a detection box: the whole box, or its pixels at the object's depth."""
    h, w = depth_m.shape
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(w, box[2]), min(h, box[3])
    mask = np.zeros((h, w), dtype=bool)
    if x1 <= x0 or y1 <= y0:
        return mask
    if config.mask_mode == "box":
        mask[y0:y1, x0:x1] = True
        return mask
    region = depth_m[y0:y1, x0:x1]
    margin = 0.5 * (1.0 - config.core_fraction)
    r0, r1 = int(margin * (y1 - y0)), (y1 - y0) - int(margin * (y1 - y0))
    c0, c1 = int(margin * (x1 - x0)), (x1 - x0) - int(margin * (x1 - x0))
    core = region[r0:max(r1, r0 + 1), c0:max(c1, c0 + 1)]
    valid = core[core > 0.0]
    if valid.size == 0:
        return mask
    object_depth_m = float(np.median(valid))
    mask[y0:y1, x0:x1] = (region > 0.0) & (np.abs(region - object_depth_m) <= config.depth_band_m)
    return mask


class OwlDetector:
    """PerceptionBackend over a fixed label set with OWL-ViT or OWLv2."""

    persistent_keys = False  # instance keys are per-frame indices: the memory associates them geometrically

    def __init__(self, model: OwlModel, labels: Sequence[str], config: DetectorConfig = DetectorConfig()) -> None:
        if isinstance(labels, str) or not labels or any(not str(x).strip() for x in labels):
            raise ConfigError(f"labels must be a non-empty sequence of non-empty strings, got {labels!r}")
        self.model = model
        self.config = config
        self._labels: tuple[str, ...] = tuple(str(x) for x in labels)
        self._queries = model.encode_texts([config.prompt_template.format(label) for label in self._labels])

    @property
    def labels(self) -> Sequence[str]:
        return self._labels

    def predict(self, rgb: np.ndarray) -> OwlPrediction:
        """Raw scores and boxes of every patch for every label (for inspection and benchmarks)."""
        return self.model.predict(rgb, self._queries)

    def detect(self, obs: Observation) -> list[Detection]:
        """Detections best first; ``instance_key`` is the rank in this frame."""
        if obs.depth_m.shape != obs.rgb.shape[:2]:
            raise InvalidObservationError(f"depth {obs.depth_m.shape} and rgb {obs.rgb.shape[:2]} sizes differ")
        pred = self.predict(obs.rgb)
        detections: list[Detection] = []
        for patch, label, score in select_boxes(pred.scores, pred.boxes_xyxy_px, self.config):
            box = pixel_box(pred.boxes_xyxy_px[patch])
            mask = box_mask(obs.depth_m, box, self.config)
            if not mask.any():
                continue
            detections.append(Detection(instance_key=len(detections), category=self._labels[label], mask=mask,
                                        score=score, bbox_xyxy=box))
        return detections

