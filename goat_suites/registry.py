"""The suites that replay GoatEpisodes through the shared runner, by name: the one place that knows them all.

``goat_suites.common`` defines the slot (:class:`goat_suites.common.parts.SuiteParts`) and imports no suite; each
suite fills it in its own package; the command line (goat_nav) asks here for a suite's parts by its ``--suite``
name, or by the ``suite`` a results file's meta names. FindingDory runs its own loop and page
(goat_suites.findingdory.run) and has no parts here.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from goat_core.errors import ConfigError
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
