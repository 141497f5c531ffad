"""The Stretch's senses and body in the embedded simulator: noisy depth, noisy motion, drifting wheel odometry.

GOAT-Bench's setting (``ideal``) gives the agent perfect depth, exact 0.25 m / 30 deg actions and a GPS+compass
pose. The physical Stretch has none of those: its D435i head camera returns noisy, quantised depth with holes,
its base does not move exactly as commanded, and its pose comes from wheel encoders that drift. This module
holds published models of the three, each scaled by a multiplier (0 turns a model off; 1 is the published
strength), seeded so that the same seed gives the same run:

* :class:`D435DepthModel` -- Intel's stereo depth RMS error model, RMS(Z) = Z^2 s / (f_px B) with baseline
  B = 50 mm and subpixel accuracy s ~ 0.08 px (Intel, "Tuning depth cameras for best performance", and the D435
  product page: < 2 % at 2 m), applied as Gaussian noise on the disparity d = f_px B / Z, then quantised to the
  D435's 1/32 px disparity step; no return below the minimum range (~0.28 m at 848 x 480), beyond the chosen
  maximum range, in the left-edge band the right imager cannot see (about f B / Z pixels wide) and at some
  pixels along depth discontinuities (flying pixels are dropped by the camera's filters, leaving holes).
* :class:`RedwoodDepthModel` -- the model habitat-sim ships for Habitat users (``RedwoodDepthNoiseModel`` in
  habitat-sim's ``src_python/habitat_sim/sensors/noise_models/redwood_depth_noise_model.py``, after Choi et al.,
  "Robust reconstruction of indoor scenes", CVPR 2015): pixel jitter of 0.25 px, a 2x downsampling, disparity
  35.130 / Z plus Gaussian noise of sigma 0.027778, rounded to 1/8, and no return from 10 m on. habitat-sim also
  applies a measured 80 x 80 x 5 distortion table (a data file); it is left out here (taken as 1).
* :class:`MotionNoiseModel` -- PyRobot's noisy controls as habitat-sim ships them
  (``src_python/habitat_sim/agent/controls/pyrobot_noisy_controls.py``): per forward step and per turn, a
  truncated (3 sigma) Gaussian error of the base's x, y and yaw, with means and variances measured on LoCoBot
  under the ILQR, Proportional and Movebase controllers, times a noise multiplier (the Habitat Challenge 2020
  used Proportional at 0.5). No Stretch figures are published, so the coefficients are named, replaceable
  :class:`MotionProfile` entries of :data:`MOTION_PROFILES`.
* :class:`OdometryModel` -- encoder-only wheel odometry (stretch_body's SE3 parameters: wheel diameter
  0.1016 m, separation 0.3153 m): per-run scale errors of x, y and yaw drawn uniformly within Stage's default
  ``odom_error`` bounds (+-1.5 % on x and y, +-2.5 % on yaw; Stage's ``model_position`` draws them once per
  run), plus small per-step Gaussian noise. The odometry integrates the motion that really happened (what the
  encoders saw), so a blocked move is seen as blocked; wheel slip is not modelled.

Conventions: REP 103 (x forward, y left, yaw counter-clockwise). habitat-sim's PyRobot controls are written in
its own y-up frame, where the lateral noise axis points to the robot's right and a positive yaw noise turns left;
the profiles below are stated in REP 103 (so the lateral means change sign).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from goat_core.errors import ConfigError
from goat_core.types import CameraIntrinsics, Pose2D

__all__ = [
    "DEPTH_MODELS", "MOTION_PROFILES", "REALISM_PROFILES", "D435DepthModel", "MotionNoiseModel", "MotionProfile",
    "OdometryModel", "RealismConfig", "RedwoodDepthModel", "SimRealism", "realism_profile", "compose_pose",
    "relative_pose",
]

TRUNCATION_SIGMA = 3.0  # PyRobot's noise is always truncated at 3 standard deviations

# ----------------------------------------------------------------------------------------------------- depth


@dataclass(frozen=True)
class D435Params:
    """Intel RealSense D435/D435i stereo depth (the Stretch head camera)."""

    baseline_m: float = 0.050  # distance between the two IR imagers
    subpixel_px: float = 0.08  # RMS disparity error (Intel: 0.05-0.1 on textured scenes)
    # Focal length of the depth imager in its own pixels: 848 x 480 at 87 deg HFOV gives ~447 px, and with it
    # RMS(Z) = 3.6 / 14 / 32 mm at 1 / 2 / 3 m (Intel's figures).
    depth_focal_px: float = 447.0
    disparity_step_px: float = 1.0 / 32.0  # the D435 reports disparity with 5 subpixel bits
    min_depth_m: float = 0.28  # minimum Z at 848 x 480
    max_depth_m: float = 10.0  # returns beyond this are dropped (the range chosen here)
    discontinuity_ratio: float = 0.05  # a neighbour this much (relative) nearer or further is a discontinuity
    discontinuity_dropout: float = 0.5  # chance that a pixel at a discontinuity has no return (x multiplier)


class D435DepthModel:
    """Noise, quantisation and holes of the D435 on a perfect depth image (see the module docstring)."""

    def __init__(self, params: D435Params = D435Params(), multiplier: float = 1.0) -> None:
        self.params = params
        self.multiplier = float(multiplier)

    def rms_error_m(self, depth_m: np.ndarray | float) -> np.ndarray:
        """Intel's RMS(Z) = Z^2 s / (f_px B), times the multiplier."""
        p = self.params
        z = np.asarray(depth_m, dtype=np.float64)
        return np.asarray(z * z * p.subpixel_px * self.multiplier / (p.depth_focal_px * p.baseline_m))

    def apply(self, depth_m: np.ndarray, intrinsics: CameraIntrinsics, rng: np.random.Generator) -> np.ndarray:
        """A noisy float32 copy of ``depth_m`` (metres, 0 = no return)."""
        p = self.params
        z = depth_m.astype(np.float64)
        valid = z > 0.0
        fb = p.depth_focal_px * p.baseline_m
        disparity = np.where(valid, fb / np.where(valid, z, 1.0), 0.0)
        disparity = disparity + rng.standard_normal(z.shape) * (p.subpixel_px * self.multiplier)
        disparity = np.round(disparity / p.disparity_step_px) * p.disparity_step_px
        valid &= disparity > 0.0
        out = np.where(valid, fb / np.where(valid, disparity, 1.0), 0.0)
        out[(out < p.min_depth_m) | (out > p.max_depth_m)] = 0.0
        # The left-edge band: the right imager does not see the leftmost f B / Z pixels (in this image's pixels).
        band_px = intrinsics.fx * p.baseline_m / np.where(z > 0.0, z, np.inf)
        cols = np.arange(z.shape[1])[None, :]
        out[cols < band_px] = 0.0
        # Holes along depth discontinuities.
        edge = _discontinuities(z, p.discontinuity_ratio)
        drop = edge & (rng.random(z.shape) < min(1.0, p.discontinuity_dropout * self.multiplier))
        out[drop] = 0.0
        return out.astype(np.float32)


def _discontinuities(depth_m: np.ndarray, ratio: float) -> np.ndarray:
    """Pixels whose right or lower neighbour's depth differs by more than ``ratio`` of their own, both sides."""
    edge = np.zeros(depth_m.shape, dtype=bool)
    for axis in (0, 1):
        a = np.take(depth_m, np.arange(depth_m.shape[axis] - 1), axis=axis)
        b = np.take(depth_m, np.arange(1, depth_m.shape[axis]), axis=axis)
        jump = np.abs(a - b) > ratio * np.minimum(a, b)
        if axis == 0:
            edge[:-1, :] |= jump
            edge[1:, :] |= jump
        else:
            edge[:, :-1] |= jump
            edge[:, 1:] |= jump
    return edge


class RedwoodDepthModel:
    """habitat-sim's Redwood depth noise (Choi et al. 2015), without its distortion table."""

    DISPARITY_CONSTANT = 35.130  # disparity = 35.130 / Z in the Redwood model's units
    DISPARITY_SIGMA = 0.027778
    DISPARITY_STEP = 1.0 / 8.0
    PIXEL_SIGMA_PX = 0.25
    MAX_DEPTH_M = 10.0

    def __init__(self, multiplier: float = 1.0) -> None:
        self.multiplier = float(multiplier)

    def apply(self, depth_m: np.ndarray, intrinsics: CameraIntrinsics, rng: np.random.Generator) -> np.ndarray:
        h, w = depth_m.shape
        jitter = rng.standard_normal((2, h, w)) * (self.PIXEL_SIGMA_PX * self.multiplier)
        rows = (np.clip(np.arange(h)[:, None] + jitter[0], 0, h - 1) + 0.5).astype(np.int64)
        cols = (np.clip(np.arange(w)[None, :] + jitter[1], 0, w - 1) + 0.5).astype(np.int64)
        z = depth_m[rows - rows % 2, cols - cols % 2].astype(np.float64)  # the 2x downsampling
        valid = (z > 0.0) & (z < self.MAX_DEPTH_M)
        disparity = np.where(valid, self.DISPARITY_CONSTANT / np.where(valid, z, 1.0), 0.0)
        disparity += rng.standard_normal((h, w)) * (self.DISPARITY_SIGMA * self.multiplier)
        steps = np.round(disparity / self.DISPARITY_STEP)
        valid &= steps > 1e-5
        out = np.where(valid, self.DISPARITY_CONSTANT / np.where(valid, steps * self.DISPARITY_STEP, 1.0), 0.0)
        return out.astype(np.float32)


DEPTH_MODELS = ("d435", "redwood")

# ---------------------------------------------------------------------------------------------------- motion


@dataclass(frozen=True)
class MotionProfile:
    """Error of one forward step and one turn: means and variances of (x_m, y_m, yaw_rad), base frame (REP 103).

    Forward errors are measured along the step (x overshoots when positive) and to the left (y); turn errors
    are a drift of the base (x, y) and an overshoot of the turn (yaw, in the turn's direction).
    """

    name: str
    forward_mean: tuple[float, float, float]
    forward_var: tuple[float, float, float]
    turn_mean: tuple[float, float, float]
    turn_var: tuple[float, float, float]


# LoCoBot, from PyRobot via habitat-sim's pyrobot_noise_models (linear = [x, y] with the lateral axis to the
# right, so its sign flips here; rotation = [yaw]).
MOTION_PROFILES: dict[str, MotionProfile] = {
    p.name: p for p in (
        MotionProfile("locobot_ilqr", (0.014, -0.009, 0.008), (0.006, 0.005, 0.004),
                      (0.003, -0.003, 0.023), (0.002, 0.003, 0.012)),
        MotionProfile("locobot_proportional", (0.017, -0.042, 0.031), (0.007, 0.023, 0.026),
                      (0.001, -0.005, 0.043), (0.001, 0.004, 0.017)),
        MotionProfile("locobot_movebase", (0.074, -0.036, 0.189), (0.019, 0.033, 0.038),
                      (0.002, -0.003, 0.219), (0.0, 0.002, 0.019)),
    )
}


def _truncated_normal(rng: np.random.Generator, mean: float, var: float, low: Optional[float] = None) -> float:
    """One draw of N(mean, var) truncated to +-3 sigma (and to >= ``low``), by rejection as PyRobot's truncnorm."""
    sd = math.sqrt(var)
    if sd == 0.0:
        return mean
    lo = -TRUNCATION_SIGMA if low is None else max(-TRUNCATION_SIGMA, (low - mean) / sd)
    if lo >= TRUNCATION_SIGMA:
        return mean + TRUNCATION_SIGMA * sd
    while True:
        z = float(rng.standard_normal())
        if lo <= z <= TRUNCATION_SIGMA:
            return mean + z * sd


class MotionNoiseModel:
    """Samples how far the base really moved for one commanded action (PyRobot's ``_noisy_action_impl``)."""

    def __init__(self, profile: MotionProfile, multiplier: float = 1.0) -> None:
        self.profile = profile
        self.multiplier = float(multiplier)

    def forward(self, distance_m: float, rng: np.random.Generator) -> tuple[float, float, float]:
        """(dx_m, dy_m, dyaw_rad) in the base frame at the start of a forward step of ``distance_m``."""
        mean, var = self.profile.forward_mean, self.profile.forward_var
        # The base always moves a little: the x error is cut at -95 % of the step (as PyRobot does).
        ex = _truncated_normal(rng, mean[0], var[0], low=-0.95 * abs(distance_m))
        ey = _truncated_normal(rng, mean[1], var[1])
        eyaw = _truncated_normal(rng, mean[2], var[2])
        k = self.multiplier
        return distance_m + k * ex, k * ey, k * eyaw

    def turn(self, angle_rad: float, rng: np.random.Generator) -> tuple[float, float, float]:
        """(dx_m, dy_m, dyaw_rad) of a turn by ``angle_rad`` (positive left); the yaw error overshoots."""
        mean, var = self.profile.turn_mean, self.profile.turn_var
        ex = _truncated_normal(rng, mean[0], var[0])
        ey = _truncated_normal(rng, mean[1], var[1])
        eyaw = _truncated_normal(rng, mean[2], var[2], low=-0.95 * abs(angle_rad))
        k = self.multiplier
        return k * ex, k * ey, angle_rad + math.copysign(1.0, angle_rad) * k * eyaw


# -------------------------------------------------------------------------------------------------- odometry


@dataclass(frozen=True)
class OdometryParams:
    """Wheel-odometry error at multiplier 1."""

    scale_bound_xy: float = 0.015  # Stage's default odom_error bounds: +-1.5 % on x and y ...
    scale_bound_yaw: float = 0.025  # ... and +-2.5 % on yaw, drawn once per run
    step_sigma_xy_m: float = 0.002  # per-action Gaussian noise of the measured translation
    step_sigma_yaw_rad: float = math.radians(0.1)  # ... and of the measured rotation


def relative_pose(a: Pose2D, b: Pose2D) -> tuple[float, float, float]:
    """b in a's frame: (dx_m, dy_m, dyaw_rad)."""
    c, s = math.cos(a.yaw_rad), math.sin(a.yaw_rad)
    dx, dy = b.x_m - a.x_m, b.y_m - a.y_m
    return c * dx + s * dy, -s * dx + c * dy, _wrap(b.yaw_rad - a.yaw_rad)


def compose_pose(a: Pose2D, dx_m: float, dy_m: float, dyaw_rad: float) -> Pose2D:
    """a followed by a motion (dx, dy, dyaw) expressed in a's frame."""
    c, s = math.cos(a.yaw_rad), math.sin(a.yaw_rad)
    return Pose2D(a.x_m + c * dx_m - s * dy_m, a.y_m + s * dx_m + c * dy_m, _wrap(a.yaw_rad + dyaw_rad))


class OdometryModel:
    """Integrates the measured base motion into an ``odom``-frame pose (origin: the pose at reset)."""

    def __init__(self, params: OdometryParams = OdometryParams(), multiplier: float = 1.0) -> None:
        self.params = params
        self.multiplier = float(multiplier)
        self.scale = (0.0, 0.0, 0.0)  # this run's (x, y, yaw) scale errors
        self.pose = Pose2D(0.0, 0.0, 0.0)

    def reset(self, rng: np.random.Generator) -> None:
        p, k = self.params, self.multiplier
        bounds = (p.scale_bound_xy, p.scale_bound_xy, p.scale_bound_yaw)
        self.scale = tuple(float(rng.uniform(-b, b)) * k for b in bounds)  # type: ignore[assignment]
        self.pose = Pose2D(0.0, 0.0, 0.0)

    def update(self, true_delta: tuple[float, float, float], rng: np.random.Generator) -> Pose2D:
        """Add one action's true base-frame motion, as the encoders measure it; the new odometry pose."""
        p, k = self.params, self.multiplier
        noise = rng.standard_normal(3) * np.array([p.step_sigma_xy_m, p.step_sigma_xy_m, p.step_sigma_yaw_rad]) * k
        measured = [d * (1.0 + e) + float(n) for d, e, n in zip(true_delta, self.scale, noise, strict=True)]
        self.pose = compose_pose(self.pose, *measured)
        return self.pose


def _wrap(angle_rad: float) -> float:
    return (angle_rad + math.pi) % (2.0 * math.pi) - math.pi


# ------------------------------------------------------------------------------------------- profile + state


@dataclass(frozen=True)
class RealismConfig:
    """How real the simulated robot is. Multipliers scale each model (0 = off, 1 = the published strength;
    ``motion_noise`` is PyRobot's noise multiplier). The default is GOAT-Bench's ``ideal`` setting."""

    profile: str = "ideal"  # the name this configuration came from (recorded in results)
    depth_model: str = "d435"  # "d435" or "redwood"
    depth_noise: float = 0.0
    motion_profile: str = "locobot_ilqr"  # a key of MOTION_PROFILES
    motion_noise: float = 0.0
    odom_drift: float = 0.0
    localiser: bool = True  # the agent registers depth against its map to correct drift (when the pose drifts)
    seed: int = 0
    d435: D435Params = field(default_factory=D435Params)
    odometry: OdometryParams = field(default_factory=OdometryParams)

    def __post_init__(self) -> None:
        if self.depth_model not in DEPTH_MODELS:
            raise ConfigError(f"depth_model must be one of {DEPTH_MODELS}, got {self.depth_model!r}")
        if self.motion_profile not in MOTION_PROFILES:
            raise ConfigError(f"motion_profile must be one of {tuple(MOTION_PROFILES)}, got {self.motion_profile!r}")
        for name in ("depth_noise", "motion_noise", "odom_drift"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and value >= 0.0):
                raise ConfigError(f"{name} must be a finite multiplier >= 0, got {value!r}")

    @property
    def is_ideal(self) -> bool:
        """True when the simulator is GOAT-Bench's: perfect depth, exact motion, true pose."""
        return self.depth_noise == 0.0 and self.motion_noise == 0.0 and self.odom_drift == 0.0

    @property
    def pose_drifts(self) -> bool:
        return self.odom_drift > 0.0

    def describe(self) -> str:
        if self.is_ideal:
            return "ideal"
        return (f"{self.profile} (depth {self.depth_model} x{self.depth_noise:g}, motion {self.motion_profile} "
                f"x{self.motion_noise:g}, odometry drift x{self.odom_drift:g}, "
                f"localiser {'on' if self.localiser else 'off'})")


# The stretch profile: the D435i at its published accuracy, PyRobot's best-behaved LoCoBot controller at the
# Habitat Challenge 2020's multiplier (no Stretch figures are published), and Stage's odometry bounds.
REALISM_PROFILES: dict[str, RealismConfig] = {
    "ideal": RealismConfig(),
    "stretch": RealismConfig(profile="stretch", depth_noise=1.0, motion_noise=0.5, odom_drift=1.0),
}


def realism_profile(name: str, depth_noise: Optional[float] = None, motion_noise: Optional[float] = None,
                    odom_drift: Optional[float] = None, localiser: Optional[bool] = None,
                    depth_model: Optional[str] = None, seed: int = 0) -> RealismConfig:
    """A named profile with some knobs overridden (None keeps the profile's value)."""
    try:
        base = REALISM_PROFILES[name]
    except KeyError:
        raise ConfigError(f"realism profile must be one of {tuple(REALISM_PROFILES)}, got {name!r}") from None
    fields: dict[str, object] = {"seed": int(seed)}
    for key, value in (("depth_noise", depth_noise), ("motion_noise", motion_noise), ("odom_drift", odom_drift),
                       ("localiser", localiser), ("depth_model", depth_model)):
        if value is not None:
            fields[key] = value
    overridden = any(fields.get(k) is not None for k in ("depth_noise", "motion_noise", "odom_drift"))
    if overridden and name == "ideal":
        fields["profile"] = "custom"
    from dataclasses import replace

    return replace(base, **fields)  # type: ignore[arg-type]


class SimRealism:
    """The simulator's state of the realism models for one episode (reseeded by every reset)."""

    def __init__(self, config: RealismConfig) -> None:
        self.config = config
        self._depth = (D435DepthModel(config.d435, config.depth_noise) if config.depth_model == "d435"
                       else RedwoodDepthModel(config.depth_noise))
        self._motion = MotionNoiseModel(MOTION_PROFILES[config.motion_profile], config.motion_noise)
        self.odometry = OdometryModel(config.odometry, config.odom_drift)
        self._rng = np.random.default_rng(config.seed)

    def reset(self, start: Pose2D) -> None:
        """Reseed from the configured seed and the start pose, so an episode's run depends on nothing else."""
        key = f"{self.config.seed}/{start.x_m:.4f}/{start.y_m:.4f}/{start.yaw_rad:.4f}"
        self._rng = np.random.default_rng([self.config.seed & 0xFFFFFFFF, zlib.crc32(key.encode())])
        self.odometry.reset(self._rng)

    def forward(self, distance_m: float) -> tuple[float, float, float]:
        if self.config.motion_noise == 0.0:
            return distance_m, 0.0, 0.0
        return self._motion.forward(distance_m, self._rng)

    def turn(self, angle_rad: float) -> tuple[float, float, float]:
        if self.config.motion_noise == 0.0:
            return 0.0, 0.0, angle_rad
        return self._motion.turn(angle_rad, self._rng)

    def moved(self, before: Pose2D, after: Pose2D) -> None:
        """The base really moved from ``before`` to ``after`` (world poses): update the odometry."""
        self.odometry.update(relative_pose(before, after), self._rng)

    def depth(self, depth_m: np.ndarray, intrinsics: CameraIntrinsics) -> np.ndarray:
        if self.config.depth_noise == 0.0:
            return depth_m
        return self._depth.apply(depth_m, intrinsics, self._rng)
