"""Procedural homes from a seed: a floor plan of rooms joined by doors, furniture, and small objects on top.

``generate_home`` puts the parts together, each in its own module:

* ``home_config``: the settings (``HomeConfig``) and the home kinds selectable by name (``--homes``);
* ``home_layout``: the floor plan, rooms, doors and wall boxes (a grid of rooms for the small homes, the plans of
  ``floorplan`` for the large ones) and the floor furniture must leave free in front of doors;
* ``home_placement``: furniture, floor clutter and the small objects on receptacle tops;
* ``home_dressing``: in the large homes, small objects on shelves, beds, sofas and other levels of furniture;
* ``home_pasture``: PASTURE's hidden and uncommon objects, drawn from random streams of their own;
* ``home_reach``: the large homes keep only objects with a view point (every object a reachable goal);
* ``home_types``: what a home is made of (rooms, doors, walls, objects).

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

from collections import Counter

import numpy as np

from goat_core.errors import SceneGenerationError
from sim_bridge.embedded.furnishing import furnisher
from sim_bridge.embedded.home_config import (
    DOOR_END_MARGIN_M,
    FLOOR_CLUTTER,
    FURNITURE_KINDS,
    FURNITURE_TAG_PATTERN,
    HOME_KINDS,
    LARGE_FURNITURE_M2_PER_PIECE,
    LARGE_HOME_FIELDS,
    LAYOUTS,
    OPEN_EDGE_KEEPOUT_M,
    STRETCH_BASE_RADIUS_M,
    FurnitureKind,
    HomeConfig,
    Layout,
    furniture_fields,
    furniture_tag,
    home_config_for,
    large_home_config,
    with_furniture_of,
)
from sim_bridge.embedded.home_dressing import DRESSING_STREAM, dress_levels
from sim_bridge.embedded.home_layout import door_corridors, grid_plan, large_plan
from sim_bridge.embedded.home_pasture import add_uncommon, hide_objects
from sim_bridge.embedded.home_placement import (
    PlacedFurniture,
    dress_receptacle,
    floor_clutter,
    furnish_room,
    model_keys,
    number_object,
    room_config,
)
from sim_bridge.embedded.home_reach import reachable_only
from sim_bridge.embedded.home_types import Box, Door, Home, ObjectSpec, Part, Rect, Room, SizeLabel

# Random streams of the optional PASTURE additions, separate from the main one so that a home with them is the
# default home of the same seed plus the added objects (numbered after the others).
HIDDEN_STREAM = 1
UNCOMMON_STREAM = 2
_DEFAULT_CONFIG = HomeConfig()  # the small homes of primitives


def generate_home(seed: int, config: HomeConfig = _DEFAULT_CONFIG) -> Home:
    """A furnished home; the same seed and config give the same home."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SceneGenerationError(f"home seed must be a non-negative integer, got {seed!r}")
    fur = furnisher(config.furniture_libraries, config.furniture_dir) if config.furniture == "furnished" else None
    rng = np.random.default_rng(seed)
    dressing_rng = np.random.default_rng([seed, DRESSING_STREAM])
    open_keepouts: dict[int, list[Rect]] = {}
    if config.layout == "large":
        rooms, doors, walls, open_keepouts = large_plan(rng, config)
    else:
        rooms, doors, walls = grid_plan(rng, config)
    objects: list[ObjectSpec] = []
    pieces: list[PlacedFurniture] = []
    used: Counter[str] = Counter()  # model keys of a furnished home: a second instance looks unlike the first
    for room in rooms:
        keepouts = door_corridors(room, doors, config) + open_keepouts.get(room.room_id, [])
        furniture = furnish_room(rng, room, keepouts, room_config(room, config), fur, used)
        used.update(model_keys(furniture))
        if config.floor_clutter_m2_per_object > 0.0:
            clutter = floor_clutter(rng, room, keepouts, furniture, config, fur, used)
            used.update(model_keys(clutter))
            furniture = furniture + clutter
        for piece in furniture:
            receptacle = number_object(rng, piece, room, None, len(objects) + 1, fur)
            objects.append(receptacle)
            pieces.append(PlacedFurniture(room, piece, receptacle))
            if piece.spec.is_receptacle:
                dressed = dress_receptacle(rng, piece, room, config, fur, used)
                used.update(model_keys(dressed))
                for small in dressed:
                    objects.append(number_object(rng, small, room, receptacle.object_id, len(objects) + 1, fur))
            if config.dress_surfaces:
                on_levels = dress_levels(dressing_rng, piece, room, fur, used, config.primitive_small_objects)
                used.update(model_keys(on_levels))
                for small in on_levels:
                    objects.append(number_object(dressing_rng, small, room, receptacle.object_id,
                                                 len(objects) + 1, fur))
    if config.hidden_objects:
        hide_objects(np.random.default_rng([seed, HIDDEN_STREAM]), pieces, objects, config.hidden_objects, fur)
    if config.uncommon_objects:
        add_uncommon(np.random.default_rng([seed, UNCOMMON_STREAM]), pieces, objects, config.uncommon_objects,
                     fur)
    home = Home(seed=seed, config=config, rooms=tuple(rooms), doors=tuple(doors), walls=tuple(walls),
                objects=tuple(objects))
    return reachable_only(home) if config.layout == "large" else home


__all__ = ["Box", "DOOR_END_MARGIN_M", "Door", "FLOOR_CLUTTER", "FURNITURE_KINDS", "FURNITURE_TAG_PATTERN",
           "FurnitureKind", "HIDDEN_STREAM", "HOME_KINDS", "Home", "HomeConfig", "LARGE_FURNITURE_M2_PER_PIECE",
           "LARGE_HOME_FIELDS", "LAYOUTS", "Layout", "OPEN_EDGE_KEEPOUT_M", "ObjectSpec", "Part", "Rect", "Room",
           "STRETCH_BASE_RADIUS_M", "SizeLabel", "UNCOMMON_STREAM", "furniture_fields", "furniture_tag",
           "generate_home", "home_config_for", "large_home_config", "with_furniture_of"]
