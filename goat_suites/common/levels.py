"""LangMap goal levels: their names, order and the aliases real LangMap files use.

Its own module because both the results file (``goat_suites.common.results``, a record's ``level``) and the suite
metrics (``goat_suites.common.suite_metrics``, SR/SPL per level) read levels, and the metrics build on the results.
"""

from __future__ import annotations

from goat_suites.common.metrics import InvalidMetricInputError

# Goal levels in the order LangMap reports them. LangMap files name the scene level "object"
# ("Find the chair" anywhere in the scene); goat_core.types.Goal.level uses "scene".
LANGMAP_LEVELS = ("scene", "room", "region", "instance")
_LEVEL_ALIASES = {"object": "scene", "scene": "scene", "room": "room", "region": "region", "instance": "instance"}


def parse_level(value: str) -> str:
    """The canonical LangMap level name of ``value`` ("object" and "scene" both mean the scene level)."""
    level = _LEVEL_ALIASES.get(str(value).strip().lower())
    if level is None:
        raise InvalidMetricInputError(f"unknown LangMap level {value!r}; expected one of {sorted(_LEVEL_ALIASES)}")
    return level
