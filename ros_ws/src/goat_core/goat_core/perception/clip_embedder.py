"""CLIP (Radford et al., ICML 2021) image and text embeddings from a local model folder.

Used for instance crops and goal texts (the Modular GOAT matcher), zero-shot labelling of goal pictures, and the
patch relevance of the CoW localizer. Vectors are L2-normalised, so cosine similarity is a dot product. Text
vectors are cached per exact text; image vectors are not (callers cache per instance view).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from goat_core.errors import ConfigError
from goat_core.perception.image_prep import clip_pixels
from goat_core.perception.model_folder import ModelFolder, check_model_folder
from goat_core.perception.torch_runtime import load_pretrained, load_tokenizer, resolve_device, to_numpy, torch_for


@dataclass(frozen=True)
class ClipConfig:
    """Runtime settings of the CLIP embedder."""

    batch_size: int = 16  # images per forward pass
    prompt_template: str = "a photo of a {}"  # for category names (Radford et al. 2021, Sec. 3.1.4)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ConfigError(f"ClipConfig.batch_size must be >= 1, got {self.batch_size!r}")
        if "{}" not in self.prompt_template:
            raise ConfigError(f"ClipConfig.prompt_template must contain '{{}}', got {self.prompt_template!r}")


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return np.asarray(x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12), dtype=np.float32)


class ClipEmbedder:
    """Maps RGB images and texts to unit vectors in CLIP's joint space."""

    def __init__(self, folder: ModelFolder, device: str = "cpu", torch_threads: int = 1,
                 config: ClipConfig = ClipConfig()) -> None:
        if folder.family.key != "clip":
            raise ConfigError(f"ClipEmbedder needs a CLIP folder, got a {folder.family.title} folder ({folder.path})")
        self.folder = folder
        self.config = config
        self._torch = torch_for("CLIP embeddings", torch_threads)
        self.device = resolve_device(self._torch, device)
        hint = folder.family.how_to_obtain()
        self._model = load_pretrained(folder.family.model_class, folder.path, self.device, hint)
        self._tokenizer = load_tokenizer(folder.path, hint)
        self._side_px = int(self._model.config.vision_config.image_size)
        self._max_tokens = int(self._model.config.text_config.max_position_embeddings)  # 77 for CLIP
        self.dim = int(self._model.config.projection_dim)
        self._text_cache: dict[str, np.ndarray] = {}

    @classmethod
    def load(cls, model_dir: Optional[str], device: str = "cpu", torch_threads: int = 1,
             config: ClipConfig = ClipConfig()) -> ClipEmbedder:
        """Check the folder first (fast, clear errors), then load the weights."""
        return cls(check_model_folder(model_dir, "clip"), device, torch_threads, config)

    def prompt(self, category: str) -> str:
        return self.config.prompt_template.format(category)

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32 unit vectors, in the order given."""
        if isinstance(texts, str):
            raise TypeError("encode_texts() takes a sequence of strings")
        todo = sorted({t for t in texts if t not in self._text_cache})
        if todo:
            tokens = self._tokenizer(todo, padding=True, truncation=True, max_length=self._max_tokens,
                                     return_tensors="pt")
            with self._torch.inference_mode():
                out = self._model.get_text_features(input_ids=tokens["input_ids"].to(self.device),
                                                    attention_mask=tokens["attention_mask"].to(self.device))
            vectors = _unit_rows(to_numpy(getattr(out, "pooler_output", out)))
            self._text_cache.update(zip(todo, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._text_cache[t] for t in texts])

    def encode_images(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """(len(images), dim) float32 unit vectors of (H, W, 3) uint8 RGB images (CLIP's centre crop)."""
        if not images:
            return np.zeros((0, self.dim), dtype=np.float32)
        norm = self.folder.normalisation
        out: list[np.ndarray] = []
        for start in range(0, len(images), self.config.batch_size):
            batch = np.stack([clip_pixels(img, self._side_px, norm)
                              for img in images[start:start + self.config.batch_size]])
            with self._torch.inference_mode():
                feats = self._model.get_image_features(pixel_values=self._torch.from_numpy(batch).to(self.device))
            out.append(_unit_rows(to_numpy(getattr(feats, "pooler_output", feats))))
        return np.concatenate(out)

    def classify(self, image: np.ndarray, labels: Sequence[str]) -> list[tuple[str, float]]:
        """Zero-shot labelling: every label with the cosine of its prompt to the image, most similar first."""
        if not labels:
            return []
        sims = self.encode_texts([self.prompt(label) for label in labels]) @ self.encode_images([image])[0]
        order = sorted(range(len(labels)), key=lambda i: (-float(sims[i]), labels[i]))
        return [(labels[i], float(sims[i])) for i in order]

