"""Procedural homes: determinism, catalogue, floor plan, placement rules and config validation."""

from __future__ import annotations

import dataclasses
import itertools
from collections import deque

import pytest

from goat_core.errors import SceneGenerationError
from goat_core.vocabulary import COLOURS, MATERIALS, ROOM_TYPES
from sim_bridge.embedded.catalogue import CATALOGUE, CATEGORIES, category, synonyms, validate_catalogue
from sim_bridge.embedded.home import Home, HomeConfig, ObjectSpec, generate_home

SEEDS = (0, 1, 2, 3, 11)
ROOM_COUNTS = (3, 5, 8, 9)


@pytest.fixture(scope="module")
def homes() -> dict[tuple[int, int], Home]:
    # Primitive homes: these tests check the catalogue's recipes (tests/test_furniture.py checks furnished homes).
    return {(seed, n): generate_home(seed, HomeConfig(num_rooms=n, furniture="primitive"))
            for seed in SEEDS for n in ROOM_COUNTS}


def _footprint(obj: ObjectSpec) -> tuple[float, float, float, float]:
    return obj.bbox_min_m[0], obj.bbox_min_m[1], obj.bbox_max_m[0], obj.bbox_max_m[1]


def _gap(a: ObjectSpec, b: ObjectSpec) -> float:
    ax0, ay0, ax1, ay1 = _footprint(a)
    bx0, by0, bx1, by1 = _footprint(b)
    dx = max(bx0 - ax1, ax0 - bx1, 0.0)
    dy = max(by0 - ay1, ay0 - by1, 0.0)
    return float((dx * dx + dy * dy) ** 0.5)


def test_same_seed_gives_the_same_home() -> None:
    assert generate_home(42) == generate_home(42)


@pytest.mark.parametrize("seed_a, seed_b", [(0, 1), (5, 6), (100, 7)])
def test_different_seeds_give_different_homes(seed_a: int, seed_b: int) -> None:
    a, b = generate_home(seed_a), generate_home(seed_b)
    assert a.rooms != b.rooms
    assert [o.category for o in a.objects] != [o.category for o in b.objects]


def test_catalogue_is_large_and_consistent() -> None:
    validate_catalogue()
    assert len(CATALOGUE) >= 40
    assert len(CATEGORIES) == len(CATALOGUE), "category names must be unique"
    placements = {spec.placement for spec in CATALOGUE}
    assert placements == {"wall", "floor", "receptacle"}
    assert sum(spec.is_receptacle for spec in CATALOGUE) >= 8
    names = set(CATEGORIES)
    all_synonyms = [s for spec in CATALOGUE for s in spec.synonyms]
    assert not names & set(all_synonyms), "a synonym must not name another category"
    assert len(all_synonyms) == len(set(all_synonyms)), "a synonym must point at one category"
    assert synonyms("couch") == ("sofa", "settee", "loveseat")


def test_unknown_category_is_named() -> None:
    with pytest.raises(SceneGenerationError, match="spaceship"):
        category("spaceship")


def test_validate_catalogue_rejects_unknown_words() -> None:
    bad = dataclasses.replace(CATEGORIES["mug"], colours=("mauve",))
    with pytest.raises(SceneGenerationError, match="mauve"):
        validate_catalogue((bad,))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("num_rooms", ROOM_COUNTS)
def test_rooms_have_distinct_types_and_are_connected_by_doors(homes: dict[tuple[int, int], Home], seed: int,
                                                              num_rooms: int) -> None:
    home = homes[(seed, num_rooms)]
    types = [room.room_type for room in home.rooms]
    assert len(types) == num_rooms
    assert set(types) <= set(ROOM_TYPES)
    distinct = min(num_rooms, len(ROOM_TYPES))
    assert len(set(types)) == distinct
    neighbours: dict[int, set[int]] = {room.room_id: set() for room in home.rooms}
    for door in home.doors:
        a, b = door.room_ids
        neighbours[a].add(b)
        neighbours[b].add(a)
    seen, queue = {0}, deque([0])
    while queue:
        for nxt in neighbours[queue.popleft()] - seen:
            seen.add(nxt)
            queue.append(nxt)
    assert seen == set(neighbours)
    assert len(home.doors) >= num_rooms - 1


@pytest.mark.parametrize("seed", SEEDS)
def test_door_gaps_are_free_of_walls(homes: dict[tuple[int, int], Home], seed: int) -> None:
    home = homes[(seed, 5)]
    for door in home.doors:
        x, y = door.centre_xy_m
        for wall in home.walls:
            inside = wall.min_m[0] < x < wall.max_m[0] and wall.min_m[1] < y < wall.max_m[1]
            assert not inside, f"door {door} is walled up"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("num_rooms", ROOM_COUNTS)
def test_floor_objects_keep_their_gaps_and_stay_in_their_rooms(homes: dict[tuple[int, int], Home], seed: int,
                                                               num_rooms: int) -> None:
    home = homes[(seed, num_rooms)]
    floor = [o for o in home.objects if o.receptacle_id is None]
    assert floor
    for a, b in itertools.combinations(floor, 2):
        if a.room_id == b.room_id:
            assert _gap(a, b) >= home.config.furniture_gap_m - 1e-9, (a.object_id, b.object_id)
    for obj in floor:
        room = home.rooms[obj.room_id]
        x0, y0, x1, y1 = _footprint(obj)
        assert room.min_xy_m[0] <= x0 < x1 <= room.max_xy_m[0]
        assert room.min_xy_m[1] <= y0 < y1 <= room.max_xy_m[1]
        assert obj.bbox_min_m[2] == 0.0
        assert obj.room_type == room.room_type


@pytest.mark.parametrize("seed", SEEDS)
def test_small_objects_stand_on_their_receptacles(homes: dict[tuple[int, int], Home], seed: int) -> None:
    home = homes[(seed, 5)]
    small = [o for o in home.objects if o.receptacle_id is not None]
    assert small
    for obj in small:
        support = home.object(obj.receptacle_id or "")
        assert support.is_receptacle and support.receptacle_id is None
        assert obj.bbox_min_m[2] == pytest.approx(support.bbox_max_m[2])
        sx0, sy0, sx1, sy1 = _footprint(support)
        x0, y0, x1, y1 = _footprint(obj)
        assert sx0 <= x0 < x1 <= sx1 and sy0 <= y0 < y1 <= sy1
        assert CATEGORIES[obj.category].placement == "receptacle"
    for a, b in itertools.combinations(small, 2):
        if a.receptacle_id == b.receptacle_id:
            assert _gap(a, b) > 0.0, (a.object_id, b.object_id)


@pytest.mark.parametrize("seed", SEEDS)
def test_object_fields_are_consistent(homes: dict[tuple[int, int], Home], seed: int) -> None:
    home = homes[(seed, 8)]
    ids = [o.instance_id for o in home.objects]
    assert ids == list(range(1, len(ids) + 1))
    assert len({o.object_id for o in home.objects}) == len(ids)
    for obj in home.objects:
        spec = CATEGORIES[obj.category]
        assert obj.colour in spec.colours and obj.colour in COLOURS
        assert obj.material in spec.materials and obj.material in MATERIALS
        assert obj.size_label in ("small", "medium", "large")
        assert home.rooms[obj.room_id].room_type in spec.room_types
        assert obj.is_receptacle == spec.is_receptacle
        assert len(obj.parts) == len(spec.parts)
        for part in obj.parts:
            for axis in range(3):
                lo = part.centre_m[axis] - part.half_size_m[axis]
                hi = part.centre_m[axis] + part.half_size_m[axis]
                assert obj.bbox_min_m[axis] - 1e-9 <= lo < hi <= obj.bbox_max_m[axis] + 1e-9


def test_homes_hold_distractors_of_one_category() -> None:
    home = generate_home(3, HomeConfig(num_rooms=8, furniture="primitive"))
    counts: dict[str, int] = {}
    for obj in home.objects:
        counts[obj.category] = counts.get(obj.category, 0) + 1
    assert max(counts.values()) >= 2
    assert len(home.objects) >= 20


@pytest.mark.parametrize(
    "field, value",
    [
        ("num_rooms", 2), ("num_rooms", 10), ("num_rooms", 4.5),
        ("room_side_range_m", (1.0, 5.0)), ("room_side_range_m", (5.0, 3.0)),
        ("door_width_m", 0.2), ("wall_height_m", 0.0), ("wall_thickness_m", -0.1),
        ("furniture_per_room", (3, 1)), ("furniture_per_room", (-1, 2)),
        ("small_objects_per_receptacle", (0.5, 2)), ("robot_radius_m", float("nan")),
        ("furniture_gap_m", 0.2), ("door_clearance_m", 0.1), ("extra_doors", -1),
    ],
)
def test_bad_config_names_the_field(field: str, value: object) -> None:
    with pytest.raises(SceneGenerationError, match=field):
        HomeConfig(**{field: value})


def test_too_much_furniture_for_the_floor_raises() -> None:
    config = HomeConfig(num_rooms=3, room_side_range_m=(3.0, 3.0), furniture_per_room=(12, 12))
    with pytest.raises(SceneGenerationError, match="furniture_per_room"):
        generate_home(0, config)


def test_negative_seed_raises() -> None:
    with pytest.raises(SceneGenerationError, match="-3"):
        generate_home(-3)
