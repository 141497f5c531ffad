"""LangMap's parts for the shared runner and report: every target of a room or region goal scores it, each
subtask has a goal level, and the report shows SR / SPL per level and style and SeqSR@n."""

from __future__ import annotations

from typing import Optional

from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.parts import SuiteParts
from goat_suites.langmap.loader import EXTRA_LEVELS, scored_goals
from goat_suites.langmap.report import langmap_section


def subtask_level(episode: GoatEpisode, index: int) -> Optional[str]:
    """The LangMap level of subtask ``index`` (``extra["langmap_levels"]``), None when the episode names none."""
    level = (episode.extra.get(EXTRA_LEVELS) or {}).get(str(index))
    return None if level is None else str(level)


LANGMAP = SuiteParts("langmap", scored_goals=scored_goals, subtask_level=subtask_level,
                     report_section=langmap_section)
