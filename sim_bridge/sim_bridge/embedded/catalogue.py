"""Object catalogue of the procedural homes: what each category looks like, where it goes, what it is called.

Every category is built from MuJoCo primitives. A recipe gives each part as a box in fractions of the object's
bounding box, in the object frame: x across the width (0 = left, 1 = right), y through the depth (0 = back,
1 = front), z up from the supporting surface (0 = bottom, 1 = top). Objects placed against a wall turn their
back (y = 0) to it. Cylinders and capsules fill the box along their axis with the largest circle that fits
the other two sides; spheres use the smallest side.

Room types, colours and materials are words from ``goat_core.vocabulary``; synonyms are the other names an
episode may use for a category (the agent resolves them through sentence embeddings, never through this file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

from goat_core.errors import SceneGenerationError
from goat_core.vocabulary import COLOURS, MATERIALS, ROOM_TYPES

Shape = Literal["box", "cylinder", "sphere", "capsule"]
Axis = Literal["x", "y", "z"]
# wall: stands on the floor with its back to a wall; floor: stands free on the floor; receptacle: on a top.
Placement = Literal["wall", "floor", "receptacle"]

Vec3 = tuple[float, float, float]


@dataclass(frozen=True)
class PartRecipe:
    """One primitive of a category, as a box in fractions of the object's bounding box (see module doc)."""

    shape: Shape
    lo: Vec3  # min corner, fractions of (width, depth, height)
    hi: Vec3  # max corner, fractions of (width, depth, height)
    axis: Axis = "z"  # long axis of a cylinder or capsule
    trim: bool = False  # painted with the plain trim colour (legs, bases, screens) instead of the texture


@dataclass(frozen=True)
class CategorySpec:
    """One object category of the catalogue."""

    name: str
    room_types: tuple[str, ...]  # rooms it is placed in (goat_core.vocabulary.ROOM_TYPES)
    size_min_m: Vec3  # (width, depth, height) of the smallest instance
    size_max_m: Vec3  # (width, depth, height) of the largest instance
    parts: tuple[PartRecipe, ...]
    placement: Placement
    colours: tuple[str, ...]  # allowed colour names (goat_core.vocabulary.COLOURS)
    materials: tuple[str, ...]  # allowed material names (goat_core.vocabulary.MATERIALS)
    synonyms: tuple[str, ...] = ()
    # Receptacles carry small objects on their top, which is the top of the bounding box (z = height).
    is_receptacle: bool = False
    max_per_room: int = 1
    # Receptacle categories a small object may stand on; empty means any receptacle of the room.
    supports: tuple[str, ...] = ()
    # The piece that makes a room what it is (bed, couch, toilet...): furnished first, before it fills up.
    signature: bool = False

    @property
    def top_height_range_m(self) -> tuple[float, float]:
        """Height range of the top surface small objects stand on (receptacles only)."""
        return self.size_min_m[2], self.size_max_m[2]


def _p(shape: Shape, lo: Vec3, hi: Vec3, axis: Axis = "z", trim: bool = False) -> PartRecipe:
    return PartRecipe(shape=shape, lo=lo, hi=hi, axis=axis, trim=trim)


def _legs(x0: float, x1: float, y0: float, y1: float, top_z: float, leg: float,
          trim: bool = True) -> tuple[PartRecipe, ...]:
    """Four legs with their outer faces on the given rectangle, from the floor up to ``top_z``."""
    return tuple(
        _p("box", (x, y, 0.0), (x + leg, y + leg, top_z), trim=trim)
        for x in (x0, x1 - leg) for y in (y0, y1 - leg)
    )


TABLE: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.92), (1.0, 1.0, 1.0)),
) + _legs(0.04, 0.96, 0.04, 0.96, 0.92, 0.07)
CABINET: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.08), (1.0, 1.0, 1.0)),
    _p("box", (0.03, 0.03, 0.0), (0.97, 0.95, 0.08), trim=True),  # plinth
    _p("box", (0.1, 0.96, 0.78), (0.9, 1.0, 0.84), trim=True),  # drawer handle bar
)
SOFA: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 0.3, 1.0)),  # back
    _p("box", (0.0, 0.2, 0.0), (1.0, 1.0, 0.5)),  # seat
    _p("box", (0.0, 0.2, 0.0), (0.1, 1.0, 0.68)),  # arms
    _p("box", (0.9, 0.2, 0.0), (1.0, 1.0, 0.68)),
)
CHAIR: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.5), (1.0, 1.0, 0.57)),  # seat
    _p("box", (0.0, 0.0, 0.57), (1.0, 0.12, 1.0)),  # back
) + _legs(0.0, 1.0, 0.0, 1.0, 0.5, 0.1)
STOOL: tuple[PartRecipe, ...] = (  # legs in the body colour: they are most of what one sees of a stool
    _p("cylinder", (0.0, 0.0, 0.88), (1.0, 1.0, 1.0)),
) + _legs(0.1, 0.9, 0.1, 0.9, 0.88, 0.12, trim=False)
BED: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.35), trim=True),  # frame
    _p("box", (0.02, 0.05, 0.35), (0.98, 0.99, 0.62)),  # mattress and sheets
    _p("box", (0.0, 0.0, 0.0), (1.0, 0.05, 1.0), trim=True),  # headboard
    _p("capsule", (0.1, 0.07, 0.62), (0.9, 0.2, 0.75), axis="x"),  # pillow
)
LAMP: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.25, 0.25, 0.0), (0.75, 0.75, 0.06), trim=True),  # base
    _p("cylinder", (0.45, 0.45, 0.06), (0.55, 0.55, 0.62), trim=True),  # pole
    _p("cylinder", (0.0, 0.0, 0.6), (1.0, 1.0, 1.0)),  # shade
)
POTTED: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.25, 0.25, 0.0), (0.75, 0.75, 0.3), trim=True),  # pot
    _p("sphere", (0.0, 0.0, 0.25), (1.0, 1.0, 1.0)),  # foliage
)
TREE: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.3, 0.3, 0.0), (0.7, 0.7, 0.25), trim=True),  # pot
    _p("cylinder", (0.46, 0.46, 0.25), (0.54, 0.54, 0.55), trim=True),  # trunk
    _p("sphere", (0.0, 0.0, 0.4), (1.0, 1.0, 1.0)),  # crown
)
SCREEN: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.4, 0.12), (1.0, 0.6, 1.0)),  # screen
    _p("box", (0.35, 0.25, 0.0), (0.65, 0.75, 0.12), trim=True),  # foot
)
BOX: tuple[PartRecipe, ...] = (_p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),)
CYLINDER: tuple[PartRecipe, ...] = (_p("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),)
MUG: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.0, 0.1, 0.0), (0.8, 0.9, 1.0)),
    _p("box", (0.8, 0.4, 0.2), (1.0, 0.6, 0.8)),  # handle
)
BOTTLE: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.68)),
    _p("cylinder", (0.33, 0.33, 0.68), (0.67, 0.67, 1.0)),  # neck
)
VASE: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.72)),
    _p("cylinder", (0.25, 0.25, 0.72), (0.75, 0.75, 1.0)),  # neck
)
LAPTOP: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.1)),  # keyboard half
    _p("box", (0.0, 0.0, 0.1), (1.0, 0.08, 1.0)),  # lid
    _p("box", (0.05, 0.08, 0.18), (0.95, 0.1, 0.94), trim=True),  # display
)
CLOCK: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.2, 0.0), (1.0, 0.8, 1.0)),
    _p("cylinder", (0.15, 0.8, 0.15), (0.85, 0.9, 0.85), axis="y", trim=True),  # dial
)
TEDDY: tuple[PartRecipe, ...] = (
    _p("sphere", (0.1, 0.1, 0.0), (0.9, 0.9, 0.62)),  # body
    _p("sphere", (0.22, 0.22, 0.55), (0.78, 0.78, 0.92)),  # head
    _p("sphere", (0.18, 0.4, 0.82), (0.38, 0.6, 1.0)),  # ears
    _p("sphere", (0.62, 0.4, 0.82), (0.82, 0.6, 1.0)),
)
KETTLE: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.1, 0.1, 0.0), (0.8, 0.9, 0.8)),
    _p("box", (0.4, 0.42, 0.8), (0.5, 0.58, 1.0), trim=True),  # lid knob
    _p("box", (0.8, 0.42, 0.15), (1.0, 0.58, 0.7), trim=True),  # handle
    _p("capsule", (0.0, 0.44, 0.3), (0.12, 0.56, 0.6), trim=True),  # spout
)
APPLIANCE: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    _p("box", (0.06, 0.97, 0.12), (0.7, 1.0, 0.88), trim=True),  # door window
    _p("box", (0.76, 0.97, 0.2), (0.94, 1.0, 0.8), trim=True),  # control panel
)
FRIDGE: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 0.97, 1.0)),
    _p("box", (0.8, 0.97, 0.45), (0.86, 1.0, 0.9), trim=True),  # handles
    _p("box", (0.8, 0.97, 0.1), (0.86, 1.0, 0.38), trim=True),
)
STOVE: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.93)),
    _p("box", (0.0, 0.0, 0.93), (1.0, 0.12, 1.0), trim=True),  # back panel
) + tuple(_p("cylinder", (x, y, 0.93), (x + 0.3, y + 0.3, 0.95), trim=True)
          for x in (0.12, 0.58) for y in (0.2, 0.62))
WASHER: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 0.96, 1.0)),
    _p("cylinder", (0.2, 0.96, 0.2), (0.8, 1.0, 0.75), axis="y", trim=True),  # round door
)
TOILET: tuple[PartRecipe, ...] = (
    _p("box", (0.15, 0.0, 0.0), (0.85, 0.3, 1.0)),  # cistern
    _p("cylinder", (0.1, 0.25, 0.0), (0.9, 1.0, 0.55)),  # bowl
)
BATHTUB: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.12)),
    _p("box", (0.0, 0.0, 0.12), (1.0, 0.1, 1.0)),  # rims
    _p("box", (0.0, 0.9, 0.12), (1.0, 1.0, 1.0)),
    _p("box", (0.0, 0.1, 0.12), (0.08, 0.9, 1.0)),
    _p("box", (0.92, 0.1, 0.12), (1.0, 0.9, 1.0)),
)
WARDROBE: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.03), (1.0, 1.0, 1.0)),
    _p("box", (0.48, 0.97, 0.1), (0.52, 1.0, 0.97), trim=True),  # door gap
    _p("box", (0.4, 0.97, 0.45), (0.44, 1.0, 0.6), trim=True),  # knobs
    _p("box", (0.56, 0.97, 0.45), (0.6, 1.0, 0.6), trim=True),
    _p("box", (0.02, 0.02, 0.0), (0.98, 0.98, 0.03), trim=True),
)
SHELF: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 0.15, 1.0)),  # back panel
    _p("box", (0.0, 0.0, 0.0), (0.06, 1.0, 1.0)),  # sides
    _p("box", (0.94, 0.0, 0.0), (1.0, 1.0, 1.0)),
    _p("box", (0.0, 0.0, 0.95), (1.0, 1.0, 1.0)),  # top
    _p("box", (0.06, 0.15, 0.0), (0.94, 1.0, 0.05), trim=True),
    _p("box", (0.06, 0.15, 0.33), (0.94, 1.0, 0.37), trim=True),  # shelves
    _p("box", (0.06, 0.15, 0.64), (0.94, 1.0, 0.68), trim=True),
)
BENCH: tuple[PartRecipe, ...] = (_p("box", (0.0, 0.0, 0.82), (1.0, 1.0, 1.0)),) + (
    _p("box", (0.04, 0.1, 0.0), (0.12, 0.9, 0.82), trim=True),
    _p("box", (0.88, 0.1, 0.0), (0.96, 0.9, 0.82), trim=True),
)
BASKET: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.85)),
    _p("box", (0.45, 0.0, 0.85), (0.55, 1.0, 1.0), trim=True),  # handle
)
TRASH: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.93)),
    _p("cylinder", (0.0, 0.0, 0.93), (1.0, 1.0, 1.0), trim=True),  # lid
)
PIANO: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 0.55, 1.0)),
    _p("box", (0.0, 0.55, 0.55), (1.0, 1.0, 0.65)),  # key bed
    _p("box", (0.03, 0.6, 0.65), (0.97, 0.95, 0.68), trim=True),  # keys
    _p("box", (0.0, 0.55, 0.0), (0.05, 1.0, 0.55), trim=True),  # cheeks
    _p("box", (0.95, 0.55, 0.0), (1.0, 1.0, 0.55), trim=True),
)
SPEAKER: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 0.9, 1.0)),
    _p("cylinder", (0.15, 0.9, 0.1), (0.85, 1.0, 0.5), axis="y", trim=True),  # woofer
    _p("cylinder", (0.3, 0.9, 0.6), (0.7, 1.0, 0.9), axis="y", trim=True),  # tweeter
)
FRAME: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.45, 0.0), (1.0, 0.6, 1.0)),
    _p("box", (0.12, 0.6, 0.12), (0.88, 0.64, 0.88), trim=True),  # picture
    _p("box", (0.4, 0.0, 0.0), (0.6, 0.45, 0.6), trim=True),  # stand
)
GLOBE: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.25, 0.25, 0.0), (0.75, 0.75, 0.08), trim=True),
    _p("cylinder", (0.46, 0.46, 0.08), (0.54, 0.54, 0.25), trim=True),
    _p("sphere", (0.0, 0.0, 0.22), (1.0, 1.0, 1.0)),
)
JAR: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.82)),
    _p("cylinder", (0.05, 0.05, 0.82), (0.95, 0.95, 1.0), trim=True),  # lid
)
HEADPHONES: tuple[PartRecipe, ...] = (
    _p("capsule", (0.0, 0.3, 0.7), (1.0, 0.7, 1.0), axis="x", trim=True),  # band
    _p("cylinder", (0.0, 0.1, 0.0), (0.3, 0.9, 0.75)),  # cups
    _p("cylinder", (0.7, 0.1, 0.0), (1.0, 0.9, 0.75)),
)
SOAP: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.75)),
    _p("cylinder", (0.38, 0.38, 0.75), (0.62, 0.62, 0.9), trim=True),  # pump
    _p("box", (0.45, 0.45, 0.88), (0.95, 0.55, 1.0), trim=True),  # nozzle
)
TOASTER: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.97)),
    _p("box", (0.15, 0.25, 0.97), (0.85, 0.4, 1.0), trim=True),  # slots
    _p("box", (0.15, 0.6, 0.97), (0.85, 0.75, 1.0), trim=True),
)
CANDLE: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.9)),
    _p("cylinder", (0.45, 0.45, 0.9), (0.55, 0.55, 1.0), trim=True),  # wick
)
OTTOMAN: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.12), (1.0, 1.0, 1.0)),
) + _legs(0.03, 0.97, 0.03, 0.97, 0.12, 0.1)
RACK: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.9), (1.0, 1.0, 1.0)),
    _p("box", (0.0, 0.0, 0.45), (1.0, 1.0, 0.53)),
    _p("box", (0.0, 0.0, 0.0), (0.05, 1.0, 0.9), trim=True),
    _p("box", (0.95, 0.0, 0.0), (1.0, 1.0, 0.9), trim=True),
)
DESK: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.93), (1.0, 1.0, 1.0)),
    _p("box", (0.0, 0.05, 0.0), (0.35, 0.95, 0.93)),  # drawer pedestal
    _p("box", (0.35, 0.95, 0.78), (0.37, 0.97, 0.88), trim=True),  # pedestal handle
    _p("box", (0.92, 0.05, 0.0), (0.98, 0.95, 0.93), trim=True),  # leg panel
)
OFFICE_CHAIR: tuple[PartRecipe, ...] = (
    _p("cylinder", (0.1, 0.1, 0.0), (0.9, 0.9, 0.05), trim=True),  # star base
    _p("cylinder", (0.45, 0.45, 0.05), (0.55, 0.55, 0.47), trim=True),  # column
    _p("box", (0.05, 0.05, 0.47), (0.95, 0.95, 0.55)),  # seat
    _p("box", (0.08, 0.0, 0.55), (0.92, 0.12, 1.0)),  # back
)

_WOOD = ("wooden",)
_FURNITURE_COLOURS = ("brown", "white", "black", "gray")
_SOFT_COLOURS = tuple(COLOURS)

CATALOGUE: tuple[CategorySpec, ...] = (
    # ---- furniture against a wall ----
    CategorySpec("couch", ("living room",), (1.6, 0.8, 0.8), (2.4, 1.0, 0.95), SOFA, "wall", _SOFT_COLOURS,
                 ("fabric", "leather"), ("sofa", "settee", "loveseat"), signature=True),
    CategorySpec("bed", ("bedroom",), (1.0, 1.9, 0.9), (1.7, 2.1, 1.1), BED, "wall",
                 ("white", "blue", "gray", "pink", "green", "yellow", "purple", "red"), ("fabric",),
                 ("mattress", "double bed", "bedstead"), signature=True),
    CategorySpec("nightstand", ("bedroom",), (0.4, 0.35, 0.5), (0.55, 0.45, 0.65), CABINET, "wall",
                 _FURNITURE_COLOURS, _WOOD, ("bedside table", "night table", "bedside cabinet"),
                 is_receptacle=True, max_per_room=2),
    CategorySpec("dresser", ("bedroom",), (0.9, 0.45, 0.75), (1.4, 0.55, 1.0), CABINET, "wall",
                 _FURNITURE_COLOURS, _WOOD, ("chest of drawers", "bureau", "commode"), is_receptacle=True),
    CategorySpec("wardrobe", ("bedroom", "hallway"), (0.9, 0.55, 1.8), (1.6, 0.65, 2.1), WARDROBE, "wall",
                 _FURNITURE_COLOURS, _WOOD, ("closet", "armoire", "clothes cabinet")),
    CategorySpec("bookshelf", ("living room", "office", "bedroom"), (0.8, 0.3, 0.9), (1.4, 0.4, 1.3), SHELF,
                 "wall", _FURNITURE_COLOURS, ("wooden", "metal"), ("bookcase", "shelving unit", "shelf"),
                 is_receptacle=True),
    CategorySpec("tv stand", ("living room", "bedroom"), (1.2, 0.4, 0.45), (1.8, 0.5, 0.6), CABINET, "wall",
                 _FURNITURE_COLOURS, _WOOD, ("media console", "entertainment center", "tv cabinet"),
                 is_receptacle=True),
    CategorySpec("kitchen counter", ("kitchen",), (1.4, 0.6, 0.9), (2.4, 0.65, 0.95), CABINET, "wall",
                 ("white", "gray", "black", "brown", "blue", "green"), ("wooden", "metal"),
                 ("countertop", "worktop", "kitchen cabinet"), is_receptacle=True, signature=True),
    CategorySpec("refrigerator", ("kitchen",), (0.6, 0.6, 1.6), (0.9, 0.75, 1.9), FRIDGE, "wall",
                 ("white", "gray", "black", "red"), ("metal",), ("fridge", "freezer", "icebox")),
    CategorySpec("stove", ("kitchen",), (0.6, 0.6, 0.9), (0.8, 0.65, 0.95), STOVE, "wall",
                 ("white", "gray", "black"), ("metal",), ("oven", "cooker", "range")),
    CategorySpec("toilet", ("bathroom",), (0.4, 0.6, 0.75), (0.45, 0.75, 0.85), TOILET, "wall",
                 ("white", "gray", "black"), ("ceramic",), ("lavatory", "wc", "water closet"),
                 signature=True),
    CategorySpec("bathtub", ("bathroom",), (1.4, 0.7, 0.5), (1.7, 0.8, 0.6), BATHTUB, "wall",
                 ("white", "gray", "blue"), ("ceramic", "plastic"), ("bath", "tub")),
    CategorySpec("bathroom vanity", ("bathroom",), (0.6, 0.45, 0.8), (1.2, 0.55, 0.9), CABINET, "wall",
                 ("white", "brown", "gray", "black"), ("wooden", "ceramic"),
                 ("sink cabinet", "vanity unit", "washstand"), is_receptacle=True),
    CategorySpec("washing machine", ("laundry room", "bathroom"), (0.6, 0.6, 0.85), (0.65, 0.65, 0.9), WASHER,
                 "wall", ("white", "gray"), ("metal",), ("washer", "laundry machine"), is_receptacle=True,
                 signature=True),
    CategorySpec("dryer", ("laundry room",), (0.6, 0.6, 0.85), (0.65, 0.65, 0.9), WASHER, "wall",
                 ("white", "gray", "black"), ("metal",), ("tumble dryer", "clothes dryer")),
    CategorySpec("cabinet", ("kitchen", "dining room", "hallway", "laundry room", "living room", "bathroom"),
                 (0.6, 0.4, 0.7), (1.2, 0.5, 1.0), CABINET, "wall", _FURNITURE_COLOURS, ("wooden", "metal"),
                 ("cupboard", "sideboard", "storage cabinet"), is_receptacle=True),
    CategorySpec("filing cabinet", ("office",), (0.45, 0.6, 0.7), (0.5, 0.7, 1.0), CABINET, "wall",
                 ("gray", "black", "white", "blue"), ("metal",), ("file cabinet", "file drawer"),
                 is_receptacle=True),
    CategorySpec("shoe rack", ("hallway", "bedroom"), (0.6, 0.3, 0.45), (1.0, 0.35, 0.6), RACK, "wall",
                 _FURNITURE_COLOURS, ("wooden", "metal"), ("shoe shelf", "shoe cabinet")),
    CategorySpec("piano", ("living room",), (1.4, 0.55, 1.1), (1.55, 0.65, 1.3), PIANO, "wall",
                 ("black", "white", "brown"), _WOOD, ("upright piano", "pianoforte")),
    CategorySpec("desk", ("office", "bedroom"), (1.0, 0.55, 0.72), (1.6, 0.75, 0.78), DESK, "wall",
                 _FURNITURE_COLOURS, ("wooden", "metal"), ("writing desk", "work table", "workstation"),
                 is_receptacle=True, signature=True),
    # ---- furniture standing free ----
    CategorySpec("dining table", ("dining room", "kitchen"), (1.2, 0.8, 0.72), (2.0, 1.0, 0.78), TABLE,
                 "floor", _FURNITURE_COLOURS, ("wooden", "glass"), ("kitchen table", "table", "dinner table"),
                 is_receptacle=True, signature=True),
    CategorySpec("coffee table", ("living room",), (0.8, 0.5, 0.38), (1.3, 0.7, 0.48), TABLE, "floor",
                 _FURNITURE_COLOURS, ("wooden", "glass"), ("cocktail table", "low table", "center table"),
                 is_receptacle=True),
    CategorySpec("side table", ("living room", "hallway", "bedroom", "dining room"), (0.4, 0.4, 0.5),
                 (0.6, 0.6, 0.7), TABLE, "floor", _FURNITURE_COLOURS, ("wooden", "metal", "glass"),
                 ("end table", "occasional table", "accent table"), is_receptacle=True),
    CategorySpec("kitchen island", ("kitchen",), (1.2, 0.7, 0.88), (1.8, 0.9, 0.95), CABINET, "floor",
                 ("white", "gray", "brown", "blue", "green"), ("wooden",), ("island counter", "island"),
                 is_receptacle=True),
    CategorySpec("chair", ("dining room", "kitchen", "bedroom", "office", "living room"), (0.42, 0.45, 0.85),
                 (0.5, 0.52, 1.0), CHAIR, "floor", _FURNITURE_COLOURS + ("red", "green", "blue"),
                 ("wooden", "metal", "plastic"), ("dining chair", "seat", "side chair"), max_per_room=4),
    CategorySpec("office chair", ("office",), (0.55, 0.55, 0.95), (0.65, 0.65, 1.15), OFFICE_CHAIR, "floor",
                 ("black", "gray", "blue", "red"), ("fabric", "leather", "plastic"),
                 ("desk chair", "swivel chair", "task chair")),
    CategorySpec("armchair", ("living room", "bedroom", "office"), (0.75, 0.75, 0.8), (0.95, 0.9, 1.0), SOFA,
                 "floor", _SOFT_COLOURS, ("fabric", "leather"), ("easy chair", "lounge chair", "recliner"),
                 max_per_room=2),
    CategorySpec("stool", ("kitchen", "laundry room", "bathroom"), (0.35, 0.35, 0.45), (0.42, 0.42, 0.75),
                 STOOL, "floor", _FURNITURE_COLOURS + ("red", "yellow"), ("wooden", "metal", "plastic"),
                 ("bar stool", "footstool", "tabouret"), max_per_room=2),
    CategorySpec("ottoman", ("living room", "bedroom"), (0.5, 0.5, 0.4), (0.8, 0.6, 0.48), OTTOMAN, "floor",
                 _SOFT_COLOURS, ("fabric", "leather"), ("pouf", "footrest", "hassock")),
    CategorySpec("bench", ("hallway", "dining room", "bedroom"), (1.0, 0.35, 0.42), (1.5, 0.45, 0.5), BENCH,
                 "floor", _FURNITURE_COLOURS, ("wooden", "metal"), ("seat bench", "settle")),
    CategorySpec("floor lamp", ("living room", "bedroom", "office"), (0.35, 0.35, 1.4), (0.5, 0.5, 1.8), LAMP,
                 "floor", ("white", "yellow", "orange", "black", "gray", "red"), ("metal", "fabric"),
                 ("standing lamp", "standard lamp", "torchiere")),
    CategorySpec("indoor tree", ("living room", "office", "hallway", "dining room"), (0.5, 0.5, 1.2),
                 (0.8, 0.8, 1.8), TREE, "floor", ("green",), ("plastic", "ceramic"),
                 ("potted tree", "ficus", "large houseplant")),
    CategorySpec("trash can", ("kitchen", "bathroom", "office", "laundry room"), (0.25, 0.25, 0.35),
                 (0.4, 0.4, 0.7), TRASH, "floor", ("gray", "black", "white", "blue", "green"),
                 ("metal", "plastic"),
                 ("garbage can", "waste bin", "dustbin", "trash bin")),
    CategorySpec("laundry basket", ("laundry room", "bathroom", "bedroom"), (0.4, 0.4, 0.45),
                 (0.55, 0.55, 0.6), BASKET, "floor", ("white", "blue", "gray", "brown"),
                 ("plastic", "fabric"), ("hamper", "clothes basket", "laundry hamper")),
    # ---- small objects on receptacles ----
    CategorySpec("mug", ("kitchen", "office", "dining room", "living room"), (0.1, 0.08, 0.09),
                 (0.13, 0.1, 0.12), MUG, "receptacle", _SOFT_COLOURS, ("ceramic",),
                 ("coffee mug", "cup of coffee", "tea mug")),
    CategorySpec("cup", ("kitchen", "dining room", "bathroom"), (0.07, 0.07, 0.09), (0.09, 0.09, 0.13),
                 CYLINDER, "receptacle", _SOFT_COLOURS, ("glass", "plastic", "ceramic"),
                 ("glass", "tumbler", "beaker")),
    CategorySpec("bowl", ("kitchen", "dining room", "living room"), (0.15, 0.15, 0.06), (0.25, 0.25, 0.1),
                 CYLINDER, "receptacle", _SOFT_COLOURS, ("ceramic", "glass", "wooden"),
                 ("dish", "fruit bowl", "mixing bowl")),
    CategorySpec("plate", ("kitchen", "dining room"), (0.2, 0.2, 0.02), (0.28, 0.28, 0.03), CYLINDER,
                 "receptacle", ("white", "blue", "red", "green", "yellow", "black"), ("ceramic",),
                 ("dinner plate", "platter", "saucer")),
    CategorySpec("bottle", ("kitchen", "dining room", "bathroom", "laundry room"), (0.07, 0.07, 0.22),
                 (0.1, 0.1, 0.32), BOTTLE, "receptacle", ("green", "blue", "white", "red", "brown", "orange"),
                 ("glass", "plastic"), ("flask", "water bottle", "wine bottle")),
    CategorySpec("toaster", ("kitchen",), (0.25, 0.16, 0.18), (0.32, 0.2, 0.22), TOASTER, "receptacle",
                 ("white", "gray", "black", "red"), ("metal",), ("toaster oven", "bread toaster"),
                 supports=("kitchen counter", "kitchen island")),
    CategorySpec("microwave", ("kitchen",), (0.45, 0.35, 0.27), (0.55, 0.42, 0.33), APPLIANCE, "receptacle",
                 ("white", "gray", "black"), ("metal",), ("microwave oven", "micro"),
                 supports=("kitchen counter", "kitchen island")),
    CategorySpec("kettle", ("kitchen",), (0.2, 0.15, 0.2), (0.25, 0.18, 0.26), KETTLE, "receptacle",
                 ("white", "gray", "black", "red", "blue"), ("metal", "plastic"),
                 ("teakettle", "water boiler"),
                 supports=("kitchen counter", "kitchen island")),
    CategorySpec("jar", ("kitchen",), (0.1, 0.1, 0.12), (0.14, 0.14, 0.2), JAR, "receptacle",
                 ("white", "orange", "yellow", "red", "green", "brown"), ("glass", "ceramic"),
                 ("canister", "container", "storage jar")),
    CategorySpec("book", ("living room", "bedroom", "office", "hallway"), (0.15, 0.2, 0.03),
                 (0.22, 0.3, 0.06), BOX, "receptacle", _SOFT_COLOURS, ("fabric",),
                 ("novel", "hardcover", "paperback"), max_per_room=4),
    CategorySpec("vase", ("living room", "dining room", "hallway", "bedroom"), (0.12, 0.12, 0.25),
                 (0.2, 0.2, 0.4), VASE, "receptacle", _SOFT_COLOURS, ("ceramic", "glass"),
                 ("urn", "flower vase", "jug")),
    CategorySpec("plant", ("living room", "kitchen", "office", "bathroom", "dining room", "hallway"),
                 (0.18, 0.18, 0.25), (0.3, 0.3, 0.45), POTTED, "receptacle", ("green",),
                 ("ceramic", "plastic"),
                 ("houseplant", "potted plant", "succulent"), max_per_room=2),
    CategorySpec("table lamp", ("living room", "bedroom", "office"), (0.22, 0.22, 0.35), (0.32, 0.32, 0.55),
                 LAMP, "receptacle", ("white", "yellow", "orange", "blue", "red", "black", "green"),
                 ("fabric", "ceramic", "metal"), ("desk lamp", "bedside lamp", "reading lamp")),
    CategorySpec("clock", ("living room", "kitchen", "bedroom", "hallway", "office"), (0.15, 0.07, 0.15),
                 (0.25, 0.1, 0.25), CLOCK, "receptacle", _FURNITURE_COLOURS + ("red", "blue"),
                 ("wooden", "plastic", "metal"), ("alarm clock", "mantel clock", "timepiece")),
    CategorySpec("teddy bear", ("bedroom", "living room"), (0.2, 0.18, 0.25), (0.3, 0.26, 0.38), TEDDY,
                 "receptacle", ("brown", "white", "pink", "yellow", "blue"), ("fabric",),
                 ("stuffed animal", "plush toy", "soft toy")),
    CategorySpec("television", ("living room", "bedroom"), (0.7, 0.22, 0.45), (1.1, 0.3, 0.7), SCREEN,
                 "receptacle", ("black", "gray", "white"), ("plastic",),
                 ("tv", "television set", "flat screen"),
                 supports=("tv stand", "dresser", "cabinet")),
    CategorySpec("monitor", ("office",), (0.45, 0.18, 0.35), (0.6, 0.22, 0.45), SCREEN, "receptacle",
                 ("black", "gray", "white"), ("plastic",), ("computer screen", "display", "computer monitor"),
                 supports=("desk",)),
    CategorySpec("laptop", ("office", "bedroom", "living room"), (0.3, 0.22, 0.2), (0.38, 0.26, 0.24), LAPTOP,
                 "receptacle", ("gray", "black", "white", "blue"), ("metal", "plastic"),
                 ("notebook computer", "computer", "macbook")),
    CategorySpec("keyboard", ("office",), (0.4, 0.13, 0.025), (0.45, 0.16, 0.035), BOX, "receptacle",
                 ("black", "white", "gray"), ("plastic",), ("computer keyboard", "keypad"),
                 supports=("desk",)),
    CategorySpec("globe", ("office", "living room"), (0.25, 0.25, 0.35), (0.32, 0.32, 0.45), GLOBE,
                 "receptacle", ("blue", "green", "yellow"), ("plastic", "metal"),
                 ("world globe", "terrestrial globe")),
    CategorySpec("headphones", ("office", "bedroom"), (0.17, 0.08, 0.18), (0.2, 0.1, 0.21), HEADPHONES,
                 "receptacle", ("black", "white", "red", "blue"), ("plastic", "leather"),
                 ("headset", "earphones", "cans")),
    CategorySpec("speaker", ("living room", "office", "bedroom"), (0.15, 0.15, 0.25), (0.22, 0.2, 0.35),
                 SPEAKER, "receptacle", ("black", "white", "gray", "brown"), ("wooden", "plastic"),
                 ("loudspeaker", "sound box", "bluetooth speaker")),
    CategorySpec("picture frame", ("living room", "bedroom", "hallway", "office"), (0.15, 0.1, 0.2),
                 (0.25, 0.12, 0.3), FRAME, "receptacle", _FURNITURE_COLOURS + ("red", "blue", "yellow"),
                 ("wooden", "metal"), ("photo frame", "photograph", "picture")),
    CategorySpec("candle", ("living room", "dining room", "bathroom", "bedroom"), (0.06, 0.06, 0.1),
                 (0.09, 0.09, 0.2), CANDLE, "receptacle",
                 ("white", "red", "yellow", "purple", "pink", "orange"),
                 ("plastic",), ("taper", "tea light", "wax candle")),
    CategorySpec("remote control", ("living room", "bedroom"), (0.05, 0.17, 0.02), (0.06, 0.22, 0.03), BOX,
                 "receptacle", ("black", "gray", "white"), ("plastic",), ("remote", "tv remote", "clicker")),
    CategorySpec("storage box", ("hallway", "laundry room", "bedroom", "office", "living room"),
                 (0.25, 0.2, 0.15), (0.4, 0.3, 0.25), BOX, "receptacle", _SOFT_COLOURS,
                 ("plastic", "fabric", "wooden"), ("box", "bin", "container box")),
    CategorySpec("basket", ("hallway", "laundry room", "bathroom", "kitchen"), (0.25, 0.25, 0.15),
                 (0.35, 0.35, 0.22), BASKET, "receptacle", ("brown", "white", "yellow", "gray"),
                 ("wooden", "fabric", "plastic"), ("wicker basket", "tray basket", "storage basket")),
    CategorySpec("towel", ("bathroom", "laundry room"), (0.25, 0.2, 0.06), (0.35, 0.3, 0.1), BOX,
                 "receptacle", ("white", "blue", "pink", "green", "yellow", "gray"), ("fabric",),
                 ("bath towel", "hand towel", "washcloth")),
    CategorySpec("soap dispenser", ("bathroom", "kitchen"), (0.07, 0.07, 0.16), (0.09, 0.09, 0.22), SOAP,
                 "receptacle", ("white", "green", "blue", "pink", "yellow"), ("plastic", "glass", "ceramic"),
                 ("soap pump", "hand soap", "lotion dispenser"),
                 supports=("bathroom vanity", "kitchen counter", "cabinet")),
)

CATEGORIES: Mapping[str, CategorySpec] = {spec.name: spec for spec in CATALOGUE}

# ---- PASTURE: uncommon categories and hiding places (used only when HomeConfig asks for them) ----
# Long-tail objects in the spirit of CoW's PASTURE "uncommon" split. They are kept out of CATALOGUE so that the
# default homes, the synonyms the episode generator may use and the ground-truth label set are unchanged; the
# home generator places them only for HomeConfig.uncommon_objects > 0. Their names share no word with a
# CATALOGUE category, so a goal naming one has a single right answer.

RUBBER_DUCK: tuple[PartRecipe, ...] = (
    _p("sphere", (0.0, 0.0, 0.0), (1.0, 0.75, 0.6)),  # body
    _p("sphere", (0.2, 0.45, 0.45), (0.8, 0.95, 1.0)),  # head
    _p("box", (0.4, 0.9, 0.62), (0.6, 1.0, 0.72), trim=True),  # beak
)
HOURGLASS: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.08), trim=True),  # base plate
    _p("sphere", (0.1, 0.1, 0.08), (0.9, 0.9, 0.5)),  # lower bulb
    _p("sphere", (0.1, 0.1, 0.5), (0.9, 0.9, 0.92)),  # upper bulb
    _p("box", (0.0, 0.0, 0.92), (1.0, 1.0, 1.0), trim=True),  # top plate
)
TROPHY: tuple[PartRecipe, ...] = (
    _p("box", (0.15, 0.15, 0.0), (0.85, 0.85, 0.2), trim=True),  # plinth
    _p("cylinder", (0.4, 0.4, 0.2), (0.6, 0.6, 0.5)),  # stem
    _p("cylinder", (0.0, 0.0, 0.5), (1.0, 1.0, 1.0)),  # cup
)
TYPEWRITER: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 0.75, 0.65)),  # body
    _p("box", (0.05, 0.75, 0.0), (0.95, 1.0, 0.3), trim=True),  # keys
    _p("cylinder", (0.0, 0.05, 0.65), (1.0, 0.3, 0.9), axis="x", trim=True),  # platen roller
    _p("box", (0.2, 0.12, 0.85), (0.8, 0.18, 1.0), trim=True),  # sheet of paper
)
METRONOME: tuple[PartRecipe, ...] = (
    _p("box", (0.1, 0.1, 0.0), (0.9, 0.9, 0.85)),  # case
    _p("box", (0.45, 0.9, 0.2), (0.55, 1.0, 1.0), trim=True),  # pendulum arm
)
GRAMOPHONE: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.3)),  # cabinet
    _p("cylinder", (0.05, 0.05, 0.3), (0.95, 0.95, 0.36), trim=True),  # turntable
    _p("box", (0.45, 0.45, 0.36), (0.55, 0.55, 0.6), trim=True),  # tone arm post
    _p("sphere", (0.2, 0.2, 0.5), (1.0, 1.0, 1.0)),  # horn
)
PIGGY_BANK: tuple[PartRecipe, ...] = (
    _p("capsule", (0.1, 0.0, 0.15), (0.9, 1.0, 0.9), axis="y"),  # body
    _p("sphere", (0.2, 0.7, 0.75), (0.4, 0.9, 1.0)),  # ears
    _p("sphere", (0.6, 0.7, 0.75), (0.8, 0.9, 1.0)),
) + _legs(0.2, 0.8, 0.2, 0.8, 0.2, 0.15, trim=False)
ABACUS: tuple[PartRecipe, ...] = (
    _p("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.1), trim=True),  # foot
    _p("box", (0.0, 0.4, 0.1), (0.06, 0.6, 1.0)),  # side posts
    _p("box", (0.94, 0.4, 0.1), (1.0, 0.6, 1.0)),
    _p("box", (0.06, 0.4, 0.9), (0.94, 0.6, 1.0)),  # top bar
) + tuple(_p("capsule", (0.06, 0.3, z), (0.94, 0.7, z + 0.12), axis="x") for z in (0.2, 0.42, 0.64))  # beads

UNCOMMON_CATALOGUE: tuple[CategorySpec, ...] = (
    CategorySpec("rubber duck", ROOM_TYPES, (0.08, 0.1, 0.08), (0.14, 0.16, 0.13), RUBBER_DUCK, "receptacle",
                 ("yellow", "orange", "pink"), ("plastic",), ("bath duck", "toy duck")),
    CategorySpec("hourglass", ROOM_TYPES, (0.08, 0.08, 0.15), (0.12, 0.12, 0.25), HOURGLASS, "receptacle",
                 ("brown", "black", "white"), ("glass", "wooden"), ("sand timer", "sandglass")),
    CategorySpec("trophy", ROOM_TYPES, (0.1, 0.1, 0.2), (0.16, 0.16, 0.35), TROPHY, "receptacle",
                 ("yellow", "gray", "orange"), ("metal",), ("award cup", "prize cup")),
    CategorySpec("typewriter", ROOM_TYPES, (0.3, 0.28, 0.12), (0.4, 0.35, 0.18), TYPEWRITER, "receptacle",
                 ("black", "green", "gray", "red"), ("metal",), ("typing machine",)),
    CategorySpec("metronome", ROOM_TYPES, (0.1, 0.08, 0.18), (0.14, 0.12, 0.25), METRONOME, "receptacle",
                 ("brown", "black"), ("wooden",), ("tempo keeper",)),
    CategorySpec("gramophone", ROOM_TYPES, (0.3, 0.3, 0.35), (0.4, 0.4, 0.5), GRAMOPHONE, "receptacle",
                 ("brown", "black"), ("wooden", "metal"), ("phonograph", "record player")),
    CategorySpec("piggy bank", ROOM_TYPES, (0.1, 0.15, 0.1), (0.14, 0.22, 0.14), PIGGY_BANK, "receptacle",
                 ("pink", "white", "blue"), ("ceramic",), ("money box", "coin bank")),
    CategorySpec("abacus", ROOM_TYPES, (0.25, 0.08, 0.18), (0.35, 0.1, 0.25), ABACUS, "receptacle",
                 ("red", "blue", "brown"), ("wooden",), ("counting frame",)),
)
UNCOMMON_CATEGORIES: Mapping[str, CategorySpec] = {spec.name: spec for spec in UNCOMMON_CATALOGUE}


@dataclass(frozen=True)
class HidingPlace:
    """A compartment of a furniture category where an object is out of sight from most view points."""

    relation: Literal["inside", "under"]  # how a description says where the hidden object is
    lo: Vec3  # min corner of the compartment, fractions of the furniture's box (object frame, see module doc)
    hi: Vec3  # max corner; the hidden object stands on the compartment's floor (z = lo[2])


# Compartments open on one side only (the front, or the top of a tub), read off the recipes above: the back of
# the bottom shelf of a bookshelf (SHELF), of the lower deck of a shoe rack (RACK) and of the knee space under a
# desk (DESK, between the drawer pedestal and the leg panel), and the basin of a bathtub (BATHTUB). The back
# halves keep the object out of the sight lines of a head camera except from a narrow cone in front.
HIDING_PLACES: Mapping[str, HidingPlace] = {
    "bookshelf": HidingPlace("inside", (0.06, 0.15, 0.05), (0.94, 0.6, 0.33)),
    "shoe rack": HidingPlace("inside", (0.05, 0.0, 0.0), (0.95, 0.6, 0.45)),
    "desk": HidingPlace("under", (0.37, 0.0, 0.0), (0.92, 0.5, 0.93)),
    "bathtub": HidingPlace("inside", (0.08, 0.1, 0.12), (0.92, 0.9, 1.0)),
}


def category(name: str) -> CategorySpec:
    """The catalogue entry of ``name``; SceneGenerationError names an unknown category."""
    try:
        return CATEGORIES[name]
    except KeyError:
        raise SceneGenerationError(f"unknown object category {name!r}; the catalogue has {len(CATEGORIES)}"
                                   " categories (see sim_bridge.embedded.catalogue.CATALOGUE)") from None


def synonyms(name: str) -> tuple[str, ...]:
    """Other names an episode may use for category ``name``."""
    return category(name).synonyms


def validate_catalogue(entries: tuple[CategorySpec, ...] = CATALOGUE) -> None:
    """Check every entry against the shared vocabularies and its own geometry; raise on the first bad one."""
    for spec in entries:
        _check_words(spec)
        _check_geometry(spec)


def validate_pasture_catalogue() -> None:
    """Check the uncommon categories and the hiding places; raise on the first bad one."""
    validate_catalogue(UNCOMMON_CATALOGUE)
    clashes = [spec.name for spec in UNCOMMON_CATALOGUE
               if set(spec.name.split()) & {w for name in CATEGORIES for w in name.split()}]
    if clashes:
        raise SceneGenerationError(f"uncommon categories {clashes} share a word with a catalogue category")
    for name, place in HIDING_PLACES.items():
        if name not in CATEGORIES:
            raise SceneGenerationError(f"hiding place {name!r} is not a catalogue category")
        if any(not 0.0 <= lo < hi <= 1.0 for lo, hi in zip(place.lo, place.hi, strict=True)):
            raise SceneGenerationError(f"hiding place {name!r} has a compartment outside its box: {place}")


def _check_words(spec: CategorySpec) -> None:
    unknown = [w for w in spec.room_types if w not in ROOM_TYPES]
    unknown += [w for w in spec.colours if w not in COLOURS]
    unknown += [w for w in spec.materials if w not in MATERIALS]
    unknown += [w for w in spec.supports if w not in CATEGORIES or not CATEGORIES[w].is_receptacle]
    if unknown:
        raise SceneGenerationError(f"category {spec.name!r} uses words outside the vocabularies: {unknown}")
    if not (spec.room_types and spec.colours and spec.materials):
        raise SceneGenerationError(f"category {spec.name!r} needs room types, colours and materials")


def _check_geometry(spec: CategorySpec) -> None:
    if any(not 0.0 < lo <= hi for lo, hi in zip(spec.size_min_m, spec.size_max_m, strict=True)):
        raise SceneGenerationError(
            f"category {spec.name!r} has a bad size range {spec.size_min_m} .. {spec.size_max_m}")
    for part in spec.parts:
        if any(not 0.0 <= lo < hi <= 1.0 for lo, hi in zip(part.lo, part.hi, strict=True)):
            raise SceneGenerationError(f"category {spec.name!r} has a part outside its box: {part}")
    if spec.is_receptacle and spec.placement == "receptacle":
        raise SceneGenerationError(f"category {spec.name!r} cannot both be a receptacle and stand on one")
    if spec.max_per_room < 1:
        raise SceneGenerationError(f"category {spec.name!r} has max_per_room {spec.max_per_room}, need >= 1")
