"""PASTURE additions to a home (``HomeConfig.hidden_objects``, ``uncommon_objects``): small objects hidden in the
compartments of furniture (``catalogue.HIDING_PLACES``) and uncommon objects on receptacle tops."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional, Sequence

import numpy as np

from sim_bridge.embedded.catalogue import (
    CATALOGUE,
    HIDING_PLACES,
    NOT_ON_TOPS,
    UNCOMMON_CATALOGUE,
    CategorySpec,
    HidingPlace,
)
from sim_bridge.embedded.furnishing import Furnisher, Surface, uncommon_catalogue
from sim_bridge.embedded.home_placement import (
    SURFACE_MARGIN_M,
    Placed,
    PlacedFurniture,
    draw,
    draw_footprint,
    number_object,
    quarter_turn,
    rests_on,
)
from sim_bridge.embedded.home_types import ObjectSpec, Rect

HIDDEN_PER_PLACE = 2  # hidden objects one hiding place holds at most


def _compartment(piece: Placed, place: HidingPlace) -> tuple[Rect, float, float]:
    """World footprint, floor height and ceiling height of a hiding place of a placed piece."""
    w, d, h = piece.size_m
    f = piece.footprint
    cx, cy = (f.x0 + f.x1) / 2.0, (f.y0 + f.y1) / 2.0
    corners = [quarter_turn((fx - 0.5) * w, (fy - 0.5) * d, piece.quarter_turns)
               for fx in (place.lo[0], place.hi[0]) for fy in (place.lo[1], place.hi[1])]
    xs, ys = [cx + c[0] for c in corners], [cy + c[1] for c in corners]
    rect = Rect(min(xs), min(ys), max(xs), max(ys))
    return rect, piece.z0_m + place.lo[2] * h, piece.z0_m + place.hi[2] * h


def _fit_small(rng: np.random.Generator, spec: CategorySpec, area: Rect, z0_m: float, max_height_m: float,
               taken: Sequence[Rect], fur: Optional[Furnisher],
               support: Optional[tuple[Surface, Placed]] = None) -> Optional[Placed]:
    """A pose of ``spec`` in ``area`` (margins kept, clear of ``taken``) no taller than the space, or None.

    ``support``: a surface of a model and the piece it belongs to; the object must rest on it and fit under it.
    """
    m = SURFACE_MARGIN_M
    for _ in range(10):
        size, scale, choice = draw(rng, spec, fur)
        quarter, rect = draw_footprint(rng, size, area, m)
        if rect is None or size[2] > max_height_m - m:
            continue
        if support is not None and not rests_on(support[0], support[1], rect, size[2]):
            continue
        if all(rect.gap_to(other) >= m for other in taken):
            return Placed(spec, rect, z0_m, size, quarter, scale, choice)
    return None


def hide_objects(rng: np.random.Generator, pieces: Sequence[PlacedFurniture], objects: list[ObjectSpec],
                  wanted: int, fur: Optional[Furnisher]) -> None:
    """Append up to ``wanted`` small objects in the hiding places of the furniture, up to two per piece.

    Even-numbered ones take a category the home has nowhere else (PASTURE "hidden": only the hidden instance
    exists), odd-numbered ones a category it already shows elsewhere (PASTURE "hidden + distractors").
    """
    places = [p for p in pieces if p.placed.spec.name in HIDING_PLACES]
    shown = {o.category for o in objects}
    hidden: set[str] = set()  # categories hidden so far: each at most once
    for k in rng.permutation(len(places)):
        piece = places[int(k)]
        place = HIDING_PLACES[piece.placed.spec.name]
        area, z0, z1 = _compartment(piece.placed, place)
        support: Optional[tuple[Surface, Placed]] = None
        if fur is not None and piece.placed.choice is not None:  # the model's own floor in the compartment
            surface = fur.compartment_surface(piece.placed.choice, place.lo, place.hi)
            if surface is None:
                continue
            support, z0, z1 = (surface, piece.placed), piece.placed.z0_m + surface.support_m, math.inf
        taken: list[Rect] = []
        # What already stands inside the piece below its top (the large homes' shelves, home_dressing).
        inside = [Rect(o.bbox_min_m[0], o.bbox_min_m[1], o.bbox_max_m[0], o.bbox_max_m[1]) for o in objects
                  if o.receptacle_id == piece.spec.object_id and abs(o.bbox_min_m[2] - piece.placed.top_m) > 1e-6]
        while len(hidden) < wanted and len(taken) < HIDDEN_PER_PLACE:
            want_shown = len(hidden) % 2 == 1
            pool = [c for c in CATALOGUE if c.placement == "receptacle" and c.name not in hidden
                    and c.name not in NOT_ON_TOPS and (c.name in shown) == want_shown
                    and (fur is None or fur.has(c.name))]
            pool = [c for c in pool if piece.room.room_type in c.room_types] or pool
            small = next((s for j in rng.permutation(len(pool))
                          if (s := _fit_small(rng, pool[int(j)], area, z0, z1 - z0, taken + inside, fur, support))
                          is not None), None)
            if small is None:
                break
            objects.append(replace(number_object(rng, small, piece.room, piece.spec.object_id, len(objects) + 1, fur),
                                   hidden_in=place.relation))
            hidden.add(small.spec.name)
            taken.append(small.footprint)


def add_uncommon(rng: np.random.Generator, pieces: Sequence[PlacedFurniture], objects: list[ObjectSpec],
                  wanted: int, fur: Optional[Furnisher]) -> None:
    """Append one object of each of up to ``wanted`` uncommon categories, on receptacle tops with room."""
    tops = [p for p in pieces if p.placed.spec.is_receptacle]
    if not tops:
        return
    catalogue = UNCOMMON_CATALOGUE if fur is None else uncommon_catalogue(fur)
    for k in rng.permutation(len(catalogue))[:wanted]:
        spec = catalogue[int(k)]
        for j in rng.permutation(len(tops)):
            piece = tops[int(j)]
            top_z = piece.placed.top_m
            taken = [Rect(o.bbox_min_m[0], o.bbox_min_m[1], o.bbox_max_m[0], o.bbox_max_m[1]) for o in objects
                     if o.receptacle_id == piece.spec.object_id and abs(o.bbox_min_m[2] - top_z) < 1e-6]
            on_model = (fur.surface(piece.placed.choice), piece.placed) \
                if fur is not None and piece.placed.choice is not None else None
            small = _fit_small(rng, spec, piece.placed.footprint, top_z, math.inf, taken, fur, on_model)
            if small is not None:
                objects.append(number_object(rng, small, piece.room, piece.spec.object_id, len(objects) + 1, fur))
                break


__all__ = ["HIDDEN_PER_PLACE", "add_uncommon", "hide_objects"]
