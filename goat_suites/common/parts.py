"""What a suite hands the code every suite shares: the slot common defines and each suite fills (nav2's plugins).

The runner, its workers, the run of a GoatEpisode suite and the report page are the same for GOAT, LangMap and
PASTURE; where they differ, they ask the suite's :class:`SuiteParts`: which goal objects score a subtask, the level
a subtask belongs to, how a scene id becomes a home, and the suite's charts and tables on the report page. The
defaults (:data:`EPISODE_SCHEMA`) read a GoatEpisode as the GOAT-Bench schema says: every suite that needs no
other reading keeps them. Each suite package defines its parts (``goat_suites.<suite>.parts``) and
``goat_suites.registry`` names them; ``goat_suites.common`` imports no suite (tests/test_import_direction.py).

The parts are module-level functions, so a worker's recipe that carries them stays picklable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from goat_suites.common.episodes import GoalObject, GoatEpisode, GoatTask, goals_for_task
from goat_suites.common.results import SubtaskRecord
from sim_bridge.embedded.home import Home, generate_home
from sim_bridge.embedded.scene_ids import parse_scene_id


@dataclass(frozen=True)
class ReportSection:
    """A suite's part of the report page: charts and tables (HTML) after those by modality, and whether each
    episode's table shows a level column."""

    charts: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    level_column: bool = False


def task_goals(episode: GoatEpisode, index: int, task: GoatTask) -> tuple[GoalObject, ...]:
    """The goal objects that score subtask ``index``: those of the task (GOAT-Bench's reading)."""
    return goals_for_task(episode, task)


def no_level(episode: GoatEpisode, index: int) -> Optional[str]:
    """A subtask without a level (GOAT-Bench has none)."""
    return None


def claims_none(episode: GoatEpisode) -> bool:
    """No episode carries this suite's own fields (the default of :attr:`SuiteParts.claims_episode`)."""
    return False


def procedural_home(scene_id: str) -> Home:
    """The home of an embedded-simulator scene id (sim_bridge.embedded.scene_ids)."""
    seed, home_config = parse_scene_id(scene_id)
    return generate_home(seed, home_config)


def no_section(records: Sequence[SubtaskRecord], meta: Mapping[str, Any]) -> ReportSection:
    """No charts or tables of the suite's own."""
    return ReportSection()


@dataclass(frozen=True)
class SuiteParts:
    """The parts of one suite (defaults: the GOAT-Bench schema's reading of a GoatEpisode)."""

    name: str
    # (episode, subtask index, task) -> the goal objects whose distance scores the subtask
    scored_goals: Callable[[GoatEpisode, int, GoatTask], tuple[GoalObject, ...]] = task_goals
    # (episode, subtask index) -> the subtask's level, recorded with its goal (LangMap's goal levels)
    subtask_level: Callable[[GoatEpisode, int], Optional[str]] = no_level
    # scene id -> its home in the embedded simulator
    home_for_scene: Callable[[str], Home] = procedural_home
    # (records, results meta) -> the suite's charts and tables on the report page
    report_section: Callable[[Sequence[SubtaskRecord], Mapping[str, Any]], ReportSection] = no_section
    # episode -> whether it carries fields only this suite reads (then only this suite's parts score it right)
    claims_episode: Callable[[GoatEpisode], bool] = claims_none


EPISODE_SCHEMA = SuiteParts("goat-bench schema")  # the defaults: what a caller gets that names no suite
