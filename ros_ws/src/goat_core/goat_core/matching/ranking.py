"""One goal against a whole instance memory: the matcher's full ranking and its decision, with no work pending.

The agent asks its matcher once per step and lets expensive comparisons (keypoints of many stored views)
spread over steps (``MatchResult.pending``). A consumer that answers a goal once, such as the ``goal_matching``
ROS node, needs the settled answer instead: :func:`rank_instances` asks until nothing is pending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence, runtime_checkable

from goat_core.errors import GoatError
from goat_core.matching.base import MatchResult
from goat_core.matching.category import ScoredInstance
from goat_core.types import Goal, Instance


@runtime_checkable
class RankingMatcher(Protocol):
    """A GoalMatcher that also lists every candidate, best first (ModalityMatcher, ModularGoatMatcher)."""

    def reset(self) -> None: ...

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None: ...

    def match(self, instances: Mapping[int, Instance]) -> MatchResult: ...

    def candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]: ...


@dataclass(frozen=True)
class Ranking:
    """The settled answer of a matcher for its current goal."""

    ranked: tuple[ScoredInstance, ...]  # every candidate, best first
    match: MatchResult  # the matcher's choice and confidence (``pending`` False unless max_calls ran out)


def rank_instances(matcher: RankingMatcher, instances: Mapping[int, Instance], max_calls: int = 10_000) -> Ranking:
    """Ask ``matcher`` (its goal already set) until no comparison is pending, then take its candidate list.

    ``max_calls`` bounds the work: every call compares at least one more stored view, so a memory of N views
    settles within N calls.
    """
    if max_calls < 1:
        raise GoatError(f"rank_instances needs max_calls >= 1, got {max_calls!r}")
    match = matcher.match(instances)
    for _ in range(max_calls - 1):
        if not match.pending:
            break
        match = matcher.match(instances)
    return Ranking(ranked=tuple(matcher.candidates(instances)), match=match)
