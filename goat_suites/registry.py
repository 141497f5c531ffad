"""The suites that replay GoatEpisodes through the shared runner, by name: the one place that knows them all.

``goat_suites.common`` defines the slot (:class:`goat_suites.common.parts.SuiteParts`) and imports no suite; each
suite fills it in its own package; the command line (goat_nav) asks here for a suite's parts by its ``--suite``
name, or by the ``suite`` a results file's meta names. FindingDory runs its own loop and page
(goat_suites.findingdory.run) and has no parts here.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Iterable, Mapping

from goat_core.errors import ConfigError
from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.parts import SuiteParts
from goat_suites.goat.parts import GOAT
from goat_suites.langmap.parts import LANGMAP
from goat_suites.pasture.parts import PASTURE

SUITE_PARTS: Mapping[str, SuiteParts] = MappingProxyType({parts.name: parts for parts in (GOAT, LANGMAP, PASTURE)})


def suite_parts(name: str) -> SuiteParts:
    """The parts of suite ``name`` (ConfigError naming it when no such suite replays GoatEpisodes)."""
    try:
        return SUITE_PARTS[name]
    except KeyError:
        raise ConfigError(f"no suite {name!r} runs GoatEpisodes through the shared runner; known: "
                          f"{', '.join(SUITE_PARTS)}") from None


def check_episodes_suite(name: str, episodes: Iterable[GoatEpisode]) -> None:
    """ConfigError naming the episode and the suite when an episode carries fields that only another suite's parts
    read (a LangMap file scored as ``goat`` would silently score its room and region goals at one target)."""
    for episode in episodes:
        for parts in SUITE_PARTS.values():
            if parts.name != name and parts.claims_episode(episode):
                raise ConfigError(f"episode {episode.episode_id!r} is a {parts.name} episode (it carries "
                                  f"{parts.name}'s own fields); score it with suite {parts.name!r}, not {name!r}")
