"""Floor plans of the homes: rooms, doors and wall boxes, and the floor furniture must leave free.

Small homes (``HomeConfig.layout == "grid"``): a grid of rectangular rooms (2 rows up to 6 rooms, 3 rows above),
filled row by row, with column widths and row depths drawn from ``room_side_range_m``. Walls are boxes centred on
the grid lines; a random spanning tree of the room adjacency graph (plus ``extra_doors`` more edges) gets a door
gap each, so every room is reachable. Large homes (``"large"``): the plans of ``floorplan``, turned into rooms,
doors and walls here.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from goat_core.vocabulary import ROOM_TYPES
from sim_bridge.embedded import floorplan
from sim_bridge.embedded.home_config import DOOR_END_MARGIN_M, OPEN_EDGE_KEEPOUT_M, HomeConfig
from sim_bridge.embedded.home_types import Box, Door, Rect, Room

Vec2 = tuple[float, float]

MAX_ROOMS_IN_TWO_ROWS = 6
DOOR_CORRIDOR_PAD_M = 0.1  # the clear corridor in front of a door is this much wider than the door, each side
CORE_ROOM_TYPES = ("living room", "kitchen", "bedroom")  # every home has these before any other type


class _Plan(NamedTuple):
    cells: list[tuple[int, int]]  # (row, col) of each room
    xs: np.ndarray  # (cols + 1,) grid line x
    ys: np.ndarray  # (rows + 1,) grid line y


def grid_plan(rng: np.random.Generator, config: HomeConfig) -> tuple[list[Room], list[Door], list[Box]]:
    """Rooms, doors and walls of a small home's grid floor plan (module doc)."""
    plan = _floor_plan(rng, config)
    rooms = _rooms(rng, plan, config)
    doors = _doors(rng, plan, config)
    return rooms, doors, _walls(plan, doors, config)


def large_plan(rng: np.random.Generator, config: HomeConfig) \
        -> tuple[list[Room], list[Door], list[Box], dict[int, list[Rect]]]:
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
    keepouts: dict[int, list[Rect]] = {}
    d = OPEN_EDGE_KEEPOUT_M + half_t
    for i, cell in enumerate(plan.cells):
        for j, other in enumerate(plan.cells):
            if i == j or not plan.is_open(cell.room, other.room):
                continue
            for seg in floorplan.shared_segments_of_cells(cell, other):
                strip = Rect(seg.lo, seg.at - d, seg.hi, seg.at + d) if seg.axis == "x" else \
                    Rect(seg.at - d, seg.lo, seg.at + d, seg.hi)
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


def door_corridors(room: Room, doors: list[Door], config: HomeConfig) -> list[Rect]:
    """The part of the room in front of each of its doors that furniture must leave free."""
    interior = Rect(room.min_xy_m[0], room.min_xy_m[1], room.max_xy_m[0], room.max_xy_m[1])
    half_w = config.door_width_m / 2.0 + DOOR_CORRIDOR_PAD_M
    depth = config.door_clearance_m + config.wall_thickness_m / 2.0
    corridors = []
    for door in doors:
        if room.room_id not in door.room_ids:
            continue
        x, y = door.centre_xy_m
        rect = Rect(x - half_w, y - depth, x + half_w, y + depth) if door.axis == "x" else \
            Rect(x - depth, y - half_w, x + depth, y + half_w)
        corridors.append(Rect(max(rect.x0, interior.x0), max(rect.y0, interior.y0),
                               min(rect.x1, interior.x1), min(rect.y1, interior.y1)))
    return corridors


__all__ = ["door_corridors", "grid_plan", "large_plan"]
