"""What a generated home is made of: rooms, doors, wall boxes, objects (with their primitives or model).

Frames: world, x/y horizontal, z up, metres, floor at z = 0. Object frame: see ``catalogue``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple, Optional, Sequence

from goat_core.errors import SceneGenerationError
from sim_bridge.embedded.catalogue import Axis, Shape
from sim_bridge.embedded.furnishing import ModelRef
from sim_bridge.embedded.home_config import HomeConfig

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
SizeLabel = Literal["small", "medium", "large"]


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
        return add3(self.centre_m, self.half_size_m, -1.0)

    @property
    def max_m(self) -> Vec3:
        return add3(self.centre_m, self.half_size_m, 1.0)


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

        None for everything else: objects on the floor, on top of a receptacle, or on a shelf in sight (the
        large homes' books on a bookshelf, ``home_dressing``). The generator marks hidden objects when it puts
        them there (``ObjectSpec.hidden_in``).
        """
        return obj.hidden_in if obj.receptacle_id is not None else None


class Rect(NamedTuple):
    """An axis-aligned rectangle of the floor plane (footprints, keep-out areas), world frame."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Rect) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def gap_to(self, other: Rect) -> float:
        """Euclidean distance between the rectangles, 0 when they touch or overlap."""
        dx = max(other.x0 - self.x1, self.x0 - other.x1, 0.0)
        dy = max(other.y0 - self.y1, self.y0 - other.y1, 0.0)
        return math.hypot(dx, dy)



def add3(a: Sequence[float], b: Sequence[float], sign: float, scale: float = 1.0) -> Vec3:
    """scale * (a + sign * b), per coordinate."""
    return (scale * (a[0] + sign * b[0]), scale * (a[1] + sign * b[1]), scale * (a[2] + sign * b[2]))


__all__ = ["Box", "Door", "Home", "ObjectSpec", "Part", "Rect", "Room", "SizeLabel", "add3"]
