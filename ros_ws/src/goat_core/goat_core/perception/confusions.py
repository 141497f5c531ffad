"""Which categories a detector mistakes for which: a look-alike table over category names.

A real open-vocabulary detector confuses categories that look alike (chair / armchair, cabinet / filing cabinet,
mug / cup). Without a detector to measure, the table is built from what the names say: the cosine similarity of
the names' sentence embeddings (all-MiniLM-L6-v2, goat_core.matching.embeddings) says how related two categories
are, and the similarity of their sizes keeps related-but-unlike pairs (desk / office chair, tv stand / television)
out. ``scripts/build_confusion_table.py`` builds the table once from the simulator catalogue and ships it as
``perception/data/confusions.json``; this module reads it and holds the pure scoring.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import ConfigError

CONFUSIONS_RESOURCE = "confusions.json"  # in the package goat_core.perception.data


@dataclass(frozen=True)
class LookAlikeRule:
    """How the table is built: name similarity above ``min_name_cosine``, weighted by size similarity."""

    min_name_cosine: float = 0.45  # pairs of names less related than this are never confused
    min_size_ratio: float = 0.35  # pairs whose sizes differ more than this factor (per axis, geometric) never are
    max_per_category: int = 3  # a category is mistaken for at most this many others


def size_ratio(a_m: Sequence[float], b_m: Sequence[float]) -> float:
    """In (0, 1]: the geometric mean over axes of min/max of two sizes (1 = the same size)."""
    if len(a_m) != len(b_m) or not a_m or min(*a_m, *b_m) <= 0.0:
        raise ValueError(f"sizes must be positive and of one length, got {tuple(a_m)} and {tuple(b_m)}")
    logs = [math.log(min(a, b) / max(a, b)) for a, b in zip(a_m, b_m, strict=True)]
    return math.exp(sum(logs) / len(logs))


def build_confusion_table(names: Sequence[str], name_vectors: np.ndarray,
                          sizes_m: Optional[Sequence[Sequence[float]]] = None,
                          rule: LookAlikeRule = LookAlikeRule()) -> dict[str, list[tuple[str, float]]]:
    """category -> [(look-alike, weight)], weights summing to 1, most alike first; categories without a
    look-alike are absent. ``name_vectors``: (N, D) unit-length embeddings of ``names``; ``sizes_m``: a
    typical (width, depth, height) per name (None: names alone decide)."""
    vectors = np.asarray(name_vectors, dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(names):
        raise ValueError(f"name_vectors must be ({len(names)}, D), got shape {vectors.shape}")
    if sizes_m is not None and len(sizes_m) != len(names):
        raise ValueError(f"sizes_m must hold one size per name ({len(names)}), got {len(sizes_m)}")
    cosine = vectors @ vectors.T
    table: dict[str, list[tuple[str, float]]] = {}
    for i, name in enumerate(names):
        scored: list[tuple[float, str]] = []
        for j, other in enumerate(names):
            if i == j or cosine[i, j] < rule.min_name_cosine:
                continue
            ratio = 1.0 if sizes_m is None else size_ratio(sizes_m[i], sizes_m[j])
            if ratio < rule.min_size_ratio:
                continue
            scored.append((float(cosine[i, j]) * ratio, other))
        scored.sort(key=lambda s: (-s[0], s[1]))
        kept = scored[: rule.max_per_category]
        total = sum(s for s, _ in kept)
        if kept:
            table[name] = [(other, round(s / total, 4)) for s, other in kept]
    return table


def load_confusion_table() -> dict[str, list[tuple[str, float]]]:
    """The shipped table (category -> [(look-alike, weight)])."""
    text = resources.files("goat_core.perception.data").joinpath(CONFUSIONS_RESOURCE).read_text("utf-8")
    raw = json.loads(text)
    return parse_confusion_table(raw["table"])


def parse_confusion_table(raw: Mapping[str, object]) -> dict[str, list[tuple[str, float]]]:
    """A table from its JSON form, checked: every weight in (0, 1], each row summing to 1."""
    table: dict[str, list[tuple[str, float]]] = {}
    for name, row in raw.items():
        if not isinstance(row, list):
            raise ConfigError(f"confusion table row of {name!r} must be a list of [category, weight], got {row!r}")
        pairs = [(str(other), float(weight)) for other, weight in row]
        if any(not 0.0 < w <= 1.0 for _, w in pairs) or abs(sum(w for _, w in pairs) - 1.0) > 1e-3:
            raise ConfigError(f"confusion table row of {name!r} must hold weights in (0, 1] summing to 1, "
                              f"got {pairs}")
        table[str(name)] = pairs
    return table
