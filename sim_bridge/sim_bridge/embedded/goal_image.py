"""Goal pictures as GOAT-Bench's noise-robustness study perturbs them: Gaussian pixel noise, sigma ~ U(0.1, 2.0)
(Khanna et al. 2024). The simulator applies it to the image goal's picture it renders (sim_bridge.embedded.subtask_env).
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np

from goat_core.errors import ConfigError, InvalidObservationError

NOISE_SIGMA_RANGE = (0.1, 2.0)


def noisy_goal_image(
    image: np.ndarray,
    seed: Union[int, np.random.Generator],
    *,
    sigma_range: tuple[float, float] = NOISE_SIGMA_RANGE,
    full_scale: float = 1.0,
) -> tuple[np.ndarray, float]:
    """A goal image with additive zero-mean Gaussian pixel noise, and the sigma that was drawn.

    GOAT-Bench's noise-robustness study perturbs goal images with Gaussian noise of sigma ~ U(0.1, 2.0). The
    paper does not state the intensity scale; here sigma is in units of ``full_scale`` intensity levels
    relative to the image range [0, 1] (the default 1.0: sigma 0.1 is mild, 2.0 swamps the picture). Pass
    ``full_scale=1/255`` to read sigma in 8-bit levels instead. Each pixel and channel gets independent noise;
    the result is rounded and clipped back to uint8. The same ``seed`` (an int, or a Generator in the same
    state) gives the same sigma and the same image.
    """
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        shape = getattr(image, "shape", None)
        raise InvalidObservationError(f"image must be an (H, W, 3) uint8 RGB array, got {type(image).__name__} "
                                      f"{getattr(image, 'dtype', '')} {shape}")
    low, high = sigma_range
    if not (math.isfinite(low) and math.isfinite(high) and 0.0 <= low <= high):
        raise ConfigError(f"sigma_range must be 0 <= low <= high, got {sigma_range!r}")
    if not (math.isfinite(full_scale) and full_scale > 0.0):
        raise ConfigError(f"full_scale must be a positive number, got {full_scale!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    sigma = float(rng.uniform(low, high))
    unit = image.astype(np.float64) / 255.0
    noisy = unit + rng.normal(0.0, sigma * full_scale, size=image.shape)
    return np.clip(np.rint(noisy * 255.0), 0, 255).astype(np.uint8), sigma
