"""A ResultSink for the pool tests (goat_suites.common.parallel): keeps every finished unit by its plan index."""

from __future__ import annotations

from goat_suites.common.parallel import UnitResult


class Sink:
    def __init__(self) -> None:
        self.results: dict[int, UnitResult] = {}

    def add(self, result: UnitResult) -> None:
        self.results[result.unit.index] = result

    def postfix(self) -> dict[str, str]:
        return {}
