"""Settings of the home generator (``HomeConfig``) and the home kinds selectable by name (``--homes``).

The small homes (``HomeConfig()``) are a grid of rectangular rooms; the large homes (``large_home_config``) use the
floor plans of ``floorplan`` and are furnished densely. See ``home`` for how a home is generated from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Optional

from goat_core.errors import SceneGenerationError
from sim_bridge.embedded.catalogue import UNCOMMON_CATALOGUE
from sim_bridge.embedded.furniture_library import DEFAULT_LIBRARIES, LIBRARY_DIR

STRETCH_BASE_RADIUS_M = 0.17  # Hello Robot Stretch base radius, as in the GOAT-Bench agent

Vec2 = tuple[float, float]
FurnitureKind = Literal["furnished", "primitive"]
FURNITURE_KINDS: tuple[str, ...] = ("furnished", "primitive")
Layout = Literal["grid", "large"]
LAYOUTS: tuple[str, ...] = ("grid", "large")
DOOR_END_MARGIN_M = 0.3  # a door gap keeps this much wall on both sides of it (no doors in corners)


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
    # Small objects also on the shelves of bookshelves, on beds, sofas, benches... (home_dressing.SURFACES; the
    # large homes); False: on receptacle tops only (the small homes).
    dress_surfaces: bool = False
    # A furnished home builds the small objects (receptacle-placed categories) no model stands for of primitives
    # instead of leaving them out (the large homes: boxes, baskets, towels, frames, pillows...); False: a
    # furnished home has models only.
    primitive_small_objects: bool = False

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
LARGE_HOME_FIELDS: dict[str, object] = {"layout": "large", "small_objects_per_receptacle": (8, 16),
                                        "furniture_per_room": (1, 14), "extra_doors": 0, "max_per_room_factor": 2,
                                        "floor_clutter_m2_per_object": 0.8, "dress_surfaces": True,
                                        "primitive_small_objects": True}
# Small objects a large home also leaves on the floor (toys, boxes, plants...): the catalogue's receptacle-placed
# categories that stand on floors in homes.
FLOOR_CLUTTER = ("storage box", "basket", "plant", "book", "teddy bear", "vase", "speaker", "towel", "bowl",
                 "shoes", "bag")
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


def home_kind(config: HomeConfig) -> str:
    """The name in HOME_KINDS of a config's homes ("small" for the small homes of primitives), with what differs
    from that kind's settings in parentheses: a small home's rooms, other furniture libraries."""
    large = config.layout == "large"
    kind = ("large-furnished" if large else "furnished") if config.furniture == "furnished" \
        else ("large" if large else "small")
    details = [] if large or config.num_rooms == HomeConfig().num_rooms else [f"{config.num_rooms} rooms"]
    if config.furniture == "furnished" and config.furniture_libraries != DEFAULT_LIBRARIES:
        details.append("+".join(config.furniture_libraries))
    return kind + (f" ({', '.join(details)})" if details else "")


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


__all__ = ["DOOR_END_MARGIN_M", "FLOOR_CLUTTER", "FURNITURE_KINDS", "FURNITURE_TAG_PATTERN", "FurnitureKind",
           "HOME_KINDS", "HomeConfig", "LARGE_FURNITURE_M2_PER_PIECE", "LARGE_HOME_FIELDS", "LAYOUTS", "Layout",
           "OPEN_EDGE_KEEPOUT_M", "STRETCH_BASE_RADIUS_M", "furniture_fields", "furniture_tag", "home_config_for",
           "home_kind", "large_home_config", "with_furniture_of"]
