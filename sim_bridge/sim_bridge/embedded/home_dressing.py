"""Small objects on every surface a large home's furniture offers, not only on receptacle tops.

Real homes keep things on the shelves of a bookcase, on beds and sofas, on benches and on the top of a piano;
HM3DSem annotates them (about 60 objects per room, small ones included). With ``HomeConfig.dress_surfaces``
(the large homes) each piece of furniture of a category in ``SURFACES`` gets, besides what ``home_placement``
put on its top, small objects on each of its levels:

* the inner shelves of bookshelves hold rows of upright books (a run of 2-6 spines side by side) and now and
  then another object (a box, a vase, a frame...), left to right, as far as the shelf is wide;
* the seats of sofas and armchairs, a bed's mattress, a bench, an ottoman, a dryer, a toilet's cistern, a hob,
  the tops of a piano and a wardrobe and the decks of a shoe rack hold a few objects each, of the categories
  such a surface carries (a teddy bear or a laptop on a bed, a towel on a dryer, a vase on a piano, boxes on a
  wardrobe).

None of these take floor space: navigable area and reachability stay what the furniture and clutter leave. A
level is given in fractions of the piece's box (object frame, ``catalogue_recipes``) read off its recipe. On a
model (furnished homes) the level only bounds where to look: objects stand on the model's own upward faces found
there (``furnishing.Furnisher.level_surface``) and fit under whatever is above them; books are not put upright.
Objects get their own random stream (``DRESSING_STREAM``), so the furniture and clutter of a home are those it
would have without them.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np

from sim_bridge.embedded.catalogue import CATEGORIES, CategorySpec
from sim_bridge.embedded.furnishing import Furnisher, ModelChoice, Surface
from sim_bridge.embedded.home_placement import (
    SURFACE_MARGIN_M,
    Placed,
    buildable,
    draw,
    draw_footprint,
    model_keys,
    quarter_turn,
    rests_on,
)
from sim_bridge.embedded.home_types import Rect, Room

Vec3 = tuple[float, float, float]

DRESSING_STREAM = 3  # random stream of the objects on levels (home.HIDDEN_STREAM and UNCOMMON_STREAM are 1, 2)
BOOK_GAP_M = 0.004  # between two upright books of a run
BOOK_RUN = (2, 6)  # inclusive: books side by side in one run
BOOK_RUN_SHARE = 0.7  # share of a shelf's groups that are runs of books (the rest: one other object)
GROUP_GAP_RANGE_M = (0.02, 0.12)  # free shelf between two groups
SCATTER_TRIES = 12  # poses tried per object on a seat or top
SHELF_STEP_M = 0.03  # along a model's shelf, how far the next try moves when nothing could be put

_SHELF_OBJECTS = ("storage box", "vase", "picture frame", "plant", "clock", "candle", "globe", "teddy bear",
                  "speaker", "basket")
_SEAT_OBJECTS = ("teddy bear", "book", "remote control", "laptop", "headphones", "pillow", "pillow")


@dataclass(frozen=True)
class Level:
    """A surface of a furniture category that holds small objects (fractions of its box, object frame)."""

    lo: Vec3  # min corner; objects stand at z = lo[2]
    hi: Vec3  # max corner; hi[2]: the underside of the shelf above (not used for an open top)
    categories: tuple[str, ...]  # what stands there (catalogue categories)
    count: tuple[int, int]  # inclusive range of objects wanted (shelves of books: up to what fits)
    books: bool = False  # a bookshelf's shelf: rows of upright books
    open_top: bool = False  # nothing above: any height fits

    def ceiling_fraction(self) -> float:
        return math.inf if self.open_top else self.hi[2]


def _shelf(z0: float, z1: float) -> Level:
    """A bookshelf's inner shelf: filled with rows of books on a primitive, 3-8 objects scattered on a model."""
    return Level((0.06, 0.15, z0), (0.94, 1.0, z1), _SHELF_OBJECTS + ("book",), (3, 8), books=True)


# Read off the recipes: SHELF's boards end at z 0.05, 0.37, 0.68 (the next starts at 0.33, 0.64, 0.95); SOFA's
# seat at 0.5 between arms (x 0.1-0.9) in front of the back (y 0.3); BED's mattress at 0.62, its foot end only
# (y >= 0.7: the middle of a 2 m bed is more than the 1 m a view point may be away from an object); RACK's deck
# at 0.53 under the top (0.9) and its floor under the deck (0.45); the tops of BENCH, OTTOMAN, WASHER (a dryer),
# WARDROBE, PIANO's case (y < 0.55), TOILET's cistern (x 0.15-0.85, y < 0.3) and STOVE's hob in front of its
# back panel (y 0.12); CHAIR's seat at 0.57 in front of its back (y 0.12).
SURFACES: Mapping[str, tuple[Level, ...]] = {
    "bookshelf": (_shelf(0.05, 0.33), _shelf(0.37, 0.64), _shelf(0.68, 0.95)),
    "couch": (Level((0.1, 0.32, 0.5), (0.9, 0.98, 1.0), _SEAT_OBJECTS, (2, 4), open_top=True),),
    "armchair": (Level((0.1, 0.32, 0.5), (0.9, 0.98, 1.0), _SEAT_OBJECTS, (1, 2), open_top=True),),
    "bed": (Level((0.05, 0.7, 0.62), (0.95, 0.97, 1.0), _SEAT_OBJECTS + ("bag",), (2, 4), open_top=True),),
    "chair": (Level((0.05, 0.15, 0.57), (0.95, 0.95, 1.0), ("bag", "pillow", "book", "teddy bear"), (0, 2),
                    open_top=True),),
    "bench": (Level((0.02, 0.05, 1.0), (0.98, 0.95, 1.0), ("book", "basket", "storage box", "teddy bear",
                                                            "laptop", "towel", "bag", "shoes"), (1, 3),
                    open_top=True),),
    "ottoman": (Level((0.03, 0.03, 1.0), (0.97, 0.97, 1.0), ("book", "remote control", "teddy bear", "bowl"),
                      (0, 2), open_top=True),),
    "dryer": (Level((0.02, 0.02, 1.0), (0.98, 0.94, 1.0), ("towel", "basket", "bottle", "storage box"), (1, 3),
                    open_top=True),),
    "piano": (Level((0.03, 0.03, 1.0), (0.97, 0.52, 1.0), ("vase", "picture frame", "clock", "candle", "plant",
                                                            "book"), (1, 4), open_top=True),),
    "toilet": (Level((0.17, 0.02, 1.0), (0.83, 0.28, 1.0), ("candle", "plant", "towel", "soap dispenser", "bottle",
                                                             "cup"), (1, 3), open_top=True),),
    "stove": (Level((0.05, 0.15, 0.95), (0.95, 0.95, 1.0), ("kettle", "bowl", "plate"), (1, 3), open_top=True),),
    "wardrobe": (Level((0.05, 0.05, 1.0), (0.95, 0.95, 1.0), ("storage box", "basket", "bag"), (1, 3),
                       open_top=True),),
    "shoe rack": (Level((0.05, 0.02, 0.53), (0.95, 0.98, 0.9), ("shoes", "shoes", "storage box", "basket", "book",
                                                                "towel"), (1, 3)),
                  Level((0.05, 0.02, 0.0), (0.95, 0.98, 0.45), ("shoes", "shoes", "shoes", "storage box"), (1, 3))),
}


def dress_levels(rng: np.random.Generator, piece: Placed, room: Room, fur: Optional[Furnisher],
                 used: Counter[str], primitive_small_objects: bool = False) -> list[Placed]:
    """Small objects on the levels of ``piece`` (module doc); none for categories without levels. In a furnished
    home, categories no model stands for are built of primitives with ``primitive_small_objects``
    (``HomeConfig``), left out otherwise."""
    placed: list[Placed] = []
    # A model's levels are searched in overlapping bands: each of its surfaces is dressed once, and not the one
    # its top objects already stand on.
    taken_cm = {round(100 * piece.choice.support_m)} if piece.choice is not None and piece.spec.is_receptacle \
        else set()
    for level in SURFACES.get(piece.spec.name, ()):
        pool = _pool(level, room, fur, primitive_small_objects)
        if not pool:
            continue
        support: Optional[Surface] = None
        if piece.choice is not None and fur is not None:
            support = fur.level_surface(piece.choice, level.lo, level.hi)
            if support is None or any(abs(100 * support.support_m - cm) < 3 for cm in taken_cm):
                continue
            taken_cm.add(round(100 * support.support_m))
        so_far = used + Counter(model_keys(placed))
        if level.books and support is None:
            placed += _fill_shelf(rng, piece, level, pool)
        elif level.books and support is not None and primitive_small_objects:
            placed += _fill_model_shelf(rng, piece, level, pool, fur, so_far, support)
        else:
            placed += _scatter(rng, piece, level, pool, fur, so_far, support)
    return placed


def _pool(level: Level, room: Room, fur: Optional[Furnisher], primitive_small_objects: bool) -> list[CategorySpec]:
    """The level's categories the home can build, those of the room first (any of them when none is); a name
    given twice is drawn twice as often."""
    specs = [CATEGORIES[name] for name in level.categories
             if buildable(CATEGORIES[name], fur, primitive_small_objects)]
    return [s for s in specs if room.room_type in s.room_types] or specs


def _level_box(piece: Placed, level: Level) -> tuple[float, float, float, float, float, float]:
    """The level in the piece's object frame, centred on its footprint: x0, x1, y0, y1 (m), floor height (world),
    free height above (m)."""
    w, d, h = piece.size_m
    x0, x1 = (level.lo[0] - 0.5) * w, (level.hi[0] - 0.5) * w
    y0, y1 = (level.lo[1] - 0.5) * d, (level.hi[1] - 0.5) * d
    free = (level.ceiling_fraction() - level.lo[2]) * h
    return x0, x1, y0, y1, piece.z0_m + level.lo[2] * h, free


def _to_world(piece: Placed, x0: float, y0: float, x1: float, y1: float) -> Rect:
    """A rectangle of the piece's object frame (centred on its footprint) in the world."""
    f = piece.footprint
    cx, cy = (f.x0 + f.x1) / 2.0, (f.y0 + f.y1) / 2.0
    corners = [quarter_turn(x, y, piece.quarter_turns) for x in (x0, x1) for y in (y0, y1)]
    xs, ys = [cx + c[0] for c in corners], [cy + c[1] for c in corners]
    return Rect(min(xs), min(ys), max(xs), max(ys))


def _sized(spec: CategorySpec, scale: float) -> Vec3:
    """(width, depth, height) at ``scale`` of the category's size range (0 = smallest)."""
    w, d, h = (lo + scale * (hi - lo) for lo, hi in zip(spec.size_min_m, spec.size_max_m, strict=True))
    return w, d, h


def _fill_shelf(rng: np.random.Generator, piece: Placed, level: Level, pool: list[CategorySpec]) -> list[Placed]:
    """Groups left to right along a primitive shelf: runs of upright books (spines to the front), or one other
    object of the pool, until the shelf is full. Upright, a book's thickness (its catalogue height) runs along
    the shelf, its width into the shelf and its length up. (A furnished home's shelves hold models of their own
    sizes, scattered: ``_scatter``.)"""
    x0, x1, y0, y1, z0, free = _level_box(piece, level)
    m = SURFACE_MARGIN_M
    book = CATEGORIES["book"]
    others = [s for s in pool if s.name != "book"]
    placed: list[Placed] = []
    x = x0 + m
    while x < x1 - m:
        if not others or rng.uniform() < BOOK_RUN_SHARE:
            for _ in range(int(rng.integers(BOOK_RUN[0], BOOK_RUN[1] + 1))):
                scale = float(rng.uniform())
                w, d, h = _sized(book, scale)
                size = (h, w, d)
                if x + size[0] > x1 - m or size[1] > y1 - y0 - 2 * m or size[2] > free - m:
                    break
                rect = _to_world(piece, x, y0 + m, x + size[0], y0 + m + size[1])
                placed.append(Placed(book, rect, z0, size, piece.quarter_turns, scale))
                x += size[0] + BOOK_GAP_M
        else:
            spec = others[int(rng.integers(len(others)))]
            scale = float(rng.uniform())
            size = _sized(spec, scale)
            if x + size[0] <= x1 - m and size[1] <= y1 - y0 - 2 * m and size[2] <= free - m:
                rect = _to_world(piece, x, y0 + m, x + size[0], y0 + m + size[1])
                placed.append(Placed(spec, rect, z0, size, piece.quarter_turns, scale))
                x += size[0]
        x += float(rng.uniform(*GROUP_GAP_RANGE_M))
    return placed


def _fill_model_shelf(rng: np.random.Generator, piece: Placed, level: Level, pool: list[CategorySpec],
                      fur: Optional[Furnisher], used: Counter[str], support: Surface) -> list[Placed]:
    """``_fill_shelf`` on a model's shelf (``support``): runs of upright primitive books and now and then another
    object (a model where one stands for its category), left to right along the back of the level, each where it
    rests on the shelf with room above; past a post or a gap of the model the walk moves on by ``SHELF_STEP_M``."""
    x0, x1, y0, y1, _, _ = _level_box(piece, level)
    z0 = piece.z0_m + support.support_m
    m = SURFACE_MARGIN_M
    book = CATEGORIES["book"]
    others = [s for s in pool if s.name != "book"]
    placed: list[Placed] = []

    def put(spec: CategorySpec, x: float, size: Vec3, scale: float, choice: Optional[ModelChoice]) -> bool:
        if x + size[0] > x1 - m or size[1] > y1 - y0 - 2 * m:
            return False
        rect = _to_world(piece, x, y0 + m, x + size[0], y0 + m + size[1])
        if not rests_on(support, piece, rect, size[2]):
            return False
        placed.append(Placed(spec, rect, z0, size, piece.quarter_turns, scale, choice))
        return True

    x = x0 + m
    while x < x1 - m:
        start = x
        if not others or rng.uniform() < BOOK_RUN_SHARE:
            for _ in range(int(rng.integers(BOOK_RUN[0], BOOK_RUN[1] + 1))):
                scale = float(rng.uniform())
                w, d, h = _sized(book, scale)
                if not put(book, x, (h, w, d), scale, None):
                    break
                x += h + BOOK_GAP_M
        else:
            spec = others[int(rng.integers(len(others)))]
            size, scale, choice = draw(rng, spec, fur, used + Counter(model_keys(placed)))
            if put(spec, x, size, scale, choice):
                x += size[0]
        x = x + float(rng.uniform(*GROUP_GAP_RANGE_M)) if x > start else x + SHELF_STEP_M
    return placed


def _scatter(rng: np.random.Generator, piece: Placed, level: Level, pool: list[CategorySpec],
             fur: Optional[Furnisher], used: Counter[str], support: Optional[Surface]) -> list[Placed]:
    """The drawn number of objects of the pool at random poses on the level, clear of each other; on a model,
    resting on ``support`` (a surface of the piece) and fitting under what is above."""
    x0, x1, y0, y1, z0, free = _level_box(piece, level)
    area = _to_world(piece, x0, y0, x1, y1)
    if support is not None:
        z0, free = piece.z0_m + support.support_m, math.inf
    m = SURFACE_MARGIN_M
    wanted = int(rng.integers(level.count[0], level.count[1] + 1))
    placed: list[Placed] = []
    for _ in range(wanted * SCATTER_TRIES):
        if len(placed) == wanted:
            break
        spec = pool[int(rng.integers(len(pool)))]
        size, scale, choice = draw(rng, spec, fur, used + Counter(model_keys(placed)))
        quarter, rect = draw_footprint(rng, size, area, m)
        if rect is None or size[2] > free - m:
            continue
        if support is not None and not rests_on(support, piece, rect, size[2]):
            continue
        if all(rect.gap_to(p.footprint) >= m for p in placed):
            placed.append(Placed(spec, rect, z0, size, quarter, scale, choice))
    return placed


__all__ = ["DRESSING_STREAM", "Level", "SURFACES", "dress_levels"]
