"""The ``--realism`` flags of ``goat-nav bench`` and the agent side of a realism profile (docs/realism.md).

The simulator's models live in :mod:`sim_bridge.embedded.realism`; the localiser that copes with them in
:mod:`goat_core.localisation.localiser`. This module joins them for the runner: which localiser a profile needs,
and a log of the pose the agent believed against the truth (for the benchmark's pose error).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional

import numpy as np

from goat_core.errors import ConfigError
from goat_core.geometry import wrap_angle_rad
from goat_core.types import Observation, Pose2D
from sim_bridge.embedded.realism import DEPTH_MODELS, REALISM_PROFILES, RealismConfig, realism_profile

if TYPE_CHECKING:  # loaded by localiser_for, when a profile needs it (an ideal run has none)
    from goat_core.localisation.localiser import Localiser


def _multiplier(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a multiplier must be a number >= 0, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0.0):
        raise argparse.ArgumentTypeError(f"a multiplier must be a number >= 0, got {text!r}")
    return value


def add_realism_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("realism (docs/realism.md): the simulated Stretch's depth noise, motion noise, odometry")
    g.add_argument("--realism", choices=tuple(REALISM_PROFILES), default="ideal",
                   help="ideal: GOAT-Bench (perfect depth, exact actions, GPS+compass); stretch: D435 depth, "
                        "PyRobot motion noise x0.5, drifting wheel odometry and the agent's localiser (default ideal)")
    g.add_argument("--depth-noise", type=_multiplier, default=None, metavar="X",
                   help="depth model strength (0 off, 1 the published accuracy); overrides the profile's")
    g.add_argument("--depth-model", choices=DEPTH_MODELS, default=None,
                   help="d435 (Intel's stereo error model, the profile's) or redwood (habitat-sim's)")
    g.add_argument("--motion-noise", type=_multiplier, default=None, metavar="X",
                   help="PyRobot noise multiplier of the actions (LoCoBot ILQR profile); overrides the profile's")
    g.add_argument("--odom-drift", type=_multiplier, default=None, metavar="X",
                   help="odometry drift strength (1 = Stage's +-1.5 %% / +-2.5 %% bounds); overrides the profile's")
    g.add_argument("--no-localiser", action="store_true",
                   help="ablation: the agent takes the drifting odometry as its pose (no scan-to-map correction)")


def realism_from_args(args: argparse.Namespace) -> RealismConfig:
    """The realism configuration of the flags, seeded by ``--seed``."""
    return realism_profile(getattr(args, "realism", "ideal"), depth_noise=getattr(args, "depth_noise", None),
                           motion_noise=getattr(args, "motion_noise", None),
                           odom_drift=getattr(args, "odom_drift", None),
                           localiser=False if getattr(args, "no_localiser", False) else None,
                           depth_model=getattr(args, "depth_model", None), seed=int(getattr(args, "seed", 0) or 0))


def check_realism_args(args: argparse.Namespace) -> None:
    """Realism runs in the GOAT suite only (for now); through the ROS graph (``--ros``) as a named profile, since
    the simulator bridge takes a profile's name (its ``realism`` parameter), not each knob."""
    realism = realism_from_args(args)
    if realism.is_ideal:
        return
    if getattr(args, "suite", "goat") != "goat":
        raise ConfigError("--realism other than ideal (and --depth-noise/--motion-noise/--odom-drift above 0) runs "
                          "with the GOAT suite only for now (goat-nav bench without --suite)")
    if getattr(args, "ros", False) and not _is_named_profile(realism):
        raise ConfigError(f"--ros runs a realism profile as it is named ({', '.join(REALISM_PROFILES)}); "
                          f"--depth-noise, --motion-noise, --odom-drift and --depth-model change it to "
                          f"{realism.describe()!r}, which the simulator bridge cannot be given")


def _is_named_profile(config: RealismConfig) -> bool:
    named = realism_profile(config.profile, localiser=config.localiser, seed=config.seed) \
        if config.profile in REALISM_PROFILES else None
    return named == config


def ros_realism_overrides(config: RealismConfig) -> dict[str, dict[str, Any]]:
    """The ROS graph's parameters of a named realism profile: the simulator bridge's models, and the controller's
    localiser as :func:`localiser_for` sets it up in process (so both take the same actions), and the evaluator
    scoring by the simulator's truth (the controller reports its belief)."""
    localiser = localiser_for(config)
    return {"sim_bridge": {"realism": config.profile, "realism_seed": config.seed},
            "controller": {"localise": bool(localiser is not None and localiser.register),
                           "filter_depth": bool(localiser is not None and localiser.filter_depth_images)},
            "evaluator": {"score_from_ground_truth": True}}


def realism_meta(config: RealismConfig) -> dict[str, Any]:
    """The results' meta block of a realism configuration (the model parameters included)."""
    meta = dataclasses.asdict(config)
    meta["describe"] = config.describe()
    return meta


def realism_deviation(config: RealismConfig) -> tuple[str, ...]:
    """A realism other than ``ideal`` named as a protocol deviation (GOAT-Bench's agent has GPS+compass and perfect
    depth)."""
    return () if config.is_ideal else (f"realism {config.describe()}",)


def realism_line(meta: Mapping[str, Any]) -> str:
    """One line naming a results file's realism (``ideal`` for files written before realism existed)."""
    block = meta.get("realism")
    if not isinstance(block, Mapping):
        return "ideal"
    return str(block.get("describe", "ideal"))


def localiser_for(config: RealismConfig) -> Optional[Localiser]:
    """The agent's localiser under a profile: none in ``ideal`` (GPS+compass); depth filtering whenever depth is
    noisy, scan-to-map registration whenever the odometry drifts (unless switched off)."""
    if config.is_ideal:
        return None
    register = config.pose_drifts and config.localiser
    filter_depth = config.depth_noise > 0.0
    if not (register or filter_depth):
        return None
    from goat_core.localisation.localiser import Localiser

    return Localiser(register=register, filter_depth_images=filter_depth)


@dataclass
class PoseLog:
    """The pose the agent acted on against the simulator's truth, one entry per action (evaluation only)."""

    belief: list[Pose2D] = field(default_factory=list)
    truth: list[Pose2D] = field(default_factory=list)
    subtask_end: list[int] = field(default_factory=list)  # index of the last entry of each subtask

    def add(self, belief: Pose2D, truth: Pose2D) -> None:
        self.belief.append(belief)
        self.truth.append(truth)

    def errors(self) -> tuple[np.ndarray, np.ndarray]:
        """(N,) position errors in metres and (N,) absolute heading errors in radians."""
        b = np.array([[p.x_m, p.y_m, p.yaw_rad] for p in self.belief]).reshape(-1, 3)
        t = np.array([[p.x_m, p.y_m, p.yaw_rad] for p in self.truth]).reshape(-1, 3)
        pos = np.hypot(b[:, 0] - t[:, 0], b[:, 1] - t[:, 1])
        yaw = np.abs([wrap_angle_rad(float(a)) for a in b[:, 2] - t[:, 2]])
        return pos, np.asarray(yaw, dtype=np.float64).reshape(-1)


class AgentSenses:
    """What the agent sees of an observation under a profile: the localiser's pose and filtered depth.

    Each observation is localised once (the runner hands the last observation of a subtask to the next subtask's
    first action again)."""

    def __init__(self, config: RealismConfig) -> None:
        self.config = config
        self.localiser = localiser_for(config)
        self.log = PoseLog()
        self._last: Optional[tuple[Observation, Observation]] = None

    def reset(self) -> None:
        if self.localiser is not None:
            self.localiser.reset()
        self._last = None

    def see(self, obs: Observation, truth: Pose2D) -> Observation:
        if self._last is not None and self._last[0] is obs:
            return self._last[1]
        seen = obs if self.localiser is None else self.localiser.localise(obs)
        self._last = (obs, seen)
        if not self.config.is_ideal:
            self.log.add(seen.pose, truth)
        return seen
