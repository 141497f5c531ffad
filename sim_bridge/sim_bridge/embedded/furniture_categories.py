"""Which Sweet Home 3D models stand for which category of the home catalogue (``catalogue.CATALOGUE``).

A model is matched by its English catalogue name (lower case, exact), optionally limited to a Sweet Home 3D
category ("Kitchen") and a range of heights, so the rules also apply to libraries added by the user. A model
matched by no rule is not used (outdoor furniture, vehicles, animals, wall fixtures...). Categories with no
model in the default libraries (BlendSwap-CC-0 and BlendSwap-CC-BY) are listed in ``UNMODELLED_DEFAULT``; a
furnished home leaves them out (a test checks the list against the installed libraries).

Uncommon objects (PASTURE's long-tail split) in a furnished home are models with no category of the catalogue:
``UNCOMMON_MODEL_CATEGORIES`` names them the way a person would, each name sharing no word with a catalogue
category.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional

from sim_bridge.embedded.furniture_library import CatalogueEntry


@dataclass(frozen=True)
class ModelRule:
    """Models named one of ``names`` (and in ``sh3d_categories`` if given, within the heights) are ``category``."""

    category: str
    names: tuple[str, ...]
    sh3d_categories: tuple[str, ...] = ()
    min_height_m: float = 0.0
    max_height_m: float = 10.0
    max_width_m: float = 10.0

    def matches(self, entry: CatalogueEntry) -> bool:
        return (entry.name.strip().lower() in self.names
                and (not self.sh3d_categories or entry.sh3d_category in self.sh3d_categories)
                and entry.elevation_m == 0.0  # hung on a wall or from the ceiling: not furniture that stands
                and self.min_height_m <= entry.size_m[2] <= self.max_height_m
                and max(entry.size_m[0], entry.size_m[1]) <= self.max_width_m)


_INDOOR = ("Living room", "Bedroom", "Kitchen", "Bathroom", "Office", "Miscellaneous", "Lights")
_PLANTS = ("plant", "little plant", "indoor plant", "decorative plant", "spider plant", "succulent plant",
           "cactus", "bamboo", "spathiphyllum", "yucca", "orchids")

# First match wins: the specific names come before the generic ones.
MODEL_RULES: tuple[ModelRule, ...] = (
    ModelRule("couch", ("sofa", "couch", "corner sofa", "winchester sofa"), _INDOOR, max_width_m=2.6),
    ModelRule("armchair", ("armchair", "winchester armchair"), _INDOOR),
    ModelRule("office chair", ("office chair", "swivel chair")),
    ModelRule("chair", ("chair", "oak chair", "chair with cushion", "osaka chair", "folding chair"),
              ("Living room", "Kitchen", "Office", "Bedroom"), min_height_m=0.7),
    ModelRule("bed", ("bed", "double bed", "child bed"), ("Bedroom",)),
    ModelRule("nightstand", ("bedside table", "nightstand")),
    ModelRule("dresser", ("dresser with drawers", "dresser", "chest of drawers")),
    ModelRule("wardrobe", ("wardrobe", "cupboard"), ("Bedroom",)),
    ModelRule("bookshelf", ("bookcase", "shelves", "vertical shelves", "bookshelf")),
    ModelRule("tv stand", ("tv stand", "tv cabinet")),
    ModelRule("kitchen counter", ("lower cabinet", "small lower cabinet", "sink", "kitchen sink"), ("Kitchen",)),
    ModelRule("cabinet", ("drawers cabinet",), ("Kitchen",)),
    ModelRule("refrigerator", ("refrigerator", "large fridge", "fridge")),
    ModelRule("stove", ("large stove", "stove", "cooker"), ("Kitchen",), min_height_m=0.7),
    ModelRule("toilet", ("toilets unit", "toilet")),
    ModelRule("bathtub", ("bath", "bathtub")),
    ModelRule("bathroom vanity", ("washbasin", "vanity")),
    ModelRule("washing machine", ("washing machine",)),
    ModelRule("piano", ("upright piano",)),
    ModelRule("desk", ("desk",)),
    ModelRule("coffee table", ("coffee table",)),
    ModelRule("dining table", ("table", "oak table", "table with tablecloth"), ("Living room", "Kitchen"),
              min_height_m=0.7, max_width_m=2.4),
    ModelRule("side table", ("round table",), min_height_m=0.5),
    ModelRule("kitchen island", ("island",), ("Kitchen",)),
    ModelRule("stool", ("stool",), ("Kitchen", "Living room")),
    ModelRule("bench", ("bench",), max_width_m=1.8),
    ModelRule("floor lamp", ("floor lamp", "lamp"), ("Lights",), min_height_m=1.0),
    ModelRule("indoor tree", _PLANTS, min_height_m=0.6),
    ModelRule("plant", _PLANTS, max_height_m=0.6, max_width_m=0.4),
    ModelRule("trash can", ("dustbin", "trash can", "bin")),
    ModelRule("mug", ("coffee cup", "mug")),
    ModelRule("cup", ("plastic cup", "glass", "beer glass", "cocktail glass", "cup")),
    ModelRule("bottle", ("beer bottle", "yogurt bottle", "bottle", "flacon")),
    ModelRule("microwave", ("microwave",)),
    ModelRule("kettle", ("boiler", "espresso kettle", "kettle")),
    ModelRule("book", ("book",)),
    ModelRule("vase", ("tulips", "white lily", "vase")),
    ModelRule("table lamp", ("desk lamp", "lamp", "camping lamp", "japanese lantern"), ("Lights",),
              max_height_m=0.7),
    ModelRule("clock", ("clock", "alarm clock")),
    ModelRule("teddy bear", ("teddy bear",)),
    ModelRule("television", ("tv", "television")),
    ModelRule("laptop", ("laptop",)),
    ModelRule("headphones", ("headphones",)),
    ModelRule("speaker", ("speaker", "mp3 station")),
    ModelRule("shoes", ("slippers", "bootie")),
    ModelRule("bag", ("backpack",)),  # the handbag model is PASTURE's uncommon "handbag"
)

# Catalogue categories that no model of the default libraries stands for (checked by a test).
UNMODELLED_DEFAULT: tuple[str, ...] = (
    "basket", "bowl", "candle", "dryer", "filing cabinet", "floor lamp", "globe", "jar", "keyboard", "laundry basket",
    "monitor", "office chair", "ottoman", "picture frame", "pillow", "plate", "remote control", "shoe rack",
    "soap dispenser", "storage box", "toaster", "towel",
)

# PASTURE's uncommon split in a furnished home: models no catalogue category covers, by the name a person
# would use (no word shared with a catalogue category, see catalogue.validate_pasture_catalogue).
UNCOMMON_MODEL_CATEGORIES: Mapping[str, tuple[str, ...]] = {
    "rubik's cube": ("rubik's cube",),
    "toy train": ("toy train",),
    "xylophone": ("xylophone",),
    "chessboard": ("chessboard",),
    "toy airplane": ("biplane",),
    "rocking horse": ("rocking horse",),
    "fire extinguisher": ("extinguisher",),
    "hamburger": ("hamburger",),
    "cupcake": ("cup cake",),
    "sunglasses": ("sunglasses",),
    "handbag": ("handbag",),
    "radio": ("radio",),
    "basketball": ("basketball",),
}


def category_of(entry: CatalogueEntry) -> Optional[str]:
    """The home category ``entry`` stands for, None when no rule matches."""
    return next((rule.category for rule in MODEL_RULES if rule.matches(entry)), None)


def uncommon_category_of(entry: CatalogueEntry) -> Optional[str]:
    """The uncommon (PASTURE) name of ``entry``, None when it is not one."""
    name = entry.name.strip().lower()
    return next((c for c, names in UNCOMMON_MODEL_CATEGORIES.items() if name in names), None)


def _grouped(entries: Iterable[CatalogueEntry],
             name_of: Callable[[CatalogueEntry], Optional[str]]) -> dict[str, tuple[CatalogueEntry, ...]]:
    found: dict[str, list[CatalogueEntry]] = {}
    for entry in entries:
        name = name_of(entry)
        if name is not None:
            found.setdefault(name, []).append(entry)
    return {name: tuple(models) for name, models in found.items()}


def models_by_category(entries: Iterable[CatalogueEntry]) -> dict[str, tuple[CatalogueEntry, ...]]:
    """Category -> the models standing for it, in library order."""
    return _grouped(entries, category_of)


def uncommon_models(entries: Iterable[CatalogueEntry]) -> dict[str, tuple[CatalogueEntry, ...]]:
    """Uncommon name -> the models of it, in library order."""
    return _grouped(entries, uncommon_category_of)
