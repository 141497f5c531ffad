"""The realism models of the embedded simulator: D435 and Redwood depth, PyRobot motion noise, wheel odometry."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from goat_core.errors import ConfigError
from goat_core.types import CameraIntrinsics, DiscreteAction, Observation, Pose2D
from sim_bridge.embedded import realism
from sim_bridge.embedded.home import Home, HomeConfig, generate_home
from sim_bridge.embedded.realism import (
    MOTION_PROFILES,
    D435DepthModel,
    D435Params,
    MotionNoiseModel,
    OdometryModel,
    RealismConfig,
    RedwoodDepthModel,
    SimRealism,
    realism_profile,
)
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig

INTRINSICS = CameraIntrinsics.from_hfov(360, 640, math.radians(42.0))


@pytest.mark.parametrize("depth_m, intel_mm", [(1.0, 3.6), (2.0, 14.3), (3.0, 32.2)])
def test_d435_error_matches_intel_formula(depth_m: float, intel_mm: float) -> None:
    """RMS(Z) = Z^2 s / (f B) at 1, 2 and 3 m on a flat wall (the middle of the image, away from the band)."""
    model = D435DepthModel()
    p = model.params
    formula_m = depth_m ** 2 * p.subpixel_px / (p.depth_focal_px * p.baseline_m)
    assert formula_m * 1000 == pytest.approx(intel_mm, abs=0.1)  # Intel's published figures at 848 x 480
    assert float(model.rms_error_m(depth_m)) == pytest.approx(formula_m)
    wall = np.full((640, 360), depth_m, dtype=np.float32)
    noisy = model.apply(wall, INTRINSICS, np.random.default_rng(3))
    centre = noisy[:, 200:]
    assert (centre > 0).all()
    rms = float(np.sqrt(np.mean((centre.astype(np.float64) - depth_m) ** 2)))
    assert rms == pytest.approx(formula_m, rel=0.05)
    # Quantised in disparity: the depths take few distinct values, each f B / (k / 32) for an integer k.
    fb = p.depth_focal_px * p.baseline_m
    k = fb / centre.astype(np.float64) / p.disparity_step_px
    assert np.abs(k - np.round(k)).max() < 1e-3


def test_d435_invalid_near_far_left_band_and_edges() -> None:
    model = D435DepthModel()
    rng = np.random.default_rng(0)
    depth = np.full((640, 360), 2.0, dtype=np.float32)
    depth[:100] = 0.2  # nearer than the minimum range
    depth[100:200] = 20.0  # beyond the maximum range
    depth[300:400, 250:] = 1.0  # a box in front of the wall: a discontinuity at column 250 and rows 300/399
    noisy = model.apply(depth, INTRINSICS, rng)
    assert (noisy[:100] == 0).all() and (noisy[100:200] == 0).all()
    band_px = INTRINSICS.fx * model.params.baseline_m / 2.0  # ~11.7 px at 2 m
    assert (noisy[450:, : int(band_px)] == 0).all()
    assert (noisy[450:, int(band_px) + 1:] > 0).all()
    edge = noisy[300:400, 249:251]
    assert 0.2 < float((edge == 0).mean()) < 0.8  # half of the pixels along the discontinuity drop out
    ideal = D435DepthModel(D435Params(), 0.0).apply(depth, INTRINSICS, rng)
    assert np.abs(ideal[450:, 20:] - 2.0).max() < 0.01  # multiplier 0: only quantisation


def test_redwood_disparity_noise() -> None:
    model = RedwoodDepthModel()
    wall = np.full((480, 640), 2.0, dtype=np.float32)
    noisy = model.apply(wall, INTRINSICS, np.random.default_rng(1)).astype(np.float64)
    # Disparity 35.130 / Z with noise of sigma 0.027778, rounded to 1/8: every return lies on that grid, and the
    # disparity error is the rounding's (at most half a step) plus the noise (3 sigma ~ 0.08).
    disparity = 35.130 / noisy
    steps = disparity * 8.0
    assert np.abs(steps - np.round(steps)).max() < 1e-3
    error = disparity - 35.130 / 2.0
    assert np.abs(error).max() <= 0.0625 + 5 * 0.027778
    assert len(np.unique(np.round(steps))) >= 2  # the noise moves some pixels to a neighbouring step
    far = model.apply(np.full((10, 10), 12.0, dtype=np.float32), INTRINSICS, np.random.default_rng(1))
    assert (far == 0).all()


@pytest.mark.parametrize("name", sorted(MOTION_PROFILES))
@pytest.mark.parametrize("multiplier", [0.5, 1.0])
def test_motion_noise_statistics_match_profile(name: str, multiplier: float) -> None:
    """Over many steps the error's means and variances are the profile's (x the multiplier, squared), as a
    Gaussian truncated at 3 sigma (and at -95 % of the commanded step, which cuts Movebase's forward error)."""
    profile = MOTION_PROFILES[name]
    model = MotionNoiseModel(profile, multiplier)
    rng = np.random.default_rng(11)
    n = 20000
    turn_rad = math.radians(30)
    fwd = np.array([model.forward(0.25, rng) for _ in range(n)]) - np.array([0.25, 0.0, 0.0])
    left = np.array([model.turn(turn_rad, rng) for _ in range(n)]) - np.array([0, 0, turn_rad])
    right = np.array([model.turn(-turn_rad, rng) for _ in range(n)]) - np.array([0, 0, -turn_rad])
    right[:, 2] *= -1.0  # a right turn's yaw error overshoots to the right
    cases = ((fwd, profile.forward_mean, profile.forward_var, (0, -0.95 * 0.25)),
             (left, profile.turn_mean, profile.turn_var, (2, -0.95 * turn_rad)),
             (right, profile.turn_mean, profile.turn_var, (2, -0.95 * turn_rad)))
    for samples, mean, var, (cut_axis, cut) in cases:
        for axis in range(3):
            sd = math.sqrt(var[axis])
            if sd == 0.0:
                assert np.all(samples[:, axis] == pytest.approx(mean[axis] * multiplier))
                continue
            low = max(-3.0, (cut - mean[axis]) / sd) if axis == cut_axis else -3.0
            dist = scipy.stats.truncnorm(low, 3.0, loc=mean[axis], scale=sd)
            want_mean, want_sd = dist.mean() * multiplier, dist.std() * multiplier
            got = samples[:, axis]
            assert float(got.mean()) == pytest.approx(want_mean, abs=4 * want_sd / math.sqrt(n))
            assert float(got.std()) == pytest.approx(want_sd, rel=0.03)
            assert np.abs(got - mean[axis] * multiplier).max() <= 3 * sd * multiplier + 1e-12
    # The truncation takes little: the sample variance is within 3 % of the profile's where nothing else cuts.
    assert float(left[:, 2].var()) == pytest.approx(profile.turn_var[2] * multiplier ** 2 * 0.973, rel=0.05)


def test_odometry_drift_within_stage_bounds_and_integrates() -> None:
    odom = OdometryModel()
    rng = np.random.default_rng(5)
    scales = []
    for _ in range(200):
        odom.reset(rng)
        scales.append(odom.scale)
    s = np.abs(np.array(scales))
    assert s[:, :2].max() <= 0.015 and s[:, 2].max() <= 0.025
    assert s[:, :2].max() > 0.012 and s[:, 2].max() > 0.02  # uniform over the bounds
    # A square of 4 x (1 m, 90 deg left): the truth closes, the odometry does not, by about the scale errors.
    odom.reset(rng)
    truth = Pose2D(0.0, 0.0, 0.0)
    for _ in range(4):
        for delta in ((1.0, 0.0, 0.0), (0.0, 0.0, math.pi / 2)):
            truth = realism.compose_pose(truth, *delta)
            odom.update(delta, rng)
    assert math.hypot(truth.x_m, truth.y_m) < 1e-9
    yaw_err = abs(odom.pose.yaw_rad)
    assert yaw_err == pytest.approx(abs(odom.scale[2]) * 2 * math.pi, abs=0.01)
    exact = OdometryModel(multiplier=0.0)
    exact.reset(rng)
    exact.update((0.25, 0.0, 0.1), rng)
    assert realism.relative_pose(Pose2D(0, 0, 0), exact.pose) == pytest.approx((0.25, 0.0, 0.1))


def test_same_seed_same_noise_and_ideal_untouched() -> None:
    cfg = realism_profile("stretch", seed=4)
    depth = np.full((640, 360), 2.5, dtype=np.float32)
    runs = []
    for _ in range(2):
        r = SimRealism(cfg)
        r.reset(Pose2D(1.0, 2.0, 0.3))
        runs.append((r.forward(0.25), r.turn(0.5), r.depth(depth, INTRINSICS)))
    assert runs[0][0] == runs[1][0] and runs[0][1] == runs[1][1]
    assert np.array_equal(runs[0][2], runs[1][2])
    other = SimRealism(realism_profile("stretch", seed=5))
    other.reset(Pose2D(1.0, 2.0, 0.3))
    assert other.forward(0.25) != runs[0][0]
    ideal = SimRealism(RealismConfig())
    ideal.reset(Pose2D(1.0, 2.0, 0.3))
    assert ideal.forward(0.25) == (0.25, 0.0, 0.0) and ideal.turn(0.5) == (0.0, 0.0, 0.5)
    assert ideal.depth(depth, INTRINSICS) is depth


def test_profiles_and_bad_values() -> None:
    assert realism_profile("ideal").is_ideal
    stretch = realism_profile("stretch")
    assert (stretch.depth_noise, stretch.motion_noise, stretch.odom_drift) == (1.0, 0.5, 1.0)
    assert realism_profile("stretch", motion_noise=0.0).motion_noise == 0.0
    assert realism_profile("ideal", odom_drift=2.0).profile == "custom"
    with pytest.raises(ConfigError, match="'lab'"):
        realism_profile("lab")
    with pytest.raises(ConfigError, match="-1"):
        RealismConfig(depth_noise=-1.0)
    with pytest.raises(ConfigError, match="'kinect'"):
        RealismConfig(depth_model="kinect")
    with pytest.raises(ConfigError, match="'roomba'"):
        RealismConfig(motion_profile="roomba")


def _walk(config: SimConfig, home: Home) -> list[tuple[Observation, Pose2D]]:
    """A fixed action sequence from a fixed start: each observation with the true episode pose."""
    actions = [DiscreteAction.MOVE_FORWARD] * 3 + [DiscreteAction.TURN_LEFT] * 3 + [DiscreteAction.MOVE_FORWARD] * 3
    with EmbeddedSim(home, config) as sim:
        start = sim.navgrid.sample_navigable(np.random.default_rng(2))
        out = [(sim.reset(start, 0.4), sim.episode_pose())]
        for action in actions:
            out.append((sim.step(action), sim.episode_pose()))
    return out


def test_simulator_with_stretch_profile_drifts_and_repeats() -> None:
    """In ``stretch`` the observed pose is the odometry (not the truth) and the depth has holes; the same seed
    gives the same run and another seed another one; ``ideal`` observes the true pose and perfect depth."""
    home = generate_home(7, HomeConfig(furniture="primitive"))
    ideal = _walk(SimConfig(), home)
    assert all(obs.pose == truth for obs, truth in ideal)
    stretch = _walk(SimConfig(realism=realism_profile("stretch", seed=1)), home)
    again = _walk(SimConfig(realism=realism_profile("stretch", seed=1)), home)
    other = _walk(SimConfig(realism=realism_profile("stretch", seed=2)), home)
    assert [(o.pose, t) for o, t in stretch] == [(o.pose, t) for o, t in again]
    assert np.array_equal(stretch[-1][0].depth_m, again[-1][0].depth_m)
    assert stretch[-1][1] != other[-1][1]
    assert stretch[-1][0].pose != stretch[-1][1]  # the odometry is not the truth ...
    obs, truth = stretch[-1]
    assert math.hypot(obs.pose.x_m - truth.x_m, obs.pose.y_m - truth.y_m) < 0.1  # ... but close after 9 actions
    assert stretch[-1][1] != ideal[-1][1]  # the motion noise moved the robot elsewhere
    assert (stretch[-1][0].depth_m == 0).mean() > (ideal[-1][0].depth_m == 0).mean()
