"""Room type of remembered instances, inferred from the objects around them.

Each category votes for room types by the sentence-embedding similarity of "a <category>" with "a <room>"
("a bed" ~ "a bedroom", "a stove" ~ "a kitchen"; with the article, the top room of a category is one the
procedural homes place it in for 78 % of their categories, against 70 % for the bare words): the cosines
are centred over the room types and passed through a softmax, so a telling object (bed, toilet) casts a
peaked vote and a generic one (lamp, plant) a flat one.
An instance's room distribution is the distance-weighted mean of the votes of the instances within a radius
of it, itself included (weight exp(-d / scale)). Walls are not known here, so the radius is kept to about a
room's size; when the caller knows which segment of its own map each instance is in (goat_core.mapping.
floor_segments: the explored floor cut at doorways), votes from another segment count ``other_segment_weight``
as much, so a plant in the hallway no longer reads as a kitchen plant because the stove is behind the wall.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import GoatError, require_positive
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.types import Instance
from goat_core.vocabulary import ROOM_TYPES

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


@dataclass(frozen=True)
class RoomConfig:
    """Parameters of room-type inference."""

    vote_radius_m: float = 4.0  # instances farther apart than this (xy) do not vote for each other
    distance_scale_m: float = 2.0  # vote weight exp(-d / scale)
    softmax_temperature: float = 0.05  # of the centred cosine similarities category ~ room name
    # Weight of a room type the instance memory already assigned (Instance.room_type), versus the votes.
    known_room_weight: float = 0.9
    # Weight of a vote from an instance in another segment of the agent's map (a wall or a doorway between).
    other_segment_weight: float = 0.1

    def __post_init__(self) -> None:
        require_positive(self, ("vote_radius_m", "distance_scale_m", "softmax_temperature"))
        if not 0.0 <= self.other_segment_weight <= 1.0:
            raise ValueError("RoomConfig.other_segment_weight must be in [0, 1], got "
                             f"{self.other_segment_weight!r}")
        if not 0.0 <= self.known_room_weight <= 1.0:
            raise ValueError("RoomConfig.known_room_weight must be in [0, 1], got "
                             f"{self.known_room_weight!r}")


def _with_article(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


class RoomInferer:
    """Soft room-type distributions over ``ROOM_TYPES`` for remembered instances."""

    def __init__(self, embedder: SentenceEmbedder, config: RoomConfig = RoomConfig(),
                 room_types: Sequence[str] = ROOM_TYPES) -> None:
        if not room_types:
            raise GoatError("RoomInferer needs at least one room type, got none")
        self.embedder = embedder
        self.config = config
        self.room_types: tuple[str, ...] = tuple(room_types)
        self._room_vectors = embedder.encode([_with_article(r) for r in self.room_types])
        self._affinity: dict[str, np.ndarray] = {}

    def room_index(self, room: str) -> int:
        """Index of a room type (or a synonym of one) in ``room_types``."""
        key = " ".join(room.lower().split())
        key = ROOM_SYNONYMS.get(key, key)
        if key not in self.room_types:
            raise GoatError(f"unknown room type {room!r}; expected one of {list(self.room_types)}")
        return self.room_types.index(key)

    def category_affinity(self, category: str) -> np.ndarray:
        """(rooms,) vote of one category: softmax of its centred cosine similarity with each room name."""
        if category not in self._affinity:
            text = " ".join(category.replace("_", " ").replace("-", " ").split())
            sims = self._room_vectors @ self.embedder.encode_one(_with_article(text))
            logits = (sims - sims.mean()) / self.config.softmax_temperature
            weights = np.exp(logits - logits.max())
            self._affinity[category] = weights / weights.sum()
        return self._affinity[category]

    def distributions(self, targets: Sequence[int], instances: Mapping[int, Instance],
                      centroids_xy_m: Mapping[int, np.ndarray],
                      segments: Optional[Mapping[int, int]] = None) -> dict[int, np.ndarray]:
        """(rooms,) probability per target instance id, voted by every instance in ``instances``.

        ``centroids_xy_m`` holds the xy centroid of every instance (callers cache it per observation);
        ``segments`` the map segment of every instance (0: none known), when the caller has a map.
        """
        if not targets:
            return {}
        ids = sorted(instances)
        xy = np.stack([centroids_xy_m[i] for i in ids])
        votes = np.stack([self.category_affinity(instances[i].category) for i in ids])
        segment = np.array([segments.get(i, 0) for i in ids]) if segments is not None else np.zeros(len(ids))
        result: dict[int, np.ndarray] = {}
        for target in targets:
            dist_m = np.linalg.norm(xy - centroids_xy_m[target], axis=1)
            weights = np.where(dist_m <= self.config.vote_radius_m,
                               np.exp(-dist_m / self.config.distance_scale_m), 0.0)
            own = segments.get(target, 0) if segments is not None else 0
            if own:
                weights = np.where((segment != own) & (segment != 0),
                                   weights * self.config.other_segment_weight, weights)
            probs = weights @ votes / max(float(weights.sum()), 1e-12)
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
