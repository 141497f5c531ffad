"""Room type of remembered instances, inferred from the objects around them.

Only telling objects vote: a fixed table (``ROOM_PRIORS``) gives, for categories that stand mostly in one or two
room types (a bed, a toilet, a stove, a couch, a washing machine, an office chair), the probability of each room
type; every other category (a lamp, a plant, a chair, a book) casts no vote. The numbers are set by hand from
where such furniture stands in ordinary homes (a bed in a bedroom, a sink in a bathroom or a kitchen), rounded
to 0.05; they were not fitted to the benchmark's homes nor read from the simulator's catalogue. A label that is
not in the table borrows the row of the table category most similar to it by sentence embedding ("sofa" ->
couch), when the similarity reaches ``alias_min_similarity`` and no perception label outside the table is closer
("chair" stays a chair, not an office chair); otherwise it casts no vote.

(Before stop 39 every category voted by the sentence-embedding similarity of "a <category>" with "a <room>";
those votes were biased: "a couch" ~ bedroom 0.75, "a side table" ~ dining room 0.84, and the living room
almost never won, so the room clause could not be trusted.)

An instance's room distribution is the distance-weighted mean of the votes of the telling instances within a
radius of it, itself excluded (weight exp(-d / scale)), mixed with a uniform prior of weight ``prior_weight``:
with no telling object around, the distribution stays flat and the room is unknown. The target's own category is
left out because the text names the room of a target whatever its category says ("the brown wooden dining table
in the kitchen", GOAT 5000-0 #4: its own dining-room vote vetoed the right table). Walls are not known here,
so the radius is kept to about a room's size; when the caller knows which segment of its own map each instance
is in (goat_core.mapping.floor_segments: the explored floor cut at doorways), votes from another segment count
``other_segment_weight`` as much, so a plant in the hallway no longer reads as a kitchen plant because the stove
is behind the wall. A room is inferred with confidence (:meth:`RoomInferer.confident`) when its probability
reaches ``confident_probability``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import GoatError, require_positive
from goat_core.matching.category import label_key
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.types import Instance
from goat_core.vocabulary import OBJECT_LABELS, ROOM_TYPES

# Spoken variants of the vocabulary's room types.
ROOM_SYNONYMS: Mapping[str, str] = {
    "lounge": "living room", "family room": "living room", "sitting room": "living room",
    "tv room": "living room", "living area": "living room", "livingroom": "living room",
    "bath room": "bathroom", "restroom": "bathroom", "washroom": "bathroom", "toilet room": "bathroom",
    "bed room": "bedroom", "master bedroom": "bedroom", "guest room": "bedroom",
    "study": "office", "workroom": "office", "home office": "office",
    "dining area": "dining room", "hall": "hallway", "corridor": "hallway", "entryway": "hallway",
    "laundry": "laundry room", "utility room": "laundry room",
}

# Where telling categories stand: room type -> probability; the rest of the mass is spread evenly over the other
# room types of the vocabulary. Hand-set (see the module doc); keys are perception labels (goat_core.vocabulary
# .OBJECT_LABELS) and a few common labels of other vocabularies (HM3D's sink, shower, tv).
ROOM_PRIORS: Mapping[str, Mapping[str, float]] = {
    "bed": {"bedroom": 0.95},
    "nightstand": {"bedroom": 0.9},
    "dresser": {"bedroom": 0.8},
    "wardrobe": {"bedroom": 0.8, "hallway": 0.1},
    "teddy bear": {"bedroom": 0.8},
    "couch": {"living room": 0.85},
    "coffee table": {"living room": 0.85},
    "tv stand": {"living room": 0.8, "bedroom": 0.1},
    "television": {"living room": 0.7, "bedroom": 0.2},
    "tv": {"living room": 0.7, "bedroom": 0.2},
    "piano": {"living room": 0.85},
    "armchair": {"living room": 0.6, "bedroom": 0.15, "office": 0.1},
    "kitchen counter": {"kitchen": 0.95},
    "kitchen island": {"kitchen": 0.95},
    "refrigerator": {"kitchen": 0.95},
    "stove": {"kitchen": 0.95},
    "microwave": {"kitchen": 0.9},
    "toaster": {"kitchen": 0.9},
    "kettle": {"kitchen": 0.9},
    "toilet": {"bathroom": 0.95},
    "bathtub": {"bathroom": 0.95},
    "shower": {"bathroom": 0.95},
    "bathroom vanity": {"bathroom": 0.95},
    "sink": {"bathroom": 0.5, "kitchen": 0.45},
    "soap dispenser": {"bathroom": 0.7, "kitchen": 0.2},
    "towel": {"bathroom": 0.6, "laundry room": 0.2, "kitchen": 0.1},
    "washing machine": {"laundry room": 0.8, "bathroom": 0.1, "kitchen": 0.05},
    "dryer": {"laundry room": 0.85},
    "laundry basket": {"laundry room": 0.5, "bedroom": 0.3, "bathroom": 0.15},
    "desk": {"office": 0.7, "bedroom": 0.2},
    "office chair": {"office": 0.8, "bedroom": 0.1},
    "filing cabinet": {"office": 0.9},
    "monitor": {"office": 0.75, "bedroom": 0.1, "living room": 0.1},
    "keyboard": {"office": 0.75, "bedroom": 0.1},
    "dining table": {"dining room": 0.8, "kitchen": 0.15},
    "shoe rack": {"hallway": 0.8},
}


@dataclass(frozen=True)
class RoomConfig:
    """Parameters of room-type inference."""

    vote_radius_m: float = 4.0  # instances farther apart than this (xy) do not vote for each other
    distance_scale_m: float = 2.0  # vote weight exp(-d / scale)
    prior_weight: float = 0.25  # weight of the uniform prior, against telling votes of weight exp(-d / scale)
    confident_probability: float = 0.5  # a room this probable is inferred with confidence
    alias_min_similarity: float = 0.8  # a label outside ROOM_PRIORS borrows the row of a category this similar
    # Weight of a room type the instance memory already assigned (Instance.room_type), versus the votes.
    known_room_weight: float = 0.9
    # Weight of a vote from an instance in another segment of the agent's map (a wall or a doorway between).
    other_segment_weight: float = 0.1

    def __post_init__(self) -> None:
        require_positive(self, ("vote_radius_m", "distance_scale_m", "prior_weight"))
        if not 0.0 < self.confident_probability <= 1.0:
            raise ValueError("RoomConfig.confident_probability must be in (0, 1], got "
                             f"{self.confident_probability!r}")
        if not 0.0 <= self.other_segment_weight <= 1.0:
            raise ValueError("RoomConfig.other_segment_weight must be in [0, 1], got "
                             f"{self.other_segment_weight!r}")
        if not 0.0 <= self.known_room_weight <= 1.0:
            raise ValueError("RoomConfig.known_room_weight must be in [0, 1], got "
                             f"{self.known_room_weight!r}")


class RoomInferer:
    """Soft room-type distributions over ``ROOM_TYPES`` for remembered instances."""

    def __init__(self, embedder: SentenceEmbedder, config: RoomConfig = RoomConfig(),
                 room_types: Sequence[str] = ROOM_TYPES,
                 priors: Mapping[str, Mapping[str, float]] = ROOM_PRIORS) -> None:
        if not room_types:
            raise GoatError("RoomInferer needs at least one room type, got none")
        self.embedder = embedder
        self.config = config
        self.room_types: tuple[str, ...] = tuple(room_types)
        self._priors: dict[tuple[str, ...], np.ndarray] = {}
        for category, row in priors.items():
            self._priors[label_key(category)] = self._prior_row(category, row)
        # Aliases are looked up among the table and every perception label: a label that is closest to one
        # outside the table ("chair" is itself a label) borrows nothing.
        self._alias_names = sorted(set(priors) | {label for label in OBJECT_LABELS
                                                   if label_key(label) not in self._priors})
        self._labels = {label_key(label) for label in OBJECT_LABELS}
        self._alias_vectors: Optional[np.ndarray] = None  # encoded on the first label outside the vocabulary
        self._affinity: dict[str, Optional[np.ndarray]] = {}

    def _prior_row(self, category: str, row: Mapping[str, float]) -> np.ndarray:
        probs = np.zeros(len(self.room_types))
        for room, p in row.items():
            probs[self.room_index(room)] = p
        rest = 1.0 - float(probs.sum())
        if rest < -1e-9 or np.any(probs < 0.0) or (rest > 1e-9 and np.count_nonzero(probs == 0.0) == 0):
            raise GoatError(f"room prior of {category!r} must be probabilities summing to at most 1, got {dict(row)}")
        free = probs == 0.0
        if free.any():
            probs[free] = max(rest, 0.0) / int(free.sum())
        return probs

    def room_index(self, room: str) -> int:
        """Index of a room type (or a synonym of one) in ``room_types``."""
        key = " ".join(room.lower().split())
        key = ROOM_SYNONYMS.get(key, key)
        if key not in self.room_types:
            raise GoatError(f"unknown room type {room!r}; expected one of {list(self.room_types)}")
        return self.room_types.index(key)

    def category_affinity(self, category: str) -> Optional[np.ndarray]:
        """(rooms,) vote of one category (its ``ROOM_PRIORS`` row, or that of the most similar category there), or
        None when the category tells nothing about its room."""
        if category not in self._affinity:
            row = self._priors.get(label_key(category))
            if row is None and label_key(category) not in self._labels:
                if self._alias_vectors is None:
                    self._alias_vectors = self.embedder.encode(self._alias_names)
                text = " ".join(category.replace("_", " ").replace("-", " ").split())
                sims = self._alias_vectors @ self.embedder.encode_one(text)
                best = int(np.argmax(sims))
                if float(sims[best]) >= self.config.alias_min_similarity:
                    row = self._priors.get(label_key(self._alias_names[best]))
            self._affinity[category] = row
        return self._affinity[category]

    def confident(self, probs: np.ndarray) -> bool:
        """True when a room distribution names its most likely room with confidence."""
        return float(probs.max()) >= self.config.confident_probability

    def distributions(self, targets: Sequence[int], instances: Mapping[int, Instance],
                      centroids_xy_m: Mapping[int, np.ndarray],
                      segments: Optional[Mapping[int, int]] = None) -> dict[int, np.ndarray]:
        """(rooms,) probability per target instance id, voted by every instance in ``instances``.

        ``centroids_xy_m`` holds the xy centroid of every instance (callers cache it per observation);
        ``segments`` the map segment of every instance (0: none known), when the caller has a map.
        """
        if not targets:
            return {}
        uniform = np.full(len(self.room_types), 1.0 / len(self.room_types))
        telling: dict[int, np.ndarray] = {}
        for i in sorted(instances):
            row = self.category_affinity(instances[i].category)
            if row is not None:
                telling[i] = row
        ids = list(telling)
        xy = np.stack([centroids_xy_m[i] for i in ids]) if ids else np.zeros((0, 2))
        votes = np.stack(list(telling.values())) if ids else np.zeros((0, len(self.room_types)))
        segment = np.array([segments.get(i, 0) for i in ids]) if segments is not None else np.zeros(len(ids))
        result: dict[int, np.ndarray] = {}
        for target in targets:
            dist_m = np.linalg.norm(xy - centroids_xy_m[target], axis=1)
            weights = np.where(dist_m <= self.config.vote_radius_m,
                               np.exp(-dist_m / self.config.distance_scale_m), 0.0)
            if target in telling:  # its own category is the text's target: the neighbours tell its room
                weights[ids.index(target)] = 0.0
            own = segments.get(target, 0) if segments is not None else 0
            if own:
                weights = np.where((segment != own) & (segment != 0),
                                   weights * self.config.other_segment_weight, weights)
            prior_w = self.config.prior_weight
            probs = (weights @ votes + prior_w * uniform) / (float(weights.sum()) + prior_w)
            known = instances[target].room_type
            if known is not None:
                one_hot = np.zeros(len(self.room_types))
                one_hot[self.room_index(known)] = 1.0
                known_w = self.config.known_room_weight
                probs = known_w * one_hot + (1.0 - known_w) * probs
            result[target] = probs
        return result

    def agreement(self, probs: np.ndarray, room: str) -> float:
        """How well a room distribution fits a named room, in [0, 1]: 1 when it is the most likely room."""
        return float(probs[self.room_index(room)] / max(float(probs.max()), 1e-12))
