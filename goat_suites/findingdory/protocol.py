"""Which protocol a FindingDory run follows: ``findingdory v1`` when its settings are FindingDory's, else
``custom (findingdory v1; ...)`` naming every difference (``goat_suites.common.protocols``, docs/protocols.md).

FindingDory's rules: the episode's 5000 steps, the experience's included; 2.0 m geodesic to an object's
snapped position, pi/4 and coverage 0.001; 0.1 m to a receptacle's view points, pi/2 and coverage 0.001; its
Stretch head camera and no sliding (``FINDINGDORY``, ``FINDINGDORY_RECEPTACLE``).
"""

from __future__ import annotations

import math
from typing import Any

from goat_suites.common.protocol_meta import NOT_YET_OFFICIAL, meta_entries
from goat_suites.common.protocols import FINDINGDORY, FINDINGDORY_RECEPTACLE
from goat_suites.common.runner import embodiment_deviations
from goat_suites.findingdory.task import FindingDoryRunConfig
from sim_bridge.embedded.sim import SimConfig

OFFICIAL_METRIC = "geodesic_viewpoint"  # geodesic to view points (receptacles) or the snapped position (objects)
ANGLE_TOLERANCE_RAD = 1e-3  # the configs write pi/4 and pi/2 as 0.785 and 1.57


def findingdory_deviations(config: FindingDoryRunConfig, sim_config: SimConfig) -> tuple[str, ...]:
    """Every way this run differs from FindingDory's protocol, in words (empty: an official run)."""
    out = []
    if config.budget() != FINDINGDORY.budget:
        out.append(f"budget {config.budget().describe()} (official {FINDINGDORY.budget.describe()}, the "
                   "experience's actions included)")
    judge = config.judge
    for what, distance_m, official_m in (("objects", judge.success_distance_m, FINDINGDORY.success.distance_m),
                                         ("receptacles", judge.receptacle_distance_m,
                                          FINDINGDORY_RECEPTACLE.distance_m)):
        if not math.isclose(distance_m, official_m):
            out.append(f"success distance {distance_m:g} m for {what} (official {official_m:g} m)")
    if judge.success_metric != OFFICIAL_METRIC:
        out.append(f"success metric {judge.success_metric} (official {OFFICIAL_METRIC})")
    for what, angle_rad, official_rad in (("objects", judge.object_angle_rad, FINDINGDORY.success.max_angle_rad),
                                          ("receptacles", judge.receptacle_angle_rad,
                                           FINDINGDORY_RECEPTACLE.max_angle_rad)):
        if official_rad is None or abs(angle_rad - official_rad) > ANGLE_TOLERANCE_RAD:
            out.append(f"heading threshold {angle_rad:g} rad for {what} (official {official_rad})")
    if judge.min_coverage != FINDINGDORY.success.min_coverage:
        out.append(f"coverage threshold {judge.min_coverage:g} (official {FINDINGDORY.success.min_coverage})")
    out.extend(embodiment_deviations(FINDINGDORY.embodiment, sim_config))
    out.extend(NOT_YET_OFFICIAL.get("findingdory", ()))
    return tuple(out)


def findingdory_protocol_meta(config: FindingDoryRunConfig, sim_config: SimConfig) -> dict[str, Any]:
    """The results' meta entries naming the protocol, as for the other suites
    (``goat_suites.common.protocol_meta.meta_entries``)."""
    return meta_entries(FINDINGDORY, findingdory_deviations(config, sim_config),
                        {"max_actions_per_episode": config.max_actions_per_episode,
                         "max_actions_per_goal": config.max_actions_per_goal},
                        sim_config.allow_sliding)


__all__ = ["findingdory_deviations", "findingdory_protocol_meta"]
