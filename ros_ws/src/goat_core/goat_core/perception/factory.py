"""Perception backends selected by configuration: ground truth, OWL-ViT or OWLv2 from a local model folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from goat_core.errors import ConfigError
from goat_core.perception.base import PerceptionBackend
from goat_core.perception.confusions import load_confusion_table
from goat_core.perception.detector_errors import PERCEPTION_ERROR_PRESETS, DetectorErrorModel, error_preset
from goat_core.perception.gt import GroundTruthPerception
from goat_core.perception.model_folder import check_model_folder
from goat_core.perception.openvocab import OWL_VARIANTS, DetectorConfig, OwlDetector, OwlModel

PERCEPTION_BACKENDS = ("ground_truth", *OWL_VARIANTS)


@dataclass(frozen=True)
class PerceptionConfig:
    """Which perception backend runs, where its weights are and what it runs on."""

    backend: str = "ground_truth"  # "ground_truth" | "owlvit" | "owlv2"
    model_dir: Optional[str] = None  # the detector's model folder (docs/perception.md); unused by ground_truth
    device: str = "cpu"  # "cpu" | "cuda" | "cuda:N"
    torch_threads: int = 1  # torch intra-op threads (process-wide; see torch_runtime.torch_for)
    gt_min_pixels: int = 50  # ground truth: smallest instance segment reported
    # Ground truth through a detector error model (docs/perception_errors.md): "off" | "mild" | "detic-like" | "harsh"
    errors: str = "off"
    errors_seed: int = 0  # the error model's draws depend on this, the step and the camera pose only
    detector: DetectorConfig = field(default_factory=DetectorConfig)

    def __post_init__(self) -> None:
        if self.backend not in PERCEPTION_BACKENDS:
            raise ConfigError(f"perception backend must be one of {PERCEPTION_BACKENDS}, got {self.backend!r}")
        if self.backend != "ground_truth" and not self.model_dir:
            raise ConfigError(f"perception backend {self.backend!r} needs model_dir, a local {self.backend} model "
                              "folder (see docs/perception.md)")
        if self.errors not in PERCEPTION_ERROR_PRESETS:
            raise ConfigError(f"perception errors must be one of {PERCEPTION_ERROR_PRESETS}, got {self.errors!r}")
        if self.errors != "off" and self.backend != "ground_truth":
            raise ConfigError(f"perception errors {self.errors!r} model a detector over ground truth; backend "
                              f"{self.backend!r} is a real detector and makes its own (use errors 'off')")
        if self.torch_threads < 1:
            raise ConfigError(f"PerceptionConfig.torch_threads must be >= 1, got {self.torch_threads!r}")


def build_perception(config: PerceptionConfig, labels: Sequence[str]) -> PerceptionBackend:
    """The configured backend over ``labels``. A detector's folder is checked before torch is even imported."""
    if config.backend == "ground_truth" and config.errors != "off":
        return DetectorErrorModel(labels, error_preset(config.errors), config.errors_seed, load_confusion_table(),
                                  config.gt_min_pixels)
    if config.backend == "ground_truth":
        return GroundTruthPerception(labels=labels, min_pixels=config.gt_min_pixels)
    folder = check_model_folder(config.model_dir, config.backend)
    return OwlDetector(OwlModel(folder, config.device, config.torch_threads), labels, config.detector)
