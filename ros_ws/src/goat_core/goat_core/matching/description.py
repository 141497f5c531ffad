"""Free-text goals: score instances against a parsed description (:mod:`goat_core.matching.description_parser`
turns "the red mug on the wooden table in the kitchen" into a target, its colour, a room and a relation).

Scoring: each candidate instance of the target label gets the weighted mean of its constraint agreements in
[0, 1] (colour, room, relation to an anchor instance), which ranks the candidates. The best is a confident
match when its colour and relation agreements are high and its total is clearly ahead of the best candidate
elsewhere; the inferred room separates candidates, and vetoes one only where it is inferred with confidence
(:mod:`goat_core.matching.rooms`: a telling object such as a bed or a stove nearby).

Hiding places: when the text puts the target inside, under or behind its anchor ("remote control inside the
bookshelf") and no remembered target fits that relation, the best remembered anchor (by its own colour and the
text's room) is offered, never confidently: the agent explores first and goes there when nothing better turns up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple, Optional, Sequence

import numpy as np

from goat_core.errors import GoatError, InvalidGoalError
from goat_core.mapping.floor_segments import FloorSegmentConfig, FloorSegments, cut_floor, free_floor
from goat_core.mapping.occupancy import CropBox, OccupancyGrid
from goat_core.matching.attributes import ColourConfig, ColourNamer, instance_colour_scores
from goat_core.matching.base import NO_MATCH, MatchResult
from goat_core.matching.category import CategoryResolver, ScoredInstance, runner_up, vocabulary_resolver
from goat_core.matching.description_parser import DescriptionParser, ObjectMention, ParsedDescription, Relation
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.rooms import RoomConfig, RoomInferer
from goat_core.types import Goal, GoalModality, Instance

__all__ = ["DescriptionMatcher", "DescriptionMatcherConfig", "DescriptionParser", "ObjectMention",
           "ParsedDescription", "Relation"]


@dataclass(frozen=True)
class DescriptionMatcherConfig:
    """Thresholds and geometry of description matching."""

    min_target_similarity: float = 0.5  # below: the target names no known label; never confident
    anchor_min_similarity: float = 0.6  # an unrecognised anchor phrase must resolve at least this well
    confident_score: float = 0.8  # weighted mean colour and relation agreement needed to stop there
    confident_margin: float = 0.15  # ... and this far ahead of the best non-duplicate candidate
    duplicate_radius_m: float = 0.5  # candidates this close (xy) are one object split in two by the memory
    near_distance_m: float = 1.5  # "near", "next to": gap between xy boxes fully satisfying the relation
    relation_falloff_m: float = 0.5  # agreement falls linearly to 0 over this distance beyond a limit
    support_xy_margin_m: float = 0.15  # "on", "under", "in": slack around the anchor's xy box
    vertical_tolerance_m: float = 0.15  # slack on height comparisons
    colour_weight: float = 1.0
    relation_weight: float = 1.0
    room_weight: float = 0.5  # rooms are inferred from neighbours: weaker evidence than colour or geometry
    # A room the text names must agree at least this much with a candidate's inferred room, when that room is
    # inferred with confidence (RoomConfig.confident_probability), for the candidate to be a confident match; a
    # description whose only constraint is a room ("the tv in the kitchen", LangMap's room level) also needs its
    # room inferred with confidence.
    room_min_agreement: float = 0.4
    unknown_colour_agreement: float = 0.5  # colour of an instance with no pixels stored yet
    # "inside / under / behind the X": a remembered target whose relation agreement reaches this is taken to be
    # in the hiding place; when none does, the best X is offered instead (not confidently).
    hiding_min_relation_agreement: float = 0.5
    colour: ColourConfig = field(default_factory=ColourConfig)
    room: RoomConfig = field(default_factory=RoomConfig)
    segments: FloorSegmentConfig = field(default_factory=FloorSegmentConfig)


class _Scored(NamedTuple):
    """One target candidate's agreement with the description."""

    instance_id: int
    total: float  # weighted mean of every constraint's agreement: ranks the candidates
    sure: float  # ... of the observable constraints only (colour, relation): decides confidence
    relation: Optional[float]  # agreement with the relation to the anchor; None when the text names none
    room_probability: float  # inferred probability of the text's room (1 when it names none): breaks ties


_CacheKey = tuple[int, int, int, float]  # (last_seen_step, num_observations, point count, coordinate sum)


@dataclass(frozen=True)
class _Features:
    """Per-observation cache of an instance's geometry."""

    key: _CacheKey
    centroid_m: np.ndarray
    bbox_min_m: np.ndarray
    bbox_max_m: np.ndarray


def _weighted_mean(terms: Sequence[tuple[float, float]]) -> float:
    """Weighted mean of (weight, agreement) pairs; 1 when there is nothing to agree with."""
    total_weight = sum(w for w, _ in terms)
    return sum(w * a for w, a in terms) / total_weight if total_weight > 0.0 else 1.0


def _ramp(excess_m: float, falloff_m: float) -> float:
    """1 for excess <= 0, falling linearly to 0 at ``falloff_m``."""
    return min(1.0, max(0.0, 1.0 - excess_m / falloff_m))


def _outside_m(point: np.ndarray, box_min: np.ndarray, box_max: np.ndarray) -> float:
    """Euclidean distance from a point to an axis-aligned box (0 inside)."""
    return float(np.linalg.norm(np.maximum(0.0, np.maximum(box_min - point, point - box_max))))


def _box_gap_m(a_min: np.ndarray, a_max: np.ndarray, b_min: np.ndarray, b_max: np.ndarray) -> float:
    """Euclidean gap between two axis-aligned boxes (0 when they overlap)."""
    return float(np.linalg.norm(np.maximum(0.0, np.maximum(a_min - b_max, b_min - a_max))))


class DescriptionMatcher:
    """GoalMatcher for free-text description goals."""

    def __init__(self, embedder: SentenceEmbedder,
                 config: DescriptionMatcherConfig = DescriptionMatcherConfig()) -> None:
        self.embedder = embedder
        self.config = config
        self.colours = ColourNamer(config.colour)
        self.rooms = RoomInferer(embedder, config.room)
        self.parsed: Optional[ParsedDescription] = None
        self._resolvers: dict[tuple[str, ...], CategoryResolver] = {}
        # Filled lazily, only for the instances a goal needs (candidates, anchors, room voters).
        self._features: dict[int, _Features] = {}
        self._colour_scores: dict[int, tuple[_CacheKey, Optional[Mapping[str, float]]]] = {}
        self._map: Optional[OccupancyGrid] = None
        # The last floor cut with what it was cut from (grid, crop, free floor): several matches between two map
        # updates (the settle loop, candidates and match in one step) see the same floor.
        self._cut: Optional[tuple[OccupancyGrid, CropBox, np.ndarray, FloorSegments]] = None

    def observe_map(self, grid: OccupancyGrid) -> None:
        """The agent's occupancy grid (updated and cleared in place): rooms are then voted within its segments."""
        self._map = grid

    def _room_distributions(self, targets: Sequence[int], instances: Mapping[int, Instance],
                            feats: Mapping[int, _Features]) -> dict[int, np.ndarray]:
        """Room distributions of ``targets``, voted by every instance (``feats`` holds them all)."""
        segments: Optional[dict[int, int]] = None
        if self._map is not None and targets:
            cut = self._floor_cut(self._map)
            # Only the targets' segments and those of the instances that vote are read (RoomInferer.distributions);
            # placing the other ~100 instances of a large home in the cut cost as much as the cut itself.
            wanted = set(targets)
            segments = {i: cut.segment_of(inst.points_xyz_m[:, :2]) for i, inst in instances.items()
                        if i in wanted or self.rooms.category_affinity(inst.category) is not None}
        return self.rooms.distributions(targets, instances, {i: f.centroid_m[:2] for i, f in feats.items()},
                                        segments)

    def _floor_cut(self, grid: OccupancyGrid) -> FloorSegments:
        """``segment_floor(grid, ...)``, cut again only when the grid, its crop or its free floor changed."""
        box, free = free_floor(grid, self.config.segments)
        kept = self._cut
        if kept is not None and kept[0] is grid and kept[1] == box and np.array_equal(kept[2], free):
            return kept[3]
        cut = cut_floor(grid, box, free, self.config.segments)
        self._cut = (grid, box, free, cut)
        return cut

    def reset(self) -> None:
        """Forget everything cached about instances (call when the instance memory is cleared)."""
        self._features.clear()
        self._colour_scores.clear()
        self._cut = None

    def parser(self, vocabulary: Sequence[str]) -> DescriptionParser:
        """A parser against one perception vocabulary."""
        resolver = vocabulary_resolver(self.embedder, vocabulary, self._resolvers)
        return DescriptionParser(resolver, self.config.anchor_min_similarity)

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None:
        if goal.modality is not GoalModality.DESCRIPTION or goal.text is None:
            raise InvalidGoalError(f"DescriptionMatcher needs a description goal, got {goal.describe()!r}")
        self.parsed = self.parser(vocabulary).parse(goal.text)

    def candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        """Instances of the target label scored by constraint agreement, best first."""
        return [ScoredInstance(s.instance_id, s.total) for s in self._scores(instances)]

    def match(self, instances: Mapping[int, Instance]) -> MatchResult:
        scores = self._scores(instances)
        assert self.parsed is not None
        hiding_place = self._hiding_place(instances, scores)
        if hiding_place is not None:
            return hiding_place
        if not scores:
            return NO_MATCH
        best_id, best_total, best_certain = scores[0].instance_id, scores[0].total, scores[0].sure
        ranked = [ScoredInstance(s.instance_id, s.total) for s in scores]
        constrained = (self.parsed.target.colour is not None or self.parsed.room is not None
                       or self.parsed.anchor is not None)
        second = runner_up(ranked, instances, self.config.duplicate_radius_m) if constrained else None
        margin_ok = second is None or best_total - second.score >= self.config.confident_margin
        confident = (self.parsed.target.similarity >= self.config.min_target_similarity
                     and best_certain >= self.config.confident_score and margin_ok)
        return MatchResult(instance_id=best_id, score=best_total, confident=confident)

    def _hiding_place(self, instances: Mapping[int, Instance], scores: Sequence[_Scored]) -> Optional[MatchResult]:
        """The best remembered anchor, not confident, when the text hides the target in, under or behind it and
        no remembered target is there; None otherwise.

        Why: a hidden object ("remote control inside the bookshelf", PASTURE's hidden split, CoW's hidden
        objects) is mostly out of sight, so it is rarely detected, and a look-alike elsewhere does not fit the
        text; a person would look in the named hiding place. Offered without confidence, it changes nothing
        while there is more to explore (the target may still show up, partly visible: one that fits the
        relation is always preferred), and it is where the agent goes when exploration ends instead of
        stopping with nothing or at a look-alike.
        """
        parsed, cfg = self.parsed, self.config
        if parsed is None or not parsed.hiding or parsed.anchor is None:
            return None
        if any(s.relation is not None and s.relation >= cfg.hiding_min_relation_agreement for s in scores):
            return None
        places = self._anchor_scores(parsed.anchor, parsed.room, instances)
        if not places:
            return None
        place_id, fit = places[0]
        return MatchResult(instance_id=place_id, score=fit, confident=False)

    def _anchor_scores(self, anchor: ObjectMention, room: Optional[str],
                       instances: Mapping[int, Instance]) -> list[tuple[int, float]]:
        """(instance id, agreement with the anchor's colour and the text's room) per anchor instance, best first.

        The text's room is the target's, and a hiding target is in its anchor, so the room applies to both.
        """
        cfg = self.config
        ids = sorted(i for i, inst in instances.items() if inst.category == anchor.category)
        if not ids:
            return []
        rooms: dict[int, np.ndarray] = {}
        feats = {i: self._features_of(i, instances[i]) for i in (instances if room is not None else ids)}
        if room is not None:
            rooms = self._room_distributions(ids, instances, feats)
        scored = []
        for aid in ids:
            terms: list[tuple[float, float]] = []
            if anchor.colour is not None:
                terms.append((cfg.colour_weight,
                              self._colour_agreement(aid, instances[aid], feats[aid], anchor.colour)))
            if room is not None:
                terms.append((cfg.room_weight, self.rooms.agreement(rooms[aid], room)))
            scored.append((aid, _weighted_mean(terms)))
        scored.sort(key=lambda s: (-s[1], s[0]))
        return scored

    def _scores(self, instances: Mapping[int, Instance]) -> list[_Scored]:
        """Each target instance's agreement with the description, best first.

        The total ranks candidates; equal totals (every candidate's most likely room is the text's) are ordered
        by the probability of the text's room. Whether the best is good enough is judged on colour and relation,
        and on the room only where it is inferred with confidence (a telling object such as a bed or a stove
        stands near the candidate): a candidate known to stand in another room than the text's is never sure.
        A room inferred without confidence separates candidates but does not veto the only fitting one (before
        stop 39 every room was voted by biased embedding similarities and vetoing kept the agent exploring; on
        primitive home 1000-0 #0 the right mug's room disagreed and the subtask took 285 actions instead of 106).
        """
        if self.parsed is None:
            raise GoatError("DescriptionMatcher used before set_goal()")
        self._forget_missing(instances)
        parsed, cfg = self.parsed, self.config
        targets = sorted(i for i, inst in instances.items() if inst.category == parsed.target.category)
        anchor_label = None if parsed.anchor is None else parsed.anchor.category
        anchors = sorted(i for i, inst in instances.items() if inst.category == anchor_label)
        # Every instance votes for rooms; otherwise only candidates and anchors are looked at.
        needed = instances if parsed.room is not None else {i: instances[i] for i in (*targets, *anchors)}
        feats = {i: self._features_of(i, inst) for i, inst in needed.items()}
        rooms: dict[int, np.ndarray] = {}
        if parsed.room is not None and targets:
            rooms = self._room_distributions(targets, instances, feats)
        scored = []
        for tid in targets:
            certain: list[tuple[float, float]] = []  # (weight, agreement) of colour and relation
            if parsed.target.colour is not None:
                certain.append((cfg.colour_weight,
                                self._colour_agreement(tid, instances[tid], feats[tid], parsed.target.colour)))
            relation: Optional[float] = None
            if parsed.relation is not None and parsed.anchor is not None:
                relation = self._relation_agreement(tid, parsed.relation, parsed.anchor, anchors, feats, instances)
                certain.append((cfg.relation_weight, relation))
            terms = list(certain)
            sure = _weighted_mean(certain)
            room_probability = 1.0
            if parsed.room is not None:
                room_probability = float(rooms[tid][self.rooms.room_index(parsed.room)])
                room_agreement = self.rooms.agreement(rooms[tid], parsed.room)
                terms.append((cfg.room_weight, room_agreement))
                room_fits = self.rooms.confident(rooms[tid]) and room_agreement >= cfg.room_min_agreement
                if not certain:  # the room is all the text says: it has to be known and agree to be sure
                    sure = 1.0 if room_fits else 0.0
                elif self.rooms.confident(rooms[tid]) and not room_fits:  # known to be another room
                    sure = 0.0
            scored.append(_Scored(tid, _weighted_mean(terms), sure, relation, room_probability))
        scored.sort(key=lambda s: (-s.total, -s.room_probability, s.instance_id))
        return scored

    def _forget_missing(self, instances: Mapping[int, Instance]) -> None:
        for gone in set(self._features) - set(instances):
            del self._features[gone]
        for gone in set(self._colour_scores) - set(instances):
            del self._colour_scores[gone]

    @staticmethod
    def _key(inst: Instance) -> _CacheKey:
        # The coordinate sum (microseconds) also catches an id reused by a new memory, e.g. in the next
        # episode, at the same step.
        return (inst.last_seen_step, inst.num_observations, len(inst.points_xyz_m),
                float(inst.points_xyz_m.sum()))

    def _features_of(self, iid: int, inst: Instance) -> _Features:
        """Geometry of an instance, recomputed only when it was observed again."""
        key = self._key(inst)
        cached = self._features.get(iid)
        if cached is not None and cached.key == key:
            return cached
        if len(inst.points_xyz_m) == 0:
            raise GoatError(f"instance {iid} ({inst.category}) has no points")
        features = _Features(key=key, centroid_m=inst.centroid_m, bbox_min_m=inst.bbox_min_m,
                             bbox_max_m=inst.bbox_max_m)
        self._features[iid] = features
        return features

    def _colour_agreement(self, iid: int, inst: Instance, feats: _Features, colour: str) -> float:
        cached = self._colour_scores.get(iid)
        if cached is None or cached[0] != feats.key:
            cached = (feats.key, instance_colour_scores(self.colours, inst))
            self._colour_scores[iid] = cached
        scores = cached[1]
        return self.config.unknown_colour_agreement if scores is None else scores[colour]

    def _relation_agreement(self, tid: int, relation: Relation, anchor: ObjectMention, anchor_ids: Sequence[int],
                            feats: Mapping[int, _Features], instances: Mapping[int, Instance]) -> float:
        """Best agreement over anchor instances of the geometric relation times the anchor's colour fit."""
        best = 0.0
        for aid in anchor_ids:
            if aid == tid:
                continue
            geometric = self._geometry(relation, feats[tid], feats[aid])
            if anchor.colour is not None and geometric > 0.0:
                geometric *= self._colour_agreement(aid, instances[aid], feats[aid], anchor.colour)
            best = max(best, geometric)
        return best

    def _geometry(self, relation: Relation, target: _Features, anchor: _Features) -> float:
        """Agreement in [0, 1] of one target/anchor pair with a relation (episode frame, z up)."""
        cfg = self.config
        c = target.centroid_m
        if relation is Relation.NEAR:
            gap = _box_gap_m(target.bbox_min_m[:2], target.bbox_max_m[:2], anchor.bbox_min_m[:2],
                             anchor.bbox_max_m[:2])
            return _ramp(gap - cfg.near_distance_m, cfg.relation_falloff_m)
        over_xy = _ramp(_outside_m(c[:2], anchor.bbox_min_m[:2], anchor.bbox_max_m[:2])
                        - cfg.support_xy_margin_m, cfg.relation_falloff_m)
        # A supported object's centre is above its support's centre even when the support has a tall part
        # (a cushion on a couch is below the backrest top); "under" is the mirror case.
        if relation is Relation.ON:
            return over_xy * _ramp(anchor.centroid_m[2] - c[2], cfg.vertical_tolerance_m)
        if relation is Relation.UNDER:
            return over_xy * _ramp(c[2] - anchor.centroid_m[2], cfg.vertical_tolerance_m)
        if relation is Relation.IN:
            return _ramp(_outside_m(c, anchor.bbox_min_m, anchor.bbox_max_m) - cfg.support_xy_margin_m,
                         cfg.relation_falloff_m)
        near = _ramp(_box_gap_m(target.bbox_min_m[:2], target.bbox_max_m[:2], anchor.bbox_min_m[:2],
                                anchor.bbox_max_m[:2]) - cfg.near_distance_m, cfg.relation_falloff_m)
        if relation is Relation.ABOVE:
            return near * _ramp(anchor.bbox_max_m[2] - c[2], cfg.vertical_tolerance_m)
        return near * _ramp(c[2] - anchor.bbox_min_m[2], cfg.vertical_tolerance_m)
