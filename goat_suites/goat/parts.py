"""GOAT-Bench's parts for the shared runner and report: the GOAT-Bench schema's reading of a GoatEpisode as it is."""

from __future__ import annotations

from goat_suites.common.parts import SuiteParts

GOAT = SuiteParts("goat")  # every slot keeps its default (goat_suites.common.parts)
