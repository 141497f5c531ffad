"""The Modular GOAT matcher (Chang et al., "GOAT: GO to Any Thing", RSS 2024), on local CLIP weights.

GOAT keeps an instance memory with views of every object and matches each goal against it in two stages: a
category filter, then a modality-specific score among the instances that pass it.

* Object goals: the goal's category is resolved to a perception label (exact, else the closest label by
  sentence embedding, as in :mod:`goat_core.matching.category`); any instance of it will do.
* Language goals: the target category is parsed from the description (:mod:`goat_core.matching.description`);
  instances of that category are ranked by the CLIP cosine between the description and their stored views (the
  best view counts). The best is confident when its cosine reaches ``min_language_cosine`` and leads the best
  instance elsewhere by ``language_margin``.
* Image goals: GOAT-Bench image goals come without a category here, so the picture is labelled zero-shot with
  CLIP against the perception vocabulary and the instances of its ``image_goal_labels`` best labels are kept;
  among them, keypoint matching decides (the ImageMatcher, SIFT + RANSAC, or the XFeat + LighterGlue matcher,
  in place of the paper's SuperGlue).

View embeddings are computed lazily, at most ``max_embeddings_per_step`` per call (CLIP ViT-B/32 costs
~100 ms per crop on a CPU), cached per (instance id, view step); ``MatchResult.pending`` tells the agent that
views are still waiting, and no answer is confident before every candidate has had a view scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import ConfigError, GoatError, InvalidGoalError
from goat_core.matching.base import GoalMatcher, MatchResult
from goat_core.matching.category import CategoryResolver, ScoredInstance, runner_up, vocabulary_resolver
from goat_core.matching.description_parser import DescriptionParser
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.perception.clip_embedder import ClipEmbedder
from goat_core.types import Goal, GoalModality, Instance


@dataclass(frozen=True)
class ModularGoatConfig:
    """Thresholds of the Modular GOAT matcher."""

    min_category_similarity: float = 0.5  # goal phrase vs label (MiniLM cosine): below, never confident
    anchor_min_similarity: float = 0.6  # the description parser's threshold for unrecognised anchor phrases
    # CLIP ViT-B/32: a description and a crop of its object reach cosines of ~0.25-0.33; other objects ~0.15-0.22.
    min_language_cosine: float = 0.22
    language_margin: float = 0.01  # best cosine minus the best non-twin runner-up's
    duplicate_radius_m: float = 0.5  # same-category candidates this close are one object split in two
    max_views_per_instance: int = 3  # stored views embedded per instance (best first)
    max_embeddings_per_step: int = 8  # view crops run through CLIP per match() call
    image_goal_labels: int = 3  # image goals: keep instances of the picture's k best CLIP labels; 0 = keep all

    def __post_init__(self) -> None:
        for name in ("max_views_per_instance", "max_embeddings_per_step"):
            if getattr(self, name) < 1:
                raise ConfigError(f"ModularGoatConfig.{name} must be >= 1, got {getattr(self, name)!r}")
        if self.image_goal_labels < 0:
            raise ConfigError(f"ModularGoatConfig.image_goal_labels must be >= 0, got {self.image_goal_labels!r}")


class ModularGoatMatcher:
    """GoalMatcher for all three modalities: category filter, then CLIP cosine or keypoint matching."""

    def __init__(self, clip: ClipEmbedder, embedder: SentenceEmbedder, image_matcher: GoalMatcher,
                 config: ModularGoatConfig = ModularGoatConfig()) -> None:
        self.clip = clip
        self.embedder = embedder
        self.image_matcher = image_matcher
        self.config = config
        self.modality: Optional[GoalModality] = None
        self.goal_labels: Optional[tuple[str, ...]] = None  # labels that pass the filter; None: every label
        self.label_similarity = 0.0  # how well the goal's words name a label (1.0 when literal)
        self._goal_vector: Optional[np.ndarray] = None
        self._resolvers: dict[tuple[str, ...], CategoryResolver] = {}
        self._view_vectors: dict[tuple[int, int], np.ndarray] = {}
        self._work_left = False

    def reset(self) -> None:
        """Forget view embeddings (call when the instance memory is cleared: ids restart)."""
        self._view_vectors.clear()
        self.image_matcher.reset()

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None:
        resolver = vocabulary_resolver(self.embedder, vocabulary, self._resolvers)
        self._goal_vector = None
        if goal.modality is GoalModality.CATEGORY and goal.category:
            resolution = resolver.resolve(goal.category)
            self.goal_labels, self.label_similarity = (resolution.category,), resolution.similarity
        elif goal.modality is GoalModality.DESCRIPTION and goal.text:
            target = DescriptionParser(resolver, self.config.anchor_min_similarity).parse(goal.text).target
            self.goal_labels, self.label_similarity = (target.category,), target.similarity
            self._goal_vector = self.clip.encode_texts([goal.text])[0]
        elif goal.modality is GoalModality.IMAGE and goal.image is not None:
            named = resolver.resolve(goal.category) if goal.category else None
            if named is not None and named.similarity >= self.config.min_category_similarity:
                # The goal names its category (GOAT-Bench tasks do): no need to guess it from the picture.
                self.goal_labels = (named.category,)
            else:
                k = self.config.image_goal_labels
                ranked = self.clip.classify(goal.image, resolver.labels) if k else []
                self.goal_labels = tuple(label for label, _ in ranked[:k]) if k else None
            self.label_similarity = 1.0
            self.image_matcher.set_goal(goal, vocabulary)
        else:
            raise InvalidGoalError(f"ModularGoatMatcher cannot use goal {goal.describe()!r}")
        self.modality = goal.modality

    def admissible(self, instances: Mapping[int, Instance]) -> Mapping[int, Instance]:
        """The instances that pass the goal's category filter."""
        allowed = self.goal_labels
        if allowed is None:
            return instances
        return {iid: inst for iid, inst in instances.items() if inst.category in allowed}

    def match(self, instances: Mapping[int, Instance]) -> MatchResult:
        if self.modality is None:
            raise GoatError("ModularGoatMatcher used before set_goal(): no goal to match against")
        self._forget_missing(instances)
        passing = self.admissible(instances)
        if self.modality is GoalModality.IMAGE:
            return self.image_matcher.match(passing)
        if self.modality is GoalModality.CATEGORY:
            return self._category_match(passing)
        return self._language_match(passing, instances)

    def candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        """Instances passing the category filter, best first (language goals: by CLIP cosine, image goals: by
        the image matcher's score; both among those scored so far)."""
        passing = self.admissible(instances)
        if self.modality is GoalModality.DESCRIPTION:
            return self._language_scores(passing)
        if self.modality is GoalModality.IMAGE:
            ranker = getattr(self.image_matcher, "candidates", None)
            return list(ranker(passing)) if ranker is not None else []
        ranked = sorted(passing.values(), key=lambda i: (-i.num_observations, -len(i.points_xyz_m), i.instance_id))
        return [ScoredInstance(i.instance_id, self.label_similarity) for i in ranked]

    def _category_match(self, passing: Mapping[int, Instance]) -> MatchResult:
        ranked = self.candidates(passing)
        if not ranked:
            return MatchResult(instance_id=None, score=0.0, confident=False)
        confident = self.label_similarity >= self.config.min_category_similarity
        return MatchResult(instance_id=ranked[0].instance_id, score=ranked[0].score, confident=confident)

    def _language_match(self, passing: Mapping[int, Instance], instances: Mapping[int, Instance]) -> MatchResult:
        ranked = self._language_scores(passing)
        if not ranked:
            return MatchResult(instance_id=None, score=0.0, confident=False, pending=self._work_left)
        cfg = self.config
        best = ranked[0]
        second = runner_up(ranked, instances, cfg.duplicate_radius_m)
        scored = {s.instance_id for s in ranked}
        all_seen = all(iid in scored for iid, inst in passing.items() if inst.views)
        confident = (all_seen and self.label_similarity >= cfg.min_category_similarity
                     and best.score >= cfg.min_language_cosine
                     and (second is None or best.score - second.score >= cfg.language_margin))
        return MatchResult(instance_id=best.instance_id, score=best.score, confident=confident,
                           pending=self._work_left)

    def _language_scores(self, passing: Mapping[int, Instance]) -> list[ScoredInstance]:
        """Best-view CLIP cosine of each instance with at least one embedded view, best first."""
        if self._goal_vector is None:
            raise GoatError("ModularGoatMatcher has no language goal set")
        self._embed_pending(passing)
        limit = self.config.max_views_per_instance
        scored: list[ScoredInstance] = []
        for iid, inst in passing.items():
            vectors = [self._view_vectors[(iid, v.step)] for v in inst.views[:limit]
                       if (iid, v.step) in self._view_vectors]
            if vectors:
                scored.append(ScoredInstance(iid, float(np.max(np.stack(vectors) @ self._goal_vector))))
        scored.sort(key=lambda s: (-s.score, s.instance_id))
        return scored

    def _forget_missing(self, instances: Mapping[int, Instance]) -> None:
        """Drop embeddings of views no longer stored (the memory replaces views as better ones come)."""
        limit = self.config.max_views_per_instance
        live = {(iid, v.step) for iid, inst in instances.items() for v in inst.views[:limit]}
        for key in set(self._view_vectors) - live:
            del self._view_vectors[key]

    def _embed_pending(self, passing: Mapping[int, Instance]) -> None:
        """Embed up to ``max_embeddings_per_step`` new views: instances with no embedded view first."""
        limit = self.config.max_views_per_instance
        todo: list[tuple[bool, int, int, np.ndarray]] = []
        for iid, inst in passing.items():
            done = any((iid, v.step) in self._view_vectors for v in inst.views[:limit])
            todo.extend((done, iid, v.step, v.rgb) for v in inst.views[:limit]
                        if (iid, v.step) not in self._view_vectors)
        todo.sort(key=lambda item: (item[0], item[1], item[2]))
        batch = todo[:self.config.max_embeddings_per_step]
        if batch:
            vectors = self.clip.encode_images([rgb for _, _, _, rgb in batch])
            for (_, iid, step, _), vector in zip(batch, vectors, strict=True):
                self._view_vectors[(iid, step)] = vector
        self._work_left = len(todo) > len(batch)
