"""LangMap's parts for the shared runner and report: every target of a room or region goal scores it, each
subtask has a goal level, and the report shows SR / SPL per level and style and SeqSR@n."""

from __future__ import annotations

from typing import Optional

from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.parts import SuiteParts
from goat_suites.langmap.loader import EXTRA_LEVELS, EXTRA_TARGET_IDS, scored_goals
from goat_suites.langmap.report import langmap_section


def subtask_level(episode: GoatEpisode, index: int) -> Optional[str]:
    """The LangMap level of subtask ``index`` (``extra["langmap_levels"]``), None when the episode names none."""
    level = (episode.extra.get(EXTRA_LEVELS) or {}).get(str(index))
    return None if level is None else str(level)


def carries_targets(episode: GoatEpisode) -> bool:
    """Whether the episode lists LangMap's targets per subtask (``extra["langmap_target_ids"]``)."""
    return bool(episode.extra.get(EXTRA_TARGET_IDS))


LANGMAP = SuiteParts("langmap", scored_goals=scored_goals, subtask_level=subtask_level,
                     report_section=langmap_section, claims_episode=carries_targets)
