"""Words shared by the scene generator, the description parser, the attribute estimator and perception.

These are plain English vocabularies (colour names with a reference sRGB value, room types, the object
categories a detector reports), not knowledge of any particular scene: the agent resolves the words of a goal
to object categories through sentence embeddings.
"""

from __future__ import annotations

from typing import Mapping

# Reference sRGB (0-255) of each colour name; the generator paints objects with these and the
# attribute estimator compares observed pixels against them.
COLOURS: Mapping[str, tuple[int, int, int]] = {
    "red": (200, 30, 30),
    "orange": (235, 125, 20),
    "yellow": (230, 210, 40),
    "green": (40, 160, 60),
    "blue": (35, 75, 200),
    "purple": (120, 50, 160),
    "pink": (235, 130, 180),
    "brown": (110, 70, 35),
    "white": (235, 235, 235),
    "gray": (128, 128, 128),
    "black": (25, 25, 25),
}

MATERIALS: tuple[str, ...] = ("wooden", "metal", "plastic", "fabric", "leather", "ceramic", "glass")

ROOM_TYPES: tuple[str, ...] = (
    "living room", "kitchen", "bedroom", "bathroom", "office", "dining room", "hallway", "laundry room",
)

# The object categories that perception reports and goals resolve to: the categories of the embedded simulator's
# catalogue (sim_bridge.embedded.catalogue), in its order, kept here so that the ROS nodes name them without
# importing the simulator; tests/test_vocabulary.py checks that the two agree.
OBJECT_LABELS: tuple[str, ...] = (
    "couch", "bed", "nightstand", "dresser", "wardrobe", "bookshelf", "tv stand", "kitchen counter", "refrigerator",
    "stove", "toilet", "bathtub", "bathroom vanity", "washing machine", "dryer", "cabinet", "filing cabinet",
    "shoe rack", "piano", "desk", "dining table", "coffee table", "side table", "kitchen island", "chair",
    "office chair", "armchair", "stool", "ottoman", "bench", "floor lamp", "indoor tree", "trash can",
    "laundry basket", "mug", "cup", "bowl", "plate", "bottle", "toaster", "microwave", "kettle", "jar", "book",
    "vase", "plant", "table lamp", "clock", "teddy bear", "television", "monitor", "laptop", "keyboard", "globe",
    "headphones", "speaker", "picture frame", "candle", "remote control", "storage box", "basket", "towel",
    "soap dispenser", "pillow", "shoes", "bag",
)
