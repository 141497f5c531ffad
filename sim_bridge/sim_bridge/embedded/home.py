"""Procedural homes from a seed: a floor plan of rooms joined by doors, furniture, and small objects on top.

The floor plan is a grid of rectangular rooms (2 rows up to 6 rooms, 3 rows above), filled row by row, with
column widths and row depths drawn from ``room_side_range_m``. Walls are boxes centred on the grid lines; a
random spanning tree of the room adjacency graph (plus ``extra_doors`` more edges) gets a door gap each, so
every room is reachable. Furniture stands against a wall or free, axis-aligned (yaw in quarter turns, so the
bounding boxes are exact footprints), keeps ``furniture_gap_m`` (more than the robot's diameter) from every
other piece and from the walls it does not touch, and stays out of a corridor in front of each door: together
these keep the free floor of a room in one piece. Small objects stand on receptacle tops.

Furniture (``HomeConfig.furniture``): "furnished" makes every object a real 3D model of the
Sweet Home 3D libraries (``furnishing``: the model's own size, colour and support surface; categories no model
stands for are left out, see ``furniture_categories``); "primitive" builds each object of MuJoCo primitives
after the recipes of ``catalogue`` (the default, until the agent's numbers on furnished homes reach those on
primitive ones; ``--homes furnished`` on the command line). A furnished home needs Debian's
``sweethome3d-furniture``; without it, generating one raises FurnitureLibraryError naming the package (never a
silent fall back to primitives).

Frames: world, x/y horizontal, z up, metres, floor at z = 0. Object frame: see ``catalogue``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple, Optional, Sequence

import numpy as np

from goat_core.errors import SceneGenerationError
from goat_core.vocabulary import ROOM_TYPES
from sim_bridge.embedded import floorplan
from sim_bridge.embedded.catalogue import (
    CATALOGUE,
    HIDING_PLACES,
    UNCOMMON_CATALOGUE,
    Axis,
    CategorySpec,
    HidingPlace,
    Shape,
)
from sim_bridge.embedded.furnishing import Furnisher, ModelChoice, ModelRef, Surface, furnisher, uncommon_catalogue
from sim_bridge.embedded.furniture_library import DEFAULT_LIBRARIES, LIBRARY_DIR

STRETCH_BASE_RADIUS_M = 0.17  # Hello Robot Stretch base radius, as in the GOAT-Bench agent

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
SizeLabel = Literal["small", "medium", "large"]
FurnitureKind = Literal["furnished", "primitive"]
FURNITURE_KINDS: tuple[str, ...] = ("furnished", "primitive")
Layout = Literal["grid", "large"]
LAYOUTS: tuple[str, ...] = ("grid", "large")

MAX_ROOMS_IN_TWO_ROWS = 6
DOOR_END_MARGIN_M = 0.3  # a door gap keeps this much wall on both sides of it (no doors in corners)
DOOR_CORRIDOR_PAD_M = 0.1  # the clear corridor in front of a door is this much wider than the door, each side
WALL_CONTACT_GAP_M = 0.01  # furniture "against" a wall stands this far off it, so their faces never coincide
SURFACE_MARGIN_M = 0.03  # small objects keep this far from the edge of a top and from each other
PLACEMENT_ATTEMPTS = 60  # poses tried per piece of furniture
ROOM_ATTEMPTS = 8  # times a room is refurnished from scratch before giving up
CORNER_PROBABILITY = 0.3  # share of wall furniture pushed into a corner instead of keeping the gap
CORE_ROOM_TYPES = ("living room", "kitchen", "bedroom")  # every home has these before any other type
# Random streams of the optional PASTURE additions, separate from the main one so that a home with them is the
# default home of the same seed plus the added objects (numbered after the others).
HIDDEN_STREAM = 1
UNCOMMON_STREAM = 2
HIDDEN_PER_PLACE = 2  # hidden objects one hiding place holds at most


@dataclass(frozen=True)
class HomeConfig:
    """Settings of the home generator (one default each)."""

    num_rooms: int = 5
    room_side_range_m: Vec2 = (3.0, 5.0)  # room width and depth are drawn uniformly from this range
    door_width_m: float = 1.0
    wall_height_m: float = 2.5
    wall_thickness_m: float = 0.1
    furniture_per_room: tuple[int, int] = (2, 5)  # inclusive range; fewer than the minimum raises
    small_objects_per_receptacle: tuple[int, int] = (1, 3)  # inclusive range; as many as fit the top
    robot_radius_m: float = STRETCH_BASE_RADIUS_M
    furniture_gap_m: float = 0.5  # free space between furniture pieces, and to walls they do not touch
    door_clearance_m: float = 1.0  # depth of the clear corridor kept in front of each door, both sides
    extra_doors: int = 1  # doors beyond the spanning tree (loops in the room graph), as many as fit
    # PASTURE additions (0 = none, the default homes). Hidden objects: small objects put in a hiding place of
    # the furniture (catalogue.HIDING_PLACES: inside a bookshelf, under a desk...), up to HIDDEN_PER_PLACE per
    # piece, as many as fit; they alternate between a category the home has nowhere else and one it also has
    # in sight.
    hidden_objects: int = 0
    # Uncommon objects: one of each of that many distinct catalogue.UNCOMMON_CATALOGUE categories, on
    # receptacle tops, as many as fit.
    uncommon_objects: int = 0
    # "furnished": real models of the Sweet Home 3D libraries below (module doc); "primitive": MuJoCo primitives.
    furniture: FurnitureKind = "primitive"
    furniture_libraries: tuple[str, ...] = DEFAULT_LIBRARIES  # .sh3f file stems in furniture_dir
    furniture_dir: str = LIBRARY_DIR
    # "grid": num_rooms rectangular rooms in a grid (the small homes); "large": a real-scale home of 8-16 rooms
    # along a hallway (floorplan; num_rooms is not used), furnished as densely as its rooms allow.
    layout: Layout = "grid"
    # Each category may appear this many times its catalogue max_per_room in one room (large homes: look-alikes).
    max_per_room_factor: int = 1
    # Small objects (FLOOR_CLUTTER categories) standing on the floor, one per this much floor area (m²) at
    # most; 0 = none (the small homes).
    floor_clutter_m2_per_object: float = 0.0

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise SceneGenerationError(f"HomeConfig.layout must be one of {LAYOUTS}, got {self.layout!r}")
        if self.furniture not in FURNITURE_KINDS:
            raise SceneGenerationError(f"HomeConfig.furniture must be one of {FURNITURE_KINDS}, got "
                                       f"{self.furniture!r}")
        if not self.furniture_libraries or not all(isinstance(n, str) and n for n in self.furniture_libraries):
            raise SceneGenerationError(f"HomeConfig.furniture_libraries must name at least one library, got "
                                       f"{self.furniture_libraries!r}")
        _check_positive("robot_radius_m", self.robot_radius_m, above=0.0)
        _check_int_range("num_rooms", self.num_rooms, 3, 9)
        shortest_wall_m = self.door_width_m + 2.0 * DOOR_END_MARGIN_M + self.wall_thickness_m
        _check_range_pair("room_side_range_m", self.room_side_range_m, shortest_wall_m)
        _check_positive("door_width_m", self.door_width_m, above=2.0 * self.robot_radius_m)
        _check_positive("wall_height_m", self.wall_height_m, above=0.0)
        _check_positive("wall_thickness_m", self.wall_thickness_m, above=0.0)
        _check_positive("furniture_gap_m", self.furniture_gap_m, above=2.0 * self.robot_radius_m)
        _check_positive("door_clearance_m", self.door_clearance_m, above=2.0 * self.robot_radius_m)
        _check_count_pair("furniture_per_room", self.furniture_per_room)
        _check_count_pair("small_objects_per_receptacle", self.small_objects_per_receptacle)
        _check_int_range("extra_doors", self.extra_doors, 0, 64)
        _check_int_range("max_per_room_factor", self.max_per_room_factor, 1, 8)
        if not (math.isfinite(self.floor_clutter_m2_per_object) and self.floor_clutter_m2_per_object >= 0.0):
            raise SceneGenerationError(f"HomeConfig.floor_clutter_m2_per_object must be a finite number >= 0, got "
                                       f"{self.floor_clutter_m2_per_object!r}")
        _check_int_range("hidden_objects", self.hidden_objects, 0, 32)
        _check_int_range("uncommon_objects", self.uncommon_objects, 0, len(UNCOMMON_CATALOGUE))


# The furniture part of a scene id (episodes.scene_id_for): nothing for primitive homes (so episode files written
# before furnished homes existed rebuild the same homes), "_furnished" (the default libraries), or "_f" + the
# library names joined by "+".
FURNITURE_TAG_PATTERN = r"(?P<furniture>_furnished|_f[A-Za-z0-9.+-]+)?"


def furniture_tag(config: HomeConfig) -> str:
    """The scene-id suffix naming a config's furniture (see FURNITURE_TAG_PATTERN)."""
    if config.furniture == "primitive":
        return ""
    if config.furniture_libraries == DEFAULT_LIBRARIES:
        return "_furnished"
    return "_f" + "+".join(config.furniture_libraries)


def furniture_fields(tag: Optional[str], base: Optional[HomeConfig] = None) -> dict[str, object]:
    """HomeConfig fields of a scene-id suffix written by :func:`furniture_tag` (the library folder of ``base``)."""
    base = base if base is not None else HomeConfig()
    if not tag:
        return {"furniture": "primitive", "furniture_dir": base.furniture_dir}
    libraries = DEFAULT_LIBRARIES if tag == "_furnished" else tuple(tag[2:].split("+"))
    return {"furniture": "furnished", "furniture_libraries": libraries, "furniture_dir": base.furniture_dir}


# The settings of the large homes (--homes large): the floor plans of ``floorplan``, more pieces of furniture per
# room (as many as its area allows, see LARGE_FURNITURE_M2_PER_PIECE) and more small objects on each top.
LARGE_HOME_FIELDS: dict[str, object] = {"layout": "large", "small_objects_per_receptacle": (4, 10),
                                        "furniture_per_room": (1, 14), "extra_doors": 0, "max_per_room_factor": 2,
                                        "floor_clutter_m2_per_object": 0.8}
# Small objects a large home also leaves on the floor (toys, boxes, plants...): the catalogue's receptacle-placed
# categories that stand on floors in homes.
FLOOR_CLUTTER = ("storage box", "basket", "plant", "book", "teddy bear", "vase", "speaker", "towel", "bowl")
LARGE_FURNITURE_M2_PER_PIECE = 2.0  # a large home's room asks for up to one piece of furniture per this much floor
OPEN_EDGE_KEEPOUT_M = 0.6  # furniture keeps this far from the open side of a room of an open-plan space


def large_home_config(furniture: FurnitureKind = "primitive", **fields: object) -> HomeConfig:
    """The HomeConfig of the large homes with the given furniture settings."""
    return HomeConfig(furniture=furniture, **{**LARGE_HOME_FIELDS, **fields})  # type: ignore[arg-type]


# The homes selectable by name (goat-nav --homes): the small homes of primitives (also "primitive", today's
# default) or of models ("furnished"), and the large homes of primitives or of models.
HOME_KINDS: tuple[str, ...] = ("primitive", "furnished", "small", "large", "large-furnished")


def home_config_for(kind: str) -> HomeConfig:
    """The HomeConfig of a home kind of HOME_KINDS."""
    if kind in ("primitive", "furnished"):
        return HomeConfig(furniture=kind)  # type: ignore[arg-type]
    if kind == "small":
        return HomeConfig()
    if kind == "large":
        return large_home_config("primitive")
    if kind == "large-furnished":
        return large_home_config("furnished")
    raise SceneGenerationError(f"homes must be one of {HOME_KINDS}, got {kind!r}")


def with_furniture_of(config: HomeConfig, **fields: object) -> HomeConfig:
    """A HomeConfig of ``fields`` that keeps the furniture settings of ``config``."""
    return HomeConfig(furniture=config.furniture, furniture_libraries=config.furniture_libraries,
                      furniture_dir=config.furniture_dir, **fields)  # type: ignore[arg-type]


def _check_int_range(name: str, value: object, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise SceneGenerationError(f"HomeConfig.{name} must be an integer in [{lo}, {hi}], got {value!r}")


def _check_positive(name: str, value: float, above: float) -> None:
    if not (math.isfinite(value) and value > above):
        raise SceneGenerationError(f"HomeConfig.{name} must be a finite number > {above:g}, got {value!r}")


def _check_range_pair(name: str, value: Vec2, minimum: float) -> None:
    if len(value) != 2 or not (math.isfinite(value[0]) and math.isfinite(value[1])) \
            or not minimum <= value[0] <= value[1]:
        raise SceneGenerationError(
            f"HomeConfig.{name} must be (lo, hi) with {minimum:g} <= lo <= hi (a door and its margins must "
            f"fit a wall), got {value!r}")


def _check_count_pair(name: str, value: tuple[int, int]) -> None:
    if len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value) \
            or not 0 <= value[0] <= value[1]:
        raise SceneGenerationError(
            f"HomeConfig.{name} must be integers (lo, hi) with 0 <= lo <= hi, got {value!r}")


@dataclass(frozen=True)
class Room:
    room_id: int
    room_type: str
    min_xy_m: Vec2  # interior corner (inside the walls), world frame; of the main rectangle
    max_xy_m: Vec2
    # Further rectangles (min, max) of a non-rectangular room (large homes: an L-shaped room); none by default.
    extra_rects: tuple[tuple[Vec2, Vec2], ...] = ()

    @property
    def rects(self) -> tuple[tuple[Vec2, Vec2], ...]:
        """Every rectangle of the room, the main one first."""
        return ((self.min_xy_m, self.max_xy_m),) + self.extra_rects

    @property
    def area_m2(self) -> float:
        return sum((hi[0] - lo[0]) * (hi[1] - lo[1]) for lo, hi in self.rects)

    def contains(self, xy_m: Sequence[float]) -> bool:
        return any(lo[0] <= xy_m[0] <= hi[0] and lo[1] <= xy_m[1] <= hi[1] for lo, hi in self.rects)


@dataclass(frozen=True)
class Door:
    room_ids: tuple[int, int]
    centre_xy_m: Vec2  # centre of the gap, on the wall's centre line
    width_m: float
    axis: Axis  # world axis the wall (and the gap) runs along: "x" or "y"


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in the world frame (walls)."""

    centre_m: Vec3
    half_size_m: Vec3

    @property
    def min_m(self) -> Vec3:
        return _add(self.centre_m, self.half_size_m, -1.0)

    @property
    def max_m(self) -> Vec3:
        return _add(self.centre_m, self.half_size_m, 1.0)


@dataclass(frozen=True)
class Part:
    """One primitive of an object in the world frame; its box is axis-aligned (yaws are quarter turns)."""

    shape: Shape
    centre_m: Vec3
    half_size_m: Vec3  # half extents of the part's box; the primitive is inscribed in it (see catalogue)
    axis: Axis  # world axis of a cylinder or capsule
    trim: bool  # plain trim colour instead of the instance texture


@dataclass(frozen=True)
class ObjectSpec:
    """One object instance of a home."""

    object_id: str  # "obj_007"
    instance_id: int  # >= 1, the id in segmentation images
    category: str
    colour: str  # goat_core.vocabulary.COLOURS name; the texture's dominant colour
    material: str
    size_label: SizeLabel  # relative to the size range of its category
    room_id: int
    room_type: str
    receptacle_id: Optional[str]  # the object it stands on, None on the floor
    position_m: Vec3  # bounding box centre, world frame
    yaw_rad: float  # heading of the object's front (+y of its frame is the front, see catalogue)
    bbox_min_m: Vec3
    bbox_max_m: Vec3
    is_receptacle: bool
    parts: tuple[Part, ...]  # primitives of a primitive home; () for a model
    model: Optional[ModelRef] = None  # the 3D model of a furnished home (furnishing), None for primitives
    hidden_in: Optional[str] = None  # "inside" / "under" its receptacle for a hidden object (PASTURE), else None


@dataclass(frozen=True)
class Home:
    seed: int
    config: HomeConfig
    rooms: tuple[Room, ...]
    doors: tuple[Door, ...]
    walls: tuple[Box, ...]
    objects: tuple[ObjectSpec, ...]

    @property
    def bounds_min_xy_m(self) -> Vec2:
        return (min(w.min_m[0] for w in self.walls), min(w.min_m[1] for w in self.walls))

    @property
    def bounds_max_xy_m(self) -> Vec2:
        return (max(w.max_m[0] for w in self.walls), max(w.max_m[1] for w in self.walls))

    def room_at(self, xy_m: Sequence[float]) -> Optional[Room]:
        """The room whose interior holds the point, None in walls and outside."""
        return next((room for room in self.rooms if room.contains(xy_m)), None)

    def object(self, object_id: str) -> ObjectSpec:
        for obj in self.objects:
            if obj.object_id == object_id:
                return obj
        raise SceneGenerationError(f"home {self.seed} has no object {object_id!r}")

    def model_credits(self) -> list[dict[str, str]]:
        """One row per 3D model the home uses (library, model id, name, creator, licence), sorted, no repeats."""
        rows = {(o.model.library, o.model.model_id): {"library": o.model.library, "model_id": o.model.model_id,
                                                      "name": o.model.name, "creator": o.model.creator,
                                                      "licence": o.model.licence}
                for o in self.objects if o.model is not None}
        return [rows[k] for k in sorted(rows)]

    def hidden_relation(self, obj: ObjectSpec) -> Optional[str]:
        """"inside" or "under" for an object in a hiding place of its receptacle (HomeConfig.hidden_objects).

        None for everything else: objects on the floor or on top of a receptacle.
        """
        if obj.receptacle_id is None:
            return None
        holder = self.object(obj.receptacle_id)
        if holder.model is not None:  # a model's support surface may lie below its top (shelves): ask the object
            return obj.hidden_in
        place = HIDING_PLACES.get(holder.category)
        below_top = obj.bbox_min_m[2] < holder.bbox_max_m[2] - 1e-6
        return place.relation if place is not None and below_top else None


class _Rect(NamedTuple):
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: _Rect) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def gap_to(self, other: _Rect) -> float:
        """Euclidean distance between the rectangles, 0 when they touch or overlap."""
        dx = max(other.x0 - self.x1, self.x0 - other.x1, 0.0)
        dy = max(other.y0 - self.y1, self.y0 - other.y1, 0.0)
        return math.hypot(dx, dy)


@dataclass(frozen=True)
class _Placed:
    """An object placed but not yet numbered."""

    spec: CategorySpec
    footprint: _Rect
    z0_m: float
    size_m: Vec3
    quarter_turns: int
    scale: float  # position in the category's size range, 0 = smallest
    choice: Optional[ModelChoice] = None  # the model of a furnished home

    @property
    def top_m(self) -> float:
        """Height small objects stand at: the model's support surface, or the top of a primitive box."""
        return self.z0_m + (self.choice.support_m if self.choice is not None else self.size_m[2])


class _Furniture(NamedTuple):
    """A numbered piece of furniture with what placing it knew (for the optional PASTURE additions)."""

    room: Room
    placed: _Placed
    spec: ObjectSpec


class _Plan(NamedTuple):
    cells: list[tuple[int, int]]  # (row, col) of each room
    xs: np.ndarray  # (cols + 1,) grid line x
    ys: np.ndarray  # (rows + 1,) grid line y


def generate_home(seed: int, config: HomeConfig = HomeConfig()) -> Home:
    """A furnished home; the same seed and config give the same home."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SceneGenerationError(f"home seed must be a non-negative integer, got {seed!r}")
    fur = furnisher(config.furniture_libraries, config.furniture_dir) if config.furniture == "furnished" else None
    rng = np.random.default_rng(seed)
    open_keepouts: dict[int, list[_Rect]] = {}
    if config.layout == "large":
        rooms, doors, walls, open_keepouts = _large_plan(rng, config)
    else:
        plan = _floor_plan(rng, config)
        rooms = _rooms(rng, plan, config)
        doors = _doors(rng, plan, config)
        walls = _walls(plan, doors, config)
    objects: list[ObjectSpec] = []
    pieces: list[_Furniture] = []
    used: Counter[str] = Counter()  # model keys of a furnished home: a second instance looks unlike the first
    for room in rooms:
        keepouts = _door_corridors(room, doors, config) + open_keepouts.get(room.room_id, [])
        furniture = _furnish_room(rng, room, keepouts, _room_config(room, config), fur, used)
        used.update(_model_keys(furniture))
        if config.floor_clutter_m2_per_object > 0.0:
            clutter = _floor_clutter(rng, room, keepouts, furniture, config, fur, used)
            used.update(_model_keys(clutter))
            furniture = furniture + clutter
        for piece in furniture:
            receptacle = _number(rng, piece, room, None, len(objects) + 1, fur)
            objects.append(receptacle)
            pieces.append(_Furniture(room, piece, receptacle))
            if piece.spec.is_receptacle:
                dressed = _dress_receptacle(rng, piece, room, config, fur, used)
                used.update(_model_keys(dressed))
                for small in dressed:
                    objects.append(_number(rng, small, room, receptacle.object_id, len(objects) + 1, fur))
    if config.hidden_objects:
        _hide_objects(np.random.default_rng([seed, HIDDEN_STREAM]), pieces, objects, config.hidden_objects, fur)
    if config.uncommon_objects:
        _add_uncommon(np.random.default_rng([seed, UNCOMMON_STREAM]), pieces, objects, config.uncommon_objects,
                      fur)
    return Home(seed=seed, config=config, rooms=tuple(rooms), doors=tuple(doors), walls=tuple(walls),
                objects=tuple(objects))


# ---------------------------------------------------------------- floor plan


def _room_config(room: Room, config: HomeConfig) -> HomeConfig:
    """The settings one room is furnished with: a large home's rooms ask for furniture by area (closets and
    hallways may stay empty)."""
    if config.layout != "large":
        return config
    lo, hi = config.furniture_per_room
    wanted = max(lo, min(hi, round(room.area_m2 / LARGE_FURNITURE_M2_PER_PIECE)))
    minimum = 0 if room.room_type in ("closet", "hallway") or not any(
        room.room_type in c.room_types for c in CATALOGUE) else lo
    return replace(config, furniture_per_room=(minimum, wanted))


def _large_plan(rng: np.random.Generator, config: HomeConfig) \
        -> tuple[list[Room], list[Door], list[Box], dict[int, list[_Rect]]]:
    """Rooms, doors and walls of a floor plan of ``floorplan``, and per room the strips along its open sides
    (towards rooms of the same open-plan space) that furniture keeps clear of."""
    plan = floorplan.generate_floor_plan(rng)
    half_t, h = config.wall_thickness_m / 2.0, config.wall_height_m
    rooms = []
    for i, plan_room in enumerate(plan.rooms):
        main = floorplan.main_cell(plan, i)
        extras = tuple(((c.x0 + half_t, c.y0 + half_t), (c.x1 - half_t, c.y1 - half_t))
                       for c in plan.cells_of(i) if c is not main)
        rooms.append(Room(room_id=i, room_type=plan_room.room_type, min_xy_m=(main.x0 + half_t, main.y0 + half_t),
                          max_xy_m=(main.x1 - half_t, main.y1 - half_t), extra_rects=extras))
    doors = []
    for a, b in plan.door_pairs:
        seg, pos = floorplan.door_position(rng, plan, a, b, config.door_width_m, DOOR_END_MARGIN_M + half_t)
        centre = (pos, seg.at) if seg.axis == "x" else (seg.at, pos)
        doors.append(Door((a, b), centre, config.door_width_m, seg.axis))  # type: ignore[arg-type]
    walls = []
    for seg in floorplan.wall_segments(plan):
        gaps = [d.centre_xy_m[0 if seg.axis == "x" else 1] for d in doors if d.axis == seg.axis
                and abs(d.centre_xy_m[1 if seg.axis == "x" else 0] - seg.at) < 1e-9
                and seg.lo < d.centre_xy_m[0 if seg.axis == "x" else 1] < seg.hi]
        for s0, s1 in _cut(seg.lo - half_t, seg.hi + half_t, gaps, config.door_width_m):
            if seg.axis == "x":
                walls.append(Box(((s0 + s1) / 2, seg.at, h / 2), ((s1 - s0) / 2, half_t, h / 2)))
            else:
                walls.append(Box((seg.at, (s0 + s1) / 2, h / 2), (half_t, (s1 - s0) / 2, h / 2)))
    keepouts: dict[int, list[_Rect]] = {}
    d = OPEN_EDGE_KEEPOUT_M + half_t
    for i, cell in enumerate(plan.cells):
        for j, other in enumerate(plan.cells):
            if i == j or not plan.is_open(cell.room, other.room):
                continue
            for seg in floorplan.shared_segments_of_cells(cell, other):
                strip = _Rect(seg.lo, seg.at - d, seg.hi, seg.at + d) if seg.axis == "x" else \
                    _Rect(seg.at - d, seg.lo, seg.at + d, seg.hi)
                keepouts.setdefault(cell.room, []).append(strip)
    return rooms, doors, walls, keepouts


def _floor_plan(rng: np.random.Generator, config: HomeConfig) -> _Plan:
    rows = 2 if config.num_rooms <= MAX_ROOMS_IN_TWO_ROWS else 3
    cols = math.ceil(config.num_rooms / rows)
    lo, hi = config.room_side_range_m
    xs = np.concatenate([[0.0], np.cumsum(rng.uniform(lo, hi, cols))])
    ys = np.concatenate([[0.0], np.cumsum(rng.uniform(lo, hi, rows))])
    cells = [(r, c) for r in range(rows) for c in range(cols)][: config.num_rooms]
    return _Plan(cells=cells, xs=xs, ys=ys)


def _rooms(rng: np.random.Generator, plan: _Plan, config: HomeConfig) -> list[Room]:
    others = [t for t in ROOM_TYPES if t not in CORE_ROOM_TYPES]
    n = len(plan.cells)
    # More rooms than room types: the extra ones are further bedrooms (homes have several).
    chosen = (list(CORE_ROOM_TYPES) + [others[i] for i in rng.permutation(len(others))]
              + ["bedroom"] * max(0, n - len(ROOM_TYPES)))[:n]
    types = [chosen[i] for i in rng.permutation(n)]
    half_t = config.wall_thickness_m / 2.0
    return [
        Room(room_id=i, room_type=types[i],
             min_xy_m=(float(plan.xs[c]) + half_t, float(plan.ys[r]) + half_t),
             max_xy_m=(float(plan.xs[c + 1]) - half_t, float(plan.ys[r + 1]) - half_t))
        for i, (r, c) in enumerate(plan.cells)
    ]


def _adjacent_pairs(cells: list[tuple[int, int]]) -> list[tuple[int, int]]:
    index = {cell: i for i, cell in enumerate(cells)}
    pairs = []
    for i, (r, c) in enumerate(cells):
        for neighbour in ((r, c + 1), (r + 1, c)):
            if neighbour in index:
                pairs.append((i, index[neighbour]))
    return pairs


def _door_pairs(rng: np.random.Generator, cells: list[tuple[int, int]], extra: int) -> list[tuple[int, int]]:
    """A random spanning tree of the adjacency graph (Prim's algorithm, random edges) plus extra edges."""
    pairs = _adjacent_pairs(cells)
    visited = {int(rng.integers(len(cells)))}
    tree: list[tuple[int, int]] = []
    while len(visited) < len(cells):
        crossing = [p for p in pairs if (p[0] in visited) != (p[1] in visited)]
        pick = crossing[int(rng.integers(len(crossing)))]
        tree.append(pick)
        visited.update(pick)
    rest = [p for p in pairs if p not in tree]
    return tree + [rest[i] for i in rng.permutation(len(rest))[:extra]]


def _doors(rng: np.random.Generator, plan: _Plan, config: HomeConfig) -> list[Door]:
    doors = []
    margin = config.wall_thickness_m / 2.0 + DOOR_END_MARGIN_M + config.door_width_m / 2.0
    for a, b in _door_pairs(rng, plan.cells, config.extra_doors):
        (ra, ca), (rb, cb) = plan.cells[a], plan.cells[b]
        if ra == rb:  # side by side: the wall is the vertical grid line between their columns
            y = rng.uniform(plan.ys[ra] + margin, plan.ys[ra + 1] - margin)
            doors.append(Door((a, b), (float(plan.xs[cb]), float(y)), config.door_width_m, "y"))
        else:  # one above the other: the horizontal grid line between their rows
            x = rng.uniform(plan.xs[ca] + margin, plan.xs[ca + 1] - margin)
            doors.append(Door((a, b), (float(x), float(plan.ys[rb])), config.door_width_m, "x"))
    return doors


def _walls(plan: _Plan, doors: list[Door], config: HomeConfig) -> list[Box]:
    """Wall boxes on every grid segment that bounds a room, cut at doors; ends overlap to close corners."""
    occupied = set(plan.cells)
    t, h = config.wall_thickness_m, config.wall_height_m
    walls: list[Box] = []
    for i, y in enumerate(plan.ys):
        for c in range(len(plan.xs) - 1):
            if (i - 1, c) in occupied or (i, c) in occupied:
                gaps = [d.centre_xy_m[0] for d in doors if d.axis == "x" and abs(d.centre_xy_m[1] - y) < 1e-9
                        and plan.xs[c] < d.centre_xy_m[0] < plan.xs[c + 1]]
                for s0, s1 in _cut(plan.xs[c] - t / 2, plan.xs[c + 1] + t / 2, gaps, config.door_width_m):
                    walls.append(Box(((s0 + s1) / 2, float(y), h / 2), ((s1 - s0) / 2, t / 2, h / 2)))
    for c, x in enumerate(plan.xs):
        for r in range(len(plan.ys) - 1):
            if (r, c - 1) in occupied or (r, c) in occupied:
                gaps = [d.centre_xy_m[1] for d in doors if d.axis == "y" and abs(d.centre_xy_m[0] - x) < 1e-9
                        and plan.ys[r] < d.centre_xy_m[1] < plan.ys[r + 1]]
                for s0, s1 in _cut(plan.ys[r] - t / 2, plan.ys[r + 1] + t / 2, gaps, config.door_width_m):
                    walls.append(Box((float(x), (s0 + s1) / 2, h / 2), (t / 2, (s1 - s0) / 2, h / 2)))
    return walls


def _cut(start: float, end: float, gap_centres: list[float], gap_width: float) -> list[Vec2]:
    """The pieces of [start, end] left after removing a gap of ``gap_width`` around each centre."""
    pieces = []
    for centre in sorted(gap_centres):
        pieces.append((float(start), centre - gap_width / 2))
        start = centre + gap_width / 2
    pieces.append((float(start), float(end)))
    return [(a, b) for a, b in pieces if b - a > 1e-6]


def _door_corridors(room: Room, doors: list[Door], config: HomeConfig) -> list[_Rect]:
    """The part of the room in front of each of its doors that furniture must leave free."""
    interior = _Rect(room.min_xy_m[0], room.min_xy_m[1], room.max_xy_m[0], room.max_xy_m[1])
    half_w = config.door_width_m / 2.0 + DOOR_CORRIDOR_PAD_M
    depth = config.door_clearance_m + config.wall_thickness_m / 2.0
    corridors = []
    for door in doors:
        if room.room_id not in door.room_ids:
            continue
        x, y = door.centre_xy_m
        rect = _Rect(x - half_w, y - depth, x + half_w, y + depth) if door.axis == "x" else \
            _Rect(x - depth, y - half_w, x + depth, y + half_w)
        corridors.append(_Rect(max(rect.x0, interior.x0), max(rect.y0, interior.y0),
                               min(rect.x1, interior.x1), min(rect.y1, interior.y1)))
    return corridors


# ---------------------------------------------------------------- furniture


def _model_keys(placed: Sequence[_Placed]) -> list[str]:
    return [p.choice.ref.key for p in placed if p.choice is not None]


def _fresh(pool: list[CategorySpec], fur: Optional[Furnisher], used: Counter[str]) -> list[CategorySpec]:
    """A furnished home's categories with a model it does not use yet, when there are any: identical models
    in one home can only be told apart by their room or neighbours, which descriptions and image goals then
    hinge on; the whole pool otherwise (and always for primitive homes)."""
    if fur is None:
        return pool
    return [c for c in pool if fur.has_unused(c.name, used)] or pool


def _furnish_room(rng: np.random.Generator, room: Room, keepouts: list[_Rect],
                  config: HomeConfig, fur: Optional[Furnisher], used: Counter[str]) -> list[_Placed]:
    """Greedy placement of the drawn number of pieces; the whole room is redrawn when too few fit."""
    lo, hi = config.furniture_per_room
    allowed = [c for c in CATALOGUE if c.placement != "receptacle" and room.room_type in c.room_types
               and (fur is None or fur.has(c.name))]
    placed: list[_Placed] = []
    for _ in range(ROOM_ATTEMPTS):
        wanted = int(rng.integers(lo, hi + 1))
        placed = []
        for _ in range(wanted):
            piece = _place_one_piece(rng, room, keepouts, placed, allowed, config, fur,
                                     used + Counter(_model_keys(placed)))
            if piece is not None:
                placed.append(piece)
        if len(placed) >= lo:
            return placed
    w, d = room.max_xy_m[0] - room.min_xy_m[0], room.max_xy_m[1] - room.min_xy_m[1]
    raise SceneGenerationError(
        f"room {room.room_id} ({room.room_type}, {w:.1f} x {d:.1f} m) fits only {len(placed)} pieces of "
        f"furniture but HomeConfig.furniture_per_room asks for at least {lo}; lower furniture_per_room "
        "or furniture_gap_m, or raise room_side_range_m")


def _place_one_piece(rng: np.random.Generator, room: Room, keepouts: list[_Rect], placed: list[_Placed],
                     allowed: list[CategorySpec], config: HomeConfig,
                     fur: Optional[Furnisher], used: Counter[str]) -> Optional[_Placed]:
    """Try categories and poses until one fits.

    The room's signature piece goes first while the room is empty enough, then a receptacle so that small
    objects have a place; only then anything allowed.
    """
    preferred = None
    if not any(p.spec.signature for p in placed):
        preferred = [c for c in allowed if c.signature]
    if not preferred and not any(p.spec.is_receptacle for p in placed):
        preferred = [c for c in allowed if c.is_receptacle]
    for attempt in range(PLACEMENT_ATTEMPTS):
        pool = [c for c in allowed if sum(p.spec is c for p in placed) < c.max_per_room * config.max_per_room_factor]
        if preferred and attempt < PLACEMENT_ATTEMPTS // 2:
            pool = preferred
        if not pool:
            return None
        pool = _fresh(pool, fur, used)
        spec = pool[int(rng.integers(len(pool)))]
        size, scale, choice = _draw(rng, spec, fur, used)
        quarter, footprint = _floor_pose(rng, spec, size, room, config)
        if footprint is None or any(footprint.overlaps(k) for k in keepouts):
            continue
        if all(footprint.gap_to(p.footprint) >= config.furniture_gap_m for p in placed):
            return _Placed(spec, footprint, 0.0, size, quarter, scale, choice)
    return None


def _draw(rng: np.random.Generator, spec: CategorySpec, fur: Optional[Furnisher],
          used: Optional[Counter[str]] = None) -> tuple[Vec3, float, Optional[ModelChoice]]:
    """Size, position in the size range and model of a new object: a model of a furnished home keeps its own
    size (one the home uses least, see ``Furnisher.choose``); a primitive object's size is drawn uniformly from
    its category's range."""
    if fur is not None:
        choice = fur.choose(rng, spec, used if used is not None else Counter())
        return choice.size_m, choice.scale, choice
    scale = float(rng.uniform())
    return _size(spec, scale), scale, None


def _size(spec: CategorySpec, scale: float) -> Vec3:
    lo, hi = np.asarray(spec.size_min_m), np.asarray(spec.size_max_m)
    w, d, h = lo + scale * (hi - lo)
    return float(w), float(d), float(h)


# Wall side -> quarter turns that put the object's back (its -y) against that wall.
_WALL_QUARTERS = {"min_y": 0, "max_y": 2, "min_x": 3, "max_x": 1}


def _floor_pose(rng: np.random.Generator, spec: CategorySpec, size: Vec3, room: Room,
                config: HomeConfig) -> tuple[int, Optional[_Rect]]:
    """Quarter turns and footprint of a floor object in the room, or None when it cannot fit."""
    if spec.placement == "wall":
        side = ("min_y", "max_y", "min_x", "max_x")[int(rng.integers(4))]
        quarter = _WALL_QUARTERS[side]
    else:
        side, quarter = "", int(rng.integers(4))
    hx, hy = (size[1] / 2, size[0] / 2) if quarter % 2 else (size[0] / 2, size[1] / 2)
    (x_lo, y_lo), (x_hi, y_hi) = room.min_xy_m, room.max_xy_m
    gap = config.furniture_gap_m
    x: Optional[float]
    y: Optional[float]
    if side in ("min_y", "max_y"):
        x = _along_wall(rng, x_lo, x_hi, hx, gap)
        y = y_lo + WALL_CONTACT_GAP_M + hy if side == "min_y" else y_hi - WALL_CONTACT_GAP_M - hy
    elif side in ("min_x", "max_x"):
        y = _along_wall(rng, y_lo, y_hi, hy, gap)
        x = x_lo + WALL_CONTACT_GAP_M + hx if side == "min_x" else x_hi - WALL_CONTACT_GAP_M - hx
    else:
        x = _uniform_or_none(rng, x_lo + gap + hx, x_hi - gap - hx)
        y = _uniform_or_none(rng, y_lo + gap + hy, y_hi - gap - hy)
    if x is None or y is None or x - hx < x_lo or x + hx > x_hi or y - hy < y_lo or y + hy > y_hi:
        return quarter, None
    return quarter, _Rect(x - hx, y - hy, x + hx, y + hy)


def _along_wall(rng: np.random.Generator, lo: float, hi: float, half: float, gap: float) -> Optional[float]:
    """Centre along a wall: in a corner, or keeping ``gap`` to both side walls."""
    if rng.uniform() < CORNER_PROBABILITY:
        return lo + WALL_CONTACT_GAP_M + half if rng.uniform() < 0.5 else hi - WALL_CONTACT_GAP_M - half
    return _uniform_or_none(rng, lo + gap + half, hi - gap - half)


def _uniform_or_none(rng: np.random.Generator, lo: float, hi: float) -> Optional[float]:
    return float(rng.uniform(lo, hi)) if lo <= hi else None


def _clutter_pose(rng: np.random.Generator, area: tuple[Vec2, Vec2], furniture: list[_Placed], hx: float,
                  hy: float, gap: float) -> tuple[Optional[float], Optional[float], Optional[_Placed]]:
    """Centre of a floor object of half sizes (hx, hy) in ``area``: against one of its walls, free (``gap`` from
    them), or against a piece of furniture (and ``gap`` from the walls); None when it does not fit. Also the piece
    it leans on."""
    (x_lo, y_lo), (x_hi, y_hi) = area
    side = int(rng.integers(7))
    c = WALL_CONTACT_GAP_M
    x = _uniform_or_none(rng, x_lo + gap + hx, x_hi - gap - hx)
    y = _uniform_or_none(rng, y_lo + gap + hy, y_hi - gap - hy)
    if side < 4:
        x, y = [(x, y_lo + c + hy), (x, y_hi - c - hy), (x_lo + c + hx, y), (x_hi - c - hx, y)][side]
        return x, y, None
    if side == 4 or not furniture:
        return x, y, None
    leaning = furniture[int(rng.integers(len(furniture)))]
    f, face = leaning.footprint, int(rng.integers(4))
    if face < 2:
        x = float(rng.uniform(f.x0 + hx, max(f.x0 + hx, f.x1 - hx)))
        y = f.y0 - c - hy if face == 0 else f.y1 + c + hy
    else:
        y = float(rng.uniform(f.y0 + hy, max(f.y0 + hy, f.y1 - hy)))
        x = f.x0 - c - hx if face == 2 else f.x1 + c + hx
    if not (x_lo + gap + hx <= x <= x_hi - gap - hx and y_lo + gap + hy <= y <= y_hi - gap - hy):
        return None, None, None
    return x, y, leaning


def _floor_clutter(rng: np.random.Generator, room: Room, keepouts: list[_Rect], furniture: list[_Placed],
                  config: HomeConfig, fur: Optional[Furnisher], used: Counter[str]) -> list[_Placed]:
    """Small objects on the floor of any rectangle of the room, up to one per
    ``floor_clutter_m2_per_object``. Each stays out of door corridors and open sides and keeps
    ``furniture_gap_m`` (more than the robot's diameter) from every other floor object but the one piece of
    furniture it may lean on, and either stands against a wall (then touching no furniture) or keeps that gap from
    the walls too: passages narrow but the free floor stays in one piece."""
    names = set(FLOOR_CLUTTER)
    allowed = [c for c in CATALOGUE if c.name in names and (fur is None or fur.has(c.name))]
    in_room = [c for c in allowed if room.room_type in c.room_types]
    allowed = in_room or [c for c in allowed if c.name in ("storage box", "basket")]
    wanted = int(room.area_m2 / config.floor_clutter_m2_per_object)
    gap = config.furniture_gap_m
    placed: list[_Placed] = []
    rects = room.rects
    for _ in range(wanted * 4):
        if len(placed) >= wanted or not allowed:
            break
        so_far = used + Counter(_model_keys(placed))
        spec = allowed[int(rng.integers(len(allowed)))]
        size, scale, choice = _draw(rng, spec, fur, so_far)
        quarter = int(rng.integers(4))
        hx, hy = (size[1] / 2, size[0] / 2) if quarter % 2 else (size[0] / 2, size[1] / 2)
        x, y, leaning = _clutter_pose(rng, rects[int(rng.integers(len(rects)))], furniture, hx, hy, gap)
        if x is None or y is None:
            continue
        rect = _Rect(x - hx, y - hy, x + hx, y + hy)
        if any(rect.overlaps(k) for k in keepouts) or not room.contains((x, y)):
            continue
        # Touching the piece it leans on (one obstacle with it), the robot's passage from every other one.
        if all(p is leaning or rect.gap_to(p.footprint) >= gap for p in furniture + placed):
            placed.append(_Placed(spec, rect, 0.0, size, quarter, scale, choice))
    return placed


# ---------------------------------------------------------------- small objects


def _dress_receptacle(rng: np.random.Generator, receptacle: _Placed, room: Room,
                      config: HomeConfig, fur: Optional[Furnisher], used: Counter[str]) -> list[_Placed]:
    """Small objects on the receptacle's top, as many of the drawn count as fit without touching.

    On a model, an object must also rest on its support surface and fit under whatever is above it.
    """
    lo, hi = config.small_objects_per_receptacle
    wanted = int(rng.integers(lo, hi + 1))
    allowed = [c for c in CATALOGUE if c.placement == "receptacle" and room.room_type in c.room_types
               and (not c.supports or receptacle.spec.name in c.supports) and (fur is None or fur.has(c.name))]
    top = receptacle.footprint
    m = SURFACE_MARGIN_M
    placed: list[_Placed] = []
    for _ in range(wanted * 10):
        if len(placed) == wanted or not allowed:
            break
        so_far = used + Counter(_model_keys(placed))
        fresh = _fresh(allowed, fur, so_far)
        spec = fresh[int(rng.integers(len(fresh)))]
        size, scale, choice = _draw(rng, spec, fur, so_far)
        quarter = int(rng.integers(4))
        hx, hy = (size[1] / 2, size[0] / 2) if quarter % 2 else (size[0] / 2, size[1] / 2)
        x = _uniform_or_none(rng, top.x0 + m + hx, top.x1 - m - hx)
        y = _uniform_or_none(rng, top.y0 + m + hy, top.y1 - m - hy)
        if x is None or y is None:
            continue
        rect = _Rect(x - hx, y - hy, x + hx, y + hy)
        if receptacle.choice is not None and fur is not None \
                and not _rests_on(fur.surface(receptacle.choice), receptacle, rect, size[2]):
            continue
        if all(rect.gap_to(p.footprint) >= m for p in placed):
            placed.append(_Placed(spec, rect, receptacle.top_m, size, quarter, scale, choice))
    return placed


def _rests_on(surface: Surface, receptacle: _Placed, rect: _Rect, height_m: float) -> bool:
    """True when a world rectangle on a model receptacle lies on ``surface`` with ``height_m`` free above."""
    f = receptacle.footprint
    cx, cy = (f.x0 + f.x1) / 2.0, (f.y0 + f.y1) / 2.0
    back = (4 - receptacle.quarter_turns) % 4  # world -> object frame
    corners = [_quarter_turn(x - cx, y - cy, back) for x in (rect.x0, rect.x1) for y in (rect.y0, rect.y1)]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return surface.fits((min(xs), min(ys)), (max(xs), max(ys)), height_m)


# ---------------------------------------------------------------- PASTURE additions


def _compartment(piece: _Placed, place: HidingPlace) -> tuple[_Rect, float, float]:
    """World footprint, floor height and ceiling height of a hiding place of a placed piece."""
    w, d, h = piece.size_m
    f = piece.footprint
    cx, cy = (f.x0 + f.x1) / 2.0, (f.y0 + f.y1) / 2.0
    corners = [_quarter_turn((fx - 0.5) * w, (fy - 0.5) * d, piece.quarter_turns)
               for fx in (place.lo[0], place.hi[0]) for fy in (place.lo[1], place.hi[1])]
    xs, ys = [cx + c[0] for c in corners], [cy + c[1] for c in corners]
    rect = _Rect(min(xs), min(ys), max(xs), max(ys))
    return rect, piece.z0_m + place.lo[2] * h, piece.z0_m + place.hi[2] * h


def _fit_small(rng: np.random.Generator, spec: CategorySpec, area: _Rect, z0_m: float, max_height_m: float,
               taken: Sequence[_Rect], fur: Optional[Furnisher],
               support: Optional[tuple[Surface, _Placed]] = None) -> Optional[_Placed]:
    """A pose of ``spec`` in ``area`` (margins kept, clear of ``taken``) no taller than the space, or None.

    ``support``: a surface of a model and the piece it belongs to; the object must rest on it and fit under it.
    """
    m = SURFACE_MARGIN_M
    for _ in range(10):
        size, scale, choice = _draw(rng, spec, fur)
        quarter = int(rng.integers(4))
        hx, hy = (size[1] / 2, size[0] / 2) if quarter % 2 else (size[0] / 2, size[1] / 2)
        x = _uniform_or_none(rng, area.x0 + m + hx, area.x1 - m - hx)
        y = _uniform_or_none(rng, area.y0 + m + hy, area.y1 - m - hy)
        if x is None or y is None or size[2] > max_height_m - m:
            continue
        rect = _Rect(x - hx, y - hy, x + hx, y + hy)
        if support is not None and not _rests_on(support[0], support[1], rect, size[2]):
            continue
        if all(rect.gap_to(other) >= m for other in taken):
            return _Placed(spec, rect, z0_m, size, quarter, scale, choice)
    return None


def _hide_objects(rng: np.random.Generator, pieces: Sequence[_Furniture], objects: list[ObjectSpec],
                  wanted: int, fur: Optional[Furnisher]) -> None:
    """Append up to ``wanted`` small objects in the hiding places of the furniture, up to two per piece.

    Even-numbered ones take a category the home has nowhere else (PASTURE "hidden": only the hidden instance
    exists), odd-numbered ones a category it already shows elsewhere (PASTURE "hidden + distractors").
    """
    places = [p for p in pieces if p.placed.spec.name in HIDING_PLACES]
    shown = {o.category for o in objects}
    hidden: set[str] = set()  # categories hidden so far: each at most once
    for k in rng.permutation(len(places)):
        piece = places[int(k)]
        place = HIDING_PLACES[piece.placed.spec.name]
        area, z0, z1 = _compartment(piece.placed, place)
        support: Optional[tuple[Surface, _Placed]] = None
        if fur is not None and piece.placed.choice is not None:  # the model's own floor in the compartment
            surface = fur.compartment_surface(piece.placed.choice, place.lo, place.hi)
            if surface is None:
                continue
            support, z0, z1 = (surface, piece.placed), piece.placed.z0_m + surface.support_m, math.inf
        taken: list[_Rect] = []
        while len(hidden) < wanted and len(taken) < HIDDEN_PER_PLACE:
            want_shown = len(hidden) % 2 == 1
            pool = [c for c in CATALOGUE if c.placement == "receptacle" and c.name not in hidden
                    and (c.name in shown) == want_shown and (fur is None or fur.has(c.name))]
            pool = [c for c in pool if piece.room.room_type in c.room_types] or pool
            small = next((s for j in rng.permutation(len(pool))
                          if (s := _fit_small(rng, pool[int(j)], area, z0, z1 - z0, taken, fur, support))
                          is not None), None)
            if small is None:
                break
            objects.append(replace(_number(rng, small, piece.room, piece.spec.object_id, len(objects) + 1, fur),
                                   hidden_in=place.relation))
            hidden.add(small.spec.name)
            taken.append(small.footprint)


def _add_uncommon(rng: np.random.Generator, pieces: Sequence[_Furniture], objects: list[ObjectSpec],
                  wanted: int, fur: Optional[Furnisher]) -> None:
    """Append one object of each of up to ``wanted`` uncommon categories, on receptacle tops with room."""
    tops = [p for p in pieces if p.placed.spec.is_receptacle]
    if not tops:
        return
    catalogue = UNCOMMON_CATALOGUE if fur is None else uncommon_catalogue(fur)
    for k in rng.permutation(len(catalogue))[:wanted]:
        spec = catalogue[int(k)]
        for j in rng.permutation(len(tops)):
            piece = tops[int(j)]
            top_z = piece.placed.top_m
            taken = [_Rect(o.bbox_min_m[0], o.bbox_min_m[1], o.bbox_max_m[0], o.bbox_max_m[1]) for o in objects
                     if o.receptacle_id == piece.spec.object_id and abs(o.bbox_min_m[2] - top_z) < 1e-6]
            on_model = (fur.surface(piece.placed.choice), piece.placed) \
                if fur is not None and piece.placed.choice is not None else None
            small = _fit_small(rng, spec, piece.placed.footprint, top_z, math.inf, taken, fur, on_model)
            if small is not None:
                objects.append(_number(rng, small, piece.room, piece.spec.object_id, len(objects) + 1, fur))
                break


# ---------------------------------------------------------------- object specs


def _number(rng: np.random.Generator, piece: _Placed, room: Room, receptacle_id: Optional[str],
            instance_id: int, fur: Optional[Furnisher] = None) -> ObjectSpec:
    spec = piece.spec
    f = piece.footprint
    lo = (f.x0, f.y0, piece.z0_m)
    hi = (f.x1, f.y1, piece.z0_m + piece.size_m[2])
    centre = _add(lo, hi, 1.0, 0.5)
    yaw = math.atan2(math.sin(piece.quarter_turns * math.pi / 2), math.cos(piece.quarter_turns * math.pi / 2))
    label: SizeLabel = "small" if piece.scale < 1 / 3 else "medium" if piece.scale < 2 / 3 else "large"
    if piece.choice is not None and fur is not None:  # a model: its own looks, no primitives
        colour, material = fur.appearance(piece.choice, spec, small=receptacle_id is not None)
        parts: tuple[Part, ...] = ()
        model: Optional[ModelRef] = piece.choice.ref
    else:
        colour = str(spec.colours[int(rng.integers(len(spec.colours)))])
        material = str(spec.materials[int(rng.integers(len(spec.materials)))])
        parts, model = _world_parts(spec, piece.size_m, centre, piece.z0_m, piece.quarter_turns), None
    return ObjectSpec(
        object_id=f"obj_{instance_id:03d}", instance_id=instance_id, category=spec.name, colour=colour,
        material=material, size_label=label, room_id=room.room_id, room_type=room.room_type,
        receptacle_id=receptacle_id, position_m=centre, yaw_rad=yaw, bbox_min_m=lo, bbox_max_m=hi,
        is_receptacle=spec.is_receptacle, parts=parts, model=model,
    )


def _world_parts(spec: CategorySpec, size: Vec3, centre: Vec3, z0: float, quarter: int) -> tuple[Part, ...]:
    """The recipe's parts scaled to ``size``, turned by quarter turns about z and moved to ``centre``."""
    parts = []
    for recipe in spec.parts:
        mid = [((lo + hi) / 2 - 0.5) * s for lo, hi, s in zip(recipe.lo, recipe.hi, size, strict=True)]
        half = [(hi - lo) / 2 * s for lo, hi, s in zip(recipe.lo, recipe.hi, size, strict=True)]
        x, y = _quarter_turn(mid[0], mid[1], quarter)
        hx, hy = (half[1], half[0]) if quarter % 2 else (half[0], half[1])
        axis: Axis = recipe.axis
        if quarter % 2 and axis != "z":
            axis = "y" if axis == "x" else "x"
        z = z0 + (recipe.lo[2] + recipe.hi[2]) / 2 * size[2]
        parts.append(Part(recipe.shape, (centre[0] + x, centre[1] + y, z), (hx, hy, half[2]), axis,
                          recipe.trim))
    return tuple(parts)


def _quarter_turn(x: float, y: float, quarter: int) -> Vec2:
    """Rotate (x, y) counter-clockwise by ``quarter`` right angles, exactly."""
    for _ in range(quarter % 4):
        x, y = -y, x
    return x, y


def _add(a: Sequence[float], b: Sequence[float], sign: float, scale: float = 1.0) -> Vec3:
    return (scale * (a[0] + sign * b[0]), scale * (a[1] + sign * b[1]), scale * (a[2] + sign * b[2]))
