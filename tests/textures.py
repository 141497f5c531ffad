"""Synthetic textures for image-matching tests: unique, multi-scale colour patterns with plenty of corners."""

from __future__ import annotations

import cv2
import numpy as np


def texture(seed: int, size: int = 192, cells_px: tuple[int, ...] = (6, 12, 24), circles: int = 30,
            max_radius_px: int = 14) -> np.ndarray:
    """Colour noise at several scales plus filled circles, like a painted pattern (uint8 RGB, size x size)."""
    rng = np.random.default_rng(seed)
    img = np.zeros((size, size, 3))
    for cell in cells_px:
        n = size // cell + 1
        img += cv2.resize(rng.random((n, n, 3)), (size, size), interpolation=cv2.INTER_CUBIC)
    img = ((img - img.min()) / (img.max() - img.min()) * 255).astype(np.uint8)
    for _ in range(circles):
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        centre = tuple(int(c) for c in rng.integers(0, size, 2))
        cv2.circle(img, centre, int(rng.integers(3, max_radius_px)), colour, -1)
    return img
