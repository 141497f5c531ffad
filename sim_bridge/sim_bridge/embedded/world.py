"""MuJoCo world of a home: MJCF with per-instance textures, and a fast offscreen RGB-D-segmentation renderer.

Only rendering is used (no physics step): the camera pose is written straight into ``MjData.cam_xpos`` /
``cam_xmat`` and the low-level ``mjv_updateScene`` + ``mjr_render`` + ``mjr_readPixels`` calls draw it. A
second pass with MuJoCo's segmentation flags gives per-pixel geom ids. Shadows, reflections and
multisampling are off: shadows cost ~5x the frame time on a software renderer, and multisampling would blend
the id colours at edges.

Objects of a furnished home are their models' meshes (``furnishing``), one mesh, material and texture per
model material, all geoms of an object in one body (so one instance id in segmentation). MuJoCo draws every
geom it is given, so each frame first hides the geoms whose bounding sphere lies outside the camera's view
(frustum culling): a software renderer pays for every triangle it is handed.
"""

from __future__ import annotations

import math
import os

# MuJoCo picks its OpenGL backend when it is imported; headless machines need EGL (or OSMesa), and an
# explicit MUJOCO_GL from the user still wins.
os.environ.setdefault("MUJOCO_GL", "egl")

from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Sequence  # noqa: E402
from xml.sax.saxutils import quoteattr  # noqa: E402

import cv2  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from goat_core.vocabulary import COLOURS  # noqa: E402
from sim_bridge.embedded.furnishing import Furnisher, furnisher  # noqa: E402
from sim_bridge.embedded.home import Home, ObjectSpec, Part  # noqa: E402
from sim_bridge.embedded.mesh_assets import add_parts, lighting_xml, top_light_xml  # noqa: E402

OBJECT_TEXTURE_PX = 128
SURFACE_TEXTURE_PX = 256
FEATURE_COVERAGE_RANGE = (0.2, 0.35)  # share of an object texture covered by patterns; the rest: base colour
ACCENT_PROBABILITY = 0.25  # share of patterns drawn in another named colour instead of a shade of the base
TEXTURE_NOISE_SIGMA = 5.0  # per-pixel grain, in 8-bit levels
# Near/far clip planes, as fractions of the (fixed) model extent: 0.02 m and 50 m.
MODEL_EXTENT_M = 10.0
ZNEAR_FRACTION = 0.002
ZFAR_FRACTION = 5.0
TRIM_SHADE = 0.45  # trim parts are the base colour darkened to this fraction (white trims stay light gray)
FLOOR_COLOURS = ((150, 110, 75), (170, 160, 145), (120, 90, 60), (190, 180, 165), (135, 130, 125),
                 (160, 125, 90))
WALL_COLOUR = (215, 210, 200)
WALL_GRAIN = 3.0  # std of the surface grain, 8-bit levels
FLOOR_GRAIN = 8.0
CEILING_COLOUR = (240, 240, 240)
CULLED_GROUP = 5  # MuJoCo geom group that frustum culling moves hidden geoms to (disabled in rendering)

Vec3 = tuple[float, float, float]


@dataclass(frozen=True, eq=False)
class RenderedView:
    """One camera frame."""

    rgb: np.ndarray  # (H, W, 3) uint8, RGB
    depth_m: np.ndarray  # (H, W) float32 metres along the optical axis, 0 = no return
    segmentation: np.ndarray  # (H, W) int32 instance ids, -1 = no instance (walls, floor, nothing)


def camera_rotation(yaw_rad: float, tilt_rad: float) -> np.ndarray:
    """World-from-camera rotation of a MuJoCo camera (x right, y up, looking along -z).

    The optical axis is the heading ``yaw_rad`` (counter-clockwise from world +x) tilted up by ``tilt_rad``.
    """
    cy, sy, ct, st = math.cos(yaw_rad), math.sin(yaw_rad), math.cos(tilt_rad), math.sin(tilt_rad)
    forward = np.array([ct * cy, ct * sy, st])
    right = np.array([sy, -cy, 0.0])
    up = np.cross(right, forward)
    return np.column_stack([right, up, -forward])


# ---------------------------------------------------------------- textures


def object_texture(rng: np.random.Generator, base_rgb: Sequence[int],
                   size_px: int = OBJECT_TEXTURE_PX) -> np.ndarray:
    """(size, size, 3) uint8 RGB: the base colour over most of it, with random blobs, boxes and lines.

    Patterns are shades of the base colour or, now and then, another named colour; together they cover 20-35 %
    of the texture, so the base colour stays the one a person would name while SIFT finds corners and blobs
    that differ between two instances of one category.
    """
    base = np.asarray(base_rgb, dtype=np.float64)
    image = np.empty((size_px, size_px, 3), dtype=np.float64)
    image[:] = base
    covered = np.zeros((size_px, size_px), dtype=bool)
    n_covered, n_pixels = 0, size_px * size_px  # covered pixels, counted (the same fractions as covered.mean())
    target = rng.uniform(*FEATURE_COVERAGE_RANGE)
    accents = [np.asarray(c, dtype=np.float64) for c in COLOURS.values() if tuple(c) != tuple(base_rgb)]
    for _ in range(400):
        if n_covered / n_pixels >= target:
            break
        mask = _pattern_mask(rng, size_px)
        n_new = n_covered + int(np.count_nonzero(mask & ~covered))
        if n_new / n_pixels > FEATURE_COVERAGE_RANGE[1]:
            continue
        if rng.uniform() < ACCENT_PROBABILITY:
            colour = accents[int(rng.integers(len(accents)))]
        else:
            colour = _shade(rng, base)
        image[mask] = colour
        covered |= mask
        n_covered = n_new
    image += rng.normal(0.0, TEXTURE_NOISE_SIGMA, image.shape)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def _shade(rng: np.random.Generator, base: np.ndarray) -> np.ndarray:
    """A visibly darker or lighter version of the colour (darker for light colours, lighter for dark ones)."""
    luminance = float(base @ np.array([0.299, 0.587, 0.114]))
    darker = luminance > 170 or (luminance > 70 and rng.uniform() < 0.5)
    if darker:
        return base * rng.uniform(0.45, 0.7)
    return base + (255.0 - base) * rng.uniform(0.35, 0.6)


def _pattern_mask(rng: np.random.Generator, size_px: int) -> np.ndarray:
    canvas = np.zeros((size_px, size_px), dtype=np.uint8)
    kind = int(rng.integers(4))
    x, y = (int(v) for v in rng.integers(0, size_px, 2))
    extent = int(rng.integers(3, size_px // 6))
    if kind == 0:
        cv2.circle(canvas, (x, y), extent, 1, -1)
    elif kind == 1:
        w, h = (int(v) for v in rng.integers(3, size_px // 4, 2))
        cv2.rectangle(canvas, (x, y), (x + w, y + h), 1, -1)
    elif kind == 2:
        x2, y2 = (int(v) for v in rng.integers(0, size_px, 2))
        cv2.line(canvas, (x, y), (x2, y2), 1, int(rng.integers(1, 4)))
    else:
        axes = (extent, int(rng.integers(2, max(3, extent))))
        cv2.ellipse(canvas, (x, y), axes, float(rng.uniform(0, 180)), 0, 360, 1, -1)
    return canvas.astype(bool)


def surface_texture(rng: np.random.Generator, base_rgb: Sequence[int], planks: bool, grain_levels: float,
                    size_px: int = SURFACE_TEXTURE_PX) -> np.ndarray:
    """A mild floor or wall texture: smooth grain of ``grain_levels`` (8-bit std), plank seams if asked."""
    image = np.empty((size_px, size_px, 3), dtype=np.float64)
    image[:] = np.asarray(base_rgb, dtype=np.float64)
    grain = cv2.GaussianBlur(rng.normal(0.0, 1.0, (size_px, size_px)), (0, 0), 2.0)
    image += (grain_levels * grain / max(float(grain.std()), 1e-9))[..., None]
    if planks:
        step = size_px // 4
        image[::step, :] *= 0.75
        for row in range(0, size_px, step):
            image[row:row + step, int(rng.integers(size_px))] *= 0.75
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


TEXTURE_CACHE_VERSION = 1  # raise when object_texture draws differently


def texture_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/goat_nav/textures`` (``~/.cache/goat_nav/textures`` when XDG_CACHE_HOME is unset)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "goat_nav" / "textures"


def _object_texture_png(seed: int, instance_id: int, base_rgb: Sequence[int]) -> bytes:
    """The PNG of an object's texture, seeded by (home seed, instance id) so that an instance looks the same
    whatever else the home holds; cached on disk (a large home has hundreds: drawing them takes seconds)."""
    colour = "-".join(str(int(c)) for c in base_rgb)
    key = f"v{TEXTURE_CACHE_VERSION}_{OBJECT_TEXTURE_PX}_{seed}_{instance_id}_{colour}"
    path = texture_cache_dir() / f"{key}.png"
    try:
        return path.read_bytes()
    except OSError:
        pass
    encoded = _png(object_texture(np.random.default_rng([seed, instance_id]), base_rgb))
    try:  # written under a temporary name first: parallel workers never read half a file
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(encoded)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs time
    return encoded


def _png(rgb: np.ndarray) -> bytes:
    # Light compression: the pixels are the same (PNG is lossless), the encoding several times faster.
    ok, encoded = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 1])
    if not ok:
        raise RuntimeError("OpenCV could not encode a texture as PNG")
    return encoded.tobytes()


# ---------------------------------------------------------------- MJCF


def _vec(values: Sequence[float]) -> str:
    return " ".join(f"{float(v):.6g}" for v in values)


def _rgba(rgb: Sequence[float]) -> str:
    return _vec([c / 255.0 for c in rgb] + [1.0])


def _part_geom(part: Part, material: str) -> str:
    """One <geom> inscribed in the part's box (see catalogue for how each shape fills it)."""
    hx, hy, hz = part.half_size_m
    attrs = f'pos="{_vec(part.centre_m)}" material="{material}"'
    if part.shape == "box":
        return f'<geom type="box" size="{_vec((hx, hy, hz))}" {attrs}/>'
    if part.shape == "sphere":
        return f'<geom type="sphere" size="{min(hx, hy, hz):.6g}" {attrs}/>'
    along = {"x": hx, "y": hy, "z": hz}[part.axis]
    radius = min(v for k, v in (("x", hx), ("y", hy), ("z", hz)) if k != part.axis)
    zaxis = {"x": "1 0 0", "y": "0 1 0", "z": "0 0 1"}[part.axis]
    if part.shape == "capsule":
        radius = min(radius, along)
        along = max(along - radius, 1e-4)  # the caps add one radius at each end
    return f'<geom type="{part.shape}" size="{radius:.6g} {along:.6g}" zaxis="{zaxis}" {attrs}/>'


def build_mjcf(home: Home, width_px: int, height_px: int, vfov_rad: float) -> tuple[str, dict[str, bytes]]:
    """MJCF text of the home and the in-memory PNG textures it names (for ``MjModel.from_xml_string``)."""
    assets: dict[str, bytes] = {}
    asset_xml: list[str] = []
    body_xml: list[str] = []
    _add_structure(home, assets, asset_xml, body_xml)
    for obj in home.objects:
        if obj.model is None:
            _add_object(home.seed, obj, assets, asset_xml, body_xml)
        else:  # the model's meshes are added to this body by build_model
            body_xml.append(f'<body name="{obj.object_id}"/>')
    xml = f"""<mujoco model={quoteattr(f"goat_home_{home.seed}")}>
  <statistic extent="{MODEL_EXTENT_M}" center="0 0 1"/>
  <visual>
    <global offwidth="{width_px}" offheight="{height_px}"/>
    <quality shadowsize="0" offsamples="0"/>
    {lighting_xml()}
    <map znear="{ZNEAR_FRACTION}" zfar="{ZFAR_FRACTION}"/>
  </visual>
  <asset>
    {chr(10).join(asset_xml)}
  </asset>
  <worldbody>
    {top_light_xml()}
    <camera name="head" pos="0 0 1" fovy="{math.degrees(vfov_rad):.6f}"/>
    {chr(10).join(body_xml)}
  </worldbody>
</mujoco>
"""
    return xml, assets


def _material(name: str, rgba: str, texture: str = "", texrepeat: str = "") -> str:
    tex = f' texture="{texture}"' if texture else ""
    rep = f' texrepeat="{texrepeat}" texuniform="true"' if texrepeat else ""
    return f'<material name="{name}" rgba="{rgba}" specular="0" shininess="0" reflectance="0"{tex}{rep}/>'


def _add_structure(home: Home, assets: dict[str, bytes], asset_xml: list[str], body_xml: list[str]) -> None:
    """Floors (one texture per room), walls and ceilings; all of them are segmentation background."""
    rng = np.random.default_rng([home.seed, 0])
    white = _rgba((255, 255, 255))
    assets["wall.png"] = _png(surface_texture(rng, WALL_COLOUR, planks=False, grain_levels=WALL_GRAIN))
    # A cube texture stretched over each face of a wall box (a 2D one would be smeared across the vertical
    # faces, a uniform cube one turns radial on long boxes).
    asset_xml += ['<texture name="wall" type="cube" file="wall.png"/>',
                  _material("wall", white, "wall"),
                  _material("ceiling", _rgba(CEILING_COLOUR))]
    height = home.config.wall_height_m
    for room in home.rooms:
        name = f"floor_{room.room_id}"
        colour = FLOOR_COLOURS[int(rng.integers(len(FLOOR_COLOURS)))]
        assets[f"{name}.png"] = _png(surface_texture(rng, colour, bool(rng.uniform() < 0.6), FLOOR_GRAIN))
        asset_xml += [f'<texture name="{name}" type="2d" file="{name}.png"/>',
                      _material(name, white, name, "0.5 0.5")]
        for k, ((x0, y0), (x1, y1)) in enumerate(room.rects):
            # The floor and ceiling reach under the walls, so no gap shows at door sills.
            t = home.config.wall_thickness_m
            half = ((x1 - x0) / 2 + t, (y1 - y0) / 2 + t)
            centre = ((x0 + x1) / 2, (y0 + y1) / 2)
            part = f"_{k}" if k else ""  # the main rectangle keeps the names of rectangular rooms
            body_xml.append(f'<geom name="{name}{part}" type="box" size="{_vec(half + (0.01,))}" '
                            f'pos="{_vec(centre + (-0.01,))}" material="{name}"/>')
            body_xml.append(f'<geom name="ceiling_{room.room_id}{part}" type="box" size="{_vec(half + (0.01,))}" '
                            f'pos="{_vec(centre + (height + 0.01,))}" material="ceiling"/>')
    for i, box in enumerate(home.walls):
        body_xml.append(f'<geom name="wall_{i}" type="box" size="{_vec(box.half_size_m)}" '
                        f'pos="{_vec(box.centre_m)}" material="wall"/>')


def _add_object(seed: int, obj: ObjectSpec, assets: dict[str, bytes], asset_xml: list[str],
                body_xml: list[str]) -> None:
    base = COLOURS[obj.colour]
    name = obj.object_id
    assets[f"tex_{name}.png"] = _object_texture_png(seed, obj.instance_id, base)
    trim = [max(30.0, c * TRIM_SHADE) for c in base]
    asset_xml += [f'<texture name="tex_{name}" type="cube" file="tex_{name}.png"/>',
                  _material(f"mat_{name}", _rgba((255, 255, 255)), f"tex_{name}"),
                  _material(f"trim_{name}", _rgba(trim))]
    geoms = "".join(_part_geom(p, f"trim_{name}" if p.trim else f"mat_{name}") for p in obj.parts)
    body_xml.append(f'<body name="{name}">{geoms}</body>')


def build_model(home: Home, width_px: int, height_px: int, vfov_rad: float) -> mujoco.MjModel:
    """The compiled MuJoCo model of a home: the MJCF of ``build_mjcf`` plus the models' meshes."""
    xml, assets = build_mjcf(home, width_px, height_px, vfov_rad)
    if all(obj.model is None for obj in home.objects):
        return mujoco.MjModel.from_xml_string(xml, assets)
    spec = mujoco.MjSpec.from_string(xml, assets=assets)
    fur = furnisher(home.config.furniture_libraries, home.config.furniture_dir)
    added: set[str] = set()
    for obj in home.objects:
        if obj.model is not None:
            _add_model(spec, fur, obj, added)
    return spec.compile()


def _add_model(spec: mujoco.MjSpec, fur: Furnisher, obj: ObjectSpec, added: set[str]) -> None:
    """The geoms of a model object (its meshes are added to the spec once per model and triangle budget)."""
    assert obj.model is not None
    small = obj.receptacle_id is not None
    mesh = fur.mesh(obj.model, small)
    body = spec.body(obj.object_id)
    half = obj.yaw_rad / 2.0
    quat = [math.cos(half), 0.0, 0.0, math.sin(half)]
    base = [obj.position_m[0], obj.position_m[1], obj.bbox_min_m[2]]  # the model stands on z = 0, centred
    for name in add_parts(spec, mesh.parts, f"{mesh.key}#{'s' if small else 'f'}", added):
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=name, material=name, pos=base, quat=quat,
                      contype=0, conaffinity=0)


# ---------------------------------------------------------------- renderer


PORTAL_SPHERES = 4  # bounding spheres per door gap in the room-to-room visibility test


class _RoomZones:
    """Room-to-room visibility of a large home: walls reach the ceiling, so a room can only be seen from the
    camera's room through a chain of door gaps each reaching into the view frustum. The open-plan rooms (living
    room, kitchen, dining room, hallway) make one zone. Geoms of rooms no such chain reaches are hidden; walls (and
    anything of no room) are always drawn. With the camera outside every room (in a door gap, inside the wall's
    thickness) the chains start from every room within a wall's thickness of it: the two the door joins, whose
    door gap it stands in; and every floor and ceiling is drawn then, as they are when nothing is hidden (they
    reach over the walls' centre lines, and coplanar slabs of two rooms meet there: a hidden one could move a
    depth pixel by a bit of the depth buffer). Only a camera farther from every room (outside the home) draws
    everything."""

    def __init__(self, home: Home, model: mujoco.MjModel, geom_instance: np.ndarray) -> None:
        self._home = home
        zone_of_room = {}
        for room in home.rooms:
            open_plan = room.room_type in ("living room", "kitchen", "dining room", "hallway")
            zone_of_room[room.room_id] = -2 if open_plan else room.room_id
        zones = sorted(set(zone_of_room.values()))
        index = {z: i for i, z in enumerate(zones)}
        self._room_zone = {r: index[z] for r, z in zone_of_room.items()}
        self._num_zones = len(zones)
        room_of_instance = {o.instance_id: o.room_id for o in home.objects}
        self.geom_zone = np.full(model.ngeom, -1, dtype=np.int64)
        self._slabs = np.zeros(model.ngeom, dtype=bool)  # floors and ceilings
        for geom in range(model.ngeom):
            instance = int(geom_instance[geom])
            if instance >= 0:
                self.geom_zone[geom] = self._room_zone[room_of_instance[instance]]
                continue
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom) or ""
            for prefix in ("floor_", "ceiling_"):
                if name.startswith(prefix):
                    self.geom_zone[geom] = self._room_zone[int(name[len(prefix):].split("_")[0])]
                    self._slabs[geom] = True
        # Each door gap (width x wall height) is covered by PORTAL_SPHERES spheres stacked up it: tighter than one.
        h, t, n = home.config.wall_height_m, home.config.wall_thickness_m, PORTAL_SPHERES
        self._portal_zones = [(self._room_zone[d.room_ids[0]], self._room_zone[d.room_ids[1]])
                              for d in home.doors for _ in range(n)]
        self._portal_centres = np.asarray([(d.centre_xy_m[0], d.centre_xy_m[1], (k + 0.5) * h / n)
                                           for d in home.doors for k in range(n)], dtype=np.float64).reshape(-1, 3)
        self._portal_radii = np.asarray([math.sqrt((d.width_m / 2.0) ** 2 + (h / n / 2.0) ** 2 + (t / 2.0) ** 2)
                                         for d in home.doors for _ in range(n)], dtype=np.float64)
        # Every room rectangle grown by a wall's thickness, and its zone: where a camera in no room starts.
        rects = [(lo, hi, self._room_zone[room.room_id]) for room in home.rooms for lo, hi in room.rects]
        self._near_lo = np.asarray([lo for lo, _, _ in rects], dtype=np.float64).reshape(-1, 2) - t
        self._near_hi = np.asarray([hi for _, hi, _ in rects], dtype=np.float64).reshape(-1, 2) + t
        self._near_zone = np.asarray([z for _, _, z in rects], dtype=np.int64)

    def visible_geoms(self, eye: np.ndarray, rotation: np.ndarray, in_frustum: _FrustumTest) -> np.ndarray:
        room = self._home.room_at((float(eye[0]), float(eye[1])))
        if room is not None:
            starts = [self._room_zone[room.room_id]]
        else:  # in a door gap: both rooms it joins (see the class doc)
            near = np.all((self._near_lo <= eye[:2]) & (eye[:2] <= self._near_hi), axis=1)
            starts = sorted(set(self._near_zone[near].tolist()))
            if not starts:
                return np.ones(len(self.geom_zone), dtype=bool)
        open_portals = in_frustum(self._portal_centres, self._portal_radii, eye, rotation)
        seen = np.zeros(self._num_zones + 1, dtype=bool)  # the last entry: geoms of no room (index -1)
        seen[-1] = True
        seen[starts] = True
        frontier = list(starts)
        while frontier:
            zone = frontier.pop()
            for k, (a, b) in enumerate(self._portal_zones):
                if open_portals[k] and zone in (a, b):
                    other = b if zone == a else a
                    if not seen[other]:
                        seen[other] = True
                        frontier.append(other)
        visible = seen[self.geom_zone]
        return np.asarray(visible if room is not None else visible | self._slabs)


_FrustumTest = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


class Renderer:
    """Offscreen renderer of one home; holds an OpenGL context, so close it (or use it in a ``with``)."""

    def __init__(self, home: Home, width_px: int, height_px: int, vfov_rad: float) -> None:
        self.model = build_model(home, width_px, height_px, vfov_rad)
        self.data = mujoco.MjData(self.model)
        mujoco.mj_forward(self.model, self.data)
        body_instance = np.full(self.model.nbody, -1, dtype=np.int32)
        self._instance_body: dict[int, int] = {}  # instance id -> MuJoCo body id (set_object_offset)
        for obj in home.objects:
            body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, obj.object_id)
            body_instance[body] = obj.instance_id
            self._instance_body[obj.instance_id] = body
        self.geom_instance = body_instance[self.model.geom_bodyid]  # (ngeom,) instance id or -1
        self.width_px, self.height_px = width_px, height_px
        extent = self.model.stat.extent
        self._near_m = float(self.model.vis.map.znear * extent)
        self._far_m = float(self.model.vis.map.zfar * extent)
        self._gl = mujoco.GLContext(width_px, height_px)
        self._gl.make_current()
        self._con = mujoco.MjrContext(self.model, mujoco.mjtFontScale.mjFONTSCALE_100)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._con)
        self._scene = mujoco.MjvScene(self.model, maxgeom=self.model.ngeom + 16)
        flags = mujoco.mjtRndFlag
        for flag in (flags.mjRND_SHADOW, flags.mjRND_REFLECTION, flags.mjRND_SKYBOX, flags.mjRND_FOG,
                     flags.mjRND_HAZE):
            self._scene.flags[flag] = 0
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._camera.fixedcamid = 0
        self._option = mujoco.MjvOption()
        self._perturb = mujoco.MjvPerturb()
        self._viewport = mujoco.MjrRect(0, 0, width_px, height_px)
        self._rgb = np.zeros((height_px, width_px, 3), dtype=np.uint8)
        self._ids = np.zeros((height_px, width_px, 3), dtype=np.uint8)
        self._depth = np.zeros((height_px, width_px), dtype=np.float32)
        self._segment_lut = np.full(1, -1, dtype=np.int32)
        # Frustum culling (module doc): half-angle tangents of the view, with the geoms' own groups kept.
        self._tan_half_v = math.tan(vfov_rad / 2.0)
        self._tan_half_h = self._tan_half_v * width_px / height_px
        self._groups = self.model.geom_group.copy()
        self._visible = np.ones(self.model.ngeom, dtype=bool)
        self._zones = _RoomZones(home, self.model, self.geom_instance) if home.config.layout == "large" else None
        self._option.geomgroup[CULLED_GROUP] = 0
        self._closed = False

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Free the MuJoCo render context and the OpenGL context (safe to call twice).

        The render context is freed with this renderer's own OpenGL context current, and whichever context was
        current before (another renderer's) is current again afterwards: OpenGL object names are per context, so
        freeing them under another renderer's context deletes that renderer's framebuffers (its frames then come
        back stale: the previous frame's colour, a half-updated depth).
        """
        if getattr(self, "_closed", True):
            return
        self._closed = True
        with self._gl.as_current():
            self._con.free()
        self._gl.free()

    def __del__(self) -> None:
        # A renderer nobody closed, collected by the garbage collector at any point of another renderer's work
        # (the ROS identity test saw a stale frame this way), must free its own objects only.
        self.close()

    def set_object_offset(self, instance_id: int, offset_xyz_m: Sequence[float] | np.ndarray) -> None:
        """Shift every geom of an instance by ``offset_xyz_m`` (world frame) from where the home placed it.

        Each object is one MuJoCo body whose geoms are written in world coordinates under a body at the
        origin, so the body position is the offset. ``mj_forward`` refreshes the geom poses used by rendering
        and ``cast_ray``; the geom -> instance table is unchanged (geoms keep their body), and the segmentation
        lookup is rebuilt at the next render. An offset of zero restores the home's placement.
        """
        body = self._instance_body.get(int(instance_id))
        if body is None:
            raise KeyError(f"the rendered home has no instance id {instance_id!r}")
        offset = np.asarray(offset_xyz_m, dtype=np.float64).reshape(-1)
        if offset.shape != (3,) or not np.isfinite(offset).all():
            raise ValueError(f"offset_xyz_m must be 3 finite numbers, got {offset_xyz_m!r}")
        self.model.body_pos[body] = offset
        mujoco.mj_forward(self.model, self.data)
        self._segment_lut = np.full(1, -1, dtype=np.int32)

    def render(self, eye_xyz_m: Sequence[float], yaw_rad: float, tilt_rad: float) -> RenderedView:
        """RGB, depth and instance segmentation from a camera at ``eye_xyz_m`` (world frame)."""
        self._place_camera(eye_xyz_m, yaw_rad, tilt_rad, "render")
        segment, idcolor = mujoco.mjtRndFlag.mjRND_SEGMENT, mujoco.mjtRndFlag.mjRND_IDCOLOR
        self._scene.flags[segment] = self._scene.flags[idcolor] = 0
        mujoco.mjr_render(self._viewport, self._scene, self._con)
        mujoco.mjr_readPixels(self._rgb, self._depth, self._viewport, self._con)
        # OpenGL rows start at the bottom of the image.
        return RenderedView(rgb=self._rgb[::-1].copy(), depth_m=self._linear_depth(self._depth[::-1]),
                            segmentation=self._segmentation_pass())

    def render_segmentation(self, eye_xyz_m: Sequence[float], yaw_rad: float, tilt_rad: float) -> np.ndarray:
        """The instance segmentation of :meth:`render` alone, without drawing the colour and depth pass (about
        half the cost of a frame): what episode generation's frame-coverage tests read."""
        self._place_camera(eye_xyz_m, yaw_rad, tilt_rad, "render_segmentation")
        return self._segmentation_pass()

    def _place_camera(self, eye_xyz_m: Sequence[float], yaw_rad: float, tilt_rad: float, caller: str) -> None:
        """Put the camera at ``eye_xyz_m`` looking along (yaw, tilt), cull and update the scene."""
        if self._closed:
            raise RuntimeError(f"{caller}() on a closed Renderer")
        self._gl.make_current()
        self.data.cam_xpos[0] = np.asarray(eye_xyz_m, dtype=np.float64)
        rotation = camera_rotation(yaw_rad, tilt_rad)
        self.data.cam_xmat[0] = rotation.ravel()
        self._cull(np.asarray(eye_xyz_m, dtype=np.float64), rotation)
        mujoco.mjv_updateScene(self.model, self.data, self._option, self._perturb, self._camera,
                               mujoco.mjtCatBit.mjCAT_ALL, self._scene)

    def _segmentation_pass(self) -> np.ndarray:
        """Draw the updated scene in segment colours and read the instance ids (rows top first)."""
        segment, idcolor = mujoco.mjtRndFlag.mjRND_SEGMENT, mujoco.mjtRndFlag.mjRND_IDCOLOR
        self._scene.flags[segment] = self._scene.flags[idcolor] = 1
        mujoco.mjr_render(self._viewport, self._scene, self._con)
        mujoco.mjr_readPixels(self._ids, None, self._viewport, self._con)
        return self._segmentation(self._ids[::-1])

    def hide_ceilings(self) -> None:
        """Stop drawing the ceilings (a view from above the home: top-down maps)."""
        for geom in range(self.model.ngeom):
            name = mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_GEOM, geom) or ""
            if name.startswith("ceiling_"):
                self._groups[geom] = CULLED_GROUP
        self._visible = np.zeros(0, dtype=bool)  # re-apply the groups at the next render

    def _cull(self, eye: np.ndarray, rotation: np.ndarray) -> None:
        """Move the geoms whose bounding sphere is outside the view frustum to a hidden group."""
        rel = self.data.geom_xpos - eye
        right, up, forward = rotation[:, 0], rotation[:, 1], -rotation[:, 2]
        depth, across, above = rel @ forward, np.abs(rel @ right), np.abs(rel @ up)
        radius = self.model.geom_rbound
        # A sphere is outside a side plane when its centre is more than a radius beyond it: the plane's unit
        # normal makes the distance (across - depth * tan) * cos(half angle).
        cos_h, cos_v = 1.0 / math.hypot(1.0, self._tan_half_h), 1.0 / math.hypot(1.0, self._tan_half_v)
        visible = (depth > -radius) & ((across - depth * self._tan_half_h) * cos_h < radius) \
            & ((above - depth * self._tan_half_v) * cos_v < radius)
        if self._zones is not None:
            visible &= self._zones.visible_geoms(eye, rotation, self._in_frustum)
        if not np.array_equal(visible, self._visible):
            self._visible = visible
            self.model.geom_group[:] = np.where(visible, self._groups, CULLED_GROUP)
            self._segment_lut = np.full(1, -1, dtype=np.int32)  # the scene's geoms change: rebuild the lookup

    def _in_frustum(self, centres: np.ndarray, radii: np.ndarray, eye: np.ndarray, rotation: np.ndarray) -> np.ndarray:
        """Which spheres (centres (N, 3), radii (N,)) reach into the view frustum (the test of ``_cull``)."""
        rel = centres - eye
        right, up, forward = rotation[:, 0], rotation[:, 1], -rotation[:, 2]
        depth, across, above = rel @ forward, np.abs(rel @ right), np.abs(rel @ up)
        cos_h, cos_v = 1.0 / math.hypot(1.0, self._tan_half_h), 1.0 / math.hypot(1.0, self._tan_half_v)
        return np.asarray((depth > -radii) & ((across - depth * self._tan_half_h) * cos_h < radii)
                          & ((above - depth * self._tan_half_v) * cos_v < radii))

    def cast_ray(self, origin_xyz_m: Sequence[float], direction_xyz: Sequence[float]) -> tuple[float, int]:
        """Distance (in units of ``direction_xyz``) to the first surface hit and its instance id (-1 none).

        Geometric ray casting (``mj_ray``) on the same model, independent of the rasteriser; returns (inf, -1)
        when nothing is hit.
        """
        geom = np.full(1, -1, dtype=np.int32)
        distance = mujoco.mj_ray(self.model, self.data, np.asarray(origin_xyz_m, dtype=np.float64),
                                 np.asarray(direction_xyz, dtype=np.float64), None, True, -1, geom)
        if distance < 0.0:
            return math.inf, -1
        return float(distance), int(self.geom_instance[geom[0]])

    def _linear_depth(self, buffer: np.ndarray) -> np.ndarray:
        """Window depth in [0, 1] -> metres along the optical axis (0 where nothing was drawn).

        Inverts the perspective depth mapping of glFrustum: d = (1/n - 1/z) / (1/n - 1/f), so
        z = n f / (f - d (f - n)) (see the OpenGL projection matrix derivation in the glFrustum manual page).
        """
        near, far = self._near_m, self._far_m
        depth = (near * far) / (far - buffer.astype(np.float64) * (far - near))
        depth[buffer >= 1.0] = 0.0
        return depth.astype(np.float32)

    def _segmentation(self, ids_rgb: np.ndarray) -> np.ndarray:
        """Segment colours -> instance ids. MuJoCo paints scene geom k as k + 1, 24-bit little-endian RGB."""
        codes = ids_rgb[..., 0].astype(np.int32) | (ids_rgb[..., 1].astype(np.int32) << 8) \
            | (ids_rgb[..., 2].astype(np.int32) << 16)
        if self._segment_lut.size != self._scene.ngeom + 1:
            self._segment_lut = self._scene_lut()
        return self._segment_lut[np.minimum(codes, self._segment_lut.size - 1)]

    def _scene_lut(self) -> np.ndarray:
        """Instance id of each scene geom's colour code (code 0 is the background)."""
        lut = np.full(self._scene.ngeom + 1, -1, dtype=np.int32)
        for k in range(self._scene.ngeom):
            geom = self._scene.geoms[k]
            if geom.objtype == mujoco.mjtObj.mjOBJ_GEOM:
                lut[geom.segid + 1] = self.geom_instance[geom.objid]
        return lut
