"""The CoW localizer (Gadre et al., "CoWs on Pasture", CVPR 2023) as a perception backend plus a goal matcher.

CLIP on Wheels looks for the goal itself in every frame instead of detecting a fixed label set: an
open-vocabulary localizer turns the frame and the goal query into a relevance map, and the agent goes to the
place the map points at. Two relevance sources are offered, as in the paper:

* ``owl`` (the paper's best): OWL-ViT (or OWLv2) boxes for the goal query; each pixel takes the best score of the
  boxes that cover it;
* ``clip_patches``: the frame is cut into a grid of crops, each crop's CLIP image embedding is compared with
  the goal's embedding, and each pixel takes its crop's cosine.

Post-processing ("centre pixel"): the pixels at or above the threshold form regions; the region holding the
most relevant pixel is the target, and the target point is the centre of that region's bounding box (or, for a
region that does not cover its box centre, the region pixel nearest to it). A single point, not the whole box,
is back-projected, because a box's corners and edges usually see the wall or floor behind the object. A small
square of ``target_half_size_px`` around the point becomes the detection mask, so that the instance memory gets
a few depth samples (its ``min_points``) rather than one.

Queries: category goals use the prompt of the category, description goals their text (OWL-ViT's text tower
reads at most 16 tokens: longer texts are truncated), image goals the picture itself (OWL's image-conditioned
query, or CLIP's image embedding). Instances found for a query are remembered under the query's name, so a later
subtask with the same goal reuses them (lifelong memory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Protocol, Sequence

import cv2
import numpy as np

from goat_core.errors import ConfigError, GoatError, InvalidGoalError
from goat_core.matching.base import NO_MATCH, MatchResult
from goat_core.perception.clip_embedder import ClipEmbedder
from goat_core.perception.image_prep import pixel_box
from goat_core.perception.openvocab import OwlModel
from goat_core.types import Detection, Goal, GoalModality, Instance, Observation

COW_RELEVANCE = ("owl", "clip_patches")


@dataclass(frozen=True)
class CowConfig:
    """Relevance source, thresholds and the target mask of the CoW localizer."""

    relevance: str = "owl"  # "owl" | "clip_patches"
    owl_score_threshold: float = 0.1  # an OWL box counts at or above this score
    # CLIP ViT-B/32 cosines of a matching crop and prompt are ~0.25-0.35, of unrelated ones ~0.15-0.22.
    clip_threshold: float = 0.26
    patch_rows: int = 4  # clip_patches: grid of crops over the (portrait) frame
    patch_cols: int = 2
    prompt_template: str = "a photo of a {}"
    target_half_size_px: int = 3  # the detection mask is a (2k+1)^2 square around the target pixel
    min_observations: int = 1  # frames the target must have been localized in before the matcher is confident

    def __post_init__(self) -> None:
        if self.relevance not in COW_RELEVANCE:
            raise ConfigError(f"CowConfig.relevance must be one of {COW_RELEVANCE}, got {self.relevance!r}")
        for name in ("patch_rows", "patch_cols", "min_observations"):
            if getattr(self, name) < 1:
                raise ConfigError(f"CowConfig.{name} must be >= 1, got {getattr(self, name)!r}")
        if self.target_half_size_px < 0:
            raise ConfigError(f"CowConfig.target_half_size_px must be >= 0, got {self.target_half_size_px!r}")
        if "{}" not in self.prompt_template:
            raise ConfigError(f"CowConfig.prompt_template must contain '{{}}', got {self.prompt_template!r}")


def centre_pixel(relevance: np.ndarray, threshold: float) -> Optional[tuple[int, int]]:
    """(row, col) of the target in a relevance map, or None when no pixel reaches ``threshold``.

    The target region is the 8-connected region of pixels >= threshold that holds the most relevant pixel (the
    first in row-major order among equals); the target pixel is its bounding box's centre, or the region's pixel
    nearest to that centre when the region does not cover it (an L-shaped or ring-shaped region).
    """
    if relevance.ndim != 2:
        raise ValueError(f"relevance must be an (H, W) map, got shape {relevance.shape}")
    finite = np.where(np.isfinite(relevance), relevance, -np.inf)
    above = finite >= threshold
    if not above.any():
        return None
    peak = np.unravel_index(int(np.argmax(finite)), finite.shape)
    _, components = cv2.connectedComponents(above.astype(np.uint8), connectivity=8)
    region = components == components[peak]
    rows, cols = np.nonzero(region)
    centre_r = (int(rows.min()) + int(rows.max())) // 2
    centre_c = (int(cols.min()) + int(cols.max())) // 2
    if region[centre_r, centre_c]:
        return (centre_r, centre_c)
    nearest = int(np.argmin((rows - centre_r) ** 2 + (cols - centre_c) ** 2))
    return (int(rows[nearest]), int(cols[nearest]))


def boxes_relevance(shape_hw: tuple[int, int], boxes_xyxy_px: np.ndarray, scores: np.ndarray,
                    threshold: float) -> np.ndarray:
    """(H, W) map: each pixel the best score of the boxes at or above ``threshold`` covering it, else 0."""
    relevance = np.zeros(shape_hw, dtype=np.float32)
    keep = np.flatnonzero(scores >= threshold)
    for i in keep[np.argsort(scores[keep], kind="stable")].tolist():  # ascending: better boxes written last
        x0, y0, x1, y1 = pixel_box(boxes_xyxy_px[i])
        region = relevance[max(0, y0):max(0, y1), max(0, x0):max(0, x1)]
        np.maximum(region, float(scores[i]), out=region)
    return relevance


def grid_relevance(shape_hw: tuple[int, int], rows: int, cols: int, cell_scores: np.ndarray) -> np.ndarray:
    """(H, W) map with each cell of a rows x cols grid set to its score (row-major ``cell_scores``)."""
    h, w = shape_hw
    r_edges = np.linspace(0, h, rows + 1).round().astype(int)
    c_edges = np.linspace(0, w, cols + 1).round().astype(int)
    relevance = np.zeros(shape_hw, dtype=np.float32)
    for k, score in enumerate(np.asarray(cell_scores, dtype=np.float32).ravel().tolist()):
        r, c = divmod(k, cols)
        relevance[r_edges[r]:r_edges[r + 1], c_edges[c]:c_edges[c + 1]] = score
    return relevance


@dataclass(frozen=True, eq=False)
class CowQuery:
    """What the localizer looks for: a text or a picture, remembered under ``key``."""

    key: str  # the instance category under which finds are remembered
    text: Optional[str] = None
    image: Optional[np.ndarray] = None  # (H, W, 3) uint8


class RelevanceSource(Protocol):
    """Relevance maps of frames for one query at a time."""

    threshold: float

    def set_query(self, query: CowQuery) -> None: ...

    def relevance(self, rgb: np.ndarray) -> np.ndarray: ...


class OwlRelevance:
    """Relevance from OWL-ViT / OWLv2 boxes for the query."""

    def __init__(self, model: OwlModel, threshold: float) -> None:
        self.model = model
        self.threshold = threshold
        self._query: Optional[Any] = None

    def set_query(self, query: CowQuery) -> None:
        if query.image is not None:
            self._query = self.model.encode_image_query(query.image)
        else:
            assert query.text is not None
            self._query = self.model.encode_texts([query.text])

    def relevance(self, rgb: np.ndarray) -> np.ndarray:
        if self._query is None:  # the picture gave no query box: nothing can be localized
            return np.zeros(rgb.shape[:2], dtype=np.float32)
        pred = self.model.predict(rgb, self._query)
        return boxes_relevance(rgb.shape[:2], pred.boxes_xyxy_px, pred.scores[:, 0], self.threshold)


class ClipPatchRelevance:
    """Relevance from the CLIP cosine of each crop of a grid with the query."""

    def __init__(self, embedder: ClipEmbedder, threshold: float, rows: int, cols: int) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.rows, self.cols = rows, cols
        self._query: Optional[np.ndarray] = None

    def set_query(self, query: CowQuery) -> None:
        if query.image is not None:
            self._query = self.embedder.encode_images([query.image])[0]
        else:
            assert query.text is not None
            self._query = self.embedder.encode_texts([query.text])[0]

    def crops(self, rgb: np.ndarray) -> list[np.ndarray]:
        """The grid's crops, row-major."""
        h, w = rgb.shape[:2]
        r_edges = np.linspace(0, h, self.rows + 1).round().astype(int)
        c_edges = np.linspace(0, w, self.cols + 1).round().astype(int)
        return [rgb[r_edges[r]:r_edges[r + 1], c_edges[c]:c_edges[c + 1]]
                for r in range(self.rows) for c in range(self.cols)]

    def relevance(self, rgb: np.ndarray) -> np.ndarray:
        if self._query is None:
            raise GoatError("ClipPatchRelevance.relevance() called before set_query()")
        cosines = self.embedder.encode_images(self.crops(rgb)) @ self._query
        return grid_relevance(rgb.shape[:2], self.rows, self.cols, cosines)


@dataclass(frozen=True, eq=False)
class CowLocalization:
    """Where the query was found in one frame."""

    pixel_rc: tuple[int, int]
    score: float  # relevance at the target pixel
    relevance: np.ndarray  # (H, W) the map it was found in


class CowPerception:
    """PerceptionBackend that localizes only the current goal (set through :class:`CowMatcher`)."""

    persistent_keys = False

    def __init__(self, source: RelevanceSource, config: CowConfig = CowConfig()) -> None:
        self.source = source
        self.config = config
        self.query: Optional[CowQuery] = None
        self._keys: list[str] = []  # every query name used so far: the categories this backend has output
        self._image_goals = 0

    @property
    def labels(self) -> Sequence[str]:
        return tuple(self._keys)

    def query_for(self, goal: Goal) -> CowQuery:
        """The query of a goal; image goals are each their own query."""
        if goal.modality is GoalModality.CATEGORY and goal.category:
            name = " ".join(goal.category.replace("_", " ").split())
            return CowQuery(key=name, text=self.config.prompt_template.format(name))
        if goal.modality is GoalModality.DESCRIPTION and goal.text:
            return CowQuery(key=f"description: {goal.text.strip()}", text=goal.text.strip())
        if goal.modality is GoalModality.IMAGE and goal.image is not None:
            self._image_goals += 1
            return CowQuery(key=f"image goal {self._image_goals}", image=goal.image)
        raise InvalidGoalError(f"CoW cannot build a query from goal {goal.describe()!r}")

    def set_goal(self, goal: Goal) -> CowQuery:
        query = self.query_for(goal)
        self.source.set_query(query)
        self.query = query
        if query.key not in self._keys:
            self._keys.append(query.key)
        return query

    def localize(self, rgb: np.ndarray) -> Optional[CowLocalization]:
        if self.query is None:
            return None
        relevance = self.source.relevance(rgb)
        pixel = centre_pixel(relevance, self.source.threshold)
        if pixel is None:
            return None
        return CowLocalization(pixel_rc=pixel, score=float(relevance[pixel]), relevance=relevance)

    def detect(self, obs: Observation) -> list[Detection]:
        """At most one detection: a small square around the target pixel, named after the query."""
        found = self.localize(obs.rgb)
        if found is None or self.query is None:
            return []
        h, w = obs.rgb.shape[:2]
        k = self.config.target_half_size_px
        r, c = found.pixel_rc
        box = (max(0, c - k), max(0, r - k), min(w, c + k + 1), min(h, r + k + 1))
        mask = np.zeros((h, w), dtype=bool)
        mask[box[1]:box[3], box[0]:box[2]] = True
        return [Detection(instance_key=0, category=self.query.key, mask=mask, score=found.score, bbox_xyxy=box)]


class CowMatcher:
    """GoalMatcher of CoW: the remembered instance found for the current query, most often localized first."""

    def __init__(self, perception: CowPerception) -> None:
        self.perception = perception
        self._key: Optional[str] = None

    def reset(self) -> None:
        """Nothing is cached per instance."""

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None:
        """Sets the localizer's query too; ``vocabulary`` is not used (CoW's vocabulary is open)."""
        self._key = self.perception.set_goal(goal).key

    def match(self, instances: Mapping[int, Instance]) -> MatchResult:
        if self._key is None:
            raise GoatError("CowMatcher used before set_goal(): no goal to match against")
        found = [inst for inst in instances.values() if inst.category == self._key]
        if not found:
            return NO_MATCH
        best = min(found, key=lambda i: (-i.num_observations, -len(i.points_xyz_m), i.instance_id))
        confident = best.num_observations >= self.perception.config.min_observations
        return MatchResult(instance_id=best.instance_id, score=float(best.num_observations), confident=confident)


def build_cow(config: CowConfig, owl: Optional[OwlModel] = None,
              clip: Optional[ClipEmbedder] = None) -> tuple[CowPerception, CowMatcher]:
    """The CoW perception backend and its matcher, sharing one localizer."""
    if config.relevance == "owl":
        if owl is None:
            raise ConfigError("CoW with relevance 'owl' needs an OWL-ViT or OWLv2 model (model_dir)")
        source: RelevanceSource = OwlRelevance(owl, config.owl_score_threshold)
    else:
        if clip is None:
            raise ConfigError("CoW with relevance 'clip_patches' needs a CLIP model (clip_model_dir)")
        source = ClipPatchRelevance(clip, config.clip_threshold, config.patch_rows, config.patch_cols)
    perception = CowPerception(source, config)
    return perception, CowMatcher(perception)
