"""One GoalMatcher for all three GOAT modalities: dispatches to the category, description or image matcher."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence, Union

from goat_core.errors import GoatError
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.matching.base import MatchResult
from goat_core.matching.category import (
    CategoryMatcher,
    CategoryMatcherConfig,
    CategoryResolution,
    ScoredInstance,
    vocabulary_resolver,
)
from goat_core.matching.description import DescriptionMatcher, DescriptionMatcherConfig
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.image import ImageMatcher, ImageMatcherConfig
from goat_core.types import Goal, GoalModality, Instance, InstanceView


@dataclass(frozen=True)
class MatcherConfig:
    """Every threshold of goal matching, grouped by modality (each parameter has its default in one place)."""

    category: CategoryMatcherConfig = field(default_factory=CategoryMatcherConfig)
    description: DescriptionMatcherConfig = field(default_factory=DescriptionMatcherConfig)
    image: ImageMatcherConfig = field(default_factory=ImageMatcherConfig)


class ModalityMatcher:
    """GoalMatcher over category, description and image goals; keeps per-modality caches across subtasks."""

    def __init__(self, embedder: SentenceEmbedder, config: MatcherConfig = MatcherConfig()) -> None:
        self.config = config
        self.category = CategoryMatcher(embedder, config.category)
        self.description = DescriptionMatcher(embedder, config.description)
        self.image = ImageMatcher(config.image)
        self._active: Optional[Union[CategoryMatcher, DescriptionMatcher, ImageMatcher]] = None
        # Image goals that name their category: which perception label that is (None: every instance may be it).
        self.image_category: Optional[CategoryResolution] = None
        self._image_label: Optional[str] = None

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None:
        self.image_category = None
        self._image_label = None
        if goal.modality is GoalModality.CATEGORY:
            matcher: Union[CategoryMatcher, DescriptionMatcher, ImageMatcher] = self.category
        elif goal.modality is GoalModality.DESCRIPTION:
            matcher = self.description
        else:
            matcher = self.image
            if goal.category:
                self._resolve_image_category(goal.category, vocabulary)
        matcher.set_goal(goal, vocabulary)
        self.image.candidates_share_category = matcher is self.image and self._image_label is not None
        self._active = matcher

    @property
    def goal_note(self) -> Optional[str]:
        """The category matcher's warning while a category goal is set (GoalNoter)."""
        return self.category.goal_note if self._active is self.category else None

    def _resolve_image_category(self, category: str, vocabulary: Sequence[str]) -> None:
        """The label an image goal's category names; a category the detector does not know restricts nothing
        (its most similar label would exclude the goal itself)."""
        resolver = vocabulary_resolver(self.category.embedder, vocabulary, self.category.resolvers)
        self.image_category = resolver.resolve(category)
        if self.image_category.similarity >= self.config.category.min_similarity:
            self._image_label = self.image_category.category

    def admissible(self, instances: Mapping[int, Instance]) -> Mapping[int, Instance]:
        """The instances that may be the current goal: for an image goal with a known category, those of it."""
        if self._image_label is None or self._active is not self.image:
            return instances
        return {k: v for k, v in instances.items() if v.category == self._image_label}

    def tied_with_best(self, instances: Mapping[int, Instance]) -> list[int]:
        """Image goals: the admissible instances the evidence cannot rank apart yet (TiedCandidates)."""
        if self._active is not self.image:
            return []
        return self.image.tied_with_best(self.admissible(instances))

    def observe_map(self, grid: OccupancyGrid) -> None:
        """The agent's occupancy grid, for the rooms of description goals (MapObserver)."""
        self.description.observe_map(grid)

    def wants_live_views(self) -> bool:
        """Image goals compare the current frame's views too (LiveViewObserver)."""
        return self._active is self.image and self.image.config.live_views

    def observe_live_views(self, views: Sequence[tuple[int, InstanceView]]) -> None:
        if self._active is self.image:
            self.image.observe_live_views(views)

    def reset(self) -> None:
        """Forget per-instance caches; call when the instance memory is cleared (a new episode)."""
        self.description.reset()
        self.image.reset()

    def match(self, instances: Mapping[int, Instance]) -> MatchResult:
        matcher = self._require_goal()
        admitted = self.admissible(instances)
        result = matcher.match(admitted)
        if result.instance_id is None and self._image_label is not None and admitted:
            # No remembered view of the category agrees with the picture, but the goal is one of them: offer the
            # most observed one, not confidently (the agent looks closer at such candidates before settling).
            best = min(admitted.values(), key=lambda i: (-i.num_observations, -len(i.points_xyz_m), i.instance_id))
            return MatchResult(instance_id=best.instance_id, score=0.0, confident=False, pending=result.pending)
        return result

    def candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        """All instances that fit the current goal, best first (the agent may prefer the nearest of ties)."""
        matcher = self._require_goal()
        return matcher.candidates(self.admissible(instances))

    def _require_goal(self) -> Union[CategoryMatcher, DescriptionMatcher, ImageMatcher]:
        if self._active is None:
            raise GoatError("ModalityMatcher used before set_goal(): no goal to match against")
        return self._active
