"""Floor plans of real-scale homes (``HomeConfig.layout == "large"``): 12-16 rooms along a hallway.

The plan is a house of three bands along x: rooms at the back (top band), a hallway band, rooms at the front
(bottom band). Its left end is an open-plan public block: dining room and kitchen in the top band, the living
room in the bottom band and the hallway band in front of the kitchen (an L-shaped room), with no walls between
them or towards the hallway. Right of it, private rooms (bedrooms, bathrooms, an office, a laundry room) of sizes
drawn by type line both bands and open onto the hallway, which ends in a dead end. Some bedrooms have a closet
carved out of their back corner (the bedroom becomes L-shaped, the closet a dead end opening into it); a bathroom
next to a bedroom may open into the bedroom instead of the hallway (an en-suite). Door gaps lie anywhere along
their wall, keeping ``DOOR_END_MARGIN_M`` from its ends.

A room is made of axis-aligned cells; ``Room`` holds the largest one as its main rectangle and the others as
``extra_rects``. Cells lie between wall centre lines; walls stand on every cell side that borders the outside or a
room of another open group, cut at doors.

Sizes (m, m²) follow ordinary homes, on their larger side (HM3D's homes have about 112 m² navigable): bedroom
12-16 m², bathroom 4-8, living room 34-46 with its strip of the hallway band, kitchen 12-18, dining room 12-18,
office 11-15, laundry room 4-7, closet 2-3; the hallway is 1.4-1.8 m wide. 8-11 private rooms, so 12-16 rooms in
all with closets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from goat_core.errors import SceneGenerationError

# Room areas by type (m²) and the band depths (m).
ROOM_AREA_RANGE_M2: dict[str, tuple[float, float]] = {
    "bedroom": (12.0, 16.0), "bathroom": (4.0, 8.0), "office": (11.0, 15.0), "laundry room": (4.0, 7.0),
    "kitchen": (12.0, 18.0), "dining room": (12.0, 18.0), "closet": (1.8, 3.0),
}
BAND_DEPTH_RANGE_M = (4.0, 5.2)
HALLWAY_WIDTH_RANGE_M = (1.4, 1.8)
LIVING_AREA_RANGE_M2 = (34.0, 46.0)  # with its share of the hallway band in front of the kitchen
MIN_ROOM_WIDTH_M = 1.75  # a door (1 m) with its margins (0.3 m) and the wall thickness fits
CLOSET_WIDTH_RANGE_M = (1.8, 2.1)
CLOSET_DEPTH_RANGE_M = (1.0, 1.4)
CLOSET_PROBABILITY = 0.5  # share of bedrooms wide enough that get a closet
MIN_BEDROOM_BESIDE_CLOSET_M = 2.4
EN_SUITE_PROBABILITY = 0.35
PRIVATE_ROOMS_RANGE = (8, 11)  # inclusive: bedrooms, bathrooms, office, laundry room (closets come on top)
MAX_ROOMS = 16
OPEN_GROUP = ("living room", "kitchen", "dining room", "hallway")  # no walls between these


class Cell(NamedTuple):
    """A rectangle of a room between wall centre lines."""

    room: int
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class PlanRoom:
    room_type: str
    open_group: bool  # one of the open-plan rooms (no walls between them)


@dataclass(frozen=True)
class FloorPlan:
    """Rooms as cells, and the room pairs that get a door (the others meet at walls or in the open)."""

    rooms: tuple[PlanRoom, ...]
    cells: tuple[Cell, ...]
    door_pairs: tuple[tuple[int, int], ...]

    def cells_of(self, room: int) -> list[Cell]:
        return [c for c in self.cells if c.room == room]

    def is_open(self, a: int, b: int) -> bool:
        """True when rooms a and b meet without a wall."""
        return a == b or (self.rooms[a].open_group and self.rooms[b].open_group)


def _private_types(rng: np.random.Generator) -> list[str]:
    n = int(rng.integers(PRIVATE_ROOMS_RANGE[0], PRIVATE_ROOMS_RANGE[1] + 1))
    types = ["bedroom", "bathroom"]
    if rng.uniform() < 0.6:
        types.append("office")
    if rng.uniform() < 0.6:
        types.append("laundry room")
    while len(types) < n:
        types.append("bedroom" if rng.uniform() < 0.65 else "bathroom")
    types = types[:n]
    return [types[int(i)] for i in rng.permutation(len(types))]


def _width(rng: np.random.Generator, room_type: str, depth_m: float) -> float:
    lo, hi = ROOM_AREA_RANGE_M2[room_type]
    return max(MIN_ROOM_WIDTH_M, float(rng.uniform(lo, hi)) / depth_m)


def generate_floor_plan(rng: np.random.Generator) -> FloorPlan:
    """A floor plan drawn from ``rng`` (module doc)."""
    d_front = float(rng.uniform(*BAND_DEPTH_RANGE_M))
    d_back = float(rng.uniform(*BAND_DEPTH_RANGE_M))
    hall = float(rng.uniform(*HALLWAY_WIDTH_RANGE_M))
    y_hall, y_back = d_front, d_front + hall
    y_top = y_back + d_back
    rooms: list[PlanRoom] = []
    cells: list[Cell] = []
    doors: list[tuple[int, int]] = []

    def add(room_type: str) -> int:
        rooms.append(PlanRoom(room_type, room_type in OPEN_GROUP))
        return len(rooms) - 1

    # The open-plan public block.
    w_dining, w_kitchen = _width(rng, "dining room", d_back), _width(rng, "kitchen", d_back)
    w_living = float(rng.uniform(*LIVING_AREA_RANGE_M2)) / (d_front + hall)
    dining, kitchen, living, hallway = add("dining room"), add("kitchen"), add("living room"), add("hallway")
    cells.append(Cell(dining, 0.0, y_back, w_dining, y_top))
    cells.append(Cell(kitchen, w_dining, y_back, w_dining + w_kitchen, y_top))
    cells.append(Cell(living, 0.0, 0.0, w_living, y_hall))
    # Where the hallway proper starts: at the end of the kitchen when the living room reaches further (its
    # front part and its strip of the hallway band make an L), else a little before the living room's end (the
    # strip is the shorter leg of the L).
    x_hall = w_dining + w_kitchen if w_living > w_dining + w_kitchen else \
        max(MIN_ROOM_WIDTH_M, w_living - float(rng.uniform(1.0, 2.0)))
    cells.append(Cell(living, 0.0, y_hall, x_hall, y_back))
    # Private rooms, each to the band that ends first.
    ends = {"back": w_dining + w_kitchen, "front": w_living}
    band_rooms: dict[str, list[tuple[str, float]]] = {"back": [], "front": []}
    for room_type in _private_types(rng):
        band = min(ends, key=lambda b: ends[b])
        width = _width(rng, room_type, d_back if band == "back" else d_front)
        band_rooms[band].append((room_type, width))
        ends[band] += width
    # Both bands end at the same x: a gap of a room's size (or a band without private rooms) gets a laundry room
    # or bathroom, what is left widens the widest room of the shorter band.
    short = min(ends, key=lambda b: ends[b])
    gap = max(ends.values()) - ends[short]
    if gap >= MIN_ROOM_WIDTH_M + 0.2 or not band_rooms[short]:
        filler = "laundry room" if not any(t == "laundry room" for b in band_rooms.values() for t, _ in b) \
            else "bathroom"
        depth = d_back if short == "back" else d_front
        width = max(MIN_ROOM_WIDTH_M, min(gap, ROOM_AREA_RANGE_M2[filler][1] / depth))
        band_rooms[short].append((filler, width))
        ends[short] += width
    short = min(ends, key=lambda b: ends[b])
    gap = max(ends.values()) - ends[short]
    k = max(range(len(band_rooms[short])), key=lambda i: band_rooms[short][i][1])
    band_rooms[short][k] = (band_rooms[short][k][0], band_rooms[short][k][1] + gap)
    x_end = max(ends.values())
    cells.append(Cell(hallway, x_hall, y_hall, x_end, y_back))
    total_band, made = sum(len(b) for b in band_rooms.values()), 0
    for band, (y0, y1) in (("back", (y_back, y_top)), ("front", (0.0, y_hall))):
        x = w_dining + w_kitchen if band == "back" else w_living
        previous: Optional[tuple[str, int]] = None
        last = len(band_rooms[band]) - 1
        for k_room, (room_type, width) in enumerate(band_rooms[band]):
            x1 = x_end if last == k_room else x + width
            room = add(room_type)
            closet_fits = width >= CLOSET_WIDTH_RANGE_M[0] + MIN_BEDROOM_BESIDE_CLOSET_M
            made += 1
            planned = len(rooms) + total_band - made  # rooms once every band room is made, closets so far included
            if room_type == "bedroom" and closet_fits and rng.uniform() < CLOSET_PROBABILITY \
                    and planned < MAX_ROOMS:
                cw = float(rng.uniform(CLOSET_WIDTH_RANGE_M[0], min(CLOSET_WIDTH_RANGE_M[1],
                                                                     width - MIN_BEDROOM_BESIDE_CLOSET_M)))
                cd = float(rng.uniform(*CLOSET_DEPTH_RANGE_M))
                left = bool(rng.uniform() < 0.5)
                cx0, cx1 = (x, x + cw) if left else (x1 - cw, x1)
                bx0, bx1 = (x + cw, x1) if left else (x, x1 - cw)
                closet = add("closet")
                far = y1 if band == "back" else y0  # the closet sits in the back corner, away from the hallway
                cy0, cy1 = (far - cd, far) if band == "back" else (far, far + cd)
                cells.append(Cell(room, bx0, y0, bx1, y1))  # main part: the full depth beside the closet
                ey0, ey1 = (y0, cy0) if band == "back" else (cy1, y1)
                cells.append(Cell(room, cx0, ey0, cx1, ey1))  # in front of the closet: the L's foot
                cells.append(Cell(closet, cx0, cy0, cx1, cy1))
                doors.append((room, closet))
            else:
                cells.append(Cell(room, x, y0, x1, y1))
            en_suite = room_type == "bathroom" and previous is not None and previous[0] == "bedroom" \
                and rng.uniform() < EN_SUITE_PROBABILITY
            doors.append((previous[1], room) if en_suite and previous is not None else (hallway, room))
            previous = (room_type, room)
            x = x1
    if not 8 <= len(rooms) <= MAX_ROOMS:
        raise SceneGenerationError(f"floor plan drew {len(rooms)} rooms, outside 8-{MAX_ROOMS}")
    return FloorPlan(rooms=tuple(rooms), cells=tuple(cells), door_pairs=tuple(doors))


class Segment(NamedTuple):
    """A piece of a cell side: the line (axis the side runs along, its coordinate) and its extent."""

    axis: str  # "x": a side along x at y = at; "y": along y at x = at
    at: float
    lo: float
    hi: float


def _sides(cell: Cell) -> list[tuple[Segment, int]]:
    """The four sides of a cell, each with the direction (+1/-1) its neighbour lies in."""
    return [(Segment("x", cell.y0, cell.x0, cell.x1), -1), (Segment("x", cell.y1, cell.x0, cell.x1), 1),
            (Segment("y", cell.x0, cell.y0, cell.y1), -1), (Segment("y", cell.x1, cell.y0, cell.y1), 1)]


def _facing(cell: Cell, side: Segment, direction: int, other: Cell) -> Optional[tuple[float, float]]:
    """The extent along ``side`` that ``other`` shares with it from the ``direction`` side, or None."""
    if side.axis == "x":
        touching = abs((other.y0 if direction > 0 else other.y1) - side.at) < 1e-9
        lo, hi = max(side.lo, other.x0), min(side.hi, other.x1)
    else:
        touching = abs((other.x0 if direction > 0 else other.x1) - side.at) < 1e-9
        lo, hi = max(side.lo, other.y0), min(side.hi, other.y1)
    return (lo, hi) if touching and hi - lo > 1e-9 else None


def shared_segments_of_cells(a: Cell, b: Cell) -> list[Segment]:
    """The pieces of side cells a and b share."""
    found = []
    for side, direction in _sides(a):
        extent = _facing(a, side, direction, b)
        if extent is not None:
            found.append(Segment(side.axis, side.at, *extent))
    return found


def shared_segments(plan: FloorPlan, a: int, b: int) -> list[Segment]:
    """The pieces of wall line rooms a and b share."""
    return [seg for ca in plan.cells_of(a) for cb in plan.cells_of(b) for seg in shared_segments_of_cells(ca, cb)]


def wall_segments(plan: FloorPlan) -> list[Segment]:
    """Every piece of cell side that needs a wall: towards the outside, or towards a room of another group
    (emitted once, by the lower-numbered cell)."""
    walls: list[Segment] = []
    for i, cell in enumerate(plan.cells):
        for side, direction in _sides(cell):
            covered: list[tuple[float, float]] = []
            for j, other in enumerate(plan.cells):
                if j == i:
                    continue
                extent = _facing(cell, side, direction, other)
                if extent is None:
                    continue
                covered.append(extent)
                if not plan.is_open(cell.room, other.room) and i < j:
                    walls.append(Segment(side.axis, side.at, *extent))
            walls.extend(Segment(side.axis, side.at, lo, hi) for lo, hi in _uncovered(side.lo, side.hi, covered))
    return _merge(walls)


def _uncovered(lo: float, hi: float, covered: list[tuple[float, float]]) -> list[tuple[float, float]]:
    pieces, start = [], lo
    for a, b in sorted(covered):
        if a > start + 1e-9:
            pieces.append((start, a))
        start = max(start, b)
    if hi > start + 1e-9:
        pieces.append((start, hi))
    return pieces


def _merge(segments: list[Segment]) -> list[Segment]:
    """Collinear pieces that touch joined into one (fewer, longer wall boxes)."""
    merged: list[Segment] = []
    for seg in sorted(segments, key=lambda s: (s.axis, round(s.at, 6), s.lo)):
        last = merged[-1] if merged else None
        if last is not None and last.axis == seg.axis and abs(last.at - seg.at) < 1e-9 and seg.lo <= last.hi + 1e-9:
            merged[-1] = Segment(last.axis, last.at, last.lo, max(last.hi, seg.hi))
        else:
            merged.append(seg)
    return merged


def door_position(rng: np.random.Generator, plan: FloorPlan, a: int, b: int, door_width_m: float,
                  end_margin_m: float) -> tuple[Segment, float]:
    """The shared wall piece of rooms a and b a door goes in and the door's centre along it (uniform over
    the positions that keep ``end_margin_m`` of wall on both sides)."""
    half = door_width_m / 2.0 + end_margin_m
    options = [s for s in shared_segments(plan, a, b) if s.hi - s.lo >= 2.0 * half]
    if not options:
        raise SceneGenerationError(f"floor plan: rooms {a} ({plan.rooms[a].room_type}) and {b} "
                                   f"({plan.rooms[b].room_type}) share no wall long enough for a door")
    seg = options[int(rng.integers(len(options)))]
    return seg, float(rng.uniform(seg.lo + half, seg.hi - half))


def cell_area_m2(cell: Cell) -> float:
    return (cell.x1 - cell.x0) * (cell.y1 - cell.y0)


def main_cell(plan: FloorPlan, room: int) -> Cell:
    return max(plan.cells_of(room), key=cell_area_m2)


__all__ = ["Cell", "FloorPlan", "PlanRoom", "Segment", "door_position", "generate_floor_plan", "main_cell",
           "shared_segments", "shared_segments_of_cells", "wall_segments"]
