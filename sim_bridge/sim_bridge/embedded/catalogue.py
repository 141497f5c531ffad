"""Object catalogue of the procedural homes: what each category looks like, where it goes, what it is called.

Every category is built from MuJoCo primitives after a recipe of ``catalogue_recipes`` (which also explains the
object frame); PASTURE's uncommon categories and hiding places are in ``catalogue_pasture``.

Room types, colours and materials are words from ``goat_core.vocabulary``; synonyms are the other names an
episode may use for a category (the agent resolves them through sentence embeddings, never through this file).
"""

from __future__ import annotations

from typing import Mapping

from goat_core.errors import SceneGenerationError
from goat_core.vocabulary import COLOURS, MATERIALS, ROOM_TYPES
from sim_bridge.embedded.catalogue_pasture import HIDING_PLACES, UNCOMMON_CATALOGUE, UNCOMMON_CATEGORIES, HidingPlace
from sim_bridge.embedded.catalogue_recipes import (
    APPLIANCE,
    BAG,
    BASKET,
    BATHTUB,
    BED,
    BENCH,
    BOTTLE,
    BOX,
    CABINET,
    CANDLE,
    CHAIR,
    CLOCK,
    CYLINDER,
    DESK,
    FRAME,
    FRIDGE,
    GLOBE,
    HEADPHONES,
    JAR,
    KETTLE,
    LAMP,
    LAPTOP,
    MUG,
    OFFICE_CHAIR,
    OTTOMAN,
    PIANO,
    PILLOW,
    POTTED,
    RACK,
    SCREEN,
    SHELF,
    SHOES,
    SOAP,
    SOFA,
    SPEAKER,
    STOOL,
    STOVE,
    TABLE,
    TEDDY,
    TOASTER,
    TOILET,
    TRASH,
    TREE,
    VASE,
    WARDROBE,
    WASHER,
    Axis,
    CategorySpec,
    PartRecipe,
    Placement,
    Shape,
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
    # ---- small objects of the large homes only (NOT_ON_TOPS): on seats, beds, benches, shoe racks, floors ----
    CategorySpec("pillow", ("bedroom", "living room"), (0.35, 0.35, 0.1), (0.55, 0.5, 0.16), PILLOW,
                 "receptacle", _SOFT_COLOURS, ("fabric", "leather"), ("cushion", "throw pillow", "scatter cushion")),
    CategorySpec("shoes", ("hallway", "bedroom"), (0.2, 0.25, 0.08), (0.26, 0.32, 0.14), SHOES, "receptacle",
                 ("black", "brown", "white", "red", "blue", "gray"), ("leather", "fabric", "plastic"),
                 ("pair of shoes", "sneakers", "footwear")),
    CategorySpec("bag", ("hallway", "bedroom", "office", "living room"), (0.28, 0.14, 0.28), (0.42, 0.24, 0.42),
                 BAG, "receptacle", ("black", "brown", "red", "blue", "gray", "green"), ("fabric", "leather"),
                 ("backpack", "rucksack", "tote")),
)

# Small objects only a large home's dressing and floor clutter place (on seats, beds, benches, chairs, shoe racks
# and floors), never on receptacle tops: the small homes and PASTURE's hiding places draw what they drew before.
NOT_ON_TOPS: frozenset[str] = frozenset({"pillow", "shoes", "bag"})

CATEGORIES: Mapping[str, CategorySpec] = {spec.name: spec for spec in CATALOGUE}


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


__all__ = ["CATALOGUE", "CATEGORIES", "HIDING_PLACES", "NOT_ON_TOPS", "UNCOMMON_CATALOGUE", "UNCOMMON_CATEGORIES",
           "Axis", "CategorySpec", "HidingPlace", "PartRecipe", "Placement", "Shape", "category", "synonyms",
           "validate_catalogue", "validate_pasture_catalogue"]
