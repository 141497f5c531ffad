"""Object recipes of the procedural homes: each category's look as MuJoCo primitives, and the catalogue's types.

A recipe gives each part as a box in fractions of the object's bounding box, in the object frame: x across the
width (0 = left, 1 = right), y through the depth (0 = back, 1 = front), z up from the supporting surface
(0 = bottom, 1 = top). Objects placed against a wall turn their back (y = 0) to it. Cylinders and capsules fill
the box along their axis with the largest circle that fits the other two sides; spheres use the smallest side.
The categories themselves are in ``catalogue``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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



def part(shape: Shape, lo: Vec3, hi: Vec3, axis: Axis = "z", trim: bool = False) -> PartRecipe:
    """A PartRecipe, briefly."""
    return PartRecipe(shape=shape, lo=lo, hi=hi, axis=axis, trim=trim)


def legs(x0: float, x1: float, y0: float, y1: float, top_z: float, leg: float,
         trim: bool = True) -> tuple[PartRecipe, ...]:
    """Four legs with their outer faces on the given rectangle, from the floor up to ``top_z``."""
    return tuple(
        part("box", (x, y, 0.0), (x + leg, y + leg, top_z), trim=trim)
        for x in (x0, x1 - leg) for y in (y0, y1 - leg)
    )


TABLE: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.92), (1.0, 1.0, 1.0)),
) + legs(0.04, 0.96, 0.04, 0.96, 0.92, 0.07)
CABINET: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.08), (1.0, 1.0, 1.0)),
    part("box", (0.03, 0.03, 0.0), (0.97, 0.95, 0.08), trim=True),  # plinth
    part("box", (0.1, 0.96, 0.78), (0.9, 1.0, 0.84), trim=True),  # drawer handle bar
)
SOFA: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 0.3, 1.0)),  # back
    part("box", (0.0, 0.2, 0.0), (1.0, 1.0, 0.5)),  # seat
    part("box", (0.0, 0.2, 0.0), (0.1, 1.0, 0.68)),  # arms
    part("box", (0.9, 0.2, 0.0), (1.0, 1.0, 0.68)),
)
CHAIR: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.5), (1.0, 1.0, 0.57)),  # seat
    part("box", (0.0, 0.0, 0.57), (1.0, 0.12, 1.0)),  # back
) + legs(0.0, 1.0, 0.0, 1.0, 0.5, 0.1)
STOOL: tuple[PartRecipe, ...] = (  # legs in the body colour: they are most of what one sees of a stool
    part("cylinder", (0.0, 0.0, 0.88), (1.0, 1.0, 1.0)),
) + legs(0.1, 0.9, 0.1, 0.9, 0.88, 0.12, trim=False)
BED: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.35), trim=True),  # frame
    part("box", (0.02, 0.05, 0.35), (0.98, 0.99, 0.62)),  # mattress and sheets
    part("box", (0.0, 0.0, 0.0), (1.0, 0.05, 1.0), trim=True),  # headboard
    part("capsule", (0.1, 0.07, 0.62), (0.9, 0.2, 0.75), axis="x"),  # pillow
)
LAMP: tuple[PartRecipe, ...] = (
    part("cylinder", (0.25, 0.25, 0.0), (0.75, 0.75, 0.06), trim=True),  # base
    part("cylinder", (0.45, 0.45, 0.06), (0.55, 0.55, 0.62), trim=True),  # pole
    part("cylinder", (0.0, 0.0, 0.6), (1.0, 1.0, 1.0)),  # shade
)
POTTED: tuple[PartRecipe, ...] = (
    part("cylinder", (0.25, 0.25, 0.0), (0.75, 0.75, 0.3), trim=True),  # pot
    part("sphere", (0.0, 0.0, 0.25), (1.0, 1.0, 1.0)),  # foliage
)
TREE: tuple[PartRecipe, ...] = (
    part("cylinder", (0.3, 0.3, 0.0), (0.7, 0.7, 0.25), trim=True),  # pot
    part("cylinder", (0.46, 0.46, 0.25), (0.54, 0.54, 0.55), trim=True),  # trunk
    part("sphere", (0.0, 0.0, 0.4), (1.0, 1.0, 1.0)),  # crown
)
SCREEN: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.4, 0.12), (1.0, 0.6, 1.0)),  # screen
    part("box", (0.35, 0.25, 0.0), (0.65, 0.75, 0.12), trim=True),  # foot
)
BOX: tuple[PartRecipe, ...] = (part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),)
CYLINDER: tuple[PartRecipe, ...] = (part("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),)
MUG: tuple[PartRecipe, ...] = (
    part("cylinder", (0.0, 0.1, 0.0), (0.8, 0.9, 1.0)),
    part("box", (0.8, 0.4, 0.2), (1.0, 0.6, 0.8)),  # handle
)
BOTTLE: tuple[PartRecipe, ...] = (
    part("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.68)),
    part("cylinder", (0.33, 0.33, 0.68), (0.67, 0.67, 1.0)),  # neck
)
VASE: tuple[PartRecipe, ...] = (
    part("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.72)),
    part("cylinder", (0.25, 0.25, 0.72), (0.75, 0.75, 1.0)),  # neck
)
LAPTOP: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.1)),  # keyboard half
    part("box", (0.0, 0.0, 0.1), (1.0, 0.08, 1.0)),  # lid
    part("box", (0.05, 0.08, 0.18), (0.95, 0.1, 0.94), trim=True),  # display
)
CLOCK: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.2, 0.0), (1.0, 0.8, 1.0)),
    part("cylinder", (0.15, 0.8, 0.15), (0.85, 0.9, 0.85), axis="y", trim=True),  # dial
)
TEDDY: tuple[PartRecipe, ...] = (
    part("sphere", (0.1, 0.1, 0.0), (0.9, 0.9, 0.62)),  # body
    part("sphere", (0.22, 0.22, 0.55), (0.78, 0.78, 0.92)),  # head
    part("sphere", (0.18, 0.4, 0.82), (0.38, 0.6, 1.0)),  # ears
    part("sphere", (0.62, 0.4, 0.82), (0.82, 0.6, 1.0)),
)
KETTLE: tuple[PartRecipe, ...] = (
    part("cylinder", (0.1, 0.1, 0.0), (0.8, 0.9, 0.8)),
    part("box", (0.4, 0.42, 0.8), (0.5, 0.58, 1.0), trim=True),  # lid knob
    part("box", (0.8, 0.42, 0.15), (1.0, 0.58, 0.7), trim=True),  # handle
    part("capsule", (0.0, 0.44, 0.3), (0.12, 0.56, 0.6), trim=True),  # spout
)
APPLIANCE: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    part("box", (0.06, 0.97, 0.12), (0.7, 1.0, 0.88), trim=True),  # door window
    part("box", (0.76, 0.97, 0.2), (0.94, 1.0, 0.8), trim=True),  # control panel
)
FRIDGE: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 0.97, 1.0)),
    part("box", (0.8, 0.97, 0.45), (0.86, 1.0, 0.9), trim=True),  # handles
    part("box", (0.8, 0.97, 0.1), (0.86, 1.0, 0.38), trim=True),
)
STOVE: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.93)),
    part("box", (0.0, 0.0, 0.93), (1.0, 0.12, 1.0), trim=True),  # back panel
) + tuple(part("cylinder", (x, y, 0.93), (x + 0.3, y + 0.3, 0.95), trim=True)
          for x in (0.12, 0.58) for y in (0.2, 0.62))
WASHER: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 0.96, 1.0)),
    part("cylinder", (0.2, 0.96, 0.2), (0.8, 1.0, 0.75), axis="y", trim=True),  # round door
)
TOILET: tuple[PartRecipe, ...] = (
    part("box", (0.15, 0.0, 0.0), (0.85, 0.3, 1.0)),  # cistern
    part("cylinder", (0.1, 0.25, 0.0), (0.9, 1.0, 0.55)),  # bowl
)
BATHTUB: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.12)),
    part("box", (0.0, 0.0, 0.12), (1.0, 0.1, 1.0)),  # rims
    part("box", (0.0, 0.9, 0.12), (1.0, 1.0, 1.0)),
    part("box", (0.0, 0.1, 0.12), (0.08, 0.9, 1.0)),
    part("box", (0.92, 0.1, 0.12), (1.0, 0.9, 1.0)),
)
WARDROBE: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.03), (1.0, 1.0, 1.0)),
    part("box", (0.48, 0.97, 0.1), (0.52, 1.0, 0.97), trim=True),  # door gap
    part("box", (0.4, 0.97, 0.45), (0.44, 1.0, 0.6), trim=True),  # knobs
    part("box", (0.56, 0.97, 0.45), (0.6, 1.0, 0.6), trim=True),
    part("box", (0.02, 0.02, 0.0), (0.98, 0.98, 0.03), trim=True),
)
SHELF: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 0.15, 1.0)),  # back panel
    part("box", (0.0, 0.0, 0.0), (0.06, 1.0, 1.0)),  # sides
    part("box", (0.94, 0.0, 0.0), (1.0, 1.0, 1.0)),
    part("box", (0.0, 0.0, 0.95), (1.0, 1.0, 1.0)),  # top
    part("box", (0.06, 0.15, 0.0), (0.94, 1.0, 0.05), trim=True),
    part("box", (0.06, 0.15, 0.33), (0.94, 1.0, 0.37), trim=True),  # shelves
    part("box", (0.06, 0.15, 0.64), (0.94, 1.0, 0.68), trim=True),
)
BENCH: tuple[PartRecipe, ...] = (part("box", (0.0, 0.0, 0.82), (1.0, 1.0, 1.0)),) + (
    part("box", (0.04, 0.1, 0.0), (0.12, 0.9, 0.82), trim=True),
    part("box", (0.88, 0.1, 0.0), (0.96, 0.9, 0.82), trim=True),
)
BASKET: tuple[PartRecipe, ...] = (
    part("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.85)),
    part("box", (0.45, 0.0, 0.85), (0.55, 1.0, 1.0), trim=True),  # handle
)
TRASH: tuple[PartRecipe, ...] = (
    part("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.93)),
    part("cylinder", (0.0, 0.0, 0.93), (1.0, 1.0, 1.0), trim=True),  # lid
)
PIANO: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 0.55, 1.0)),
    part("box", (0.0, 0.55, 0.55), (1.0, 1.0, 0.65)),  # key bed
    part("box", (0.03, 0.6, 0.65), (0.97, 0.95, 0.68), trim=True),  # keys
    part("box", (0.0, 0.55, 0.0), (0.05, 1.0, 0.55), trim=True),  # cheeks
    part("box", (0.95, 0.55, 0.0), (1.0, 1.0, 0.55), trim=True),
)
SPEAKER: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 0.9, 1.0)),
    part("cylinder", (0.15, 0.9, 0.1), (0.85, 1.0, 0.5), axis="y", trim=True),  # woofer
    part("cylinder", (0.3, 0.9, 0.6), (0.7, 1.0, 0.9), axis="y", trim=True),  # tweeter
)
FRAME: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.45, 0.0), (1.0, 0.6, 1.0)),
    part("box", (0.12, 0.6, 0.12), (0.88, 0.64, 0.88), trim=True),  # picture
    part("box", (0.4, 0.0, 0.0), (0.6, 0.45, 0.6), trim=True),  # stand
)
GLOBE: tuple[PartRecipe, ...] = (
    part("cylinder", (0.25, 0.25, 0.0), (0.75, 0.75, 0.08), trim=True),
    part("cylinder", (0.46, 0.46, 0.08), (0.54, 0.54, 0.25), trim=True),
    part("sphere", (0.0, 0.0, 0.22), (1.0, 1.0, 1.0)),
)
JAR: tuple[PartRecipe, ...] = (
    part("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.82)),
    part("cylinder", (0.05, 0.05, 0.82), (0.95, 0.95, 1.0), trim=True),  # lid
)
PILLOW: tuple[PartRecipe, ...] = (
    part("box", (0.06, 0.0, 0.2), (0.94, 1.0, 0.8)),  # the filled middle
    part("capsule", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), axis="y"),  # rounded ends
)
SHOES: tuple[PartRecipe, ...] = (  # a pair side by side, toes to the front
    part("box", (0.0, 0.0, 0.0), (0.45, 1.0, 0.35), trim=True),  # soles
    part("box", (0.55, 0.0, 0.0), (1.0, 1.0, 0.35), trim=True),
    part("box", (0.02, 0.0, 0.35), (0.43, 0.6, 1.0)),  # uppers
    part("box", (0.57, 0.0, 0.35), (0.98, 0.6, 1.0)),
    part("capsule", (0.02, 0.3, 0.35), (0.43, 1.0, 0.7), axis="y"),  # toes
    part("capsule", (0.57, 0.3, 0.35), (0.98, 1.0, 0.7), axis="y"),
)
BAG: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.78)),  # body
    part("box", (0.05, 0.9, 0.1), (0.95, 1.0, 0.5)),  # front pocket
    part("capsule", (0.2, 0.4, 0.78), (0.8, 0.6, 1.0), axis="x", trim=True),  # handle
)
HEADPHONES: tuple[PartRecipe, ...] = (
    part("capsule", (0.0, 0.3, 0.7), (1.0, 0.7, 1.0), axis="x", trim=True),  # band
    part("cylinder", (0.0, 0.1, 0.0), (0.3, 0.9, 0.75)),  # cups
    part("cylinder", (0.7, 0.1, 0.0), (1.0, 0.9, 0.75)),
)
SOAP: tuple[PartRecipe, ...] = (
    part("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.75)),
    part("cylinder", (0.38, 0.38, 0.75), (0.62, 0.62, 0.9), trim=True),  # pump
    part("box", (0.45, 0.45, 0.88), (0.95, 0.55, 1.0), trim=True),  # nozzle
)
TOASTER: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.97)),
    part("box", (0.15, 0.25, 0.97), (0.85, 0.4, 1.0), trim=True),  # slots
    part("box", (0.15, 0.6, 0.97), (0.85, 0.75, 1.0), trim=True),
)
CANDLE: tuple[PartRecipe, ...] = (
    part("cylinder", (0.0, 0.0, 0.0), (1.0, 1.0, 0.9)),
    part("cylinder", (0.45, 0.45, 0.9), (0.55, 0.55, 1.0), trim=True),  # wick
)
OTTOMAN: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.12), (1.0, 1.0, 1.0)),
) + legs(0.03, 0.97, 0.03, 0.97, 0.12, 0.1)
RACK: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.9), (1.0, 1.0, 1.0)),
    part("box", (0.0, 0.0, 0.45), (1.0, 1.0, 0.53)),
    part("box", (0.0, 0.0, 0.0), (0.05, 1.0, 0.9), trim=True),
    part("box", (0.95, 0.0, 0.0), (1.0, 1.0, 0.9), trim=True),
)
DESK: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.93), (1.0, 1.0, 1.0)),
    part("box", (0.0, 0.05, 0.0), (0.35, 0.95, 0.93)),  # drawer pedestal
    part("box", (0.35, 0.95, 0.78), (0.37, 0.97, 0.88), trim=True),  # pedestal handle
    part("box", (0.92, 0.05, 0.0), (0.98, 0.95, 0.93), trim=True),  # leg panel
)
OFFICE_CHAIR: tuple[PartRecipe, ...] = (
    part("cylinder", (0.1, 0.1, 0.0), (0.9, 0.9, 0.05), trim=True),  # star base
    part("cylinder", (0.45, 0.45, 0.05), (0.55, 0.55, 0.47), trim=True),  # column
    part("box", (0.05, 0.05, 0.47), (0.95, 0.95, 0.55)),  # seat
    part("box", (0.08, 0.0, 0.55), (0.92, 0.12, 1.0)),  # back
)


__all__ = ["APPLIANCE", "Axis", "BASKET", "BATHTUB", "BED", "BENCH", "BOTTLE", "BOX", "CABINET", "CANDLE", "CHAIR",
           "CLOCK", "CYLINDER", "CategorySpec", "DESK", "FRAME", "FRIDGE", "GLOBE", "HEADPHONES", "JAR", "KETTLE",
           "LAMP", "LAPTOP", "MUG", "OFFICE_CHAIR", "OTTOMAN", "PIANO", "POTTED", "PartRecipe", "Placement", "RACK",
           "SCREEN", "SHELF", "SOAP", "SOFA", "SPEAKER", "STOOL", "STOVE", "Shape", "TABLE", "TEDDY", "TOASTER",
           "TOILET", "TRASH", "TREE", "VASE", "WARDROBE", "WASHER", "Vec3", "legs", "part"]
