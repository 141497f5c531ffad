"""One GoalMatcher for all three GOAT modalities: dispatches to the category, description or image matcher."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence, Union

from goat_core.errors import GoatError
from goat_core.mapping.keyframes import Keyframe
from goat_core.matching.base import MatchResult
from goat_core.matching.category import CategoryMatcher, CategoryMatcherConfig, ScoredInstance
from goat_core.matching.description import DescriptionMatcher, DescriptionMatcherConfig
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.image import ImageMatcher, ImageMatcherConfig
from goat_core.types import Goal, GoalModality, Instance


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

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None:
        if goal.modality is GoalModality.CATEGORY:
            matcher: Union[CategoryMatcher, DescriptionMatcher, ImageMatcher] = self.category
        elif goal.modality is GoalModality.DESCRIPTION:
            matcher = self.description
        else:
            matcher = self.image
        matcher.set_goal(goal, vocabulary)
        self._active = matcher

    def observe_keyframes(self, keyframes: Sequence[Keyframe]) -> None:
        """Whole remembered frames for image goals (see goat_core.mapping.keyframes)."""
        self.image.observe_keyframes(keyframes)

    def reset(self) -> None:
        """Forget per-instance caches; call when the instance memory is cleared (a new episode)."""
        self.description.reset()
        self.image.reset()

    def match(self, instances: Mapping[int, Instance]) -> MatchResult:
        return self._require_goal().match(instances)

    def candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        """All instances that fit the current goal, best first (the agent may prefer the nearest of ties)."""
        return self._require_goal().candidates(instances)

    def _require_goal(self) -> Union[CategoryMatcher, DescriptionMatcher, ImageMatcher]:
        if self._active is None:
            raise GoatError("ModalityMatcher used before set_goal(): no goal to match against")
        return self._active
