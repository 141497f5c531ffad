"""One material's triangles of a converted furniture model: what the conversion (``furniture_library``) writes and
the MuJoCo assets (``mesh_assets``) read, in a module of its own so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass(frozen=True, eq=False)
class MeshPart:
    """The triangles of one material of a model, in the object frame (metres, see ``furniture_library``)."""

    vertices_m: np.ndarray  # (V, 3) float32
    faces: np.ndarray  # (F, 3) int32 indices into vertices_m
    texcoords: Optional[np.ndarray]  # (V, 2) float32 (OBJ convention: v up), None when untextured
    rgb: tuple[int, int, int]  # diffuse colour, sRGB 0-255 (white under a texture)
    texture_png: Optional[bytes]  # PNG of the material's texture
