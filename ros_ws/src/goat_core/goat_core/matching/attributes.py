"""Colour names from observed pixel colours, robust to shading.

Model: an object painted with reference colour ``c`` (linear RGB) appears under roughly uniform white light
as ``k * c`` with an unknown brightness factor ``k`` (Lambertian shading makes ``k < 1``; a bright light or
specular highlights make it a little above 1). For each colour name we search the ``k`` in a plausible range
that brings ``k * c`` closest to the observation in CIELAB (CIE 1976 ΔE, a roughly perceptually uniform
distance), plus a small penalty on ``|log k|`` so that an unshaded match is preferred. That keeps hue and
chroma decisive for chromatic colours while white / gray / black are told apart by lightness with a tolerance
for shading.

sRGB <-> linear: IEC 61966-2-1. Linear RGB -> XYZ (D65) and XYZ -> L*a*b*: CIE 15:2004.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np

from goat_core.errors import GoatError
from goat_core.types import Instance
from goat_core.vocabulary import COLOURS

# Spoken variants of the vocabulary's colour names.
COLOUR_SYNONYMS: Mapping[str, str] = {
    "grey": "gray", "silver": "gray", "golden": "yellow", "gold": "yellow", "beige": "white",
    "cream": "white", "violet": "purple", "tan": "brown", "navy": "blue", "teal": "green",
}

# sRGB primaries to XYZ under D65 (IEC 61966-2-1).
_RGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805],
                        [0.2126, 0.7152, 0.0722],
                        [0.0193, 0.1192, 0.9505]])
_WHITE_D65 = np.array([0.95047, 1.0, 1.08883])


@dataclass(frozen=True)
class ColourConfig:
    """Parameters of the shading-tolerant colour namer."""

    min_shading: float = 0.3  # darkest plausible brightness factor k of a lit surface
    max_shading: float = 1.3  # brightest plausible k (light a bit above the reference, highlights)
    shading_steps: int = 33  # k values searched, log-spaced between the bounds
    shading_penalty_delta_e: float = 8.0  # ΔE added per unit |ln k|: prefer explanations without shading
    agreement_scale_delta_e: float = 10.0  # a name this much ΔE worse than the best gets agreement 1/e
    max_views: int = 3  # stored views of an instance whose pixels vote
    max_pixels_per_view: int = 8192  # pixels sampled per view crop: a vote needs no more (a close-up has 200k)

    def __post_init__(self) -> None:
        if not 0.0 < self.min_shading <= 1.0 <= self.max_shading:
            raise ValueError(f"need 0 < min_shading <= 1 <= max_shading, got {self.min_shading!r}, "
                             f"{self.max_shading!r}")
        if self.shading_steps < 2:
            raise ValueError(f"ColourConfig.shading_steps must be >= 2, got {self.shading_steps!r}")
        if self.max_views < 1 or self.max_pixels_per_view < 1:
            raise ValueError(f"ColourConfig.max_views and max_pixels_per_view must be >= 1, got "
                             f"{self.max_views!r}, {self.max_pixels_per_view!r}")
        if self.agreement_scale_delta_e <= 0.0 or self.shading_penalty_delta_e < 0.0:
            raise ValueError("ColourConfig ΔE scales must be positive, got "
                             f"{self.agreement_scale_delta_e!r}, {self.shading_penalty_delta_e!r}")


def srgb_to_linear(srgb_255: np.ndarray) -> np.ndarray:
    """sRGB 0-255 (..., 3) to linear RGB 0-1 (IEC 61966-2-1 transfer function)."""
    c = np.clip(np.asarray(srgb_255, dtype=np.float64) / 255.0, 0.0, 1.0)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_lab(linear_rgb: np.ndarray) -> np.ndarray:
    """Linear RGB (..., 3) to CIELAB (..., 3), D65 white (CIE 15:2004)."""
    xyz = np.asarray(linear_rgb, dtype=np.float64) @ _RGB_TO_XYZ.T / _WHITE_D65
    eps = (6.0 / 29.0) ** 3
    f = np.where(xyz > eps, np.cbrt(xyz), xyz / (3.0 * (6.0 / 29.0) ** 2) + 4.0 / 29.0)
    lightness = 116.0 * f[..., 1] - 16.0
    a = 500.0 * (f[..., 0] - f[..., 1])
    b = 200.0 * (f[..., 1] - f[..., 2])
    return np.stack([lightness, a, b], axis=-1)


_LUT_LEVELS = 16  # per sRGB channel: 4096 cells of 16 levels, fine enough for eleven broad colour names


def normalise_colour_name(word: str) -> Optional[str]:
    """The vocabulary colour a word names ("Grey" -> "gray"), or None."""
    key = word.strip().lower()
    if key in COLOURS:
        return key
    return COLOUR_SYNONYMS.get(key)


class ColourNamer:
    """Distances from observed colours to every name in ``goat_core.vocabulary.COLOURS``."""

    def __init__(self, config: ColourConfig = ColourConfig(),
                 colours: Mapping[str, tuple[int, int, int]] = COLOURS) -> None:
        if not colours:
            raise GoatError("ColourNamer needs at least one reference colour, got an empty mapping")
        self.config = config
        self.names: tuple[str, ...] = tuple(colours)
        shading = np.geomspace(config.min_shading, config.max_shading, config.shading_steps)
        reference_linear = srgb_to_linear(np.array([colours[n] for n in self.names], dtype=np.float64))
        # (colours, shadings, 3): every reference under every brightness factor, clipped to the display gamut.
        self._shaded_lab = linear_to_lab(np.clip(reference_linear[:, None, :] * shading[None, :, None],
                                                 0.0, 1.0))
        self._shading_cost = config.shading_penalty_delta_e * np.abs(np.log(shading))
        # Closest name for every cell of a coarse sRGB grid, so naming each pixel of a view is a table lookup.
        step = 256 // _LUT_LEVELS
        centres = np.arange(step / 2.0, 256.0, step)
        grid = np.stack(np.meshgrid(centres, centres, centres, indexing="ij"), axis=-1).reshape(-1, 3)
        self._lut = np.argmin(self._name_distances(grid), axis=-1)

    def distances(self, rgb_255: np.ndarray) -> dict[str, float]:
        """Shading-compensated ΔE from one sRGB colour (3,) to each colour name; lower is closer."""
        rgb = np.asarray(rgb_255, dtype=np.float64)
        if rgb.shape != (3,) or not np.all(np.isfinite(rgb)):
            raise GoatError(f"colour must be a finite (3,) sRGB triple, got {rgb!r}")
        return {name: float(d) for name, d in zip(self.names, self._name_distances(rgb), strict=True)}

    def _name_distances(self, rgb_255: np.ndarray) -> np.ndarray:
        """(..., names) shading-compensated ΔE of sRGB colours (..., 3) to each name."""
        lab = linear_to_lab(srgb_to_linear(rgb_255))
        flat = lab.reshape(-1, 3)
        refs = self._shaded_lab.reshape(-1, 3)
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one matrix product instead of a (..., names, shadings, 3) temporary.
        sq = (flat ** 2).sum(axis=1)[:, None] + (refs ** 2).sum(axis=1)[None, :] - 2.0 * flat @ refs.T
        delta_e = np.sqrt(np.maximum(sq, 0.0)).reshape(len(flat), *self._shaded_lab.shape[:2])
        best = (delta_e + self._shading_cost).min(axis=-1)
        return np.asarray(best.reshape(*lab.shape[:-1], len(self.names)))

    def pixel_scores(self, pixels_rgb: np.ndarray) -> dict[str, float]:
        """Agreement of a set of pixels (N, 3) uint8 with every colour name, in [0, 1].

        Each pixel is named on its own and the names vote: share of pixels per name over the largest share.
        A painted object's base colour wins the vote even when trims, shaded faces or pattern marks pull
        its mean or median towards a neighbouring name (a white frame with light-gray trims stays white).
        """
        votes = self.pixel_histogram(pixels_rgb)
        return {name: float(v) for name, v in zip(self.names, votes / votes.max(), strict=True)}

    def pixel_histogram(self, pixels_rgb: np.ndarray, weights: Optional[np.ndarray] = None) -> np.ndarray:
        """Share of a set of pixels (N, 3) uint8 named by each colour (order of ``names``), summing to 1.

        ``weights`` (N,), non-negative, weigh the pixels' votes (default: one each).
        """
        pixels = np.asarray(pixels_rgb)
        if pixels.ndim != 2 or pixels.shape[1] != 3 or len(pixels) == 0:
            raise GoatError(f"pixels must be a non-empty (N, 3) array, got shape {pixels.shape}")
        if weights is not None and (np.shape(weights) != (len(pixels),) or np.any(np.asarray(weights) < 0)):
            raise GoatError(f"pixel weights must be {len(pixels)} non-negative values, got shape "
                            f"{np.shape(weights)}")
        cells = np.clip(pixels.astype(np.int64), 0, 255) // (256 // _LUT_LEVELS)
        index = (cells[:, 0] * _LUT_LEVELS + cells[:, 1]) * _LUT_LEVELS + cells[:, 2]
        votes = np.bincount(self._lut[index], weights=weights, minlength=len(self.names)).astype(np.float64)
        total = float(votes.sum())
        if total <= 0.0:
            raise GoatError("pixel weights are all zero: no pixel votes for a colour")
        return np.asarray(votes / total)

    def rank(self, rgb_255: np.ndarray) -> list[tuple[str, float]]:
        """Colour names with their distances, closest first (ties broken by name for determinism)."""
        return sorted(self.distances(rgb_255).items(), key=lambda item: (item[1], item[0]))

    def agreement(self, rgb_255: np.ndarray, name: str) -> float:
        """Soft agreement in (0, 1] of an observed colour with a name: 1 when it is the closest name."""
        key = normalise_colour_name(name)
        if key is None or key not in self.names:
            raise GoatError(f"unknown colour name {name!r}; expected one of {sorted(self.names)}")
        dist = self.distances(rgb_255)
        gap = dist[key] - min(dist.values())
        return float(np.exp(-gap / self.config.agreement_scale_delta_e))

    def scores(self, rgb_255: np.ndarray) -> dict[str, float]:
        """Agreement of the colour with every name (see :meth:`agreement`)."""
        dist = self.distances(rgb_255)
        best = min(dist.values())
        return {n: float(np.exp(-(d - best) / self.config.agreement_scale_delta_e)) for n, d in dist.items()}


def instance_view_pixels(instance: Instance, max_views: int, max_pixels_per_view: int) -> np.ndarray:
    """(N, 3) uint8 masked pixels of an instance's first ``max_views`` stored views, each sampled on a regular
    grid of about ``max_pixels_per_view`` pixels of its crop (a close-up has 200k)."""
    pixels: list[np.ndarray] = []
    for view in instance.views[:max_views]:
        if view.mask.shape != view.rgb.shape[:2]:
            raise GoatError(f"view mask shape {view.mask.shape} does not match its crop {view.rgb.shape[:2]} "
                            f"(instance {instance.instance_id}, step {view.step})")
        stride = max(1, math.isqrt(view.mask.size // max_pixels_per_view))
        pixels.append(view.rgb[::stride, ::stride][view.mask[::stride, ::stride].astype(bool)])
    return np.concatenate(pixels) if pixels else np.zeros((0, 3), dtype=np.uint8)


def instance_colour_scores(namer: ColourNamer, instance: Instance) -> Optional[dict[str, float]]:
    """Agreement of an instance with every colour name (see :meth:`ColourNamer.pixel_scores`), or None.

    Uses the masked pixels of its best stored views, on a regular grid of about ``max_pixels_per_view``
    pixels per crop; the memory's running mean colour is the fallback when no view is stored, and None
    means nothing is known about its colour.
    """
    cfg = namer.config
    stacked = instance_view_pixels(instance, cfg.max_views, cfg.max_pixels_per_view)
    if len(stacked) > 0:
        return namer.pixel_scores(stacked)
    if instance.mean_rgb is not None:
        return namer.scores(np.asarray(instance.mean_rgb, dtype=np.float64))
    return None
