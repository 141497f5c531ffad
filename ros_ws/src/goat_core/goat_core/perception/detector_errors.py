"""A detector error model over ground-truth segmentation: the mistakes a real detector makes, made on purpose.

Every headline number of the project uses ground-truth segmentation (GOAT-Bench's GOAT-GTSem setting); GOAT-Bench's
modular agent falls from SR 56.7 to 26.3 when Detic replaces ground truth. This backend wraps the ground-truth one
and, per frame, draws the errors a detector and its tracker make:

* misses, with a probability that grows as an object gets small in the image, far away or hidden (its outline
  cut by the image border or by a nearer surface);
* confusions with a look-alike category (goat_core.perception.confusions: a table from the categories' name
  embeddings and sizes), per frame, and for a fraction of instances persistently (a detector that always calls
  this armchair a chair);
* phantom detections on furniture and walls (a blob on one surface, named as a look-alike of what is under it);
* masks that fall short of the object or bleed past it (erosion / dilation);
* instance ids that split (the tracker starts a new id for a known object) or merge (two objects of one category
  share an id), as a tracker's do;
* scores: true detections score higher than confusions and phantoms, on average, with overlap.

Deterministic: a frame's draws depend only on the seed, the step and the camera pose, so the same seed gives the
same detections whatever ran before; the tracker's id table restarts with each episode (step 0). Presets and the
meaning of every parameter: docs/perception_errors.md.
"""

from __future__ import annotations

import dataclasses
import zlib
from dataclasses import dataclass, field, replace
from typing import Mapping, Optional, Sequence

import cv2
import numpy as np

from goat_core.errors import ConfigError
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import Detection, Observation

# Keys of detections the tracker makes up (split ids, phantoms) start here, above any simulator instance id.
INVENTED_KEY_BASE = 1 << 30
# A neighbour this much nearer than the object's own surface hides the object there (occlusion, not a crease).
_OCCLUDER_NEARER_M = 0.10


@dataclass(frozen=True)
class DetectorErrorConfig:
    """The rates of each kind of error; all zero is ground truth. Probabilities per detection per frame unless
    said otherwise."""

    # Misses: p = 1 - (1 - base)(1 - size)(1 - far)(1 - hidden), each term below.
    miss_base: float = 0.0  # of a large, near, whole object
    miss_small: float = 0.0  # size term = miss_small / (1 + pixels / miss_small_pixels)
    miss_small_pixels: float = 1000.0
    miss_far_per_m: float = 0.0  # far term = miss_far_per_m * (median depth - miss_far_from_m), >= 0
    miss_far_from_m: float = 3.0
    miss_hidden: float = 0.0  # hidden term = miss_hidden * fraction of the outline cut by border or occluder
    # Confusions (categories with a look-alike in the table only).
    confusion: float = 0.0  # per frame
    confusion_sticky_fraction: float = 0.0  # fraction of instances the detector mistakes persistently ...
    confusion_sticky: float = 0.0  # ... in this fraction of frames
    # Phantoms.
    phantoms_per_frame: float = 0.0  # Poisson mean
    phantom_pixels: tuple[int, int] = (400, 6000)  # area range of a phantom's blob
    # Masks.
    mask_error: float = 0.0  # probability that a mask is eroded or dilated (half each)
    mask_error_max_px: int = 3  # by 1 .. this many pixels
    # Tracker ids.
    id_split: float = 0.0  # the object gets a new id from this frame on
    id_merge: float = 0.0  # per pair of same-category detections in a frame: the second takes the first's id
    # Scores.
    score_true: float = 0.75  # mean score of a correct detection
    score_false: float = 0.5  # mean score of a confusion or a phantom
    score_sd: float = 0.12

    def __post_init__(self) -> None:
        probabilities = ("miss_base", "miss_small", "miss_hidden", "confusion", "confusion_sticky_fraction",
                         "confusion_sticky", "mask_error", "id_split", "id_merge", "score_true", "score_false")
        for name in probabilities:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"DetectorErrorConfig.{name} must be in [0, 1], got {value!r}")
        for name in ("miss_small_pixels", "miss_far_per_m", "miss_far_from_m", "phantoms_per_frame", "score_sd"):
            if getattr(self, name) < 0.0:
                raise ConfigError(f"DetectorErrorConfig.{name} must be >= 0, got {getattr(self, name)!r}")
        lo, hi = self.phantom_pixels
        if not 1 <= lo <= hi:
            raise ConfigError(f"DetectorErrorConfig.phantom_pixels must be 1 <= lo <= hi, got {self.phantom_pixels}")
        if self.mask_error_max_px < 1:
            raise ConfigError(f"DetectorErrorConfig.mask_error_max_px must be >= 1, got {self.mask_error_max_px}")


# The presets; docs/perception_errors.md explains the numbers. "detic-like" is calibrated on navigation outcome
# (GOAT-Bench: GT -> Detic divides the modular agent's SR by 2.2), not on detection AP.
ERROR_PRESETS: dict[str, DetectorErrorConfig] = {
    "mild": DetectorErrorConfig(
        miss_base=0.03, miss_small=0.3, miss_small_pixels=500.0, miss_far_per_m=0.05, miss_far_from_m=4.0,
        miss_hidden=0.2, confusion=0.03, phantoms_per_frame=0.05, mask_error=0.1, mask_error_max_px=2,
        id_split=0.005, id_merge=0.02, score_true=0.8, score_false=0.45),
    # 65 % of the way from mild to harsh in every parameter (mask_error_max_px rounded): the calibration point.
    "detic-like": DetectorErrorConfig(
        miss_base=0.1405, miss_small=0.625, miss_small_pixels=2125.0, miss_far_per_m=0.18, miss_far_from_m=3.025,
        miss_hidden=0.46, confusion=0.173, confusion_sticky_fraction=0.13, confusion_sticky=0.455,
        phantoms_per_frame=0.5375, mask_error=0.36, mask_error_max_px=5, id_split=0.03425, id_merge=0.137,
        score_true=0.735, score_false=0.515),
    "harsh": DetectorErrorConfig(
        miss_base=0.2, miss_small=0.8, miss_small_pixels=3000.0, miss_far_per_m=0.25, miss_far_from_m=2.5,
        miss_hidden=0.6, confusion=0.25, confusion_sticky_fraction=0.2, confusion_sticky=0.7,
        phantoms_per_frame=0.8, mask_error=0.5, mask_error_max_px=6, id_split=0.05, id_merge=0.2,
        score_true=0.7, score_false=0.55),
}
PERCEPTION_ERROR_PRESETS = ("off", *ERROR_PRESETS)


def error_preset(name: str) -> DetectorErrorConfig:
    """The preset ``name`` (one of ERROR_PRESETS); ConfigError naming the choices otherwise."""
    if name not in ERROR_PRESETS:
        raise ConfigError(f"perception error preset must be one of {tuple(ERROR_PRESETS)}, got {name!r}")
    return ERROR_PRESETS[name]


def describe_errors(name: str, seed: int) -> dict[str, object]:
    """The preset and its parameters, for a results file's meta block."""
    if name == "off":
        return {"preset": "off"}
    return {"preset": name, "seed": seed, **dataclasses.asdict(error_preset(name))}


@dataclass
class _Tracker:
    """The id table of a tracker that splits and merges: ground-truth key -> the key it reports."""

    alias: dict[int, int] = field(default_factory=dict)
    next_key: int = INVENTED_KEY_BASE
    last_step: int = -1

    def new_key(self) -> int:
        self.next_key += 1
        return self.next_key - 1


def hidden_outline_fraction(mask: np.ndarray, depth_m: np.ndarray) -> float:
    """The fraction of the mask's outline that is cut by the image border or by a nearer surface (occlusion).

    An outline pixel is hidden when it lies on the image border, or when a pixel just outside the mask has a
    valid depth nearer than the object's own median depth by more than _OCCLUDER_NEARER_M.
    """
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return 0.0
    h, w = mask.shape
    r0, r1 = max(int(rows[0]) - 1, 0), min(int(rows[-1]) + 2, h)
    c0, c1 = max(int(cols[0]) - 1, 0), min(int(cols[-1]) + 2, w)
    crop = mask[r0:r1, c0:c1].astype(np.uint8)
    kernel = np.ones((3, 3), np.uint8)
    outline = crop.astype(bool) & ~cv2.erode(crop, kernel, borderType=cv2.BORDER_CONSTANT, borderValue=0).astype(bool)
    ring = cv2.dilate(crop, kernel).astype(bool) & ~crop.astype(bool)
    total = int(np.count_nonzero(outline))
    if total == 0:
        return 0.0
    on_border = np.zeros_like(outline)
    if r0 == 0:
        on_border[0, :] = True
    if r1 == h:
        on_border[-1, :] = True
    if c0 == 0:
        on_border[:, 0] = True
    if c1 == w:
        on_border[:, -1] = True
    hidden = outline & on_border
    depth = depth_m[r0:r1, c0:c1]
    own = depth[crop.astype(bool) & (depth > 0)]
    if own.size:
        nearer = (depth > 0) & (depth < float(np.median(own)) - _OCCLUDER_NEARER_M) & ring
        # An outline pixel next to a nearer ring pixel is hidden.
        hidden |= outline & cv2.dilate(nearer.astype(np.uint8), kernel).astype(bool)
    return float(np.count_nonzero(hidden)) / total


def miss_probability(cfg: DetectorErrorConfig, pixels: int, distance_m: float, hidden_fraction: float) -> float:
    """The chance that a detector misses an object of ``pixels`` pixels at ``distance_m`` (0 = unknown) with
    ``hidden_fraction`` of its outline hidden."""
    size = cfg.miss_small / (1.0 + pixels / cfg.miss_small_pixels) if cfg.miss_small_pixels > 0 else 0.0
    far = min(1.0, cfg.miss_far_per_m * max(0.0, distance_m - cfg.miss_far_from_m)) if distance_m > 0 else 0.0
    hidden = cfg.miss_hidden * hidden_fraction
    keep = (1.0 - cfg.miss_base) * (1.0 - size) * (1.0 - far) * (1.0 - hidden)
    return 1.0 - keep


def _seed_of(*parts: object) -> int:
    return zlib.crc32(":".join(str(p) for p in parts).encode())


class DetectorErrorModel:
    """Ground-truth detections with a configured detector's and tracker's mistakes (see the module docstring).

    ``confusions``: category -> [(look-alike, weight)] (goat_core.perception.confusions.load_confusion_table).
    """

    persistent_keys = True  # keys name one object across frames, up to the tracker's splits and merges

    def __init__(self, labels: Sequence[str], config: DetectorErrorConfig, seed: int,
                 confusions: Mapping[str, Sequence[tuple[str, float]]], min_pixels: int = 50) -> None:
        self._gt = GroundTruthPerception(labels, min_pixels)
        self.config = config
        self.seed = int(seed)
        label_set = set(self._gt.labels)
        # Only look-alikes the backend can name; rows renormalised.
        self._confusions: dict[str, tuple[list[str], np.ndarray]] = {}
        for name, row in confusions.items():
            kept = [(o, w) for o, w in row if o in label_set and o != name]
            if name in label_set and kept:
                weights = np.array([w for _, w in kept], dtype=np.float64)
                self._confusions[name] = ([o for o, _ in kept], weights / weights.sum())
        self._min_pixels = int(min_pixels)
        self._tracker = _Tracker()

    @property
    def labels(self) -> Sequence[str]:
        return self._gt.labels

    def confusable(self, category: str) -> bool:
        """Whether the model ever mistakes ``category`` for another."""
        return category in self._confusions

    def detect(self, obs: Observation) -> list[Detection]:
        if obs.step <= self._tracker.last_step or obs.step == 0:
            self._tracker = _Tracker()  # a new episode: the tracker starts over
        self._tracker.last_step = obs.step
        rng = np.random.default_rng([self.seed, obs.step, _seed_of(round(obs.pose.x_m, 3), round(obs.pose.y_m, 3),
                                                                    round(obs.pose.yaw_rad, 3),
                                                                    round(obs.camera_tilt_rad, 3))])
        found: list[Detection] = []
        for det in self._gt.detect(obs):
            kept = self._corrupt(det, obs, rng)
            if kept is not None:
                found.append(kept)
        self._merge_ids(found, rng)
        found += self._phantoms(obs, rng)
        return found

    # ------------------------------------------------------------------------------------------ one detection
    def _corrupt(self, det: Detection, obs: Observation, rng: np.random.Generator) -> Optional[Detection]:
        cfg = self.config
        pixels = int(np.count_nonzero(det.mask))
        depth = obs.depth_m[det.mask]
        depth = depth[depth > 0]
        distance_m = float(np.median(depth)) if depth.size else 0.0
        hidden = hidden_outline_fraction(det.mask, obs.depth_m) if cfg.miss_hidden > 0 else 0.0
        # Every draw is made whatever the outcome, so one error's rate does not shift another's stream.
        u_miss, u_conf, u_mask, u_split = rng.random(4)
        if u_miss < miss_probability(cfg, pixels, distance_m, hidden):
            return None
        category, true_label = det.category, True
        if det.category in self._confusions:
            others, weights = self._confusions[det.category]
            p = cfg.confusion_sticky if self._sticky(det.instance_key) else cfg.confusion
            pick = others[int(rng.choice(len(others), p=weights))]
            if u_conf < p:
                category, true_label = pick, False
        mask = self._bend_mask(det.mask, rng) if u_mask < cfg.mask_error else det.mask
        if not mask.any():
            return None
        key = self._key(det.instance_key, u_split < cfg.id_split)
        mean = cfg.score_true if true_label else cfg.score_false
        score = float(np.clip(rng.normal(mean, cfg.score_sd), 0.05, 0.99))
        return Detection(instance_key=key, category=category, mask=mask, score=score, bbox_xyxy=_bbox(mask))

    def _sticky(self, key: int) -> bool:
        """Whether this detector persistently mistakes the instance ``key`` (a property of the instance)."""
        if self.config.confusion_sticky_fraction <= 0.0:
            return False
        u = np.random.default_rng([self.seed, key, 0x57]).random()
        return bool(u < self.config.confusion_sticky_fraction)

    def _bend_mask(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        radius = int(rng.integers(1, self.config.mask_error_max_px + 1))
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
        op = cv2.erode if rng.random() < 0.5 else cv2.dilate
        return op(mask.astype(np.uint8), kernel).astype(bool)

    def _key(self, gt_key: int, split: bool) -> int:
        tracker = self._tracker
        if split or gt_key not in tracker.alias:
            tracker.alias[gt_key] = tracker.new_key() if split else gt_key
        return tracker.alias[gt_key]

    def _merge_ids(self, found: list[Detection], rng: np.random.Generator) -> None:
        """Same-category pairs in one frame: with probability id_merge the second takes the first's id."""
        cfg = self.config
        if cfg.id_merge <= 0.0:
            return
        inverse = {v: k for k, v in self._tracker.alias.items()}
        for i in range(len(found)):
            for j in range(i + 1, len(found)):
                a, b = found[i], found[j]
                if a.category != b.category or a.instance_key == b.instance_key:
                    continue
                if rng.random() < cfg.id_merge:
                    gt_b = inverse.get(b.instance_key)
                    if gt_b is not None:
                        self._tracker.alias[gt_b] = a.instance_key
                    found[j] = replace(b, instance_key=a.instance_key)

    # ------------------------------------------------------------------------------------------ phantoms
    def _phantoms(self, obs: Observation, rng: np.random.Generator) -> list[Detection]:
        cfg = self.config
        count = int(rng.poisson(cfg.phantoms_per_frame)) if cfg.phantoms_per_frame > 0 else 0
        out: list[Detection] = []
        valid = obs.depth_m > 0
        if count == 0:
            return out
        if not valid.any():
            valid = np.ones_like(valid)  # no depth (a detections-only consumer): a blob anywhere, any shape
        h, w = valid.shape
        candidates = np.flatnonzero(valid.ravel())
        for _ in range(count):
            seed_px = int(candidates[int(rng.integers(candidates.size))])
            v, u = divmod(seed_px, w)
            area = int(rng.integers(cfg.phantom_pixels[0], cfg.phantom_pixels[1] + 1))
            aspect = float(rng.uniform(0.5, 2.0))
            half_w = max(1, int(round(np.sqrt(area * aspect) / 2)))
            half_h = max(1, int(round(np.sqrt(area / aspect) / 2)))
            mask = np.zeros((h, w), dtype=bool)
            v0, v1, u0, u1 = max(v - half_h, 0), min(v + half_h + 1, h), max(u - half_w, 0), min(u + half_w + 1, w)
            # The blob stays on the seed's surface: pixels within 15 cm of its depth.
            patch = obs.depth_m[v0:v1, u0:u1]
            on_surface = (patch > 0) & (np.abs(patch - obs.depth_m[v, u]) < 0.15)
            mask[v0:v1, u0:u1] = on_surface if obs.depth_m[v, u] > 0 else True
            category = self._phantom_category(obs, v, u, rng)
            if mask.sum() < self._min_pixels:
                continue
            score = float(np.clip(rng.normal(cfg.score_false, cfg.score_sd), 0.05, 0.99))
            out.append(Detection(instance_key=self._tracker.new_key(), category=category, mask=mask, score=score,
                                 bbox_xyxy=_bbox(mask)))
        return out

    def _phantom_category(self, obs: Observation, v: int, u: int, rng: np.random.Generator) -> str:
        """On an object: a look-alike of its category; on a wall or floor (or an object without look-alikes):
        any label."""
        labels = self._gt.labels
        under = None
        if obs.segmentation is not None:
            inst = int(obs.segmentation[v, u])
            under = obs.instance_categories.get(inst) if inst >= 0 else None
        if under is not None and under in self._confusions:
            others, weights = self._confusions[under]
            return others[int(rng.choice(len(others), p=weights))]
        return labels[int(rng.integers(len(labels)))]


def _bbox(mask: np.ndarray) -> tuple[int, int, int, int]:
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)
