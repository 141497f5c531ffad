"""PASTURE's additions to the catalogue: uncommon categories and the hiding places of furniture.

Used only when ``HomeConfig`` asks for them (``uncommon_objects``, ``hidden_objects``); recipes in the frame of
``catalogue_recipes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

from goat_core.vocabulary import ROOM_TYPES
from sim_bridge.embedded.catalogue_recipes import CategorySpec, PartRecipe, Vec3, legs, part

# ---- PASTURE: uncommon categories and hiding places (used only when HomeConfig asks for them) ----
# Long-tail objects in the spirit of CoW's PASTURE "uncommon" split. They are kept out of CATALOGUE so that the
# default homes, the synonyms the episode generator may use and the ground-truth label set are unchanged; the
# home generator places them only for HomeConfig.uncommon_objects > 0. Their names share no word with a
# CATALOGUE category, so a goal naming one has a single right answer.

RUBBER_DUCK: tuple[PartRecipe, ...] = (
    part("sphere", (0.0, 0.0, 0.0), (1.0, 0.75, 0.6)),  # body
    part("sphere", (0.2, 0.45, 0.45), (0.8, 0.95, 1.0)),  # head
    part("box", (0.4, 0.9, 0.62), (0.6, 1.0, 0.72), trim=True),  # beak
)
HOURGLASS: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.08), trim=True),  # base plate
    part("sphere", (0.1, 0.1, 0.08), (0.9, 0.9, 0.5)),  # lower bulb
    part("sphere", (0.1, 0.1, 0.5), (0.9, 0.9, 0.92)),  # upper bulb
    part("box", (0.0, 0.0, 0.92), (1.0, 1.0, 1.0), trim=True),  # top plate
)
TROPHY: tuple[PartRecipe, ...] = (
    part("box", (0.15, 0.15, 0.0), (0.85, 0.85, 0.2), trim=True),  # plinth
    part("cylinder", (0.4, 0.4, 0.2), (0.6, 0.6, 0.5)),  # stem
    part("cylinder", (0.0, 0.0, 0.5), (1.0, 1.0, 1.0)),  # cup
)
TYPEWRITER: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 0.75, 0.65)),  # body
    part("box", (0.05, 0.75, 0.0), (0.95, 1.0, 0.3), trim=True),  # keys
    part("cylinder", (0.0, 0.05, 0.65), (1.0, 0.3, 0.9), axis="x", trim=True),  # platen roller
    part("box", (0.2, 0.12, 0.85), (0.8, 0.18, 1.0), trim=True),  # sheet of paper
)
METRONOME: tuple[PartRecipe, ...] = (
    part("box", (0.1, 0.1, 0.0), (0.9, 0.9, 0.85)),  # case
    part("box", (0.45, 0.9, 0.2), (0.55, 1.0, 1.0), trim=True),  # pendulum arm
)
GRAMOPHONE: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.3)),  # cabinet
    part("cylinder", (0.05, 0.05, 0.3), (0.95, 0.95, 0.36), trim=True),  # turntable
    part("box", (0.45, 0.45, 0.36), (0.55, 0.55, 0.6), trim=True),  # tone arm post
    part("sphere", (0.2, 0.2, 0.5), (1.0, 1.0, 1.0)),  # horn
)
PIGGY_BANK: tuple[PartRecipe, ...] = (
    part("capsule", (0.1, 0.0, 0.15), (0.9, 1.0, 0.9), axis="y"),  # body
    part("sphere", (0.2, 0.7, 0.75), (0.4, 0.9, 1.0)),  # ears
    part("sphere", (0.6, 0.7, 0.75), (0.8, 0.9, 1.0)),
) + legs(0.2, 0.8, 0.2, 0.8, 0.2, 0.15, trim=False)
ABACUS: tuple[PartRecipe, ...] = (
    part("box", (0.0, 0.0, 0.0), (1.0, 1.0, 0.1), trim=True),  # foot
    part("box", (0.0, 0.4, 0.1), (0.06, 0.6, 1.0)),  # side posts
    part("box", (0.94, 0.4, 0.1), (1.0, 0.6, 1.0)),
    part("box", (0.06, 0.4, 0.9), (0.94, 0.6, 1.0)),  # top bar
) + tuple(part("capsule", (0.06, 0.3, z), (0.94, 0.7, z + 0.12), axis="x") for z in (0.2, 0.42, 0.64))  # beads

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


__all__ = ["HIDING_PLACES", "HidingPlace", "UNCOMMON_CATALOGUE", "UNCOMMON_CATEGORIES"]
