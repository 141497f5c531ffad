"""What a node says of an error at its boundary, where a callback must not stop the node serving."""

from __future__ import annotations

from typing import Any

from goat_core.errors import GoatError


def error_text(exc: BaseException) -> str:
    """A GoatError by its message; anything else as an internal error with its type."""
    return str(exc) if isinstance(exc, GoatError) else f"internal error {type(exc).__name__}: {exc}"


class SetFailures:
    """The errors of observation sets a node skips: the first of a run of failing sets is logged, the rest of the
    run is not, and a set that succeeds ends the run."""

    def __init__(self, logger: Any, what: str) -> None:
        """``what``: the log's words for a failed set ("observation set not localised")."""
        self._logger = logger
        self._what = what
        self.failing = False

    def failed(self, exc: BaseException) -> None:
        if not self.failing:
            self._logger.error(f"{self._what}: {error_text(exc)}")
        self.failing = True

    def succeeded(self) -> None:
        self.failing = False
