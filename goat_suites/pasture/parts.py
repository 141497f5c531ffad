"""PASTURE's parts for the shared runner and report: its homes (with uncommon objects) from its scene ids, and SR /
SPL per split on the report page."""

from __future__ import annotations

from goat_suites.common.parts import SuiteParts
from goat_suites.pasture.generator import home_for_scene
from goat_suites.pasture.report import pasture_section

PASTURE = SuiteParts("pasture", home_for_scene=home_for_scene, report_section=pasture_section)
