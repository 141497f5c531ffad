"""The contract between the agent and every goal matcher."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Protocol, Sequence, runtime_checkable

from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.types import Goal, Instance, InstanceView


@dataclass(frozen=True)
class MatchResult:
    """The matcher's answer for the current goal against the current memory."""

    instance_id: Optional[int]  # best instance, or None when nothing in memory fits
    score: float  # matcher-specific, higher is better; comparable within one goal only
    confident: bool  # True: navigate to it and stop there; False: keep exploring
    # True while the matcher still has remembered views to compare (it spreads that work over steps): an agent
    # about to give up must ask again until this is False.
    pending: bool = False


NO_MATCH = MatchResult(instance_id=None, score=0.0, confident=False)


class GoalMatcher(Protocol):
    """Ranks remembered instances against one goal at a time.

    ``set_goal`` is called once per subtask (precompute goal features there); ``match`` is called every step and
    must be incremental: cache per-instance work keyed on the instance's id and ``last_seen_step``.
    ``vocabulary`` is the label set of the perception backend (the categories it can output). ``reset`` is
    called whenever the instance memory is cleared, since memory ids are then reused for other instances.
    """

    def reset(self) -> None: ...

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None: ...

    def match(self, instances: Mapping[int, Instance]) -> MatchResult: ...


@runtime_checkable
class MapObserver(Protocol):
    """A matcher that also reads the agent's occupancy grid (the rooms of description goals); the agent hands it
    the grid once, updated and cleared in place."""

    def observe_map(self, grid: OccupancyGrid) -> None: ...


@runtime_checkable
class LiveViewObserver(Protocol):
    """A matcher that also compares what the camera shows now, not only the views memory kept (image goals: memory
    keeps the largest view from each side, and a smaller one from another spot may be the one that looks like the
    goal picture). After each step's memory update the agent hands it the views of that frame's detections of the
    instances that may be the goal, when ``wants_live_views()`` says so for the current goal."""

    def wants_live_views(self) -> bool: ...

    def observe_live_views(self, views: Sequence[tuple[int, InstanceView]]) -> None: ...


@runtime_checkable
class GoalNoter(Protocol):
    """A matcher that can say, after ``set_goal``, that it cannot take the goal at its word (a category the detector
    does not know): one line naming the goal and what the matcher does instead, for the user's log."""

    @property
    def goal_note(self) -> Optional[str]: ...


@runtime_checkable
class CandidateFilter(Protocol):
    """A matcher that can tell, for the current goal, which remembered instances may be the goal at all (an image
    goal that names its category admits only instances of it); the agent inspects and falls back only to those."""

    def admissible(self, instances: Mapping[int, Instance]) -> Mapping[int, Instance]: ...


@runtime_checkable
class TiedCandidates(Protocol):
    """A matcher that can tell which remembered instances its evidence cannot yet rank apart from its best (an image
    goal whose look-alikes only colour separates, and barely): the agent then inspects the one cheapest to reach
    first, since looking at it may settle the goal and the leader's lead means little."""

    def tied_with_best(self, instances: Mapping[int, Instance]) -> list[int]: ...
