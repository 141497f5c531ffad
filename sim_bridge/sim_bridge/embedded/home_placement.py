"""Where the objects of a home go: furniture on the floor, floor clutter, small objects on receptacle tops.

Furniture stands against a wall or free, axis-aligned (yaw in quarter turns, so the bounding boxes are exact
footprints), keeps ``furniture_gap_m`` (more than the robot's diameter) from every other piece and from the walls
it does not touch, and stays out of a corridor in front of each door: together these keep the free floor of a
room in one piece. Small objects stand on receptacle tops (on a model: on its support surface, ``furnishing``).
``number_object`` turns a placed object into the home's ``ObjectSpec``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import NamedTuple, Optional, Sequence

import numpy as np

from goat_core.errors import SceneGenerationError
from sim_bridge.embedded.catalogue import CATALOGUE, NOT_ON_TOPS, Axis, CategorySpec
from sim_bridge.embedded.furnishing import Furnisher, ModelChoice, ModelRef, Surface
from sim_bridge.embedded.home_config import FLOOR_CLUTTER, LARGE_FURNITURE_M2_PER_PIECE, HomeConfig
from sim_bridge.embedded.home_types import ObjectSpec, Part, Rect, Room, SizeLabel, add3

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]

WALL_CONTACT_GAP_M = 0.01  # furniture "against" a wall stands this far off it, so their faces never coincide
TOP_TRIES = 10  # poses tried per small object wanted on a receptacle's top
# On a model's top in a large home: most poses miss its support surface (a model's top is seldom its whole box).
MODEL_TOP_TRIES = 80
SURFACE_MARGIN_M = 0.03  # small objects keep this far from the edge of a top and from each other
PLACEMENT_ATTEMPTS = 60  # poses tried per piece of furniture
ROOM_ATTEMPTS = 8  # times a room is refurnished from scratch before giving up
CORNER_PROBABILITY = 0.3  # share of wall furniture pushed into a corner instead of keeping the gap


@dataclass(frozen=True)
class Placed:
    """An object placed but not yet numbered."""

    spec: CategorySpec
    footprint: Rect
    z0_m: float
    size_m: Vec3
    quarter_turns: int
    scale: float  # position in the category's size range, 0 = smallest
    choice: Optional[ModelChoice] = None  # the model of a furnished home

    @property
    def top_m(self) -> float:
        """Height small objects stand at: the model's support surface, or the top of a primitive box."""
        return self.z0_m + (self.choice.support_m if self.choice is not None else self.size_m[2])



class PlacedFurniture(NamedTuple):
    """A numbered piece of furniture with what placing it knew (for the optional PASTURE additions)."""

    room: Room
    placed: Placed
    spec: ObjectSpec



def room_config(room: Room, config: HomeConfig) -> HomeConfig:
    """The settings one room is furnished with: a large home's rooms ask for furniture by area (closets and
    hallways may stay empty)."""
    if config.layout != "large":
        return config
    lo, hi = config.furniture_per_room
    wanted = max(lo, min(hi, round(room.area_m2 / LARGE_FURNITURE_M2_PER_PIECE)))
    minimum = 0 if room.room_type in ("closet", "hallway") or not any(
        room.room_type in c.room_types for c in CATALOGUE) else lo
    return replace(config, furniture_per_room=(minimum, wanted))



def model_keys(placed: Sequence[Placed]) -> list[str]:
    return [p.choice.ref.key for p in placed if p.choice is not None]


def _fresh(pool: list[CategorySpec], fur: Optional[Furnisher], used: Counter[str]) -> list[CategorySpec]:
    """A furnished home's categories with a model it does not use yet (or built of primitives, which differ in
    colour), when there are any: identical models in one home can only be told apart by their room or
    neighbours, which descriptions and image goals then hinge on; the whole pool otherwise (and always for
    primitive homes)."""
    if fur is None:
        return pool
    return [c for c in pool if not fur.has(c.name) or fur.has_unused(c.name, used)] or pool


def buildable(spec: CategorySpec, fur: Optional[Furnisher], primitive_small_objects: bool) -> bool:
    """Whether a home can hold ``spec``: any category in a primitive home; in a furnished one, a category a model
    stands for, or a small one built of primitives (``HomeConfig.primitive_small_objects``)."""
    return fur is None or fur.has(spec.name) or (primitive_small_objects and spec.placement == "receptacle")


def furnish_room(rng: np.random.Generator, room: Room, keepouts: list[Rect],
                  config: HomeConfig, fur: Optional[Furnisher], used: Counter[str]) -> list[Placed]:
    """Greedy placement of the drawn number of pieces; the whole room is redrawn when too few fit."""
    lo, hi = config.furniture_per_room
    allowed = [c for c in CATALOGUE if c.placement != "receptacle" and room.room_type in c.room_types
               and (fur is None or fur.has(c.name))]
    placed: list[Placed] = []
    for _ in range(ROOM_ATTEMPTS):
        wanted = int(rng.integers(lo, hi + 1))
        placed = []
        for _ in range(wanted):
            piece = _place_one_piece(rng, room, keepouts, placed, allowed, config, fur,
                                     used + Counter(model_keys(placed)))
            if piece is not None:
                placed.append(piece)
        if len(placed) >= lo:
            return placed
    w, d = room.max_xy_m[0] - room.min_xy_m[0], room.max_xy_m[1] - room.min_xy_m[1]
    raise SceneGenerationError(
        f"room {room.room_id} ({room.room_type}, {w:.1f} x {d:.1f} m) fits only {len(placed)} pieces of "
        f"furniture but HomeConfig.furniture_per_room asks for at least {lo}; lower furniture_per_room "
        "or furniture_gap_m, or raise room_side_range_m")


def _place_one_piece(rng: np.random.Generator, room: Room, keepouts: list[Rect], placed: list[Placed],
                     allowed: list[CategorySpec], config: HomeConfig,
                     fur: Optional[Furnisher], used: Counter[str]) -> Optional[Placed]:
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
        size, scale, choice = draw(rng, spec, fur, used)
        quarter, footprint = _floor_pose(rng, spec, size, room, config)
        if footprint is None or any(footprint.overlaps(k) for k in keepouts):
            continue
        if all(footprint.gap_to(p.footprint) >= config.furniture_gap_m for p in placed):
            return Placed(spec, footprint, 0.0, size, quarter, scale, choice)
    return None


def draw(rng: np.random.Generator, spec: CategorySpec, fur: Optional[Furnisher],
          used: Optional[Counter[str]] = None) -> tuple[Vec3, float, Optional[ModelChoice]]:
    """Size, position in the size range and model of a new object: a model of a furnished home keeps its own
    size (one the home uses least, see ``Furnisher.choose``); a primitive object's size is drawn uniformly from
    its category's range."""
    if fur is not None and fur.has(spec.name):
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
                config: HomeConfig) -> tuple[int, Optional[Rect]]:
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
        x = uniform_or_none(rng, x_lo + gap + hx, x_hi - gap - hx)
        y = uniform_or_none(rng, y_lo + gap + hy, y_hi - gap - hy)
    if x is None or y is None or x - hx < x_lo or x + hx > x_hi or y - hy < y_lo or y + hy > y_hi:
        return quarter, None
    return quarter, Rect(x - hx, y - hy, x + hx, y + hy)


def _along_wall(rng: np.random.Generator, lo: float, hi: float, half: float, gap: float) -> Optional[float]:
    """Centre along a wall: in a corner, or keeping ``gap`` to both side walls."""
    if rng.uniform() < CORNER_PROBABILITY:
        return lo + WALL_CONTACT_GAP_M + half if rng.uniform() < 0.5 else hi - WALL_CONTACT_GAP_M - half
    return uniform_or_none(rng, lo + gap + half, hi - gap - half)


def uniform_or_none(rng: np.random.Generator, lo: float, hi: float) -> Optional[float]:
    return float(rng.uniform(lo, hi)) if lo <= hi else None


def draw_footprint(rng: np.random.Generator, size: Sequence[float], area: Rect,
                   margin_m: float) -> tuple[int, Optional[Rect]]:
    """A random quarter turn of an object of ``size`` (w, d, h) and its footprint at a random place in ``area``,
    ``margin_m`` from its edges; the footprint is None where it does not fit. Draws the turn, x and y, in that
    order."""
    quarter = int(rng.integers(4))
    hx, hy = (size[1] / 2, size[0] / 2) if quarter % 2 else (size[0] / 2, size[1] / 2)
    x = uniform_or_none(rng, area.x0 + margin_m + hx, area.x1 - margin_m - hx)
    y = uniform_or_none(rng, area.y0 + margin_m + hy, area.y1 - margin_m - hy)
    if x is None or y is None:
        return quarter, None
    return quarter, Rect(x - hx, y - hy, x + hx, y + hy)


def _clutter_pose(rng: np.random.Generator, area: tuple[Vec2, Vec2], furniture: list[Placed], hx: float,
                  hy: float, gap: float) -> tuple[Optional[float], Optional[float], Optional[Placed]]:
    """Centre of a floor object of half sizes (hx, hy) in ``area``: against one of its walls, free (``gap`` from
    them), or against a piece of furniture (and ``gap`` from the walls); None when it does not fit. Also the piece
    it leans on."""
    (x_lo, y_lo), (x_hi, y_hi) = area
    side = int(rng.integers(7))
    c = WALL_CONTACT_GAP_M
    x = uniform_or_none(rng, x_lo + gap + hx, x_hi - gap - hx)
    y = uniform_or_none(rng, y_lo + gap + hy, y_hi - gap - hy)
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


def floor_clutter(rng: np.random.Generator, room: Room, keepouts: list[Rect], furniture: list[Placed],
                  config: HomeConfig, fur: Optional[Furnisher], used: Counter[str]) -> list[Placed]:
    """Small objects on the floor of any rectangle of the room, up to one per
    ``floor_clutter_m2_per_object``. Each stays out of door corridors and open sides and keeps
    ``furniture_gap_m`` (more than the robot's diameter) from every other floor object but the one piece of
    furniture it may lean on, and either stands against a wall (then touching no furniture) or keeps that gap from
    the walls too: passages narrow but the free floor stays in one piece."""
    names = set(FLOOR_CLUTTER)
    allowed = [c for c in CATALOGUE if c.name in names and buildable(c, fur, config.primitive_small_objects)]
    in_room = [c for c in allowed if room.room_type in c.room_types]
    allowed = in_room or [c for c in allowed if c.name in ("storage box", "basket")]
    wanted = int(room.area_m2 / config.floor_clutter_m2_per_object)
    gap = config.furniture_gap_m
    placed: list[Placed] = []
    rects = room.rects
    for _ in range(wanted * 4):
        if len(placed) >= wanted or not allowed:
            break
        so_far = used + Counter(model_keys(placed))
        spec = allowed[int(rng.integers(len(allowed)))]
        size, scale, choice = draw(rng, spec, fur, so_far)
        quarter = int(rng.integers(4))
        hx, hy = (size[1] / 2, size[0] / 2) if quarter % 2 else (size[0] / 2, size[1] / 2)
        x, y, leaning = _clutter_pose(rng, rects[int(rng.integers(len(rects)))], furniture, hx, hy, gap)
        if x is None or y is None:
            continue
        rect = Rect(x - hx, y - hy, x + hx, y + hy)
        if any(rect.overlaps(k) for k in keepouts) or not room.contains((x, y)):
            continue
        # Touching the piece it leans on (one obstacle with it), the robot's passage from every other one.
        if all(p is leaning or rect.gap_to(p.footprint) >= gap for p in furniture + placed):
            placed.append(Placed(spec, rect, 0.0, size, quarter, scale, choice))
    return placed


# ---------------------------------------------------------------- small objects


def dress_receptacle(rng: np.random.Generator, receptacle: Placed, room: Room,
                      config: HomeConfig, fur: Optional[Furnisher], used: Counter[str]) -> list[Placed]:
    """Small objects on the receptacle's top, as many of the drawn count as fit without touching.

    On a model, an object must also rest on its support surface and fit under whatever is above it.
    """
    lo, hi = config.small_objects_per_receptacle
    wanted = int(rng.integers(lo, hi + 1))
    allowed = [c for c in CATALOGUE if c.placement == "receptacle" and room.room_type in c.room_types
               and c.name not in NOT_ON_TOPS and (not c.supports or receptacle.spec.name in c.supports)
               and buildable(c, fur, config.primitive_small_objects)]
    top = receptacle.footprint
    m = SURFACE_MARGIN_M
    placed: list[Placed] = []
    tries = MODEL_TOP_TRIES if receptacle.choice is not None and config.layout == "large" else TOP_TRIES
    so_far, fresh, fresh_for = used, allowed, -1
    for _ in range(wanted * tries):
        if len(placed) == wanted or not allowed:
            break
        if fresh_for != len(placed):  # what the home uses changes only when an object is put
            so_far = used + Counter(model_keys(placed))
            fresh, fresh_for = _fresh(allowed, fur, so_far), len(placed)
        spec = fresh[int(rng.integers(len(fresh)))]
        size, scale, choice = draw(rng, spec, fur, so_far)
        quarter = int(rng.integers(4))
        hx, hy = (size[1] / 2, size[0] / 2) if quarter % 2 else (size[0] / 2, size[1] / 2)
        x = uniform_or_none(rng, top.x0 + m + hx, top.x1 - m - hx)
        y = uniform_or_none(rng, top.y0 + m + hy, top.y1 - m - hy)
        if x is None or y is None:
            continue
        rect = Rect(x - hx, y - hy, x + hx, y + hy)
        if receptacle.choice is not None and fur is not None \
                and not rests_on(fur.surface(receptacle.choice), receptacle, rect, size[2]):
            continue
        if all(rect.gap_to(p.footprint) >= m for p in placed):
            placed.append(Placed(spec, rect, receptacle.top_m, size, quarter, scale, choice))
    return placed


def rests_on(surface: Surface, receptacle: Placed, rect: Rect, height_m: float) -> bool:
    """True when a world rectangle on a model receptacle lies on ``surface`` with ``height_m`` free above."""
    f = receptacle.footprint
    cx, cy = (f.x0 + f.x1) / 2.0, (f.y0 + f.y1) / 2.0
    back = (4 - receptacle.quarter_turns) % 4  # world -> object frame
    corners = [quarter_turn(x - cx, y - cy, back) for x in (rect.x0, rect.x1) for y in (rect.y0, rect.y1)]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return surface.fits((min(xs), min(ys)), (max(xs), max(ys)), height_m)


def number_object(rng: np.random.Generator, piece: Placed, room: Room, receptacle_id: Optional[str],
            instance_id: int, fur: Optional[Furnisher] = None) -> ObjectSpec:
    spec = piece.spec
    f = piece.footprint
    lo = (f.x0, f.y0, piece.z0_m)
    hi = (f.x1, f.y1, piece.z0_m + piece.size_m[2])
    centre = add3(lo, hi, 1.0, 0.5)
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
        x, y = quarter_turn(mid[0], mid[1], quarter)
        hx, hy = (half[1], half[0]) if quarter % 2 else (half[0], half[1])
        axis: Axis = recipe.axis
        if quarter % 2 and axis != "z":
            axis = "y" if axis == "x" else "x"
        z = z0 + (recipe.lo[2] + recipe.hi[2]) / 2 * size[2]
        parts.append(Part(recipe.shape, (centre[0] + x, centre[1] + y, z), (hx, hy, half[2]), axis,
                          recipe.trim))
    return tuple(parts)


def quarter_turn(x: float, y: float, quarter: int) -> Vec2:
    """Rotate (x, y) counter-clockwise by ``quarter`` right angles, exactly."""
    for _ in range(quarter % 4):
        x, y = -y, x
    return x, y


__all__ = ["Placed", "PlacedFurniture", "SURFACE_MARGIN_M", "WALL_CONTACT_GAP_M", "buildable", "draw", "draw_footprint",
           "dress_receptacle", "floor_clutter", "furnish_room", "model_keys", "number_object", "quarter_turn",
           "rests_on", "room_config", "uniform_or_none"]
