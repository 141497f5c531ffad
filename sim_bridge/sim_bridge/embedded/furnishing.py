"""Furnishing a home with real models: which model an object is, how it looks, where things stand on it.

``home.generate_home`` decides the rooms and where each piece goes; for a furnished home (``HomeConfig.furniture
== "furnished"``) it asks a :class:`Furnisher` for the model of each object instead of a primitive recipe:

* a model is drawn among those standing for the category (``furniture_categories``); the object takes the
  model's catalogue size (Sweet Home 3D stretches the model to it, see ``furniture_library``), so footprints,
  navigable grid, view points and geodesics follow the real extents;
* its colour is the colour name most of its pixels have in pictures from around it under the homes' lighting
  (``mesh_assets.camera_pixels``; each pixel named by ``goat_core.matching.attributes.ColourNamer`` as the agent
  names pixels: the colour the camera sees, not that of faces no camera sees), its
  material the material word its material and texture names use (wood, metal, glass...), its size label where
  its volume falls in the category's size range;
* small objects stand on a receptacle's support surface: the height Sweet Home 3D drops things on it
  (``dropOnTopElevation``), or its top; a 4 cm grid over the footprint marks where an upward-facing face of the
  mesh is at that height (a table top, a shelf, not the sink basin or the gap between two chair backs) and how
  much free height there is above it (the shelf above), so an object stands on the mesh and fits under it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Mapping, Optional, Sequence

import numpy as np
from scipy import ndimage

from goat_core.matching.attributes import ColourNamer
from goat_core.vocabulary import COLOURS, ROOM_TYPES
from sim_bridge.embedded.catalogue import CategorySpec
from sim_bridge.embedded.furniture_categories import models_by_category, uncommon_models
from sim_bridge.embedded.furniture_library import (
    CatalogueEntry,
    FurnitureLibrary,
    FurnitureLibraryError,
    ModelMesh,
    ModelStore,
    load_libraries,
)

Vec3 = tuple[float, float, float]

FURNITURE_TRIANGLES = 2500  # triangle budget of a piece standing on the floor (see bench_speed.py)
SMALL_OBJECT_TRIANGLES = 800  # of an object standing on a receptacle
SURFACE_CELL_M = 0.04
SURFACE_BELOW_M = 0.03  # an upward face this far below the support height still carries (cushions, cloths)
SURFACE_ABOVE_M = 0.015
SUPPORTED_SHARE = 0.9  # share of a small object's footprint cells that must lie on the surface
SAMPLES_PER_M2 = 20000.0
MAX_SAMPLES = 200000

# Words of material and texture names -> goat_core.vocabulary.MATERIALS (first hit in area order wins).
_MATERIAL_WORDS: dict[str, str] = {
    "wood": "wooden", "wooden": "wooden", "oak": "wooden", "venge": "wooden", "pine": "wooden",
    "walnut": "wooden", "beech": "wooden", "parquet": "wooden", "metal": "metal", "steel": "metal",
    "chrome": "metal", "aluminium": "metal", "aluminum": "metal", "iron": "metal", "galvanized": "metal",
    "inox": "metal", "glass": "glass", "leather": "leather", "fabric": "fabric", "cloth": "fabric",
    "cotton": "fabric", "sheet": "fabric", "pillow": "fabric", "cushion": "fabric", "coverlet": "fabric",
    "plastic": "plastic", "ceramic": "ceramic", "porcelain": "ceramic",
}


@dataclass(frozen=True)
class ModelRef:
    """Which model of which library an object is, and whom to credit for it."""

    library: str
    model_id: str  # the catalogue's id#N
    name: str  # the catalogue's name
    creator: str
    licence: str  # the library's licence (CC0-1.0, CC-BY-3.0...)
    key: str  # "<library>/<folder>", unique over the libraries

    def credit(self) -> str:
        return f'"{self.name}" by {self.creator or "unknown"} ({self.library}, {self.licence})'


@dataclass(frozen=True)
class ModelChoice:
    """A model drawn for an object: its size, where its size falls in the category's range, its surface."""

    ref: ModelRef
    size_m: Vec3
    scale: float  # 0 = the category's smallest size, 1 = its largest (clamped), for the size label
    support_m: float  # height of the surface small objects stand on, above the object's base


class Surface:
    """Where an upward face of a model carries things at its support height, and the free height above it.

    Grid in the object frame (x across the width, y through the depth, origin at the footprint centre).
    """

    def __init__(self, size_m: Vec3, points: np.ndarray, up: np.ndarray, support_m: float) -> None:
        """``points`` (N, 3) drawn over the model's faces, ``up`` (N,) whether their face looks up.

        A support height of 0 is the floor under the model: carried wherever the model has nothing near it.
        """
        w, d, _ = size_m
        self.support_m = support_m
        self._cols = max(1, math.ceil(w / SURFACE_CELL_M))
        self._rows = max(1, math.ceil(d / SURFACE_CELL_M))
        self._half = (w / 2.0, d / 2.0)
        ceiling = np.full((self._rows, self._cols), np.inf)
        row, col = self._cells(points[:, 0], points[:, 1])
        z = points[:, 2]
        if support_m <= 0.0:
            supported = np.ones((self._rows, self._cols), dtype=bool)
            low = z <= SURFACE_ABOVE_M + SURFACE_BELOW_M  # legs, plinths and pedestals stand there
            supported[row[low], col[low]] = False
        else:
            supported = np.zeros((self._rows, self._cols), dtype=bool)
            carry = up & (z >= support_m - SURFACE_BELOW_M) & (z <= support_m + SURFACE_ABOVE_M)
            supported[row[carry], col[carry]] = True
            # A cell holding the rim of a hole (a sink's basin, a frame's gap) has points at the support height
            # too: only cells whose neighbours all carry are kept, so nothing overhangs a hole.
            supported = ndimage.binary_erosion(supported, np.ones((3, 3), dtype=bool), border_value=1)
        above = z > support_m + SURFACE_ABOVE_M
        np.minimum.at(ceiling, (row[above], col[above]), z[above])
        self.supported = supported
        self.ceiling_m = ceiling

    def _cells(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        col = np.clip(np.floor((x + self._half[0]) / SURFACE_CELL_M).astype(np.int64), 0, self._cols - 1)
        row = np.clip(np.floor((y + self._half[1]) / SURFACE_CELL_M).astype(np.int64), 0, self._rows - 1)
        return row, col

    def fits(self, lo_xy: Sequence[float], hi_xy: Sequence[float], height_m: float) -> bool:
        """True when the object-frame rectangle rests on the surface (its centre too: it does not stand over a
        hole or the gap of a frame) and ``height_m`` fits above it."""
        c0, r0 = (int(v) for v in self._index(lo_xy))
        c1, r1 = (int(v) for v in self._index(hi_xy))
        block = self.supported[r0:r1 + 1, c0:c1 + 1]
        cc, rc = self._index(((lo_xy[0] + hi_xy[0]) / 2.0, (lo_xy[1] + hi_xy[1]) / 2.0))
        if block.size == 0 or block.mean() < SUPPORTED_SHARE or not self.supported[rc, cc]:
            return False
        room = self.ceiling_m[r0:r1 + 1, c0:c1 + 1].min() - self.support_m
        return bool(room >= height_m + SURFACE_ABOVE_M)

    def _index(self, xy: Sequence[float]) -> tuple[int, int]:
        """``_cells`` of one point in plain floats (the same double arithmetic, without numpy's per-call cost)."""
        col = min(max(math.floor((float(xy[0]) + self._half[0]) / SURFACE_CELL_M), 0), self._cols - 1)
        row = min(max(math.floor((float(xy[1]) + self._half[1]) / SURFACE_CELL_M), 0), self._rows - 1)
        return col, row


def uncommon_catalogue(fur: Furnisher) -> tuple[CategorySpec, ...]:
    """PASTURE's uncommon categories of a furnished home: one per uncommon model name the libraries have.

    Their size range is their models' sizes; any room; colours and materials come from the models.
    """
    specs = []
    for name in sorted(fur.uncommon):
        sizes = np.asarray([e.size_m for e in fur.uncommon[name]])
        lo, hi = sizes.min(axis=0), sizes.max(axis=0)
        specs.append(CategorySpec(name, ROOM_TYPES, (float(lo[0]), float(lo[1]), float(lo[2])),
                                  (float(hi[0]), float(hi[1]), float(hi[2])), (), "receptacle", tuple(COLOURS),
                                  ("plastic", "metal", "wooden", "fabric")))
    return tuple(specs)


def _surface_points(mesh: ModelMesh) -> tuple[np.ndarray, np.ndarray]:
    """Points drawn over the model's triangles (fixed seed) and whether their triangle faces up."""
    rng = np.random.default_rng(0)
    tris = np.concatenate([p.vertices_m.astype(np.float64)[p.faces] for p in mesh.parts])  # (F, 3, 3)
    normal = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    area2 = np.linalg.norm(normal, axis=1)
    keep = area2 > 1e-12
    tris, normal, area2 = tris[keep], normal[keep], area2[keep]
    facing_up = normal[:, 2] / area2 > 0.9
    count = int(min(MAX_SAMPLES, max(1000, SAMPLES_PER_M2 * area2.sum() / 2.0)))
    # Every triangle gets at least its centroid, so small faces of a fine mesh are never skipped.
    chosen = np.concatenate([np.arange(len(tris)), rng.choice(len(tris), size=count, p=area2 / area2.sum())])
    r1, r2 = rng.uniform(size=len(chosen)), rng.uniform(size=len(chosen))
    r1[: len(tris)], r2[: len(tris)] = 4.0 / 9.0, 0.5  # sqrt(4/9) = 2/3, half and half: the centroid
    s = np.sqrt(r1)
    weights = np.stack([1 - s, s * (1 - r2), s * r2], axis=1)
    points = np.einsum("nk,nkj->nj", weights, tris[chosen])
    return points, facing_up[chosen]


def _material(mesh: ModelMesh, spec: CategorySpec) -> str:
    for word in mesh.material_words:
        material = _MATERIAL_WORDS.get(word)
        if material is not None and material in spec.materials:
            return material
    return spec.materials[0]


@lru_cache(maxsize=1)
def _namer() -> ColourNamer:
    return ColourNamer()


def dominant_colour(mesh: ModelMesh) -> str:
    """The colour name most of the model's surface has (see module doc)."""
    if len(mesh.surface_rgb) == 0:
        raise FurnitureLibraryError(f"model {mesh.key} has no surface to take its colour from")
    scores = _namer().pixel_scores(mesh.surface_rgb)
    return max(sorted(scores), key=lambda name: scores[name])


class Furnisher:
    """The models of some libraries, by category, with their converted meshes (disk-cached)."""

    def __init__(self, libraries: tuple[FurnitureLibrary, ...], store: ModelStore) -> None:
        self.libraries = libraries
        self.store = store
        entries = [e for lib in libraries for e in lib.entries]
        self.models = models_by_category(entries)
        self.uncommon = uncommon_models(entries)
        self._licence = {lib.name: lib.licence for lib in libraries}
        self._by_key = {self._key(e): e for e in entries}
        self._surfaces: dict[tuple[str, float], Surface] = {}
        self._points: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def has(self, category: str) -> bool:
        return category in self.models or category in self.uncommon

    def has_unused(self, category: str, used: Mapping[str, int]) -> bool:
        """True when the category has a model the home does not use yet (``used``: see :meth:`choose`)."""
        return any(used.get(self._key(e), 0) == 0 for e in self._entries(category))

    @staticmethod
    def _key(entry: CatalogueEntry) -> str:
        return f"{entry.library}/{entry.folder}"

    def _entries(self, category: str) -> tuple[CatalogueEntry, ...]:
        found = self.models.get(category) or self.uncommon.get(category)
        if not found:
            raise FurnitureLibraryError(f"no model of category {category!r} in the furniture libraries "
                                        f"{', '.join(self._licence)}")
        return found

    def choose(self, rng: np.random.Generator, spec: CategorySpec,
               used: Mapping[str, int] = MappingProxyType({})) -> ModelChoice:
        """A model of ``spec``'s category, drawn uniformly among those the home uses least (``used``: times
        each model key is used in the home so far), so that a second instance looks unlike the first where
        the libraries allow it."""
        entries = self._entries(spec.name)
        fewest = min(used.get(self._key(e), 0) for e in entries)
        entries = tuple(e for e in entries if used.get(self._key(e), 0) == fewest)
        entry = entries[int(rng.integers(len(entries)))]
        ref = ModelRef(library=entry.library, model_id=entry.model_id, name=entry.name, creator=entry.creator,
                       licence=self._licence[entry.library], key=self._key(entry))
        lo, hi = (math.prod(s) ** (1.0 / 3.0) for s in (spec.size_min_m, spec.size_max_m))
        own = math.prod(entry.size_m) ** (1.0 / 3.0)
        scale = min(max((own - lo) / (hi - lo), 0.0), 1.0) if hi > lo else 0.5
        height = entry.size_m[2]
        support = entry.drop_on_top_m if entry.drop_on_top_m is not None and entry.drop_on_top_m < height \
            else height
        return ModelChoice(ref=ref, size_m=entry.size_m, scale=scale, support_m=support)

    def mesh(self, ref: ModelRef, small: bool) -> ModelMesh:
        entry = self._by_key.get(ref.key)
        if entry is None:
            raise FurnitureLibraryError(f"model {ref.key} is not in the furniture libraries {', '.join(self._licence)}")
        return self.store.mesh(entry, SMALL_OBJECT_TRIANGLES if small else FURNITURE_TRIANGLES)

    def appearance(self, choice: ModelChoice, spec: CategorySpec, small: bool) -> tuple[str, str]:
        """(colour name, material word) of a chosen model."""
        mesh = self.mesh(choice.ref, small)
        return dominant_colour(mesh), _material(mesh, spec)

    def _surface_points(self, ref: ModelRef) -> tuple[np.ndarray, np.ndarray]:
        found = self._points.get(ref.key)
        if found is None:
            found = self._points[ref.key] = _surface_points(self.mesh(ref, small=False))
        return found

    def footprint_xy(self, ref: ModelRef, centre_xy_m: Sequence[float], yaw_rad: float,
                     max_height_m: float) -> np.ndarray:
        """(N, 2) world points of the model's faces below ``max_height_m`` above its base, seen from above.

        The navigable grid marks the cells under them: the robot's free space is the floor the real mesh
        leaves, as far as a robot of that height is concerned (the empty corner of an L-shaped sofa, the space
        around a round table top is free), as the agent's depth camera sees it.
        """
        points, _ = self._surface_points(ref)
        low = points[points[:, 2] <= max_height_m, :2]
        c, s = math.cos(yaw_rad), math.sin(yaw_rad)
        rotated = low @ np.array([[c, s], [-s, c]])  # rows (x, y) -> (c x - s y, s x + c y)
        return rotated + np.asarray(centre_xy_m, dtype=np.float64)[:2]

    def surface(self, choice: ModelChoice, support_m: Optional[float] = None) -> Surface:
        """The surface of a (furniture) model at ``support_m`` (default: where things are put on it)."""
        level = choice.support_m if support_m is None else support_m
        key = (choice.ref.key, level)
        found = self._surfaces.get(key)
        if found is None:
            points, up = self._surface_points(choice.ref)
            found = self._surfaces[key] = Surface(choice.size_m, points, up, level)
        return found

    def compartment_surface(self, choice: ModelChoice, lo: Vec3, hi: Vec3) -> Optional[Surface]:
        """The floor of a compartment of a model (``catalogue.HIDING_PLACES``, fractions of its box).

        A compartment reaching down to the floor (under a desk) stands on the floor; otherwise its floor is the
        height at which the model has most upward-facing area inside the compartment's lower half (the bottom
        shelf of a bookcase, the basin of a bathtub). None when the model has no such face there.
        """
        if lo[2] <= 0.0:
            return self.surface(choice, 0.0)
        w, d, h = choice.size_m
        points, up = self._surface_points(choice.ref)
        x, y, z = points[:, 0] / w + 0.5, points[:, 1] / d + 0.5, points[:, 2] / h
        inside = up & (x >= lo[0]) & (x <= hi[0]) & (y >= lo[1]) & (y <= hi[1]) & (z <= (lo[2] + hi[2]) / 2.0)
        if not inside.any():
            return None
        bins = np.round(points[inside, 2] / 0.02).astype(np.int64)
        values, counts = np.unique(bins, return_counts=True)
        return self.surface(choice, float(values[int(np.argmax(counts))]) * 0.02)


    def level_surface(self, choice: ModelChoice, lo: Vec3, hi: Vec3, below: float = 0.15) -> Optional[Surface]:
        """The surface of a model within a level given in fractions of its box (``home_dressing.SURFACES``):
        the height with most upward-facing area among the model's faces over the level's rectangle between
        ``lo[2] - below`` and ``hi[2]`` (a model's shelf or seat need not be where a primitive recipe has it).
        None when the model has no upward face there."""
        w, d, h = choice.size_m
        points, up = self._surface_points(choice.ref)
        x, y, z = points[:, 0] / w + 0.5, points[:, 1] / d + 0.5, points[:, 2] / h
        inside = up & (x >= lo[0]) & (x <= hi[0]) & (y >= lo[1]) & (y <= hi[1]) & (z >= lo[2] - below) \
            & (z <= hi[2])
        if not inside.any():
            return None
        bins = np.round(points[inside, 2] / 0.02).astype(np.int64)
        values, counts = np.unique(bins, return_counts=True)
        return self.surface(choice, float(values[int(np.argmax(counts))]) * 0.02)


@lru_cache(maxsize=4)
def furnisher(libraries: tuple[str, ...], directory: str, cache_dir: Optional[str] = None) -> Furnisher:
    """The process-wide Furnisher of a library set (libraries are read and meshes converted once)."""
    libs = load_libraries(libraries, directory)
    return Furnisher(libs, ModelStore(libs, cache_dir))


__all__ = ["FURNITURE_TRIANGLES", "Furnisher", "ModelChoice", "ModelRef", "SMALL_OBJECT_TRIANGLES", "Surface",
           "dominant_colour", "furnisher", "uncommon_catalogue"]
