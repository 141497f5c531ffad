"""The settings of a run from the ``goat-nav bench`` flags, shared by every suite: homes, run budget and success
rule (the suite's official protocol unless a flag departs from it), the simulator's embodiment and realism."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from goat_core.errors import ConfigError
from goat_suites.common.protocol_meta import protocol_sim_config
from goat_suites.common.protocols import LANGMAP, PASTURE_COW
from goat_suites.common.realism import realism_from_args
from goat_suites.common.runner import RunConfig
from sim_bridge.embedded.home import HomeConfig, home_config_for
from sim_bridge.embedded.sim import SimConfig

# The homes of a GOAT run when --homes is not given: the large furnished homes (issue 33), for `goat-nav bench` of
# the GOAT suite and for `goat-nav generate`, whose episodes `bench --episodes-file` replays. The other suites,
# `goat-nav render` and a run that sets --num-rooms (a setting of the small homes) keep the small homes of
# primitives, HomeConfig() (docs/homes.md).
GOAT_DEFAULT_HOMES = "large-furnished"


def homes_from_args(args: argparse.Namespace) -> str:
    """The --homes kind of a command: the flag's, else the default of its command and suite (GOAT_DEFAULT_HOMES)."""
    kind = getattr(args, "homes", None)
    if kind is not None:
        return str(kind)
    goat = getattr(args, "command", None) in ("bench", "generate") and getattr(args, "suite", "goat") == "goat"
    return GOAT_DEFAULT_HOMES if goat and getattr(args, "num_rooms", None) is None else "small"


def home_config_from_args(args: argparse.Namespace) -> HomeConfig:
    """The home settings of the --num-rooms, --homes and --furniture-libraries flags."""
    kind = homes_from_args(args)
    base = home_config_for(kind)
    fields: dict[str, Any] = {}
    if getattr(args, "num_rooms", None) is not None:
        if base.layout == "large":
            raise ConfigError(f"--num-rooms {args.num_rooms} sets the rooms of the small homes; the large homes draw "
                              "8-16 rooms themselves (leave --num-rooms out, or use --homes small)")
        fields["num_rooms"] = args.num_rooms
    if getattr(args, "furniture_libraries", None):
        if base.furniture != "furnished":
            raise ConfigError(f"--furniture-libraries {args.furniture_libraries} furnishes homes with models: it needs "
                              f"--homes furnished or large-furnished (the homes are {kind})")
        fields["furniture_libraries"] = tuple(n.strip() for n in args.furniture_libraries.split(",") if n.strip())
    return dataclasses.replace(base, **fields)


def run_config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run settings of the ``goat-nav bench`` flags (shared by every suite)."""
    overrides: dict[str, Any] = {"goal_image_noise": bool(getattr(args, "image_noise", False)),
                                 "goal_paraphrase": bool(getattr(args, "paraphrase", False)),
                                 "image_goal_category": not getattr(args, "image_without_category", False)}
    if args.suite == "langmap":  # LangMap's protocol: 500 per subgoal, <= 0.25 m where the subgoal ends
        success = LANGMAP.success
        overrides.update(max_actions_per_episode=None, max_actions_per_subtask=LANGMAP.budget.max_actions_per_subtask,
                         success_comparison=success.comparison, success_requires_stop=success.requires_stop)
    elif args.suite == "pasture":  # CoW's protocol: 250 steps, stopped with the target visible within 1.0 m
        overrides.update(max_actions_per_episode=PASTURE_COW.budget.max_actions_per_episode,
                         max_actions_per_subtask=None, success_metric="visible_object",
                         success_distance_m=PASTURE_COW.success.distance_m,
                         success_comparison=PASTURE_COW.success.comparison)
    elif args.suite != "goat":
        # Suites whose official budget is not wired yet keep 500 actions per subtask (docs/protocols.md).
        overrides["max_actions_per_episode"] = None
        overrides["max_actions_per_subtask"] = 500
    if args.max_actions is not None:
        overrides["max_actions_per_subtask"] = args.max_actions
        if getattr(args, "max_episode_actions", None) is None:
            overrides["max_actions_per_episode"] = None  # the README's per-subtask variant
    if getattr(args, "max_episode_actions", None) is not None:
        overrides["max_actions_per_episode"] = args.max_episode_actions
    if args.success_distance_m is not None:
        overrides["success_distance_m"] = args.success_distance_m
    if args.success_metric is not None:
        overrides["success_metric"] = args.success_metric
    return RunConfig(**overrides)


def sim_config_from_args(args: argparse.Namespace) -> SimConfig:
    """The simulator's embodiment: the suite protocol's (``--embodiment official``) or the robot's own, with the
    senses and motion of ``--realism`` (default ideal)."""
    embodiment = protocol_sim_config(args.suite, getattr(args, "embodiment", "official"))
    return dataclasses.replace(embodiment, realism=realism_from_args(args))
