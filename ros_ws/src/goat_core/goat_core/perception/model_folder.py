"""Local model folders: what a folder must hold for each model family, checked before any weights are read.

No model hub can be reached from the machines this stack runs on, so users bring weights as a folder written by
``save_pretrained`` (transformers) of the model and of its processor, or a snapshot of the hub repository. The
check reads only file names and the two small JSON files, so a bad folder fails at start-up, in milliseconds,
with a message that names what is missing and how to get it (docs/perception.md has the full recipe).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from goat_core.errors import ConfigError, ModelLoadError

CONFIG_FILE = "config.json"
PREPROCESSOR_FILE = "preprocessor_config.json"
# One of these holds the weights; the index files name shards that must be present too.
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
# A fast tokenizer file, or the byte-pair-encoding vocabulary and merges of the CLIP tokenizer.
TOKENIZER_FILE_SETS = (("tokenizer.json",), ("vocab.json", "merges.txt"))

# The normalisation CLIP was trained with (Radford et al., 2021), shared by OWL-ViT and OWLv2; used when a
# folder has no preprocessor_config.json.
CLIP_IMAGE_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_IMAGE_STD = (0.26862954, 0.26130258, 0.27577711)


@dataclass(frozen=True)
class ModelFamily:
    """A kind of model this stack loads, and how a user obtains one."""

    key: str  # "owlvit" | "owlv2" | "clip"
    title: str
    model_types: tuple[str, ...]  # accepted ``model_type`` values of config.json
    model_class: str  # the transformers class that loads it
    processor_class: str  # the transformers class whose save_pretrained writes tokenizer + preprocessor files
    example_hub_id: str

    def how_to_obtain(self) -> str:
        """A recipe for a machine with internet access, then copy the folder over."""
        return (f"obtain it on a machine with internet access with `python -c \"from transformers import "
                f"{self.model_class}, {self.processor_class}; "
                f"{self.model_class}.from_pretrained('{self.example_hub_id}').save_pretrained('DIR'); "
                f"{self.processor_class}.from_pretrained('{self.example_hub_id}').save_pretrained('DIR')\"` "
                "and copy DIR here (see docs/perception.md)")


FAMILIES: Mapping[str, ModelFamily] = {
    "owlvit": ModelFamily("owlvit", "OWL-ViT", ("owlvit",), "OwlViTForObjectDetection", "OwlViTProcessor",
                          "google/owlvit-base-patch32"),
    "owlv2": ModelFamily("owlv2", "OWLv2", ("owlv2",), "Owlv2ForObjectDetection", "Owlv2Processor",
                         "google/owlv2-base-patch16-ensemble"),
    "clip": ModelFamily("clip", "CLIP", ("clip",), "CLIPModel", "CLIPProcessor", "openai/clip-vit-base-patch32"),
}


@dataclass(frozen=True)
class ImageNormalisation:
    """Per-channel mean and standard deviation of the [0, 1] RGB input, as the model was trained."""

    mean: tuple[float, float, float] = CLIP_IMAGE_MEAN
    std: tuple[float, float, float] = CLIP_IMAGE_STD


@dataclass(frozen=True)
class ModelFolder:
    """A checked model folder."""

    path: Path
    family: ModelFamily
    config: Mapping[str, Any]  # parsed config.json
    normalisation: ImageNormalisation


def family(key: str) -> ModelFamily:
    try:
        return FAMILIES[key]
    except KeyError:
        raise ConfigError(f"unknown model family {key!r}; expected one of {sorted(FAMILIES)}") from None


def _expected(fam: ModelFamily) -> str:
    tokenizer = " or ".join(" + ".join(s) for s in TOKENIZER_FILE_SETS)
    return (f"a {fam.title} folder holds {CONFIG_FILE}, the weights ({' or '.join(WEIGHT_FILES[::2])}), "
            f"the tokenizer ({tokenizer}) and optionally {PREPROCESSOR_FILE}")


def _read_json(path: Path, fam: ModelFamily) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelLoadError(f"cannot read {path}: {exc}; {fam.how_to_obtain()}") from exc
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path} must hold a JSON object, got {type(data).__name__}; {fam.how_to_obtain()}")
    return data


def _check_weights(folder: Path, fam: ModelFamily) -> None:
    present = [name for name in WEIGHT_FILES if (folder / name).is_file()]
    if not present:
        raise ModelLoadError(f"model folder {folder} has no weights file: expected one of {list(WEIGHT_FILES)}; "
                             f"{_expected(fam)}; {fam.how_to_obtain()}")
    if present[0].endswith(".index.json"):
        index = _read_json(folder / present[0], fam)
        shards = sorted(set((index.get("weight_map") or {}).values()))
        missing = [s for s in shards if not (folder / str(s)).is_file()]
        if not shards or missing:
            raise ModelLoadError(f"model folder {folder}: {present[0]} names weight shards that are missing: "
                                 f"{missing or 'none listed'}; {fam.how_to_obtain()}")


def _check_tokenizer(folder: Path, fam: ModelFamily) -> None:
    if any(all((folder / name).is_file() for name in names) for names in TOKENIZER_FILE_SETS):
        return
    options = " or ".join(" + ".join(s) for s in TOKENIZER_FILE_SETS)
    raise ModelLoadError(f"model folder {folder} has no tokenizer: expected {options} (written by "
                         f"{fam.processor_class}.save_pretrained); {fam.how_to_obtain()}")


def _normalisation(folder: Path, fam: ModelFamily) -> ImageNormalisation:
    path = folder / PREPROCESSOR_FILE
    if not path.is_file():
        return ImageNormalisation()
    data = _read_json(path, fam)
    mean, std = data.get("image_mean", CLIP_IMAGE_MEAN), data.get("image_std", CLIP_IMAGE_STD)
    try:
        mean_t = tuple(float(v) for v in mean)
        std_t = tuple(float(v) for v in std)
    except (TypeError, ValueError) as exc:
        raise ModelLoadError(f"{path}: image_mean / image_std must be lists of 3 numbers: {exc}") from exc
    if len(mean_t) != 3 or len(std_t) != 3 or min(std_t) <= 0.0:
        raise ModelLoadError(f"{path}: image_mean and image_std must hold 3 numbers each (std > 0), got "
                             f"{list(mean_t)} and {list(std_t)}")
    return ImageNormalisation(mean=(mean_t[0], mean_t[1], mean_t[2]), std=(std_t[0], std_t[1], std_t[2]))


def check_model_folder(path: Optional[Union[str, Path]], family_key: str) -> ModelFolder:
    """The folder checked for ``family_key`` ("owlvit", "owlv2", "clip"); ModelLoadError naming what is missing."""
    fam = family(family_key)
    if path is None or not str(path).strip():
        raise ModelLoadError(f"no model folder given for {fam.title}; {_expected(fam)}; {fam.how_to_obtain()}")
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ModelLoadError(f"{fam.title} model folder {folder} does not exist or is not a folder; "
                             f"{_expected(fam)}; {fam.how_to_obtain()}")
    if not (folder / CONFIG_FILE).is_file():
        raise ModelLoadError(f"model folder {folder} has no {CONFIG_FILE}; {_expected(fam)}; {fam.how_to_obtain()}")
    config = _read_json(folder / CONFIG_FILE, fam)
    model_type = config.get("model_type")
    if model_type not in fam.model_types:
        raise ModelLoadError(f"model folder {folder} holds a model of type {model_type!r} ({CONFIG_FILE}), "
                             f"expected {fam.title} ({' or '.join(fam.model_types)}); {fam.how_to_obtain()}")
    _check_weights(folder, fam)
    _check_tokenizer(folder, fam)
    return ModelFolder(path=folder, family=fam, config=config, normalisation=_normalisation(folder, fam))
