"""Tiny randomly initialised CLIP / OWL-ViT / OWLv2 model folders, built offline from configs.

They have the real architectures and the real folder layout (config.json, model.safetensors, tokenizer files,
preprocessor_config.json), so the whole load -> detect -> back-project -> match path runs on them in tests,
benchmarks and smoke checks, in milliseconds and without any download. Their outputs are meaningless but
deterministic (weights drawn after ``torch.manual_seed(seed)``). The last layer of an OWL box head is scaled
down, so that each patch's box stays near its grid cell (as with trained weights) instead of collapsing to a
line at the frame's border, which random weights do for some seeds.

The tokenizer is CLIP's byte-pair tokenizer with a character vocabulary (no merges): every letter and digit is a
token, with and without CLIP's end-of-word mark; the two special tokens take the highest ids, as in CLIP, whose
text towers read the sentence embedding at the highest id (the end-of-text token).
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any, Union

from goat_core.errors import ConfigError
from goat_core.perception.model_folder import CLIP_IMAGE_MEAN, CLIP_IMAGE_STD, PREPROCESSOR_FILE, family
from goat_core.perception.torch_runtime import import_optional

_BOX_HEAD_SCALE = 0.005  # random box heads otherwise reach logits of +-200: sigmoid(box) is 0 or 1
_CONFIG_CLASSES = {"owlvit": "OwlViTConfig", "owlv2": "Owlv2Config", "clip": "CLIPConfig"}


def _vocabulary() -> dict[str, int]:
    vocab: dict[str, int] = {}
    for ch in string.ascii_lowercase + string.digits:
        vocab[ch] = len(vocab)
        vocab[ch + "</w>"] = len(vocab)
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return vocab


def save_tiny_model(folder: Union[str, Path], family_key: str, seed: int = 0, image_size_px: int = 64,
                    patch_px: int = 16, hidden: int = 32, layers: int = 2) -> Path:
    """Write a tiny random model of ``family_key`` ("owlvit", "owlv2", "clip") to ``folder``; returns it."""
    fam = family(family_key)
    if image_size_px % patch_px != 0:
        raise ConfigError(f"image_size_px ({image_size_px}) must be a multiple of patch_px ({patch_px})")
    torch = import_optional("torch", "building tiny test models")
    transformers = import_optional("transformers", "building tiny test models")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    vocab = _vocabulary()
    eos, bos = vocab["<|endoftext|>"], vocab["<|startoftext|>"]
    max_tokens = 77 if family_key == "clip" else 16  # as the real text towers
    text_config: dict[str, Any] = dict(vocab_size=len(vocab), hidden_size=hidden, intermediate_size=2 * hidden,
                                       num_hidden_layers=layers, num_attention_heads=2,
                                       max_position_embeddings=max_tokens, bos_token_id=bos, eos_token_id=eos,
                                       pad_token_id=eos)
    vision_config: dict[str, Any] = dict(hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                                         num_attention_heads=2, image_size=image_size_px, patch_size=patch_px)
    config = getattr(transformers, _CONFIG_CLASSES[family_key])(text_config=text_config, vision_config=vision_config,
                                                                projection_dim=hidden)
    torch.manual_seed(seed)
    model = getattr(transformers, fam.model_class)(config).eval()
    if family_key != "clip":
        with torch.no_grad():  # keep boxes near their patch's grid cell, as a trained head does, not saturated
            model.box_head.dense2.weight.mul_(_BOX_HEAD_SCALE)
            model.box_head.dense2.bias.mul_(_BOX_HEAD_SCALE)
    model.save_pretrained(str(out))
    tokenizer = transformers.CLIPTokenizer(vocab=vocab, merges=[])
    tokenizer.save_pretrained(str(out))
    preprocessor = {"image_mean": list(CLIP_IMAGE_MEAN), "image_std": list(CLIP_IMAGE_STD),
                    "size": {"height": image_size_px, "width": image_size_px}}
    (out / PREPROCESSOR_FILE).write_text(json.dumps(preprocessor, indent=2), encoding="utf-8")
    return out
