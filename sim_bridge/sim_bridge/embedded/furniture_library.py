"""Real furniture models from Sweet Home 3D libraries (Debian's ``sweethome3d-furniture``), read at run time.

A library is a ``.sh3f`` zip: a ``PluginFurnitureCatalog.properties`` catalogue (Java properties; keys
``name#N``, ``category#N``, ``model#N`` -> an OBJ path inside the zip, ``width#N`` / ``depth#N`` /
``height#N`` in cm, ``creator#N``, optional ``modelRotation#N`` and ``dropOnTopElevation#N``), one folder per
model (OBJ + MTL + textures) and a ``LICENSE.TXT``. Nothing of it is copied into this repository: the package
puts the libraries in ``/usr/share/sweethome3d/furniture`` and this module reads them from there.

Conversion of one model for MuJoCo (done once, then cached on disk):

* Frames. Sweet Home 3D models are Y-up with their front towards +Z (Java 3D, right-handed); the home's object
  frame (see ``catalogue``) is Z-up with the front towards +y. The proper rotation (x, y, z) -> (-x, z, y) maps
  one onto the other (determinant +1: no mirror). ``modelRotation`` (row-major 3x3) is applied first, as Sweet
  Home 3D does.
* Size. Sweet Home 3D stretches a model's bounding box to the catalogue's width x depth x height (cm), per axis;
  so does this module, in metres, with the box centred on the origin in x, y and standing on z = 0.
* Materials. MuJoCo gives one material to a geom, so a model becomes one mesh per OBJ material (``usemtl``).
  Textures (JPEG or PNG in the zip) are re-encoded as PNG no larger than ``MAX_TEXTURE_PX``; a texture the MTL
  names but the zip lacks leaves its material with the diffuse colour (``Kd``) alone. Transparency is ignored:
  depth and segmentation must agree with what the colour image shows.
* Triangles. Software rendering (Mesa llvmpipe) costs about 0.6 ms per thousand triangles for the colour and
  segmentation passes, and the models have up to 60k triangles each, so each model is simplified to a budget
  (meshoptimizer's edge-collapse simplifier keeps a subset of the original vertices, so texture coordinates stay
  exact and seams are kept).

Cache: ``<cache_dir>/<library sha256 prefix>/<model folder>-v<CONVERSION_VERSION>-t<budget>.npz``; a changed
library file (another hash) or conversion gives new files, an old file is never read for a new input.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping, Optional, Sequence

import cv2
import numpy as np

from goat_core.errors import SceneGenerationError
from sim_bridge.embedded.mesh_part import MeshPart

DEBIAN_PACKAGE = "sweethome3d-furniture"
LIBRARY_DIR = "/usr/share/sweethome3d/furniture"
# Only libraries whose licence lets anyone render, publish and redistribute pictures of the models.
DEFAULT_LIBRARIES: tuple[str, ...] = ("BlendSwap-CC-0", "BlendSwap-CC-BY")
CONVERSION_VERSION = 2
MAX_TEXTURE_PX = 256
INSTALL_HINT = (f"install Debian's {DEBIAN_PACKAGE} package (sudo apt-get install {DEBIAN_PACKAGE}, or run "
                "bash scripts/setup.sh as root), or ask for the primitive furniture explicitly with --homes large "
                "(the large homes) or --homes primitive (the small ones; HomeConfig(furniture='primitive'))")

Vec3 = tuple[float, float, float]


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/goat_nav/furniture`` (``~/.cache/goat_nav/furniture`` when XDG_CACHE_HOME is unset)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "goat_nav" / "furniture"


class FurnitureLibraryError(SceneGenerationError):
    """A furniture library is missing, unreadable, or a model in it cannot be converted."""


# ---------------------------------------------------------------- catalogue


@dataclass(frozen=True)
class CatalogueEntry:
    """One model of a library's catalogue (PluginFurnitureCatalog.properties)."""

    library: str  # file stem, e.g. "BlendSwap-CC-0"
    index: int  # N of the name#N keys
    model_id: str  # id#N, e.g. "Blend Swap CC-0#bed1"
    name: str
    sh3d_category: str  # the library's own category ("Bedroom", "Kitchen"...)
    tags: tuple[str, ...]
    model_path: str  # OBJ path inside the zip, without the leading "/"
    size_m: Vec3  # (width, depth, height) the model is stretched to
    drop_on_top_m: Optional[float]  # height objects dropped on it land at (Sweet Home 3D); None if not given
    elevation_m: float  # height above the floor it is meant to hang at (wall lamps, upper cabinets)
    model_rotation: Optional[tuple[float, ...]]  # row-major 3x3 applied to the OBJ first, None for identity
    creator: str

    @property
    def folder(self) -> str:
        """The model's folder name inside the zip (unique within a library)."""
        return _folder_name(self.model_path)


@lru_cache(maxsize=4096)
def _folder_name(model_path: str) -> str:
    """A large home's generation asks for model folders ~40,000 times (each model's key): parse each path once."""
    return PurePosixPath(model_path).parent.name


@dataclass(frozen=True)
class FurnitureLibrary:
    """A .sh3f library file: its catalogue, licence and content hash."""

    name: str
    path: Path
    licence: str  # SPDX-like short name read from LICENSE.TXT: CC0-1.0, CC-BY-3.0, CC-BY-3.0-US or unknown
    sha256: str
    entries: tuple[CatalogueEntry, ...]

    @property
    def is_open(self) -> bool:
        """True for CC0 and CC-BY libraries (the defaults may only be these)."""
        return self.licence.startswith(("CC0", "CC-BY"))


def parse_properties(text: str) -> dict[str, str]:
    """Java .properties text -> dict (comments, ``key=value`` / ``key: value``, line continuations, \\uXXXX)."""
    props: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.lstrip() if pending else raw.strip()
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        match = re.match(r"((?:[^=:\s\\]|\\.)+)\s*[=:\s]\s*(.*)$", line)
        if match is None:
            continue
        props[_unescape(match[1])] = _unescape(match[2])
    return props


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return re.sub(r"\\u([0-9a-fA-F]{4})|\\(.)",
                  lambda m: chr(int(m[1], 16)) if m[1] else {"n": "\n", "t": "\t"}.get(m[2], m[2]), text)


def _licence_of(text: str) -> str:
    lowered = text.lower()
    if "creative commons zero" in lowered or "publicdomain/zero" in lowered or "choose/zero" in lowered:
        return "CC0-1.0"
    if "licenses/by/3.0/us" in lowered or ("attribution 3.0" in lowered and "united states" in lowered):
        return "CC-BY-3.0-US"
    if "licenses/by/3.0" in lowered or "attribution 3.0" in lowered:
        return "CC-BY-3.0"
    return "unknown"


def _cm(props: Mapping[str, str], key: str, default: Optional[float] = None) -> Optional[float]:
    value = props.get(key)
    if value is None or not value.strip():
        return default
    return float(value) / 100.0


def _entry(library: str, props: Mapping[str, str], n: int) -> CatalogueEntry:
    def get(key: str) -> str:
        return props.get(f"{key}#{n}", "").strip()

    width, depth, height = (_cm(props, f"{k}#{n}") for k in ("width", "depth", "height"))
    if width is None or depth is None or height is None or min(width, depth, height) <= 0.0:
        raise FurnitureLibraryError(f"library {library}: model #{n} ({get('name')!r}) has no positive "
                                    f"width/depth/height (got {width}, {depth}, {height})")
    rotation = tuple(float(v) for v in get("modelRotation").split()) or None
    if rotation is not None and len(rotation) != 9:
        raise FurnitureLibraryError(f"library {library}: model #{n} has a modelRotation of {len(rotation)} "
                                    "numbers, expected 9")
    drop = _cm(props, f"dropOnTopElevation#{n}")
    return CatalogueEntry(
        library=library, index=n, model_id=get("id") or f"{library}#{n}", name=get("name"),
        sh3d_category=get("category"), tags=tuple(t.strip() for t in get("tags").split(",") if t.strip()),
        model_path=get("model").lstrip("/"), size_m=(width, depth, height),
        drop_on_top_m=drop if drop is not None and drop > 0.0 else None,
        elevation_m=_cm(props, f"elevation#{n}", 0.0) or 0.0, model_rotation=rotation, creator=get("creator"))


@lru_cache(maxsize=16)
def _read_library_cached(path: str, mtime_ns: int, size: int) -> FurnitureLibrary:
    file = Path(path)
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    try:
        with zipfile.ZipFile(file) as archive:
            text = archive.read("PluginFurnitureCatalog.properties").decode("latin-1")
            names = set(archive.namelist())
            licence_name = next((n for n in names if n.upper().startswith("LICENSE")), None)
            licence = _licence_of(archive.read(licence_name).decode("latin-1")) if licence_name else "unknown"
    except (zipfile.BadZipFile, KeyError) as exc:
        raise FurnitureLibraryError(f"{file} is not a Sweet Home 3D furniture library: {exc}") from None
    props = parse_properties(text)
    numbers = sorted({int(k.split("#", 1)[1]) for k in props if k.startswith("name#") and k[5:].isdigit()})
    entries = tuple(_entry(file.stem, props, n) for n in numbers)
    missing = [e.model_path for e in entries if e.model_path not in names]
    if missing:
        raise FurnitureLibraryError(f"library {file} names models it does not contain: {missing[:3]}")
    return FurnitureLibrary(name=file.stem, path=file, licence=licence, sha256=digest, entries=entries)


def read_library(path: Path | str) -> FurnitureLibrary:
    """Catalogue, licence and hash of one .sh3f file (read once per process and file version)."""
    file = Path(path)
    if not file.is_file():
        raise FurnitureLibraryError(f"furniture library {file} not found; {INSTALL_HINT}")
    stat = file.stat()
    return _read_library_cached(str(file.resolve()), stat.st_mtime_ns, stat.st_size)


def load_libraries(names: Sequence[str] = DEFAULT_LIBRARIES, directory: Path | str = LIBRARY_DIR,
                   allow_restricted: bool = False) -> tuple[FurnitureLibrary, ...]:
    """The named libraries from ``directory``; a clear error naming the package when any is missing.

    ``allow_restricted`` admits libraries whose licence is not CC0 or CC-BY (none of the defaults).
    """
    if not names:
        raise FurnitureLibraryError("no furniture library named; the defaults are " + ", ".join(DEFAULT_LIBRARIES))
    folder = Path(directory)
    found = sorted(p.stem for p in folder.glob("*.sh3f")) if folder.is_dir() else []
    missing = [n for n in names if n not in found]
    if missing:
        where = f"{folder} has {', '.join(found)}" if found else f"{folder} has no .sh3f library"
        raise FurnitureLibraryError(
            f"furniture libraries {', '.join(missing)} not found ({where}); {INSTALL_HINT}")
    libraries = tuple(read_library(folder / f"{n}.sh3f") for n in names)
    closed = [f"{lib.name} ({lib.licence})" for lib in libraries if not lib.is_open]
    if closed and not allow_restricted:
        raise FurnitureLibraryError(f"furniture libraries {', '.join(closed)} are not CC0 or CC-BY; "
                                    "pass allow_restricted=True to use them anyway")
    return libraries


# ---------------------------------------------------------------- meshes


@dataclass(frozen=True, eq=False)
class ModelMesh:
    """A converted model: its parts, what it looks like, and where things stand on it."""

    key: str  # "<library>/<folder>": unique over the libraries
    size_m: Vec3
    parts: tuple[MeshPart, ...]
    surface_rgb: np.ndarray  # (N, 3) uint8 colours of its pixels in pictures from around it (dominant colour)
    material_words: tuple[str, ...]  # words of the material and texture names (wood, metal, glass...)
    source_triangles: int  # before simplification
    meta: Mapping[str, object] = field(default_factory=dict)

    @property
    def triangles(self) -> int:
        return int(sum(p.faces.shape[0] for p in self.parts))


def _parse_obj(text: str) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], list[str]]:
    """Positions (V, 3), texture coordinates (T, 2), per material (F, 3, 2) [vertex, texcoord] indices, mtllibs.

    Polygons are fanned into triangles; negative (relative) indices are resolved; a missing texcoord is -1.
    """
    positions: list[tuple[float, float, float]] = []
    texcoords: list[tuple[float, float]] = []
    faces: dict[str, list[tuple[int, int]]] = {}
    mtllibs: list[str] = []
    current = ""
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        key = tokens[0]
        if key == "v":
            positions.append((float(tokens[1]), float(tokens[2]), float(tokens[3])))
        elif key == "vt":
            texcoords.append((float(tokens[1]), float(tokens[2]) if len(tokens) > 2 else 0.0))
        elif key == "f":
            corners = []
            for token in tokens[1:]:
                fields = token.split("/")
                vi = int(fields[0])
                ti = int(fields[1]) if len(fields) > 1 and fields[1] else 0
                corners.append((vi - 1 if vi > 0 else len(positions) + vi,
                                (ti - 1 if ti > 0 else len(texcoords) + ti) if ti else -1))
            out = faces.setdefault(current, [])
            for j in range(1, len(corners) - 1):
                out.extend((corners[0], corners[j], corners[j + 1]))
        elif key == "usemtl":
            current = " ".join(tokens[1:])
        elif key == "mtllib":
            mtllibs.append(" ".join(tokens[1:]))
    per_material = {m: np.asarray(c, dtype=np.int64).reshape(-1, 3, 2) for m, c in faces.items() if c}
    return (np.asarray(positions, dtype=np.float64).reshape(-1, 3),
            np.asarray(texcoords, dtype=np.float64).reshape(-1, 2), per_material, mtllibs)


@dataclass
class _Mtl:
    rgb: tuple[float, float, float] = (0.8, 0.8, 0.8)
    texture: str = ""


def _parse_mtl(text: str) -> dict[str, _Mtl]:
    materials: dict[str, _Mtl] = {}
    current: Optional[_Mtl] = None
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        if tokens[0] == "newmtl":
            current = materials.setdefault(" ".join(tokens[1:]), _Mtl())
        elif current is not None and tokens[0] == "Kd" and len(tokens) >= 4:
            current.rgb = (float(tokens[1]), float(tokens[2]), float(tokens[3]))
        elif current is not None and tokens[0] == "map_Kd" and len(tokens) >= 2:
            current.texture = line.strip()[len("map_Kd"):].strip()
    return materials


def _object_frame(positions: np.ndarray, entry: CatalogueEntry) -> np.ndarray:
    """OBJ positions -> object frame (Z up, front +y), stretched to the catalogue size (see module doc)."""
    p = positions
    if entry.model_rotation is not None:
        p = p @ np.asarray(entry.model_rotation, dtype=np.float64).reshape(3, 3).T
    p = np.stack([-p[:, 0], p[:, 2], p[:, 1]], axis=1)
    lo, hi = p.min(axis=0), p.max(axis=0)
    extent = np.maximum(hi - lo, 1e-9)
    size = np.asarray(entry.size_m)
    unit = (p - lo) / extent  # [0, 1] per axis
    out = (unit - np.array([0.5, 0.5, 0.0])) * size
    return out


def _read_texture(archive: zipfile.ZipFile, folder: PurePosixPath, name: str) -> Optional[np.ndarray]:
    """RGB uint8 of a texture the MTL names, looked up next to the OBJ; None when the zip lacks it."""
    if not name:
        return None
    base = PurePosixPath(name.replace("\\", "/")).name
    candidates = {str(folder / base), str(folder / name)}
    member = next((c for c in candidates if c in archive.namelist()), None)
    if member is None:
        return None
    image = cv2.imdecode(np.frombuffer(archive.read(member), dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        return None
    scale = MAX_TEXTURE_PX / max(image.shape[:2])
    if scale < 1.0:
        image = cv2.resize(image, (max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale))),
                           interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))


def _png(rgb: np.ndarray) -> bytes:
    ok, encoded = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    if not ok:
        raise FurnitureLibraryError("OpenCV could not encode a texture as PNG")
    return encoded.tobytes()


def _simplify(vertices: np.ndarray, faces: np.ndarray, target: int) -> np.ndarray:
    """Faces of a simplified mesh on a subset of ``vertices`` (meshoptimizer), at most about ``target``."""
    if faces.shape[0] <= target:
        return faces
    import meshoptimizer  # the simplifier is only needed to convert a model the cache does not hold yet

    indices = faces.astype(np.uint32).ravel()
    positions = np.ascontiguousarray(vertices, dtype=np.float32)
    out = np.zeros_like(indices)
    count = meshoptimizer.simplify(out, indices, positions, target_index_count=3 * target, target_error=0.02)
    # Foliage, thin parts and many small pieces stop the edge collapser early: the topology-blind (sloppy)
    # simplifier goes further, first within 5 % of the extent, then as far as the budget asks.
    for error in (0.05, 1.0):
        if count <= 3 * target * 1.2:
            break
        count = meshoptimizer.simplify_sloppy(out, indices, positions, target_index_count=3 * target,
                                              target_error=error)
    return out[:count].reshape(-1, 3).astype(np.int64)


def _weld(corners: np.ndarray, positions: np.ndarray, texcoords: np.ndarray,
          textured: bool) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
    """Unique vertices of a part ((position, texcoord) pairs when textured) and its faces on them.

    Vertices are welded by value (0.1 mm, 1e-5 in texture space), not by OBJ index: exporters repeat a
    position for every normal it has, and the simplifier would take each repeat for a seam it must keep.
    """
    corner = corners.reshape(-1, 2)
    keys = np.round(positions[corner[:, 0]] * 1e4).astype(np.int64)
    if textured:
        keys = np.concatenate([keys, np.round(texcoords[corner[:, 1]] * 1e5).astype(np.int64)], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    faces = inverse.reshape(-1, 3)
    vertices = positions[corner[first, 0]]
    uv = texcoords[corner[first, 1]] if textured else None
    return vertices, faces, uv


def _drop_degenerate(faces: np.ndarray) -> np.ndarray:
    ok = (faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])
    return faces[ok]


def _compact(vertices: np.ndarray, faces: np.ndarray,
             uv: Optional[np.ndarray]) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
    used, inverse = np.unique(faces.ravel(), return_inverse=True)
    return vertices[used], inverse.reshape(-1, 3), (uv[used] if uv is not None else None)


def convert_model(library: FurnitureLibrary, entry: CatalogueEntry, max_triangles: int) -> ModelMesh:
    """Read one model from its library and convert it (see module doc); no cache involved."""
    with zipfile.ZipFile(library.path) as archive:
        obj_text = archive.read(entry.model_path).decode("latin-1")
        positions, texcoords, per_material, mtllibs = _parse_obj(obj_text)
        folder = PurePosixPath(entry.model_path).parent
        materials: dict[str, _Mtl] = {}
        for lib in mtllibs:
            member = str(folder / lib)
            if member in archive.namelist():
                materials.update(_parse_mtl(archive.read(member).decode("latin-1")))
        textures = {name: _read_texture(archive, folder, mtl.texture) for name, mtl in materials.items()}
    if positions.shape[0] == 0 or not per_material:
        raise FurnitureLibraryError(f"model {entry.model_id} ({entry.model_path}) has no triangles")
    vertices_m = _object_frame(positions, entry)
    source = int(sum(c.shape[0] for c in per_material.values()))
    parts: list[tuple[MeshPart, Optional[np.ndarray]]] = []
    words: list[str] = []
    for name in sorted(per_material):
        corners = per_material[name]
        mtl = materials.get(name, _Mtl())
        texture = textures.get(name)
        textured = texture is not None and texcoords.shape[0] > 0 and bool((corners[..., 1] >= 0).all())
        verts, faces, uv = _weld(corners, vertices_m, texcoords, textured)
        budget = max(12, int(max_triangles * corners.shape[0] / source))
        faces = _drop_degenerate(_simplify(verts, faces, budget))
        if faces.shape[0] == 0:
            continue
        verts, faces, uv = _compact(verts, faces, uv)
        rgb = (255, 255, 255) if textured else tuple(int(round(255 * min(max(c, 0.0), 1.0))) for c in mtl.rgb)
        part = MeshPart(vertices_m=verts.astype(np.float32), faces=faces.astype(np.int32),
                        texcoords=uv.astype(np.float32) if uv is not None else None,
                        rgb=(int(rgb[0]), int(rgb[1]), int(rgb[2])),
                        texture_png=_png(texture) if textured and texture is not None else None)
        parts.append((part, texture if textured else None))
        words.extend(re.findall(r"[a-z]+", f"{name} {mtl.texture}".lower()))
    if not parts:
        raise FurnitureLibraryError(f"model {entry.model_id} ({entry.model_path}) has no triangles left")
    from sim_bridge.embedded.mesh_assets import camera_pixels  # rendering: MuJoCo and a GL context

    colours = camera_pixels([p for p, _ in parts], entry.size_m)
    return ModelMesh(key=f"{library.name}/{entry.folder}", size_m=entry.size_m, parts=tuple(p for p, _ in parts),
                     surface_rgb=colours, material_words=tuple(sorted(set(words))), source_triangles=source)


# ---------------------------------------------------------------- cache


def _cache_file(cache_dir: Path, library: FurnitureLibrary, entry: CatalogueEntry, max_triangles: int) -> Path:
    return cache_dir / library.sha256[:16] / f"{entry.folder}-v{CONVERSION_VERSION}-t{max_triangles}.npz"


def _save(path: Path, mesh: ModelMesh) -> None:
    arrays: dict[str, np.ndarray] = {"surface_rgb": mesh.surface_rgb}
    meta_parts = []
    for k, part in enumerate(mesh.parts):
        arrays[f"v{k}"] = part.vertices_m
        arrays[f"f{k}"] = part.faces
        if part.texcoords is not None:
            arrays[f"t{k}"] = part.texcoords
        if part.texture_png is not None:
            arrays[f"png{k}"] = np.frombuffer(part.texture_png, dtype=np.uint8)
        meta_parts.append({"rgb": list(part.rgb)})
    meta = {"key": mesh.key, "size_m": list(mesh.size_m), "parts": meta_parts,
            "material_words": list(mesh.material_words), "source_triangles": mesh.source_triangles}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    tmp = path.with_suffix(f".tmp{np.random.default_rng().integers(1 << 30)}")
    tmp.write_bytes(buffer.getvalue())
    tmp.replace(path)  # atomic: a concurrent reader sees the old file or the whole new one


def _load(path: Path) -> ModelMesh:
    with np.load(path) as data:
        meta = json.loads(bytes(data["meta"]).decode())
        parts = []
        for k, info in enumerate(meta["parts"]):
            parts.append(MeshPart(
                vertices_m=data[f"v{k}"], faces=data[f"f{k}"],
                texcoords=data[f"t{k}"] if f"t{k}" in data else None,
                rgb=(int(info["rgb"][0]), int(info["rgb"][1]), int(info["rgb"][2])),
                texture_png=bytes(data[f"png{k}"]) if f"png{k}" in data else None))
        w, d, h = (float(v) for v in meta["size_m"])
        return ModelMesh(key=str(meta["key"]), size_m=(w, d, h), parts=tuple(parts),
                         surface_rgb=np.asarray(data["surface_rgb"]),
                         material_words=tuple(meta["material_words"]),
                         source_triangles=int(meta["source_triangles"]), meta={"cache_file": str(path)})


class ModelStore:
    """Converted models, from memory, from the disk cache, or converted now (and then cached)."""

    def __init__(self, libraries: Iterable[FurnitureLibrary], cache_dir: Path | str | None = None) -> None:
        self.libraries = {lib.name: lib for lib in libraries}
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._memory: dict[tuple[str, int, int], ModelMesh] = {}
        self.converted = 0  # models converted by this store (not found in the cache)

    def mesh(self, entry: CatalogueEntry, max_triangles: int) -> ModelMesh:
        key = (entry.library, entry.index, max_triangles)
        found = self._memory.get(key)
        if found is not None:
            return found
        library = self.libraries.get(entry.library)
        if library is None:
            raise FurnitureLibraryError(f"model {entry.model_id} is from library {entry.library}, which this "
                                        f"store does not hold ({', '.join(self.libraries)})")
        path = _cache_file(self.cache_dir, library, entry, max_triangles)
        mesh: Optional[ModelMesh] = None
        if path.is_file():
            try:
                mesh = _load(path)
            except (OSError, ValueError, KeyError):  # a damaged cache file is converted again and rewritten
                mesh = None
        if mesh is None:
            mesh = convert_model(library, entry, max_triangles)
            self.converted += 1
            try:
                _save(path, mesh)
            except OSError as exc:
                raise FurnitureLibraryError(f"cannot write the furniture cache {path}: {exc}") from None
        self._memory[key] = mesh
        return mesh


def licence_summary(libraries: Iterable[FurnitureLibrary]) -> dict[str, str]:
    """Library name -> licence, for credits."""
    return {lib.name: lib.licence for lib in libraries}


__all__ = ["CatalogueEntry", "DEFAULT_LIBRARIES", "FurnitureLibrary", "FurnitureLibraryError", "LIBRARY_DIR",
           "MeshPart", "ModelMesh", "ModelStore", "convert_model", "default_cache_dir", "licence_summary",
           "load_libraries", "parse_properties", "read_library"]
