"""Which official protocol a suite runs under, and how a run deviates from it (for the table, meta and report).

The protocols themselves are data in ``goat_suites.common.protocols``; this module compares a run's settings with
them. Where our suite does not yet implement a part of its official rule, the deviation is listed here in
words, so the run says ``protocol: custom (...)`` until it does (docs/protocols.md).
"""

from __future__ import annotations

from typing import Any

from goat_core.errors import ConfigError
from goat_suites.common.protocols import FINDINGDORY, GOAT_BENCH, LANGMAP, PASTURE_COW, Protocol, protocol_label
from goat_suites.common.runner import RunConfig, embodiment_deviations, success_deviations
from sim_bridge.embedded.sim import SimConfig

SUITE_PROTOCOLS: dict[str, Protocol] = {"goat": GOAT_BENCH, "langmap": LANGMAP, "pasture": PASTURE_COW,
                                        "findingdory": FINDINGDORY}
EMBODIMENTS = ("official", "stretch")

# Parts of the official rules these suites do not implement yet (issue 28): each one makes the run custom.
NOT_YET_OFFICIAL: dict[str, tuple[str, ...]] = {
    "langmap": (),
    "pasture": (),
    "findingdory": (),
}


def suite_protocol(suite: str) -> Protocol:
    try:
        return SUITE_PROTOCOLS[suite]
    except KeyError:
        raise ConfigError(f"no protocol for suite {suite!r}; known: {sorted(SUITE_PROTOCOLS)}") from None


def protocol_sim_config(suite: str, embodiment: str = "official") -> SimConfig:
    """The simulator settings of ``suite`` under ``embodiment``.

    ``official``: GOAT's, LangMap's and PASTURE's camera and motion come from their protocols (where a config
    leaves the camera height open: the Stretch head's 1.31 m); FindingDory has its own runner. ``stretch``: the
    robot's own camera (GOAT-Bench's Stretch) and sliding along walls as habitat-sim's default does.
    """
    if embodiment not in EMBODIMENTS:
        raise ConfigError(f"embodiment must be one of {EMBODIMENTS}, got {embodiment!r}")
    protocol = suite_protocol(suite)
    if embodiment == "stretch":
        return SimConfig(allow_sliding=True)
    if suite in ("goat", "langmap", "pasture"):
        e = protocol.embodiment
        height_m = e.camera_height_m if e.camera_height_m is not None else SimConfig().camera_height_m
        return SimConfig(width_px=e.width_px, height_px=e.height_px, hfov_deg=e.hfov_deg,
                         camera_height_m=height_m, allow_sliding=e.allow_sliding)
    return SimConfig(allow_sliding=protocol.embodiment.allow_sliding)


def run_deviations(suite: str, run_config: RunConfig, sim_config: SimConfig) -> tuple[str, ...]:
    """Every way this run differs from the suite's official protocol (empty: an official run)."""
    if suite == "goat":
        return run_config.protocol_deviations(sim_config)
    protocol = suite_protocol(suite)
    out = []
    if run_config.budget() != protocol.budget:
        out.append(f"budget {run_config.budget().describe()} (official {protocol.budget.describe()})")
    if suite in ("langmap", "pasture"):  # success rules the runner implements as the official code does
        out.extend(success_deviations(protocol.success, run_config.success_rule()))
    out.extend(embodiment_deviations(protocol.embodiment, sim_config))
    out.extend(NOT_YET_OFFICIAL.get(suite, ()))
    return tuple(out)


def protocol_meta(suite: str, run_config: RunConfig, sim_config: SimConfig,
                  extra_deviations: tuple[str, ...] = ()) -> dict[str, Any]:
    """The results' meta entries naming the protocol: its label (``custom (...)`` when anything deviates), the
    official protocol, the deviations, the budget and sliding. ``extra_deviations``: what the caller knows
    differs besides the settings (the ROS graph's per-subtask budgets)."""
    deviations = run_deviations(suite, run_config, sim_config) + tuple(extra_deviations)
    return meta_entries(suite_protocol(suite), deviations,
                        {"max_actions_per_episode": run_config.max_actions_per_episode,
                         "max_actions_per_subtask": run_config.max_actions_per_subtask},
                        sim_config.allow_sliding)


def meta_entries(protocol: Protocol, deviations: tuple[str, ...], budget: dict[str, Any],
                 sliding: bool) -> dict[str, Any]:
    """The protocol's entries of a results file's meta, for every suite: the label, the official protocol as
    data, the deviations, the run's budget and whether it slid along walls."""
    return {"protocol": protocol_label(protocol, deviations),
            "official_protocol": protocol.to_json(),
            "protocol_deviations": list(deviations),
            "budget": budget,
            "sliding": sliding}
